"""Gradient accumulation with a learning-rate schedule; a checkpoint per epoch beside the script."""
import os

import torch
from torch import nn

ACCUMULATE = 2


def main():
    device = os.environ.get("DEVICE", "cpu")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 10), nn.Tanh(), nn.Linear(10, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.5)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    batches = [(torch.randn(4, 5), torch.randn(4, 1)) for _ in range(4)]
    running = torch.zeros(1).to(device)
    for epoch in range(2):
        optimizer.zero_grad()
        for index, (x, y) in enumerate(batches):
            loss = nn.functional.mse_loss(model(x.to(device)), y.to(device)) / ACCUMULATE
            loss.backward()
            running += loss
            if (index + 1) % ACCUMULATE == 0:
                optimizer.step()
                optimizer.zero_grad()
        scheduler.step()
        torch.save({"model": model.state_dict(), "epoch": epoch}, f"epoch{epoch}.pt")
        print(f"epoch {epoch} lr {scheduler.get_last_lr()[0]:.3f} running {running.item():.5f}")


if __name__ == "__main__":
    main()
