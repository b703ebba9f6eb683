"""A classifier over a pinned loader, copying every batch to the device."""
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device(os.environ.get("DEVICE", "cpu"))


def train_one_epoch(model, loader, optimizer):
    total = 0.0
    for images, labels in loader:
        images = images.to(device)
        labels = labels.to(device)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)


def main():
    torch.manual_seed(0)
    images = torch.randn(40, 12)
    labels = torch.randint(0, 3, (40,))
    loader = DataLoader(TensorDataset(images, labels), batch_size=8, shuffle=True, pin_memory=True)
    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 3)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(2):
        print(f"epoch {epoch} loss {train_one_epoch(model, loader, optimizer):.5f}")


if __name__ == "__main__":
    main()
