"""Gradient accumulation with a validation pass and a best-model checkpoint."""
import os

import torch
from torch import nn

ACCUM = 3


def batches(x, y, size):
    for i in range(0, len(x), size):
        yield x[i:i + size], y[i:i + size]


def validate(model, vx, vy):
    model.eval()
    with torch.no_grad():
        loss = nn.functional.mse_loss(model(vx), vy).item()
    model.train()
    return loss


def main():
    torch.manual_seed(31)
    model = nn.Sequential(nn.Linear(7, 20), nn.Dropout(0.1), nn.ReLU(), nn.Linear(20, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9)
    x, y = torch.randn(72, 7), torch.randn(72, 1)
    vx, vy = torch.randn(16, 7), torch.randn(16, 1)
    best = float("inf")
    ckpt = os.path.join(os.path.dirname(os.path.abspath(__file__)), "best.pt")
    model.train()
    for epoch in range(3):
        for i, (xb, yb) in enumerate(batches(x, y, 8)):
            loss = nn.functional.mse_loss(model(xb), yb) / ACCUM
            loss.backward()
            if (i + 1) % ACCUM == 0:
                opt.step()
                opt.zero_grad()
        val = validate(model, vx, vy)
        print(f"epoch {epoch} val {val:.5f}")
        if val < best:
            best = val
            torch.save({"epoch": epoch, "model": model.state_dict()}, ckpt)
    print(f"best {best:.5f}")


if __name__ == "__main__":
    main()
