"""The comparison of train-mode-not-restored's fix (imported only by `torchlint verify`).

The fix changes training on purpose: after an evaluation the model trains in
train mode again (dropout drops, batch norm updates its statistics).  The
rule's probe records the training flag of every module at each top-level
module call, and which calls a backward pass went through (training
forwards).  The verdict is "intended change" when

- the original ran a training forward with modules in eval mode that were in
  train mode at that module's first training forward (the bug), and the
  changed program never does;
- the flags differ only at training forwards, and only from eval to train
  (an evaluation still runs in eval mode);
- the original, replaying exactly those flags (the probe sets them before
  each call), gives the changed program's outputs and printed text: nothing
  else changed.

When the original never trains in eval mode, the two programs must simply
be equivalent.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence

from torchlint.verify.compare import Context, Findings, device_level, nothing_to_change, replay_checks
from torchlint.verify.results import FAIL, INTENDED, UNALIGNED, Finding, RunData

PROBE = "training-modes"


def eval_mode_training(record: Mapping[str, Any]) -> List[int]:
    """The calls that trained with some module of the called one in eval mode, though it
    was in train mode at that module's first training forward."""
    calls: Sequence[Mapping[str, Any]] = record.get("calls", ())
    subtrees: Mapping[str, Sequence[int]] = record.get("subtrees", {})
    first: Dict[int, str] = {}
    found = []
    for number, call in enumerate(calls):
        if not call.get("trained"):
            continue
        module, modes = int(call["module"]), str(call["modes"])
        members = [i for i in subtrees.get(str(module), [module]) if 0 <= i < len(modes)]
        if module not in first:
            first[module] = modes
            continue
        reference = first[module]
        if any(reference[i] == "1" and modes[i] == "0" for i in members if i < len(reference)):
            found.append(number)
    return found


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    found = Findings()
    level = device_level(context)
    before, after = original.probes.get(PROBE), fixed.probes.get(PROBE)
    if not isinstance(before, dict) or not isinstance(after, dict):
        found.add(UNALIGNED, "the modules' training modes were not observed")
        return found.result()
    bugged_before, bugged_after = eval_mode_training(before), eval_mode_training(after)
    if not bugged_before:
        if bugged_after:
            found.add(FAIL, f"after the change {len(bugged_after)} training forward(s) ran with modules in eval "
                            "mode; the original had none")
        return nothing_to_change(original, fixed, found, level,
                                 "the original never trained with a module left in eval mode")
    found.expect(original, fixed)
    problems = 0
    if bugged_after:
        problems += 1
        found.add(FAIL, f"after the change {len(bugged_after)} of the training forwards that ran in eval mode "
                        f"before ({len(bugged_before)}) still do: train mode was not restored where it is needed")
    calls_before, calls_after = before.get("calls", []), after.get("calls", [])
    if len(calls_before) != len(calls_after):
        problems += 1
        found.add(FAIL, f"the changed program calls its modules {len(calls_after)} times, the original "
                        f"{len(calls_before)}: more than the training mode changed")
    else:
        for number, (a, b) in enumerate(zip(calls_before, calls_after)):
            if a["modes"] == b["modes"]:
                continue
            if not b.get("trained"):
                problems += 1
                found.add(FAIL, f"a module call that no backward pass went through (an evaluation) ran in "
                                f"another mode after the change (call {number + 1})")
                break
            if any(x == "1" and y == "0" for x, y in zip(a["modes"], b["modes"])):
                problems += 1
                found.add(FAIL, f"after the change a module trained in eval mode that was in train mode "
                                f"before (call {number + 1})")
                break
    equal = replay_checks(original, context.replay, fixed, found, level)
    if not problems and equal:
        found.add(INTENDED, f"intended change: {len(bugged_before)} training forward(s) ran with modules in eval "
                            "mode before the change and in train mode after it; evaluations kept their mode, "
                            "and the original, replaying exactly that change of modes, gives the changed "
                            f"program's outputs and printed text ({level})")
    return found.result()
