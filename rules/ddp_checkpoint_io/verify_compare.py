"""The comparison of ddp-checkpoint-io's fix (imported only by `torchlint verify`).

The fix is meant to change one thing: a checkpoint saved on a GPU this
machine lacks becomes loadable, onto the CPU, with the values that were
saved.  The rule's probe tries each `torch.load` the program makes again,
with the same arguments, on a copy of what was loaded that says it was saved
on an absent GPU.  After the change every such load must succeed; the
original, with `map_location="cpu"` given to its loads as the fix gives it,
must produce the changed program's outputs and printed text.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Sequence

from torchlint.verify.compare import IDENTICAL, Context, Findings, replay_checks, standard_checks, summary
from torchlint.verify.results import FAIL, INTENDED, NOTE, UNALIGNED, Finding, RunData

PROBE = "checkpoint-loads"


def _loads(run: RunData) -> Sequence[Mapping[str, Any]]:
    record = run.probes.get(PROBE)
    return record.get("loads", []) if isinstance(record, dict) else []


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    found = Findings()
    plain = Findings()
    passed = standard_checks(original, fixed, plain, lambda key: IDENTICAL)
    same = not plain.failed and not any(f.severity == UNALIGNED for f in plain.result())
    if same:
        found = plain
    else:
        found.expect(original, fixed)
        replay_checks(original, context.replay, fixed, found, IDENTICAL)
    before, after = _loads(original), _loads(fixed)
    if not after:
        found.add(UNALIGNED, "the program loaded no checkpoint from a file while it ran: whether one saved on a "
                             "GPU this machine lacks now loads could not be observed")
        return found.result()
    failing = [load for load in after if load.get("relocates") is False]
    for load in failing:
        what = (f"`{load.get('file')}` still does not load" if not load.get("loaded") else
                f"`{load.get('file')}`, saved on {load.get('absent')}, still does not load onto the CPU")
        found.add(FAIL, f"after the change {what} ({load.get('error')})")
    refused = sum(1 for load in before if load.get("relocates") is False)
    if not failing:
        found.add(NOTE, f"each of the {len(after)} load(s) also loads a copy saved on {after[0].get('absent')} "
                        f"(absent here) onto the CPU with the saved values after the change; before it, "
                        f"{refused} of {len(before)} did not")
    if not same and not failing and not found.failed:
        found.add(INTENDED, "intended change: the program's own loads now give other results (onto the CPU); "
                            "the original, with `map_location=\"cpu\"` added to its loads, gives the changed "
                            "program's outputs and printed text (identical)")
    found.add(NOTE, summary(passed))
    return found.result()
