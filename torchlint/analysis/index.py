"""The project index: what a run knows across its files, and its answers.

Built once per run, before linting, by :func:`torchlint.analysis.queries.build`
from the questions the enabled rules declare, and handed to every file's
lint explicitly (``LintConfig.project``, ``Facts.project``): there is no
index of "the current run" anywhere else.  It holds plain facts (class
headers, call sites, method shapes, star-import parts, callable summaries),
each a function of some files' bytes; its answers are computed from them
on demand, each at most once per index.
"""

from __future__ import annotations

import ast
import enum
import hashlib
import json
import os
from dataclasses import dataclass, field, fields, is_dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Union

if TYPE_CHECKING:
    from torchlint.analysis.imports import Exports
    from torchlint.analysis.summaries import Summaries


@dataclass(frozen=True)
class ClassInfo:
    """A class defined at module level: its dotted name and its bases, each
    resolved through the defining module's imports."""

    qualified: str
    path: str
    line: int
    bases: Tuple[str, ...]


@dataclass(frozen=True)
class MethodShape:
    """How a method may be called, from its ``def`` (the instance parameter
    left out): what a call with an added keyword argument would do."""

    keywords: Tuple[str, ...] = ()
    """Parameters that can be passed by keyword (positional-or-keyword and
    keyword-only)."""
    positional: int = 0
    """How many arguments it takes by position after the instance."""
    variadic_positional: bool = False
    variadic_keywords: bool = False

    def accepts_keyword(self, name: str) -> bool:
        """Whether ``name=...`` is a valid argument (a call with it does not raise TypeError)."""
        return self.variadic_keywords or name in self.keywords

    @classmethod
    def of_parameters(cls, positional_only: Sequence[str], positional: Sequence[str], keyword_only: Sequence[str],
                      variadic_positional: bool, variadic_keywords: bool) -> "Optional[MethodShape]":
        """The shape of a method with these parameters, the instance first;
        None when it has no instance parameter."""
        if not positional_only and not positional:
            return None
        by_keyword = positional[1:] if not positional_only else positional
        return cls(tuple([*by_keyword, *keyword_only]), len(positional_only) + len(positional) - 1,
                   variadic_positional, variadic_keywords)

    @classmethod
    def of_ast(cls, function: Union[ast.FunctionDef, ast.AsyncFunctionDef]) -> "Optional[MethodShape]":
        """The shape of a method written as ``function``; None for a decorated
        one (a decorator may change what it accepts)."""
        if function.decorator_list:
            return None
        arguments = function.args
        return cls.of_parameters(
            [a.arg for a in arguments.posonlyargs], [a.arg for a in arguments.args],
            [a.arg for a in arguments.kwonlyargs], arguments.vararg is not None, arguments.kwarg is not None,
        )


@dataclass(frozen=True)
class CallSite:
    """One call of a function imported from another module, and where it
    stands in its caller: under a grad-disabled ``with`` or decorator, or in
    the same training step as a ``backward()`` (the innermost loop around it,
    or its function when no loop is, calls backward itself)."""

    path: str
    line: int
    caller_module: str
    grad_disabled: bool = False
    training_step: bool = False
    evaled: Tuple[str, ...] = ()
    """The arguments (slots: a position as a digit string, or a keyword) that
    name an object the caller put in eval mode earlier in the same function
    (``model.eval()``, then ``evaluate(model, loader)``: ``("0",)``) and did
    not switch back to training mode before the call."""


