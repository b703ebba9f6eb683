"""Suppression comments: ``# noqa``, ``# torchlint: ignore[...]``, file-level forms.

One implementation serves ``torchlint check``, the editor and the flake8
plugin, and it follows flake8's reading of ``# noqa`` wherever flake8 would
also apply it, so that the two front ends agree: a listed code may be a
prefix (``# noqa: TL2`` silences every ``TL2xx``), and a trailing comment
covers every physical line of the logical line it ends (a call spread over
several lines).  Every directive is kept with where it is, so that the
unused ones can be reported (:class:`Use`), and :func:`noqa_edits` writes
new ones (``--add-noqa``, the editor's "suppress" action).
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from torchlint.ruleapi.directives import ALL, CODE_LIKE, Directive, Suppressions, matching_entry
from torchlint.model import Edit
from torchlint.ruleapi.registry import by_alias
from torchlint.source.lines import LINE_BREAK, line_texts

_QUICK = re.compile(r"noqa|torchlint", re.IGNORECASE)
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z0-9_\-,\s]+?))?\s*(?:#|$)", re.IGNORECASE)
_DIRECTIVE = re.compile(
    r"#\s*torchlint:\s*(?P<kind>ignore|file-ignore|skip-file|noqa)"
    r"(?:\[(?P<codes>[^\]]*)\])?",
    re.IGNORECASE,
)



def _entries(text: Optional[str]) -> Tuple[str, ...]:
    """The codes or names a directive lists, as written (empty: every rule)."""
    if not text:
        return ()
    return tuple(dict.fromkeys(part.strip() for part in re.split(r"[,\s]+", text) if part.strip()))


def entry_forms(entry: str) -> FrozenSet[str]:
    """What one written entry of a directive matches (see :func:`matching_entry`)."""
    return _codes((entry,))


def _codes(entries: Tuple[str, ...]) -> FrozenSet[str]:
    """What a directive's entries match: upper-cased codes and prefixes,
    names, and the rule codes another tool's code stands for."""
    if not entries:
        return ALL
    found: Set[str] = set()
    for entry in entries:
        found.add(entry.upper() if CODE_LIKE.match(entry.upper()) else entry.lower())
        for rule in by_alias(entry):
            found.add(rule.code)
    return frozenset(found) or ALL


@dataclass(frozen=True)
class _Comment:
    row: int
    column: int
    text: str
    alone: bool
    logical: Tuple[int, int]
    """The physical lines of the logical line the comment ends (flake8's
    noqa mapping); ``(row, row)`` when not known."""


def _comments(source: str, lines: Tuple[str, ...], last_row: Optional[int] = None) -> Iterator[_Comment]:
    """Every comment, with the logical line it belongs to; with ``last_row``,
    at least those on lines up to it (tokenizing stops at the first line
    break after it, where every earlier comment's logical line has ended)."""
    pending: List[Tuple[int, int, str, bool]] = []
    first: Optional[int] = None
    last = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            last = token.end[0]
            if token.type == tokenize.COMMENT:
                row, col = token.start
                pending.append((row, col, token.string, token.line[:col].strip() == ""))
                continue
            if token.type in (tokenize.NL, tokenize.NEWLINE):
                if token.type == tokenize.NEWLINE or first is None:
                    start = first if first is not None else token.start[0]
                    for row, col, text, alone in pending:
                        span = (start, token.start[0]) if not alone else (row, row)
                        yield _Comment(row, col, text, alone, span)
                    pending.clear()
                    first = None
                    if last_row is not None and token.start[0] >= last_row:
                        return
                continue
            if token.type not in (tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER) and first is None:
                first = token.start[0]
        for row, col, text, alone in pending:
            yield _Comment(row, col, text, alone, (row, row))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        # Text that does not tokenize: what was read keeps its comments, the
        # rest is scanned line by line.
        for row, col, text, alone in pending:
            yield _Comment(row, col, text, alone, (row, row))
        for index, line in enumerate(lines[last:], start=last + 1):
            position = line.find("#")
            if position >= 0:
                yield _Comment(index, position, line[position:], line[:position].strip() == "", (index, index))


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
    lines = line_texts(source)
    # A directive names ``noqa`` or ``torchlint`` on its own line: comments
    # below the last line that does are not read (tokenizing is the cost).
    last = max(match.start() for match in _QUICK.finditer(source))
    return _build(_comments(source, lines, source.count("\n", 0, last) + 1), NextCodeLine(lines).after)


