"""TL101 verification program: the tensors one step of a small attention model builds.

Positions, frequencies, a causal mask, constants and random noise are built on
the CPU and moved to `device`; torchlint's TL101 fix creates them there.  The
harness picks `device` (CUDA when there is a GPU, else the CPU).
"""

import math
import os
from typing import Dict

import torch
from torch import nn

device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cpu"))
QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
BATCH, SEQ, DIM = (4, 16, 32) if QUICK else (32, 128, 256)


def step_tensors() -> Dict[str, torch.Tensor]:
    """Everything a training step builds besides the model's own weights."""
    positions = torch.arange(SEQ).to(device)
    freqs = torch.linspace(0.0, 1.0, DIM // 2).to(device)
    causal = torch.tril(torch.ones(SEQ, SEQ).to(device)).bool()
    identity = torch.eye(DIM).to(device)
    scale = torch.full((DIM,), 1.0 / math.sqrt(DIM)).to(device)
    class_weights = torch.tensor([1.0, 2.0, 0.5, 1.0]).to(device)
    noise = torch.randn(BATCH, SEQ, DIM).to(device)
    keep = torch.rand(BATCH, SEQ).to(device) > 0.1
    labels = torch.randint(0, 4, (BATCH,)).to(device)
    return {
        "positions": positions,
        "angles": positions[:, None] * freqs[None, :],
        "causal": causal,
        "identity": identity,
        "scale": scale,
        "class_weights": class_weights,
        "noise": noise,
        "keep": keep,
        "labels": labels,
    }


norm = nn.LayerNorm(DIM).to(device)
tensors = step_tensors()
hidden = norm(tensors["noise"] * tensors["scale"]) @ tensors["identity"]
scores = (hidden @ hidden.transpose(1, 2)).masked_fill(~tensors["causal"], 0.0)


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {"tensors": tensors, "norm": norm, "hidden": hidden, "scores": scores}


def torchlint_step() -> None:
    """What `torchlint verify` times."""
    step_tensors()
