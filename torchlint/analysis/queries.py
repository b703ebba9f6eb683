"""The questions rules ask about the project, and how the index answers them.

A rule declares what it asks in ``Rule.project_queries``, a tuple of
:class:`Query` values made by the functions below (``subclasses_of``,
``callers_of``, ``name_used``, ``keyword_passed``, ``method_shapes``,
``method_called``, ``summaries``).  Before linting, the runner merges the
enabled rules' queries and calls :func:`build_from` once; each kind of query has
one builder here that reads only the files it needs (narrow words keep a
cold run cheap) and stores each file's part in the run's cache.  A new
cross-file question is one query kind (a constructor, a builder, a field of
:class:`~torchlint.analysis.index.ProjectIndex` with its answer) plus the
rule that asks it.
"""

from __future__ import annotations

import ast
import bisect
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import (
    TYPE_CHECKING, Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Union,
)

# What rules ask lives in asks (the catalog reads it without the builders); re-exported here,
# where rules import it from.
from torchlint.analysis.asks import (
    CALLED_FROM as CALLED_FROM, CALLERS as CALLERS, KEYWORDS as KEYWORDS, METHOD_CALLS as METHOD_CALLS,
    METHODS as METHODS,
    NAMES as NAMES, SUBCLASSES as SUBCLASSES, SUMMARIES as SUMMARIES, WHOLE_SAVES as WHOLE_SAVES, Asked as Asked,
    Query as Query, called_from as called_from, callers_of as callers_of, keyword_passed as keyword_passed,
    method_called as method_called,
    method_shapes as method_shapes, name_used as name_used, subclasses_of as subclasses_of, summaries as summaries,
    whole_saves as whole_saves,
)
from torchlint.analysis.gradmode import MODULE_RETURNS_ITSELF, GradMode
from torchlint.analysis.imports import (
    ImportLines, import_statements, ModuleNames, Text, add_import, connected, dotted, imported_modules,
    module_imports, module_level, module_name, project_star_modules,
    namespace_aliases, parse_quietly, path_aliases, python_grad_mode, read_sources, reexports, resolve, script_aliases,
    star_parts, with_imported, star_imported, star_lookup, Exports,
)
from torchlint.analysis.index import EMPTY, CallSite, ClassInfo, MethodShape, ProjectIndex
from torchlint.analysis.store import Store, all_of, count, store_key
from torchlint.source.tree import collected_once, python_literal_bool

if TYPE_CHECKING:
    from torchlint.analysis.summaries import FileSummary


# -- building the index -------------------------------------------------------------


def build(files: Sequence[Path], queries: Iterable[Query], store: Optional[Store] = None, *,
          module_of: Optional[ModuleNames] = None, each: "Optional[Each]" = None,
          per_tree: Optional[Callable[[ast.Module], Any]] = None) -> ProjectIndex:
    """:func:`build_from` the ``.py`` files among ``files``, read here (for
    one-file front ends and tests; the runner reads each file once itself)."""
    return build_from(list(read_sources(files)), queries, store, module_of=module_of, each=each, per_tree=per_tree)


def build_from(texts: Sequence[Text], queries: Iterable[Query], store: Optional[Store] = None, *,
               module_of: Optional[ModuleNames] = None, each: "Optional[Each]" = None,
               per_tree: Optional[Callable[[ast.Module], Any]] = None) -> ProjectIndex:
    """The run's index: built once, before linting, for the questions the
    enabled rules ask, and for what star imports of project modules bind
    (nothing of either: the empty index).  ``texts``: the run's ``.py``
    files and their bytes, read by the caller (the index reads from disk only
    the project modules they import, through ``module_of``); ``store`` keeps
    each parsed file's part for the next run; ``module_of``: the module names
    (and with its ``seen``, what else the build reads from disk); ``each``:
    how to run the per-file work (the runner's worker processes; by default
    one file after the other here); ``per_tree``: what else to make of each
    run file's tree while it is parsed (the lint's pre-check summary, kept in
    :attr:`ProjectIndex.prechecks` so that no file is parsed twice; every
    run file is then parsed here)."""
    asked = Asked.of(queries)
    module_of = module_of or ModuleNames()
    try:
        return _build(list(texts), asked, store, module_of, each or one_by_one, per_tree)
    finally:
        module_of.depended()


