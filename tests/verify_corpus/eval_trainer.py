"""A Trainer whose evaluation runs without torch.no_grad; checkpoint saved beside the script."""
import torch
from torch import nn


class Trainer:
    def __init__(self):
        torch.manual_seed(0)
        self.model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 2))
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.train_x, self.train_y = torch.randn(32, 10), torch.randint(0, 2, (32,))
        self.val_x, self.val_y = torch.randn(16, 10), torch.randint(0, 2, (16,))

    def train_step(self):
        self.model.train()
        self.optimizer.zero_grad()
        loss = nn.functional.cross_entropy(self.model(self.train_x), self.train_y)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def evaluate(self):
        self.model.eval()
        logits = self.model(self.val_x)
        loss = nn.functional.cross_entropy(logits, self.val_y)
        accuracy = (logits.argmax(dim=1) == self.val_y).float().mean()
        return loss.item(), accuracy.item()


def main():
    trainer = Trainer()
    for epoch in range(3):
        train_loss = trainer.train_step()
        val_loss, accuracy = trainer.evaluate()
        print(f"epoch {epoch}: train {train_loss:.4f} val {val_loss:.4f} acc {accuracy:.3f}")
    torch.save(trainer.model.state_dict(), "checkpoint.pt")


if __name__ == "__main__":
    main()
