"""The comparison of imprecise-log-exp's fix (imported only by `torchlint verify`)."""

from __future__ import annotations

from typing import List

import torch

from torchlint.verify.compare import CLOSE, Context, Findings, common_checks, metadata_checks, summary, value_checks
from torchlint.verify.results import FAIL, NOTE, Finding, RunData

_ERRORS = ("log1p_error", "expm1_error")  # largest error against float64 on tiny inputs
_OVERFLOW = "lse_large"  # log(sum(exp(x))) of inputs around 100


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    del context
    found = Findings()
    keys = common_checks(original, fixed, found)
    plain = [key for key in keys if key not in _ERRORS and key != _OVERFLOW]
    metadata_checks(original, fixed, keys, found)
    passed = value_checks(original, fixed, plain, lambda key: CLOSE, found)
    for key in _ERRORS:
        if key not in keys:
            continue
        before, after = float(original.values[key]), float(fixed.values[key])
        # The program's tiny inputs make the old form err, so the fix must do better.
        if after < before or after == before == 0.0:
            found.keyed(NOTE, "closer to the float64 reference on inputs below 1e-4 (largest error)", key,
                        f"{before:.3g} -> {after:.3g}")
        else:
            found.keyed(FAIL, "no closer to the float64 reference than before", key, f"{before:.3g} -> {after:.3g}")
    if _OVERFLOW in keys:
        a, b = original.values[_OVERFLOW], fixed.values[_OVERFLOW]
        assert isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
        finite = torch.isfinite(a)
        if not torch.isfinite(b).all():
            found.add(FAIL, f"`{_OVERFLOW}`: the fixed logsumexp is not finite")
        elif finite.any() and not torch.allclose(a[finite], b[finite]):
            found.add(FAIL, f"`{_OVERFLOW}`: values that were finite before changed")
        else:
            found.add(NOTE, f"known difference: `{_OVERFLOW}` had {int((~finite).sum())} infinite value(s) "
                            "from exp overflow before the fix, none after")
    found.add(NOTE, summary(passed))
    return found.result()
