"""The verify corpus (tests/verify_corpus/): correct and broken changes to user-shaped scripts.

Each change runs through `torchlint verify` the way a user would run it
(``verify SCRIPT --against CHANGED --rules CODE``, or torchlint's own fix of
the rule).  What must hold (issue 24):

- no correct change is "not equivalent" (nor an error);
- at least 98% of broken changes are flagged: "not equivalent", a random
  stream the contract does not expect, an error, or "inconclusive" with its
  reason;
- after every run, the script's folder is byte-identical (content, mode,
  modification time), and no process a run started is left.

The default run checks the ``quick`` subset; ``pytest -m slow`` the whole
corpus, printing the figures.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import pytest

with warnings.catch_warnings():  # torch warns at import when NumPy is missing
    warnings.simplefilter("ignore")
    pytest.importorskip("torch")

from torchlint.ruleapi.registry import by_code_or_name  # noqa: E402
from torchlint.lint.settings import Settings  # noqa: E402
from torchlint.verify import sandbox  # noqa: E402
from torchlint.verify.results import (  # noqa: E402
    EQUIVALENT,
    ERROR,
    INCONCLUSIVE,
    INTENDED_CHANGE,
    NOT_EQUIVALENT,
    RANDOM_STREAM,
    UNALIGNED,
    CaseResult,
)
from torchlint.verify.session import Case, Session, VerifyOptions, plan_pair, plan_script  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent / "verify_corpus"))
from manifest import BROKEN, CHANGES, CORRECT, FILES, HERE, Change  # noqa: E402

Snapshot = Dict[str, Tuple[str, int, int]]


def snapshot(folder: Path) -> Snapshot:
    """Every entry under ``folder``: its content's hash, mode and modification time."""
    found = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        found[str(path.relative_to(folder))] = (digest, info.st_mode, info.st_mtime_ns)
    return found


def leftover_processes(session: Session) -> List[int]:
    """Processes below this one other than verify's helpers (none of which may have children),
    and any process working in the session's temporary folder."""
    helpers = {pid for pid in sandbox.descendants(os.getpid()) if _is_helper(pid)}
    left = [pid for pid in sandbox.descendants(os.getpid()) if pid not in helpers and not sandbox._zombie(pid)]
    workdir = str(session.workdir)
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if name.isdigit():
            try:
                cwd = os.readlink(f"/proc/{name}/cwd")
            except OSError:
                continue
            if cwd.startswith(workdir) and int(name) not in left:
                left.append(int(name))
    return left


