"""Import resolution across the project's files, read with CPython's ``ast``.

Which dotted module a file is, what its import statements bind, which
project modules a run's files import (read from disk when they are not among
the run's files), what ``from <module> import *`` binds and under which
other names packages re-export a class.  Everything here is a function of
files' bytes and paths; nothing is kept between calls but what a caller
passes in.  Each pass is linear in the project's imports: a module is read,
parsed and resolved once per index build.
"""

from __future__ import annotations

import ast
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Sequence, Set, Tuple, Union

from torchlint.analysis.store import Store, all_of, store_key
from torchlint.analysis.canonical import canonical
from torchlint.analysis.gradmode import GradMode, grad_mode_of
from torchlint.source.sourcefile import MAX_FILE_BYTES, SourceError, read_regular
from torchlint.source.stamps import Seen
from torchlint.source.tree import python_literal_bool

Text = Tuple[Path, bytes]
"""A file of the run: its path and its bytes."""


def parse_quietly(data: Union[str, bytes]) -> Optional[ast.Module]:
    """CPython's tree of a file, or None when it does not parse (its lint
    reports why); syntax warnings are not the index's to show."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None


def read_sources(files: Iterable[Path], seen: Optional[Seen] = None) -> Iterator[Text]:
    """The bytes of each regular ``.py`` file; others are skipped (linting
    them reports why).  Bytes, not text: ``ast.parse`` honours the encoding
    cookie itself, and most files are only searched, never parsed.  ``seen``
    remembers each file read (what the index depends on)."""
    for path in files:
        if path.suffix != ".py":
            continue
        try:
            # regular files only: never a FIFO or a device
            data = read_regular(path, MAX_FILE_BYTES) if seen is None else seen.read(path, MAX_FILE_BYTES)
        except SourceError:
            continue
        yield path, data


# -- module names -----------------------------------------------------------------


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
    """The dotted package name of a folder ("" outside any package)."""
    chain: List[Path] = []
    while folder not in known:
        # A folder whose name is no identifier (`fast-autoaugment`, a checkout) cannot be
        # imported as a package, whatever it holds: the packages start below it.
        if not (folder.name.isidentifier() and (folder / "__init__.py").is_file() and folder.parent != folder):
            known[folder] = ""
            break
        chain.append(folder)
        folder = folder.parent
    above = known[folder]
    for inner in reversed(chain):  # outermost first
        above = known[inner] = f"{above}.{inner.name}" if above else inner.name
    return above


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


class ModuleNames:
    """:func:`module_name` of many files, each folder's package and real path
    looked up once (one index build reads every file's name several times).
    ``seen``, when given, collects what else the build reads from disk
    (modules read by :func:`on_disk`, the roots :func:`with_imported` lists);
    :meth:`depended` adds the paths the module names depend on."""

    def __init__(self, seen: Optional[Seen] = None) -> None:
        self._packages: Dict[Path, str] = {}
        self._reals: Dict[str, str] = {}
        self._names: Dict[str, str] = {}
        self.seen = seen

    def depended(self) -> None:
        """Tell ``seen`` which paths the names found so far depend on: each
        folder's ``__init__.py`` (a package or not) and each folder resolved
        on the way to a real path (a folder that becomes a link moves it)."""
        if self.seen is None:
            return
        for folder in self._packages:
            if folder.is_absolute():
                self.seen.probe(folder / "__init__.py")
        for name in self._reals:
            self.seen.probe(name)

    def is_package(self, folder: Path) -> bool:
        """Whether ``folder`` holds an ``__init__.py`` (looked up once, and
        told to ``seen`` by :meth:`depended`, as the module names' folders are)."""
        return bool(_package(folder, self._packages))

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
    return absolute(module_name(file), level, target, file.stem == "__init__")


def absolute(module: str, level: int, target: Optional[str], is_package: bool) -> Optional[str]:
    """``target`` imported ``level`` dots up from ``module`` (a package when
    ``is_package``), as an absolute dotted name; None above the top package."""
    if level == 0:
        return target
    pieces = module.split(".")
    keep = len(pieces) - level + (1 if is_package else 0)
    if keep < 0:
        return None
    base = ".".join(pieces[:keep])
    return ".".join(p for p in (base, target) if p)


def is_torch_module(name: str) -> bool:
    """torch's own modules are never followed as the project's."""
    return name == "torch" or name.startswith("torch.")


# -- what import statements bind ----------------------------------------------------------


def dotted(node: ast.expr) -> Optional[str]:
    """``a.b.c`` of a name or an attribute chain; None for anything else."""
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def add_import(table: Dict[str, str], statement: Union[ast.Import, ast.ImportFrom], module: str,
               is_package: bool) -> None:
    """Record the local names one import statement binds (a later statement
    binding the same name replaces the earlier one, as in Python)."""
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            if alias.asname:
                table[alias.asname] = alias.name
            else:
                root = alias.name.split(".", 1)[0]
                table[root] = root
        return
    source = absolute(module, statement.level, statement.module, is_package)
    if source is None:
        return
    for alias in statement.names:
        if alias.name != "*":
            table[alias.asname or alias.name] = f"{source}.{alias.name}"


def module_level(tree: ast.Module) -> Iterator[ast.stmt]:
    """The statements that run when the module is imported, in source order:
    its body and the bodies of top-level ``if``/``try``/``with``/loops, not
    functions or classes (of two imports of one name, the later one is the
    binding that stays, as when Python runs the module)."""
    pending: List[ast.stmt] = list(reversed(tree.body))
    while pending:
        statement = pending.pop()
        if isinstance(statement, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            inner: List[ast.stmt] = [*statement.body, *getattr(statement, "orelse", [])]
            for handler in getattr(statement, "handlers", []):
                inner.extend(handler.body)
            inner.extend(getattr(statement, "finalbody", []))
            pending.extend(reversed(inner))
        else:
            yield statement


def module_imports(tree: ast.Module, module: str, is_package: bool) -> Dict[str, str]:
    """Module-level local name -> dotted path it was imported as (imports in
    top-level ``if``/``try``/``with`` blocks count; those in functions and
    classes do not; the last import of a name wins)."""
    table: Dict[str, str] = {}
    for statement in module_level(tree):
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            add_import(table, statement, module, is_package)
    return table


def resolve(expr: ast.expr, imports: Mapping[str, str], local: Mapping[str, str]) -> Optional[str]:
    """The dotted name ``expr`` refers to through a module's imports and its
    own top-level definitions (``local``), or None."""
    name = dotted(expr)
    if name is None:
        return None
    root, _, rest = name.partition(".")
    base = local.get(root) or imports.get(root)
    if base is None:
        return None
    return canonical(f"{base}.{rest}" if rest else base)


def python_grad_mode(expr: ast.expr, imports: Mapping[str, str]) -> Optional[GradMode]:
    """The grad mode a context manager or decorator sets (``torch.no_grad()``,
    ``@torch.inference_mode``, ``set_grad_enabled(False)``) in CPython's
    ``ast``, resolved through a module's imports: the grad-mode fact of
    :mod:`torchlint.analysis.gradmode` for the cross-file facts, as
    ``training.grad_mode`` gives it for libcst."""
    called = isinstance(expr, ast.Call)
    target = expr.func if isinstance(expr, ast.Call) else expr
    first = python_literal_bool(expr.args[0]) if isinstance(expr, ast.Call) and expr.args else None
    return grad_mode_of(resolve(target, imports, {}), called, first)


# A line that starts an import statement, and one that opens a parenthesised name list.
_IMPORT_LINE = re.compile(rb"(?m)^[ \t]*(?:from|import)[ \t][^\n]*")
_OPENS_NAMES = re.compile(rb"[ \t]*from[ \t][^\n(]*import[ \t]*\(")


def import_statements(text: bytes) -> List[bytes]:
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


class ImportLines:
    """The import statements of each text of one index build, found once
    (several facts read them)."""

    def __init__(self) -> None:
        self._found: Dict[int, Tuple[bytes, List[bytes]]] = {}

    def __call__(self, text: bytes) -> List[bytes]:
        held = self._found.get(id(text))
        if held is not None and held[0] is text:
            return held[1]
        statements = import_statements(text)
        self._found[id(text)] = (text, statements)
        return statements


_FROM_STATEMENT = re.compile(rb"from\s+(\.*)([\w.]*)\s+import\s+\(?([^)]*)\)?", re.DOTALL)
_NAME_LIST = re.compile(rb"([\w.]+)(?:\s+as\s+\w+)?")
MAX_MODULE_HOPS = 2
"""Imported modules that are not packages' ``__init__`` files are followed
this many imports away from the run's files (a package's ``__init__``, which
only re-exports, costs no hop)."""


def imported_modules(statements: List[bytes], module: str, is_package: bool) -> Iterator[Tuple[str, Tuple[str, ...]]]:
    """Each module one of a file's import ``statements`` loads, absolute, with the
    names a ``from`` import takes from it (which may be its submodules);
    for ``import a.b``, each of ``a`` and ``a.b``."""
    for statement in statements:
        statement = statement.strip()
        found = _FROM_STATEMENT.match(statement)
        if found is not None:
            dots, target, names = found.groups()
            source = absolute(module, len(dots), target.decode() or None, is_package)
            if source is not None:
                yield source, tuple(n.decode() for n in _NAME_LIST.findall(names) if n != b"*")
        elif statement.startswith(b"import"):
            for name in _NAME_LIST.findall(statement[len(b"import"):]):
                parts = name.decode().split(".")
                for end in range(1, len(parts) + 1):
                    yield ".".join(parts[:end]), ()


def top_names(root: Path) -> FrozenSet[str]:
    """The modules and packages importable from ``root`` by their first name."""
    try:
        entries = list(os.scandir(root))
    except OSError:
        return frozenset()
    return frozenset(e.name[:-3] if e.name.endswith(".py") else e.name for e in entries
                     if e.name.endswith(".py") or e.name.isidentifier())


def on_disk(name: str, roots: Iterable[Path], module_of: Callable[[Path], str] = module_name,
            known_as: Optional[Callable[[Path, str], bool]] = None) -> List[Text]:
    """The files module ``name`` is under one of ``roots`` (``models`` ->
    ``models.py`` or ``models/__init__.py``), whose module name it is (or,
    with ``known_as``, that Python imports under that name)."""
    relative = Path(*name.split("."))
    found: List[Text] = []
    seen = module_of.seen if isinstance(module_of, ModuleNames) else None
    for root in sorted(roots):
        for candidate in (root / relative.with_suffix(".py"), root / relative / "__init__.py"):
            if any(candidate == path for path, _ in found):
                continue
            if seen is not None:
                seen.probe(candidate)
            for path, data in read_sources([candidate], seen):
                if (known_as(path, name) if known_as is not None else module_of(path) == name):
                    found.append((path, data))
    return found


def with_imported(texts: Sequence[Text], statements: Callable[[bytes], List[bytes]] = import_statements,
                  module_of: Optional[ModuleNames] = None) -> List[Text]:
    """``texts`` plus the project modules they import that are not among
    them, read from disk where Python would find them for the importing
    script (the folder above its top package, the working folder), through
    re-exporting packages: so that linting only the changed files (as
    pre-commit does) knows the project's classes they use as a run over the
    whole project does.  torch's own modules are not followed."""
    module_of = module_of or ModuleNames()
    names = {os.path.abspath(path): module_of(path) for path, _ in texts}
    known = set(names.values())
    package_modules = {module for where, module in names.items() if os.path.basename(where) == "__init__.py"}
    folders: Set[str] = set()
    for where, module in names.items():
        # Up to the folder above the top package (one split, not a dirname per package level).
        ups = 1 + module.count(".") + (os.path.basename(where) == "__init__.py")
        folders.add(where.rsplit(os.sep, ups)[0] or os.sep)
    roots: Set[Path] = {Path.cwd(), *map(Path, folders)}
    tops = {root: top_names(root) for root in roots}
    if module_of.seen is not None:
        for root in roots:
            module_of.seen.listing(root)
    pending = [(path, text, 0) for path, text in texts]
    added: List[Text] = []

    def follow(imported: str, hops: int) -> bool:
        """Read ``imported`` from disk when it is a project module not yet
        known; whether it is a package (its names may be submodules)."""
        if imported in known or is_torch_module(imported):
            return imported in package_modules
        known.add(imported)
        first = imported.split(".", 1)[0]
        for found, data in on_disk(imported, [r for r in roots if first in tops[r]], module_of):
            if found.name == "__init__.py":
                package_modules.add(imported)
            cost = hops + (found.name != "__init__.py")
            where = os.path.abspath(found)
            if cost <= MAX_MODULE_HOPS and where not in names:
                names[where] = imported
                added.append((found, data))
                pending.append((found, data, cost))
        return imported in package_modules

    while pending:
        path, text, hops = pending.pop()
        module = names.get(os.path.abspath(path)) or module_of(path)
        for source, taken in imported_modules(statements(text), module, path.stem == "__init__"):
            if follow(source, hops):
                for name in taken:
                    follow(f"{source}.{name}", hops)
    return [*texts, *added]


_NAMESPACE_LEVELS = 3
"""How many folders without ``__init__.py`` above a module may prefix its name."""


def namespace_aliases(texts: Sequence[Text], module_of: Callable[[Path], str] = module_name,
                      top: Optional[Path] = None) -> Dict[str, str]:
    """Other dotted names of the modules in ``texts``, through the folders
    without ``__init__.py`` above them (namespace packages, which Python 3
    imports as packages): ``utils/data_utils.py`` is ``data_utils`` and,
    for a script in the folder above ``utils``, ``utils.data_utils``.  Up
    to :data:`_NAMESPACE_LEVELS` folders, none above ``top`` (the working
    folder); a name two files could have, or that is a module's own name,
    is left out.  Maps each other name to the module's own."""
    top = Path(os.path.abspath(top if top is not None else Path.cwd()))
    packages: Dict[Path, str] = {}
    is_package = module_of.is_package if isinstance(module_of, ModuleNames) else (
        lambda folder: bool(_package(folder, packages)))
    own = {module_of(path) for path, _ in texts}
    found: Dict[str, Optional[Tuple[str, str]]] = {}  # name -> (file, module); None when two files claim it
    for path, _ in texts:
        module = module_of(path)
        where = os.path.abspath(path)
        folder = Path(os.path.abspath(path)).parent
        for _ in range(module.count(".") + (path.stem == "__init__")):  # up to the folder above the top package
            folder = folder.parent
        name = module
        for _ in range(_NAMESPACE_LEVELS):
            if folder == top or top not in folder.parents or is_package(folder):
                break
            name = f"{folder.name}.{name}"
            if name not in own:
                claim = found.get(name, (where, module))
                found[name] = claim if claim == (where, module) else None
            folder = folder.parent
    return {name: claim[1] for name, claim in sorted(found.items()) if claim is not None}


_SYS_PATH = re.compile(
    rb"""sys\.path\.(?:append|insert)\((?:[ \t]*\d+[ \t]*,)?[ \t]*(?P<call>[^\n]*?)\)[ \t]*(?:#[^\n]*)?$""", re.MULTILINE)
_FOLDER_LITERAL = re.compile(rb"""^(?:os\.path\.join\([ \t]*os\.path\.dirname\([ \t]*(?:os\.path\.(?:abspath|realpath)\([ \t]*)?__file__[ \t]*\)?[ \t]*\)[ \t]*,[ \t]*)?['"](?P<folder>[\w./-]*)['"][ \t]*\)?$""")


def path_aliases(texts: Sequence[Text], module_of: Callable[[Path], str] = module_name) -> Dict[str, str]:
    """Other dotted names of the modules in ``texts``, through a project
    file's ``sys.path.append("core")`` (or ``insert(0, ...)``, or
    ``os.path.join(os.path.dirname(__file__), "core")``): a folder relative
    to that file, whose modules its imports then name from there
    (``core/datasets.py`` is ``datasets``).  A name two files could have,
    or that is a module's own name, is left out.  Maps each other name to
    the module's own."""
    folders: Set[str] = set()
    for path, text in texts:
        if b"sys.path" not in text:
            continue
        for match in _SYS_PATH.finditer(text):
            literal = _FOLDER_LITERAL.match(match.group("call").strip())
            if literal is None:
                continue
            folder = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)),
                                                   literal.group("folder").decode("ascii", "replace")))
            folders.add(folder)
    return _names_under(folders, texts, module_of)


