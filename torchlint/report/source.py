"""Source text helpers shared by every format: offsets, lines, display."""

from __future__ import annotations

import bisect
import io
import re
import tokenize
import unicodedata
from functools import lru_cache
from typing import List, Mapping, Optional, Sequence, Tuple

from torchlint.model import Diagnostic, Edit, Position, apply_edits

_NEWLINE = re.compile(r"\r\n|\r|\n")
_WORD = re.compile(r"\w")
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


@lru_cache(maxsize=16)
def _token_bounds(source: str) -> Optional[Tuple[Tuple[int, int], ...]]:
    """The (start, end) offsets of every token of ``source`` but
    whitespace-only ones, in order; None when it does not tokenize."""
    index = line_index(source)
    bounds: List[Tuple[int, int]] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source, newline="").readline):
            if token.type in (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
                continue
            (row, col), (end_row, end_col) = token.start, token.end
            bounds.append((index.line_start(row) + col, index.line_start(end_row) + end_col))
    except (tokenize.TokenError, IndentationError, SyntaxError, IndexError):
        return None
    return tuple(bounds)


def _widen(source: str, start: int, end: int) -> Tuple[int, int]:
    """``start``/``end`` moved out to the edges of the tokens they cut."""
    bounds = _token_bounds(source)
    if bounds is None:  # no tokens: do not cut a word
        while start > 0 and start < len(source) and _WORD.match(source[start - 1]) and _WORD.match(source[start]):
            start -= 1
        while 0 < end < len(source) and _WORD.match(source[end - 1]) and _WORD.match(source[end]):
            end += 1
        return start, end
    starts = [low for low, _ in bounds]
    at = bisect.bisect_right(starts, start) - 1
    if at >= 0 and bounds[at][0] < start < bounds[at][1]:
        start = bounds[at][0]
    at = bisect.bisect_left(starts, end) - 1
    if at >= 0 and bounds[at][0] < end < bounds[at][1]:
        end = bounds[at][1]
    return start, end


def token_edits(source: Optional[str], edits: Sequence[Edit]) -> List[Edit]:
    """A fix's edits on whole tokens, as a person or a review bot reads them
    (``pretrained=False`` -> ``weights=None``, not ``pretrained=Fals`` ->
    ``weights=Non``).  The engine keeps its edits as small as possible; this
    widens each to the tokens it touches (merging edits that then overlap),
    which changes nothing in the text the fix produces."""
    if source is None:
        return list(edits)
    groups: List[Tuple[int, int, List[Edit]]] = []
    for edit in sorted(edits):
        start, end = _widen(source, edit.start, edit.end)
        if groups and start < groups[-1][1]:  # overlaps the previous one once widened
            first, last, members = groups.pop()
            groups.append((first, max(last, end), [*members, edit]))
        else:
            groups.append((start, end, [edit]))
    return [
        Edit(start, end, apply_edits(source[start:end], [Edit(e.start - start, e.end - start, e.text) for e in members]))
        for start, end, members in groups
    ]


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
    from torchlint.source.notebook_json import cell_text

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
