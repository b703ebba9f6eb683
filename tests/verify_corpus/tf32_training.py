"""A GPU-first training script (the CPU when there is no GPU), float32 matmuls at full precision."""
import argparse

import torch
from torch import nn


def train(model, batches, optimizer):
    for x, y in batches:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    torch.manual_seed(0)
    model = nn.Linear(16, 1).to(args.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    batches = [(torch.randn(8, 16).to(args.device), torch.randn(8, 1).to(args.device)) for _ in range(3)]
    print(f"loss {train(model, batches, optimizer):.5f}")
