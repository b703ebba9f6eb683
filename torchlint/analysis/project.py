"""Facts that cross files, gathered once per run before linting.

Read with CPython's ``ast`` (many times faster than libcst): which classes
derive from which bases (so a rule sees that ``MyParallel`` imported from
another module is an ``nn.DataParallel``), and which functions other modules
call.  The runner builds the index only when an enabled rule asks for it
(:class:`~torchlint.analysis.Analysis.PROJECT`); linting one text on its own
sees an empty index.
"""

from __future__ import annotations

import ast
import bisect
import hashlib
import os
import re
import warnings
from functools import cached_property
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Protocol, Sequence, Set, Tuple, Union

from torchlint.canonical import canonical
from torchlint.sourcefile import MAX_FILE_BYTES, SourceError, read_regular


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
class Contribution:
    """What one file adds to the index: its module-level classes and its
    calls of other modules' functions.  A pure function of the file's bytes
    and module name, so it is cached with them (see :class:`Store`)."""

    classes: Tuple[ClassInfo, ...] = ()
    calls: Tuple[Tuple[str, CallSite], ...] = ()


class Store(Protocol):
    """Where contributions are kept between runs (the run's cache)."""

    def get_facts(self, key: str) -> Optional[Any]:
        """The JSON value stored under ``key``, or None."""

    def put_facts(self, key: str, value: Any) -> None:
        """Keep a JSON value under ``key``."""


@dataclass(frozen=True)
class ProjectIndex:
    """Classes and cross-module calls of the files of one run.

    ``modules`` maps the absolute path of each file whose functions' callers
    were indexed to its module name: only for those is :meth:`callers_of`
    complete (as far as static imports tell)."""

    classes: Mapping[str, ClassInfo] = field(default_factory=dict)
    calls: Mapping[str, Tuple[CallSite, ...]] = field(default_factory=dict)
    modules: Mapping[str, str] = field(default_factory=dict)
    used: FrozenSet[str] = frozenset()
    """Of the dotted names rules asked about (``Rule.project_names``), those
    some file of the run refers to (see :mod:`torchlint.analysis.mentions`)."""
    keywords: FrozenSet[str] = frozenset()
    """The asked-about keyword arguments (``persistent_workers``) that some
    call in the project passes by name: a setting the project already makes."""
    star_exports: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """For each project module that some file star-imports: the names
    ``from <module> import *`` binds by import (``torch`` -> ``torch`` when the
    module, or a module it star-imports in turn, does ``import torch``)."""
    methods: Mapping[str, Mapping[str, MethodShape]] = field(default_factory=dict)
    """For each module-level class of the project that defines one of the
    methods rules asked about (``Rule.project_methods``): those methods'
    shapes, by name."""
    called: FrozenSet[str] = frozenset()
    """The asked-about methods (``half``) that some call in the project makes
    on any value (``Rule.project_method_calls``)."""
    reexports: Mapping[str, str] = field(default_factory=dict)
    """Other dotted names of the classes above: ``pkg.Wrap`` -> ``pkg.parallel.Wrap``
    where ``pkg/__init__.py`` does ``from .parallel import Wrap`` (chains followed)."""
    whole_saves: Tuple[Tuple[str, int], ...] = ()
    """(path, line) of each ``torch.save`` of a whole object (a module, an
    optimizer, an instance of a project class) in the project's files, when
    a rule asked (``Rule.project_saves``; :mod:`torchlint.analysis.saves`)."""

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
        the project module binds it by an import; None otherwise."""
        return self.star_exports.get(module, {}).get(name)

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

    def derives_from(self, qualified: str, base: str) -> bool:
        """Whether the project class ``qualified`` derives from ``base``."""
        return base in self.bases_of(qualified)

    def subclasses_of(self, base: str) -> FrozenSet[str]:
        """Project classes that derive from ``base``, directly or not."""
        return frozenset(name for name in self.classes if self.derives_from(name, base))

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
        for module in sorted(self.star_exports):
            names = self.star_exports[module]
            digest.update(f"star\0{module}\0{','.join(f'{k}={names[k]}' for k in sorted(names))}\n".encode())
        for method in sorted(self.called):
            digest.update(f"called\0{method}\n".encode())
        for alias in sorted(self.reexports):
            digest.update(f"reexport\0{alias}\0{self.reexports[alias]}\n".encode())
        for path, line in self.whole_saves:
            digest.update(f"save\0{path}\0{line}\n".encode("utf-8", "surrogateescape"))
        for qualified in sorted(self.methods):
            shapes = self.methods[qualified]
            digest.update(f"methods\0{qualified}\0{[(n, shapes[n]) for n in sorted(shapes)]!r}\n".encode())
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


def _parse_quietly(data: Union[str, bytes]) -> Optional[ast.Module]:
    """CPython's tree of a file, or None when it does not parse (its lint
    reports why); syntax warnings are not the index's to show."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None


def module_name(path: Path, packages: Optional[Dict[Path, str]] = None,
                reals: Optional[Dict[str, str]] = None) -> str:
    """The dotted module name of a file: its stem, prefixed by the packages
    (folders with an ``__init__.py``) that contain it.  ``packages`` keeps
    each folder's package name, and ``reals`` each folder's real path,
    between calls of one pass over many files."""
    known = {} if packages is None else packages
    package = known.get(path.parent)  # the folder as written: resolving it is the costly part
    if package is None:
        real = Path(_real_folder(str(path.parent), reals)) if reals is not None else path.resolve().parent
        package = known[path.parent] = _package(real, known)
    stem = "" if path.stem == "__init__" else path.stem
    return ".".join(p for p in (package, stem) if p) or path.stem


def _package(folder: Path, known: Dict[Path, str]) -> str:
    """The dotted package name of a folder ("" outside any package); a loop
    up the folders, not recursion, so packages of any depth are named."""
    inside: List[Path] = []  # folders with an __init__.py, innermost first, whose name is not known yet
    current = folder
    while current not in known:
        if current.parent == current or not (current / "__init__.py").is_file():
            known[current] = ""
            break
        inside.append(current)
        current = current.parent
    above = known[current]
    for package in reversed(inside):
        above = known[package] = f"{above}.{package.name}" if above else package.name
    return known[folder]


