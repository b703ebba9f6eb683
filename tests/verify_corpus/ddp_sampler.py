"""One rank's shard through a DistributedSampler, several epochs (no set_epoch)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(24, 3), torch.randn(24, 1))
    sampler = DistributedSampler(data, num_replicas=2, rank=0, shuffle=True, seed=3)
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(3):
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.5f}")


if __name__ == "__main__":
    main()