def _is_helper(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return b"harness.py\x00--serve" in handle.read()
    except OSError:
        return False


def _case(change: Change, folder: Path, scratch: Path) -> Case:
    script = folder / change.script
    rule = by_code_or_name(change.rule) if change.rule else None
    if change.fix:
        assert rule is not None
        planned = plan_script(script, [rule], Settings())
        assert planned, f"{change.id}: torchlint's {change.rule} fix does not change {change.script}"
        return planned[0]
    changed = scratch / f"{change.id}.py"
    changed.write_text(change.changed(script.read_text()))
    (case,) = plan_pair(script, changed, [rule] if rule is not None else [])
    return case


def run_corpus(changes: Sequence[Change], root: Path) -> List[Tuple[Change, CaseResult]]:
    """Run ``changes``, one folder per script; check the folders and processes after every run."""
    by_script: Dict[str, List[Change]] = {}
    for change in changes:
        by_script.setdefault(change.script, []).append(change)
    outcomes: List[Tuple[Change, CaseResult]] = []
    problems: List[str] = []
    with Session(VerifyOptions(quick=True, timing=False, timeout=120)) as session:
        original_done = session._done
        watched: Dict[str, Tuple[Path, Snapshot]] = {}

        def checked_done(case: Case, directory: Path) -> None:
            original_done(case, directory)
            if case.script is not None:
                folder, before = watched[str(case.script.parent)]
                if snapshot(folder) != before:
                    problems.append(f"{case.target}: the user's folder changed after a run ({directory.name})")

        session._done = checked_done  # type: ignore[method-assign]
        for script, group in by_script.items():
            folder = root / Path(script).stem
            folder.mkdir()
            shutil.copy2(HERE / script, folder / script)
            for name, make in FILES.get(script, {}).items():
                make(folder / name)
            scratch = root / f"{Path(script).stem}-changes"
            scratch.mkdir()
            watched[str(folder.resolve())] = (folder, snapshot(folder))
            cases = [_case(change, folder, scratch) for change in group]
            outcomes += list(zip(group, session.run_cases(cases)))
            left = leftover_processes(session)
            if left:
                problems.append(f"{script}: processes left after its runs: {left}")
    assert not problems, "\n".join(problems)
    return outcomes


def flagged(result: CaseResult) -> bool:
    """A broken change was caught: not passed as equivalent or as the promised change."""
    if result.status == INCONCLUSIVE:
        return any(f.severity == UNALIGNED for f in result.findings)  # with its reason
    return result.failed or result.errored


def figures(outcomes: Sequence[Tuple[Change, CaseResult]]) -> str:
    correct = [result for change, result in outcomes if change.kind == CORRECT]
    broken = [result for change, result in outcomes if change.kind == BROKEN]
    caught = sum(flagged(result) for result in broken)
    wrongly = sum(result.status in (NOT_EQUIVALENT, ERROR) or result.failed for result in correct)
    lines = [
        f"corpus: {len(correct)} correct and {len(broken)} broken changes "
        f"({len({change.script for change, _ in outcomes})} scripts, "
        f"{len({change.rule or '-' for change, _ in outcomes})} contracts)",
        f"broken flagged: {caught}/{len(broken)} ({100 * caught / max(len(broken), 1):.1f}%): "
        + ", ".join(f"{status} {count}" for status, count in sorted(Counter(r.status for r in broken).items())),
        f"correct not failed: {len(correct) - wrongly}/{len(correct)} "
        f"({100 * (len(correct) - wrongly) / max(len(correct), 1):.1f}%): "
        + ", ".join(f"{status} {count}" for status, count in sorted(Counter(r.status for r in correct).items())),
    ]
    return "\n".join(lines)


def _report(outcomes: Sequence[Tuple[Change, CaseResult]]) -> str:
    rows = []
    for change, result in outcomes:
        bad = (change.kind == BROKEN and not flagged(result)) or (
            change.kind == CORRECT and (result.failed or result.errored))
        if bad:
            text = "\n      ".join(f"{f.severity}: {f.message[:300]}" for f in result.findings[:6])
            rows.append(f"  {change.id} ({change.kind}, {change.rule or 'strict'}): {result.status}\n      {text}")
    return "\n".join(rows)


def _judge(outcomes: Sequence[Tuple[Change, CaseResult]], threshold: float) -> None:
    print("\n" + figures(outcomes))
    correct = [(c, r) for c, r in outcomes if c.kind == CORRECT]
    broken = [(c, r) for c, r in outcomes if c.kind == BROKEN]
    assert all(not (r.failed or r.errored) for _, r in correct), _report(outcomes)
    assert all(r.status in (EQUIVALENT, INTENDED_CHANGE, RANDOM_STREAM, INCONCLUSIVE) for _, r in correct)
    caught = sum(flagged(r) for _, r in broken)
    assert caught >= threshold * len(broken), _report(outcomes)


def test_the_manifest_holds_enough_of_each_kind_and_every_edit_applies():
    kinds = Counter(change.kind for change in CHANGES)
    assert kinds[CORRECT] >= 60 and kinds[BROKEN] >= 60, kinds
    assert len({change.id for change in CHANGES}) == len(CHANGES)
    for change in CHANGES:
        source = (HERE / change.script).read_text()
        assert "torchlint_outputs" not in source, change.script  # verify must find what to compare
        if not change.fix:
            assert change.changed(source) != source, change.id


def test_the_quick_subset(tmp_path):
    subset = [change for change in CHANGES if change.quick]
    assert {change.kind for change in subset} == {CORRECT, BROKEN}
    outcomes = run_corpus(subset, tmp_path)
    _judge(outcomes, threshold=1.0)


@pytest.mark.slow  # the whole corpus: a few minutes on two cores
def test_the_whole_corpus(tmp_path):
    outcomes = run_corpus(CHANGES, tmp_path)
    _judge(outcomes, threshold=0.98)