def _real_folder(folder: str, reals: Dict[str, str]) -> str:
    """``os.path.realpath(folder)``, each folder of a pass resolved once: a
    folder's real path is its real parent's plus its name, unless that name
    is a symbolic link.  (``realpath`` itself checks every folder above: a
    tree of nested packages cost the cube of its depth.)"""
    if ".." in folder.split(os.sep):  # ".." after a symbolic link is not lexical
        return os.path.realpath(folder)
    folder = os.path.abspath(folder)
    pending: List[str] = []
    current = folder
    while current not in reals:
        parent = os.path.dirname(current)
        if parent == current:
            reals[current] = os.path.realpath(current)
            break
        pending.append(current)
        current = parent
    for item in reversed(pending):
        candidate = os.path.join(reals[os.path.dirname(item)], os.path.basename(item))
        reals[item] = os.path.realpath(candidate) if os.path.islink(candidate) else candidate
    return reals[folder]


class _ModuleNames:
    """:func:`module_name` of many files, each folder's package looked up
    once (one index build reads every file's name several times)."""

    def __init__(self) -> None:
        self._packages: Dict[Path, str] = {}
        self._reals: Dict[str, str] = {}
        self._names: Dict[str, str] = {}

    def __call__(self, path: Path) -> str:
        key = str(path)
        found = self._names.get(key)
        if found is None:
            found = self._names[key] = module_name(path, self._packages, self._reals)
        return found


def absolute_import(path: str, level: int, target: Optional[str]) -> Optional[str]:
    """What ``from <level dots><target> import ...`` in the file at ``path``
    names, as an absolute dotted module (None above the top package)."""
    file = Path(path)
    return _absolute(module_name(file), level, target, file.stem == "__init__")


def _dotted(node: ast.expr) -> Optional[str]:
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _absolute(module: str, level: int, target: Optional[str], is_package: bool) -> Optional[str]:
    if level == 0:
        return target
    pieces = module.split(".")
    keep = len(pieces) - level + (1 if is_package else 0)
    if keep < 0:
        return None
    base = ".".join(pieces[:keep])
    return ".".join(p for p in (base, target) if p)


def _add_import(table: Dict[str, str], statement: Union[ast.Import, ast.ImportFrom], module: str,
                is_package: bool) -> None:
    """Record the local names one import statement binds."""
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            if alias.asname:
                table[alias.asname] = alias.name
            else:
                root = alias.name.split(".", 1)[0]
                table[root] = root
        return
    source = _absolute(module, statement.level, statement.module, is_package)
    if source is None:
        return
    for alias in statement.names:
        if alias.name != "*":
            table[alias.asname or alias.name] = f"{source}.{alias.name}"


def _module_level(tree: ast.Module) -> Iterator[ast.stmt]:
    """The statements that run when the module is imported: its body and the
    bodies of top-level ``if``/``try``/``with``/loops, not functions or classes
    (last statement first: of two imports of one name, the first one is kept)."""
    pending: List[ast.stmt] = list(tree.body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            pending.extend(statement.body)
            pending.extend(getattr(statement, "orelse", []))
            pending.extend(getattr(statement, "finalbody", []))
            for handler in getattr(statement, "handlers", []):
                pending.extend(handler.body)
        else:
            yield statement


def module_imports(tree: ast.Module, module: str, is_package: bool) -> Dict[str, str]:
    """:func:`_module_imports`, for the facts built on this index's reading of imports."""
    return _module_imports(tree, module, is_package)


def _module_imports(tree: ast.Module, module: str, is_package: bool) -> Dict[str, str]:
    """Module-level local name -> dotted path it was imported as (imports in
    top-level ``if``/``try``/``with`` blocks count; those in functions and
    classes do not)."""
    table: Dict[str, str] = {}
    for statement in _module_level(tree):
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            _add_import(table, statement, module, is_package)
    return table


# A line that starts an import statement, and one that opens a parenthesised name list.
_IMPORT_LINE = re.compile(rb"(?m)^[ \t]*(?:from|import)[ \t][^\n]*")
_OPENS_NAMES = re.compile(rb"[ \t]*from[ \t][^\n(]*import[ \t]*\(")


def _import_statements(text: bytes) -> List[bytes]:
    """The import statements of a file's text, a multi-line one with its
    parentheses; a ``(`` that is never closed leaves just its line.  One pass:
    where the next ``)`` is, is looked up at most once per ``)`` (a regular
    expression searching for it from every unclosed line was quadratic)."""
    found: List[bytes] = []
    position = 0
    close = -2  # the first ")" after an earlier statement (-1: there is none after it)
    while True:
        line = _IMPORT_LINE.search(text, position)
        if line is None:
            return found
        opened = _OPENS_NAMES.match(text, line.start())
        if opened is not None:
            if close != -1 and close < opened.end():
                close = text.find(b")", opened.end())
            if close != -1:
                found.append(text[line.start():close + 1])
                position = close + 1
                continue
        found.append(line.group())
        position = line.end()


class _ImportLines:
    """The import statements of each text of one index build, found once
    (several facts read them)."""

    def __init__(self) -> None:
        self._found: Dict[int, Tuple[bytes, List[bytes]]] = {}

    def __call__(self, text: bytes) -> List[bytes]:
        held = self._found.get(id(text))
        if held is not None and held[0] is text:
            return held[1]
        statements = _import_statements(text)
        self._found[id(text)] = (text, statements)
        return statements


_STAR_IMPORT = re.compile(rb"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\*", re.MULTILINE)
_MAX_STAR_DEPTH = 8


@dataclass(frozen=True)
class _Exports:
    """One module's part of what its star import binds."""

    imported: Mapping[str, str]
    stars: Tuple[str, ...]
    public: Optional[FrozenSet[str]]
    """``__all__`` when the module sets it to a literal list or tuple of strings."""


def _exports_of(tree: ast.Module, module: str, is_package: bool) -> _Exports:
    stars: List[str] = []
    public: Optional[FrozenSet[str]] = None
    for statement in _module_level(tree):
        if isinstance(statement, ast.ImportFrom) and any(alias.name == "*" for alias in statement.names):
            source = _absolute(module, statement.level, statement.module, is_package)
            if source is not None:
                stars.append(source)
        elif (
            isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == "__all__"
            and isinstance(statement.value, (ast.List, ast.Tuple))
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in statement.value.elts)
        ):
            public = frozenset(str(e.value) for e in statement.value.elts if isinstance(e, ast.Constant))
    return _Exports(_module_imports(tree, module, is_package), tuple(sorted(stars)), public)


