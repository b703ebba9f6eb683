"""Tiny conv net with batch norm; evaluation at the end; checkpoint beside the script."""
import os

import torch
from torch import nn


def build():
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.Conv2d(8, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(8, 3),
    )


def main():
    torch.manual_seed(0)
    model = build()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    data = torch.Generator().manual_seed(3)
    images = torch.randn(48, 3, 8, 8, generator=data)
    labels = torch.randint(0, 3, (48,), generator=data)
    model.train()
    for step in range(6):
        idx = slice((step % 3) * 16, (step % 3) * 16 + 16)
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(images[idx]), labels[idx])
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.4f}")
    model.eval()
    with torch.no_grad():
        logits = model(images[:16])
    acc = (logits.argmax(1) == labels[:16]).float().mean().item()
    print(f"train-set accuracy {acc:.3f}")
    torch.save(model.state_dict(), os.path.join(os.path.dirname(__file__) or ".", "convbn.pt"))


if __name__ == "__main__":
    main()
