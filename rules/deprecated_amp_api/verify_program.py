"""TL701 verification program: mixed precision through the deprecated
device-specific API, with positional arguments the fix must rebind.

On the CPU it trains in bfloat16 under `torch.cpu.amp.autocast`; on CUDA
under `torch.cuda.amp.autocast(True, torch.float16)` with a `GradScaler`
built from positional arguments.  torchlint's TL701 fix rewrites them to
`torch.amp.autocast(<device>, enabled=..., dtype=...)` and
`torch.amp.GradScaler("cuda", init_scale=..., growth_factor=...)`.
"""

import os
from typing import ContextManager, Dict, List

import torch
from torch import nn

device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cpu"))
on_cuda = device.type == "cuda"

generator = torch.Generator().manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
inputs = torch.randn(64, 16, generator=generator).to(device)
targets = torch.randint(0, 4, (64,), generator=generator).to(device)
scaler = torch.cuda.amp.GradScaler(2.0**10, 2.0, enabled=on_cuda)
losses: List[float] = []


def autocast_region() -> ContextManager[None]:
    if on_cuda:
        return torch.cuda.amp.autocast(True, torch.float16)
    return torch.cpu.amp.autocast(True, torch.bfloat16)  # type: ignore[attr-defined]


def torchlint_step() -> None:
    """One mixed-precision training step (what `torchlint verify` times)."""
    optimizer.zero_grad(set_to_none=True)
    with autocast_region():
        loss = nn.functional.cross_entropy(model(inputs), targets)
    scaler.scale(loss).backward()  # type: ignore[no-untyped-call]
    scaler.step(optimizer)
    scaler.update()
    losses.append(float(loss))


for _ in range(3):
    torchlint_step()
with torch.no_grad(), autocast_region():
    logits = model(inputs)


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {"model": model, "logits": logits, "losses": losses, "scale": float(scaler.get_scale()) if on_cuda else 1.0}
