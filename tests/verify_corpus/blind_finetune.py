"""Fine-tuning: freeze a pretrained-like backbone and train the head."""
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 24), nn.ReLU())
        self.head = nn.Linear(24, 3)

    def forward(self, x):
        return self.head(self.backbone(x))


def main():
    torch.manual_seed(3)
    model = Model()
    for p in model.backbone.parameters():
        p.require_grad = False
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    g = torch.Generator().manual_seed(9)
    x = torch.randn(60, 12, generator=g)
    y = torch.randint(0, 3, (60,), generator=g)
    for epoch in range(3):
        for i in range(0, 60, 20):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x[i:i + 20]), y[i:i + 20])
            loss.backward()
            opt.step()
        print(f"epoch {epoch} loss {loss.item():.5f}")
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print("trainable parameters", trainable)


if __name__ == "__main__":
    main()
