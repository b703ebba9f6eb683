"""Training written against the old torch.cuda.amp API."""
import torch
from torch import nn


def main():
    torch.manual_seed(0)
    model = nn.Linear(5, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 5), torch.randn(8, 1)
    for step in range(3):
        optimizer.zero_grad()
        with torch.cuda.amp.autocast():
            loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.5f}")


if __name__ == "__main__":
    main()
