"""The oldest Python the linted code must run on, and what its grammar refuses
that libcst accepts.

libcst parses with the newest grammar whatever version it is told, so a fix
that puts ``"cuda"`` inside ``f"{...}"`` parses there but is a syntax error
before Python 3.12 (PEP 701).  Fixed code is checked against the target's
rules for f-strings, and fixes quote the strings they insert so that they fit.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import FrozenSet, List, Optional, Sequence, Tuple

import libcst as cst

from torchlint.source.tree import children, walk
from torchlint.data.versions import PythonVersion, lowest_python


# PEP 701: from 3.12 an f-string's expressions may reuse its quotes, hold
# backslashes and span lines.
_PEP_701 = PythonVersion(3, 12)

# -- the f-string grammar before 3.12 --------------------------------------------

# Any f-string literal starts like this (so may some text that is not one:
# it only saves walking trees that certainly have none).
_FSTRING_PREFIX = re.compile(r"(?<![A-Za-z0-9_])(?:[rR]?[fF]|[fF][rR])[\"']")


@dataclass(frozen=True)
class Violation:
    """An f-string expression that the target's grammar refuses."""

    expression: str
    reason: str


def fstring_violations(module: cst.Module, source: str, target: PythonVersion) -> "Counter[Violation]":
    """Every f-string expression of ``module`` (parsed from ``source``) that
    parses only with PEP 701 (nothing from 3.12 on).  Before 3.12 an f-string is first read as a plain string, so
    its expressions cannot hold its own quote, a backslash, or (in a
    single-quoted one) a line break."""
    found: "Counter[Violation]" = Counter()
    if target >= _PEP_701 or not _FSTRING_PREFIX.search(source):
        return found
    for quote, expression in _fstring_expressions(module):
        text = module.code_for_node(expression)
        if "\\" in text:
            found[Violation(text, "a backslash inside an f-string expression")] += 1
        elif quote in text:
            found[Violation(text, f"the f-string's own quote {quote} inside its expression")] += 1
        elif len(quote) == 1 and ("\n" in text or "\r" in text):
            found[Violation(text, "a line break inside a single-quoted f-string's expression")] += 1
    return found


def _fstring_expressions(module: cst.Module) -> List[Tuple[str, cst.CSTNode]]:
    """(quote of the closest enclosing f-string, expression) for every
    replacement field.  A nested f-string's expressions lie inside the outer
    expression's text, so the outer quote is checked for them too."""
    pairs: List[Tuple[str, cst.CSTNode]] = []
    stack: List[Tuple[cst.CSTNode, Optional[str]]] = [(module, None)]
    while stack:
        node, quote = stack.pop()
        if isinstance(node, cst.FormattedString):
            quote = node.quote
        elif isinstance(node, cst.FormattedStringExpression) and quote is not None:
            pairs.append((quote, node.expression))
        stack.extend((child, quote) for child in children(node))
    return pairs


def new_violations(before: "Counter[Violation]", after: "Counter[Violation]") -> Sequence[Violation]:
    """The violations a change introduced."""
    return list((after - before).elements())


# -- quote choice ------------------------------------------------------------------


_QUOTES: Tuple[str, ...] = ('"', "'")


def requote_inserted_strings(
    old: cst.CSTNode, new: cst.CSTNode, enclosing: Sequence[str]
) -> cst.CSTNode:
    """``new`` with each string literal a fix inserted (one not taken from
    ``old``) quoted so that it fits inside the f-strings around it
    (``enclosing``: their quotes, outermost first)."""
    result = new.visit(_Requoter(_string_ids(old), frozenset(q[0] for q in enclosing)))
    return result if isinstance(result, cst.CSTNode) else new


def _string_ids(node: cst.CSTNode) -> FrozenSet[int]:
    return frozenset(id(found) for found, _ in walk(node) if isinstance(found, cst.SimpleString))


class _Requoter(cst.CSTTransformer):
    def __init__(self, kept: FrozenSet[int], taken: FrozenSet[str]) -> None:
        super().__init__()
        self._kept = kept
        self._taken: List[FrozenSet[str]] = [taken]

    def visit_FormattedString(self, node: cst.FormattedString) -> Optional[bool]:
        self._taken.append(self._taken[-1] | {node.quote[0]})
        return True

    def leave_FormattedString(
        self, original_node: cst.FormattedString, updated_node: cst.FormattedString
    ) -> cst.BaseExpression:
        self._taken.pop()
        return updated_node

    def leave_SimpleString(
        self, original_node: cst.SimpleString, updated_node: cst.SimpleString
    ) -> cst.BaseExpression:
        if id(original_node) in self._kept:
            return updated_node
        return _requoted(updated_node, self._taken[-1])


def _requoted(node: cst.SimpleString, taken: FrozenSet[str]) -> cst.SimpleString:
    """``node`` in a quote character not in ``taken``, when its text allows
    it unchanged (no quotes or backslashes inside); else ``node`` itself."""
    quote = node.quote
    if quote[0] not in taken:
        return node
    body = node.value[len(node.prefix) + len(quote) : len(node.value) - len(quote)]
    for other in _QUOTES:
        if other not in taken and not any(q in body for q in _QUOTES) and "\\" not in body:
            return node.with_changes(value=f"{node.prefix}{other * len(quote)}{body}{other * len(quote)}")
    return node


__all__ = [
    "PythonVersion", "Violation", "fstring_violations", "lowest_python", "new_violations", "requote_inserted_strings",
]