def _build(texts: List[Text], asked: Asked, store: Optional[Store], module_of: ModuleNames, each: "Each",
           per_tree: Optional[Callable[[ast.Module], Any]] = None) -> ProjectIndex:
    statements = ImportLines()
    stars = star_parts(texts, store, module_of, statements)
    bases = asked.of_kind(SUBCLASSES)
    callers = (asked.of_kind(CALLERS), sorted(asked.more.get(CALLERS, ())), asked.of_kind(CALLED_FROM))
    names = frozenset(asked.of_kind(NAMES))
    keywords, methods, method_calls = asked.of_kind(KEYWORDS), asked.of_kind(METHODS), asked.of_kind(METHOD_CALLS)
    wants_summaries = SUMMARIES in asked
    wants_saves = WHOLE_SAVES in asked
    if not (bases or callers[0] or callers[1] or callers[2] or names or keywords or methods or method_calls or wants_summaries
            or wants_saves):
        # No rule asks about the project; star imports of its modules still resolve.
        return ProjectIndex(star_parts=stars) if stars else EMPTY
    indexed = with_imported(texts, statements, module_of) if bases or methods or wants_summaries else texts
    classes = hierarchy(indexed, bases, store, module_of) if bases else {}
    calls, modules = _callers(texts, callers[0], callers[1], store, statements, module_of, callers[2], stars)
    shapes = _methods(indexed, methods, store, module_of)
    namespaces = {**script_aliases(indexed, module_of), **path_aliases(indexed, module_of),
                  **namespace_aliases(indexed, module_of)} if (
        wants_summaries or bases or methods) else {}
    chosen = connected(indexed, module_of, statements, namespaces) if wants_summaries else []
    # Names used, keywords passed, methods called, summaries and saves: one
    # parse of each file serves them all, in the runner's workers when it has them.
    parts = one_parse_each(texts, names, keywords, method_calls, chosen, store,
                           module_of if wants_saves else None, each, per_tree)
    used, passed, called = parts.names, parts.keywords, parts.methods
    summarized = []
    if chosen:
        from torchlint.analysis.summaries import summarize_project

        summarized = summarize_project(chosen, store, parts.summaries)
    targets = {*classes, *shapes}
    if summarized:
        from torchlint.analysis.summaries import defined

        targets |= defined(summarized)
    aliases = {**namespaces, **reexports(indexed, targets, store, statements, module_of)}
    if summarized and stars:
        from torchlint.analysis.summaries import star_aliases

        aliases.update(star_aliases(chosen, stars))
    found_summaries = None
    if summarized:  # (nothing to summarise, as in torch's own tree: no summaries module to import)
        from torchlint.analysis.summaries import link

        found_summaries = link(summarized, aliases, {os.path.abspath(path): module for path, _, module in chosen})
    saves: Tuple[Tuple[str, int], ...] = ()
    if wants_saves:
        from torchlint.analysis.saves import project_saves

        saves = project_saves(texts, store, module_of, parts.saves)
    return ProjectIndex(classes, calls, modules, used, passed, stars, shapes, called, aliases, found_summaries,
                        saves, prechecks=parts.extras)


Each = Callable[[Callable[[int], Any], int], Sequence[Any]]
"""How the index runs per-file work: ``each(work, count)`` is ``[work(0), ...,
work(count - 1)]``, computed here or in worker processes (forked, so that
``work`` and what it reads need not be pickled; each result comes back
pickled and small).  A result that is not ``work``'s (a worker that died)
counts as a file that does not parse."""


def one_by_one(work: Callable[[int], Any], count: int) -> List[Any]:
    """:data:`Each` in this process."""
    return [work(index) for index in range(count)]


@dataclass(frozen=True)
class _Parse:
    """One file the per-file pass parses, and what it reads from the tree."""

    path: Path
    data: bytes
    names: FrozenSet[str]
    calls: bool
    summary_module: Optional[str]
    saves_module: Optional[str]
    extra: bool = False


@dataclass(frozen=True)
class _Parsed:
    """What one parse of a file gave (small: it travels back from a worker)."""

    names: FrozenSet[str] = frozenset()
    keywords: FrozenSet[str] = frozenset()
    methods: FrozenSet[str] = frozenset()
    summary: "Optional[FileSummary]" = None
    saves: Optional[List[Tuple[int, Tuple[str, ...]]]] = None
    extra: Any = None


@dataclass(frozen=True)
class FileParts:
    """The per-file parts of the index, from one parse of each file that needs
    one (or from the store): names used, keywords passed and methods called
    anywhere, each chosen file's summary and each file's saves, by path."""

    names: FrozenSet[str]
    keywords: FrozenSet[str]
    methods: FrozenSet[str]
    summaries: Dict[str, "Optional[FileSummary]"]
    saves: Dict[str, Optional[List[Tuple[int, Tuple[str, ...]]]]]
    extras: Dict[str, Any] = field(default_factory=dict)
    """What ``per_tree`` made of each run file's tree, by the SHA-256 of its bytes."""


