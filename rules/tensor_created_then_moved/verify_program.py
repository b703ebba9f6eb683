"""TL101 verification program: training steps of a small attention block whose
per-step tensors are built on the CPU and copied to `device` while the
previous step's kernels still run.

On a GPU, `.to(device)` of a tensor in ordinary (pageable) CPU memory is a
blocking copy: the host waits until it is done, and the copy waits for the
kernels queued before it.  Building the next step's tensors this way makes the
CPU wait for the current step's compute, so it cannot queue the next step ahead
and the GPU idles while it catches up.  torchlint's TL101 fix creates them on
the device: no copy, nothing to wait for.  On the CPU both versions do the same
work and compute the same values.  The harness picks `device` (CUDA when there
is a GPU, else the CPU).

The model's weights (constructed with `device=`) and its batch (drawn from a
dedicated generator) are not touched by the fix.
"""

import math
import os
from typing import Dict, List

import torch
from torch import nn
from torch.nn import functional as F

device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cpu"))
QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
BATCH, SEQ, DIM, STEPS = (4, 16, 32, 3) if QUICK else (16, 256, 128, 4)
CLASSES = 4


def step_tensors() -> Dict[str, torch.Tensor]:
    """What a training step builds besides the model's weights and its batch."""
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


class Block(nn.Module):
    """Causal self-attention over rotary-style position features, then a classifier."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim, device=device)
        self.qkv = nn.Linear(dim, 3 * dim, device=device)
        self.out = nn.Linear(dim, dim, device=device)
        self.head = nn.Linear(dim, CLASSES, device=device)

    def forward(self, x: torch.Tensor, t: Dict[str, torch.Tensor]) -> torch.Tensor:
        rotary = torch.cat([t["angles"].sin(), t["angles"].cos()], dim=-1)
        q, k, v = self.qkv(self.norm(x + rotary)).chunk(3, dim=-1)
        scores = (q * t["scale"]) @ k.transpose(1, 2)
        attended = scores.masked_fill(~t["causal"], float("-inf")).softmax(-1) @ v
        hidden = (self.out(attended) @ t["identity"]) * t["keep"][..., None]
        logits: torch.Tensor = self.head(hidden.mean(1))
        return logits


model = Block(DIM)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
batch = torch.randn(BATCH, SEQ, DIM, generator=torch.Generator().manual_seed(0)).to(device)


def train_step(t: Dict[str, torch.Tensor]) -> torch.Tensor:
    logits = model(batch + 0.1 * t["noise"], t)
    loss = F.cross_entropy(logits, t["labels"], weight=t["class_weights"])
    optimizer.zero_grad(set_to_none=True)
    loss.backward()  # type: ignore[no-untyped-call]
    optimizer.step()
    return loss.detach()


pending = step_tensors()


def step() -> torch.Tensor:
    """One training step: its kernels are queued, then the next step's tensors are built."""
    global pending, tensors
    tensors = pending
    loss = train_step(tensors)
    pending = step_tensors()
    return loss


tensors = pending
losses: List[torch.Tensor] = [step() for _ in range(STEPS)]


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {"tensors": tensors, "losses": torch.stack(losses), "model": model, "optimizer": optimizer}


def torchlint_step() -> None:
    """What `torchlint verify` times: a training step with the next step's tensors built during it."""
    step()
