"""Where a project pickles whole objects with ``torch.save``.

``torch.load(..., weights_only=True)`` accepts tensors, numbers, strings and
plain containers of them; a checkpoint that holds a module, an optimizer or
any other object (``torch.save(model, path)``, a pickled ``(model,
criterion, optimizer)`` tuple, a corpus object) cannot be loaded that way.
This fact finds those saves from CPython's ``ast`` of each file, from facts
only: the object saved (or an element of a container saved) is ``self``, an
instance of a class the file defines, or what a ``torch.nn``/``torch.optim``
class or a ``torchvision.models`` builder returns, directly or through a
name (or ``self`` attribute) the file binds to one.  A ``state_dict()`` is
not a whole object; anything not known is not counted.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from torchlint.analysis.imports import Text, module_imports, parse_quietly, resolve
from torchlint.analysis.store import Store, all_of, count, store_key

_MODULE_NAMESPACES = ("torch.nn.", "torch.optim.", "torchvision.models.")
_FUNCTIONS = ("torch.nn.functional.", "torch.nn.init.", "torch.nn.utils.", "torchvision.models.get_")
_SAVE = "torch.save"
_MAX_DEPTH = 6
_SAVE_CALL = re.compile(rb"save\s*\(")  # a literal start: far faster to search than a \b first


def may_save(data: bytes) -> bool:
    """Whether a file's text may hold a ``torch.save`` call (``save(`` as a
    whole word); files that cannot are not parsed."""
    for match in _SAVE_CALL.finditer(data):
        before = data[match.start() - 1 : match.start()]
        if not before or not (before.isalnum() or before == b"_"):
            return True
    return False


def whole_object_saves(tree: ast.AST, imports: Mapping[str, str],
                       project_classes: Callable[[str], bool] = lambda name: False) -> List[int]:
    """The lines of the ``torch.save`` calls in ``tree`` that save a whole
    object; ``imports`` maps the module's local names to what they import,
    ``project_classes`` says whether a dotted name is a class of the project."""
    return sorted(line for line, names in conditional_saves(tree, imports)
                  if not names or any(project_classes(name) for name in names))


def conditional_saves(tree: ast.AST, imports: Mapping[str, str]) -> List[Tuple[int, Tuple[str, ...]]]:
    """For each ``torch.save`` that may save a whole object: its line, and
    the imported callables (dotted) of which one must be a class for it to
    (none: it does whatever they are)."""
    finder = _Saves(tree, imports)
    found: Dict[int, Set[str]] = {}
    for node in finder.saves:
        names = finder.whole(_saved(node), 0)
        if names is None:
            continue
        if node.lineno in found and not found[node.lineno]:
            continue
        found[node.lineno] = set() if not names else found.get(node.lineno, set()) | names
    return [(line, tuple(sorted(names))) for line, names in sorted(found.items())]


def _saved(call: ast.Call) -> Optional[ast.expr]:
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "obj"), None)


class _Saves:
    def __init__(self, tree: ast.AST, imports: Mapping[str, str]) -> None:
        self._imports = imports
        self.saves: List[ast.Call] = []
        self._classes: Set[str] = set()
        self._names: Dict[str, List[ast.expr]] = {}
        self._attributes: Dict[str, List[ast.expr]] = {}
        self._shadowed: Set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                self._classes.add(node.name)
            elif isinstance(node, ast.Call) and self._qualified(node.func) == _SAVE:
                self.saves.append(node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    self._bind(target, node.value)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for argument in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs):
                    if argument.arg != "self":
                        self._shadowed.add(argument.arg)

    def _bind(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self._names.setdefault(target.id, []).append(value)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            self._attributes.setdefault(target.attr, []).append(value)

    def _qualified(self, func: ast.expr) -> Optional[str]:
        return resolve(func, self._imports, {})

    def whole(self, expr: Optional[ast.expr], depth: int) -> Optional[FrozenSet[str]]:
        """Whether ``expr`` holds a whole object (or a container with one):
        None when not known to, an empty set when it does, else the imported
        callables of which one must be a class."""
        if expr is None or depth > _MAX_DEPTH:
            return None
        if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
            return _either(self.whole(item, depth + 1) for item in expr.elts)
        if isinstance(expr, ast.Dict):
            return _either(self.whole(value, depth + 1) for value in expr.values)
        if isinstance(expr, ast.Name):
            if expr.id == "self":
                return frozenset()
            if expr.id in self._shadowed:
                return None  # a parameter somewhere: what it holds is not known here
            return _either(self.whole(value, depth + 1) for value in self._names.get(expr.id, ()))
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            return _either(self.whole(value, depth + 1) for value in self._attributes.get(expr.attr, ()))
        if isinstance(expr, ast.Call):
            if isinstance(expr.func, ast.Attribute) and expr.func.attr in ("state_dict", "to", "cuda", "cpu"):
                # A state dict is tensors; `.to()`/`.cuda()` return what they are called on.
                return None if expr.func.attr == "state_dict" else self.whole(expr.func.value, depth + 1)
            if isinstance(expr.func, ast.Name) and expr.func.id in self._classes and expr.func.id not in self._imports:
                return frozenset()  # an instance of the file's own class
            qualified = self._qualified(expr.func)
            if qualified is None:
                return None
            if qualified.startswith(_MODULE_NAMESPACES) and not qualified.startswith(_FUNCTIONS):
                return frozenset()
            return None if qualified.startswith(("torch.", "numpy.", "builtins.")) else frozenset({qualified})
        return None


def _either(found: Iterable[Optional[FrozenSet[str]]]) -> Optional[FrozenSet[str]]:
    """Any of several: whole if one is, else the union of the conditions."""
    names: Set[str] = set()
    known = False
    for item in found:
        if item is None:
            continue
        if not item:
            return frozenset()
        known = True
        names |= item
    return frozenset(names) if known else None


def saves_of_module(tree: ast.Module, module: str = "__main__",
                    is_package: bool = False) -> List[Tuple[int, Tuple[str, ...]]]:
    """:func:`conditional_saves` of a module, its imports read as the project index reads them."""
    return conditional_saves(tree, module_imports(tree, module, is_package))


CLASS_HEADER = re.compile(rb"(?m)^class[ \t]+(\w+)")
"""A module-level class statement: how the project's classes are found without parsing."""


