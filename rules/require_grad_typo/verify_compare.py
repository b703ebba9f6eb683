"""The comparison of require-grad-typo's fix (imported only by `torchlint verify`).

The fix changes training on purpose: `p.require_grad = False` set a plain
attribute and froze nothing; `p.requires_grad = False` freezes.  The rule's
probe counts the assignments to `require_grad`, and in a replay makes each of
them set the autograd flag, as the fixed line does.  The verdict is
"intended change" when the original made such assignments, the changed
program makes none, and the original replaying the fix gives the changed
program's outputs and printed text; an original without the typo at run
time must be equivalent.
"""

from __future__ import annotations

from typing import List

from torchlint.verify.compare import Context, Findings, device_level, nothing_to_change, replay_checks
from torchlint.verify.results import FAIL, INTENDED, UNALIGNED, Finding, RunData

PROBE = "require-grad"


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    found = Findings()
    level = device_level(context)
    before, after = original.probes.get(PROBE), fixed.probes.get(PROBE)
    if not isinstance(before, dict) or not isinstance(after, dict):
        found.add(UNALIGNED, "the assignments to `require_grad` were not observed")
        return found.result()
    assigned, left = int(before.get("assigned", 0)), int(after.get("assigned", 0))
    if not assigned:
        return nothing_to_change(original, fixed, found, level,
                                 "the original never assigned `require_grad` while it ran")
    found.expect(original, fixed)
    if left:
        found.add(FAIL, f"the changed program still assigns `require_grad` {left} time(s)")
    equal = replay_checks(original, context.replay, fixed, found, level)
    if equal and not left:
        found.add(INTENDED, f"intended change: the original's {assigned} assignment(s) to `require_grad` set a "
                            "plain attribute; after the fix they set the autograd flag, and the original, making "
                            "each of them set the flag, gives the changed program's outputs and printed text "
                            f"({level})")
    return found.result()
