"""A fix shown as a small line diff under its finding, as Ruff's ``full`` format does."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from torchlint.model import Edit, Fix, apply_edits
from torchlint.report.snippet import gutter, numbered
from torchlint.source.lines import line_index, split_lines
from torchlint.report.style import GREEN, RED, Style

WINDOW_LINES = 3
"""Lines around the edits that are diffed."""
CONTEXT_LINES = 1
"""Unchanged lines shown around each change."""

_Opcode = Tuple[str, int, int, int, int]


def render_fix_diff(source: str, fix: Fix, style: Style) -> List[str]:
    """The ``-``/``+`` lines of ``fix`` applied to ``source``; empty if it changes nothing."""
    window = _window(source, fix)
    if window is None:
        return []
    base, old = window
    new = apply_edits(old, [Edit(e.start - base, e.end - base, e.text) for e in fix.edits])
    if new == old:
        return []
    old_lines, new_lines = split_lines(old), split_lines(new)
    import difflib  # only when a diff is shown: not on every run's import path

    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    groups = list(matcher.get_grouped_opcodes(CONTEXT_LINES))
    offset = line_index(source).line_of(base) - 1
    width = len(str(max(1, offset + groups[-1][-1][4])))
    lines = [gutter(width, style)]
    for number, group in enumerate(groups):
        if number:
            lines.append(style.gutter(f"{' ' * width} ..."))
        lines.extend(_group_lines(group, old_lines, new_lines, offset, width, style))
    lines.append(gutter(width, style))
    return lines


def _window(source: str, fix: Fix) -> Optional[Tuple[int, str]]:
    """The whole lines around the fix's edits, with their start offset."""
    if not fix.edits:
        return None
    start, end = fix.span
    if not 0 <= start <= end <= len(source):
        return None
    index = line_index(source)
    first = max(1, index.line_of(start) - WINDOW_LINES)
    last = min(index.line_count, index.line_of(end) + WINDOW_LINES)
    base = index.line_start(first)
    return base, source[base : index.line_end(last)]


def _group_lines(
    group: Sequence[_Opcode],
    old: Sequence[str],
    new: Sequence[str],
    offset: int,
    width: int,
    style: Style,
) -> List[str]:
    """One diff hunk: context lines with new line numbers, deletions, insertions."""
    lines: List[str] = []
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            lines += [numbered(width, style, offset + j + 1, "|", new[j]) for j in range(j1, j2)]
            continue
        lines += [style.paint(numbered(width, Style(False), None, "-", old[i]), RED) for i in range(i1, i2)]
        lines += [
            style.paint(numbered(width, Style(False), offset + j + 1, "+", new[j]), GREEN)
            for j in range(j1, j2)
        ]
    return lines


def unified_diff(before: str, after: str, path: str) -> str:
    """A ``git diff``-style unified diff of one file."""
    import difflib  # only when a diff is shown

    lines = difflib.unified_diff(split_lines(before), split_lines(after), f"a/{path}", f"b/{path}")
    return "".join(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
                   for line in lines)
