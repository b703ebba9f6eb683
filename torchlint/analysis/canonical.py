"""Public torch names for the private module paths that re-export them.

Kept apart from :mod:`torchlint.analysis.names` (which needs libcst) because the
project index uses it too, before anything is parsed.
"""

from __future__ import annotations

import re
from typing import Tuple


# Private module paths that re-export a public torch name.
_CANONICAL_PREFIXES: Tuple[Tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^torch\.nn\.modules(?:\.[a-z_]+)?\.([A-Z]\w*)$"), r"torch.nn.\1"),
    (re.compile(r"^torch\.nn\.parallel(?:\.data_parallel)?\.DataParallel$"), "torch.nn.DataParallel"),
    (re.compile(r"^torch\.nn\.parallel\.data_parallel\.data_parallel$"), "torch.nn.parallel.data_parallel"),
    (re.compile(r"^torch\.nn\.parallel\.distributed\.DistributedDataParallel$"),
     "torch.nn.parallel.DistributedDataParallel"),
    (re.compile(r"^torch\.utils\.data\.dataloader\.DataLoader$"), "torch.utils.data.DataLoader"),
    (re.compile(r"^torch\.optim\.[a-z_]+\.([A-Z]\w*)$"), r"torch.optim.\1"),
    # `torch.GradScaler` (the spelling torch's AMP page uses) and the class's own module re-export
    # `torch.amp.GradScaler`.
    (re.compile(r"^torch(?:\.amp\.grad_scaler)?\.GradScaler$"), "torch.amp.GradScaler"),
)


def canonical(name: str) -> str:
    """Map a private re-export path to the public torch name."""
    for pattern, replacement in _CANONICAL_PREFIXES:
        if pattern.match(name):
            return pattern.sub(replacement, name)
    return name
