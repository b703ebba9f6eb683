"""Value types shared by the engine, the fixer and the reporters."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple


class Applicability(str, enum.Enum):
    """How safe a fix is to apply without review (Ruff's tiers)."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, order=True)
class Position:
    """A 1-based line and 1-based column (in characters)."""

    line: int
    column: int


@dataclass(frozen=True, order=True)
class Edit:
    """Replace ``source[start:end]`` (character offsets) with ``text``."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Fix:
    """A set of non-overlapping edits that together repair one finding."""

    edits: Tuple[Edit, ...]
    applicability: Applicability
    description: str

    @property
    def span(self) -> Tuple[int, int]:
        """The smallest character range covering every edit."""
        return (min(e.start for e in self.edits), max(e.end for e in self.edits))


@dataclass(frozen=True)
class Diagnostic:
    """One finding in one file."""

    path: str
    start: Position
    end: Position
    code: str
    name: str
    message: str
    fix: Optional[Fix] = None
    hint: Optional[str] = None
    cell: Optional[int] = field(default=None, compare=False)

    @property
    def sort_key(self) -> Tuple[str, int, int, int, str, str]:
        """The one ordering used everywhere: path, (cell,) line, column, code."""
        return (self.path, self.cell or 0, self.start.line, self.start.column, self.code, self.message)

    def fixable(self, unsafe: bool) -> bool:
        """Whether the fix would be applied under the given safety level."""
        if self.fix is None:
            return False
        return unsafe or self.fix.applicability is Applicability.SAFE


PARSE_ERROR_CODE = "TL000"
PARSE_ERROR_NAME = "parse-error"


def parse_error(path: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    """The TL000 diagnostic for a file that cannot be read, decoded or parsed."""
    position = Position(max(line, 1), max(column, 1))
    return Diagnostic(path, position, position, PARSE_ERROR_CODE, PARSE_ERROR_NAME, message)


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