def suppressions_from(
    comments: Iterable[Tuple[int, str, bool]], next_code_line: Callable[[int], Optional[int]]
) -> Suppressions:
    """Suppressions from (line, comment text, alone on its line) triples;
    ``next_code_line(row)`` is the line an own-line comment on ``row`` covers.
    Other file kinds (job scripts) find their comments their own way."""
    return _build((_Comment(row, -1, text, alone, (row, row)) for row, text, alone in comments), next_code_line)


def _build(comments: Iterable[_Comment], next_code_line: Callable[[int], Optional[int]]) -> Suppressions:
    trailing: Dict[int, List[Directive]] = {}
    own_line: Dict[int, List[Directive]] = {}
    file_level: List[Directive] = []
    for comment in comments:
        found: List[Directive] = []

        def directive(start: int, end: int, entries: Tuple[str, ...], ours: bool, scope: str) -> Directive:
            column = comment.column + start if comment.column >= 0 else -1
            return Directive(comment.row, column, comment.text[start:end], entries, ours, scope, comment.alone,
                             len(comment.text), comment.column, _codes(entries))

        for match in _DIRECTIVE.finditer(comment.text):
            kind = match.group("kind").lower()
            entries = _entries(match.group("codes"))
            if kind == "skip-file":
                file_level.append(directive(match.start(), match.end(), (), True, "file"))
            elif kind == "file-ignore" or (kind == "noqa" and comment.alone):
                file_level.append(directive(match.start(), match.end(), entries, True, "file"))
            else:
                found.append(directive(match.start(), match.end(), entries, True,
                                       "next" if comment.alone else "line"))
        noqa = _NOQA.search(comment.text)
        if noqa and not comment.alone:
            end = noqa.end("codes") if noqa.group("codes") else noqa.start() + len(noqa.group().rstrip("# \t"))
            found.append(directive(noqa.start(), end, _entries(noqa.group("codes")), False, "line"))
        for item in found:
            if comment.alone:
                # An own-line ``# torchlint: ignore[...]`` covers the next statement.
                target = next_code_line(comment.row)
                if target is not None:
                    own_line.setdefault(target, []).append(item)
            else:
                first, last = comment.logical
                for row in range(min(first, comment.row), max(last, comment.row) + 1):
                    trailing.setdefault(row, []).append(item)
    return Suppressions(
        {row: tuple(items) for row, items in trailing.items()},
        {row: tuple(items) for row, items in own_line.items()},
        tuple(file_level),
    )


# -- writing new suppressions ------------------------------------------------------


def comment_lines(source: str) -> Optional[FrozenSet[int]]:
    """The lines at whose end a comment may be added: their end is not inside
    a string and not a backslash continuation.  None when the text does not
    tokenize (then every line is taken to allow one)."""
    allowed: Set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
                allowed.add(token.start[0])
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return frozenset(allowed)


def noqa_edits(source: str, wanted: Mapping[int, Iterable[str]], *, reason: str = "") -> List[Edit]:
    """Edits that add ``# noqa: CODES`` to the end of each line in ``wanted``
    (line -> codes), merging with a ``# noqa: ...`` already there; a line
    whose blanket ``# noqa`` already covers everything is left alone."""
    lines = line_texts(source)
    starts = [0]
    for match in LINE_BREAK.finditer(source):
        starts.append(match.end())
    existing = {directive.line: directive for directive in parse_suppressions(source).directives
                if not directive.torchlint and directive.scope == "line" and directive.column >= 0}
    edits: List[Edit] = []
    for line in sorted(wanted):
        if not 1 <= line <= len(lines):
            continue
        codes = sorted(set(wanted[line]))
        text = lines[line - 1]
        end = starts[line - 1] + len(text)
        present = existing.get(line)
        if present is not None:
            if not present.entries:
                continue  # a blanket `# noqa` already silences the line
            missing = [code for code in codes if matching_entry(present.codes, code, "") is None]
            if not missing:
                continue
            at = starts[line - 1] + present.column + len(present.text)
            edits.append(Edit(at, at, ", " + ", ".join(missing)))
            continue
        body = text.rstrip()
        trail = f" {reason}" if reason else ""
        edits.append(Edit(starts[line - 1] + len(body), end, f"  # noqa: {', '.join(codes)}{trail}"))
    return edits
