"""A convolutional model on fixed-size images, trained on the GPU when there is one."""
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 2)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    loader = [(torch.randn(6, 1, 6, 6), torch.randint(0, 2, (6,))) for _ in range(3)]
    for images, labels in loader:
        loss = nn.functional.cross_entropy(model(images.to(device)), labels.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"loss {loss.item():.5f}")


if __name__ == "__main__":
    main()
