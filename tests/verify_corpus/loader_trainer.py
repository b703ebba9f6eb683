"""A trainer class over a DataLoader, copying each batch to the device."""
import argparse
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __init__(self, size):
        generator = torch.Generator().manual_seed(1)
        self.x = torch.randn(size, 4, generator=generator)
        self.y = (self.x ** 2).sum(dim=1, keepdim=True)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]


class Trainer:
    def __init__(self, args):
        self.device = torch.device(os.environ.get("DEVICE", "cpu"))
        self.model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1)).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=args.lr)
        self.loader = DataLoader(Squares(50), batch_size=args.batch_size, shuffle=True)
        self.losses = []

    def train_epoch(self):
        self.model.train()
        for x, y in self.loader:
            x = x.to(self.device)
            y = y.to(self.device)
            self.optimizer.zero_grad()
            loss = nn.functional.mse_loss(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.losses.append(loss.item())
        return sum(self.losses[-len(self.loader):]) / len(self.loader)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    trainer = Trainer(args)
    for epoch in range(args.epochs):
        print(f"epoch {epoch}: mean loss {trainer.train_epoch():.5f}")


if __name__ == "__main__":
    main()