@dataclass(frozen=True)
class ProjectIndex:
    """Classes, cross-module calls, star imports and callable summaries of
    the files of one run (and of the project modules they import).

    ``modules`` maps the absolute path of each file whose functions' callers
    were indexed to its module name: only for those is :meth:`callers_of`
    complete (as far as static imports tell)."""

    classes: Mapping[str, ClassInfo] = field(default_factory=dict)
    calls: Mapping[str, Tuple[CallSite, ...]] = field(default_factory=dict)
    modules: Mapping[str, str] = field(default_factory=dict)
    used: FrozenSet[str] = frozenset()
    """Of the dotted names rules asked about (:func:`~torchlint.analysis.queries.name_used`),
    those some file of the run refers to (see :mod:`torchlint.analysis.mentions`)."""
    keywords: FrozenSet[str] = frozenset()
    """The asked-about keyword arguments (``persistent_workers``) that some
    call in the project passes by name: a setting the project already makes."""
    star_parts: Mapping[str, Exports] = field(default_factory=dict)
    """For each project module that some file star-imports, and those it
    star-imports in turn, and each run module that re-exports by an import a
    name another run file imports from it: what its own imports bind, what it
    star-imports, its ``__all__``, what it defines itself (:meth:`star_export`
    and :meth:`named_export` resolve a name through them)."""
    methods: Mapping[str, Mapping[str, MethodShape]] = field(default_factory=dict)
    """For each module-level class of the project that defines one of the
    methods rules asked about: those methods' shapes, by name."""
    called: FrozenSet[str] = frozenset()
    """The asked-about methods (``half``) that some call in the project makes
    on any value."""
    reexports: Mapping[str, str] = field(default_factory=dict)
    """Other dotted names of the classes above: ``pkg.Wrap`` -> ``pkg.parallel.Wrap``
    where ``pkg/__init__.py`` does ``from .parallel import Wrap`` (chains followed)."""
    summaries: "Optional[Summaries]" = None
    """What the project's functions and methods do to their arguments
    (:mod:`torchlint.analysis.summaries`); None when no rule asked."""
    whole_saves: Tuple[Tuple[str, int], ...] = ()
    """(path, line) of each ``torch.save`` of a whole object (a module, an
    optimizer, an instance of a project class) in the project's files, when
    a rule asked (:func:`~torchlint.analysis.queries.whole_saves`;
    :mod:`torchlint.analysis.saves`)."""
    prechecks: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """What the caller of :func:`~torchlint.analysis.queries.build` asked to
    make of each run file's CPython tree while the index parsed it (the
    pre-check's summary), by the SHA-256 of the file's bytes: so that the
    lint need not parse the file with ``ast`` again.  Not a fact a lint
    depends on (it is the file's own text, summarised): not compared, not read."""
    _memo: Dict[Tuple[str, str], Optional[str]] = field(default_factory=dict, compare=False, repr=False)
    _digests: Dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def defined_as(self, qualified: str) -> str:
        """The name a class is defined under, for a name a package re-exports it as."""
        return self.reexports.get(qualified, qualified)

    def method(self, qualified: str, name: str) -> Optional[MethodShape]:
        """The shape of ``name`` as the project class ``qualified`` defines it
        in its own body; None when it does not (inherited methods are not
        followed) or the method was not asked about."""
        return self.methods.get(self.defined_as(qualified), {}).get(name)

    def star_export(self, module: str, name: str) -> Optional[str]:
        """The dotted path ``name`` has after ``from <module> import *``, when
        the project module binds it by an import; None otherwise (each
        question walks the star imports once, then is remembered)."""
        if not self.star_parts:
            return None
        key = (module, name)
        if key not in self._memo:
            # Imported here: a run answered from the cache imports this module for
            # the empty index alone, never the import readers.
            from torchlint.analysis.imports import star_lookup

            self._memo[key] = star_lookup(self.star_parts, module, name)
        return self._memo[key]

    def star_binding(self, module: str, name: str) -> Optional[str]:
        """The dotted path ``name`` has after ``from <module> import *``: what
        :meth:`star_export` gives, or the project module's own definition
        (``utils.evaluate``); None otherwise."""
        if not self.star_parts:
            return None
        key = ("*", module + "." + name)
        if key not in self._memo:
            from torchlint.analysis.imports import star_lookup

            self._memo[key] = star_lookup(self.star_parts, module, name, definitions=True)
        return self._memo[key]

    def named_export(self, qualified: str) -> Optional[str]:
        """The dotted path a name imported from a project module has
        (``dataset.DataLoader`` -> ``torch.utils.data.DataLoader``) when that
        module re-exports it by an import; None otherwise."""
        if not self.star_parts or "." not in qualified:
            return None
        key = ("=", qualified)
        if key not in self._memo:
            from torchlint.analysis.imports import named_lookup

            module, _, name = qualified.rpartition(".")
            self._memo[key] = named_lookup(self.star_parts, module, name)
        return self._memo[key]

    def calls_method(self, name: str) -> bool:
        """Whether some call in the project's files is ``<anything>.name(...)``."""
        return name in self.called

    def passes_keyword(self, name: str) -> bool:
        """Whether some call in the project's files passes ``name=...``."""
        return name in self.keywords

    def bases_of(self, qualified: str) -> FrozenSet[str]:
        """Every base, direct or inherited through classes of the project."""
        found: Set[str] = set()
        stack = [self.defined_as(qualified)]
        while stack:
            info = self.classes.get(stack.pop())
            if info is None:
                continue
            for base in info.bases:
                if base not in found:
                    found.add(base)
                    stack.append(base)
        return frozenset(found)

    @cached_property
    def _direct_subclasses(self) -> Mapping[str, Tuple[str, ...]]:
        found: Dict[str, List[str]] = {}
        for name in sorted(self.classes):
            for base in self.classes[name].bases:
                found.setdefault(base, []).append(name)
        return {base: tuple(names) for base, names in found.items()}

    @cached_property
    def _subclasses(self) -> Dict[str, FrozenSet[str]]:
        return {}

    def subclasses_of(self, base: str) -> FrozenSet[str]:
        """Project classes that derive from ``base``, directly or not (one
        walk down the hierarchy per base, remembered)."""
        known = self._subclasses.get(base)
        if known is None:
            found: Set[str] = set()
            stack = [base]
            while stack:
                for name in self._direct_subclasses.get(stack.pop(), ()):
                    if name not in found:
                        found.add(name)
                        stack.append(name)
            known = self._subclasses[base] = frozenset(found)
        return known

    def derives_from(self, qualified: str, base: str) -> bool:
        """Whether the project class ``qualified`` derives from ``base``."""
        return self.defined_as(qualified) in self.subclasses_of(base)

    def callers_of(self, qualified: str) -> Tuple[CallSite, ...]:
        """Calls of a project function from other modules."""
        return tuple(self.calls.get(qualified, ()))

    def note_grad_read(self, qualified: str) -> None:
        """A lint asked the grad-mode facts of ``qualified``'s summary
        (:data:`~torchlint.analysis.summaries.GRAD_FACT`); recorded by :class:`RecordingIndex`."""

    def uses(self, qualified: str) -> bool:
        """Whether some file of the run refers to ``qualified`` (one of the
        names rules asked about; False for any other, and when no index was built)."""
        return qualified in self.used

    def module_of(self, path: str) -> Optional[str]:
        """The module name of a file whose callers were indexed, else None."""
        return self.modules.get(os.path.abspath(path))

    def digest_of(self, reads: Iterable[str]) -> str:
        """The fingerprint of the facts a file's lint read (:class:`RecordingIndex`
        names them: fields, and ``calls:<name>`` for one function's callers):
        what its cache entry is keyed by, so that a change to a fact it did
        not read leaves the entry valid.  A lint that read nothing still
        differs from one with no index at all ("")."""
        digest = hashlib.sha256(b"project-facts-1")
        for read in sorted(set(reads)):
            known = self._digests.get(read)
            if known is None:
                known = self._digests[read] = _read_digest(self, read)
            digest.update(f"{read}\0{known}\n".encode("utf-8", "surrogateescape"))
        return digest.hexdigest()

    @cached_property
    def fingerprint(self) -> str:
        """Changes whenever a fact changes."""
        return self.digest_of(READ_FIELDS)

    @property
    def is_empty(self) -> bool:
        """Whether this is :data:`EMPTY`, the index of a run that builds none
        (callers that must not import this module to know, pass None instead)."""
        return self is EMPTY

    def recording(self) -> "RecordingIndex":
        """A copy of this index that records which facts are read from it."""
        return RecordingIndex(**{f.name: getattr(self, f.name) for f in fields(self) if f.init})


