"""A dataset class with an expensive __getitem__, trained in main() with per-epoch prints."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Features(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        x = torch.sin(torch.arange(6, dtype=torch.float32) * (index + 1) / 7.0)
        return x, x.sum().unsqueeze(0)


def main():
    torch.manual_seed(0)
    loader = DataLoader(Features(32), batch_size=8, shuffle=True)
    model = nn.Linear(6, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(2):
        seen = 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            seen += len(x)
        print(f"epoch {epoch}: {seen} samples, last loss {loss.item():.5f}")


if __name__ == "__main__":
    main()
