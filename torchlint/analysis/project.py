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
import hashlib
import os
import re
import stat
import warnings
from functools import cached_property
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Sequence, Set, Tuple, Union

from torchlint.names import canonical
from torchlint.sourcefile import MAX_FILE_BYTES


@dataclass(frozen=True)
class ClassInfo:
    """A class defined at module level: its dotted name and its bases, each
    resolved through the defining module's imports."""

    qualified: str
    path: str
    line: int
    bases: Tuple[str, ...]


@dataclass(frozen=True)
class CallSite:
    """One call of a function imported from another module."""

    path: str
    line: int
    caller_module: str


@dataclass(frozen=True)
class ProjectIndex:
    """Classes and cross-module calls of the files of one run."""

    classes: Mapping[str, ClassInfo] = field(default_factory=dict)
    calls: Mapping[str, Tuple[CallSite, ...]] = field(default_factory=dict)
    keywords: FrozenSet[str] = frozenset()
    """The asked-about keyword arguments (``persistent_workers``) that some
    call in the project passes by name: a setting the project already makes."""

    def passes_keyword(self, name: str) -> bool:
        """Whether some call in the project's files passes ``name=...``."""
        return name in self.keywords

    def bases_of(self, qualified: str) -> FrozenSet[str]:
        """Every base, direct or inherited through classes of the project."""
        found: Set[str] = set()
        stack = [qualified]
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

    @cached_property
    def fingerprint(self) -> str:
        """Changes whenever a fact changes (for cache keys)."""
        digest = hashlib.sha256()
        for name in sorted(self.classes):
            digest.update(f"{name}\0{','.join(self.classes[name].bases)}\n".encode())
        for name in sorted(self.calls):
            digest.update(f"{name}\0{len(self.calls[name])}\n".encode())
        for keyword in sorted(self.keywords):
            digest.update(f"keyword\0{keyword}\n".encode())
        return digest.hexdigest()


EMPTY = ProjectIndex()


def module_name(path: Path) -> str:
    """The dotted module name of a file: its stem, prefixed by the packages
    (folders with an ``__init__.py``) that contain it."""
    parts = [] if path.stem == "__init__" else [path.stem]
    folder = path.resolve().parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts) or path.stem


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


