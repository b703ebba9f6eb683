"""TL201 verification program: two epochs over a dataset that reads a file per sample.

The dataset is map-style and deterministic, and the loader shuffles with its
own seeded generator, so worker processes must yield the same batches in the
same order.  torchlint's TL201 fix adds `num_workers`.
"""

import os
import time
from typing import Dict, List, Tuple

import torch
from torch.utils.data import DataLoader, Dataset

QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
LENGTH, BATCH, DIM = (16, 4, 8) if QUICK else (256, 16, 64)
READ_SECONDS = 0.0005 if QUICK else 0.002  # what reading one file would take


class ShardDataset(Dataset[Tuple[torch.Tensor, int]]):
    """Stands for a dataset that reads and decodes one file per sample."""

    def __init__(self, length: int, dim: int) -> None:
        self.length = length
        self.dim = dim

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> Tuple[torch.Tensor, int]:
        time.sleep(READ_SECONDS)
        sample = torch.arange(self.dim, dtype=torch.float32).mul(0.01).add(index)
        return sample, index


dataset = ShardDataset(LENGTH, DIM)
loader = DataLoader(dataset, batch_size=BATCH, shuffle=True, generator=torch.Generator().manual_seed(0))


def run_epoch() -> Tuple[torch.Tensor, torch.Tensor]:
    """One pass over the loader; the batches in the order they came."""
    samples: List[torch.Tensor] = []
    indices: List[torch.Tensor] = []
    for batch, index in loader:
        samples.append(batch)
        indices.append(index)
    return torch.stack(samples), torch.stack(indices)


epochs = [run_epoch() for _ in range(2)]


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {f"epoch{i}": {"samples": s, "indices": ix} for i, (s, ix) in enumerate(epochs)}


def torchlint_step() -> None:
    """What `torchlint verify` times: one epoch, worker start-up included."""
    run_epoch()
