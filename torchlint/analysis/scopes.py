"""Scopes and bindings of one file, by Python's own rules.

Every name a file binds is recorded in the scope Python would put it in:
module, class, function, lambda or comprehension.  A class body's names are
invisible inside its methods; a walrus in a comprehension binds in the
enclosing non-comprehension scope; ``global``/``nonlocal`` send a binding to
the scope they name.  Resolution is *flow-insensitive within a scope*: a
name resolves to all bindings of it in the scope that owns it, wherever they
are in that scope, which is what Python decides for function locals and a
safe over-approximation for module and class bodies (a rule seeing two
bindings treats the name as ambiguous).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from torchlint.source.tree import child_fields, dotted, literal_none

_NAME = cst.Name
_ATTRIBUTE = cst.Attribute
_LEAVES = frozenset({str, bool, int, float, cst.MaybeSentinel})
_STATEMENTS = frozenset({
    cst.SimpleStatementLine, cst.For, cst.While, cst.If, cst.With, cst.Try, cst.TryStar,
    cst.FunctionDef, cst.ClassDef, cst.ExceptHandler, cst.ExceptStarHandler, cst.Match,
})


class ScopeKind(enum.Enum):
    """Which construct opened a scope."""

    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"
    LAMBDA = "lambda"
    COMPREHENSION = "comprehension"


class BindingKind(enum.Enum):
    """How a name got bound."""

    ASSIGN = "assign"
    AUG_ASSIGN = "aug-assign"
    ANN_ASSIGN = "ann-assign"
    PARAMETER = "parameter"
    IMPORT = "import"
    FOR = "for"
    WITH = "with"
    EXCEPT = "except"
    WALRUS = "walrus"
    DEL = "del"
    FUNCTION = "function"
    CLASS = "class"
    COMPREHENSION = "comprehension"


ScopeNode = Union[
    cst.Module, cst.ClassDef, cst.FunctionDef, cst.Lambda,
    cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
]
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


@dataclass(frozen=True, eq=False)
class Binding:
    """One place that binds ``name``.

    ``value`` is the expression the name then holds, when the code says it
    exactly (``x = f()``, ``a, b = f(), g()``, a walrus, a parameter's
    default); ``source`` is what the value was drawn from otherwise (the
    iterable of a ``for``, the context manager of a ``with``, the whole
    right-hand side of an unpacking).  ``imported`` is the dotted path of an
    import (``torch.nn`` for ``from torch import nn``).
    """

    name: str
    kind: BindingKind
    node: cst.CSTNode
    value: Optional[cst.BaseExpression] = None
    source: Optional[cst.BaseExpression] = None
    annotation: Optional[cst.BaseExpression] = None
    imported: Optional[str] = None
    scope: Optional["Scope"] = field(default=None, repr=False)
    statement: Optional[cst.CSTNode] = field(default=None, repr=False)
    """The statement line (or compound statement header) that binds it."""
    import_fallback: bool = False
    """``name = None`` in an ``except ImportError:`` (or ``ModuleNotFoundError``)
    handler: the optional-import idiom, where the name is the module or None."""
    target: Optional[cst.Name] = field(default=None, repr=False, compare=False)
    """The name node the binding writes (None for a parameter added by hand)."""
    path: Optional[Tuple[int, ...]] = ()
    """Where the name sits in an unpacking target: ``(1,)`` for ``b`` of
    ``a, b = pair``, ``(1, 0)`` for ``c`` of ``a, (c, d) = ...``; empty when
    the whole value is bound; None when a starred element is on the way."""


class Scope:
    """A namespace: its bindings and declarations, and where it sits."""

    def __init__(self, kind: ScopeKind, node: Optional[cst.CSTNode], parent: Optional["Scope"]) -> None:
        self.kind = kind
        self.node = node
        self.parent = parent
        self.bindings: Dict[str, List[Binding]] = {}
        self.globals: Set[str] = set()
        self.nonlocals: Set[str] = set()
        self.star_imports: List[str] = []
        self.children: List[Scope] = []
        if parent is not None:
            parent.children.append(self)

    def __repr__(self) -> str:
        return f"Scope({self.kind.value}, {sorted(self.bindings)})"

    @property
    def module(self) -> "Scope":
        """The module scope this scope belongs to."""
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def owner_of(self, name: str) -> Optional["Scope"]:
        """The scope whose binding of ``name`` a use here refers to (Python's
        LEGB rule; class scopes are skipped for uses in nested scopes), or
        None when nothing in the file binds it (a builtin or star import)."""
        scope: Optional[Scope] = self
        first = True
        while scope is not None:
            if name in scope.globals:
                module = scope.module
                return module if name in module.bindings else None
            if (first or scope.kind is not ScopeKind.CLASS) and name in scope.bindings:
                return scope
            first = False
            scope = scope.parent
        return None

    def lookup(self, name: str) -> Tuple[Binding, ...]:
        """Every binding a use of ``name`` in this scope may see."""
        owner = self.owner_of(name)
        return tuple(owner.bindings[name]) if owner is not None else ()

    def binds(self, name: str) -> bool:
        """Whether this scope itself binds ``name``."""
        return name in self.bindings

    def iter_bindings(self) -> Iterator[Binding]:
        """This scope's bindings in source order per name."""
        for bindings in self.bindings.values():
            yield from bindings


