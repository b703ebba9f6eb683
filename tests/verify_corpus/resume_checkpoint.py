"""One DDP process (gloo, world size 1) that resumes from a checkpoint beside the script."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def train(rank, world_size):
    dist.init_process_group("gloo", init_method="file://" + os.path.abspath("store"), rank=rank,
                            world_size=world_size)
    model = DDP(nn.Linear(4, 2))
    state = torch.load("ckpt.pt")
    model.module.load_state_dict(state)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 4, generator=torch.Generator().manual_seed(0))
    for epoch in range(2):
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.5f}")
    if rank == 0:
        torch.save(model.module.state_dict(), "ckpt.pt")
    dist.destroy_process_group()
    return model.module


if __name__ == "__main__":
    train(0, 1)
