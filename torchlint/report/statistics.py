"""``--statistics``: how many findings each rule produced, most frequent first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Sequence

from torchlint.model import Diagnostic
from torchlint.report.context import ReportContext
from torchlint.report.json import dumps
from torchlint.report.style import BOLD, Style
from torchlint.report.summary import join_lines, summary_lines


@dataclass(frozen=True)
class Statistic:
    """One rule's count; ``fixable`` when ``--fix`` would repair every one of
    them, ``fixable_count`` how many it would repair (the footer's unit)."""

    code: str
    name: str
    count: int
    fixable: bool
    fixable_count: int
    unsafe_fix_count: int = 0
    """Findings whose fix is unsafe and not applied without ``--unsafe-fixes``."""


def statistics(diagnostics: Sequence[Diagnostic], unsafe_fixes: bool) -> List[Statistic]:
    """Per-code counts, sorted by count (descending) then code."""
    groups: Dict[str, List[Diagnostic]] = {}
    for diagnostic in diagnostics:
        groups.setdefault(diagnostic.code, []).append(diagnostic)
    rows = []
    for code, found in groups.items():
        fixable = sum(1 for d in found if d.fixable(unsafe_fixes))
        hidden = sum(1 for d in found if d.fix is not None and not d.fixable(unsafe_fixes))
        rows.append(Statistic(code, found[0].name, len(found), fixable == len(found), fixable, hidden))
    return sorted(rows, key=lambda s: (-s.count, s.code))


def _partly(row: Statistic) -> str:
    """`` (N of M fixable)`` when only some findings of a rule have a fix
    that ``--fix`` applies, and how many more ``--unsafe-fixes`` would fix."""
    notes = []
    if 0 < row.fixable_count < row.count:
        notes.append(f"{row.fixable_count} of {row.count} fixable")
    if row.unsafe_fix_count:
        notes.append(f"{row.unsafe_fix_count} with `--unsafe-fixes`")
    return f" ({'; '.join(notes)})" if notes else ""


def render_statistics(
    diagnostics: Sequence[Diagnostic], context: ReportContext, fmt: str = "full"
) -> str:
    """``count<TAB>CODE<TAB>[*] name`` lines then the summary; a JSON array for ``fmt="json"``."""
    rows = statistics(diagnostics, context.unsafe_fixes)
    if fmt == "json":
        return dumps([vars(row) for row in rows])
    if not rows:
        return ""
    style = Style(context.color)
    count_width = max(len(str(row.count)) for row in rows)
    code_width = max(len(row.code) for row in rows)
    lines = [
        f"{style.paint(f'{row.count:>{count_width}}', BOLD)}\t"
        f"{style.code(f'{row.code:<{code_width}}')}\t"
        f"{style.fix_marker(row.fixable)} {row.name}{_partly(row)}"
        for row in rows
    ]
    return join_lines([*lines, *summary_lines(diagnostics, context, style)])
