"""The comparison of clip-before-unscale's fix (imported only by `torchlint verify`).

The fix changes training on purpose: the clip sees the true gradients, not
gradients still multiplied by the loss scale.  The rule's probe records, at
each clip, whether an enabled scaler had scaled the loss without unscaling
the optimizer that owns the clipped parameters.  The verdict is "intended
change" when the original clipped scaled gradients, the changed program
never does, and the original, unscaling before each such clip as the fix
does, gives the changed program's outputs and printed text.  An original
that never clips scaled gradients (a scaler disabled, as a CUDA scaler is on
the CPU) must be equivalent.
"""

from __future__ import annotations

from typing import List

from torchlint.verify.compare import Context, Findings, device_level, nothing_to_change, replay_checks
from torchlint.verify.results import FAIL, INTENDED, UNALIGNED, Finding, RunData

PROBE = "clipping"


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    found = Findings()
    level = device_level(context)
    before, after = original.probes.get(PROBE), fixed.probes.get(PROBE)
    if not isinstance(before, dict) or not isinstance(after, dict):
        found.add(UNALIGNED, "the gradient clipping was not observed")
        return found.result()
    scaled_before, scaled_after = int(before.get("scaled", 0)), int(after.get("scaled", 0))
    if not scaled_before:
        why = ("it clipped no gradients" if not before.get("clips") else
               "no enabled gradient scaler had scaled them (a CUDA scaler disables itself on the CPU)")
        return nothing_to_change(original, fixed, found, level, f"the original never clipped scaled gradients ({why})")
    found.expect(original, fixed)
    if scaled_after:
        found.add(FAIL, f"after the change {scaled_after} of {after.get('clips')} clip(s) still saw gradients "
                        "multiplied by the loss scale")
    if int(after.get("clips", 0)) != int(before.get("clips", 0)):
        found.add(FAIL, f"the changed program clips {after.get('clips')} time(s), the original "
                        f"{before.get('clips')}")
    equal = replay_checks(original, context.replay, fixed, found, level)
    if equal and not scaled_after and int(after.get("clips", 0)) == int(before.get("clips", 0)):
        found.add(INTENDED, f"intended change: {scaled_before} clip(s) measured gradients still multiplied by "
                            "the loss scale before the change and the true gradients after it; the original, "
                            "unscaling before each of those clips, gives the changed program's outputs and "
                            f"printed text ({level})")
    return found.result()
