"""The comparison of imprecise-log-exp's fix (imported only by `torchlint verify`).

`log1p`, `expm1` and `logsumexp` are *more* accurate than the expressions
they replace: near 0 the old forms lose every digit, and `log(sum(exp(x)))`
overflows where `logsumexp` does not.  So "close" alone would fail the fix on
exactly the inputs it improves.  Every output is compared as close; one that
is not is judged against a float64 reference (the original, run in float64
with the same input values): it passes where each value is at least as close
to the reference as the original's was, and fails where the change made it
worse.  Printed numbers likewise.
"""

from __future__ import annotations

import math
from typing import Any, List, Optional

import torch

from torchlint.verify.compare import (
    CLOSE,
    Context,
    Findings,
    Outcome,
    close_outcome,
    common_checks,
    error_model,
    exact_level,
    float64,
    identical_outcome,
    metadata_checks,
    summary,
)
from torchlint.verify.results import FAIL, NOTE, UNALIGNED, Finding, RunData

ACCURACY = "at least as close to a float64 reference as the original"


def as_accurate(original: Any, fixed: Any, reference: Any, budget: float) -> Optional[Outcome]:
    """Is every value of ``fixed`` at least as close to ``reference`` as ``original``'s
    (up to the rounding ``budget``)?  None when there is no usable reference."""
    if isinstance(original, float) and isinstance(fixed, float) and isinstance(reference, float):
        original, fixed, reference = (torch.tensor(v, dtype=torch.float64) for v in (original, fixed, reference))
    if not all(isinstance(v, torch.Tensor) for v in (original, fixed, reference)):
        return None
    if reference.shape != original.shape or fixed.shape != original.shape or not reference.is_floating_point() \
            or reference.dtype != torch.float64:
        return None
    o, f, r = float64(original), float64(fixed), float64(reference)
    finite = torch.isfinite(r)
    if not bool(finite.all()):
        return None
    scale = float(r.abs().max()) if r.numel() else 0.0
    error_before = torch.nan_to_num((o - r).abs(), nan=math.inf)
    error_after = torch.nan_to_num((f - r).abs(), nan=math.inf)
    slack = budget * r.abs() + budget * scale
    worse = error_after > error_before + slack
    worst = float((error_after - error_before).max()) if r.numel() else 0.0
    if bool(worse.any()):
        return Outcome(False, f"{int(worse.sum())} of {r.numel()} values moved away from the float64 reference "
                              f"(by up to {worst:.3g})", worst, 0.0, "error growth against float64")
    improved = int((error_after < error_before).sum())
    healed = int((~torch.isfinite(o) & torch.isfinite(f)).sum())
    detail = f"{improved} of {r.numel()} values closer to the float64 reference, none farther"
    if healed:
        detail += f"; {healed} infinite value(s) of the original are finite now"
    return Outcome(True, detail, max(worst, 0.0), 0.0, "error growth against float64")


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    found = Findings()
    reference = context.reference
    usable = reference is not None and reference.ok
    keys = common_checks(original, fixed, found, printed=CLOSE,
                         reference=reference.printed if usable and reference is not None else None)
    metadata_checks(original, fixed, keys, found)
    model = error_model(original)
    passed = {CLOSE: 0, ACCURACY: 0}
    unjudged = []
    for key in keys:
        a, b = original.values[key], fixed.values[key]
        level = exact_level(original, key, CLOSE)
        outcome = close_outcome(a, b, model=model) if level == CLOSE else identical_outcome(a, b)
        if outcome.ok:
            found.record(key, level, a, outcome)
            passed[CLOSE] += 1
            continue
        judged = None
        if usable and reference is not None and level == CLOSE:
            budget = model.relative(a.dtype if isinstance(a, torch.Tensor) else torch.float32)
            judged = as_accurate(a, b, reference.values.get(key), budget)
        if judged is None:
            if level == CLOSE and not usable:
                unjudged.append(key)
                found.record(key, level, a, outcome)
                found.keyed(UNALIGNED, "differs, and cannot be judged: no float64 reference run", key, outcome.detail)
            else:
                found.compare(key, level, a, b, outcome=outcome)
            continue
        found.record(key, ACCURACY, a, judged)
        if judged.ok:
            passed[ACCURACY] += 1
            found.keyed(NOTE, "changed, and at least as close to the float64 reference as before", key, judged.detail)
        else:
            found.keyed(FAIL, "less accurate than the original, against a float64 reference", key, judged.detail)
    if not usable:
        found.add(NOTE, "no float64 reference run: " + (reference.describe_failure() if reference is not None
                                                       else "none was made"))
    found.add(NOTE, summary(passed))
    return found.result()
