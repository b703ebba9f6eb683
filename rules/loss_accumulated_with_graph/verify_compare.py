"""The comparison of loss-accumulated-with-graph's fix (imported only by `torchlint verify`).

Everything the program computes and prints must be identical, except that a
running total may stop requiring grad (so printed tensors lose their
`grad_fn=...`).  The rule's probe counts, after every optimizer step, the
autograd nodes each tensor in the program's frames keeps alive: a total that
holds every step's graph grows step after step before the fix, and nothing
may grow after it.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence

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
from torchlint.verify.results import FAIL, NOTE, UNALIGNED, Finding, RunData

PROBE = "kept-graphs"


def growing(steps: Sequence[Mapping[str, int]]) -> Dict[str, List[int]]:
    """The tensors whose graph grew at every step they were seen at (three steps at least),
    with their counts: what a running total of losses keeps alive."""
    series: Dict[str, List[int]] = {}
    for held in steps:
        for name, count in held.items():
            series.setdefault(name, []).append(int(count))
    return {name: counts for name, counts in series.items()
            if len(counts) >= 3 and all(b > a for a, b in zip(counts, counts[1:]))}


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    found = Findings()
    level = IDENTICAL if context.device == "cpu" else CLOSE
    keys = common_checks(original, fixed, found, printed=level, autograd=False)
    metadata_checks(original, fixed, keys, found, autograd=False)
    passed = value_checks(original, fixed, keys, lambda key: level, found)
    before, after = original.probes.get(PROBE), fixed.probes.get(PROBE)
    if not isinstance(before, dict) or not isinstance(after, dict):
        found.add(UNALIGNED, "the autograd graphs the program kept were not observed")
        return found.result()
    leak_before, leak_after = growing(before.get("steps", ())), growing(after.get("steps", ()))
    for name, counts in leak_after.items():
        found.keyed(FAIL, "after the change this tensor still keeps a graph that grows every step", name,
                    f"{counts[0]} -> {counts[-1]} nodes over {len(counts)} steps")
    if leak_before:
        name, counts = next(iter(leak_before.items()))
        found.add(NOTE, f"before the change `{name}` kept a growing autograd graph ({counts[0]} nodes after its "
                        f"first step, {counts[-1]} after step {len(counts)})"
                        + ("; after it nothing grows" if not leak_after else ""))
    elif not before.get("steps"):
        found.add(NOTE, "the program took no optimizer step, so no graph kept across steps could be observed")
    else:
        found.add(NOTE, "no tensor in the program's frames kept a graph that grew step after step in the original")
    found.add(NOTE, "known difference: the running total no longer requires grad")
    found.add(NOTE, summary(passed))
    return found.result()
