"""Small regression: state in main(), argparse defaults, loader, checkpoint beside the script."""
import argparse
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    parser = argparse.ArgumentParser(description="toy regression")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1234)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    x = torch.randn(96, 10)
    w_true = torch.randn(10, 1)
    y = x @ w_true + 0.1 * torch.randn(96, 1)
    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True)
    model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    for epoch in range(args.epochs):
        running = 0.0
        for step, (xb, yb) in enumerate(loader):
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            running += loss
            if step % 2 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.5f}")
        print(f"epoch {epoch} mean loss {running.item() / len(loader):.5f}")
    ckpt = os.path.join(os.path.dirname(os.path.abspath(__file__)), "regress.pt")
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": args.epochs}, ckpt)
    state = torch.load(ckpt)
    model.load_state_dict(state["model"])
    print("saved epoch", state["epoch"])


if __name__ == "__main__":
    main()
