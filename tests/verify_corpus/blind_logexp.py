"""Hand-written losses with log/exp: a logistic loss and a log-sum-exp pooling."""
import torch
from torch import nn


def logistic_loss(scores, targets):
    margin = scores * targets
    return torch.log(1 + torch.exp(-margin)).mean()


def lse_pool(logits):
    return torch.log(torch.sum(torch.exp(logits), dim=1))


def main():
    torch.manual_seed(2)
    enc = nn.Linear(5, 4)
    opt = torch.optim.Adam(enc.parameters(), lr=0.01)
    x = torch.randn(50, 5)
    t = torch.sign(torch.randn(50))
    for step in range(10):
        opt.zero_grad()
        scores = lse_pool(enc(x))
        loss = logistic_loss(scores, t)
        loss.backward()
        opt.step()
        if step % 3 == 0:
            print(f"step {step} loss {loss.item():.6f}")
    growth = torch.exp(torch.tensor([1e-4, 1e-3, 0.5])) - 1
    print("growth", growth.tolist())
    return enc


if __name__ == "__main__":
    main()
