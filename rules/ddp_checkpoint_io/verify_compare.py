"""The comparison of ddp-checkpoint-io's fix (imported only by `torchlint verify`).

The fix is meant to change one thing: a checkpoint saved on a GPU this
machine lacks becomes loadable, onto the CPU, with the values that were
saved.
"""

from __future__ import annotations

from typing import List

from torchlint.verify.compare import Context, Findings, common_checks
from torchlint.verify.results import FAIL, NOTE, Finding, RunData

_NEEDED = ("loaded", "matches_saved", "devices", "absent_device")


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    del context
    found = Findings()
    keys = common_checks(original, fixed, found)
    if any(key not in keys for key in _NEEDED):
        found.add(FAIL, "the program must expose " + ", ".join(f"`{key}`" for key in _NEEDED))
        return found.result()
    absent = fixed.values["absent_device"]
    if not fixed.values["loaded"]:
        found.add(FAIL, f"the fixed program could not load a checkpoint saved on {absent} "
                        f"({fixed.values.get('error') or 'no error recorded'})")
    elif not fixed.values["matches_saved"]:
        found.add(FAIL, "the fixed program loaded values that differ from the ones saved")
    elif fixed.values["devices"] != "cpu":
        found.add(FAIL, f"the fixed program loaded onto {fixed.values['devices']}, not the CPU")
    else:
        found.add(NOTE, f"the fixed program loaded the checkpoint saved on {absent} onto the CPU, "
                        "every tensor equal to the saved one")
    if original.values["loaded"]:
        if not original.values["matches_saved"]:
            found.add(FAIL, "the original program loaded values that differ from the ones saved")
        else:
            found.add(NOTE, "the original program could load it too (the saving device exists here)")
    else:
        found.add(NOTE, f"the original program could not load it: {original.values.get('error') or 'error'} "
                        f"(no {absent} on this machine), as the rule says")
    return found.result()
