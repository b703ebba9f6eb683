"""The comparison of legacy-distributed-launch's fix (imported only by `torchlint verify`).

The bug is a crash at start-up under torch >= 2.0's launcher, which passes
`--local-rank=N`.  The rule's probe keeps the parsers the program parses with
and records where each spelling of the local-rank option leads.  The verdict
is "intended change" when the original rejected the dashed spelling, the
changed program sends it to the destination the underscore spelling had
(which still leads there), and the original, with the dashed spelling added
to its option as the fix adds it, gives the changed program's outputs and
printed text.  An original that already accepted it must be equivalent.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Sequence

from torchlint.verify.compare import IDENTICAL, Context, Findings, nothing_to_change, replay_checks
from torchlint.verify.results import FAIL, INTENDED, UNALIGNED, Finding, RunData

PROBE = "argument-parsers"
DASHED, UNDERSCORE = "--local-rank", "--local_rank"


def _parsers(run: RunData) -> Sequence[Mapping[str, Any]]:
    record = run.probes.get(PROBE)
    return record.get("parsers", []) if isinstance(record, dict) else []


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    found = Findings()
    before, after = _parsers(original), _parsers(fixed)
    rejected = [p for p in before if p.get(DASHED) is None]
    if not before:
        found.add(UNALIGNED, "no argument parser with a local-rank option parsed a command line while the "
                             "program ran: whether the launcher's `--local-rank=N` is accepted could not be observed")
    if not before or not rejected:
        return nothing_to_change(original, fixed, found, IDENTICAL,
                                 "the original accepted `--local-rank` already" if before else "no parser was seen")
    found.expect(original, fixed)
    problems = 0
    if len(after) != len(before):
        problems += 1
        found.add(FAIL, f"{len(after)} parser(s) with a local-rank option after the change, {len(before)} before")
    for number, (a, b) in enumerate(zip(before, after), 1):
        meant = a.get(UNDERSCORE)
        if b.get(UNDERSCORE) != meant:
            problems += 1
            found.add(FAIL, f"parser {number}: `{UNDERSCORE}=N` sets `{b.get(UNDERSCORE)}` after the change, "
                            f"`{meant}` before: the old launcher's spelling broke")
        how = a.get(UNDERSCORE + " how")
        for spelling in (DASHED, UNDERSCORE):
            if b.get(spelling) is not None and how is not None and b.get(spelling + " how") != how:
                problems += 1
                found.add(FAIL, f"parser {number}: `{spelling}=N` is read as {b.get(spelling + ' how')} after the "
                                f"change; `{UNDERSCORE}` was read as {how}")
        if b.get(DASHED) is None:
            problems += 1
            found.add(FAIL, f"parser {number}: `{DASHED}=N` is still rejected after the change")
        elif b.get(DASHED) != meant:
            problems += 1
            found.add(FAIL, f"parser {number}: `{DASHED}=N` sets `{b.get(DASHED)}` after the change, not "
                            f"`{meant}` as `{UNDERSCORE}` did")
    equal = replay_checks(original, context.replay, fixed, found, IDENTICAL)
    if not problems and equal:
        found.add(INTENDED, f"intended change: `{DASHED}=N` (torch >= 2.0's launcher) was rejected before the "
                            f"change and sets `{before[0].get(UNDERSCORE)}` after it, as `{UNDERSCORE}=N` still "
                            "does; with the dashed spelling added in the original, its outputs and printed text "
                            "are the changed program's (identical)")
    return found.result()
