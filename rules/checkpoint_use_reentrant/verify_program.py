"""TL705 verification program: a small residual MLP trained with activation checkpointing.

Each block goes through `torch.utils.checkpoint.checkpoint`, and a stack of
layers through `checkpoint_sequential`, without `use_reentrant`; torchlint's
TL705 fix passes `use_reentrant=False`.
"""

import os
import warnings
from typing import Dict

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

warnings.filterwarnings("ignore", message=".*use_reentrant.*")
device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cpu"))
QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
STEPS, BATCH, WIDTH = (2, 8, 32) if QUICK else (6, 64, 512)

torch.manual_seed(0)
blocks = nn.ModuleList(nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.GELU()) for _ in range(3)).to(device)
tail = nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.Tanh(), nn.Linear(WIDTH, WIDTH), nn.Tanh()).to(device)
head = nn.Linear(WIDTH, 1).to(device)
parameters = [*blocks.parameters(), *tail.parameters(), *head.parameters()]
optimizer = torch.optim.SGD(parameters, lr=0.01)

generator = torch.Generator().manual_seed(1)
inputs = torch.randn(STEPS, BATCH, WIDTH, generator=generator).to(device).requires_grad_()
targets = torch.randn(STEPS, BATCH, 1, generator=generator).to(device)


def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    optimizer.zero_grad()
    h = x
    for block in blocks:
        h = h + checkpoint(block, h)
    h = checkpoint_sequential(tail, 2, h)  # type: ignore[no-untyped-call]
    loss = nn.functional.mse_loss(head(h), y)
    loss.backward()  # type: ignore[no-untyped-call]
    optimizer.step()
    return loss.detach()


losses = torch.stack([train_step(inputs[i], targets[i]) for i in range(STEPS)])


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares: losses, trained weights, input gradients."""
    return {
        "losses": losses,
        "blocks": blocks,
        "tail": tail,
        "head": head,
        "input_grad": inputs.grad,
    }


def torchlint_step() -> None:
    """What `torchlint verify` times: one training step."""
    train_step(inputs[0], targets[0])
