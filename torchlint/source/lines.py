"""Lines as Python numbers them: a line ends at ``\\r\\n``, ``\\r`` or ``\\n`` and nowhere else
(``str.splitlines`` also breaks at form feeds, ``\\u2028`` and other characters that Python keeps
inside a line).  Findings, fixes, snippets, diffs, suppressions, notebooks' cells and the language
server all count lines here, so a position means the same line everywhere."""

from __future__ import annotations

import bisect
import re
from functools import lru_cache
from typing import List, Tuple

from torchlint.model import Position

LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def split_lines(text: str) -> List[str]:
    """``text`` cut after each line break; each line keeps its terminator (no empty last line)."""
    return _LINE.findall(text)


def line_texts(text: str) -> Tuple[str, ...]:
    """The lines of ``text`` without their terminators, as the tokenizer numbers them (text
    ending in a line break has an empty last line)."""
    return tuple(LINE_BREAK.split(text))


def count_lines(text: str) -> int:
    """How many line breaks ``text`` holds."""
    return len(LINE_BREAK.findall(text))


def strip_newline(line: str) -> str:
    """``line`` without one trailing line terminator."""
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith(("\r", "\n")):
        return line[:-1]
    return line


class LineIndex:
    """Converts between 1-based lines, columns and character offsets of one text."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.starts = [0] + [m.end() for m in LINE_BREAK.finditer(source)]

    @property
    def line_count(self) -> int:
        """How many lines there are (text after the last line break counts as one)."""
        return len(self.starts)

    def line_of(self, offset: int) -> int:
        """The 1-based line holding character ``offset``."""
        return bisect.bisect_right(self.starts, max(0, offset))

    def position(self, offset: int) -> Position:
        """The 1-based line and column of a character offset (clamped to the text)."""
        offset = min(max(0, offset), len(self.source))
        line = self.line_of(offset)
        return Position(line, offset - self.starts[line - 1] + 1)

    def offset(self, line: int, column: int) -> int:
        """The offset of a 1-based line and 0-based column (clamped to the text)."""
        if line - 1 >= len(self.starts):
            return len(self.source)
        return min(self.starts[line - 1] + column, len(self.source))

    def line_start(self, line: int) -> int:
        """Offset of the first character of ``line``."""
        return self.starts[line - 1]

    def line_end(self, line: int) -> int:
        """Offset just past ``line``'s terminator."""
        return self.starts[line] if line < len(self.starts) else len(self.source)

    def content_end(self, line: int) -> int:
        """Offset where ``line``'s text ends, before its terminator."""
        end = self.line_end(line)
        if line < len(self.starts):
            end -= 2 if self.source[end - 2 : end] == "\r\n" else 1
        return end

    def line_text(self, line: int) -> str:
        """The text of ``line`` without its terminator."""
        return self.source[self.line_start(line) : self.content_end(line)]

    def start_of_line_at(self, offset: int) -> int:
        """The offset where the line holding ``offset`` begins."""
        return self.starts[self.line_of(offset) - 1]


@lru_cache(maxsize=64)
def line_index(source: str) -> LineIndex:
    """A (cached) :class:`LineIndex` for ``source``."""
    return LineIndex(source)
