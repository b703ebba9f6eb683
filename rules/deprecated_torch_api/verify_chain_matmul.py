"""TL703 verification program: `torch.chain_matmul(a, b, c)` becomes
`torch.linalg.multi_dot([a, b, c])`."""

from typing import Dict

import torch

generator = torch.Generator().manual_seed(0)
a = torch.randn(8, 32, generator=generator, dtype=torch.float64)
b = torch.randn(32, 4, generator=generator, dtype=torch.float64)
c = torch.randn(4, 16, generator=generator, dtype=torch.float64)
product = torch.chain_matmul(a, b, c)  # type: ignore[no-untyped-call]
pair = torch.chain_matmul(a, b)  # type: ignore[no-untyped-call]


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares."""
    return {"product": product, "pair": pair}


def torchlint_step() -> None:
    """What `torchlint verify` times."""
    torch.chain_matmul(a, b, c)  # type: ignore[no-untyped-call]
