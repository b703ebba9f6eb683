"""A loader with a custom collate built on torch's private default_collate."""
import torch
from torch.utils.data import DataLoader
from torch.utils.data._utils.collate import default_collate


def collate(samples):
    batch = default_collate(samples)
    batch["x"] = batch["x"] * 2
    return batch


def main():
    samples = [{"x": torch.full((2,), float(i)), "label": i % 3} for i in range(12)]
    total = torch.zeros(2)
    for batch in DataLoader(samples, batch_size=4, collate_fn=collate):
        total += batch["x"].sum(dim=0)
    print(f"total {total.tolist()}")
    return total


if __name__ == "__main__":
    main()