def one_parse_each(texts: Sequence[Text], names: FrozenSet[str], keywords: Iterable[str], methods: Iterable[str],
                   chosen: Sequence[Tuple[Path, bytes, str]], store: Optional[Store],
                   saves_of: Optional[Callable[[Path], str]], each: Each = one_by_one,
                   per_tree: Optional[Callable[[ast.Module], Any]] = None) -> FileParts:
    """What the index reads from each file's tree, with one ``ast`` parse of
    a file whatever asks (each part only from files whose text can hold it;
    summaries and saves from ``store`` where it has them, and stored there).
    ``saves_of``: the module name of a file, when saves are asked;
    ``per_tree``: what else to make of every run file's tree."""
    from torchlint.analysis.saves import may_save, saves_key, stored_saves
    from torchlint.analysis.summaries import store_summary, stored_summary

    keywords, methods = frozenset(keywords), frozenset(methods)
    name_words = {name.rsplit(".", 1)[-1].encode() for name in names}
    call_words = [word.encode() for word in sorted(keywords | methods)]
    modules = {str(path): module for path, _, module in chosen}
    summaries: Dict[str, Optional[FileSummary]] = {}
    saves: Dict[str, Optional[List[Tuple[int, Tuple[str, ...]]]]] = {}
    todo: List[_Parse] = []
    in_run = {str(path) for path, _ in texts}
    # The run's files, then the imported modules outside it whose summaries are asked.
    sources = [(path, data, True) for path, data in texts] + [
        (path, data, False) for path, data, _ in chosen if str(path) not in in_run]
    for path, data, linted in sources:
        shown = str(path)
        summary_module = modules.get(shown)
        if summary_module is not None and shown not in summaries:
            found = stored_summary(path, data, summary_module, store)
            if found is not None:
                summaries[shown] = found
                summary_module = None
        else:
            summary_module = None
        saves_module = saves_of(path) if linted and saves_of is not None and may_save(data) else None
        if saves_module is not None:
            stored = stored_saves(store.get_facts(saves_key(path, data, saves_module)) if store is not None else None)
            if stored is not None:
                saves[shown] = stored
                saves_module = None
        # A file that may name one of them (a word of it in the bytes) is asked for all.
        wanted = names if linted and any(word in data for word in name_words) else frozenset()
        calls = linted and any(word in data for word in call_words)
        extra = linted and per_tree is not None
        if wanted or calls or summary_module is not None or saves_module is not None or extra:
            todo.append(_Parse(path, data, wanted, calls, summary_module, saves_module, extra))

    def work(index: int) -> _Parsed:
        with collected_once():
            return _parse_once(todo[index], keywords, methods, per_tree)

    used: Set[str] = set()
    passed: Set[str] = set()
    called: Set[str] = set()
    extras: Dict[str, Any] = {}
    for job, result in zip(todo, each(work, len(todo))):
        parsed = result if isinstance(result, _Parsed) else _Parsed()
        if parsed.extra is not None:
            extras[hashlib.sha256(job.data).hexdigest()] = parsed.extra
        used |= parsed.names
        passed |= parsed.keywords
        called |= parsed.methods
        shown = str(job.path)
        if job.summary_module is not None:
            summaries[shown] = parsed.summary
            if parsed.summary is not None:
                store_summary(job.path, job.data, job.summary_module, store, parsed.summary)
        if job.saves_module is not None:
            file_saves = parsed.saves or []
            saves[shown] = file_saves
            if store is not None and isinstance(result, _Parsed):
                store.put_facts(saves_key(job.path, job.data, job.saves_module),
                                [[line, list(names)] for line, names in file_saves])
    return FileParts(frozenset(used), frozenset(passed), frozenset(called), summaries, saves, extras)


def _parse_once(job: _Parse, keywords: FrozenSet[str], methods: FrozenSet[str],
                per_tree: Optional[Callable[[ast.Module], Any]] = None) -> _Parsed:
    """Everything ``job`` asks of one file, from one ``ast`` parse."""
    tree = parse_quietly(job.data)
    if tree is None:
        return _Parsed(saves=[] if job.saves_module is not None else None)
    names: FrozenSet[str] = frozenset()
    if job.names:
        from torchlint.analysis.mentions import names_in_tree

        names = names_in_tree(tree) & job.names
    passed, called = calls_in(tree, keywords, methods) if job.calls else (frozenset(), frozenset())
    summary = None
    if job.summary_module is not None:
        from torchlint.analysis.summaries import summary_of_tree

        summary = summary_of_tree(job.path, tree, job.summary_module, job.data)
    saves = None
    if job.saves_module is not None:
        from torchlint.analysis.saves import saves_of_module

        saves = saves_of_module(tree, job.saves_module, job.path.stem == "__init__")
    extra = per_tree(tree) if job.extra and per_tree is not None else None
    return _Parsed(names, passed, called, summary, saves, extra)


