"""IPython syntax in notebook cells, hidden from the Python parser and put back.

IPython turns some logical lines into calls before Python sees them: lines
that start with an escape (``%time``, ``!pip``, ``?obj``, ``/f x``), shell
and magic assignments (``files = !ls``, ``t = %time f()``) and help requests
that end in ``?`` (``model?``).  Which lines these are depends on Python's
lexical structure, as in IPython: only the start of a logical line counts
(never a line inside a string or inside brackets), and a ``?`` makes a help
request only when it is the last token of the line (not inside a string or
a comment).

Each such line is masked by a text of the same length and the same line
breaks (``0#...`` on its first line, a statement, so that a block holding
only a magic still parses; ``#...`` on its continuation lines), so every
offset and position in the masked text is one in the real text, and
:class:`Mask` records what to put back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_NEWLINE = re.compile(r"\r\n|\r|\n")
_INDENT = re.compile(r"[ \t\f]*")
ESCAPES = frozenset("%!?/,;")
_OPENING, _CLOSING = frozenset("([{"), frozenset(")]}")
_COMPOUND = frozenset("=!<>:+-*/%&|^@~")  # a `=` after one of these is part of an operator


def split_lines(text: str) -> List[str]:
    """``text`` cut after each ``\\r\\n``, ``\\r`` or ``\\n`` (Python's line
    breaks; never ``str.splitlines``, which also breaks at ``\\u2028`` and
    other characters that Python keeps inside a line)."""
    return _LINE.findall(text)


def count_lines(text: str) -> int:
    """How many line breaks ``text`` holds, as Python counts them."""
    return len(_NEWLINE.findall(text))


@dataclass(frozen=True)
class Mask:
    """One masked line: at ``start`` (after the indentation) ``original`` was
    replaced by ``masked``, a text of the same length."""

    start: int
    original: str
    masked: str


def _content(line: str) -> str:
    return line.rstrip("\r\n")


def _continued(line: str) -> bool:
    """Whether a magic line goes on on the next line (a final backslash)."""
    return _content(line).endswith("\\")


class _Scanner:
    """Python's lexical state across the physical lines of one logical line."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: Optional[str] = None  # the closing delimiter of an open string
        self.backslash = False  # the last line ended in a line continuation
        self.last = ""  # the last token's kind: "?", "#" (a comment), "'" (a string)...
        self.assignment_seen = False

    @property
    def open(self) -> bool:
        """Whether the logical line goes on on the next physical line."""
        return self.depth > 0 or self.quote is not None or self.backslash

    def scan(self, line: str) -> bool:
        """Scan one physical line; True when it holds a ``= !``/``= %``
        assignment magic (the rest of the line is then not Python)."""
        text = _content(line)
        self.backslash = False
        index = 0
        while index < len(text):
            if self.quote is not None:
                index = self._in_string(text, index)
                continue
            char = text[index]
            if char == "#":
                self.last = "#"
                return False
            if char in "'\"":
                triple = text[index : index + 3]
                self.quote = triple if triple in ("'''", '"""') else char
                self.last = "'"
                index += len(self.quote)
                continue
            if char == "\\" and index == len(text) - 1:
                self.backslash = True
                return False
            if char in _OPENING:
                self.depth += 1
            elif char in _CLOSING:
                self.depth = max(0, self.depth - 1)
            elif char == "=" and self._plain_assignment(text, index):
                self.assignment_seen = True
                if text[index + 1 :].lstrip(" \t")[:1] in ("!", "%"):
                    return True
            if not char.isspace():
                self.last = char
            index += 1
        if self.quote is not None and len(self.quote) == 1 and not text.endswith("\\"):
            self.quote = None  # an unterminated one-line string ends with its line
        return False

    def _in_string(self, text: str, index: int) -> int:
        assert self.quote is not None
        while index < len(text):
            if text[index] == "\\":
                index += 2
            elif text.startswith(self.quote, index):
                index += len(self.quote)
                self.quote = None
                return index
            else:
                index += 1
        return index

    def _plain_assignment(self, text: str, index: int) -> bool:
        """A top-level ``=`` that is the line's first assignment (IPython
        looks no further) and not part of ``==``, ``<=``, ``+=``..."""
        if self.depth or self.assignment_seen or not text[:index].strip():
            return False
        before = text[index - 1] if index else ""
        after = text[index + 1 : index + 2]
        return before not in _COMPOUND and after != "="


def _magic_lines(lines: List[str]) -> List[Tuple[int, int]]:
    """``(first, last)`` line index of every magic in a cell's lines."""
    found: List[Tuple[int, int]] = []
    index = 0
    while index < len(lines):
        stripped = _content(lines[index]).lstrip(" \t\f")
        if not stripped or stripped.startswith("#"):
            index += 1
            continue
        if stripped[0] in ESCAPES:
            end = _continuation_end(lines, index)
            found.append((index, end))
            index = end + 1
            continue
        scanner = _Scanner()
        first = index
        while True:
            if scanner.scan(lines[index]):
                end = _continuation_end(lines, index)
                found.append((first, end))
                index = end
                break
            if not scanner.open or index == len(lines) - 1:
                if scanner.last == "?":
                    found.append((first, index))
                break
            index += 1
        index += 1
    return found


def _continuation_end(lines: List[str], index: int) -> int:
    while index < len(lines) - 1 and _continued(lines[index]):
        index += 1
    return index


def mask_magics(source: str) -> Tuple[str, Tuple[Mask, ...]]:
    """``source`` with its IPython lines masked, and the masks applied."""
    lines = split_lines(source)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    masks: List[Mask] = []
    for first, last in _magic_lines(lines):
        for index in range(first, last + 1):
            text = _content(lines[index])
            indent = _INDENT.match(text)
            assert indent is not None
            body = text[indent.end() :]
            if not body:
                continue
            if index == first:
                masked = "0" if len(body) == 1 else "0#" + body[2:]
            else:
                masked = "#" + body[1:]
            masks.append(Mask(starts[index] + indent.end(), body, masked))
    return apply_masks(source, masks, masked=True), tuple(masks)


def apply_masks(text: str, masks: Sequence[Mask], *, masked: bool, at: Optional[Sequence[int]] = None) -> str:
    """Put each mask's ``masked`` (or, to undo, its ``original``) text at
    its start (or at ``at``, where edits have moved the masks to)."""
    pieces: List[str] = []
    cursor = 0
    for index, mask in enumerate(masks):
        start = mask.start if at is None else at[index]
        pieces.append(text[cursor:start])
        pieces.append(mask.masked if masked else mask.original)
        cursor = start + len(mask.original)
    pieces.append(text[cursor:])
    return "".join(pieces)
