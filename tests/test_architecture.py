"""The layout's promises that code can check: the core imports one way (no
circle, counting imports inside functions and under ``TYPE_CHECKING``), the
top level holds few modules, and there is no index of "the current run" kept
in a module."""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Dict, FrozenSet, List, Set

import torchlint

PACKAGE = Path(torchlint.__file__).resolve().parent


@functools.lru_cache(maxsize=None)
def _parsed(path: Path) -> ast.Module:
    """A module's tree, parsed once for all the tests here (they only read it)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(tree: ast.Module, module: str, is_package: bool, typing_too: bool = False) -> Set[str]:
    """Every torchlint module a module imports, at any depth (inside
    functions too); under ``if TYPE_CHECKING:`` only with ``typing_too``."""
    found: Set[str] = set()
    pending: List[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if (not typing_too and isinstance(node, ast.If) and isinstance(node.test, ast.Name)
                and node.test.id == "TYPE_CHECKING"):
            pending.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")
                keep = len(parts) - node.level + (1 if is_package else 0)
                base = ".".join([*parts[:keep], *([node.module] if node.module else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        pending.extend(ast.iter_child_nodes(node))
    return {name for name in found if name.startswith("torchlint")}


def _graph(modules: Set[str], typing_too: bool = False) -> Dict[str, Set[str]]:
    return {module: set(imported) for module, imported in _frozen_graph(frozenset(modules), typing_too).items()}


@functools.lru_cache(maxsize=None)
def _frozen_graph(modules: FrozenSet[str], typing_too: bool) -> Dict[str, FrozenSet[str]]:
    graph: Dict[str, FrozenSet[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        module = _module(path)
        if module in modules:
            imported = _imported(_parsed(path), module, path.name == "__init__.py", typing_too)
            graph[module] = frozenset(imported & modules - {module})
    return graph


def _cycle(graph: Dict[str, Set[str]]) -> List[str]:
    """One import circle of ``graph`` (empty when there is none)."""
    state: Dict[str, int] = {}
    stack: List[str] = []

    def visit(node: str) -> List[str]:
        state[node] = 1
        stack.append(node)
        for following in sorted(graph.get(node, ())):
            if state.get(following) == 1:
                return stack[stack.index(following):] + [following]
            if following not in state:
                found = visit(following)
                if found:
                    return found
        state[node] = 2
        stack.pop()
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def test_the_analysis_package_and_the_import_table_import_one_way() -> None:
    """No circle among torchlint.analysis.* and torchlint.analysis.names (names.py and
    analysis/project.py imported each other before)."""
    modules = {_module(p) for p in (PACKAGE / "analysis").rglob("*.py")} | {"torchlint.analysis.names"}
    modules.discard("torchlint.analysis")  # the package's lazy facade, imported by what it re-exports
    assert _cycle(_graph(modules)) == []


def test_the_core_has_no_import_circle() -> None:
    """No circle among all of torchlint's modules, counting imports inside
    functions and under ``TYPE_CHECKING`` (the rule base, the catalog, the
    registry, the specs and the edits imported each other before, and so did
    the settings, the cache and the engine).  The rules (``torchlint.rules``,
    loaded as plugins by the catalog) are outside the core."""
    modules = {_module(p) for p in PACKAGE.rglob("*.py")}
    assert _cycle(_graph(modules, typing_too=True)) == []


# The rooms from the bottom up: a module may import its own room and the rooms below it.
ROOMS = ["model", "version", "data", "source", "analysis", "ruleapi", "jobscript", "report", "lint",
         "interfaces", "verify"]
LEVEL = {"model": 0, "version": 0, "data": 1, "source": 2, "analysis": 3, "ruleapi": 4, "jobscript": 5,
         "report": 5, "lint": 6, "interfaces": 7, "verify": 8}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _upward_imports(graph: Dict[str, Set[str]]) -> List[str]:
    """Each import from a room to one above it (the package's own ``__init__``, the
    public API over everything, is left out)."""
    found = []
    for module, imported in sorted(graph.items()):
        if module == "torchlint" or module == "torchlint.__main__":
            continue
        for other in sorted(imported):
            if other == "torchlint":
                found.append(f"{module} -> {other}")
            elif LEVEL.get(_room(other), -1) > LEVEL.get(_room(module), 99):
                found.append(f"{module} -> {other}")
    return found


def test_every_module_lives_in_a_room_of_the_order() -> None:
    for path in PACKAGE.rglob("*.py"):
        room = _room(_module(path))
        assert room in LEVEL or room in ("", "__main__"), f"{path}: room {room!r} has no place in ROOMS"
    assert set(ROOMS) == set(LEVEL)


def test_rooms_import_only_rooms_below_them() -> None:
    """data < source < analysis < ruleapi < jobscript, report < lint < interfaces < verify
    (ARCHITECTURE.md, "Rooms"); only the package's ``__init__`` (the public API) stands above them all."""
    modules = {_module(p) for p in PACKAGE.rglob("*.py")}
    assert _upward_imports(_graph(modules, typing_too=True)) == []


def test_the_room_order_check_finds_an_upward_import() -> None:
    graph = {"torchlint.source.edits": {"torchlint.lint.engine"}, "torchlint.lint.engine": {"torchlint.source.edits"}}
    assert _upward_imports(graph) == ["torchlint.source.edits -> torchlint.lint.engine"]


def test_the_top_level_holds_few_modules() -> None:
    """The top level is the public API and what every room shares; the rest
    lives in folders named for what they do."""
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= 12, modules


def test_the_cycle_finder_finds_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def test_no_module_keeps_an_index_of_the_current_run() -> None:
    """The project index is passed to each lint; nothing installs one globally."""
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(_parsed(path)):
            if isinstance(node, ast.FunctionDef):
                assert node.name not in ("install", "current"), f"{path.name}: def {node.name}"


def test_one_helper_reads_literal_truth_values() -> None:
    """``literal_bool`` (source/tree.py, re-exported by analysis/values.py) is
    the only code that compares a name's text with "True" or "False" (seven
    rules had a copy each)."""
    found = []
    for root in (PACKAGE, PACKAGE.parent / "rules"):
        for path in root.rglob("*.py"):
            for node in ast.walk(_parsed(path)):
                if not isinstance(node, ast.Compare):
                    continue
                parts = [node.left, *node.comparators]
                parts += [e for p in parts if isinstance(p, (ast.Tuple, ast.List, ast.Set)) for e in p.elts]
                texts = {part.value for part in parts if isinstance(part, ast.Constant)}
                if texts & {"True", "False"} and "None" not in texts:  # ("None", "True", "False"): a constant
                    found.append(f"{path.relative_to(root.parent).as_posix()}:{node.lineno}")
    assert found and all(place.startswith("torchlint/source/tree.py:") for place in found), found


def test_architecture_names_every_package() -> None:
    """ARCHITECTURE.md names every package under torchlint/ (and the README
    points to it): a new room is described where the others are."""
    root = PACKAGE.parent
    text = (root / "ARCHITECTURE.md").read_text(encoding="utf-8")
    packages = sorted(
        path.parent.relative_to(root).as_posix() for path in PACKAGE.rglob("__init__.py")
    )
    packages += sorted(p.relative_to(root).as_posix() for p in PACKAGE.iterdir() if p.is_dir() and p.name == "data")
    missing = [package for package in packages if f"`{package}/`" not in text]
    assert missing == [], f"ARCHITECTURE.md does not describe: {missing}"
    assert "ARCHITECTURE.md" in (root / "README.md").read_text(encoding="utf-8")
