"""A dataset that augments each sample with random noise in __getitem__."""
import torch
from torch.utils.data import DataLoader, Dataset


class Noisy(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, index):
        return torch.full((3,), float(index)) + 0.1 * torch.randn(3)


def main():
    torch.manual_seed(0)
    batches = [batch for batch in DataLoader(Noisy(), batch_size=4)]
    print(f"first batch mean {batches[0].mean().item():.5f}")
    return torch.cat(batches)


if __name__ == "__main__":
    main()
