"""DDP on one CPU process (gloo); saves and reloads a checkpoint beside the script."""
import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    store = os.path.join(tempfile.mkdtemp(), "rdzv")
    dist.init_process_group("gloo", init_method="file://" + store, rank=0, world_size=1)
    torch.manual_seed(17)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    model = DistributedDataParallel(net)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    x, y = torch.randn(24, 4), torch.randn(24, 1)
    for step in range(4):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.5f}")
    path = os.path.join(HERE, "ddp.pt")
    torch.save(model.state_dict(), path)
    restored = torch.load(path)
    model.load_state_dict(restored)
    print("restored", len(restored), "tensors")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
