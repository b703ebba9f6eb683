"""The comparison of dataloader-without-persistent-workers's fix (imported only by `torchlint verify`).

The first epoch must be identical.  From the second epoch on the shuffle
order may change (the documented difference), so each later epoch is
compared sorted by sample index: the same samples, each exactly once, with
the same values.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

import torch

from torchlint.verify.compare import IDENTICAL, Context, Findings, common_checks, metadata_checks, summary, value_checks
from torchlint.verify.results import FAIL, NOTE, WARN, Finding, RunData

_KEY = re.compile(r"^epoch(?P<epoch>\d+)\W+(?P<part>samples|indices)$")


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    del context
    found = Findings()
    keys = common_checks(original, fixed, found)
    metadata_checks(original, fixed, keys, found)
    epochs: Dict[int, Dict[str, str]] = {}
    for key in keys:
        match = _KEY.match(key)
        if match is not None:
            epochs.setdefault(int(match.group("epoch")), {})[match.group("part")] = key
    first = [key for key in keys if key not in {k for parts in epochs.values() for k in parts.values()}
             or _epoch_of(key) == 0]
    passed = value_checks(original, fixed, first, lambda key: IDENTICAL, found)
    reordered: List[int] = []
    for epoch in sorted(e for e in epochs if e > 0):
        parts = epochs[epoch]
        if set(parts) != {"samples", "indices"}:
            found.add(FAIL, f"epoch {epoch}: the program must expose `samples` and `indices`")
            continue
        before = _sorted(original, parts)
        after = _sorted(fixed, parts)
        if before is None or after is None:
            found.add(FAIL, f"epoch {epoch}: samples and indices must be tensors of the same length")
            continue
        if not (torch.equal(before[0], after[0]) and torch.equal(before[1], after[1])):
            found.add(FAIL, f"epoch {epoch}: not the same samples (compared sorted by index)")
            continue
        passed["same samples, any order"] = passed.get("same samples, any order", 0) + 1
        if not torch.equal(original.values[parts["indices"]], fixed.values[parts["indices"]]):
            reordered.append(epoch)
    if reordered:
        found.add(WARN, "known difference: the shuffle order changed in epoch(s) "
                        + ", ".join(str(e + 1) for e in reordered)
                        + " (counting from 1): the loader no longer draws a worker seed from its generator "
                          "every epoch")
    found.add(NOTE, summary(passed))
    return found.result()


def _epoch_of(key: str) -> Optional[int]:
    match = _KEY.match(key)
    return int(match.group("epoch")) if match is not None else None


def _sorted(run: RunData, parts: Dict[str, str]) -> Optional[Tuple[torch.Tensor, torch.Tensor]]:
    samples, indices = run.values.get(parts["samples"]), run.values.get(parts["indices"])
    if not isinstance(samples, torch.Tensor) or not isinstance(indices, torch.Tensor):
        return None
    if samples.shape[:1] != indices.shape[:1]:
        return None
    order = indices.argsort(stable=True)
    return samples[order], indices[order]
