"""Autocast through the old per-device names, a trainer with evaluation inside training."""
import torch
from torch import nn


class Trainer:
    def __init__(self, steps=6, lr=0.05):
        torch.manual_seed(42)
        self.model = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 3))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9, nesterov=True)
        self.scaler = torch.cuda.amp.GradScaler(enabled=torch.cuda.is_available())
        self.steps = steps
        self.x = torch.randn(48, 12)
        self.y = torch.randint(0, 3, (48,))
        self.grid = torch.range(0, 1, 0.25)

    def train_step(self, xb, yb):
        self.opt.zero_grad(set_to_none=True)
        with torch.cpu.amp.autocast(dtype=torch.bfloat16):
            logits = self.model(xb)
            loss = nn.functional.cross_entropy(logits.float(), yb)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)
        self.scaler.update()
        return loss.detach()

    def run(self):
        for step in range(self.steps):
            i = (step % 3) * 16
            loss = self.train_step(self.x[i:i + 16], self.y[i:i + 16])
            if step % 2 == 1:
                with torch.no_grad():
                    val = nn.functional.cross_entropy(self.model(self.x[:16]), self.y[:16])
                print(f"step {step} loss {loss.item():.4f} val {val.item():.4f}")
        print("grid", self.grid.tolist())


if __name__ == "__main__":
    Trainer().run()