def index_of_sources(sources: Mapping[str, str], queries: Iterable[Query] = ()) -> ProjectIndex:
    """The index of in-memory files (relative path -> text), for tests and
    editors: every folder of a path counts as a package; classes and calls
    of every file are indexed (and summaries when ``queries`` ask)."""
    classes: Dict[str, ClassInfo] = {}
    calls: Dict[str, List[CallSite]] = {}
    modules: Dict[str, str] = {}
    named = [(Path(name), sources[name], _dotted_path(Path(name))) for name in sorted(sources)]
    for path, text, module in named:
        found = _parse_contribution(path, text, module)
        modules[os.path.abspath(path)] = module
        for info in found.classes:
            classes.setdefault(info.qualified, info)
        for target, site in found.calls:
            calls.setdefault(target, []).append(site)
    found_summaries = None
    if SUMMARIES in Asked.of(queries):
        from torchlint.analysis.summaries import summarize_sources

        found_summaries = summarize_sources([(module, text, path.stem == "__init__") for path, text, module in named])
    return ProjectIndex(classes, {name: tuple(sites) for name, sites in calls.items()}, modules,
                        summaries=found_summaries)


def _dotted_path(path: Path) -> str:
    parts = list(path.with_suffix("").parts)
    if parts and parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def build_index(files: Iterable[Path]) -> ProjectIndex:
    """Index every Python file among ``files`` (classes and calls)."""
    classes: Dict[str, ClassInfo] = {}
    calls: Dict[str, List[CallSite]] = {}
    modules: Dict[str, str] = {}
    for path, data in read_sources(files):
        module = module_name(path)
        found = _parse_contribution(path, data, module)
        modules[os.path.abspath(path)] = module
        for info in found.classes:
            classes.setdefault(info.qualified, info)
        for target, site in found.calls:
            calls.setdefault(target, []).append(site)
    return ProjectIndex(classes, {name: tuple(sites) for name, sites in calls.items()}, modules)


def build_hierarchy(files: Iterable[Path], bases: Iterable[str]) -> ProjectIndex:
    """Index only the classes that derive, through the project, from one of
    ``bases`` (dotted names); calls are not indexed (see :func:`hierarchy`)."""
    return ProjectIndex(hierarchy(list(read_sources(files)), sorted(set(bases)), None))


# -- one file's classes and calls of other modules ---------------------------------------


@dataclass(frozen=True)
class Contribution:
    """What one file adds to the index: its module-level classes and its
    calls of other modules' functions.  A pure function of the file's bytes
    and module name, so it is cached with them."""

    classes: Tuple[ClassInfo, ...] = ()
    calls: Tuple[Tuple[str, CallSite], ...] = ()


def _grad_disabling(expr: ast.expr, imports: Mapping[str, str]) -> Optional[bool]:
    """True for ``torch.no_grad()``-like context managers and decorators,
    False for those that switch gradients on, None for anything else."""
    mode = python_grad_mode(expr, imports)
    return None if mode is None else mode is GradMode.DISABLED


