"""TL505 verification program: a DDP checkpoint loaded where its GPU is absent.

One process joins a one-rank `gloo` process group, trains a DDP-wrapped
model for a step and saves the unwrapped state on rank 0.  The checkpoint's
storages are then retagged with a GPU index this machine does not have
(`cuda:<device count>`), as if a job on a bigger node had saved it.
torchlint's TL505 fix adds `map_location="cpu"` to the `torch.load`: the
original cannot load the checkpoint, the fixed program loads exactly what
was saved.
"""

import os
import shutil
import struct
import tempfile
import zipfile
from typing import Dict

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

FOLDER = tempfile.mkdtemp(prefix="torchlint-tl505-")
PATH = os.path.join(FOLDER, "checkpoint.pt")
ABSENT = f"cuda:{torch.cuda.device_count() if torch.cuda.is_available() else 0}"


def retag(path: str, location: str) -> None:
    """Rewrite a checkpoint saved on the CPU so that its storages say they
    were saved on ``location`` (torch's zip format keeps each storage's
    location as a pickled string in `data.pkl`)."""
    with zipfile.ZipFile(path) as archive:
        entries = [(info, archive.read(info)) for info in archive.infolist()]
    old = b"X" + struct.pack("<I", 3) + b"cpu"
    new = b"X" + struct.pack("<I", len(location)) + location.encode()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        for info, data in entries:
            if info.filename.endswith("/data.pkl"):
                if old not in data:
                    raise RuntimeError("unexpected checkpoint layout: no CPU location found")
                data = data.replace(old, new)
            archive.writestr(info, data)


dist.init_process_group("gloo", init_method="file://" + os.path.join(FOLDER, "store"), rank=0, world_size=1)
torch.manual_seed(0)
model = DistributedDataParallel(nn.Linear(8, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model(torch.randn(16, 8)).pow(2).mean().backward()
optimizer.step()
saved = {name: value.detach().clone() for name, value in model.module.state_dict().items()}

if dist.get_rank() == 0:
    torch.save(model.module.state_dict(), PATH)
    retag(PATH, ABSENT)
dist.barrier()

try:
    state = torch.load(PATH)
    error = ""
except (RuntimeError, AssertionError) as raised:  # no such CUDA device
    state = None
    error = type(raised).__name__
dist.destroy_process_group()
shutil.rmtree(FOLDER, ignore_errors=True)  # the checkpoint and the store: nothing is left behind

loaded = state is not None
matches = loaded and all(torch.equal(state[name].cpu(), value) for name, value in saved.items())
devices = sorted({str(value.device) for value in state.values()}) if state is not None else []


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares: whether the load worked, and what it gave."""
    return {
        "loaded": loaded,
        "matches_saved": matches,
        "devices": ",".join(devices),
        "absent_device": ABSENT,
        "error": error,
    }
