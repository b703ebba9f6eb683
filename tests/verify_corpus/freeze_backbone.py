"""Fine-tune a head on a backbone meant to be frozen (with the typo)."""
import torch
from torch import nn


def build():
    backbone = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 12), nn.ReLU())
    head = nn.Linear(12, 1)
    return backbone, head


def main():
    torch.manual_seed(0)
    backbone, head = build()
    for p in backbone.parameters():
        p.require_grad = False
    optimizer = torch.optim.SGD(list(backbone.parameters()) + list(head.parameters()), lr=0.1, momentum=0.9)
    x, y = torch.randn(16, 6), torch.randn(16, 1)
    for step in range(4):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(head(backbone(x)), y)
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.5f}")


if __name__ == "__main__":
    main()
