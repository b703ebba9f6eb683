"""Classifier with dropout, a Trainer class and validation after every epoch."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(64, 4)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.fc1(x))))


class Trainer:
    def __init__(self, lr=0.01, epochs=4, seed=7):
        torch.manual_seed(seed)
        self.model = Net()
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.epochs = epochs
        g = torch.Generator().manual_seed(seed + 1)
        self.x = torch.randn(128, 20, generator=g)
        self.y = torch.randint(0, 4, (128,), generator=g)
        self.vx = torch.randn(64, 20, generator=g)
        self.vy = torch.randint(0, 4, (64,), generator=g)
        self.history = []

    def evaluate(self):
        self.model.eval()
        logits = self.model(self.vx)
        loss = F.cross_entropy(logits, self.vy)
        acc = (logits.argmax(dim=1) == self.vy).float().mean()
        return loss, acc

    def fit(self):
        self.model.train()
        for epoch in range(self.epochs):
            for i in range(0, 128, 32):
                xb, yb = self.x[i:i + 32], self.y[i:i + 32]
                self.opt.zero_grad()
                loss = F.cross_entropy(self.model(xb), yb)
                loss.backward()
                self.opt.step()
            val_loss, acc = self.evaluate()
            self.history.append((loss.item(), val_loss.item(), acc.item()))
            print(f"epoch {epoch}: train {loss.item():.4f} val {val_loss.item():.4f} acc {acc.item():.3f}")


if __name__ == "__main__":
    trainer = Trainer()
    trainer.fit()
