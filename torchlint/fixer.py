"""Apply fixes in passes, re-linting until nothing changes."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import List, Sequence, Set, Tuple

from torchlint.engine import LintConfig, lint_source, parse_module
from torchlint.model import Diagnostic, Edit

MAX_PASSES = 10


@dataclass(frozen=True)
class FixResult:
    """The fixed text and what happened on the way."""

    source: str
    applied: Tuple[Diagnostic, ...]
    remaining: Tuple[Diagnostic, ...]
    dropped: Tuple[Diagnostic, ...]
    converged: bool

    @property
    def changed(self) -> bool:
        """Whether any fix was applied."""
        return bool(self.applied)


def apply_edits(source: str, edits: Sequence[Edit]) -> str:
    """Apply non-overlapping edits (any order) to ``source``."""
    pieces: List[str] = []
    cursor = len(source)
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        pieces.append(source[edit.end : cursor])
        pieces.append(edit.text)
        cursor = edit.start
    pieces.append(source[:cursor])
    return "".join(reversed(pieces))


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


def _parses(source: str, path: str) -> bool:
    return not isinstance(parse_module(source, path), Diagnostic)


def _fix_key(diagnostic: Diagnostic) -> Tuple[str, str, Tuple[Edit, ...]]:
    assert diagnostic.fix is not None
    return (diagnostic.code, diagnostic.message, diagnostic.fix.edits)


def fix_text(
    source: str, path: str, config: LintConfig, *, unsafe: bool = False, max_passes: int = MAX_PASSES
) -> FixResult:
    """Fix ``source`` until no applicable fix is left (or ``max_passes``)."""
    applied: List[Diagnostic] = []
    dropped: List[Diagnostic] = []
    dropped_keys: Set[Tuple[str, str, Tuple[Edit, ...]]] = set()
    text = source
    diagnostics = lint_source(text, path, config)
    for _ in range(max_passes):
        candidates = [
            d for d in diagnostics if d.fixable(unsafe) and _fix_key(d) not in dropped_keys
        ]
        if not candidates:
            return FixResult(text, tuple(applied), tuple(diagnostics), tuple(dropped), True)
        chosen = select_fixes(candidates)
        candidate_text = apply_edits(text, _edits_of(chosen))
        if not _parses(candidate_text, path):
            # Find the culprits one by one, keeping every fix that parses.
            candidate_text, kept = text, []
            for diagnostic in chosen:
                trial = apply_edits(candidate_text, _edits_of([diagnostic]))
                if _parses(trial, path):
                    candidate_text = trial
                    kept.append(diagnostic)
                    break  # later fixes' offsets are stale; re-lint first
                dropped.append(diagnostic)
                dropped_keys.add(_fix_key(diagnostic))
            chosen = kept
        applied.extend(chosen)
        text = candidate_text
        diagnostics = lint_source(text, path, config)
    converged = not any(
        d.fixable(unsafe) and _fix_key(d) not in dropped_keys for d in diagnostics
    )
    return FixResult(text, tuple(applied), tuple(diagnostics), tuple(dropped), converged)
