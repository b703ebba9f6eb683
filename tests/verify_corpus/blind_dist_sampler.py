"""Distributed-style data loading on one process: a DistributedSampler without a process group."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main(epochs=3):
    torch.manual_seed(21)
    ds = TensorDataset(torch.randn(40, 6), torch.randn(40, 1))
    sampler = DistributedSampler(ds, num_replicas=1, rank=0, shuffle=True, seed=0)
    loader = DataLoader(ds, batch_size=10, sampler=sampler)
    model = nn.Linear(6, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(epochs):
        total = 0.0
        for xb, yb in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item()
        print(f"epoch {epoch} loss {total / len(loader):.6f}")
    return model


if __name__ == "__main__":
    main()
