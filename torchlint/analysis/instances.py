"""Which class built a value: the receiver of a method call followed back to
the constructor calls that can have made it.

A rule that asks what ``optimizer.zero_grad()`` accepts needs the class of
``optimizer``.  This fact follows a name through its assignments, a
``self.<attr>`` through every assignment of it in the class's methods, and a
parameter of one of the file's functions through every call of that
function in the file (``main`` builds a wrapper and passes it to ``train``,
which passes it to ``train_epoch``).  A value is known only when every path
ends in a call of a named class; one path it cannot follow (a function
passed around as a value, an unpacking, a decorator) leaves it unknown.

A class of the file is given by its node; anything else by the absolute
dotted name the file's imports give it (relative imports resolved against
the file's package), which is the name the project index uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, List, Mapping, Optional, Set

import libcst as cst

from torchlint.analysis.imports import absolute_import
from torchlint.analysis.index import MethodShape
from torchlint.source.arguments import bind_positions
from torchlint.analysis.scopes import Binding, BindingKind, ScopeKind, Scopes
from torchlint.analysis.values import collect_returns
from torchlint.source.tree import literal_none
from torchlint.analysis.names import dotted

if TYPE_CHECKING:
    from torchlint.analysis.index import ProjectIndex
    from torchlint.analysis.values import Values
    from torchlint.analysis.names import ImportTable

_MAX_DEPTH = 8
"""Calls followed through at most this many functions' parameters."""


@dataclass(frozen=True)
class Maker:
    """A callable whose result a value may be: a class of this file
    (``local``), or whatever the imports call ``qualified``."""

    qualified: Optional[str] = None
    local: Optional[cst.ClassDef] = field(default=None, repr=False)
    """Compared by identity: two classes of one name in different scopes differ."""

    @property
    def local_name(self) -> Optional[str]:
        """The local class's name."""
        return self.local.name.value if self.local is not None else None


def shape_of(function: cst.FunctionDef) -> Optional[MethodShape]:
    """:meth:`MethodShape.of_ast` for a method of this file."""
    if function.decorators:
        return None
    params = function.params
    return MethodShape.of_parameters(
        [p.name.value for p in params.posonly_params], [p.name.value for p in params.params],
        [p.name.value for p in params.kwonly_params], isinstance(params.star_arg, cst.Param),
        params.star_kwarg is not None,
    )


