"""The comparison of sampler-without-set-epoch's fix (imported only by `torchlint verify`).

The fix changes training on purpose, so the measure is the data order:
every epoch's order is the same before the fix; after it the epochs'
orders differ, epoch 0 keeps the original order (`set_epoch(0)` is the
sampler's default), and each epoch still yields the rank's share of the
data, every sample at most once.
"""

from __future__ import annotations

from typing import List

import torch

from torchlint.verify.compare import Context, Findings, common_checks
from torchlint.verify.results import FAIL, NOTE, Finding, RunData


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    del context
    found = Findings()
    keys = common_checks(original, fixed, found)
    if "orders" not in keys:
        found.add(FAIL, "the program must expose `orders`, one row of sample indices per epoch")
        return found.result()
    before, after = original.values["orders"], fixed.values["orders"]
    if not (isinstance(before, torch.Tensor) and isinstance(after, torch.Tensor) and before.dim() == 2
            and before.shape == after.shape and before.shape[0] > 1):
        found.add(FAIL, "`orders` must be an epochs x samples tensor of the same shape in both runs")
        return found.result()
    epochs = before.shape[0]
    same_before = sum(bool(torch.equal(before[0], before[e])) for e in range(1, epochs))
    same_after = sum(bool(torch.equal(after[0], after[e])) for e in range(1, epochs))
    if same_before != epochs - 1:
        found.add(FAIL, f"before the fix only {same_before} of {epochs - 1} later epochs repeat epoch 0's order: "
                        "the program no longer shows the bug")
    else:
        found.add(NOTE, f"before the fix all {epochs} epochs visit the samples in the same order")
    if same_after:
        found.add(FAIL, f"after the fix {same_after} of {epochs - 1} later epochs still repeat epoch 0's order")
    else:
        moved = [float((after[e] != after[0]).float().mean()) for e in range(1, epochs)]
        found.add(NOTE, "after the fix every epoch's order differs from epoch 0's (positions changed: "
                        + ", ".join(f"{100 * m:.0f}%" for m in moved) + ")")
    if not torch.equal(before[0], after[0]):
        found.add(FAIL, "epoch 0's order changed: `set_epoch(0)` should keep the sampler's default order")
    for e in range(epochs):
        if len(set(after[e].tolist())) != after.shape[1]:
            found.add(FAIL, f"after the fix epoch {e} visits some sample twice")
            break
    found.add(NOTE, "known difference: losses and weights differ from the second epoch on, as intended")
    return found.result()