def _stored_exports(path: Path, data: bytes, module: str, store: Optional[Store]) -> Optional[_Exports]:
    """One module's exports, from ``store`` when it holds them; None when the
    file does not parse."""
    key = _store_key(path, data, module, None, _EXPORTS_FORMAT)
    if store is not None:
        stored = store.get_facts(key)
        if isinstance(stored, dict):
            imported, stars, public = stored.get("imported"), stored.get("stars"), stored.get("public")
            if (
                isinstance(imported, dict) and _all_of(str, *imported, *imported.values())
                and isinstance(stars, list) and _all_of(str, *stars)
                and (public is None or (isinstance(public, list) and _all_of(str, *public)))
            ):
                return _Exports(imported, tuple(stars), None if public is None else frozenset(public))
    tree = _parse_quietly(data)
    if tree is None:
        return None
    found = _exports_of(tree, module, path.stem == "__init__")
    if store is not None:
        store.put_facts(key, {
            "imported": dict(found.imported), "stars": list(found.stars),
            "public": None if found.public is None else sorted(found.public),
        })
    return found


def _star_exports(texts: Sequence[Tuple[Path, bytes]], store: Optional[Store] = None) -> Dict[str, Dict[str, str]]:
    """What ``from <module> import *`` binds by import, for the project modules
    that some file star-imports (and those they star-import in turn).  Only
    files whose module is asked for are parsed; a module name held by two
    files that disagree binds nothing.  A module that is not among the run's
    files is looked for on disk where Python would find it for the importing
    script (its folder, and the working folder), so that linting only the
    changed files (as pre-commit does) resolves as a run over the project."""
    wanted: Set[str] = set()
    roots: Set[Path] = {Path.cwd()}
    for path, text in texts:
        if b"import *" not in text:  # the usual spelling; others only lose a resolution
            continue
        stars = [(d, t.decode()) for d, t in _STAR_IMPORT.findall(text) if d or not _is_torch_module(t.decode())]
        if not stars:
            continue
        module = module_name(path)
        for dots, target in stars:
            name = _absolute(module, len(dots), target or None, path.stem == "__init__")
            if name and not _is_torch_module(name):
                wanted.add(name)
        roots.add(path.parent)
        # The folder above the file's top package: where a relative import starts.
        depth = module.count(".") + (path.stem == "__init__")
        roots.add(path.parents[depth] if depth < len(path.parents) else path.parent)
    if not wanted:
        return {}
    by_last: Dict[str, List[Tuple[Path, bytes]]] = {}
    for path, text in texts:
        by_last.setdefault(path.parent.name if path.stem == "__init__" else path.stem, []).append((path, text))
    parts: Dict[str, Optional[_Exports]] = {}
    pending = sorted(wanted)
    while pending:
        name = pending.pop()
        if name in parts:
            continue
        candidates = [(p, t) for p, t in by_last.get(name.rsplit(".", 1)[-1], []) if module_name(p) == name]
        if not candidates:
            candidates = _on_disk(name, roots)
        found: List[_Exports] = []
        for path, text in candidates:
            exports = _stored_exports(path, text, name, store)
            if exports is not None:
                found.append(exports)
        parts[name] = found[0] if len(found) == 1 or (found and all(f == found[0] for f in found)) else None
        for exports in found[:1]:
            pending.extend(star for star in exports.stars if star not in parts)
    return {name: _closure(name, parts, 0, set()) for name in sorted(wanted)}


def _is_torch_module(name: str) -> bool:
    return name == "torch" or name.startswith("torch.")


def _on_disk(name: str, roots: Iterable[Path], module_of: Callable[[Path], str] = module_name
             ) -> List[Tuple[Path, bytes]]:
    """The files module ``name`` is under one of ``roots`` (``models`` ->
    ``models.py`` or ``models/__init__.py``), whose module name it is."""
    relative = Path(*name.split("."))
    found: List[Tuple[Path, bytes]] = []
    for root in sorted(roots):
        for candidate in (root / relative.with_suffix(".py"), root / relative / "__init__.py"):
            if any(candidate == path for path, _ in found):
                continue
            for path, data in _read([candidate]):
                if module_of(path) == name:
                    found.append((path, data))
    return found


def _closure(name: str, parts: Mapping[str, Optional[_Exports]], depth: int, seen: Set[str]) -> Dict[str, str]:
    exports = parts.get(name)
    if exports is None or name in seen or depth > _MAX_STAR_DEPTH:
        return {}
    seen = seen | {name}
    bound: Dict[str, str] = {}
    for star in exports.stars:
        bound.update(_closure(star, parts, depth + 1, seen))
    bound.update(exports.imported)
    if exports.public is not None:
        return {k: v for k, v in bound.items() if k in exports.public}
    return {k: v for k, v in bound.items() if not k.startswith("_")}


def resolve_imported(expr: ast.expr, imports: Mapping[str, str]) -> Optional[str]:
    """The dotted name a (dotted) expression names through a module's imports."""
    return _resolve(expr, imports, {})


def _resolve(expr: ast.expr, imports: Mapping[str, str], local: Mapping[str, str]) -> Optional[str]:
    name = _dotted(expr)
    if name is None:
        return None
    root, _, rest = name.partition(".")
    base = local.get(root) or imports.get(root)
    if base is None:
        return None
    return canonical(f"{base}.{rest}" if rest else base)


