"""Linear regression, everything in main(), tensors made on the CPU and moved."""
import os

import torch


def main():
    device = torch.device(os.environ.get("DEVICE", "cpu"))
    torch.manual_seed(0)
    x = torch.randn(64, 8).to(device)
    true_w = torch.linspace(-1.0, 1.0, 8).to(device)
    y = x @ true_w + 0.1 * torch.randn(64).to(device)
    w = torch.zeros(8).to(device).requires_grad_()
    bias = torch.full((1,), 0.5).to(device).requires_grad_()
    steps = torch.arange(20).to(device)
    for step in steps.tolist():
        loss = ((x @ w + bias - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            bias -= 0.1 * bias.grad
            w.grad.zero_()
            bias.grad.zero_()
        if step % 5 == 0:
            print(f"step {step}: loss {loss.item():.6f}")
    return w, bias


if __name__ == "__main__":
    main()
