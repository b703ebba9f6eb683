"""A small MLP trained in main(), zeroing gradients with set_to_none=False."""
import torch
from torch import nn


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    x, y = torch.randn(20, 6), torch.randn(20, 1)
    for step in range(6):
        optimizer.zero_grad(set_to_none=False)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.5f}")


if __name__ == "__main__":
    main()
