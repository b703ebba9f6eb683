"""TL707 verification program: batches collated through the private module.

Samples mixing tensors, numbers, strings and nested dicts go through
`default_collate`, and raw samples through `default_convert`; torchlint's
TL707 fix calls the public `torch.utils.data` names instead.
"""

import os
from typing import Dict, List

import torch
from torch.utils.data._utils.collate import default_collate, default_convert

device = torch.device(os.environ.get("TORCHLINT_VERIFY_DEVICE", "cpu"))
QUICK = os.environ.get("TORCHLINT_VERIFY_QUICK") == "1"
SAMPLES, FEATURES = (4, 8) if QUICK else (256, 512)

generator = torch.Generator().manual_seed(7)
samples: List[Dict[str, object]] = [
    {
        "x": torch.randn(FEATURES, generator=generator),
        "y": index % 3,
        "weight": 0.5 * index,
        "name": f"sample-{index}",
        "meta": {"mask": torch.rand(FEATURES, generator=generator) > 0.5},
    }
    for index in range(SAMPLES)
]


def collate() -> Dict[str, object]:
    batch = default_collate(samples)  # type: ignore[no-untyped-call]
    converted = default_convert([sample["x"] for sample in samples])  # type: ignore[no-untyped-call]
    return {"batch": batch, "converted": converted}


result = collate()


def torchlint_outputs() -> Dict[str, object]:
    """What `torchlint verify` compares: the collated batch and the converted samples."""
    batch = result["batch"]
    assert isinstance(batch, dict)
    return {
        "x": batch["x"].to(device),
        "y": batch["y"],
        "weight": batch["weight"],
        "mask": batch["meta"]["mask"],
        "converted": torch.stack(list(result["converted"])),  # type: ignore[call-overload]
    }


def torchlint_step() -> None:
    """What `torchlint verify` times: one collation."""
    collate()
