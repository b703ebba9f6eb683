"""Step-decay schedule, weight decay and gradient clipping, logged per step."""
import argparse

import torch
from torch import nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--clip", type=float, default=0.2)
    args = parser.parse_args()
    torch.manual_seed(5)
    model = nn.Sequential(nn.Linear(10, 10), nn.ReLU(), nn.Linear(10, 2))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    x = torch.randn(40, 10)
    y = (x[:, 0] > 0).long()
    for epoch in range(7):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        opt.step()
        sched.step()
        print(f"epoch {epoch} lr {sched.get_last_lr()[0]:.4f} loss {loss.item():.5f}")


if __name__ == "__main__":
    main()