READ_FIELDS = ("classes", "calls", "modules", "used", "keywords", "star_parts", "methods", "called", "reexports",
               "summaries", "whole_saves")
"""The facts of an index a lint can read (the fields of :class:`ProjectIndex`)."""


@dataclass(frozen=True)
class RecordingIndex(ProjectIndex):
    """An index that remembers which of its facts are read (``reads``): the
    dependencies of one file's findings, as a build system records them.
    Asking for one function's callers depends on those calls alone."""

    reads: Set[str] = field(default_factory=set, compare=False, repr=False)

    def __getattribute__(self, name: str) -> Any:
        if name in _FIELD_SET:
            object.__getattribute__(self, "reads").add(name)
        return object.__getattribute__(self, name)

    def callers_of(self, qualified: str) -> Tuple[CallSite, ...]:
        object.__getattribute__(self, "reads").add(f"calls:{qualified}")
        return tuple(object.__getattribute__(self, "calls").get(qualified, ()))

    def note_grad_read(self, qualified: str) -> None:
        object.__getattribute__(self, "reads").add(f"{GRAD_READ}:{qualified}")


_FIELD_SET = frozenset(READ_FIELDS)
GRAD_READ = "summaries-grad"
"""The read of one function's grad-mode summary facts (``summaries-grad:<function>``)."""


def _read_digest(index: ProjectIndex, read: str) -> str:
    field_name, _, detail = read.partition(":")
    value: Any
    if field_name == GRAD_READ:  # one function's (or, for `a|b`, each candidate's) grad-mode facts
        summaries = index.summaries
        value = [[summaries.grad_facts(name), name in summaries.without_grad] if summaries is not None else None
                 for name in detail.split("|")]
    elif field_name not in _FIELD_SET:
        return "unknown"
    else:
        value = getattr(index, field_name)
        if detail:
            value = value.get(detail, ()) if isinstance(value, Mapping) else None
    text = json.dumps(stable(value), separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def stable(value: Any) -> Any:
    """``value`` as plain JSON data that is the same in every process: sets
    and mappings sorted, dataclasses as their compared fields (memos left
    out), enums as their values.  A fact's fingerprint is a digest of it."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return ["enum", type(value).__name__, stable(value.value)]
    if is_dataclass(value) and not isinstance(value, type):
        # Facts read one function at a time (`GRAD_FACT` metadata) have their own reads.
        return [type(value).__name__, [[f.name, stable(getattr(value, f.name))] for f in fields(value)
                                       if f.compare and "read" not in f.metadata]]
    if isinstance(value, Mapping):
        items = [[stable(k), stable(v)] for k, v in value.items()]
        return ["map", sorted(items, key=_order)]
    if isinstance(value, (set, frozenset)):
        return ["set", sorted((stable(v) for v in value), key=_order)]
    if isinstance(value, (list, tuple)):
        return [stable(v) for v in value]
    return ["repr", type(value).__name__, repr(value)]


def _order(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


EMPTY = ProjectIndex()
"""The index of a text linted on its own: knows nothing across files."""
