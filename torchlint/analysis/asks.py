"""What rules ask about the project: :class:`Query` values and their kinds,
made by the constructors below and merged by :class:`Asked`.  Plain data
with no dependency, so that the catalog can read the queries it stores (on
every run, even one answered from the cache) without importing the
builders in :mod:`torchlint.analysis.queries`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, List, Mapping, Sequence, Set, Tuple


# -- what rules ask ------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """One cross-file question a rule declares: its ``kind`` and the words
    that say what it is about (plain strings, so the catalog can keep it)."""

    kind: str
    words: Tuple[str, ...] = ()
    more: Tuple[str, ...] = ()


SUBCLASSES = "subclasses"
CALLERS = "callers"
NAMES = "names"
KEYWORDS = "keywords"
METHODS = "methods"
METHOD_CALLS = "method-calls"
SUMMARIES = "summaries"
WHOLE_SAVES = "whole-saves"
CALLED_FROM = "called-from"
KINDS = (SUBCLASSES, CALLERS, NAMES, KEYWORDS, METHODS, METHOD_CALLS, SUMMARIES, WHOLE_SAVES, CALLED_FROM)


def subclasses_of(*bases: str) -> Query:
    """Which project classes derive from these classes (dotted names),
    through any number of the project's files
    (``facts.project.derives_from(name, base)``)."""
    return Query(SUBCLASSES, tuple(bases))


def callers_of(module_words: Sequence[str] = (), function_words: Sequence[str] = ()) -> Query:
    """The calls from other modules of the module-level functions of files
    containing one of ``module_words``, and of functions whose own text
    contains one of ``function_words`` (``facts.project.callers_of(name)``)."""
    return Query(CALLERS, tuple(module_words), tuple(function_words))


def called_from(*caller_words: str) -> Query:
    """Also index the calls from other modules of the project functions that a
    file containing one of ``caller_words`` calls (``.eval(``: the evaluation
    helpers a training script calls after switching its model to eval mode,
    wherever they are defined; ``facts.project.callers_of(name)``)."""
    return Query(CALLED_FROM, tuple(caller_words))


def name_used(*names: str) -> Query:
    """Whether some file of the run refers to these dotted names (``torch.compile``;
    ``facts.project.uses(name)``)."""
    return Query(NAMES, tuple(names))


def keyword_passed(*keywords: str) -> Query:
    """Whether some call in the project passes these keyword arguments
    (``facts.project.passes_keyword(name)``)."""
    return Query(KEYWORDS, tuple(keywords))


def method_shapes(*methods: str) -> Query:
    """How the project's classes define these methods (``facts.project.method(cls, name)``)."""
    return Query(METHODS, tuple(methods))


def method_called(*methods: str) -> Query:
    """Whether some call in the project makes these method calls on any
    value (``x.half()``; ``facts.project.calls_method(name)``)."""
    return Query(METHOD_CALLS, tuple(methods))


def summaries() -> Query:
    """What the project's functions and methods do to their arguments
    (:mod:`torchlint.analysis.summaries`; ``facts.project.summaries``)."""
    return Query(SUMMARIES)


def whole_saves() -> Query:
    """Where the project's files ``torch.save`` whole objects (a module, an
    optimizer, an instance of a project class), which ``weights_only=True``
    loads refuse (:mod:`torchlint.analysis.saves`; ``facts.project.whole_saves``)."""
    return Query(WHOLE_SAVES)


@dataclass(frozen=True)
class Asked:
    """The enabled rules' queries merged: every word of each kind."""

    words: Mapping[str, FrozenSet[str]]
    more: Mapping[str, FrozenSet[str]]

    @classmethod
    def of(cls, queries: Iterable[Query]) -> "Asked":
        words: Dict[str, Set[str]] = {}
        more: Dict[str, Set[str]] = {}
        for query in queries:
            words.setdefault(query.kind, set()).update(query.words)
            more.setdefault(query.kind, set()).update(query.more)
        return cls({k: frozenset(v) for k, v in words.items()}, {k: frozenset(v) for k, v in more.items()})

    def __contains__(self, kind: str) -> bool:
        return kind in self.words

    def of_kind(self, kind: str) -> List[str]:
        """The words asked under ``kind``, sorted."""
        return sorted(self.words.get(kind, ()))
