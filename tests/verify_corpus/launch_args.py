"""A script started by torch.distributed.launch, reading its rank from the command line."""
import argparse

import torch
from torch import nn


def parse():
    parser = argparse.ArgumentParser(description="train")
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=2)
    return parser.parse_args()


def main():
    args = parse()
    torch.manual_seed(args.local_rank)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    for epoch in range(args.epochs):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print(f"rank {args.local_rank} epoch {epoch} loss {loss.item():.5f}")


if __name__ == "__main__":
    main()
