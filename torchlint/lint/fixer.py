"""Apply fixes in passes, re-linting until nothing changes.

Every pass applies all non-overlapping fixes at once, checks the result once
(it parses, it parses on the target Python, and no byte outside the edits
changed) and lints the module it parsed, so a pass costs about one parse and
one lint however many fixes it holds.  When the check fails, the culprits are
found by halving the set of fixes, not one fix at a time.
"""

from __future__ import annotations

import bisect
import enum
from collections import Counter
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from torchlint.lint.engine import LintConfig, lint_module, lint_source, parse_module
from torchlint.model import Diagnostic, Edit, apply_edits as apply_edits
from torchlint.source.target import PythonVersion, Violation, fstring_violations, new_violations

MAX_PASSES = 10


class DropReason(enum.Enum):
    """Why a fix was not applied."""

    UNPARSABLE = "would leave the file unparsable"
    TARGET_SYNTAX = "would not parse on the target Python"
    OUTSIDE_EDITS = "would change text outside its edits"
    NOTEBOOK_CELL = "would break a notebook cell"


@dataclass(frozen=True)
class DroppedFix:
    """A fix that was left out, and why."""

    diagnostic: Diagnostic
    reason: DropReason
    detail: str = ""

    @property
    def note(self) -> str:
        """One line for the user, e.g. for stderr."""
        detail = f" ({self.detail})" if self.detail else ""
        return f"the fix for {self.diagnostic.code} {self.reason.value}{detail}; it was not applied"


@dataclass(frozen=True)
class FixResult:
    """The fixed text and what happened on the way."""

    source: str
    applied: Tuple[Diagnostic, ...]
    remaining: Tuple[Diagnostic, ...]
    dropped: Tuple[Diagnostic, ...]
    converged: bool
    drops: Tuple[DroppedFix, ...] = ()
    first_fixable: int = 0
    """How many findings were fixable before any fix was applied; fixes
    beyond that are for findings that earlier fixes brought about."""
    first_found: int = 0
    """How many findings the text had before any fix was applied."""

    @property
    def changed(self) -> bool:
        """Whether any fix was applied."""
        return bool(self.applied)


def _overlaps(edit: Edit, other: Edit) -> bool:
    """Whether two different edits cannot both be applied: their ranges
    overlap, they insert at the same point, or one inserts inside the other."""
    if edit == other:
        return False
    if edit.start < other.end and other.start < edit.end:
        return True
    if edit.start == edit.end == other.start == other.end:
        return True
    if edit.start == edit.end and other.start < edit.start < other.end:
        return True
    return other.start == other.end and edit.start < other.start < edit.end


class _TakenEdits:
    """Edits already chosen for a pass, sorted, so a new edit is checked
    against its neighbours only (n log n for n edits, not n squared)."""

    def __init__(self) -> None:
        self._edits: List[Edit] = []

    def clashes(self, edit: Edit) -> bool:
        """Whether ``edit`` overlaps one of the chosen edits."""
        # Chosen edits never overlap each other, so only those starting at
        # or before ``edit.end`` (and the one just before it) can clash.
        index = max(bisect.bisect_left(self._edits, edit) - 1, 0)
        while index < len(self._edits) and self._edits[index].start <= edit.end:
            if _overlaps(edit, self._edits[index]):
                return True
            index += 1
        return False

    def add(self, edit: Edit) -> None:
        index = bisect.bisect_left(self._edits, edit)
        if index == len(self._edits) or self._edits[index] != edit:
            self._edits.insert(index, edit)


def select_fixes(diagnostics: Sequence[Diagnostic]) -> List[Diagnostic]:
    """The diagnostics whose fixes can go in one pass without overlapping."""
    chosen: List[Diagnostic] = []
    taken = _TakenEdits()
    for diagnostic in sorted(diagnostics, key=lambda d: (d.fix.span if d.fix else (0, 0), d.sort_key)):
        assert diagnostic.fix is not None
        if any(taken.clashes(edit) for edit in diagnostic.fix.edits):
            continue
        chosen.append(diagnostic)
        for edit in diagnostic.fix.edits:
            taken.add(edit)
    return chosen


def _edits_of(diagnostics: Sequence[Diagnostic]) -> List[Edit]:
    """The edits of several fixes, each shared edit (an import) once."""
    return list(dict.fromkeys(edit for d in diagnostics if d.fix is not None for edit in d.fix.edits))


def unchanged_outside(before: str, after: str, edits: Sequence[Edit]) -> bool:
    """Whether ``after`` is ``before`` with exactly ``edits`` applied: every
    character outside the edits' ranges is where it was (edits that overlap
    fail)."""
    cursor = position = 0
    unique = list(dict.fromkeys(edits))
    # In the order the texts land (:func:`~torchlint.model.apply_edits`): by
    # place, and of two insertions at one place, the later-listed one first.
    order = sorted(range(len(unique)), key=lambda i: (unique[i].start, unique[i].end, -i))
    for edit in (unique[i] for i in order):
        if edit.start < cursor:
            return False
        gap = edit.start - cursor
        if after[position : position + gap] != before[cursor : edit.start]:
            return False
        position += gap
        if after[position : position + len(edit.text)] != edit.text:
            return False
        position += len(edit.text)
        cursor = edit.end
    return after[position:] == before[cursor:]


