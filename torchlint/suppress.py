"""Suppression comments: ``# noqa``, ``# torchlint: ignore[...]``, file-level forms."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, Optional, Sequence, Tuple

from torchlint.registry import by_alias

_QUICK = re.compile(r"noqa|torchlint", re.IGNORECASE)
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z0-9_\-,\s]+?))?\s*(?:#|$)", re.IGNORECASE)
_DIRECTIVE = re.compile(
    r"#\s*torchlint:\s*(?P<kind>ignore|file-ignore|skip-file|noqa)"
    r"(?:\[(?P<codes>[^\]]*)\])?",
    re.IGNORECASE,
)

ALL: FrozenSet[str] = frozenset({"*"})


def _codes(text: Optional[str]) -> FrozenSet[str]:
    if not text:
        return ALL
    codes = frozenset(part.strip() for part in re.split(r"[,\s]+", text) if part.strip())
    return frozenset(_with_aliases(codes)) or ALL


def _with_aliases(codes: FrozenSet[str]) -> Iterator[str]:
    """The codes, plus the rule codes that another tool's code (an alias
    such as a TorchFix code) stands for."""
    for code in codes:
        yield code
        for rule in by_alias(code):
            yield rule.code


@dataclass(frozen=True)
class Suppressions:
    """Which codes are silenced on which lines, and for the whole file."""

    trailing: Dict[int, FrozenSet[str]]
    own_line: Dict[int, FrozenSet[str]]
    file_level: FrozenSet[str]

    @classmethod
    def none(cls) -> "Suppressions":
        """No suppression comments at all."""
        return cls({}, {}, frozenset())

    def silences(
        self, code: str, name: str, lines: Tuple[int, ...], statement_line: Optional[int]
    ) -> bool:
        """Whether a finding on ``lines`` (in a statement starting at
        ``statement_line``) is suppressed."""
        if _matches(self.file_level, code, name):
            return True
        for line in lines:
            if _matches(self.trailing.get(line, frozenset()), code, name):
                return True
        if statement_line is not None:
            return _matches(self.own_line.get(statement_line, frozenset()), code, name)
        return False


def _matches(codes: FrozenSet[str], code: str, name: str) -> bool:
    if not codes:
        return False
    return "*" in codes or code in codes or name in codes or code.lower() in codes


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(source: str) -> Tuple[str, ...]:
    """The file's lines as the tokenizer numbers them: ``str.splitlines``
    would also break at form feeds and other separators."""
    return tuple(_LINE_BREAK.split(source))


def _comments(source: str, lines: Tuple[str, ...]) -> Iterator[Tuple[int, str, bool]]:
    """(line, comment text, whether the comment is alone on its line)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                row, col = token.start
                alone = token.line[:col].strip() == ""
                yield row, token.string, alone
    except (tokenize.TokenError, IndentationError, SyntaxError):
        for index, line in enumerate(lines, start=1):
            position = line.find("#")
            if position >= 0:
                yield index, line[position:], line[:position].strip() == ""


def _holds_code(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


class NextCodeLine:
    """The first line below a comment that holds code (``is_code`` says
    which lines do).  Comments come in increasing line order, so one forward
    scan answers them all: thousands of own-line comments in a row cost
    linear time, not quadratic."""

    def __init__(self, lines: Sequence[str], is_code: Callable[[str], bool] = _holds_code) -> None:
        self._lines = lines
        self._is_code = is_code
        self._from = 0  # no code line in lines[_from:_found]
        self._found = -1  # index of a code line (len(lines): none); -1: not yet scanned

    def after(self, row: int) -> Optional[int]:
        """The 1-based number of the first code line below line ``row``."""
        if not self._from <= row <= self._found:
            index = row
            while index < len(self._lines) and not self._is_code(self._lines[index]):
                index += 1
            self._from, self._found = row, index
        return self._found + 1 if self._found < len(self._lines) else None


def parse_suppressions(source: str) -> Suppressions:
    """Read every suppression comment of a Python file."""
    if not _QUICK.search(source):
        return Suppressions.none()
    lines = split_lines(source)
    return suppressions_from(_comments(source, lines), NextCodeLine(lines).after)


def suppressions_from(
    comments: Iterable[Tuple[int, str, bool]], next_code_line: Callable[[int], Optional[int]]
) -> Suppressions:
    """Suppressions from (line, comment text, alone on its line) triples;
    ``next_code_line(row)`` is the line an own-line comment on ``row`` covers.
    Other file kinds (job scripts) find their comments their own way."""
    trailing: Dict[int, FrozenSet[str]] = {}
    own_line: Dict[int, FrozenSet[str]] = {}
    file_level: FrozenSet[str] = frozenset()
    for row, text, alone in comments:
        codes: FrozenSet[str] = frozenset()
        for match in _DIRECTIVE.finditer(text):
            kind = match.group("kind").lower()
            if kind == "skip-file":
                file_level = ALL
            elif kind == "file-ignore" or (kind == "noqa" and alone):
                file_level = file_level | _codes(match.group("codes"))
            else:
                codes = codes | _codes(match.group("codes"))
        noqa = _NOQA.search(text)
        if noqa and not alone:
            codes = codes | _codes(noqa.group("codes"))
        if not codes:
            continue
        if alone:
            # An own-line ``# torchlint: ignore[...]`` covers the next statement.
            target = next_code_line(row)
            if target is not None:
                own_line[target] = own_line.get(target, frozenset()) | codes
        else:
            trailing[row] = trailing.get(row, frozenset()) | codes
    return Suppressions(trailing, own_line, file_level)