_MAIN_GUARD = re.compile(rb"""^if[ \t(]+__name__[ \t]*==[ \t]*['"]__main__['"]""", re.MULTILINE)


def script_aliases(texts: Sequence[Text], module_of: Callable[[Path], str] = module_name) -> Dict[str, str]:
    """Other dotted names of the modules beside a script in a package
    folder: Python puts the folder of the script it runs first on
    ``sys.path``, so ``python face_verify.py`` in a folder that has an
    ``__init__.py`` imports its sibling ``learner.py`` as ``learner`` (and
    ``data/loader.py`` as ``data.loader``), not only as ``<package>.learner``.
    Folders holding a script (a file with a top-level ``if __name__ ==
    "__main__":``) only; a name two files could have, or that is a
    module's own name, is left out.  Maps each other name to the module's own."""
    folders: Set[str] = set()
    for path, text in texts:
        if b"__main__" not in text or not _MAIN_GUARD.search(text):
            continue
        if "." in module_of(path):  # its folder is a package: its siblings have longer names
            folders.add(os.path.dirname(os.path.abspath(path)))
    return _names_under(folders, texts, module_of)


def _names_under(folders: Set[str], texts: Sequence[Text], module_of: Callable[[Path], str]) -> Dict[str, str]:
    """The names the modules in ``texts`` have from each of ``folders`` put
    on ``sys.path`` (``core/datasets.py`` is ``datasets`` from ``core``),
    mapped to their own; a name two files could have, or that is a
    module's own name, is left out."""
    if not folders:
        return {}
    own = {module_of(path) for path, _ in texts}
    found: Dict[str, Optional[str]] = {}
    for path, _ in texts:
        where = os.path.abspath(path)
        module = module_of(path)
        for folder in folders:
            if not where.startswith(folder + os.sep):
                continue
            parts = Path(os.path.relpath(where, folder)).with_suffix("").parts
            if parts and parts[-1] == "__init__":
                parts = parts[:-1]
            if not parts or not all(part.isidentifier() for part in parts):
                continue
            name = ".".join(parts)
            if name in own:
                continue
            found[name] = module if found.get(name, module) == module else None
    return {name: module for name, module in sorted(found.items()) if module is not None}