class _CallScan:
    """One walk of a file's tree: every call of another module's function,
    whether it runs with gradients off, and whether its training step (the
    innermost loop around it, else its function) calls ``backward()``."""

    def __init__(self, path: str, module: str, is_package: bool, lines: Optional[List[int]],
                 stars: Sequence[str] = (), local: FrozenSet[str] = frozenset(),
                 wanted: "Optional[re.Pattern[bytes]]" = None) -> None:
        self._path = path
        self._module = module
        self._is_package = is_package
        self._lines = lines
        self._stars = tuple(stars)
        self._local = local
        self._wanted = wanted
        self._found: List[Tuple[str, int, bool, int, Tuple[str, ...]]] = []
        self._backward_steps: Set[int] = set()
        self._modes: List[Dict[str, bool]] = [{}]
        """Per function being walked (the module's body first): the objects
        switched to eval mode (True) or back to training mode (False) so far."""

    def _skipped(self, node: ast.AST, imports: Dict[str, str], step: int) -> bool:
        """A statement with none of the lines that matter (sorted ``lines``):
        not walked, but an import in it still binds its names."""
        if self._lines is None or not isinstance(node, ast.stmt):
            return False
        at = bisect.bisect_left(self._lines, node.lineno)
        if at < len(self._lines) and self._lines[at] <= (node.end_lineno or node.lineno):
            return False
        if isinstance(node, (ast.Import, ast.ImportFrom)) and step != 0:
            add_import(imports, node, self._module, self._is_package)
        return True

    def sites(self) -> List[Tuple[str, CallSite]]:
        return [
            (target, CallSite(self._path, line, self._module, disabled, step in self._backward_steps, evaled))
            for target, line, disabled, step, evaled in self._found
        ]

    def scan(self, node: ast.AST, imports: Dict[str, str], disabled: bool, step: int) -> None:
        if self._skipped(node, imports, step):
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            modes = [_grad_disabling(d, imports) for d in node.decorator_list]
            for decorator in node.decorator_list:
                self.scan(decorator, imports, disabled, step)
            inner = dict(imports)  # the function's own imports stay in it
            self._modes.append({})
            for statement in node.body:
                self.scan(statement, inner, any(modes), id(node))
            self._modes.pop()
            return
        if isinstance(node, ast.ClassDef):
            inner = dict(imports)
            self._modes.append({})
            for child in ast.iter_child_nodes(node):
                self.scan(child, inner, False, id(node))
            self._modes.pop()
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
            add_import(imports, node, self._module, self._is_package)
        elif isinstance(node, ast.Call):
            self._call(node, imports, disabled, step)
        for child in ast.iter_child_nodes(node):
            self.scan(child, imports, disabled, step)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            # `net = load_model(...).eval()`: the name holds the module the chain switched
            switched = _switched_mode(node.value)
            if switched is not None:
                self._modes[-1][node.targets[0].id] = switched

    def _call(self, node: ast.Call, imports: Mapping[str, str], disabled: bool, step: int) -> None:
        self._mode_switch(node)
        target = resolve(node.func, imports, {})
        backward = isinstance(node.func, ast.Attribute) and node.func.attr == "backward" and target is None
        if backward or target in ("torch.autograd.grad", "torch.autograd.backward"):
            self._backward_steps.add(step)
        elif target is not None and not target.startswith(self._module + "."):
            self._found.append((target, node.lineno, disabled, step, self._evaled(node)))
        elif target is None and isinstance(node.func, ast.Name) and self._star_bound(node.func.id):
            # ``from utils import *`` then ``evaluate(model, ...)``: a call of
            # whichever star-imported module defines it (a site recorded for a
            # module that does not is never asked about).
            evaled = self._evaled(node)
            for star in self._stars:
                self._found.append((f"{star}.{node.func.id}", node.lineno, disabled, step, evaled))

    def _star_bound(self, name: str) -> bool:
        """Whether a bare name the imports do not bind is one of the wanted
        functions a star import may bring (never the module's own function)."""
        return (bool(self._stars) and self._wanted is not None and name not in self._local
                and self._wanted.fullmatch(name.encode()) is not None)

    def _mode_switch(self, node: ast.Call) -> None:
        """Record ``x.eval()``, ``x.train(False)`` (eval mode) and ``x.train()``
        (training mode; an unknown argument forgets what ``x`` was)."""
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in ("eval", "train"):
            return
        inner = func.value
        while (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
               and inner.func.attr in MODULE_RETURNS_ITSELF):  # `net.cuda().eval()` switches `net`
            inner = inner.func.value
        receiver = dotted(inner)
        if receiver is None:
            return
        modes = self._modes[-1]
        if func.attr == "eval" and (node.args or node.keywords):
            return  # not `Module.eval()` as torch spells it: nothing known changes
        evaled = _mode_set(node)
        if evaled is None:
            modes.pop(receiver, None)
        else:
            modes[receiver] = evaled

    def _evaled(self, node: ast.Call) -> Tuple[str, ...]:
        """The slots of ``node`` filled with an object in eval mode here."""
        modes = self._modes[-1]
        slots: List[str] = []
        for position, argument in enumerate(node.args):
            if isinstance(argument, ast.Starred):
                break
            name = dotted(argument)
            if name is not None and modes.get(name):
                slots.append(str(position))
        for keyword in node.keywords:
            name = dotted(keyword.value) if keyword.arg is not None else None
            if name is not None and modes.get(name):
                slots.append(str(keyword.arg))
        return tuple(slots)