def _grad_disabling(expr: ast.expr, imports: Mapping[str, str]) -> Optional[bool]:
    """True for ``torch.no_grad()``-like context managers and decorators,
    False for those that switch gradients on, None for anything else."""
    from torchlint.analysis.training import GRAD_CONTEXTS, GradMode

    target = expr.func if isinstance(expr, ast.Call) else expr
    qualified = _resolve(target, imports, {})
    mode = GRAD_CONTEXTS.get(qualified or "")
    if mode is None or qualified is None:
        return None
    if isinstance(expr, ast.Call) and qualified.endswith(("set_grad_enabled", "inference_mode")):
        first = expr.args[0] if expr.args else None
        constant = first.value if isinstance(first, ast.Constant) else None
        if qualified.endswith("set_grad_enabled"):
            return None if not isinstance(constant, bool) else not constant
        if constant is False:
            return False
    return mode is GradMode.DISABLED


class _CallScan:
    """One walk of a file's tree: every call of another module's function,
    whether it runs with gradients off, and whether its training step (the
    innermost loop around it, else its function) calls ``backward()``."""

    def __init__(self, path: str, module: str, is_package: bool, lines: Optional[List[int]]) -> None:
        self._path = path
        self._module = module
        self._is_package = is_package
        self._lines = lines
        self._found: List[Tuple[str, int, bool, int]] = []
        self._backward_steps: Set[int] = set()

    def _skipped(self, node: ast.AST, imports: Dict[str, str], step: int) -> bool:
        """A statement with none of the lines that matter (sorted ``lines``):
        not walked, but an import in it still binds its names."""
        if self._lines is None or not isinstance(node, ast.stmt):
            return False
        at = bisect.bisect_left(self._lines, node.lineno)
        if at < len(self._lines) and self._lines[at] <= (node.end_lineno or node.lineno):
            return False
        if isinstance(node, (ast.Import, ast.ImportFrom)) and step != 0:
            _add_import(imports, node, self._module, self._is_package)
        return True

    def sites(self) -> List[Tuple[str, CallSite]]:
        return [
            (target, CallSite(self._path, line, self._module, disabled, step in self._backward_steps))
            for target, line, disabled, step in self._found
        ]

    def scan(self, node: ast.AST, imports: Dict[str, str], disabled: bool, step: int) -> None:
        if self._skipped(node, imports, step):
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            modes = [_grad_disabling(d, imports) for d in node.decorator_list]
            for decorator in node.decorator_list:
                self.scan(decorator, imports, disabled, step)
            inner = dict(imports)  # the function's own imports stay in it
            for statement in node.body:
                self.scan(statement, inner, any(modes), id(node))
            return
        if isinstance(node, ast.ClassDef):
            inner = dict(imports)
            for child in ast.iter_child_nodes(node):
                self.scan(child, inner, False, id(node))
            return
        if isinstance(node, (ast.With, ast.AsyncWith)):
            body_disabled = disabled
            for item in node.items:
                self.scan(item.context_expr, imports, disabled, step)
                mode = _grad_disabling(item.context_expr, imports)
                if mode is not None:
                    body_disabled = mode
            for statement in node.body:
                self.scan(statement, imports, body_disabled, step)
            return
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            head = node.test if isinstance(node, ast.While) else node.iter
            self.scan(head, imports, disabled, step)
            for statement in [*node.body, *node.orelse]:
                self.scan(statement, imports, disabled, id(node))
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)) and step != 0:
            _add_import(imports, node, self._module, self._is_package)
        elif isinstance(node, ast.Call):
            self._call(node, imports, disabled, step)
        for child in ast.iter_child_nodes(node):
            self.scan(child, imports, disabled, step)

    def _call(self, node: ast.Call, imports: Mapping[str, str], disabled: bool, step: int) -> None:
        target = _resolve(node.func, imports, {})
        backward = isinstance(node.func, ast.Attribute) and node.func.attr == "backward" and target is None
        if backward or target in ("torch.autograd.grad", "torch.autograd.backward"):
            self._backward_steps.add(step)
        elif target is not None and not target.startswith(self._module + "."):
            self._found.append((target, node.lineno, disabled, step))


_GRADIENT_WORDS = re.compile(rb"backward|autograd")


def _focus_lines(text: Union[str, bytes], focus: "re.Pattern[bytes]") -> List[int]:
    """The numbers of the lines that mention a wanted name or a gradient call."""
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    found: Set[int] = set()
    for pattern in (focus, _GRADIENT_WORDS):
        for match in pattern.finditer(data):
            found.add(data.count(b"\n", 0, match.start()) + 1)
    return sorted(found)