def connected(texts: Sequence[Text], module_of: Callable[[Path], str] = module_name,
              statements: Callable[[bytes], List[bytes]] = import_statements,
              aliases: Optional[Mapping[str, str]] = None) -> List[Tuple[Path, bytes, str]]:
    """The files whose functions the project's other files can call, and
    those that call them: every project module some file imports, and every
    file that imports one (path, bytes, module name).  torch's own modules
    are left out, and so is a file that neither imports a project module
    nor is imported (a script on its own), unless it defines a generator
    (it says ``yield``): what the file's own generators hand out (a loader's
    batches, drawn with ``next``) is known from their summaries alone.
    ``aliases``: other names of the modules (:func:`namespace_aliases`), as
    imports may spell them."""
    names = [(path, text, module_of(path)) for path, text in texts]
    modules = {module for _, _, module in names if not is_torch_module(module)}
    if not modules:
        return []
    other = aliases or {}
    imported: Dict[int, Set[str]] = {}
    targets: Set[str] = set()
    for i, (path, text, module) in enumerate(names):
        if module not in modules:
            continue
        found: Set[str] = set()
        for source, taken in imported_modules(statements(text), module, path.stem == "__init__"):
            for candidate in (source, *(f"{source}.{name}" for name in taken)):
                candidate = other.get(candidate, candidate)
                if candidate in modules and candidate != module:
                    found.add(candidate)
        imported[i] = found
        targets |= found
    return [(path, text, module) for i, (path, text, module) in enumerate(names)
            if module in modules and (module in targets or imported[i] or b"yield" in text)]


