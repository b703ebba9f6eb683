"""A training loop that sums its losses for a per-epoch average."""
import torch
from torch import nn


def train(model, optimizer, batches):
    total_loss = 0
    for x, y in batches:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss
    return total_loss / len(batches)


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(5)]
    for epoch in range(2):
        average = train(model, optimizer, batches)
        print(f"epoch {epoch}: average loss {float(average):.5f}")


if __name__ == "__main__":
    main()
