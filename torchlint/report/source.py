"""Source text helpers shared by every format: offsets, lines, display."""

from __future__ import annotations

import bisect
import re
import unicodedata
from functools import lru_cache
from typing import List, Mapping, Optional, Tuple

from torchlint.model import Diagnostic, Edit, Position

_NEWLINE = re.compile(r"\r\n|\r|\n")
TAB_WIDTH = 4


class LineIndex:
    """Lines of one source text, split on ``\\r\\n``, ``\\r`` or ``\\n`` (like Python)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.starts = [0] + [m.end() for m in _NEWLINE.finditer(source)]

    @property
    def line_count(self) -> int:
        """How many lines there are (text after the last newline counts as one)."""
        return len(self.starts)

    def line_of(self, offset: int) -> int:
        """The 1-based line holding character ``offset``."""
        return bisect.bisect_right(self.starts, max(0, offset))

    def position(self, offset: int) -> Position:
        """The 1-based line and column of a character offset (clamped to the text)."""
        offset = min(max(0, offset), len(self.source))
        line = self.line_of(offset)
        return Position(line, offset - self.starts[line - 1] + 1)

    def line_start(self, line: int) -> int:
        """Offset of the first character of ``line``."""
        return self.starts[line - 1]

    def line_end(self, line: int) -> int:
        """Offset just past ``line``'s terminator."""
        return self.starts[line] if line < len(self.starts) else len(self.source)

    def line_text(self, line: int) -> str:
        """The text of ``line`` without its terminator."""
        return strip_newline(self.source[self.line_start(line) : self.line_end(line)])


@lru_cache(maxsize=64)
def line_index(source: str) -> LineIndex:
    """A (cached) :class:`LineIndex` for ``source``."""
    return LineIndex(source)


def strip_newline(line: str) -> str:
    """``line`` without one trailing line terminator."""
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith(("\r", "\n")):
        return line[:-1]
    return line


def split_lines(text: str) -> List[str]:
    """``text`` split into lines that keep their terminators."""
    index = LineIndex(text)
    lines = [text[index.line_start(n) : index.line_end(n)] for n in range(1, index.line_count + 1)]
    return [line for line in lines if line]


def edit_range(source: Optional[str], edit: Edit) -> Optional[Tuple[Position, Position]]:
    """Where an edit starts and ends, or None when the source is unknown."""
    if source is None:
        return None
    index = line_index(source)
    return index.position(edit.start), index.position(edit.end)


def file_range(diagnostic: Diagnostic, sources: Mapping[str, str]) -> Tuple[Position, Position]:
    """Where a finding is in its file.  A notebook finding's positions count
    lines in its cell; here they become the lines (and columns) of the
    ``.ipynb`` JSON text that hold those characters of the cell's
    ``source``, which is what GitHub and code scanning show."""
    if diagnostic.cell is None:
        return diagnostic.start, diagnostic.end
    from torchlint.notebook_json import cell_text

    text = sources.get(diagnostic.path)
    located = cell_text(text, diagnostic.cell) if text is not None else None
    if located is None:
        return diagnostic.start, diagnostic.end
    start = Position(*located.position(diagnostic.start.line, diagnostic.start.column))
    end = Position(*located.position(diagnostic.end.line, diagnostic.end.column))
    return start, max(start, end)


def location_label(diagnostic: Diagnostic) -> str:
    """``path:line:col``; in a notebook ``path:cell N, line L, column C``
    (the line counted in the cell, as the notebook shows it)."""
    if diagnostic.cell is not None:
        return f"{printable(diagnostic.path)}:{cell_position(diagnostic)}"
    return f"{printable(diagnostic.path)}:{diagnostic.start.line}:{diagnostic.start.column}"


def cell_position(diagnostic: Diagnostic, column: bool = True) -> str:
    """``cell N, line L, column C`` of a notebook finding (without the column: ``cell N, line L``)."""
    where = f"cell {diagnostic.cell}, line {diagnostic.start.line}"
    return f"{where}, column {diagnostic.start.column}" if column else where


def printable(text: str) -> str:
    """``text`` with control characters (but tabs) shown as symbols, never sent raw."""
    return "".join(_printable_char(ch) for ch in text)


def _printable_char(ch: str) -> str:
    code = ord(ch)
    if code < 0x20 and ch != "\t":
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return ch


def display(text: str) -> str:
    """A source line as shown: tabs expanded to spaces, control characters as symbols."""
    return printable(text).replace("\t", " " * TAB_WIDTH)


def display_width(text: str) -> int:
    """Terminal cells taken by ``display(text)`` (wide characters take two)."""
    return sum(_cell_width(ch) for ch in display(text))


def _cell_width(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
