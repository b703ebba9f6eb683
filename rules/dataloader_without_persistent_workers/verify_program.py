"""TL203 verification program: epochs over a loader whose workers are slow to start.

Each worker runs a `worker_init_fn` that stands for opening the dataset's
files (a fixed sleep), and the loader shuffles with its own seeded
generator.  torchlint's TL203 fix adds `persistent_workers=True`, so the
workers start once instead of every epoch.
"""

import os
import time
from typing import Dict, List, Tuple

import torch
from torch.utils.data import DataLoader, Dataset

QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
LENGTH, BATCH, DIM, EPOCHS = (16, 4, 4, 3) if QUICK else (128, 16, 32, 3)
WORKERS = 2
START_SECONDS = 0.05 if QUICK else 0.2  # what opening a dataset's files in each worker would take


def open_files(worker_id: int) -> None:
    """Stands for the per-worker set-up a real dataset does."""
    del worker_id
    time.sleep(START_SECONDS)


class Samples(Dataset[Tuple[torch.Tensor, int]]):
    """A deterministic map-style dataset."""

    def __len__(self) -> int:
        return LENGTH

    def __getitem__(self, index: int) -> Tuple[torch.Tensor, int]:
        return torch.arange(DIM, dtype=torch.float32).mul(0.01).add(index), index


loader = DataLoader(Samples(), batch_size=BATCH, shuffle=True, num_workers=WORKERS,
                    worker_init_fn=open_files, generator=torch.Generator().manual_seed(0))


def run_epoch() -> Tuple[torch.Tensor, torch.Tensor]:
    """One pass over the loader; the batches in the order they came."""
    samples: List[torch.Tensor] = []
    indices: List[torch.Tensor] = []
    for batch, index in loader:
        samples.append(batch)
        indices.append(index)
    return torch.cat(samples), torch.cat(indices)


epochs = []
for epoch in range(EPOCHS):
    epochs.append(run_epoch())


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {f"epoch{i}": {"samples": s, "indices": ix} for i, (s, ix) in enumerate(epochs)}


def torchlint_step() -> None:
    """What `torchlint verify` times: one epoch, worker start-up included."""
    run_epoch()
