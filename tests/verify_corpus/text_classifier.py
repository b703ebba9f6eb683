"""A bag-of-embeddings text classifier with argparse, a dataset class and an evaluation each epoch."""
import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Sentences(Dataset):
    def __init__(self, count, length, vocabulary):
        generator = torch.Generator().manual_seed(2)
        self.tokens = torch.randint(0, vocabulary, (count, length), generator=generator)
        self.labels = (self.tokens.sum(dim=1) % 2).long()

    def __len__(self):
        return len(self.tokens)

    def __getitem__(self, index):
        return self.tokens[index], self.labels[index]


class Classifier(nn.Module):
    def __init__(self, vocabulary, width, dropout):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocabulary, width)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(width, 2)

    def forward(self, tokens):
        return self.out(self.drop(self.embed(tokens)))


def evaluate(model, loader):
    model.eval()
    correct = 0
    for tokens, labels in loader:
        correct += (model(tokens).argmax(dim=1) == labels).sum().item()
    return correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--width", type=int, default=8)
    parser.add_argument("--dropout", type=float, default=0.1)
    args = parser.parse_args()
    torch.manual_seed(0)
    train = DataLoader(Sentences(32, 6, 20), batch_size=8, shuffle=True)
    valid = DataLoader(Sentences(16, 6, 20), batch_size=8)
    model = Classifier(20, args.width, args.dropout)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    for epoch in range(2):
        for tokens, labels in train:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(tokens), labels)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.4f} accuracy {evaluate(model, valid):.3f}")


if __name__ == "__main__":
    main()