# -- star imports -----------------------------------------------------------------

_STAR_IMPORT = re.compile(rb"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\*", re.MULTILINE)
_EXPORTS_FORMAT = b"star-exports-3"
_UNKNOWN = ast.Constant(None)
"""What a binding that is not ``name = <dotted name>`` binds, as far as aliases go."""


@dataclass(frozen=True)
class Exports:
    """One module's part of what its star import (or a ``from`` import of
    one of its names) binds: the names its own import statements bind (and
    those it binds once, and only, to a torch name: ``LongTensor =
    torch.LongTensor``), the
    modules it star-imports in turn (in source order), ``__all__`` when it
    is a literal list or tuple of strings, and the names it also binds at
    module level otherwise (a ``def``, ``class`` or assignment: such a name
    is not, or not only, what it imported)."""

    imported: Mapping[str, str]
    stars: Tuple[str, ...]
    public: Optional[FrozenSet[str]]
    defined: FrozenSet[str] = frozenset()

    def exports(self, name: str) -> bool:
        """Whether ``from <this module> import *`` may bind ``name``."""
        return name in self.public if self.public is not None else not name.startswith("_")


def exports_of(tree: ast.Module, module: str, is_package: bool) -> Exports:
    """The :class:`Exports` of one parsed module."""
    stars: List[str] = []
    public: Optional[FrozenSet[str]] = None
    defined: Set[str] = set()
    assigned: Dict[str, List[ast.expr]] = {}
    for statement in module_level(tree):
        if isinstance(statement, ast.ImportFrom) and any(alias.name == "*" for alias in statement.names):
            source = absolute(module, statement.level, statement.module, is_package)
            if source is not None and source not in stars:
                stars.append(source)
        elif (
            isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == "__all__"
            and isinstance(statement.value, (ast.List, ast.Tuple))
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in statement.value.elts)
        ):
            public = frozenset(str(e.value) for e in statement.value.elts if isinstance(e, ast.Constant))
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(statement.name)
            assigned.setdefault(statement.name, []).append(_UNKNOWN)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            pending: List[ast.expr] = (list(statement.targets) if isinstance(statement, ast.Assign)
                                       else [statement.target])
            while pending:  # the names bound: `a, (b, *c) = ...` (not `a.x = ...`, `a[i] = ...`)
                target = pending.pop()
                if isinstance(target, ast.Name):
                    defined.add(target.id)
                    whole = isinstance(statement, ast.Assign) and len(statement.targets) == 1 and (
                        statement.targets[0] is target)
                    value = statement.value if whole else None
                    assigned.setdefault(target.id, []).append(value if value is not None else _UNKNOWN)
                elif isinstance(target, (ast.Tuple, ast.List)):
                    pending.extend(target.elts)
                elif isinstance(target, ast.Starred):
                    pending.append(target.value)
    imported = module_imports(tree, module, is_package)
    # `LongTensor = torch.LongTensor`, bound once and by nothing else: another
    # name of the torch object, as an import would bind it.
    aliases = {}
    for name, values in assigned.items():
        if len(values) == 1 and name not in imported and isinstance(values[0], (ast.Name, ast.Attribute)):
            target_name = resolve(values[0], imported, {})
            if target_name is not None and is_torch_module(target_name):
                aliases[name] = target_name
    defined -= set(aliases)
    return Exports({**imported, **aliases}, tuple(stars), public, frozenset(defined))


