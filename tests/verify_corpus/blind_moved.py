"""A recurrent-style loop that builds its state and noise on the CPU and moves them."""
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Cell(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(2 * dim, dim)

    def forward(self, x, h):
        return torch.tanh(self.lin(torch.cat([x, h], dim=1)))


def main():
    torch.manual_seed(4)
    dim, batch, steps = 8, 4, 5
    cell = Cell(dim).to(device)
    opt = torch.optim.SGD(cell.parameters(), lr=0.1)
    seq = torch.randn(steps, batch, dim).to(device)
    for epoch in range(3):
        h = torch.zeros(batch, dim).to(device)
        opt.zero_grad()
        for t in range(steps):
            noise = torch.randn(batch, dim).to(device) * 0.01
            h = cell(seq[t] + noise, h)
        loss = h.pow(2).mean()
        loss.backward()
        opt.step()
        print(f"epoch {epoch} loss {loss.item():.6f}")
    return cell


if __name__ == "__main__":
    main()
