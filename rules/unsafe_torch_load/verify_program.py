"""TL801 verification program: a checkpoint of state dicts, saved and
loaded back with `torch.load` without `weights_only` (linted for a torch
2.5 project, where that default is `False`).  torchlint's TL801 fix passes
`weights_only=True`, which loads the same objects because the checkpoint
holds only tensors, numbers, strings and plain containers."""

import io
from typing import Any, Dict

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters())
model(torch.randn(4, 8)).sum().backward()
optimizer.step()
checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3, "note": "best"}
buffer = io.BytesIO()
torch.save(checkpoint, buffer)


def load() -> Dict[str, Any]:
    buffer.seek(0)
    loaded: Dict[str, Any] = torch.load(buffer, map_location="cpu")
    return loaded


loaded = load()
restored = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.Linear(16, 2))
restored.load_state_dict(loaded["model"])


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {"restored": restored, "epoch": loaded["epoch"], "note": loaded["note"],
            "optimizer_state": loaded["optimizer"]["state"]}


def torchlint_step() -> None:
    """What `torchlint verify` times."""
    load()