def _switched_mode(value: ast.expr) -> Optional[bool]:
    """What a chain of module methods that return the module leaves it in:
    True for eval mode (``build().eval()``, ``net.eval().cuda()``), False for
    training mode (``.train()``, ``.train(True)``); None when it switches
    nothing or the mode is not a literal."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and (
            value.func.attr in MODULE_RETURNS_ITSELF):
        if value.func.attr in ("eval", "train"):
            return _mode_set(value)
        value = value.func.value
    return None


def _mode_set(call: ast.Call) -> Optional[bool]:
    """Whether ``x.eval()`` / ``x.train(...)`` leaves ``x`` in eval mode:
    True for ``.eval()`` and ``.train(False)``, False for ``.train()`` and
    ``.train(True)``, None for an argument that is not a literal."""
    assert isinstance(call.func, ast.Attribute)
    if call.func.attr == "eval":
        return True if not call.args and not call.keywords else None
    given = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "mode"), None)
    training = True if given is None else python_literal_bool(given)
    return None if training is None else not training


_GRADIENT_WORDS = re.compile(rb"backward|autograd|\.eval\s*\(|\.train\s*\(")
"""Lines walked whatever the focus: gradient calls, and mode switches (what
:attr:`CallSite.evaled` reads)."""


def _focus_lines(text: Union[str, bytes], focus: "re.Pattern[bytes]") -> List[int]:
    """The numbers of the lines that mention a wanted name or a gradient call."""
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    found: Set[int] = set()
    for pattern in (focus, _GRADIENT_WORDS):
        for match in pattern.finditer(data):
            found.add(data.count(b"\n", 0, match.start()) + 1)
    return sorted(found)


def _parse_contribution(path: Path, text: Union[str, bytes], module: str,
                        focus: "Optional[re.Pattern[bytes]]" = None,
                        star_bound: Tuple[Tuple[str, str], ...] = ()) -> Contribution:
    """Classes and calls of one file; with ``focus``, only statements with a
    line that matches it (or calls backward) are walked for calls;
    ``star_bound``: what the file's star imports of project modules bind
    (``torch`` through ``from utils.utils import *``), where its own imports do not."""
    tree = parse_quietly(text)
    if tree is None:
        return Contribution()
    is_package = path.stem == "__init__"
    imports = module_imports(tree, module, is_package)
    for name, target in star_bound:
        imports.setdefault(name, target)
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
            tuple(b for b in (resolve(base, imports, local) for base in s.bases) if b is not None),
        )
        for s in tree.body
        if isinstance(s, ast.ClassDef)
    )
    stars = project_star_modules(tree, module, is_package)
    scan = _CallScan(str(path), module, is_package, None if focus is None else _focus_lines(text, focus),
                     stars, frozenset(local), focus)
    try:
        for statement in tree.body:
            scan.scan(statement, imports, False, 0)
        calls = tuple(scan.sites())
    except RecursionError:
        calls = ()
    return Contribution(classes, calls)


_STORE_FORMAT = b"project-contribution-4"


def _to_json(found: Contribution) -> Dict[str, Any]:
    return {
        "classes": [[c.qualified, c.path, c.line, list(c.bases)] for c in found.classes],
        "calls": [[t, s.path, s.line, s.caller_module, s.grad_disabled, s.training_step, list(s.evaled)]
                  for t, s in found.calls],
    }


def _from_json(data: Any) -> Optional[Contribution]:
    """The contribution a stored value holds; None unless it has exactly the
    shape :func:`_to_json` writes (a damaged entry is a miss)."""
    try:
        classes = tuple(
            ClassInfo(q, p, n, tuple(b)) for q, p, n, b in data["classes"]
            if all_of(str, q, p) and count(n) and isinstance(b, list) and all_of(str, *b)
        )
        calls = tuple(
            (t, CallSite(p, n, m, g, r, tuple(e))) for t, p, n, m, g, r, e in data["calls"]
            if all_of(str, t, p, m) and count(n) and all_of(bool, g, r) and isinstance(e, list) and all_of(str, *e)
        )
    except (KeyError, TypeError, ValueError):
        return None
    if len(classes) != len(data["classes"]) or len(calls) != len(data["calls"]):
        return None
    return Contribution(classes, calls)


def contribution(path: Path, data: bytes, module: str, store: Optional[Store] = None,
                 focus: "Optional[re.Pattern[bytes]]" = None,
                 star_bound: Tuple[Tuple[str, str], ...] = ()) -> Contribution:
    """One file's contribution, from ``store`` when it holds it (a warm run
    parses nothing), else parsed and stored.  ``focus`` (names of wanted
    functions) limits the walk for calls to the statements that mention one;
    ``star_bound`` (part of the key): see :func:`_parse_contribution`."""
    if store is None:
        return _parse_contribution(path, data, module, focus, star_bound)
    kind = _STORE_FORMAT + b"".join(f"\0{name}={target}".encode() for name, target in star_bound)
    key = store_key(path, data, module, focus, kind)
    stored = store.get_facts(key)
    found = _from_json(stored) if isinstance(stored, dict) else None
    if found is None:
        found = _parse_contribution(path, data, module, focus, star_bound)
        store.put_facts(key, _to_json(found))
    return found


# -- subclasses ---------------------------------------------------------------------

# A class header's words up to its first parenthesis (the search stops at any
# parenthesis: one that never closes costs its own text, not the rest of the file's).
_CLASS_HEADER = re.compile(rb"class\s+\w+\s*\(([^()]*)")
_WORD = re.compile(rb"\w+")


def hierarchy(texts: Sequence[Text], bases: Sequence[str], store: Optional[Store],
              module_of: Callable[[Path], str] = module_name) -> Dict[str, ClassInfo]:
    """The project classes deriving from one of ``bases``, parsing only the
    files whose text has a class header naming a base or a class already
    found: a run pays for the few files that matter, not for parsing the
    whole project twice.  Each file's class headers are read once and each
    file is parsed at most once, so a long chain of subclasses costs what
    its links do."""
    by_word: Dict[bytes, List[int]] = {}
    for i, (_path, text) in enumerate(texts):
        if b"class" not in text:
            continue
        words: Set[bytes] = set()
        for header in _CLASS_HEADER.finditer(text):
            words.update(_WORD.findall(header.group(1)))
        for word in words:
            by_word.setdefault(word, []).append(i)
    pending: List[bytes] = []
    asked: Set[bytes] = set()
    children: Dict[bytes, List[bytes]] = {}  # a base's last word -> classes found deriving from it

    def ask(word: bytes) -> None:
        if word not in asked:
            asked.add(word)
            pending.append(word)

    for base in sorted(bases):
        ask(base.rsplit(".", 1)[-1].encode())
    done: Set[int] = set()
    found: Dict[str, ClassInfo] = {}
    while pending:
        word = pending.pop()
        for child in children.get(word, ()):
            ask(child)  # a subclass, maybe: files naming it in a header are read too
        for i in by_word.get(word, ()):
            if i in done:
                continue
            done.add(i)
            path, text = texts[i]
            for info in contribution(path, text, module_of(path), store).classes:
                found.setdefault(info.qualified, info)
                name = info.qualified.rsplit(".", 1)[-1].encode()
                for base in info.bases:
                    last = base.rsplit(".", 1)[-1].encode()
                    children.setdefault(last, []).append(name)
                    if last in asked:
                        ask(name)
    index = ProjectIndex(found)
    relevant: Set[str] = set()
    for root in bases:
        relevant |= index.subclasses_of(root)
    return {name: found[name] for name in sorted(relevant)}


# -- callers -------------------------------------------------------------------------

_TOP_LEVEL = re.compile(rb"(?m)^(?:@|class\b|(?:async[ \t]+)?def[ \t]+(\w+))")


def _words(words: Iterable[str]) -> Optional["re.Pattern[bytes]"]:
    wanted = sorted(set(words))
    return re.compile(b"|".join(re.escape(w.encode()) for w in wanted)) if wanted else None


def _callee_functions(text: bytes, module_words: Optional["re.Pattern[bytes]"],
                      function_words: Optional["re.Pattern[bytes]"], every: bool = False) -> Set[bytes]:
    """The module-level functions of one file that the callers query asks
    about (with ``every``: all of them)."""
    every = every or (module_words is not None and module_words.search(text) is not None)
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


def _called_from(texts: Sequence[Text], caller_words: Sequence[str], statements: Callable[[bytes], List[bytes]],
                 module_of: Callable[[Path], str]) -> Tuple[Dict[str, str], Set[bytes]]:
    """The run's modules (path -> name) whose module-level functions a file
    containing one of ``caller_words`` imports and names, and those
    functions: ``from evaluate import metrics`` or ``import evaluate`` and
    ``evaluate.metrics(...)`` in a file that calls ``.eval(``."""
    pattern = _words(caller_words)
    if pattern is None:
        return {}, set()
    callers = [(path, text) for path, text in texts if pattern.search(text) is not None]
    if not callers:
        return {}, set()
    by_module: Dict[str, Text] = {}
    for path, text in texts:
        by_module.setdefault(module_of(path), (path, text))
    defined: Dict[str, Set[bytes]] = {}  # each module's top-level functions, found once
    modules: Dict[str, str] = {}
    names: Set[bytes] = set()
    for path, text in callers:
        own = module_of(path)
        words: Optional[Set[bytes]] = None
        for imported, taken in imported_modules(statements(text), own, Path(path).stem == "__init__"):
            for candidate in (imported, *(f"{imported}.{name}" for name in taken)):
                found = by_module.get(candidate)
                if found is None or candidate == own:
                    continue
                words = set(_WORD.findall(text)) if words is None else words
                if candidate not in defined:
                    defined[candidate] = _callee_functions(found[1], None, None, every=True)
                wanted = defined[candidate] & words
                if wanted:
                    modules[os.path.abspath(found[0])] = candidate
                    names |= wanted
    return modules, names


def _callers(texts: Sequence[Text], module_words: Sequence[str], function_words: Sequence[str],
             store: Optional[Store], statements: Callable[[bytes], List[bytes]] = import_statements,
             module_of: Callable[[Path], str] = module_name, caller_words: Sequence[str] = (),
             stars: Optional[Mapping[str, Exports]] = None,
             ) -> Tuple[Dict[str, Tuple[CallSite, ...]], Dict[str, str]]:
    """Calls from other modules of the functions the query asks about (and of
    those :func:`_called_from` finds).  Only files with an import line naming
    one of their modules and a mention of one of the functions are parsed (or
    read from ``store``)."""
    modules_pattern, functions_pattern = _words(module_words), _words(function_words)
    modules, names = _called_from(texts, caller_words, statements, module_of)
    if modules_pattern is None and functions_pattern is None and not modules:
        return {}, {}
    for path, text in texts:
        found = _callee_functions(text, modules_pattern, functions_pattern)
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
        for target, site in contribution(path, text, module, store, focus, _star_torch(path, text, module, stars)).calls:
            if target.rsplit(".", 1)[0] in callee_modules:
                calls.setdefault(target, []).append(site)
    return {name: tuple(sites) for name, sites in sorted(calls.items())}, modules


def _star_torch(path: Path, text: bytes, module: str,
                stars: Optional[Mapping[str, Exports]]) -> Tuple[Tuple[str, str], ...]:
    """``(("torch", "torch"),)`` when a star import of a project module binds
    ``torch`` to torch in this file (``from utils.utils import *`` of a module
    that does ``import torch``): its ``with torch.no_grad():`` is torch's."""
    if not stars or b"import *" not in text:
        return ()
    if any(star_lookup(stars, name, "torch") == "torch" for name in star_imported(path, text, module)):
        return (("torch", "torch"),)
    return ()


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
    if any(b"*" in statement and set(_WORD.findall(statement)) & stems for statement in statements):
        # ``from utils import *``: any wanted function the file mentions.
        found |= set(_WORD.findall(text)) & names
    attribute = re.compile(rb"\b(?:" + b"|".join(re.escape(s) for s in sorted(imported)) + rb")\s*\.\s*(\w+)")
    found |= set(attribute.findall(text)) & names
    return found


# -- keywords passed and methods called anywhere ----------------------------------------


def used_in_calls(texts: Sequence[Text], keywords: Iterable[str] = (),
                  methods: Iterable[str] = ()) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """Which of the ``keywords`` some call in ``texts`` (path, contents)
    passes by name, and which of the ``methods`` some call makes on any value
    (``x.half()``); only files whose text contains a word looked for are
    parsed (:func:`one_parse_each`, which the index uses)."""
    parts = one_parse_each(texts, frozenset(), keywords, methods, (), None, None)
    return parts.keywords, parts.methods


def calls_in(tree: ast.AST, keywords: Iterable[str], methods: Iterable[str]) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """Which of ``keywords`` some call of one file's tree passes by name, and
    which of ``methods`` some call makes (nothing for a tree nested too deeply)."""
    wanted_keywords, wanted_methods = set(keywords), set(methods)
    passed: Set[str] = set()
    called: Set[str] = set()
    try:
        nodes = list(ast.walk(tree))
    except RecursionError:
        return frozenset(), frozenset()
    for node in nodes:
        if isinstance(node, ast.keyword) and node.arg in wanted_keywords:
            passed.add(node.arg)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in wanted_methods:
                called.add(node.func.attr)
    return frozenset(passed), frozenset(called)


# -- method shapes --------------------------------------------------------------------

_METHODS_FORMAT = b"project-methods-2"


def _defined_methods(tree: ast.Module, module: str, wanted: FrozenSet[str]) -> List[Tuple[str, str, MethodShape]]:
    """(class, method, shape) for each wanted method a module-level class
    defines in its own body (the last ``def`` of a name is the one that counts)."""
    found: Dict[Tuple[str, str], Optional[MethodShape]] = {}
    for statement in module_level(tree):
        if not isinstance(statement, ast.ClassDef):
            continue
        for member in statement.body:
            if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and member.name in wanted:
                found[(f"{module}.{statement.name}", member.name)] = MethodShape.of_ast(member)
    return [(cls, name, shape) for (cls, name), shape in found.items() if shape is not None]


def _stored_methods(path: Path, data: bytes, module: str, wanted: FrozenSet[str], pattern: "re.Pattern[bytes]",
                    store: Optional[Store]) -> List[Tuple[str, str, MethodShape]]:
    """One file's part of :attr:`ProjectIndex.methods`, from ``store`` when it holds it."""
    key = store_key(path, data, module, pattern, _METHODS_FORMAT)
    stored = store.get_facts(key) if store is not None else None
    if isinstance(stored, list):
        try:
            parts = [
                (c, n, MethodShape(tuple(k), p, bool(v), bool(w))) for c, n, k, p, v, w in stored
                if all_of(str, c, n, *k) and count(p) and all_of(bool, v, w)
            ]
            if len(parts) == len(stored):
                return parts
        except (TypeError, ValueError):
            pass
    tree = parse_quietly(data)
    if tree is None:
        return []
    found = _defined_methods(tree, module, wanted)
    if store is not None:
        store.put_facts(key, [[c, n, list(m.keywords), m.positional, m.variadic_positional, m.variadic_keywords]
                              for c, n, m in found])
    return found


def _methods(texts: Sequence[Text], names: Iterable[str], store: Optional[Store],
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
