"""Launcher-style script: --local_rank, a single-process gloo group, DDP on the CPU."""
import argparse
import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.02)
    return parser.parse_args()


def main():
    args = get_args()
    store = os.path.join(tempfile.mkdtemp(), "store")
    dist.init_process_group("gloo", init_method="file://" + store, rank=0, world_size=1)
    torch.manual_seed(100 + args.local_rank)
    model = DDP(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.5)
    x = torch.randn(32, 8)
    y = torch.randint(0, 2, (32,))
    for step in range(args.steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        print(f"rank {args.local_rank} step {step} loss {loss.item():.5f}")
    dist.destroy_process_group()
    return model


if __name__ == "__main__":
    main()