def stored_exports(path: Path, data: bytes, module: str, store: Optional[Store]) -> Optional[Exports]:
    """One module's exports, from ``store`` when it holds them; None when the
    file does not parse."""
    key = store_key(path, data, module, None, _EXPORTS_FORMAT)
    if store is not None:
        stored = store.get_facts(key)
        if isinstance(stored, dict):
            imported, stars, public = stored.get("imported"), stored.get("stars"), stored.get("public")
            defined = stored.get("defined")
            if (
                isinstance(imported, dict) and all_of(str, *imported, *imported.values())
                and isinstance(stars, list) and all_of(str, *stars)
                and (public is None or (isinstance(public, list) and all_of(str, *public)))
                and isinstance(defined, list) and all_of(str, *defined)
            ):
                return Exports(imported, tuple(stars), None if public is None else frozenset(public),
                               frozenset(defined))
    tree = parse_quietly(data)
    if tree is None:
        return None
    found = exports_of(tree, module, path.stem == "__init__")
    if store is not None:
        store.put_facts(key, {
            "imported": dict(found.imported), "stars": list(found.stars),
            "public": None if found.public is None else sorted(found.public), "defined": sorted(found.defined),
        })
    return found


def star_imported(path: Path, text: bytes, module: str) -> List[str]:
    """The project modules (not torch's) a file star-imports, made absolute,
    read from its text (the usual spelling, ``from x import *`` on a line of
    its own; others only lose a resolution)."""
    found: List[str] = []
    for dots, target in _STAR_IMPORT.findall(text):
        spelled = target.decode()
        if not dots and is_torch_module(spelled):
            continue
        name = absolute(module, len(dots), spelled or None, path.stem == "__init__")
        if name and not is_torch_module(name) and name not in found:
            found.append(name)
    return found