def _parse_contribution(path: Path, text: Union[str, bytes], module: str,
                        focus: "Optional[re.Pattern[bytes]]" = None) -> Contribution:
    """Classes and calls of one file; with ``focus``, only statements with a
    line that matches it (or calls backward) are walked for calls."""
    tree = _parse_quietly(text)
    if tree is None:
        return Contribution()
    is_package = path.stem == "__init__"
    imports = _module_imports(tree, module, is_package)
    local = {
        s.name: f"{module}.{s.name}"
        for s in tree.body
        if isinstance(s, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    }
    classes = tuple(
        ClassInfo(
            f"{module}.{s.name}",
            str(path),
            s.lineno,
            tuple(b for b in (_resolve(base, imports, local) for base in s.bases) if b is not None),
        )
        for s in tree.body
        if isinstance(s, ast.ClassDef)
    )
    scan = _CallScan(str(path), module, is_package, None if focus is None else _focus_lines(text, focus))
    try:
        for statement in tree.body:
            scan.scan(statement, imports, False, 0)
        calls = tuple(scan.sites())
    except RecursionError:
        calls = ()
    return Contribution(classes, calls)


# -- contributions kept in the run's cache ------------------------------------------

_STORE_FORMAT = b"project-contribution-1"
_EXPORTS_FORMAT = b"star-exports-1"


def _store_key(path: Path, data: bytes, module: str, focus: "Optional[re.Pattern[bytes]]",
               kind: bytes = _STORE_FORMAT) -> str:
    digest = hashlib.sha256(kind)
    digest.update(f"\0{path}\0{module}\0".encode("utf-8", "surrogateescape"))
    digest.update(b"" if focus is None else focus.pattern)
    digest.update(b"\0")
    digest.update(data)
    return digest.hexdigest()


def _to_json(found: Contribution) -> Dict[str, Any]:
    return {
        "classes": [[c.qualified, c.path, c.line, list(c.bases)] for c in found.classes],
        "calls": [[t, s.path, s.line, s.caller_module, s.grad_disabled, s.training_step] for t, s in found.calls],
    }


def _from_json(data: Any) -> Optional[Contribution]:
    """The contribution a stored value holds; None unless it has exactly the
    shape :func:`_to_json` writes (a damaged entry is a miss)."""
    try:
        classes = tuple(
            ClassInfo(q, p, n, tuple(b)) for q, p, n, b in data["classes"]
            if _all_of(str, q, p) and _count(n) and isinstance(b, list) and _all_of(str, *b)
        )
        calls = tuple(
            (t, CallSite(p, n, m, g, r)) for t, p, n, m, g, r in data["calls"]
            if _all_of(str, t, p, m) and _count(n) and _all_of(bool, g, r)
        )
    except (KeyError, TypeError, ValueError):
        return None
    if len(classes) != len(data["classes"]) or len(calls) != len(data["calls"]):
        return None
    return Contribution(classes, calls)


def _all_of(kind: type, *values: Any) -> bool:
    return all(isinstance(v, kind) for v in values)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def contribution(path: Path, data: bytes, module: str, store: Optional[Store] = None,
                 focus: "Optional[re.Pattern[bytes]]" = None) -> Contribution:
    """One file's contribution, from ``store`` when it holds it (a warm run
    parses nothing), else parsed and stored.  ``focus`` (names of wanted
    functions) limits the walk for calls to the statements that mention one."""
    if store is None:
        return _parse_contribution(path, data, module, focus)
    key = _store_key(path, data, module, focus)
    stored = store.get_facts(key)
    found = _from_json(stored) if isinstance(stored, dict) else None
    if found is None:
        found = _parse_contribution(path, data, module, focus)
        store.put_facts(key, _to_json(found))
    return found


def _index(texts: Iterable[Tuple[Path, Union[str, bytes], str]]) -> ProjectIndex:
    classes: Dict[str, ClassInfo] = {}
    calls: Dict[str, List[CallSite]] = {}
    modules: Dict[str, str] = {}
    for path, text, module in texts:
        found = _parse_contribution(path, text, module)
        modules[os.path.abspath(path)] = module
        for info in found.classes:
            classes.setdefault(info.qualified, info)
        for target, site in found.calls:
            calls.setdefault(target, []).append(site)
    return ProjectIndex(classes, {name: tuple(sites) for name, sites in calls.items()}, modules)


def _read(files: Iterable[Path]) -> Iterator[Tuple[Path, bytes]]:
    """The bytes of each regular ``.py`` file; others are skipped (linting
    them reports why).  Bytes, not text: ``ast.parse`` honours the encoding
    cookie itself, and most files are only searched, never parsed."""
    for path in files:
        if path.suffix != ".py":
            continue
        try:
            data = read_regular(path, MAX_FILE_BYTES)
        except SourceError:
            continue
        yield path, data


def build_index(files: Iterable[Path]) -> ProjectIndex:
    """Index every Python file among ``files`` (classes and calls)."""
    return _index((path, data, module_name(path)) for path, data in _read(files))


def build_hierarchy(files: Iterable[Path], bases: Iterable[str]) -> ProjectIndex:
    """Index only the classes that derive, through the project, from one of
    ``bases`` (dotted names); calls are not indexed (see :func:`_hierarchy`)."""
    return ProjectIndex(_hierarchy(list(_read(files)), sorted(set(bases)), None))


def _hierarchy(texts: Sequence[Tuple[Path, bytes]], bases: Sequence[str],
               store: Optional[Store]) -> Dict[str, ClassInfo]:
    """The project classes deriving from one of ``bases``, parsing only the
    files whose text has a class header naming a base or a subclass already
    found: a run pays for the few files that matter, not for parsing the
    whole project twice."""
    wanted = {base.rsplit(".", 1)[-1].encode() for base in bases}
    roots = set(bases)
    done: Set[int] = set()
    found: Dict[str, ClassInfo] = {}
    while True:
        # A class header naming a wanted base between its parentheses (the
        # search stops at any parenthesis: one that never closes costs its
        # own text, not the rest of the file's).
        header = re.compile(
            rb"class\s+\w+\s*\([^()]*\b(?:" + b"|".join(re.escape(w) for w in sorted(wanted)) + rb")\b"
        )
        batch = [i for i, (_, text) in enumerate(texts) if i not in done and header.search(text)]
        if not batch:
            break
        for i in batch:
            done.add(i)
            path, text = texts[i]
            for info in contribution(path, text, module_name(path), store).classes:
                found.setdefault(info.qualified, info)
        index = ProjectIndex(found)
        known = {name for root in roots for name in index.subclasses_of(root)}
        wanted |= {name.rsplit(".", 1)[-1].encode() for name in known}
    index = ProjectIndex(found)
    relevant = {name for root in roots for name in index.subclasses_of(root)}
    return {name: found[name] for name in sorted(relevant)}


def _reexports(texts: Sequence[Tuple[Path, bytes]], defined: Iterable[str], store: Optional[Store],
               statements: Callable[[bytes], List[bytes]] = _import_statements,
               module_of: Callable[[Path], str] = module_name) -> Dict[str, str]:
    """The other dotted names under which packages of the project make the
    ``defined`` classes available by importing them in their ``__init__.py``
    (``from .parallel import Wrap`` gives ``pkg.Wrap``), chains of such
    imports followed.  Only package files with an import statement naming
    one of the classes (or a name that re-exports one) are parsed: a plain
    module that imports a class is seldom the path others import it by.
    ``texts`` hold the packages the run's files import (:func:`_with_imported`)."""
    targets = set(defined)
    if not targets:
        return {}
    imported: Dict[str, str] = {}
    names = {name.rsplit(".", 1)[-1] for name in targets}
    done: Set[int] = set()
    while names:
        word = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in sorted(names)) + rb")\b")
        wanted, names = names, set()
        for i, (path, text) in enumerate(texts):
            if i in done or path.stem != "__init__" or not any(word.search(s) for s in statements(text)):
                continue
            done.add(i)
            module = module_of(path)
            exports = _stored_exports(path, text, module, store)
            for local, source in (exports.imported if exports is not None else {}).items():
                if source.rsplit(".", 1)[-1] in wanted:
                    imported[f"{module}.{local}"] = source
                    names.add(local)  # another module may import it from this one in turn
    found: Dict[str, str] = {}
    for alias in imported:
        current, hops = alias, 0
        while current in imported and current not in targets and hops <= _MAX_STAR_DEPTH:
            current, hops = imported[current], hops + 1
        if current in targets and current != alias:
            found[alias] = current
    return dict(sorted(found.items()))


