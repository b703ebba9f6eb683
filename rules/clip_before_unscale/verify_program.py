"""TL601 verification program: gradient clipping under a gradient scaler.

The loop clips gradients right after `scaler.scale(loss).backward()`, while
they are still multiplied by the loss scale; torchlint's TL601 fix inserts
`scaler.unscale_(optimizer)` before the clip.  The program records, for each
step, the norm `clip_grad_norm_` measured, the scale, and how far the step
moved the parameters.
"""

import os
from typing import Dict, List

import torch
from torch import nn

device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cpu"))
QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
STEPS, BATCH, FEATURES, HIDDEN = (3, 16, 16, 32) if QUICK else (10, 64, 64, 256)
MAX_NORM = 1.0

generator = torch.Generator().manual_seed(3)
batches = [
    (torch.randn(BATCH, FEATURES, generator=generator).to(device),
     torch.randn(BATCH, 1, generator=generator).to(device))
    for _ in range(STEPS)
]
model = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler(device.type)

clip_norms: List[float] = []
scales: List[float] = []
update_norms: List[float] = []
losses: List[float] = []


def train_step(inputs: torch.Tensor, targets: torch.Tensor) -> None:
    """One mixed-precision step with gradient clipping."""
    before = torch.cat([p.detach().flatten().clone() for p in model.parameters()])
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(inputs), targets)
    scales.append(float(scaler.get_scale()))
    scaler.scale(loss).backward()  # type: ignore[no-untyped-call]
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
    scaler.step(optimizer)
    scaler.update()
    after = torch.cat([p.detach().flatten() for p in model.parameters()])
    clip_norms.append(float(norm))
    update_norms.append(float((after - before).norm()))
    losses.append(loss.item())


for inputs, targets in batches:
    train_step(inputs, targets)


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {
        "clip_norms": torch.tensor(clip_norms, dtype=torch.float64),
        "scales": torch.tensor(scales, dtype=torch.float64),
        "update_norms": torch.tensor(update_norms, dtype=torch.float64),
        "losses": torch.tensor(losses, dtype=torch.float64),
        "max_norm": MAX_NORM,
        "lr": 0.05,
    }


def torchlint_step() -> None:
    """What `torchlint verify` times: one training step."""
    train_step(*batches[0])