def star_parts(texts: Sequence[Text], store: Optional[Store] = None,
               module_of: Optional[ModuleNames] = None,
               statements: Callable[[bytes], List[bytes]] = import_statements) -> Dict[str, Exports]:
    """The :class:`Exports` of the project modules that some file
    star-imports, and of those they star-import in turn: each module read
    and parsed once.  A module name held by two files that disagree is left
    out (it binds nothing).  A module that is not among the run's files is
    looked for on disk where Python would find it for the importing script
    (its folder, and the working folder), so that linting only the changed
    files (as pre-commit does) resolves as a run over the project.

    Also, of the run's modules that another run file imports a name from
    (``from dataset import DataLoader``), those that bind that name by an
    import of their own (a re-export: :func:`named_lookup`), chains of such
    modules followed.  Only a module whose import statements hold the word is
    parsed, and only one that re-exports a name someone imports is kept."""
    wanted: Set[str] = set()
    named: Dict[str, Set[str]] = {}
    roots: Set[Path] = {Path.cwd()}
    module_of = module_of or ModuleNames()
    for path, text in texts:
        if b"from" in text:
            lines = statements(text)
            if lines:
                module = module_of(path)
                for source, names in imported_modules(lines, module, path.stem == "__init__"):
                    if names and source != module and not is_torch_module(source):
                        named.setdefault(source, set()).update(names)
        if b"import *" not in text:  # the usual spelling; others only lose a resolution
            continue
        module = module_of(path)
        found = star_imported(path, text, module)
        if not found:
            continue
        wanted.update(found)
        roots.add(path.parent)
        # The folder above the file's top package: where a relative import starts.
        depth = module.count(".") + (path.stem == "__init__")
        roots.add(path.parents[depth] if depth < len(path.parents) else path.parent)
    if not wanted and not named:
        return {}
    by_last: Dict[str, List[Text]] = {}
    for path, text in texts:
        by_last.setdefault(path.parent.name if path.stem == "__init__" else path.stem, []).append((path, text))

    def known_as(path: Path, name: str) -> bool:
        """Python imports the file as ``name``: its module name, or, under
        folders without ``__init__.py`` (namespace packages: the module's
        name is then its stem alone), the folders above it spell the rest."""
        own = module_of(path)
        if own == name:
            return True
        parts = name.split(".")
        if own != parts[-1] or "." not in name:
            return False
        # (a package's `__init__.py` is named by its folder: the folders above that spell the rest)
        folders = (path.parent.parent if path.stem == "__init__" else path.parent).parts
        return len(folders) >= len(parts) - 1 and list(folders[len(folders) - len(parts) + 1:]) == parts[:-1]

    def run_module(name: str) -> List[Text]:
        return [(p, t) for p, t in by_last.get(name.rsplit(".", 1)[-1], []) if known_as(p, name)]

    def exports_in(name: str, candidates: List[Text]) -> Optional[Exports]:
        found = [e for e in (stored_exports(path, text, name, store) for path, text in candidates) if e is not None]
        return found[0] if len(found) == 1 or (found and all(f == found[0] for f in found)) else None

    parts: Dict[str, Optional[Exports]] = {}
    pending = sorted(wanted)
    while pending:
        name = pending.pop()
        if name in parts or is_torch_module(name):
            continue
        candidates = run_module(name) or on_disk(name, roots, module_of, known_as)
        parts[name] = exports_in(name, candidates)
        held = parts[name]
        if held is not None:
            pending.extend(star for star in held.stars if star not in parts)
    reexporting: Dict[str, Exports] = {}
    done: Dict[str, Set[str]] = {}
    asked = sorted(named.items())
    while asked:
        name, words = asked.pop()
        fresh = words - done.setdefault(name, set())
        if not fresh or name in parts:
            continue
        done[name] |= fresh
        held = reexporting.get(name)
        if held is None:
            candidates = run_module(name)
            spelled = {w for _, text in candidates for w in _WORD.findall(b" ".join(statements(text)))}
            if not any(word.encode() in spelled for word in fresh):
                continue  # (asked again for other words, the module is searched again: rare)
            held = exports_in(name, candidates)
            if held is None:
                continue
        reexported = sorted(word for word in fresh if word in held.imported and word not in held.defined)
        if not reexported:
            continue
        reexporting[name] = held
        for word in reexported:  # the module it imports the name from may re-export it in turn
            origin = held.imported[word]
            if "." in origin and not is_torch_module(origin):
                module, _, last = origin.rpartition(".")
                asked.append((module, {last}))
    kept = {name: exports for name, exports in parts.items() if exports is not None}
    return dict(sorted({**reexporting, **kept}.items()))


