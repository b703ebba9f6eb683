"""A model whose blocks use activation checkpointing."""
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(6, 8)
        self.block = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8))
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.relu(self.stem(x))
        h = checkpoint(self.block, h)
        return self.head(h)


def main():
    torch.manual_seed(0)
    model = Model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(10, 6), torch.randn(10, 1)
    for step in range(3):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    print(f"loss {loss.item():.5f}")


if __name__ == "__main__":
    main()
