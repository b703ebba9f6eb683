"""Older-style code: checkpointed block, private collate, torch.ger."""
import torch
import torch.utils.checkpoint
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data._utils.collate import default_collate


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(6, 16)
        self.block = nn.Sequential(nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 16))
        self.out = nn.Linear(16, 1)

    def forward(self, x):
        h = torch.relu(self.inp(x))
        h = torch.utils.checkpoint.checkpoint(self.block, h)
        return self.out(h)


def main():
    torch.manual_seed(8)
    ds = TensorDataset(torch.randn(30, 6), torch.randn(30, 1))
    loader = DataLoader(ds, batch_size=10, collate_fn=default_collate)
    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    for xb, yb in loader:
        opt.zero_grad(set_to_none=True)
        loss = ((net(xb) - yb) ** 2).mean()
        loss.backward()
        opt.step()
        print(f"loss {loss.item():.5f}")
    a = net.out.weight.detach().flatten()
    b = torch.arange(3.0)
    rank1 = torch.ger(a, b)
    print("rank-1 sum", round(rank1.sum().item(), 5))
    return net, rank1


if __name__ == "__main__":
    main()