def named_lookup(parts: Mapping[str, Exports], module: str, name: str) -> Optional[str]:
    """The dotted path ``name`` has after ``from <module> import name``,
    when the module binds it by an import of its own and nothing else
    (``dataset.py`` doing ``from torch.utils.data import DataLoader``),
    followed through modules that re-export it in turn (each once); None
    when the module is not known or defines or assigns the name itself."""
    seen: Set[Tuple[str, str]] = set()
    target: Optional[str] = None
    while (module, name) not in seen:
        seen.add((module, name))
        exports = parts.get(module)
        if exports is None or name in exports.defined:
            return target
        found = exports.imported.get(name)
        if found is None:
            found = star_lookup(parts, module, name)
        if found is None:
            return None
        target = found
        module, _, name = found.rpartition(".")
        if not module:
            return target
    return None  # a cycle


def star_lookup(parts: Mapping[str, Exports], module: str, name: str, definitions: bool = False) -> Optional[str]:
    """The dotted path ``name`` has after ``from <module> import *``, when
    the module (or one it star-imports, at any depth) binds it by an import
    (with ``definitions``, also by a definition of its own: ``utils.evaluate``
    for a ``def evaluate`` in utils.py); None otherwise.  One depth-first walk
    that visits each module at most once: a module's own imports win over
    what its star imports bring, and a later star import over an earlier one;
    a cycle binds nothing more."""
    first = parts.get(module)
    if first is None or not first.exports(name):
        return None
    visited: Set[str] = {module}
    stack: List[Iterator[str]] = []
    exports: Optional[Exports] = first
    current = module
    while True:
        if exports is not None:
            if name in exports.defined:
                # the module's own definition, not an import
                return f"{current}.{name}" if definitions else None
            if name in exports.imported:
                return exports.imported[name]
            stack.append(iter(reversed(exports.stars)))
        exports = None
        while stack and exports is None:
            following = next(stack[-1], None)
            if following is None:
                stack.pop()
            elif following not in visited:
                visited.add(following)
                candidate = parts.get(following)
                if candidate is not None and candidate.exports(name):
                    exports, current = candidate, following
        if exports is None and not stack:
            return None


