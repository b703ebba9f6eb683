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
import hashlib
import os
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple, Union

from torchlint.analysis.imports import Exports, star_lookup

if TYPE_CHECKING:
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
    star-imports in turn: what its own imports bind, what it star-imports,
    its ``__all__`` (:meth:`star_export` resolves a name through them)."""
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
    _memo: Dict[Tuple[str, str], Optional[str]] = field(default_factory=dict, compare=False, repr=False)

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
            self._memo[key] = star_lookup(self.star_parts, module, name)
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

    def uses(self, qualified: str) -> bool:
        """Whether some file of the run refers to ``qualified`` (one of the
        names rules asked about; False for any other, and when no index was built)."""
        return qualified in self.used

    def module_of(self, path: str) -> Optional[str]:
        """The module name of a file whose callers were indexed, else None."""
        return self.modules.get(os.path.abspath(path))

    @cached_property
    def _classes_digest(self) -> str:
        digest = hashlib.sha256()
        for name in sorted(self.classes):
            digest.update(f"{name}\0{','.join(self.classes[name].bases)}\n".encode())
        digest.update(f"used\0{','.join(sorted(self.used))}\n".encode())
        for keyword in sorted(self.keywords):
            digest.update(f"keyword\0{keyword}\n".encode())
        for module in sorted(self.star_parts):
            part = self.star_parts[module]
            names = ",".join(f"{k}={part.imported[k]}" for k in sorted(part.imported))
            public = "*" if part.public is None else ",".join(sorted(part.public))
            digest.update(f"star\0{module}\0{names}\0{','.join(part.stars)}\0{public}\n".encode())
        for method in sorted(self.called):
            digest.update(f"called\0{method}\n".encode())
        for alias in sorted(self.reexports):
            digest.update(f"reexport\0{alias}\0{self.reexports[alias]}\n".encode())
        for qualified in sorted(self.methods):
            shapes = self.methods[qualified]
            digest.update(f"methods\0{qualified}\0{[(n, shapes[n]) for n in sorted(shapes)]!r}\n".encode())
        if self.summaries is not None:
            digest.update(f"summaries\0{self.summaries.fingerprint}\n".encode())
        for path, line in self.whole_saves:
            digest.update(f"save\0{path}\0{line}\n".encode("utf-8", "surrogateescape"))
        return digest.hexdigest()

    @cached_property
    def fingerprint(self) -> str:
        """Changes whenever a fact changes."""
        digest = hashlib.sha256(self._classes_digest.encode())
        for name in sorted(self.calls):
            digest.update(f"{name}\0{_sites_text(self.calls[name])}\n".encode())
        return digest.hexdigest()

    def fingerprint_for(self, path: str) -> str:
        """The facts one file's findings may depend on (for its cache key):
        the class hierarchy, and the calls of this file's own functions from
        other modules.  An edit elsewhere that changes neither keeps this
        file's cache entry valid."""
        module = self.module_of(path)
        if module is None or not self.calls:
            return self._classes_digest
        digest = hashlib.sha256(self._classes_digest.encode())
        prefix = module + "."
        for name in sorted(self.calls):
            if name.startswith(prefix) and "." not in name[len(prefix):]:
                digest.update(f"{name}\0{_sites_text(self.calls[name])}\n".encode())
        return digest.hexdigest()


def _sites_text(sites: Sequence[CallSite]) -> str:
    return ";".join(
        f"{site.caller_module}:{site.line}:{int(site.grad_disabled)}{int(site.training_step)}" for site in sites
    )


EMPTY = ProjectIndex()
"""The index of a text linted on its own: knows nothing across files."""
