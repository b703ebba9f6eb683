"""What suppression comments say and which of them were used: plain data
shared by the engine (which silences findings), the rules that read the
comments (unused suppressions) and the writers of new ones.  Reading the
comments out of a text is :mod:`torchlint.lint.suppress`'s job."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Mapping, Optional, Set, Tuple

CODE_LIKE = re.compile(r"^[A-Z]+[0-9]+$")
"""A listed entry that flake8 would read as a code (or a prefix of codes)."""

ALL: FrozenSet[str] = frozenset({"*"})


@dataclass(frozen=True)
class Directive:
    """One suppression comment: where it is and what it lists."""

    line: int
    """The line the comment is on."""
    column: int
    """0-based column of the directive's ``#`` on that line (-1: unknown)."""
    text: str
    """The directive as written (``# noqa: CODE``, ``# torchlint: ignore[CODE]``)."""
    entries: Tuple[str, ...]
    """The codes, prefixes or names it lists, as written; empty: every rule."""
    torchlint: bool
    """Written in torchlint's own syntax (every entry is meant for torchlint)."""
    scope: str
    """``line`` (a trailing comment), ``next`` (an own-line comment: the
    statement below) or ``file``."""
    comment_alone: bool = False
    """The comment is alone on its line."""
    comment_length: int = 0
    """Length of the whole comment the directive is part of."""
    comment_column: int = -1
    """0-based column where that comment starts."""
    codes: FrozenSet[str] = field(default=frozenset(), compare=False)

    def matching(self, code: str, name: str) -> Optional[str]:
        """The entry that silences ``code`` (``*`` for a blanket one), or None."""
        return matching_entry(self.codes, code, name)


def matching_entry(codes: FrozenSet[str], code: str, name: str) -> Optional[str]:
    """Which of ``codes`` silences the rule ``code``/``name``: the code, a
    prefix of it (as flake8 reads ``# noqa: TL2``), its name, or ``*``."""
    if not codes:
        return None
    if "*" in codes:
        return "*"
    if code in codes:
        return code
    if name in codes:
        return name
    for entry in codes:
        if CODE_LIKE.match(entry) and code.startswith(entry):
            return entry
    return None


@dataclass(frozen=True)
class Suppressions:
    """Which directives cover which lines, and for the whole file."""

    trailing: Mapping[int, Tuple[Directive, ...]]
    own_line: Mapping[int, Tuple[Directive, ...]]
    file_level: Tuple[Directive, ...]

    @classmethod
    def none(cls) -> "Suppressions":
        """No suppression comments at all."""
        return cls({}, {}, ())

    @property
    def directives(self) -> Tuple[Directive, ...]:
        """Every directive once, in file order."""
        seen: Dict[Directive, None] = {}
        for group in (*self.trailing.values(), *self.own_line.values(), self.file_level):
            for directive in group:
                seen.setdefault(directive)
        return tuple(sorted(seen, key=lambda d: (d.line, d.column)))

    def naming(self) -> "Suppressions":
        """These suppressions without the line-level blanket ones: what may
        silence a finding about a suppression comment itself."""
        def named(group: Tuple[Directive, ...]) -> Tuple[Directive, ...]:
            return tuple(d for d in group if d.entries)

        return Suppressions({row: named(group) for row, group in self.trailing.items()},
                            {row: named(group) for row, group in self.own_line.items()}, self.file_level)

    def match(
        self, code: str, name: str, lines: Tuple[int, ...], statement_line: Optional[int]
    ) -> Optional[Tuple[Directive, str]]:
        """The directive (and its entry) that silences a finding on
        ``lines`` (in a statement starting at ``statement_line``), or None."""
        candidates: List[Directive] = list(self.file_level)
        for line in lines:
            candidates.extend(self.trailing.get(line, ()))
        if statement_line is not None:
            candidates.extend(self.own_line.get(statement_line, ()))
        for directive in candidates:
            entry = directive.matching(code, name)
            if entry is not None:
                return directive, entry
        return None

    def silences(
        self, code: str, name: str, lines: Tuple[int, ...], statement_line: Optional[int]
    ) -> bool:
        """Whether a finding on ``lines`` (in a statement starting at
        ``statement_line``) is suppressed."""
        return self.match(code, name, lines, statement_line) is not None


@dataclass
class Use:
    """Which directives (and which of their entries) silenced a finding in
    one lint: what the unused-suppression rule reads."""

    suppressions: Suppressions
    used: Set[Tuple[Directive, str]] = field(default_factory=set)

    def record(self, found: Tuple[Directive, str]) -> None:
        """A finding was silenced by this directive's entry."""
        self.used.add(found)

    def used_entries(self, directive: Directive) -> FrozenSet[str]:
        """The entries of ``directive`` that silenced something (``*``: blanket)."""
        return frozenset(entry for found, entry in self.used if found == directive)