_SAVES_FORMAT = b"whole-saves-1"


def project_saves(texts: Sequence[Text], store: Optional[Store],
                  module_of: Callable[[Path], str],
                  parsed: Optional[Mapping[str, "Optional[List[Tuple[int, Tuple[str, ...]]]]"]] = None,
                  ) -> Tuple[Tuple[str, int], ...]:
    """:attr:`ProjectIndex.whole_saves` of the run's files.  A save of what
    an imported callable returns counts when that callable is a module-level
    class of one of the run's files.  Each file's saves are kept in
    ``store``; a file without the word ``save`` is not parsed.  ``parsed``:
    the saves of files already read from their tree (by the index's one
    pass over each file), by path."""
    modules: Dict[str, bytes] = {}
    candidates: List[Tuple[str, int, Tuple[str, ...]]] = []
    for path, data in texts:
        module = module_of(path)
        modules.setdefault(module, data)
        if not may_save(data):
            continue
        key = saves_key(path, data, module)
        found = stored_saves(store.get_facts(key) if store is not None else None)
        if found is None:
            done = parsed.get(str(path)) if parsed is not None else None
            if done is not None:
                found = done
            else:
                tree = parse_quietly(data)
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


def saves_key(path: Path, data: bytes, module: str) -> str:
    """Where one file's saves are kept in the store."""
    return store_key(path, data, module, None, _SAVES_FORMAT)


def stored_saves(stored: Any) -> Optional[List[Tuple[int, Tuple[str, ...]]]]:
    """A stored value of one file's saves, when it has the right shape."""
    if isinstance(stored, list) and all(
            isinstance(item, list) and len(item) == 2 and count(item[0]) and isinstance(item[1], list)
            and all_of(str, *item[1]) for item in stored):
        return [(item[0], tuple(item[1])) for item in stored]
    return None


__all__ = ["CLASS_HEADER", "conditional_saves", "may_save", "project_saves", "saves_key", "saves_of_module", "stored_saves", "whole_object_saves"]
