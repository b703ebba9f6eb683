"""The comparison of zero-grad-not-set-to-none's fix (imported only by `torchlint verify`)."""

from __future__ import annotations

from typing import List, Mapping

from torchlint.verify.compare import (
    IDENTICAL,
    Context,
    Findings,
    standard_checks,
    summary,
)
from torchlint.verify.results import NOTE, WARN, Finding, RunData


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    del context
    found = Findings()
    passed = standard_checks(original, fixed, found, lambda key: IDENTICAL)
    idle = max(
        _steps(fixed).get("most_without_grad", 0), _steps(original).get("most_zero_grad", 0)
    )
    steps = _steps(original).get("steps", 0)
    if idle:
        found.add(WARN, f"up to {idle} parameter(s) had no gradient at an optimizer step: with "
                        "`set_to_none=True` the optimizer skips them, where a zero gradient still moved them through momentum, "
                        "weight decay or Adam's moment estimates")
    elif steps:
        found.add(NOTE, f"every parameter had a gradient at each of the {steps} optimizer steps")
    found.add(NOTE, "known difference: a parameter with no gradient in a step is skipped instead of updated "
                    "with zeros")
    found.add(NOTE, summary(passed))
    return found.result()


def _steps(run: RunData) -> Mapping[str, int]:
    """What the rule's probe counted at the optimizer steps of one run."""
    counts: Mapping[str, int] = run.probes.get("optimizer-steps", {})
    return counts
