"""The comparison of dataloader-without-pin-memory's fix (imported only by `torchlint verify`).

Every value must be identical; only `pinned`, which says whether the
batches sat in page-locked memory, may change, and that change is the fix.
"""

from __future__ import annotations

from typing import List

from torchlint.verify.compare import IDENTICAL, Context, Findings, common_checks, metadata_checks, summary, value_checks
from torchlint.verify.results import FAIL, NOTE, Finding, RunData

_WHERE = "pinned"


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    del context
    found = Findings()
    keys = [key for key in common_checks(original, fixed, found) if key != _WHERE]
    metadata_checks(original, fixed, keys, found)
    passed = value_checks(original, fixed, keys, lambda key: IDENTICAL, found)
    before, after = original.values.get(_WHERE), fixed.values.get(_WHERE)
    if before is None or after is None:
        found.add(FAIL, f"the program must expose `{_WHERE}`")
    elif after and not before:
        found.add(NOTE, "the batches were in pageable memory before the fix and pinned after it")
    elif not after:
        found.add(NOTE, "the fixed run's batches were not pinned either: torch pins only when an "
                        "accelerator is present, so nothing changed on this machine")
    else:
        found.add(NOTE, "the batches were already pinned before the fix")
    found.add(NOTE, summary(passed))
    return found.result()
