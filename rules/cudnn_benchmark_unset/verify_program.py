"""TL604 verification program: a small convolutional network on fixed-size images.

It trains in float32 on CUDA when there is one; torchlint's TL604 fix turns
on `torch.backends.cudnn.benchmark` right after the imports.  Every batch has
the same shape, the case the setting is for.  The program records the
losses, the trained network and one evaluation output.
"""

import os
from typing import Dict, List

import torch
from torch import nn

device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cuda"))
QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
STEPS, BATCH, SIZE, CHANNELS = (3, 8, 16, 8) if QUICK else (10, 64, 64, 64)

images = torch.randn(STEPS, BATCH, 3, SIZE, SIZE, generator=torch.Generator().manual_seed(5)).to(device)
labels = torch.arange(STEPS * BATCH).remainder(10).reshape(STEPS, BATCH).to(device)
network = nn.Sequential(
    nn.Conv2d(3, CHANNELS, 3, padding=1), nn.ReLU(),
    nn.Conv2d(CHANNELS, CHANNELS, 3, padding=1), nn.ReLU(),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(CHANNELS, 10),
).to(device)
optimizer = torch.optim.SGD(network.parameters(), lr=0.05, momentum=0.9)
losses: List[float] = []


def train_step(batch: int) -> float:
    """One training step on batch ``batch``."""
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(network(images[batch]), labels[batch])
    loss.backward()  # type: ignore[no-untyped-call]
    optimizer.step()
    return float(loss)


for step in range(STEPS):
    losses.append(train_step(step))

with torch.no_grad():
    logits = network(images[0])


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {"losses": torch.tensor(losses), "network": network, "logits": logits}


def torchlint_step() -> None:
    """What `torchlint verify` times: one training step."""
    train_step(0)
