"""The comparison of train-mode-not-restored's fix (imported only by `torchlint verify`).

The fix changes training on purpose from the first evaluation on, so the
first epoch (before any evaluation) must be identical, and the later steps
are judged by what training mode does: before the fix they run in eval mode
(dropout zeroes nothing, BatchNorm's running mean stands still); after it
they run in train mode (dropout zeroes about its rate, the running mean
moves).
"""

from __future__ import annotations

from typing import List

import torch

from torchlint.verify.compare import Context, Findings, common_checks
from torchlint.verify.results import FAIL, NOTE, Finding, RunData

_NEEDED = ("modes", "dropped", "bn_moves", "losses", "scores", "steps_per_epoch", "dropout")


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    del context
    found = Findings()
    keys = common_checks(original, fixed, found)
    if any(key not in keys for key in _NEEDED):
        found.add(FAIL, "the program must expose " + ", ".join(f"`{key}`" for key in _NEEDED))
        return found.result()
    first = int(original.values["steps_per_epoch"])
    rate = float(original.values["dropout"])
    before = {key: _tensor(original, key) for key in ("modes", "dropped", "bn_moves", "losses")}
    after = {key: _tensor(fixed, key) for key in ("modes", "dropped", "bn_moves", "losses")}
    if before["modes"].numel() <= first:
        found.add(FAIL, "the program must train for more than one epoch")
        return found.result()
    if not torch.equal(before["losses"][:first], after["losses"][:first]):
        found.add(FAIL, "the first epoch (before any evaluation) differs between the runs")
    else:
        found.add(NOTE, f"the first epoch's {first} steps (before any evaluation) are identical")
    if not torch.equal(_tensor(original, "scores")[:1], _tensor(fixed, "scores")[:1]):
        found.add(FAIL, "the first evaluation's result differs: the evaluation no longer runs in eval mode "
                        "(train mode restored too early?)")
    else:
        found.add(NOTE, "the first evaluation (after identical training) gives the same result in both runs")
    late_before = {key: value[first:] for key, value in before.items()}
    late_after = {key: value[first:] for key, value in after.items()}
    steps = late_before["modes"].numel()
    if float(late_before["modes"].max()) != 0.0:
        found.add(FAIL, "before the fix some step after the first evaluation ran in train mode: "
                        "the program no longer shows the bug")
    if float(late_after["modes"].min()) != 1.0:
        found.add(FAIL, "after the fix some step after an evaluation still ran in eval mode")
    drop_before, drop_after = float(late_before["dropped"].mean()), float(late_after["dropped"].mean())
    if drop_before != 0.0 or abs(drop_after - rate) > 0.15:
        found.add(FAIL, f"dropout zeroed {drop_before:.3f} of the activations before the fix and "
                        f"{drop_after:.3f} after (expected 0 and about {rate})")
    else:
        found.add(NOTE, f"over the {steps} steps after the first evaluation dropout zeroed {drop_before:.3f} "
                        f"of the activations before the fix and {drop_after:.3f} after (rate {rate})")
    move_before, move_after = float(late_before["bn_moves"].max()), float(late_after["bn_moves"].min())
    if move_before != 0.0 or not move_after > 0.0:
        found.add(FAIL, f"BatchNorm's running mean moved by up to {move_before:.3g} per step before the fix "
                        f"and by at least {move_after:.3g} after (expected 0 and more than 0)")
    else:
        found.add(NOTE, f"BatchNorm's running mean stood still in those steps before the fix and moved by "
                        f"{float(late_after['bn_moves'].mean()):.3g} per step after it")
    found.add(NOTE, "known difference: losses and weights differ after the first evaluation, as intended")
    return found.result()


def _tensor(run: RunData, key: str) -> torch.Tensor:
    value = run.values[key]
    return value if isinstance(value, torch.Tensor) else torch.tensor(value)