def star_names(parts: Mapping[str, Exports], module: str) -> Set[str]:
    """Every name ``from <module> import *`` may bind (its star imports' too,
    each module once): what :func:`star_lookup` is worth asking about."""
    found: Set[str] = set()
    pending, seen = [module], {module}
    first = parts.get(module)
    while pending:
        exports = parts.get(pending.pop())
        if exports is None:
            continue
        found.update(exports.imported)
        found.update(exports.defined)
        for star in exports.stars:
            if star not in seen:
                seen.add(star)
                pending.append(star)
    return {name for name in found if first is not None and first.exports(name)}


def project_star_modules(tree: ast.Module, module: str, is_package: bool) -> List[str]:
    """The project modules (not torch's) a parsed module's body star-imports, in order."""
    found: List[str] = []
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and any(alias.name == "*" for alias in statement.names):
            source = absolute(module, statement.level, statement.module, is_package)
            if source is not None and not is_torch_module(source) and source not in found:
                found.append(source)
    return found


def star_sources(text: bytes, module: str, is_package: bool) -> List[str]:
    """The project modules a file star-imports (not torch's), in source order."""
    found: List[str] = []
    for dots, target in _STAR_IMPORT.findall(text):
        name = absolute(module, len(dots), target.decode() or None, is_package)
        if name and not is_torch_module(name) and name not in found:
            found.append(name)
    return found


# -- classes re-exported by packages ----------------------------------------------------


def reexports(texts: Sequence[Text], defined: Iterable[str], store: Optional[Store],
              statements: Callable[[bytes], List[bytes]] = import_statements,
              module_of: Callable[[Path], str] = module_name) -> Dict[str, str]:
    """The other dotted names under which packages of the project make the
    ``defined`` classes available by importing them in their ``__init__.py``
    (``from .parallel import Wrap`` gives ``pkg.Wrap``), chains of such
    imports followed.  Only package files with an import statement naming
    one of the classes (or a name that re-exports one) are parsed: a plain
    module that imports a class is seldom the path others import it by.
    ``texts`` hold the packages the run's files import (:func:`with_imported`).
    Each package file is searched once, for the words its import statements
    hold, so a long chain costs what its links do."""
    targets = set(defined)
    if not targets:
        return {}
    by_word: Dict[bytes, List[int]] = {}
    for i, (path, text) in enumerate(texts):
        if path.stem != "__init__":
            continue
        lines = statements(text)
        if lines:
            for word in set(_WORD.findall(b" ".join(lines))):
                by_word.setdefault(word, []).append(i)
    imported: Dict[str, str] = {}
    pending = sorted({name.rsplit(".", 1)[-1] for name in targets})
    asked: Set[str] = set(pending)
    parsed: Dict[int, Tuple[str, Dict[str, List[Tuple[str, str]]]]] = {}
    while pending:
        wanted = pending.pop()
        for i in by_word.get(wanted.encode(), ()):
            held = parsed.get(i)
            if held is None:
                path, text = texts[i]
                module = module_of(path)
                exports = stored_exports(path, text, module, store)
                by_last: Dict[str, List[Tuple[str, str]]] = {}
                for local, source in (exports.imported if exports is not None else {}).items():
                    by_last.setdefault(source.rsplit(".", 1)[-1], []).append((local, source))
                held = parsed[i] = (module, by_last)
            module, by_last = held
            for local, source in by_last.get(wanted, ()):
                imported[f"{module}.{local}"] = source
                if local not in asked:  # another module may import it from this one in turn
                    asked.add(local)
                    pending.append(local)
    found: Dict[str, str] = {}
    resolved: Dict[str, Optional[str]] = {}
    for alias in sorted(imported):
        target = _chain_end(alias, imported, targets, resolved)
        if target is not None and target != alias:
            found[alias] = target
    return dict(sorted(found.items()))


_WORD = re.compile(rb"\w+")


def _chain_end(alias: str, imported: Mapping[str, str], targets: Set[str],
               resolved: Dict[str, Optional[str]]) -> Optional[str]:
    """The class a chain of re-exports starting at ``alias`` ends at (one of
    ``targets``), each link followed once over all chains (memoised in
    ``resolved``); None when it ends elsewhere or loops."""
    path: List[str] = []
    current: Optional[str] = alias
    end: Optional[str] = None
    while current is not None:
        if current in resolved:
            end = resolved[current]
            break
        if current in targets:
            end = current
            break
        if current in path:  # a loop
            break
        path.append(current)
        current = imported.get(current)
    for link in path:
        resolved[link] = end
    return end