class Instances:
    """The makers of values in one module (answers cached per node)."""

    def __init__(self, scopes: Scopes, names: "ImportTable", values: "Values",
                 parents: Callable[[], Mapping[cst.CSTNode, cst.CSTNode]], path: str, project: "ProjectIndex") -> None:
        self._scopes = scopes
        self._names = names
        self._values = values
        self._parents = parents
        self._path = path
        self._project = project
        self._cache: Dict[cst.CSTNode, Optional[FrozenSet[Maker]]] = {}

    # -- names --------------------------------------------------------------------

    def absolute_name(self, expr: cst.BaseExpression) -> Optional[str]:
        """The dotted name ``expr`` refers to through the file's imports, with
        a relative import (``from .fp16 import Trainer``) made absolute from
        the file's package: the name the project index knows it by."""
        qualified = self._names.qualified_name(expr)
        if qualified is not None:
            return qualified
        parts: List[str] = []
        while isinstance(expr, cst.Attribute):
            parts.insert(0, expr.attr.value)
            expr = expr.value
        if not isinstance(expr, cst.Name):
            return None
        bindings = self._scopes.resolve(expr)
        statement = bindings[0].node if len(bindings) == 1 and bindings[0].kind is BindingKind.IMPORT else None
        if not isinstance(statement, cst.ImportFrom) or not statement.relative:
            return None
        for alias in statement.names if not isinstance(statement.names, cst.ImportStar) else ():
            local = alias.asname.name if alias.asname is not None else alias.name
            if isinstance(local, cst.Name) and local.value == expr.value and isinstance(alias.name, cst.Name):
                source = dotted(statement.module) if statement.module is not None else None
                package = absolute_import(self._path, len(statement.relative), source)
                return None if package is None else ".".join([package, alias.name.value, *parts])
        return None

    def construction(self, expr: cst.BaseExpression) -> Optional[cst.Call]:
        """The one call whose result ``expr`` holds: a name bound once by an
        assignment, or a ``self.<attr>`` the class's methods write once
        (``self.attend = nn.Sequential(...)``); None otherwise."""
        values: List[Optional[cst.BaseExpression]] = []
        if isinstance(expr, cst.Name):
            bindings = self._scopes.resolve(expr)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGN:
                values = [bindings[0].value]
        elif isinstance(expr, cst.Attribute):
            owner = self._values.self_class(expr.value)
            if owner is not None:
                values = list(self._values.attribute_writes(owner).get(expr.attr.value, ()))
        return values[0] if len(values) == 1 and isinstance(values[0], cst.Call) else None

    # -- makers -------------------------------------------------------------------

    def makers(self, expr: cst.BaseExpression) -> Optional[FrozenSet[Maker]]:
        """Every callable whose call may have produced ``expr``'s value; None
        when some path to it is not a call of a named callable."""
        return self._makers(expr, 0)

    def _makers(self, expr: cst.BaseExpression, depth: int) -> Optional[FrozenSet[Maker]]:
        if depth > _MAX_DEPTH:
            return None
        if expr in self._cache:
            return self._cache[expr]
        self._cache[expr] = None  # a cycle is unknown
        found = self._compute(expr, depth)
        self._cache[expr] = found
        return found

    def _compute(self, expr: cst.BaseExpression, depth: int) -> Optional[FrozenSet[Maker]]:
        if isinstance(expr, cst.Call):
            returned = self._returned(expr.func, depth)
            if returned is not None:
                return returned
            maker = self._maker(expr.func)
            return frozenset({maker}) if maker is not None else None
        if isinstance(expr, cst.IfExp):
            return _union([self._makers(branch, depth + 1) for branch in (expr.body, expr.orelse)
                           if not literal_none(branch)])
        if isinstance(expr, cst.Name):
            bindings = self._scopes.resolve(expr)
            return _union([self._of_binding(b, depth) for b in bindings]) if bindings else None
        if isinstance(expr, cst.Attribute):
            owner = self._values.self_class(expr.value)
            if owner is None:
                return None
            assigned = self._values.attribute_writes(owner).get(expr.attr.value)
            if not assigned or any(value is None for value in assigned):
                return None
            return _union([self._makers(value, depth + 1) for value in assigned if value is not None])
        return None

    def _returned(self, func: cst.BaseExpression, depth: int) -> Optional[FrozenSet[Maker]]:
        """A call of a function or method of this file (``build_optimizer(...)``,
        ``self.build_optimizer()``): the makers of what every ``return`` of it gives."""
        callee = self._values.local_callee(func)
        function = callee[0] if callee is not None else None
        if function is None or function.decorators:
            return None
        returns: List[cst.Return] = []
        collect_returns(function.body, returns)
        if any(r.value is None for r in returns):
            return None
        return _union([self._makers(r.value, depth + 1) for r in returns if r.value is not None])

    def _maker(self, func: cst.BaseExpression) -> Optional[Maker]:
        if isinstance(func, cst.Name):
            bindings = self._scopes.resolve(func)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.CLASS:
                node = bindings[0].node
                return Maker(local=node) if isinstance(node, cst.ClassDef) else None
            if any(b.kind is not BindingKind.IMPORT for b in bindings):
                return None  # a variable, a function of the file: not a class we can name
        qualified = self.absolute_name(func)
        return Maker(qualified) if qualified is not None else None

    def _of_binding(self, binding: Binding, depth: int) -> Optional[FrozenSet[Maker]]:
        if binding.kind is BindingKind.PARAMETER:
            return self._of_parameter(binding, depth)
        if binding.kind in (BindingKind.ASSIGN, BindingKind.ANN_ASSIGN, BindingKind.WALRUS) and binding.value is not None:
            return self._makers(binding.value, depth + 1)
        return None

    def _of_parameter(self, binding: Binding, depth: int) -> Optional[FrozenSet[Maker]]:
        """A parameter of a function of this file holds what every call of it
        in the file passes (or the default, where a call passes nothing)."""
        scope = binding.scope
        function = scope.node if scope is not None and scope.kind is ScopeKind.FUNCTION else None
        param = binding.node
        if not isinstance(function, cst.FunctionDef) or function.decorators or not isinstance(param, cst.Param):
            return None
        outer = scope.parent if scope is not None else None
        if outer is None or outer.kind is ScopeKind.CLASS:
            return None  # a method: called through instances, not by its name
        params = function.params
        if param is params.star_arg or param is params.star_kwarg:
            return None
        name = param.name.value
        order = [p.name.value for p in (*params.posonly_params, *params.params)]
        every = [*order, *(p.name.value for p in params.kwonly_params)]
        references = self._scopes.references(outer, function.name.value)
        if not references:
            return None
        passed: List[Optional[FrozenSet[Maker]]] = []
        for reference in references:
            call = self._parents().get(reference)
            if not isinstance(call, cst.Call) or call.func is not reference:
                return None  # the function escapes: called where we cannot see
            bound = bind_positions(call, [order], every)
            argument = bound.argument(name)
            if argument is not None:
                passed.append(self._makers(argument.value, depth + 1))
            elif bound.may_be_present(name) or param.default is None:
                return None  # an unpacking may pass it, or nothing is known
            else:
                passed.append(self._makers(param.default, depth + 1))
        return _union(passed)

    # -- methods ------------------------------------------------------------------

    def method(self, maker: Maker, name: str) -> Optional[MethodShape]:
        """The shape of method ``name`` on instances ``maker`` builds: the
        definition Python finds first, following a class's first base through
        the file's classes (and a project class's own body); None when it is
        not known (an imported base, an outside class, a decorated method)."""
        seen: Set[cst.ClassDef] = set()
        while maker.qualified is None:
            cls = maker.local
            if cls is None or cls in seen:
                return None
            seen.add(cls)
            defined = [s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == name]
            if defined:
                return shape_of(defined[-1])
            if not cls.bases or cls.bases[0].keyword is not None:
                return None
            base = self._maker(cls.bases[0].value)  # the base whose method Python finds next
            if base is None:
                return None
            maker = base
        return self._project.method(maker.qualified, name)


def _union(parts: List[Optional[FrozenSet[Maker]]]) -> Optional[FrozenSet[Maker]]:
    if not parts or any(part is None for part in parts):
        return None
    found: Set[Maker] = set()
    for part in parts:
        assert part is not None
        found |= part
    return frozenset(found)


__all__ = ["Instances", "Maker", "shape_of"]