def _module_imports(tree: ast.Module, module: str, is_package: bool) -> Dict[str, str]:
    """Module-level local name -> dotted path it was imported as (imports in
    top-level ``if``/``try``/``with`` blocks count; those in functions and
    classes do not)."""
    table: Dict[str, str] = {}
    pending: List[ast.stmt] = list(tree.body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            pending.extend(statement.body)
            pending.extend(getattr(statement, "orelse", []))
            pending.extend(getattr(statement, "finalbody", []))
            for handler in getattr(statement, "handlers", []):
                pending.extend(handler.body)
        elif isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    table[alias.asname] = alias.name
                else:
                    root = alias.name.split(".", 1)[0]
                    table[root] = root
        elif isinstance(statement, ast.ImportFrom):
            source = _absolute(module, statement.level, statement.module, is_package)
            if source is None:
                continue
            for alias in statement.names:
                if alias.name != "*":
                    table[alias.asname or alias.name] = f"{source}.{alias.name}"
    return table


def _resolve(expr: ast.expr, imports: Mapping[str, str], local: Mapping[str, str]) -> Optional[str]:
    name = _dotted(expr)
    if name is None:
        return None
    root, _, rest = name.partition(".")
    base = local.get(root) or imports.get(root)
    if base is None:
        return None
    return canonical(f"{base}.{rest}" if rest else base)


def _file_facts(
    path: Path, text: Union[str, bytes], module: str, calls: bool = True
) -> Tuple[List[ClassInfo], List[Tuple[str, CallSite]]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return [], []
    imports = _module_imports(tree, module, path.stem == "__init__")
    local = {
        s.name: f"{module}.{s.name}"
        for s in tree.body
        if isinstance(s, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    }
    classes = [
        ClassInfo(
            f"{module}.{s.name}",
            str(path),
            s.lineno,
            tuple(b for b in (_resolve(base, imports, local) for base in s.bases) if b is not None),
        )
        for s in tree.body
        if isinstance(s, ast.ClassDef)
    ]
    sites: List[Tuple[str, CallSite]] = []
    try:
        nodes = list(ast.walk(tree)) if calls else []
    except RecursionError:
        nodes = []
    for node in nodes:
        if isinstance(node, ast.Call):
            target = _resolve(node.func, imports, {})
            if target is not None and not target.startswith(module + "."):
                sites.append((target, CallSite(str(path), node.lineno, module)))
    return classes, sites


def _index(texts: Iterable[Tuple[Path, Union[str, bytes], str]]) -> ProjectIndex:
    classes: Dict[str, ClassInfo] = {}
    calls: Dict[str, List[CallSite]] = {}
    for path, text, module in texts:
        found_classes, found_calls = _file_facts(path, text, module)
        for info in found_classes:
            classes.setdefault(info.qualified, info)
        for target, site in found_calls:
            calls.setdefault(target, []).append(site)
    return ProjectIndex(classes, {name: tuple(sites) for name, sites in calls.items()})


def _read(files: Iterable[Path]) -> Iterator[Tuple[Path, bytes]]:
    """The bytes of each regular ``.py`` file; others are skipped (linting
    them reports why).  Bytes, not text: ``ast.parse`` honours the encoding
    cookie itself, and most files are only searched, never parsed."""
    for path in files:
        if path.suffix != ".py":
            continue
        try:
            status = os.stat(path)
            if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_FILE_BYTES:
                continue
            with open(path, "rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
        except OSError:
            continue
        yield path, data


def build_index(files: Iterable[Path]) -> ProjectIndex:
    """Index every Python file among ``files`` (classes and calls)."""
    return _index((path, data, module_name(path)) for path, data in _read(files))


def build_hierarchy(files: Iterable[Path], bases: Iterable[str]) -> ProjectIndex:
    """Index only the classes that derive, through the project, from one of
    ``bases`` (dotted names), parsing only the files whose text mentions a
    base or a subclass already found: a run pays for the few files that
    matter, not for parsing the whole project twice.  Calls are not indexed."""
    # Only files with a class header naming a wanted base are parsed.
    texts = list(_read(files))
    wanted = {base.rsplit(".", 1)[-1].encode() for base in bases}
    roots = set(bases)
    done: Set[int] = set()
    found: Dict[str, ClassInfo] = {}
    while True:
        # A class header naming a wanted base between its parentheses.
        header = re.compile(
            rb"class\s+\w+\s*\([^)]*\b(?:" + b"|".join(re.escape(w) for w in sorted(wanted)) + rb")\b"
        )
        batch = [i for i, (_, text) in enumerate(texts) if i not in done and header.search(text)]
        if not batch:
            break
        for i in batch:
            done.add(i)
            path, text = texts[i]
            for info in _file_facts(path, text, module_name(path), calls=False)[0]:
                found.setdefault(info.qualified, info)
        index = ProjectIndex(found)
        known = {name for root in roots for name in index.subclasses_of(root)}
        wanted |= {name.rsplit(".", 1)[-1].encode() for name in known}
    index = ProjectIndex(found)
    relevant = {name for root in roots for name in index.subclasses_of(root)}
    return ProjectIndex({name: found[name] for name in sorted(relevant)})


def passed_keywords(files: Iterable[Path], wanted: Iterable[str]) -> FrozenSet[str]:
    """Which of the ``wanted`` keyword arguments some call in ``files``
    passes by name; only files whose text contains one are parsed."""
    remaining = set(wanted)
    found: Set[str] = set()
    for _path, text in _read(files):
        if not remaining:
            break
        if not any(word.encode() in text for word in remaining):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
        try:
            nodes = list(ast.walk(tree))
        except RecursionError:
            continue
        for node in nodes:
            if isinstance(node, ast.keyword) and node.arg in remaining:
                found.add(node.arg)
                remaining.discard(node.arg)
    return frozenset(found)


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


def prepare(files: Sequence[Path], bases: Iterable[str], keywords: Iterable[str] = ()) -> ProjectIndex:
    """The runner's hook: build and install the index once, before linting,
    for the class hierarchies and keyword arguments enabled rules ask about
    (none: the empty index)."""
    wanted = sorted(set(bases))
    index = build_hierarchy(files, wanted) if wanted else EMPTY
    asked = sorted(set(keywords))
    if asked:
        index = replace(index, keywords=passed_keywords(files, asked))
    install(index)
    return index
