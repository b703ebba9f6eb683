"""TL703 verification program: `torch.ger` becomes `torch.outer`.

Builds sinusoidal position features the way transformer code often does,
with the outer product of positions and inverse frequencies.
"""

from typing import Dict

import torch

positions = torch.arange(0, 16, dtype=torch.float32)
inverse_frequencies = 1.0 / (10000 ** (torch.arange(0, 8, 2, dtype=torch.float32) / 8))
angles = torch.ger(positions, inverse_frequencies)
features = torch.cat([angles.sin(), angles.cos()], dim=-1)


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {"angles": angles, "features": features}


def torchlint_step() -> None:
    """What `torchlint verify` times."""
    torch.ger(positions, inverse_frequencies)
