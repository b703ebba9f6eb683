"""The comparison of sampler-without-set-epoch's fix (imported only by `torchlint verify`).

The fix changes training on purpose: each epoch draws a new order.  The
rule's probe records each `DistributedSampler`'s epoch at every start of an
iteration over it.  The verdict is "intended change" when the original
iterated a sampler more than once at one epoch (the same order every epoch),
the changed program sets a different epoch for each iteration and keeps the
first one (so the first epoch's order is unchanged), and the original,
replaying those epochs, gives the changed program's outputs and printed text.
An original that never repeats an order must be equivalent.
"""

from __future__ import annotations

from typing import Dict, List, Sequence

from torchlint.verify.compare import Context, Findings, device_level, nothing_to_change, replay_checks
from torchlint.verify.results import FAIL, INTENDED, UNALIGNED, Finding, RunData

PROBE = "sampler-epochs"


def _epochs(iterations: Sequence[Sequence[int]]) -> Dict[int, List[int]]:
    """Each sampler's epochs, in the order its iterations started."""
    found: Dict[int, List[int]] = {}
    for sampler, epoch in iterations:
        found.setdefault(int(sampler), []).append(int(epoch))
    return found


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    found = Findings()
    level = device_level(context)
    before, after = original.probes.get(PROBE), fixed.probes.get(PROBE)
    if not isinstance(before, dict) or not isinstance(after, dict) or not before.get("samplers"):
        found.add(UNALIGNED, "no DistributedSampler was iterated over: the change could not be observed")
        return found.result()
    epochs_before, epochs_after = _epochs(before["iterations"]), _epochs(after["iterations"])
    repeated = {s: e for s, e in epochs_before.items() if len(e) > len(set(e))}
    if not repeated:
        return nothing_to_change(original, fixed, found, level,
                                 "the original never iterated a sampler twice at one epoch")
    found.expect(original, fixed)
    problems = 0
    for sampler, epochs in sorted(epochs_before.items()):
        changed = epochs_after.get(sampler, [])
        if len(changed) != len(epochs):
            problems += 1
            found.add(FAIL, f"sampler {sampler + 1} is iterated {len(changed)} time(s) after the change, "
                            f"{len(epochs)} before")
            continue
        if len(set(changed)) != len(changed):
            problems += 1
            found.add(FAIL, f"after the change sampler {sampler + 1} still repeats an epoch (epochs "
                            f"{changed[:8]}): some epochs still repeat an earlier order")
        if changed and changed[0] != epochs[0]:
            problems += 1
            found.add(FAIL, f"the first iteration over sampler {sampler + 1} runs at epoch {changed[0]} after "
                            f"the change, {epochs[0]} before: the first epoch's order changed")
    equal = replay_checks(original, context.replay, fixed, found, level)
    if not problems and equal:
        count = sum(len(e) for e in repeated.values())
        found.add(INTENDED, f"intended change: the original drew the same order in each of {count} iterations "
                            "over its sampler(s); after the change each iteration has an epoch of its own (the "
                            "first unchanged), and the original, replaying those epochs, gives the changed "
                            f"program's outputs and printed text ({level})")
    return found.result()