_FROM_STATEMENT = re.compile(rb"from\s+(\.*)([\w.]*)\s+import\s+\(?([^)]*)\)?", re.DOTALL)
_NAME_LIST = re.compile(rb"([\w.]+)(?:\s+as\s+\w+)?")
_MAX_MODULE_HOPS = 2
"""Imported modules that are not packages' ``__init__`` files are followed
this many imports away from the run's files (a package's ``__init__``, which
only re-exports, costs no hop)."""


def _imported_modules(statements: List[bytes], module: str, is_package: bool) -> Iterator[Tuple[str, Tuple[str, ...]]]:
    """Each module one of a file's import ``statements`` loads, absolute, with the
    names a ``from`` import takes from it (which may be its submodules);
    for ``import a.b``, each of ``a`` and ``a.b``."""
    for statement in statements:
        statement = statement.strip()
        found = _FROM_STATEMENT.match(statement)
        if found is not None:
            dots, target, names = found.groups()
            source = _absolute(module, len(dots), target.decode() or None, is_package)
            if source is not None:
                yield source, tuple(n.decode() for n in _NAME_LIST.findall(names) if n != b"*")
        elif statement.startswith(b"import"):
            for name in _NAME_LIST.findall(statement[len(b"import"):]):
                parts = name.decode().split(".")
                for end in range(1, len(parts) + 1):
                    yield ".".join(parts[:end]), ()


def _top_names(root: Path) -> FrozenSet[str]:
    """The modules and packages importable from ``root`` by their first name."""
    try:
        entries = list(os.scandir(root))
    except OSError:
        return frozenset()
    return frozenset(e.name[:-3] if e.name.endswith(".py") else e.name for e in entries
                     if e.name.endswith(".py") or e.name.isidentifier())


def _with_imported(texts: Sequence[Tuple[Path, bytes]],
                   statements: Callable[[bytes], List[bytes]] = _import_statements,
                   module_of: Optional[_ModuleNames] = None) -> List[Tuple[Path, bytes]]:
    """``texts`` plus the project modules they import that are not among
    them, read from disk where Python would find them for the importing
    script (the folder above its top package, the working folder), through
    re-exporting packages: so that linting only the changed files (as
    pre-commit does) knows the project's classes they use as a run over the
    whole project does.  torch's own modules are not followed."""
    module_of = module_of or _ModuleNames()
    names = {os.path.abspath(path): module_of(path) for path, _ in texts}
    known = set(names.values())
    package_modules = {module for where, module in names.items() if os.path.basename(where) == "__init__.py"}
    folders: Set[str] = set()
    for where, module in names.items():
        # Up to the folder above the top package (one split, not a dirname per package level).
        ups = 1 + module.count(".") + (os.path.basename(where) == "__init__.py")
        folders.add(where.rsplit(os.sep, ups)[0] or os.sep)
    roots: Set[Path] = {Path.cwd(), *map(Path, folders)}
    tops = {root: _top_names(root) for root in roots}
    pending = [(path, text, 0) for path, text in texts]
    added: List[Tuple[Path, bytes]] = []

    def follow(imported: str, hops: int) -> bool:
        """Read ``imported`` from disk when it is a project module not yet
        known; whether it is a package (its names may be submodules)."""
        if imported in known or _is_torch_module(imported):
            return imported in package_modules
        known.add(imported)
        first = imported.split(".", 1)[0]
        for found, data in _on_disk(imported, [r for r in roots if first in tops[r]], module_of):
            if found.name == "__init__.py":
                package_modules.add(imported)
            cost = hops + (found.name != "__init__.py")
            where = os.path.abspath(found)
            if cost <= _MAX_MODULE_HOPS and where not in names:
                names[where] = imported
                added.append((found, data))
                pending.append((found, data, cost))
        return imported in package_modules

    while pending:
        path, text, hops = pending.pop()
        module = names.get(os.path.abspath(path)) or module_of(path)
        for source, taken in _imported_modules(statements(text), module, path.stem == "__init__"):
            if follow(source, hops):
                for name in taken:
                    follow(f"{source}.{name}", hops)
    return [*texts, *added]


_METHODS_FORMAT = b"project-methods-1"


def _defined_methods(tree: ast.Module, module: str, wanted: FrozenSet[str]) -> List[Tuple[str, str, MethodShape]]:
    """(class, method, shape) for each wanted method a module-level class
    defines in its own body (the last ``def`` of a name is the one that counts)."""
    found: Dict[Tuple[str, str], Optional[MethodShape]] = {}
    for statement in reversed(list(_module_level(tree))):  # source order
        if not isinstance(statement, ast.ClassDef):
            continue
        for member in statement.body:
            if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and member.name in wanted:
                found[(f"{module}.{statement.name}", member.name)] = MethodShape.of_ast(member)
    return [(cls, name, shape) for (cls, name), shape in found.items() if shape is not None]


