"""The source excerpt under a finding: numbered lines and a ``^^^`` underline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from torchlint.model import Diagnostic
from torchlint.report.source import display, display_width
from torchlint.source.lines import LineIndex, line_index, strip_newline
from torchlint.report.style import BOLD, RED, Style

CONTEXT_LINES = 2


@dataclass(frozen=True)
class Snippet:
    """Rendered lines plus the gutter width the ``-->`` line must match."""

    width: int
    lines: Tuple[str, ...]


def gutter(width: int, style: Style, number: Optional[int] = None, mark: str = "|") -> str:
    """``12 |``-style gutter: a left-aligned line number (or blanks) and a mark."""
    label = "" if number is None else str(number)
    return style.gutter(f"{label:<{width}} {mark}")


def numbered(width: int, style: Style, number: Optional[int], mark: str, text: str) -> str:
    """A gutter followed by ``text`` (no trailing space when ``text`` is blank)."""
    shown = display(strip_newline(text)).rstrip()
    prefix = gutter(width, style, number, mark)
    return f"{prefix} {shown}" if shown else prefix


def render_snippet(source: str, diagnostic: Diagnostic, style: Style) -> Optional[Snippet]:
    """The excerpt for ``diagnostic``, or None when its line is not in ``source``."""
    index = line_index(source)
    line = diagnostic.start.line
    if not 1 <= line <= index.line_count:
        return None
    first, last = _context(index, line)
    width = len(str(last))
    lines = [gutter(width, style)]
    for number in range(first, last + 1):
        lines.append(numbered(width, style, number, "|", index.line_text(number)))
        if number == line:
            lines.append(_underline(index.line_text(line), diagnostic, width, style))
    if last != line:
        lines.append(gutter(width, style))
    return Snippet(width, tuple(lines))


def _context(index: LineIndex, line: int) -> Tuple[int, int]:
    """Up to CONTEXT_LINES around ``line``, blank lines at either edge dropped."""
    first = max(1, line - CONTEXT_LINES)
    while first < line and not index.line_text(first).strip():
        first += 1
    last = min(index.line_count, line + CONTEXT_LINES)
    while last > line and not index.line_text(last).strip():
        last -= 1
    return first, last


def _underline(text: str, diagnostic: Diagnostic, width: int, style: Style) -> str:
    """Carets under the reported range (to the end of the line if it goes on)."""
    start = diagnostic.start.column - 1
    same_line = diagnostic.end.line == diagnostic.start.line
    end = diagnostic.end.column - 1 if same_line else len(text)
    pad = display_width(text[:start]) + max(0, start - len(text))
    carets = max(1, display_width(text[start:end]))
    return f"{gutter(width, style)} {' ' * pad}{style.paint('^' * carets, BOLD, RED)}"
