"""Mixed precision on the CPU with a gradient scaler and gradient clipping."""
import torch
from torch import nn

device = "cpu"


def main():
    torch.manual_seed(11)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(device, init_scale=1024.0)
    g = torch.Generator().manual_seed(5)
    x = torch.randn(64, 16, generator=g)
    y = torch.randn(64, 1, generator=g)
    losses = []
    for step in range(8):
        xb, yb = x[step * 8:(step + 1) * 8], y[step * 8:(step + 1) * 8]
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device, dtype=torch.bfloat16):
            out = model(xb)
        loss = nn.functional.mse_loss(out.float(), yb)
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
        print(f"step {step} loss {loss.item():.4f} scale {scaler.get_scale():.0f}")
    return losses


if __name__ == "__main__":
    main()
