"""The comparison of loss-accumulated-with-graph's fix (imported only by `torchlint verify`).

Everything the program computes is compared for identity except
`graph_nodes`, the bug's measure: how many autograd nodes the running total
keeps alive after each step, which must grow with the steps before the fix
and be zero after it.
"""

from __future__ import annotations

from typing import List

import torch

from torchlint.verify.compare import (
    CLOSE,
    IDENTICAL,
    Context,
    Findings,
    common_checks,
    metadata_checks,
    summary,
    value_checks,
)
from torchlint.verify.results import FAIL, NOTE, Finding, RunData

_MEASURE = "graph_nodes"


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    found = Findings()
    keys = [key for key in common_checks(original, fixed, found) if key != _MEASURE]
    metadata_checks(original, fixed, keys, found, autograd=False)
    level = IDENTICAL if context.device == "cpu" else CLOSE
    passed = value_checks(original, fixed, keys, lambda key: level, found)
    before, after = original.values.get(_MEASURE), fixed.values.get(_MEASURE)
    if not (isinstance(before, torch.Tensor) and isinstance(after, torch.Tensor) and before.numel() > 1):
        found.add(FAIL, f"the program must expose `{_MEASURE}`, one count per step")
        return found.result()
    steps = before.numel()
    first, last = int(before[0]), int(before[-1])
    if not last > first:
        found.add(FAIL, f"before the fix the total's graph did not grow over {steps} steps ({first} -> {last} "
                        "nodes): the program no longer shows the leak")
    else:
        found.add(NOTE, f"before the fix the total kept {first} autograd nodes after step 1 and {last} after "
                        f"step {steps} (+{(last - first) / (steps - 1):.3g} per step)")
    if int(after.abs().max()) != 0:
        found.add(FAIL, f"after the fix the total still holds a graph (up to {int(after.max())} nodes)")
    else:
        found.add(NOTE, f"after the fix the total holds no graph at any of the {steps} steps")
    found.add(NOTE, "known difference: the total no longer requires grad")
    found.add(NOTE, summary(passed))
    return found.result()
