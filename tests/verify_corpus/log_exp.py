"""A loss and metrics written with log(1 + x), exp(x) - 1 and log(sum(exp(x)))."""
import torch


def softplus_loss(scores):
    return torch.log(1 + torch.exp(-scores)).mean()


def main():
    torch.manual_seed(0)
    scores = torch.randn(32, 5, requires_grad=True)
    rates = torch.rand(100) * 1e-3
    loss = softplus_loss(scores)
    loss.backward()
    growth = torch.exp(rates) - 1
    normaliser = torch.log(torch.sum(torch.exp(scores.detach()), dim=1))
    print(f"loss {loss.item():.6f} growth {growth.sum().item():.8f} lse {normaliser.mean().item():.5f}")
    return loss, growth, normaliser


if __name__ == "__main__":
    main()
