"""The import table: which local name means which ``torch`` object.

Rules ask :meth:`ImportTable.qualified_name` what an expression refers to
instead of matching text, so ``import torch.nn as nn``, ``from torch import nn``
and ``from torch.nn import DataParallel as DP`` all resolve to the same public
name.  The table answers from the file's own scopes, built once in one walk of
the tree (cheaper than libcst's ``QualifiedNameProvider``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, List, Optional, Sequence, Set

import libcst as cst

from torchlint.analysis.imports import absolute_import
from torchlint.analysis.index import EMPTY, ProjectIndex
from torchlint.analysis.scopes import Binding, BindingKind, Scope, ScopeKind, Scopes, every_parameter
from torchlint.source.tree import dotted
from torchlint.analysis.canonical import canonical as canonical
from torchlint.data.apidata import listed_name, star_exports

if TYPE_CHECKING:
    from torchlint.analysis.flow import Flow

__all__ = ["ImportTable", "canonical", "dotted"]

def _is_torch(module: str) -> bool:
    return module == "torch" or module.startswith("torch.")


class ImportTable:
    """Local names bound by imports, resolved to dotted paths *where they are
    used*: the file's scopes (:mod:`torchlint.analysis.scopes`) decide which
    binding a name refers to, so an import inside a function does not leak
    into the module and ``torch = fake`` inside a function hides torch there.

    A name resolves only when every binding it may refer to in its scope is
    an import of the same path (flow-insensitive: a rebinding anywhere in the
    scope makes it ambiguous).  Nodes that are not part of the module (built
    by a rule, or parsed on their own) resolve in the scope the engine's
    traversal is in.
    """

    def __init__(self, scopes: "Callable[[], Scopes]", path: Optional[str] = None,
                 project: ProjectIndex = EMPTY) -> None:
        self._make_scopes = scopes
        self._path = path
        """The file's path: which package a relative star import (``from .utils import *``) is in."""
        self._project = project
        """The run's index: what a star import of a project module binds."""
        self._scopes: Optional[Scopes] = None
        self._stack: List[Scope] = []
        self._open: List[cst.CSTNode] = []
        self._flow: "Optional[Callable[[], Flow]]" = None
        """The file's flow, when the analyses give it (:meth:`follow_flow`)."""

    def follow_flow(self, flow: "Callable[[], Flow]") -> None:
        """Let a name bound both by an import and otherwise resolve through
        the bindings that reach the read (``from torch.utils import data``,
        then ``data.DataLoader(...)``, and only later ``for data in loader``)."""
        self._flow = flow

    @classmethod
    def from_module(cls, module: cst.Module, path: Optional[str] = None,
                    project: ProjectIndex = EMPTY) -> "ImportTable":
        """The table of one module (in the run whose index is ``project``);
        its scopes are built on first use."""
        return cls(lambda: Scopes(module), path, project)

    @property
    def scopes(self) -> Scopes:
        """The module's scopes (built now if not yet)."""
        if self._scopes is None:
            self._scopes = self._make_scopes()
        return self._scopes

    # -- the traversal's position -------------------------------------------

    def enter(self, node: cst.CSTNode) -> None:
        """The traversal enters a scope-opening node (def, class, lambda,
        comprehension)."""
        self._open.append(node)

    def leave(self, node: cst.CSTNode) -> None:
        """The traversal leaves the node :meth:`enter` was last given."""
        if self._open and self._open[-1] is node:
            self._open.pop()

    def push_scope(self, parameters: cst.Parameters) -> None:
        """Enter a function (not part of the module) whose parameters hide
        imported names."""
        scope = Scope(ScopeKind.FUNCTION, None, self.current_scope)
        for param in every_parameter(parameters):
            scope.bindings.setdefault(param.name.value, []).append(
                Binding(param.name.value, BindingKind.PARAMETER, param, value=param.default, scope=scope)
            )
        self._stack.append(scope)

    def pop_scope(self) -> None:
        """Leave the innermost function entered with :meth:`push_scope`."""
        self._stack.pop()

    @property
    def current_scope(self) -> Scope:
        """The scope the traversal is in."""
        if self._stack:
            return self._stack[-1]
        for node in reversed(self._open):
            scope = self.scopes.scope_of(node)
            if scope is not None:
                return scope
        return self.scopes.module_scope

    @property
    def in_function(self) -> bool:
        """Whether the traversal is inside a function or lambda body."""
        return bool(self._stack) or any(isinstance(n, (cst.FunctionDef, cst.Lambda)) for n in self._open)

    # -- questions ------------------------------------------------------------

    def binding(self, local: str, scope: Optional[Scope] = None) -> Optional[str]:
        """The dotted path ``local`` was imported as, seen from ``scope`` (by
        default where the traversal is), if every binding agrees."""
        where = scope if scope is not None else self.current_scope
        owner = where.owner_of(local)
        if owner is None:
            return self._star_binding(local, where) if self.scopes.star_imports else None
        return self._agreed(owner.bindings[local])

    def _agreed(self, bindings: Sequence[Binding]) -> Optional[str]:
        """The dotted path every one of ``bindings`` imports, if they agree."""
        target: Optional[str] = None
        for binding in bindings:
            if binding.import_fallback:
                continue  # `except ImportError: name = None`
            if binding.kind is not BindingKind.IMPORT or binding.imported is None:
                return None
            if target is not None and binding.imported != target:
                # imported in branches from two places: one callable when the data
                # tables list both as names of one entry (`tqdm.auto.tqdm`, `tqdm.contrib.slack.tqdm`)
                if listed_name(binding.imported) != listed_name(target):
                    return None
                target = listed_name(target)
                continue
            target = binding.imported
        if target is not None and not _is_torch(target):
            # `from dataset import DataLoader`, where the project's dataset.py imports torch's.
            found = self._project.named_export(target)
            if found is not None and _is_torch(found):
                return found
        return target

    def _reaching_import(self, name: cst.Name, scope: Optional[Scope]) -> Optional[str]:
        """For a name the file binds both by an import and by something else:
        the import, when it is every binding that reaches this read."""
        if self._flow is None:
            return None
        owner = (scope if scope is not None else self.current_scope).owner_of(name.value)
        if owner is None or not any(b.kind is BindingKind.IMPORT for b in owner.bindings[name.value]):
            return None
        reaching = self._flow().reaching_bindings(name)
        return self._agreed(reaching) if reaching else None

    def _star_binding(self, local: str, scope: Scope) -> Optional[str]:
        stars: List[str] = []
        others: List[str] = []
        walk: Optional[Scope] = scope
        while walk is not None:
            stars += [m for m in walk.star_imports if _is_torch(m) and m not in stars]
            others += [m for m in walk.star_imports if not _is_torch(m) and m not in others]
            walk = walk.parent
        if len(stars) == 1:
            star = stars[0]
            if local[:1].isupper() or star == "torch":
                return f"{star}.{local}"
            return None
        if stars:
            return None
        # A project module's star import: what the project index says it binds, by
        # import or by a definition of its own (`from utils import *`, then `evaluate(...)`).
        index = self._project
        found = {index.star_binding(module, local) for module in map(self._absolute, others) if module} - {None}
        # A library's star import of a callable the wrapper table lists (`from tqdm import *`).
        found |= {star_exports().get((module, local)) for module in others if not module.startswith(".")} - {None}
        return found.pop() if len(found) == 1 else None

    def _absolute(self, star: str) -> Optional[str]:
        """The module a star import names: ``.utils`` made absolute from the
        file's package (None without a path, or above the top package)."""
        if not star.startswith("."):
            return star
        if self._path is None:
            return None
        level = len(star) - len(star.lstrip("."))
        return absolute_import(self._path, level, star[level:] or None)

    def qualified_name(self, expr: cst.BaseExpression) -> Optional[str]:
        """The public dotted name that ``expr`` refers to, or None if unknown."""
        # Exact type tests: isinstance on libcst's ABCs is slow, and this runs
        # for every call of every file.
        parts: List[str] = []
        root_node = expr
        while type(root_node) is cst.Attribute:
            parts.append(root_node.attr.value)
            root_node = root_node.value
        if type(root_node) is not cst.Name:
            return None
        scope = None if self._stack else self.scopes.name_scope(root_node)
        base = self.binding(root_node.value, scope)
        if base is None:
            base = self._reaching_import(root_node, scope)
        if base is None:
            return None
        if parts:
            parts.append(base)
            return canonical(".".join(reversed(parts)))
        return canonical(base)

    def call_name(self, node: cst.Call) -> Optional[str]:
        """The qualified name of the function a call invokes."""
        return self.qualified_name(node.func)

    def local_name_for(self, module: str) -> Optional[str]:
        """How this file spells a module at module level (``torch`` may be
        imported as ``th``); imports inside functions do not count."""
        module_scope = self.scopes.module_scope
        for local in sorted(module_scope.bindings):
            if self.binding(local, module_scope) == module:
                return local
        return None

    def is_bound(self, local: str) -> bool:
        """Whether anything in the file binds ``local`` where the traversal is."""
        return bool(self.current_scope.lookup(local))

    def names_bound_to(self, targets: Iterable[str]) -> Set[str]:
        """Module-level names imported as any of ``targets``."""
        wanted = set(targets)
        module_scope = self.scopes.module_scope
        return {local for local in module_scope.bindings if self.binding(local, module_scope) in wanted}