@dataclass(frozen=True)
class _Refusal:
    reason: DropReason
    detail: str = ""


class _Checker:
    """Decides whether a fixed text may replace the original."""

    def __init__(self, source: str, path: str, target: PythonVersion) -> None:
        self._source = source
        self._path = path
        self._target = target
        self._before: "Optional[Counter[Violation]]" = None

    def check(self, text: str, original: str, edits: Sequence[Edit]) -> "Union[cst.Module, _Refusal]":
        """The parsed fixed text, or why it is refused."""
        if not unchanged_outside(original, text, edits):
            return _Refusal(DropReason.OUTSIDE_EDITS)
        module = parse_module(text, self._path)
        if isinstance(module, Diagnostic):
            return _Refusal(DropReason.UNPARSABLE)
        found = fstring_violations(module, text, self._target)
        if found:
            introduced = new_violations(self._baseline(), found)
            if introduced:
                detail = f"target-version {self._target}: {introduced[0].reason}"
                return _Refusal(DropReason.TARGET_SYNTAX, detail)
        return module

    def _baseline(self) -> "Counter[Violation]":
        """What the original text already had: fixes are not blamed for it."""
        if self._before is None:
            original = parse_module(self._source, self._path)
            self._before = (
                Counter() if isinstance(original, Diagnostic)
                else fstring_violations(original, self._source, self._target)
            )
        return self._before


def _fix_key(diagnostic: Diagnostic) -> Tuple[str, str, Tuple[Edit, ...]]:
    assert diagnostic.fix is not None
    return (diagnostic.code, diagnostic.message, diagnostic.fix.edits)


Accept = Callable[[str, Sequence[Diagnostic]], Optional[str]]
"""A caller's own check of a pass (a notebook's: each cell on its own): given
the fixed text and the fixes in it, None to accept, else why not."""


class _Pass:
    """One pass: the largest set of the chosen fixes that passes the check,
    found by halving (a few parses per bad fix, not one per fix)."""

    def __init__(self, text: str, checker: _Checker, accept: Optional[Accept] = None) -> None:
        self.text = text
        self.module: Optional[cst.Module] = None
        self.accepted: List[Diagnostic] = []
        self.drops: List[DroppedFix] = []
        self._original = text
        self._checker = checker
        self._accept = accept

    def attempt(self, group: Sequence[Diagnostic]) -> None:
        edits = _edits_of([*self.accepted, *group])
        trial = apply_edits(self._original, edits)
        verdict = self._checker.check(trial, self._original, edits)
        if isinstance(verdict, cst.Module) and self._accept is not None:
            refused = self._accept(trial, [*self.accepted, *group])
            if refused is not None:
                verdict = _Refusal(DropReason.NOTEBOOK_CELL, refused)
        if isinstance(verdict, cst.Module):
            self.accepted.extend(group)
            self.text, self.module = trial, verdict
        elif len(group) == 1:
            self.drops.append(DroppedFix(group[0], verdict.reason, verdict.detail))
        else:
            middle = len(group) // 2
            self.attempt(group[:middle])
            self.attempt(group[middle:])


def fix_text(
    source: str, path: str, config: LintConfig, *, unsafe: bool = False, max_passes: int = MAX_PASSES,
    accept: Optional[Accept] = None,
) -> FixResult:
    """Fix ``source`` until no applicable fix is left (or ``max_passes``);
    ``accept`` adds the caller's own check of each pass."""
    applied: List[Diagnostic] = []
    drops: List[DroppedFix] = []
    dropped_keys: Set[Tuple[str, str, Tuple[Edit, ...]]] = set()
    checker = _Checker(source, path, config.target_version)
    text = source
    diagnostics = lint_source(text, path, config)
    first_fixable = sum(1 for d in diagnostics if d.fixable(unsafe))
    first_found = len(diagnostics)

    def result(converged: bool) -> FixResult:
        dropped = tuple(drop.diagnostic for drop in drops)
        return FixResult(text, tuple(applied), tuple(diagnostics), dropped, converged, tuple(drops), first_fixable,
                         first_found)

    for _ in range(max_passes):
        candidates = [
            d for d in diagnostics if d.fixable(unsafe) and _fix_key(d) not in dropped_keys
        ]
        if not candidates:
            return result(True)
        one_pass = _Pass(text, checker, accept)
        one_pass.attempt(select_fixes(candidates))
        drops.extend(one_pass.drops)
        dropped_keys.update(_fix_key(drop.diagnostic) for drop in one_pass.drops)
        if one_pass.module is None:
            continue  # nothing applied: the same findings, minus the dropped fixes
        applied.extend(one_pass.accepted)
        text = one_pass.text
        diagnostics = lint_module(one_pass.module, text, path, config) if config.rules else []
    converged = not any(
        d.fixable(unsafe) and _fix_key(d) not in dropped_keys for d in diagnostics
    )
    return result(converged)
