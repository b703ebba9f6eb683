"""TL603 verification program: float32 training dominated by matrix products.

A small multilayer perceptron trains in float32 on CUDA when there is one,
at torch's default float32 matmul precision; torchlint's TL603 fix inserts
`torch.set_float32_matmul_precision("high")` after the imports.  The
program records the losses and the trained weights.
"""

import os
from typing import Dict, List

import torch
from torch import nn

device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cuda"))
QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
STEPS, BATCH, WIDTH = (4, 64, 256) if QUICK else (20, 512, 2048)

generator = torch.Generator().manual_seed(11)
inputs = torch.randn(STEPS, BATCH, WIDTH, generator=generator).to(device)
targets = torch.randn(STEPS, BATCH, 1, generator=generator).to(device)
model = nn.Sequential(
    nn.Linear(WIDTH, WIDTH), nn.GELU(), nn.Linear(WIDTH, WIDTH), nn.GELU(), nn.Linear(WIDTH, 1)
).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
losses: List[float] = []


def train_step(step: int) -> float:
    """One float32 training step on batch ``step``."""
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.mse_loss(model(inputs[step]), targets[step])
    loss.backward()  # type: ignore[no-untyped-call]
    optimizer.step()
    return float(loss)


for index in range(STEPS):
    losses.append(train_step(index))


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {"losses": torch.tensor(losses), "model": model}


def torchlint_step() -> None:
    """What `torchlint verify` times: one training step."""
    train_step(0)
