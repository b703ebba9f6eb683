"""The comparison of dataloader-without-workers's fix (imported only by `torchlint verify`)."""

from __future__ import annotations

from typing import Any, List, Mapping, Sequence

from torchlint.verify.compare import (
    IDENTICAL,
    Context,
    Findings,
    rng_shift,
    standard_checks,
    summary,
)
from torchlint.verify.results import NOTE, WARN, Finding, RunData


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    del context
    found = Findings()
    passed = standard_checks(original, fixed, found, lambda key: IDENTICAL)
    for dataset in _datasets(fixed) or _datasets(original):
        if dataset.get("iterable"):
            found.add(WARN, f"`{dataset['class']}` is an IterableDataset: unless it shards itself with "
                            "`get_worker_info()`, every worker yields every sample")
        elif dataset.get("random_getitem"):
            found.add(WARN, f"`{dataset['class']}.__getitem__` uses randomness: with workers it draws from "
                            "per-worker seeds, so its values change (and depend on the worker count)")
    shift = rng_shift(original, fixed)
    if shift:
        found.add(WARN, f"RNG-stream shift ({shift} generator): the main process's random stream ends "
                        "elsewhere, so later random numbers change")
    found.add(NOTE, summary(passed))
    return found.result()


def _datasets(run: RunData) -> Sequence[Mapping[str, Any]]:
    """What the rule's probe found about each dataset the program loaded from."""
    found: Sequence[Mapping[str, Any]] = run.probes.get("datasets", ())
    return found
