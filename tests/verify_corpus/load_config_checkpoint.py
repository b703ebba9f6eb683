"""Resume from a checkpoint that also pickles the run's argparse namespace."""
import torch
from torch import nn


def main():
    checkpoint = torch.load("run.pt", weights_only=False)  # it pickles the namespace too
    model = nn.Linear(3, 1)
    model.load_state_dict(checkpoint["model"])
    print(f"resumed at lr {checkpoint['args'].lr}")
    return model


if __name__ == "__main__":
    main()
