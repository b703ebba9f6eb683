"""TL102 verification program: a training loop over a pinned loader.

The loader pins its batches (`pin_memory=True`); each batch is copied to
`device` and trained on.  torchlint's TL102 fix adds `non_blocking=True` to
the copies, so on CUDA the next copy can overlap with the step's kernels.
The harness picks `device` (CUDA when there is a GPU, else the CPU, where
the flag does nothing and the run must be the same).
"""

import os
from typing import Dict, List

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cpu"))
QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
SAMPLES, BATCH, DIM = (64, 16, 32) if QUICK else (2048, 128, 1024)

generator = torch.Generator().manual_seed(0)
inputs = torch.randn(SAMPLES, DIM, generator=generator)
targets = torch.randint(0, 10, (SAMPLES,), generator=generator)
loader = DataLoader(TensorDataset(inputs, targets), batch_size=BATCH, shuffle=False, pin_memory=True)

model = nn.Sequential(nn.Linear(DIM, DIM), nn.ReLU(), nn.Linear(DIM, DIM), nn.ReLU(), nn.Linear(DIM, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()


def run_epoch() -> List[torch.Tensor]:
    """One epoch; the losses stay on the device until the end."""
    losses = []
    for x, y in loader:
        x = x.to(device)
        y = y.to(device)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return losses


losses = torch.stack(run_epoch()).cpu()


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {"losses": losses, "weights": {name: p.detach().cpu() for name, p in model.named_parameters()}}


def torchlint_step() -> None:
    """What `torchlint verify` times: one epoch of copies and steps."""
    run_epoch()