class Scopes:
    """All scopes of a module, the scope of every name, and name resolution."""

    def __init__(self, module: cst.Module) -> None:
        self.module_scope = Scope(ScopeKind.MODULE, module, None)
        self._of_node: Dict[cst.CSTNode, Scope] = {module: self.module_scope}
        self._of_name: Dict[cst.Name, Scope] = {}
        self._bound: Set[cst.Name] = set()
        self._references: Optional[Dict[Tuple[int, str], List[cst.Name]]] = None
        _Builder(self).walk_body(module.body, self.module_scope)
        self.star_imports = any(scope.star_imports for scope in self.all_scopes())
        """Whether any scope has a ``from ... import *``."""

    def scope_of(self, node: cst.CSTNode) -> Optional[Scope]:
        """The scope a scope-opening node opens, or the scope a ``Name`` is in."""
        found = self._of_node.get(node)
        if found is None and isinstance(node, cst.Name):
            found = self._of_name.get(node)
        return found

    def name_scope(self, name: cst.Name) -> Optional[Scope]:
        """The scope a ``Name`` of the module is in (None for other nodes)."""
        return self._of_name.get(name)

    def resolve(self, name: cst.Name) -> Tuple[Binding, ...]:
        """The bindings visible where ``name`` is used (empty for builtins and
        names the file never binds, or a node that is not in the module)."""
        scope = self._of_name.get(name)
        if scope is None:
            return ()
        return scope.lookup(name.value)

    def references(self, owner: Scope, name: str) -> Tuple[cst.Name, ...]:
        """The reads of ``name`` that resolve to ``owner``'s binding of it
        (from ``owner`` or from scopes nested in it), in source order."""
        if self._references is None:
            found: Dict[Tuple[int, str], List[cst.Name]] = {}
            for node, scope in self._of_name.items():
                if node in self._bound:
                    continue
                resolved = scope.owner_of(node.value)
                if resolved is not None:
                    found.setdefault((id(resolved), node.value), []).append(node)
            self._references = found
        return tuple(self._references.get((id(owner), name), ()))

    def all_scopes(self) -> Iterator[Scope]:
        """Every scope, parents before children."""
        stack = [self.module_scope]
        while stack:
            scope = stack.pop()
            yield scope
            stack.extend(reversed(scope.children))


def every_parameter(parameters: cst.Parameters) -> List[cst.Param]:
    """A signature's parameters in order, ``*args`` and ``**kwargs`` included."""
    found = [*parameters.posonly_params, *parameters.params, *parameters.kwonly_params]
    for star in (parameters.star_arg, parameters.star_kwarg):
        if isinstance(star, cst.Param):
            found.append(star)
    return found


def _unpack(
    target: cst.BaseExpression, value: Optional[cst.BaseExpression], path: Optional[Tuple[int, ...]] = ()
) -> Iterator[Tuple[cst.Name, Optional[cst.BaseExpression], Optional[Tuple[int, ...]]]]:
    """Names a target binds, each with its exact value where the right-hand
    side lines up element by element, and its place in the unpacking (None
    at or past a starred element, whose place is not fixed)."""
    if isinstance(target, cst.Name):
        yield target, value, path
    elif isinstance(target, (cst.Tuple, cst.List)):
        elements = [e.value for e in target.elements]
        starred = any(isinstance(e, cst.StarredElement) for e in target.elements)
        values: Sequence[Optional[cst.BaseExpression]] = [None] * len(elements)
        if (
            isinstance(value, (cst.Tuple, cst.List))
            and len(value.elements) == len(elements)
            and not starred
            and not any(isinstance(e, cst.StarredElement) for e in value.elements)
        ):
            values = [e.value for e in value.elements]
        for index, (element, element_value) in enumerate(zip(elements, values)):
            yield from _unpack(element, element_value, None if starred or path is None else (*path, index))
    elif isinstance(target, cst.StarredElement):
        yield from _unpack(target.value, None, None)


