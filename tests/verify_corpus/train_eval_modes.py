"""Train with dropout and batch norm, evaluating after each epoch (mode never restored)."""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.3))
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        return self.head(self.body(x))


def evaluate(model, x, y):
    model.eval()
    with torch.no_grad():
        return nn.functional.mse_loss(model(x), y).item()


def main():
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    batches = [(torch.randn(16, 8), torch.randn(16, 1)) for _ in range(3)]
    val_x, val_y = torch.randn(16, 8), torch.randn(16, 1)
    model.train()
    for epoch in range(3):
        for x, y in batches:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: train {loss.item():.4f} val {evaluate(model, val_x, val_y):.4f}")


if __name__ == "__main__":
    main()
