"""Epoch loop over a map-style dataset with loader workers; copies each batch to the device."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = torch.tensor([i / self.n, (i % 7) / 7.0, ((i * 3) % 5) / 5.0])
        return x, x.pow(2).sum(0, keepdim=True)


def main():
    torch.manual_seed(13)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = DataLoader(Squares(42), batch_size=8, shuffle=True, num_workers=2)
    model = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    seen = 0
    for epoch in range(2):
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad()
            loss = nn.functional.l1_loss(model(xb), yb)
            loss.backward()
            opt.step()
            seen += xb.shape[0]
        print(f"epoch {epoch} last loss {loss.item():.5f} seen {seen}")


if __name__ == "__main__":
    main()
