"""Several epochs over a shuffling loader with workers; batches copied to the device."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"


def train_one_epoch(model, loader, optimizer):
    total = 0.0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)


def main():
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(26, 5), torch.randn(26, 1))
    loader = DataLoader(data, batch_size=6, shuffle=True, num_workers=2)
    model = nn.Linear(5, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        print(f"epoch {epoch} loss {train_one_epoch(model, loader, optimizer):.5f}")


if __name__ == "__main__":
    main()
