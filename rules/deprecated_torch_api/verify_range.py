"""TL703 verification program: `torch.range(a, b, step)` (end included)
becomes `torch.arange(a, b + step, step)`.  Every call passes `dtype=`, so the values and the dtype stay the same."""

from typing import Dict

import torch

steps = torch.range(0, 10, 2, dtype=torch.float32)
descending = torch.range(5, -5, -1, dtype=torch.float64)
halves = torch.range(0, 4, dtype=torch.float16)
count = 6
indices = torch.range(1, count, dtype=torch.int64)


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {"steps": steps, "descending": descending, "halves": halves, "indices": indices}


def torchlint_step() -> None:
    """What `torchlint verify` times."""
    torch.range(0, 10, 2, dtype=torch.float32)
