"""The import table: which local name means which ``torch`` object.

Rules ask :meth:`ImportTable.qualified_name` what an expression refers to
instead of matching text, so ``import torch.nn as nn``, ``from torch import nn``
and ``from torch.nn import DataParallel as DP`` all resolve to the same public
name.  The table is cheap: it reads import statements, not the whole scope
graph that libcst's ``QualifiedNameProvider`` builds.
"""

from __future__ import annotations

import re
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

# Private module paths that re-export a public torch name.
_CANONICAL_PREFIXES: Tuple[Tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^torch\.nn\.modules(?:\.[a-z_]+)?\.([A-Z]\w*)$"), r"torch.nn.\1"),
    (re.compile(r"^torch\.nn\.parallel(?:\.data_parallel)?\.DataParallel$"), "torch.nn.DataParallel"),
    (re.compile(r"^torch\.nn\.parallel\.data_parallel\.data_parallel$"), "torch.nn.parallel.data_parallel"),
    (re.compile(r"^torch\.nn\.parallel\.distributed\.DistributedDataParallel$"),
     "torch.nn.parallel.DistributedDataParallel"),
    (re.compile(r"^torch\.utils\.data\.dataloader\.DataLoader$"), "torch.utils.data.DataLoader"),
    (re.compile(r"^torch\.optim\.[a-z_]+\.([A-Z]\w*)$"), r"torch.optim.\1"),
)

_AMBIGUOUS = "<ambiguous>"

ImportNode = Union[cst.Import, cst.ImportFrom]


def canonical(name: str) -> str:
    """Map a private re-export path to the public torch name."""
    for pattern, replacement in _CANONICAL_PREFIXES:
        if pattern.match(name):
            return pattern.sub(replacement, name)
    return name


def dotted(expr: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a chain of names and attributes, else None."""
    parts: List[str] = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return None
    parts.append(expr.value)
    return ".".join(reversed(parts))


def _module_name(node: Union[cst.Attribute, cst.Name]) -> str:
    name = dotted(node)
    assert name is not None
    return name


class ImportTable:
    """Local names bound by import statements, resolved to dotted paths."""

    def __init__(self) -> None:
        self._bindings: Dict[str, str] = {}
        self._local_defs: Set[str] = set()
        self._star_modules: List[str] = []
        self._shadowed: List[Set[str]] = []
        self._module_bindings: Dict[str, str] = {}

    @classmethod
    def from_module(cls, module: cst.Module) -> "ImportTable":
        """Read the imports at module level (also inside top-level if/try)."""
        table = cls()
        table._scan(module.body)
        table._module_bindings = dict(table._bindings)
        return table

    def _scan(self, body: Sequence[cst.CSTNode]) -> None:
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, (cst.Import, cst.ImportFrom)):
                        self.add(small)
                    elif isinstance(small, (cst.Assign, cst.AnnAssign)):
                        targets = (
                            [t.target for t in small.targets]
                            if isinstance(small, cst.Assign)
                            else [small.target]
                        )
                        for target in targets:
                            if isinstance(target, cst.Name):
                                self._shadow(target.value)
            elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                self._shadow(stmt.name.value)
            elif isinstance(stmt, cst.If):
                self._scan(stmt.body.body)
                orelse = stmt.orelse
                while orelse is not None:
                    self._scan(orelse.body.body)
                    orelse = orelse.orelse if isinstance(orelse, cst.If) else None
            elif isinstance(stmt, cst.Try):
                self._scan(stmt.body.body)
                for handler in stmt.handlers:
                    self._scan(handler.body.body)
                if stmt.orelse is not None:
                    self._scan(stmt.orelse.body.body)

    def _shadow(self, local: str) -> None:
        """A module-level def/class/assignment rebinds an imported name."""
        if local in self._bindings:
            self._bindings[local] = _AMBIGUOUS
        self._local_defs.add(local)

    def _bind(self, local: str, target: str) -> None:
        previous = self._bindings.get(local)
        if previous is not None and previous != target:
            self._bindings[local] = _AMBIGUOUS
        else:
            self._bindings[local] = target

    def add(self, node: ImportNode) -> None:
        """Record the names one import statement binds."""
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = _module_name(alias.name)
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self._bind(alias.asname.name.value, full)
                else:
                    root = full.split(".", 1)[0]
                    self._bind(root, root)
            return
        if node.relative or node.module is None:
            return
        module = _module_name(node.module)
        if isinstance(node.names, cst.ImportStar):
            if (module == "torch" or module.startswith("torch.")) and module not in self._star_modules:
                self._star_modules.append(module)
            return
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            local = alias.name.value
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self._bind(local, f"{module}.{alias.name.value}")

    def push_scope(self, parameters: cst.Parameters) -> None:
        """Enter a function whose parameters hide imported names."""
        params = [
            *parameters.posonly_params, *parameters.params, *parameters.kwonly_params
        ]
        for star in (parameters.star_arg, parameters.star_kwarg):
            if isinstance(star, cst.Param):
                params.append(star)
        self._shadowed.append({param.name.value for param in params})

    @property
    def in_function(self) -> bool:
        """Whether the traversal is inside a function body."""
        return bool(self._shadowed)

    def pop_scope(self) -> None:
        """Leave the innermost function."""
        self._shadowed.pop()

    def binding(self, local: str) -> Optional[str]:
        """The dotted path a local name was imported as, if unambiguous."""
        if any(local in names for names in self._shadowed):
            return None
        target = self._bindings.get(local)
        if target == _AMBIGUOUS:
            return None
        if target is None and len(self._star_modules) == 1 and local not in self._local_defs:
            star = self._star_modules[0]
            if local[:1].isupper() or star == "torch":
                return f"{star}.{local}"
        return target

    def qualified_name(self, expr: cst.BaseExpression) -> Optional[str]:
        """The public dotted name that ``expr`` refers to, or None if unknown."""
        name = dotted(expr)
        if name is None:
            return None
        root, _, rest = name.partition(".")
        base = self.binding(root)
        if base is None:
            return None
        return canonical(f"{base}.{rest}" if rest else base)

    def call_name(self, node: cst.Call) -> Optional[str]:
        """The qualified name of the function a call invokes."""
        return self.qualified_name(node.func)

    def local_name_for(self, module: str) -> Optional[str]:
        """How this file spells a module at module level (``torch`` may be
        imported as ``th``); imports inside functions do not count."""
        for local, target in sorted(self._module_bindings.items()):
            if target == module:
                return local
        return None

    def is_bound(self, local: str) -> bool:
        """Whether an import or module-level definition binds ``local``."""
        return local in self._bindings or local in self._local_defs

    def names_bound_to(self, targets: Iterable[str]) -> Set[str]:
        """Local names bound to any of ``targets``."""
        wanted = set(targets)
        return {local for local, target in self._bindings.items() if target in wanted}
