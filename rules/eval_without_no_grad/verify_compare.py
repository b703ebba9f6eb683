"""The comparison of eval-without-no-grad's fix (imported only by `torchlint verify`)."""

from __future__ import annotations

from typing import List

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
from torchlint.verify.results import FAIL, NOTE, WARN, Finding, RunData


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    found = Findings()
    keys = common_checks(original, fixed, found)
    metadata_checks(original, fixed, keys, found, autograd=False)
    released = []
    for key in keys:
        a, b = original.meta.get(key), fixed.meta.get(key)
        if a is None or b is None:
            continue
        if a.get("requires_grad") and not b.get("requires_grad"):
            released.append(key)
        elif b.get("requires_grad") and not a.get("requires_grad"):
            found.keyed(FAIL, "requires grad only after the fix", key)
    level = IDENTICAL if context.device == "cpu" else CLOSE
    passed = value_checks(original, fixed, keys, lambda key: level, found)
    if released:
        found.add(NOTE, f"{len(released)} output(s) no longer require grad, as the contract expects")
    else:
        found.add(WARN, "no output stopped requiring grad: the fix had no visible effect on the outputs")
    found.add(NOTE, summary(passed))
    return found.result()
