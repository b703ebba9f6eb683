"""The comparison of clip-before-unscale's fix (imported only by `torchlint verify`).

The fix changes training on purpose, so nothing is compared for equality
after the first step; what is checked is the size of the bug and its cure:
the norm the clip measured at the first step (same parameters, same batch in
both runs) is `scale` times larger before the fix, and the first update is
clipped to the threshold after it instead of shrunk by the scale.
"""

from __future__ import annotations

from typing import List

import torch

from torchlint.verify.compare import Context, Findings, common_checks
from torchlint.verify.results import FAIL, NOTE, Finding, RunData

_RELATIVE = 1e-3


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    del context
    found = Findings()
    keys = common_checks(original, fixed, found)
    needed = ("clip_norms", "scales", "update_norms", "max_norm", "lr")
    if any(key not in keys for key in needed):
        found.add(FAIL, "the program must expose " + ", ".join(f"`{key}`" for key in needed))
        return found.result()
    before, after = _first(original, "clip_norms"), _first(fixed, "clip_norms")
    scale = _first(original, "scales")
    if scale != _first(fixed, "scales"):
        found.add(FAIL, f"the first step ran with different scales ({scale} and {_first(fixed, 'scales')})")
    ratio = before / after if after else float("inf")
    if abs(ratio / scale - 1.0) > _RELATIVE:
        found.add(FAIL, f"first-step clip norm {before:.6g} before the fix, {after:.6g} after: ratio {ratio:.6g}, "
                        f"expected the scale {scale:g}")
    else:
        found.add(NOTE, f"first-step clip norm {before:.6g} before the fix, {after:.6g} after: "
                        f"{ratio:.6g}x, the loss scale ({scale:g})")
    max_norm, lr = float(original.values["max_norm"]), float(original.values["lr"])
    bound = lr * max_norm * (1.0 + _RELATIVE)
    moved_before, moved_after = _first(original, "update_norms"), _first(fixed, "update_norms")
    if moved_after > bound:
        found.add(FAIL, f"the fixed first update moved the parameters by {moved_after:.6g}, more than "
                        f"lr x max_norm = {lr * max_norm:.6g}: the clip did not hold")
    if not moved_before < moved_after:
        found.add(FAIL, f"the original first update ({moved_before:.6g}) is not smaller than the fixed "
                        f"one ({moved_after:.6g})")
    else:
        found.add(NOTE, f"first update: {moved_before:.6g} before the fix (true gradient shrunk by the scale), "
                        f"{moved_after:.6g} after ({moved_after / moved_before:.3g}x larger)")
    first, last = original.values.get("losses"), fixed.values.get("losses")
    if isinstance(first, torch.Tensor) and isinstance(last, torch.Tensor) and first.numel() and last.numel():
        found.add(NOTE, f"last step's loss: {float(first[-1]):.4g} before the fix, "
                        f"{float(last[-1]):.4g} after")
    found.add(NOTE, "known difference: parameters and losses differ after the first step, as intended")
    return found.result()


def _first(run: RunData, key: str) -> float:
    value = run.values[key]
    if isinstance(value, torch.Tensor):
        return float(value.flatten()[0])
    return float(value)
