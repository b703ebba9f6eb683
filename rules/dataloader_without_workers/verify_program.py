"""TL201 verification program: training epochs over a dataset that reads a file per sample.

Each batch is loaded, moved to `device` and trained on.  Without workers the
main process reads every sample and only then launches the step: the device
(the GPU, or on a CPU-only machine the compute in the main process) waits
while samples load, and loading waits while it computes.  With workers
(torchlint's TL201 fix adds `num_workers`) the next batches load in other
processes while the step runs, so the time measured is that of the overlap.

The dataset is map-style and deterministic, and the loader shuffles with its
own seeded generator, so worker processes must yield the same batches in the
same order, and training must come out the same.  The harness picks `device`
(CUDA when there is a GPU, else the CPU).
"""

import os
import time
from typing import Dict, List, Tuple

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset

device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cpu"))
QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
LENGTH, BATCH, ROWS, DIM, HIDDEN = (16, 4, 4, 8, 16) if QUICK else (256, 16, 64, 64, 256)
READ_SECONDS = 0.0005 if QUICK else 0.002  # what reading one file would take
CLASSES = 4


class ShardDataset(Dataset[Tuple[torch.Tensor, int]]):
    """Stands for a dataset that reads and decodes one file (a ROWS x DIM record) per sample."""

    def __init__(self, length: int) -> None:
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> Tuple[torch.Tensor, int]:
        time.sleep(READ_SECONDS)
        sample = torch.arange(ROWS * DIM, dtype=torch.float32).reshape(ROWS, DIM).mul(1e-3).add(index % 7)
        return sample.sin(), index


dataset = ShardDataset(LENGTH)
loader = DataLoader(dataset, batch_size=BATCH, shuffle=True, generator=torch.Generator().manual_seed(0))
model = nn.Sequential(
    nn.Linear(DIM, HIDDEN, device=device), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN, device=device), nn.ReLU(),
)
head = nn.Linear(HIDDEN, CLASSES, device=device)
optimizer = torch.optim.SGD([*model.parameters(), *head.parameters()], lr=0.05)


def train_step(samples: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """One step on the device: every row of every sample through the model, then a classifier."""
    inputs, labels = samples.to(device), (indices % CLASSES).to(device)
    loss = F.cross_entropy(head(model(inputs).mean(1)), labels)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()  # type: ignore[no-untyped-call]
    optimizer.step()
    return loss.detach()


def run_epoch() -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One pass over the loader, training on each batch; the batches' indices in the order
    they came, a checksum of their samples, and the losses."""
    checksums: List[torch.Tensor] = []
    indices: List[torch.Tensor] = []
    losses: List[torch.Tensor] = []
    for samples, index in loader:
        checksums.append(samples.sum(dim=(1, 2)))
        indices.append(index)
        losses.append(train_step(samples, index))
    return torch.stack(checksums), torch.stack(indices), torch.stack(losses)


epochs: List[Tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []
if __name__ == "__main__":  # verify runs the program as __main__; workers import it again under spawn
    epochs = [run_epoch() for _ in range(2)]


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {
        **{f"epoch{i}": {"checksums": c, "indices": ix, "losses": loss} for i, (c, ix, loss) in enumerate(epochs)},
        "model": model,
        "head": head,
        "optimizer": optimizer,
    }


def torchlint_step() -> None:
    """What `torchlint verify` times: one epoch of training, worker start-up included."""
    run_epoch()
