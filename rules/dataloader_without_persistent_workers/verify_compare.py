"""The comparison of dataloader-without-persistent-workers's fix (imported only by `torchlint verify`).

The rule's probe records the sample indices of every pass over every loader.
The first pass over each loader must give the same indices in the same
order; each later pass the same samples, in any order: with persistent
workers the loader draws its workers' seed once, not every epoch, so the
generator it shuffles with moves differently from the second epoch on (the
documented difference).  That difference, and nothing else: the original,
replaying the fixed program's single seed draw (the probe gives back each
extra draw), must give the changed program's outputs and printed text.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Dict, List, Mapping, Sequence

from torchlint.verify.compare import Context, Findings, device_level, replay_checks
from torchlint.verify.results import FAIL, NOTE, UNALIGNED, WARN, Finding, RunData

PROBE = "loader-epochs"


def _passes(run: RunData) -> Dict[int, List[List[int]]]:
    record = run.probes.get(PROBE)
    found: Dict[int, List[List[int]]] = {}
    passes: Sequence[Mapping[str, Any]] = record.get("passes", []) if isinstance(record, dict) else []
    for item in passes:
        found.setdefault(int(item["loader"]), []).append([int(i) for i in item["indices"]])
    return found


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    found = Findings()
    found.expect(original, fixed)
    level = device_level(context)
    if not isinstance(original.probes.get(PROBE), dict) or not isinstance(fixed.probes.get(PROBE), dict):
        found.add(UNALIGNED, "the loaders' passes were not observed")
        return found.result()
    before, after = _passes(original), _passes(fixed)
    reordered: List[str] = []
    for loader, passes in sorted(before.items()):
        changed = after.get(loader, [])
        if len(changed) != len(passes):
            found.add(FAIL, f"loader {loader + 1} is iterated {len(changed)} time(s) after the change, "
                            f"{len(passes)} before")
            continue
        for epoch, (a, b) in enumerate(zip(passes, changed)):
            if a == b:
                continue
            if epoch == 0:
                found.add(FAIL, f"the first pass over loader {loader + 1} gives other samples, or another order")
            elif Counter(a) != Counter(b):
                found.add(FAIL, f"pass {epoch + 1} over loader {loader + 1} gives other samples (compared as sets)")
            else:
                reordered.append(f"loader {loader + 1}, pass {epoch + 1}")
    replay_checks(original, context.replay, fixed, found, level)
    if reordered:
        found.add(WARN, "known difference: the shuffle order changed in " + ", ".join(reordered[:6])
                        + (" and more" if len(reordered) > 6 else "") + ": the loader no longer draws a worker "
                        "seed from its generator every epoch; with that draw given back, the original gives the "
                        "changed program's outputs")
    elif not before:
        found.add(NOTE, "no pass over a DataLoader was seen")
    elif not found.failed:
        found.add(NOTE, "every pass over every loader gave the same samples in the same order")
    return found.result()
