"""TL202 verification program: large batches copied from a loader to the device.

The loader yields image-sized float batches; each is copied to `device` and
reduced there.  torchlint's TL202 fix adds `pin_memory=True`, so on CUDA the
copies read page-locked memory directly (no staging copy).  The harness
picks `device` (CUDA when there is a GPU, else the CPU, where torch leaves
the batches unpinned and nothing changes).
"""

import os
import torch
from torch.utils.data import DataLoader, TensorDataset

device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cpu"))
QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
SAMPLES, BATCH = (32, 8) if QUICK else (512, 64)
SHAPE = (3, 32, 32) if QUICK else (3, 224, 224)  # 64 images of 224x224: about 38 MB per batch

images = torch.rand((SAMPLES, *SHAPE), generator=torch.Generator().manual_seed(0))
labels = torch.arange(SAMPLES) % 10
loader = DataLoader(TensorDataset(images, labels), batch_size=BATCH, shuffle=False)
weights = torch.linspace(0.5, 1.5, SHAPE[0]).view(1, -1, 1, 1).to(device)


def run_epoch() -> torch.Tensor:
    """Copy every batch to the device and reduce it there."""
    sums = []
    for batch, target in loader:
        batch = batch.to(device)
        target = target.to(device)
        sums.append((batch * weights).sum(dim=(1, 2, 3)) + target)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return torch.cat(sums)


per_image = run_epoch().cpu()


def torchlint_step() -> None:
    """What `torchlint verify` times: one epoch of host-to-device copies."""
    run_epoch()