def _stored_methods(path: Path, data: bytes, module: str, wanted: FrozenSet[str], pattern: "re.Pattern[bytes]",
                    store: Optional[Store]) -> List[Tuple[str, str, MethodShape]]:
    """One file's part of :attr:`ProjectIndex.methods`, from ``store`` when it holds it."""
    key = _store_key(path, data, module, pattern, _METHODS_FORMAT)
    stored = store.get_facts(key) if store is not None else None
    if isinstance(stored, list):
        try:
            parts = [
                (c, n, MethodShape(tuple(k), p, bool(v), bool(w))) for c, n, k, p, v, w in stored
                if _all_of(str, c, n, *k) and _count(p) and _all_of(bool, v, w)
            ]
            if len(parts) == len(stored):
                return parts
        except (TypeError, ValueError):
            pass
    tree = _parse_quietly(data)
    if tree is None:
        return []
    found = _defined_methods(tree, module, wanted)
    if store is not None:
        store.put_facts(key, [[c, n, list(m.keywords), m.positional, m.variadic_positional, m.variadic_keywords]
                              for c, n, m in found])
    return found


def _methods(texts: Sequence[Tuple[Path, bytes]], names: Iterable[str], store: Optional[Store],
             module_of: Callable[[Path], str] = module_name) -> Dict[str, Dict[str, MethodShape]]:
    """The shapes of the wanted methods in the project's classes.  Only files
    with a ``def`` of one of them are parsed; a class name two files define
    with different shapes (two scripts both called ``train.py``) is left out."""
    wanted = frozenset(names)
    if not wanted:
        return {}
    pattern = re.compile(rb"\bdef\s+(?:" + b"|".join(re.escape(n.encode()) for n in sorted(wanted)) + rb")\s*\(")
    shapes: Dict[str, Dict[str, MethodShape]] = {}
    clashes: Set[Tuple[str, str]] = set()
    words = [name.encode() for name in sorted(wanted)]
    for path, text in texts:
        if not any(word in text for word in words) or pattern.search(text) is None:
            continue
        for cls, name, shape in _stored_methods(path, text, module_of(path), wanted, pattern, store):
            known = shapes.setdefault(cls, {})
            if known.setdefault(name, shape) != shape:
                clashes.add((cls, name))
    for cls, name in clashes:
        del shapes[cls][name]
    return {cls: dict(sorted(known.items())) for cls, known in sorted(shapes.items()) if known}


@dataclass(frozen=True)
class CallerQuery:
    """Which module-level functions a rule asks the callers of: every
    function of a file that contains one of ``module_words``, and the
    functions whose own text contains one of ``function_words``.  Narrow
    words keep a cold run cheap: only files that import such a module and
    name such a function are parsed."""

    module_words: Tuple[str, ...] = ()
    function_words: Tuple[str, ...] = ()

    def merged(self, other: "CallerQuery") -> "CallerQuery":
        """What two rules ask together."""
        return CallerQuery(
            tuple(sorted(set(self.module_words) | set(other.module_words))),
            tuple(sorted(set(self.function_words) | set(other.function_words))),
        )


_TOP_LEVEL = re.compile(rb"(?m)^(?:@|class\b|(?:async[ \t]+)?def[ \t]+(\w+))")


def _words(words: Iterable[str]) -> Optional["re.Pattern[bytes]"]:
    wanted = sorted(set(words))
    return re.compile(b"|".join(re.escape(w.encode()) for w in wanted)) if wanted else None


def _callee_functions(text: bytes, query: CallerQuery, module_words: Optional["re.Pattern[bytes]"],
                      function_words: Optional["re.Pattern[bytes]"]) -> Set[bytes]:
    """The module-level functions of one file that ``query`` asks about."""
    every = module_words is not None and module_words.search(text) is not None
    if not every and (function_words is None or function_words.search(text) is None):
        return set()
    starts = list(_TOP_LEVEL.finditer(text))
    names: Set[bytes] = set()
    for i, match in enumerate(starts):
        name = match.group(1)
        if name is None:
            continue
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        if every or (function_words is not None and function_words.search(text, match.start(), end)):
            names.add(name)
    return names


def _callers(texts: Sequence[Tuple[Path, bytes]], query: CallerQuery, store: Optional[Store],
             statements: Callable[[bytes], List[bytes]] = _import_statements,
             module_of: Callable[[Path], str] = module_name,
             ) -> Tuple[Dict[str, Tuple[CallSite, ...]], Dict[str, str]]:
    """Calls from other modules of the functions ``query`` asks about.  Only
    files with an import line naming one of their modules and a mention of
    one of the functions are parsed (or read from ``store``)."""
    module_words, function_words = _words(query.module_words), _words(query.function_words)
    modules: Dict[str, str] = {}
    names: Set[bytes] = set()
    for path, text in texts:
        found = _callee_functions(text, query, module_words, function_words)
        if found:
            modules[os.path.abspath(path)] = module_of(path)
            names |= found
    if not modules:
        return {}, {}
    callee_modules = set(modules.values())
    stems = {name.rsplit(".", 1)[-1].encode() for name in callee_modules}
    calls: Dict[str, List[CallSite]] = {}
    for path, text in texts:
        wanted = _named_functions(statements(text), text, stems, names)
        if not wanted:
            continue
        focus = re.compile(rb"\b(?:" + b"|".join(re.escape(n) for n in sorted(wanted)) + rb")\b")
        module = modules.get(os.path.abspath(path)) or module_of(path)
        for target, site in contribution(path, text, module, store, focus).calls:
            if target.rsplit(".", 1)[0] in callee_modules:
                calls.setdefault(target, []).append(site)
    return {name: tuple(sites) for name, sites in sorted(calls.items())}, modules



_WORD = re.compile(rb"\w+")


def _named_functions(statements: List[bytes], text: bytes, stems: Set[bytes], names: Set[bytes]) -> Set[bytes]:
    """The wanted functions a file may call: named in an import statement
    that names one of their modules (``from .engine import evaluate``), or
    as an attribute of such a module (``import engine; engine.evaluate``)."""
    if not statements:
        return set()
    words = set(_WORD.findall(b" ".join(statements)))
    imported = words & stems
    if not imported:
        return set()
    found = words & names
    attribute = re.compile(rb"\b(?:" + b"|".join(re.escape(s) for s in sorted(imported)) + rb")\s*\.\s*(\w+)")
    found |= set(attribute.findall(text)) & names
    return found