_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})


def _catches_import_error(kind: Optional[cst.BaseExpression]) -> int:
    """1 when a handler's type is ``ImportError``/``ModuleNotFoundError`` (alone
    or in a tuple), else 0."""
    if isinstance(kind, cst.Name):
        return int(kind.value in _IMPORT_ERRORS)
    if isinstance(kind, cst.Tuple):
        return int(any(isinstance(e.value, cst.Name) and e.value.value in _IMPORT_ERRORS for e in kind.elements))
    return 0


def _enclosing_function(scope: Scope, name: str) -> Scope:
    """The function scope a ``nonlocal name`` in ``scope`` refers to: the
    nearest enclosing function that binds it, else the nearest one."""
    nearest: Optional[Scope] = None
    parent = scope.parent
    while parent is not None:
        if parent.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA):
            if parent.binds(name):
                return parent
            nearest = nearest or parent
        parent = parent.parent
    return nearest or scope


class _Builder:
    """One walk over the module that fills :class:`Scopes`."""

    def __init__(self, scopes: Scopes) -> None:
        self._scopes = scopes
        self._of_name = scopes._of_name
        self._statement: Optional[cst.CSTNode] = None
        self._import_handlers = 0

    # -- recording --------------------------------------------------------

    def _bind(self, scope: Scope, name: cst.Name, kind: BindingKind, node: cst.CSTNode, **extra: object) -> None:
        local = name.value
        target = scope
        if local in scope.globals:
            target = scope.module
        elif local in scope.nonlocals:
            target = _enclosing_function(scope, local)
        self._of_name[name] = scope
        self._scopes._bound.add(name)
        value = extra.get("value")
        fallback = (
            self._import_handlers > 0 and kind is BindingKind.ASSIGN
            and literal_none(value)
        )
        binding = Binding(local, kind, node, scope=target, statement=self._statement,
                          import_fallback=fallback, target=name, **extra)  # type: ignore[arg-type]
        target.bindings.setdefault(local, []).append(binding)

    def _bind_targets(
        self, scope: Scope, target: cst.BaseExpression, kind: BindingKind, node: cst.CSTNode,
        value: Optional[cst.BaseExpression], source: Optional[cst.BaseExpression] = None,
    ) -> None:
        exact = value if source is None else None
        for name, element_value, path in _unpack(target, exact):
            whole = source if source is not None else (value if element_value is None else None)
            self._bind(scope, name, kind, node, value=element_value, source=whole, path=path)
        self.walk(target, scope, binding_done=True)

    def _open(self, kind: ScopeKind, node: cst.CSTNode, parent: Scope) -> Scope:
        scope = Scope(kind, node, parent)
        self._scopes._of_node[node] = scope
        return scope

    # -- walking ----------------------------------------------------------

    def walk_body(self, body: Sequence[cst.CSTNode], scope: Scope) -> None:
        for statement in body:
            self.walk(statement, scope)

    def walk(self, node: cst.CSTNode, scope: Scope, binding_done: bool = False) -> None:
        # Hot path: exact type tests (libcst's node classes are ABCs, which
        # makes isinstance slow) and direct field access.
        kind = type(node)
        if kind is _NAME:
            self._of_name.setdefault(node, scope)  # type: ignore[arg-type]
            return
        if kind is _ATTRIBUTE:
            self.walk(node.value, scope)  # type: ignore[attr-defined]
            return
        if kind in _STATEMENTS:
            self._statement = node
        if not binding_done:
            handler = _HANDLERS.get(kind)
            if handler is not None:
                handler(self, node, scope)
                return
        for field_name in child_fields(kind):
            value = getattr(node, field_name)
            value_type = type(value)
            if value_type is list or value_type is tuple:
                for item in value:
                    if type(item) not in _LEAVES:
                        self.walk(item, scope)
            elif value is not None and value_type not in _LEAVES:
                self.walk(value, scope)

    def _walk_all(self, nodes: Sequence[Optional[cst.CSTNode]], scope: Scope) -> None:
        for node in nodes:
            if node is not None:
                self.walk(node, scope)

    def _function(self, node: cst.CSTNode, scope: Scope) -> None:
        assert isinstance(node, cst.FunctionDef)
        self._walk_all([d.decorator for d in node.decorators], scope)
        self._parameters_outside(node.params, scope)
        if node.returns is not None:
            self.walk(node.returns.annotation, scope)
        self._bind(scope, node.name, BindingKind.FUNCTION, node)
        inner = self._open(ScopeKind.FUNCTION, node, scope)
        self._parameters_inside(node.params, inner)
        self.walk(node.body, inner)

    def _lambda(self, node: cst.CSTNode, scope: Scope) -> None:
        assert isinstance(node, cst.Lambda)
        self._parameters_outside(node.params, scope)
        inner = self._open(ScopeKind.LAMBDA, node, scope)
        self._parameters_inside(node.params, inner)
        self.walk(node.body, inner)

    def _parameters_outside(self, parameters: cst.Parameters, scope: Scope) -> None:
        """Defaults and annotations are evaluated where the def stands."""
        for param in every_parameter(parameters):
            if param.default is not None:
                self.walk(param.default, scope)
            if param.annotation is not None:
                self.walk(param.annotation.annotation, scope)

    def _parameters_inside(self, parameters: cst.Parameters, scope: Scope) -> None:
        for param in every_parameter(parameters):
            annotation = param.annotation.annotation if param.annotation is not None else None
            self._bind(scope, param.name, BindingKind.PARAMETER, param, value=param.default, annotation=annotation)

    def _class(self, node: cst.CSTNode, scope: Scope) -> None:
        assert isinstance(node, cst.ClassDef)
        self._walk_all([d.decorator for d in node.decorators], scope)
        self._walk_all([arg.value for arg in (*node.bases, *node.keywords)], scope)
        self._bind(scope, node.name, BindingKind.CLASS, node)
        inner = self._open(ScopeKind.CLASS, node, scope)
        self.walk(node.body, inner)

    def _comprehension(self, node: cst.CSTNode, scope: Scope) -> None:
        assert isinstance(node, _COMPREHENSIONS)
        first = node.for_in
        # The first iterable is evaluated in the enclosing scope.
        self.walk(first.iter, scope)
        inner = self._open(ScopeKind.COMPREHENSION, node, scope)
        comp: Optional[cst.CompFor] = first
        while comp is not None:
            if comp is not first:
                self.walk(comp.iter, inner)
            self._bind_targets(inner, comp.target, BindingKind.COMPREHENSION, comp, None, comp.iter)
            self._walk_all([c.test for c in comp.ifs], inner)
            comp = comp.inner_for_in
        if isinstance(node, cst.DictComp):
            self._walk_all([node.key, node.value], inner)
        else:
            self.walk(node.elt, inner)

    def _assign(self, node: cst.CSTNode, scope: Scope) -> None:
        assert isinstance(node, cst.Assign)
        self.walk(node.value, scope)
        for target in node.targets:
            self._bind_targets(scope, target.target, BindingKind.ASSIGN, node, node.value)

    def _ann_assign(self, node: cst.CSTNode, scope: Scope) -> None:
        assert isinstance(node, cst.AnnAssign)
        self._walk_all([node.annotation.annotation, node.value], scope)
        if isinstance(node.target, cst.Name):
            self._bind(scope, node.target, BindingKind.ANN_ASSIGN, node, value=node.value,
                       annotation=node.annotation.annotation)
        else:
            self.walk(node.target, scope)

    def _aug_assign(self, node: cst.CSTNode, scope: Scope) -> None:
        assert isinstance(node, cst.AugAssign)
        self.walk(node.value, scope)
        if isinstance(node.target, cst.Name):
            self._bind(scope, node.target, BindingKind.AUG_ASSIGN, node, source=node.value)
        else:
            self.walk(node.target, scope)

    def _for(self, node: cst.CSTNode, scope: Scope) -> None:
        assert isinstance(node, cst.For)
        self.walk(node.iter, scope)
        self._bind_targets(scope, node.target, BindingKind.FOR, node, None, node.iter)
        self._walk_all([node.body, node.orelse], scope)

    def _with_item(self, node: cst.CSTNode, scope: Scope) -> None:
        assert isinstance(node, cst.WithItem)
        self.walk(node.item, scope)
        if node.asname is not None:
            self._bind_targets(scope, node.asname.name, BindingKind.WITH, node, None, node.item)

    def _except(self, node: cst.CSTNode, scope: Scope) -> None:
        assert isinstance(node, (cst.ExceptHandler, cst.ExceptStarHandler))
        if node.type is not None:
            self.walk(node.type, scope)
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self._bind(scope, node.name.name, BindingKind.EXCEPT, node, source=node.type)
        imports = _catches_import_error(node.type)
        self._import_handlers += imports
        try:
            self.walk(node.body, scope)
        finally:
            self._import_handlers -= imports

    def _walrus(self, node: cst.CSTNode, scope: Scope) -> None:
        assert isinstance(node, cst.NamedExpr)
        self.walk(node.value, scope)
        home = scope
        while home.kind is ScopeKind.COMPREHENSION and home.parent is not None:
            home = home.parent
        if isinstance(node.target, cst.Name):
            self._bind(home, node.target, BindingKind.WALRUS, node, value=node.value)
            self._of_name[node.target] = scope

    def _del(self, node: cst.CSTNode, scope: Scope) -> None:
        assert isinstance(node, cst.Del)
        for name, _, _ in _unpack(node.target, None):
            self._bind(scope, name, BindingKind.DEL, node)
        self.walk(node.target, scope, binding_done=True)

    def _import(self, node: cst.CSTNode, scope: Scope) -> None:
        assert isinstance(node, cst.Import)
        for alias in node.names:
            full = dotted(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self._bind(scope, alias.asname.name, BindingKind.IMPORT, node, imported=full)
            else:
                root: cst.BaseExpression = alias.name
                while isinstance(root, cst.Attribute):
                    root = root.value
                assert isinstance(root, cst.Name)
                self._bind(scope, root, BindingKind.IMPORT, node, imported=root.value)

    def _import_from(self, node: cst.CSTNode, scope: Scope) -> None:
        assert isinstance(node, cst.ImportFrom)
        module = dotted(node.module) if node.module is not None else None
        if isinstance(node.names, cst.ImportStar):
            # A relative one keeps its dots (`.utils`): it never means an installed
            # package, and only the file's own package can say which module it is.
            star = "." * len(node.relative) + (module or "") if node.relative else module
            if star and star not in scope.star_imports:
                scope.star_imports.append(star)
            return
        if node.relative:
            module = None  # a relative import never means an installed package
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            local = alias.name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name
            imported = f"{module}.{alias.name.value}" if module is not None else None
            self._bind(scope, local, BindingKind.IMPORT, node, imported=imported)

    def _declaration(self, node: cst.CSTNode, scope: Scope) -> None:
        """``global x`` / ``nonlocal x``: later bindings of x go elsewhere."""
        assert isinstance(node, (cst.Global, cst.Nonlocal))
        declared = scope.globals if isinstance(node, cst.Global) else scope.nonlocals
        for item in node.names:
            declared.add(item.name.value)
            self._of_name[item.name] = scope
            self._scopes._bound.add(item.name)


_HANDLERS = {
    cst.FunctionDef: _Builder._function,
    cst.Lambda: _Builder._lambda,
    cst.ClassDef: _Builder._class,
    cst.ListComp: _Builder._comprehension,
    cst.SetComp: _Builder._comprehension,
    cst.DictComp: _Builder._comprehension,
    cst.GeneratorExp: _Builder._comprehension,
    cst.Assign: _Builder._assign,
    cst.AnnAssign: _Builder._ann_assign,
    cst.AugAssign: _Builder._aug_assign,
    cst.For: _Builder._for,
    cst.WithItem: _Builder._with_item,
    cst.ExceptHandler: _Builder._except,
    cst.ExceptStarHandler: _Builder._except,
    cst.NamedExpr: _Builder._walrus,
    cst.Del: _Builder._del,
    cst.Import: _Builder._import,
    cst.ImportFrom: _Builder._import_from,
    cst.Global: _Builder._declaration,
    cst.Nonlocal: _Builder._declaration,
}
