"""The comparison of legacy-distributed-launch's fix (imported only by `torchlint verify`).

The bug is a crash at start-up, so the measure is whether the dashed command
line parses: it must fail before the fix and give `local_rank == 3` after
it, while the underscore command line gives the same namespace in both runs.
"""

from __future__ import annotations

from typing import List

from torchlint.verify.compare import Context, Findings, common_checks
from torchlint.verify.results import FAIL, NOTE, Finding, RunData

_SAME = ("underscore_parses", "underscore_local_rank", "underscore_epochs", "destinations")


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    del context
    found = Findings()
    keys = common_checks(original, fixed, found)
    needed = ("dashed_parses", "dashed_local_rank", *_SAME)
    if any(key not in keys for key in needed):
        found.add(FAIL, "the program must expose " + ", ".join(f"`{key}`" for key in needed))
        return found.result()
    if _int(original, "dashed_parses"):
        found.add(FAIL, "before the fix `--local-rank=3` parsed: the program no longer shows the crash")
    else:
        found.add(NOTE, "before the fix `--local-rank=3` stops the script ('unrecognized arguments')")
    if not _int(fixed, "dashed_parses") or _int(fixed, "dashed_local_rank") != 3:
        found.add(FAIL, f"after the fix `--local-rank=3` gives parsed={_int(fixed, 'dashed_parses')}, "
                        f"local_rank={_int(fixed, 'dashed_local_rank')} (expected parsed, 3)")
    else:
        found.add(NOTE, "after the fix `--local-rank=3` parses into `args.local_rank == 3`")
    same = True
    for key in _SAME:
        if str(original.values[key]) != str(fixed.values[key]):
            same = False
            found.add(FAIL, f"`{key}` differs: {original.values[key]} before the fix, {fixed.values[key]} after")
    if not _int(original, "underscore_parses") or _int(original, "underscore_local_rank") != 3:
        found.add(FAIL, "the underscore command line did not parse into `local_rank == 3`")
    if same:
        found.add(NOTE, f"`--local_rank=3` parses the same in both runs (destinations: {fixed.values['destinations']})")
    return found.result()


def _int(run: RunData, key: str) -> int:
    return int(run.values[key])
