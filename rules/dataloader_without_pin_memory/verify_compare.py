"""The comparison of dataloader-without-pin-memory's fix (imported only by `torchlint verify`).

Every value and printed number must be identical: pinning changes where a
batch's host memory lives, not what it holds.  The rule's probe records, for
each pass over a loader, whether pinning was asked for and whether the
batches were pinned; that is reported, never required (torch pins only where
an accelerator is present).
"""

from __future__ import annotations

from typing import Any, List, Mapping, Sequence

from torchlint.verify.compare import IDENTICAL, Context, Findings, standard_checks, summary
from torchlint.verify.results import NOTE, WARN, Finding, RunData

PROBE = "pinned-batches"


def _passes(run: RunData) -> Sequence[Mapping[str, Any]]:
    record = run.probes.get(PROBE)
    return record.get("passes", []) if isinstance(record, dict) else []


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    del context
    found = Findings()
    passed = standard_checks(original, fixed, found, lambda key: IDENTICAL)
    before, after = _passes(original), _passes(fixed)
    if not after:
        found.add(WARN, "no pass over a DataLoader was seen: the change could not be observed at work")
    else:
        pinned_before = sum(1 for p in before if p.get("pinned"))
        pinned_after = sum(1 for p in after if p.get("pinned"))
        if pinned_after:
            found.add(NOTE, f"batches were pinned in {pinned_after} of {len(after)} pass(es) over a loader after the "
                            f"change, {pinned_before} of {len(before)} before")
        else:
            found.add(NOTE, "the batches were not pinned after the change either: torch pins only when an "
                            "accelerator is present, so nothing changed on this machine")
    found.add(NOTE, summary(passed))
    return found.result()