def used_in_calls(texts: Iterable[Tuple[Path, bytes]], keywords: Iterable[str] = (),
                  methods: Iterable[str] = ()) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """Which of the ``keywords`` some call in ``texts`` (path, contents)
    passes by name, and which of the ``methods`` some call makes on any value
    (``x.half()``), in one walk per file; only files whose text contains a
    word still looked for are parsed."""
    remaining_keywords, remaining_methods = set(keywords), set(methods)
    passed: Set[str] = set()
    called: Set[str] = set()
    for _path, text in texts:
        remaining = remaining_keywords | remaining_methods
        if not remaining:
            break
        if not any(word.encode() in text for word in remaining):
            continue
        tree = _parse_quietly(text)
        if tree is None:
            continue
        try:
            nodes = list(ast.walk(tree))
        except RecursionError:
            continue
        for node in nodes:
            if isinstance(node, ast.keyword) and node.arg in remaining_keywords:
                passed.add(node.arg)
                remaining_keywords.discard(node.arg)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in remaining_methods:
                    called.add(node.func.attr)
                    remaining_methods.discard(node.func.attr)
    return frozenset(passed), frozenset(called)


def index_of_sources(sources: Mapping[str, str]) -> ProjectIndex:
    """The index of in-memory files (relative path -> text), for tests and
    editors: every folder of a path counts as a package."""
    return _index((Path(name), sources[name], _dotted_path(Path(name))) for name in sorted(sources))


def _dotted_path(path: Path) -> str:
    parts = list(path.with_suffix("").parts)
    if parts and parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


# -- the run's index --------------------------------------------------------------

_CURRENT: List[ProjectIndex] = [EMPTY]


def install(index: ProjectIndex) -> None:
    """Make ``index`` the one the engine gives rules (also a worker
    process's initializer)."""
    _CURRENT[0] = index


def current() -> ProjectIndex:
    """The index of this run (empty unless the runner built one)."""
    return _CURRENT[0]


def prepare(files: Sequence[Path], bases: Iterable[str], callers: Optional[CallerQuery] = None,
            store: Optional[Store] = None, names: Iterable[str] = (),
            keywords: Iterable[str] = (), methods: Iterable[str] = (),
            method_calls: Iterable[str] = (), saves: bool = False) -> ProjectIndex:
    """The runner's hook: build and install the index once, before linting,
    for the class hierarchies, the callers, the names, the keyword
    arguments, the methods and the method calls enabled rules ask about, and for what star imports of project
    modules bind (nothing of either: the empty index).  ``store`` keeps each parsed file's
    contribution for the next run."""
    wanted = sorted(set(bases))
    asked = frozenset(names)
    asked_keywords = sorted(set(keywords))
    asked_methods = sorted(set(methods))
    asked_calls = sorted(set(method_calls))
    asks_callers = callers is not None and bool(callers.module_words or callers.function_words)
    texts = list(_read(files))
    stars = _star_exports(texts, store)
    if not (wanted or asks_callers or asked or asked_keywords or asked_methods or asked_calls or saves):
        # No rule asks about the project; star imports of its modules still resolve.
        index = ProjectIndex(star_exports=stars) if stars else EMPTY
        install(index)
        return index
    statements = _ImportLines()
    module_of = _ModuleNames()
    indexed = _with_imported(texts, statements, module_of) if wanted or asked_methods else texts
    classes = _hierarchy(indexed, wanted, store) if wanted else {}
    calls, modules = (
        _callers(texts, callers, store, statements, module_of) if callers is not None and asks_callers else ({}, {})
    )
    used: FrozenSet[str] = frozenset()
    if asked:
        from torchlint.analysis.mentions import used_anywhere

        used = used_anywhere(texts, asked)
    passed, called = used_in_calls(texts, asked_keywords, asked_calls)
    shapes = _methods(indexed, asked_methods, store, module_of)
    reexports = _reexports(indexed, {*classes, *shapes}, store, statements, module_of)
    whole_saves = _whole_saves(texts, store, module_of) if saves else ()
    index = ProjectIndex(classes, calls, modules, used, passed, stars, shapes, called, reexports, whole_saves)
    install(index)
    return index


_SAVES_FORMAT = b"whole-saves-1"


def _whole_saves(texts: Sequence[Tuple[Path, bytes]], store: Optional[Store],
                 module_of: Callable[[Path], str]) -> Tuple[Tuple[str, int], ...]:
    """:attr:`ProjectIndex.whole_saves` of the run's files.  A save of what
    an imported callable returns counts when that callable is a module-level
    class of one of the run's files.  Each file's saves are kept in
    ``store``; a file without the word ``save`` is not parsed."""
    from torchlint.analysis.saves import CLASS_HEADER, may_save, saves_of_module

    modules: Dict[str, bytes] = {}
    candidates: List[Tuple[str, int, Tuple[str, ...]]] = []
    for path, data in texts:
        module = module_of(path)
        modules.setdefault(module, data)
        if not may_save(data):
            continue
        key = _store_key(path, data, module, None, _SAVES_FORMAT)
        stored = store.get_facts(key) if store is not None else None
        found: List[Tuple[int, Tuple[str, ...]]]
        if isinstance(stored, list) and all(
                isinstance(item, list) and len(item) == 2 and _count(item[0]) and isinstance(item[1], list)
                and _all_of(str, *item[1]) for item in stored):
            found = [(item[0], tuple(item[1])) for item in stored]
        else:
            tree = _parse_quietly(data)
            found = [] if tree is None else saves_of_module(tree, module, path.stem == "__init__")
            if store is not None:
                store.put_facts(key, [[line, list(names)] for line, names in found])
        candidates.extend((str(path), line, names) for line, names in found)
    classes: Set[str] = set()
    for module in {name.rpartition(".")[0] for _, _, names in candidates for name in names}:
        text = modules.get(module)
        if text is not None:  # only the modules a save's condition names are read for classes
            classes.update(f"{module}.{name.decode('utf-8', 'replace')}" for name in CLASS_HEADER.findall(text))
    return tuple(sorted((path, line) for path, line, names in candidates
                        if not names or any(name in classes for name in names)))
