"""Two networks trained against each other, in a class, each with its own optimizer."""
import torch
from torch import nn


class Pair:
    def __init__(self):
        torch.manual_seed(0)
        self.generator = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
        self.critic = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
        self.g_opt = torch.optim.Adam(self.generator.parameters(), lr=1e-3, betas=(0.5, 0.999))
        self.c_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3, betas=(0.5, 0.999))

    def step(self, real):
        noise = torch.randn(real.shape[0], 2)
        fake = self.generator(noise)
        self.c_opt.zero_grad(set_to_none=False)
        real_loss = -self.critic(real).mean()
        fake_loss = self.critic(fake.detach()).mean()
        c_loss = real_loss + fake_loss
        c_loss.backward()
        self.c_opt.step()
        self.g_opt.zero_grad(set_to_none=False)
        g_loss = -self.critic(fake).mean()
        g_loss.backward()
        self.g_opt.step()
        return c_loss.item(), g_loss.item()


def main():
    pair = Pair()
    data = torch.randn(16, 2, generator=torch.Generator().manual_seed(1)) + 3.0
    for step in range(4):
        c_loss, g_loss = pair.step(data)
        print(f"step {step} critic {c_loss:.4f} generator {g_loss:.4f}")


if __name__ == "__main__":
    main()
