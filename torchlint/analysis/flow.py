"""The flow of one file's code: which definitions of a name reach each read
of it, what changes the value in place on the way, and which branches
exclude each other.

One fact, shared by the per-file analyses (loaders, values, placement)
and the rules that ask about order (manual-attention follows the
assignments that reach a read and the reads an assignment reaches;
clip-before-unscale asks which branches exclude each other).  Each
function (and the module body) is walked once,
on first use, in the order Python runs it: both sides of an ``if`` start
from the state before it and meet after it; a loop's body runs zero or more
times (its state is joined with the state before it until nothing grows,
``break`` and ``continue`` included); a ``return``, ``raise``, ``break`` or
``continue`` ends its path; an ``except`` handler starts from every state
its ``try`` body passes through.

A *definition* is a binding of a local name (an assignment, a loop target,
a parameter...), a *change* of the value it holds made in place
(``d.update(...)``, ``d[k] = v``, ``d.append(x)``, ``d.x = y``), or an
*escape* (the value handed to a call, stored in a container or another
name: from there on, anything may change it).  A change or escape keeps the
definitions it follows (:meth:`Flow.before`), so a question about the
object a name holds (``bindings_at``) looks through them, and a question
about its contents (``definitions_at``) sees them; ``reaching_bindings``
and ``reads_reached`` answer the same question in both directions.  Reads in nested
functions and lambdas run at times the flow cannot order: they see every
binding of the name (as :meth:`Scopes.resolve` gives them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from torchlint.analysis.scopes import Binding, BindingKind, Scope, ScopeKind, Scopes, every_parameter
from torchlint.source.tree import children, dotted, literal_bool, literal_constant

_READ_ONLY_METHODS = frozenset({"get", "keys", "values", "items", "copy", "count", "index"})
"""Methods of Python containers that read the value and change nothing."""
_KEEPING_BUILTINS = frozenset({
    "len", "isinstance", "print", "str", "repr", "bool", "id", "hash", "type", "sorted", "list", "tuple",
    "enumerate", "zip", "iter", "next", "reversed", "set", "frozenset", "any", "all", "min", "max", "sum",
    "dict",
})
"""Builtins that read an argument without keeping it (and cannot change a dict or list)."""
_MAX_LOOP_PASSES = 4
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


@dataclass(frozen=True, eq=False)
class Definition:
    """A binding of a local name, or a change or escape of the value it holds."""

    name: str
    node: cst.CSTNode
    """The binding's node (``Binding.node``), the changing call or statement, or the escaping read."""
    binding: Optional[Binding] = None
    """Set for a binding; None for a change or an escape."""
    escape: bool = False
    """The value left the function's sight here (nothing more is known of its contents)."""

    @property
    def change(self) -> Optional[cst.CSTNode]:
        """The call (``d.update(x)``) or statement (``d[k] = v``) of a change; None otherwise."""
        return self.node if self.binding is None and not self.escape else None


State = Optional[Dict[str, FrozenSet[Definition]]]
"""What reaches a point: each local name's definitions; None where no path gets to."""


def _join(*states: State) -> State:
    found: State = None
    for state in states:
        if state is None:
            continue
        if found is None:
            found = dict(state)
            continue
        for name, defs in state.items():
            known = found.get(name)
            found[name] = defs if known is None else known | defs
    return found


def _same(first: State, second: State) -> bool:
    return first == second


class _Loop:
    """``break`` and ``continue`` states of the loop being walked."""

    def __init__(self) -> None:
        self.breaks: List[State] = []
        self.continues: List[State] = []


class _FunctionFlow:
    """One function's (or the module body's) walk."""

    def __init__(self, owner: Scope, scopes: Scopes, body: Sequence[cst.CSTNode],
                 parameters: Sequence[Binding]) -> None:
        self._owner = owner
        self._scopes = scopes
        self._local = frozenset(owner.bindings)
        self._by_target: Dict[cst.Name, Binding] = {}
        for bindings in owner.bindings.values():
            for binding in bindings:
                if binding.target is not None:
                    self._by_target[binding.target] = binding
        self.reads: Dict[cst.Name, FrozenSet[Definition]] = {}
        self.before: Dict[Definition, Set[Definition]] = {}
        self.order: Dict[Definition, int] = {}
        self._made: Dict[Tuple[int, str, bool], Definition] = {}
        self._loops: List[_Loop] = []
        self._handlers: List[List[State]] = []
        self._reached: Optional[Dict[cst.Name, List[cst.Name]]] = None
        state: State = {}
        assert state is not None
        for binding in parameters:
            state[binding.name] = frozenset({self._definition(binding.name, binding.node, binding)})
        self._block(body, state)

    # -- definitions -----------------------------------------------------------------

    def _definition(self, name: str, node: cst.CSTNode, binding: Optional[Binding] = None,
                    escape: bool = False) -> Definition:
        key = (id(node), name, escape)
        found = self._made.get(key)
        if found is None:
            found = self._made[key] = Definition(name, node, binding, escape)
            self.order[found] = len(self.order)
        return found

    def definition_of(self, binding: Binding) -> Definition:
        """The definition a binding makes."""
        return self._definition(binding.name, binding.node, binding)

    def _bind(self, state: State, name: cst.Name) -> State:
        """``name`` (a target node) is bound here."""
        binding = self._by_target.get(name)
        if state is None or binding is None or binding.scope is not self._owner:
            return state
        state[binding.name] = frozenset({self._definition(binding.name, binding.node, binding)})
        return state

    def _changed(self, state: State, name: cst.Name, node: cst.CSTNode, escape: bool) -> None:
        """The value ``name`` holds is changed in place (or escapes) at ``node``."""
        if state is None or not self._is_local(name):
            return
        definition = self._definition(name.value, node, None, escape)
        self.before.setdefault(definition, set()).update(state.get(name.value, frozenset()))
        state[name.value] = frozenset({definition})

    def _is_local(self, name: cst.Name) -> bool:
        if name.value not in self._local:
            return False
        scope = self._scopes.name_scope(name)
        return scope is self._owner or (scope is not None and scope.kind is ScopeKind.COMPREHENSION
                                        and scope.owner_of(name.value) is self._owner)

    def _read(self, state: State, name: cst.Name) -> None:
        if state is not None and name not in self.reads and self._is_local(name):
            self.reads[name] = state.get(name.value, frozenset())
        elif state is not None and self._is_local(name):
            self.reads[name] = self.reads[name] | state.get(name.value, frozenset())

    def behind(self, definitions: Iterable[Definition]) -> Set[Binding]:
        """The bindings behind ``definitions``: their own, and through each
        change or escape those it follows."""
        found: Set[Binding] = set()
        seen: Set[Definition] = set()
        pending = list(definitions)
        while pending:
            definition = pending.pop()
            if definition in seen:
                continue
            seen.add(definition)
            if definition.binding is not None:
                found.add(definition.binding)
            else:
                pending.extend(self.before.get(definition, ()))
        return found

    def reached(self) -> Dict[cst.Name, List[cst.Name]]:
        """For each binding's target name, the reads it reaches (built once)."""
        if self._reached is None:
            self._reached = {}
            for read, definitions in self.reads.items():
                for binding in self.behind(definitions):
                    if binding.target is not None:
                        self._reached.setdefault(binding.target, []).append(read)
        return self._reached

    # -- statements ------------------------------------------------------------------

    def _block(self, statements: Iterable[cst.CSTNode], state: State) -> State:
        for statement in statements:
            state = self._statement(statement, state)
            if self._handlers and state is not None:
                self._handlers[-1].append(dict(state))
        return state

    def _body(self, node: Union[cst.BaseSuite, cst.CSTNode, None], state: State) -> State:
        if node is None:
            return state
        if isinstance(node, cst.IndentedBlock):
            return self._block(node.body, state)
        if isinstance(node, cst.SimpleStatementSuite):
            return self._block(node.body, state)
        if isinstance(node, (cst.Else, cst.Finally)):
            return self._body(node.body, state)
        return self._statement(node, state)

    def _statement(self, node: cst.CSTNode, state: State) -> State:
        if state is None:
            return None  # unreachable code: nothing reaches it
        kind = type(node)
        if kind is cst.SimpleStatementLine:
            return self._block(node.body, state)  # type: ignore[attr-defined]
        if kind is cst.Assign:
            assign = node
            assert isinstance(assign, cst.Assign)
            self._expression(assign.value, state, assign)
            for target in assign.targets:
                state = self._target(target.target, state, assign)
            return state
        if kind is cst.AnnAssign:
            ann = node
            assert isinstance(ann, cst.AnnAssign)
            if ann.value is None:
                return state
            self._expression(ann.value, state, ann)
            return self._target(ann.target, state, ann)
        if kind is cst.AugAssign:
            aug = node
            assert isinstance(aug, cst.AugAssign)
            self._expression(aug.value, state, aug)
            if isinstance(aug.target, cst.Name):
                self._read(state, aug.target)
                return self._bind(state, aug.target)
            return self._target(aug.target, state, aug)
        if kind is cst.Expr:
            self._expression(node.value, state, node)  # type: ignore[attr-defined]
            return state
        if kind in (cst.Return, cst.Raise):
            for child in children(node):
                self._expression(child, state, node)
            return None
        if kind is cst.Break:
            if self._loops:
                self._loops[-1].breaks.append(state)
            return None
        if kind is cst.Continue:
            if self._loops:
                self._loops[-1].continues.append(state)
            return None
        if kind is cst.Del:
            target = node.target  # type: ignore[attr-defined]
            for element in _leaves(target):
                if isinstance(element, cst.Name):
                    binding = self._by_target.get(element)
                    if binding is not None and binding.scope is self._owner:
                        state[binding.name] = frozenset()
                else:
                    self._target(element, state, node)
            return state
        if kind is cst.If:
            return self._if(node, state)  # type: ignore[arg-type]
        if kind is cst.For:
            return self._for(node, state)  # type: ignore[arg-type]
        if kind is cst.While:
            return self._while(node, state)  # type: ignore[arg-type]
        if kind is cst.With:
            with_node = node
            assert isinstance(with_node, cst.With)
            for item in with_node.items:
                self._expression(item.item, state, item)
                if item.asname is not None:
                    state = self._target(item.asname.name, state, item)
            return self._body(with_node.body, state)
        if kind in (cst.Try, cst.TryStar):
            return self._try(node, state)  # type: ignore[arg-type]
        if kind is cst.FunctionDef or kind is cst.ClassDef:
            definition = node
            assert isinstance(definition, (cst.FunctionDef, cst.ClassDef))
            for decorator in definition.decorators:
                self._expression(decorator.decorator, state, decorator)
            if isinstance(definition, cst.FunctionDef):
                for param in every_parameter(definition.params):
                    if param.default is not None:
                        self._expression(param.default, state, param)
            else:
                for arg in (*definition.bases, *definition.keywords):
                    self._expression(arg.value, state, arg)
            return self._bind(state, definition.name)
        if kind is cst.Import or kind is cst.ImportFrom:
            names = node.names  # type: ignore[attr-defined]
            if isinstance(names, cst.ImportStar):
                return state
            for alias in names:
                local = alias.asname.name if alias.asname is not None else alias.name
                while isinstance(local, cst.Attribute):
                    local = local.value
                if isinstance(local, cst.Name):
                    state = self._bind(state, local)
            return state
        if kind is cst.Match:
            match = node
            assert isinstance(match, cst.Match)
            self._expression(match.subject, state, match)
            ends: List[State] = [state]
            for case in match.cases:
                inner = dict(state)
                for name in _pattern_names(case.pattern):
                    inner = self._bind(inner, name) or inner
                if case.guard is not None:
                    self._expression(case.guard, inner, case)
                ends.append(self._body(case.body, inner))
            return _join(*ends)
        for child in children(node):  # assert, global, pass...
            if isinstance(child, cst.BaseExpression):
                self._expression(child, state, node)
        return state

    def _if(self, node: cst.If, state: State) -> State:
        self._expression(node.test, state, node)
        after_body = self._body(node.body, dict(state) if state is not None else None)
        orelse = node.orelse
        if orelse is None:
            after_else = state
        elif isinstance(orelse, cst.If):
            after_else = self._if(orelse, dict(state) if state is not None else None)
        else:
            after_else = self._body(orelse.body, dict(state) if state is not None else None)
        return _join(after_body, after_else)

    def _loop(self, head: State, one_pass: Callable[[State], State]) -> Tuple[State, _Loop]:
        """Run ``one_pass`` (the body from the loop's head) until the head's
        state stops growing; the head state and the loop's breaks."""
        loop = _Loop()
        for _ in range(_MAX_LOOP_PASSES):
            loop.breaks.clear()
            loop.continues.clear()
            self._loops.append(loop)
            try:
                end = one_pass(dict(head) if head is not None else None)
            finally:
                self._loops.pop()
            grown = _join(head, end, *loop.continues)
            if _same(grown, head):
                break
            head = grown
        return head, loop

    def _for(self, node: cst.For, state: State) -> State:
        self._expression(node.iter, state, node)

        def one_pass(entry: State) -> State:
            entry = self._target(node.target, entry, node)
            return self._body(node.body, entry)

        head, loop = self._loop(state, one_pass)
        after = self._body(node.orelse, dict(head) if head is not None else None)
        return _join(after, *loop.breaks)

    def _while(self, node: cst.While, state: State) -> State:
        def one_pass(entry: State) -> State:
            self._expression(node.test, entry, node)
            return self._body(node.body, entry)

        self._expression(node.test, state, node)
        head, loop = self._loop(state, one_pass)
        infinite = (literal_bool(node.test) is True and isinstance(node.test, cst.Name)
                    and not self._scopes.resolve(node.test))
        after = None if infinite else self._body(node.orelse, dict(head) if head is not None else None)
        return _join(after, *loop.breaks)

    def _try(self, node: Union[cst.Try, cst.TryStar], state: State) -> State:
        self._handlers.append([dict(state) if state is not None else None])
        try:
            after_body = self._body(node.body, dict(state) if state is not None else None)
        finally:
            seen = self._handlers.pop()
        entry = _join(*seen)
        ends: List[State] = []
        for handler in node.handlers:
            inner = dict(entry) if entry is not None else None
            if handler.type is not None:
                self._expression(handler.type, inner, handler)
            if handler.name is not None and isinstance(handler.name.name, cst.Name):
                inner = self._bind(inner, handler.name.name)
            ends.append(self._body(handler.body, inner))
        if isinstance(node, cst.Try) and node.orelse is not None:
            after_body = self._body(node.orelse, after_body)
        ends.append(after_body)
        joined = _join(*ends)
        if node.finalbody is not None:
            # Runs on every path, also those that leave early (whose state is
            # not tracked past it: they do not reach what follows).
            if joined is None:
                self._body(node.finalbody, dict(entry) if entry is not None else None)
                return None
            return self._body(node.finalbody, joined)
        return joined

    def _target(self, target: cst.BaseExpression, state: State, statement: cst.CSTNode) -> State:
        """The writes of an assignment target, in order."""
        if isinstance(target, cst.Name):
            return self._bind(state, target)
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                state = self._target(element.value, state, statement)
            return state
        if isinstance(target, cst.StarredElement):
            return self._target(target.value, state, statement)
        if isinstance(target, (cst.Subscript, cst.Attribute)):
            self._expression(target, state, statement, store=True)
            root = target.value
            if isinstance(root, cst.Name):
                self._changed(state, root, statement, escape=False)
        return state

    # -- expressions -----------------------------------------------------------------

    def _expression(self, expr: cst.CSTNode, state: State, parent: cst.CSTNode, store: bool = False) -> None:
        """Reads of local names in ``expr``, in order, with the changes and escapes they make."""
        if state is None:
            return
        stack: List[Tuple[cst.CSTNode, cst.CSTNode]] = [(expr, parent)]
        after: List[Tuple[cst.Name, cst.CSTNode, bool]] = []
        while stack:
            node, above = stack.pop()
            kind = type(node)
            if kind is cst.Name:
                name = node
                assert isinstance(name, cst.Name)
                self._read(state, name)
                how = _use(name, above, self._scopes)
                if how is not None and self._is_local(name):
                    after.append((name, above, how))
                continue
            if kind is cst.Lambda or kind in _SCOPES:
                continue  # runs later: its reads see every binding
            if kind is cst.NamedExpr:
                walrus = node
                assert isinstance(walrus, cst.NamedExpr)
                self._expression(walrus.value, state, walrus)
                if isinstance(walrus.target, cst.Name):
                    self._bind(state, walrus.target)
                continue
            if kind is cst.Call:
                call = node
                assert isinstance(call, cst.Call)
                changed = _method_change(call)
                if changed is not None and self._is_local(changed):
                    after.append((changed, call, False))
                if not _keeps(call, self._scopes):
                    for arg in call.args:
                        if not arg.star and isinstance(arg.value, cst.Name) and self._is_local(arg.value):
                            after.append((arg.value, arg.value, True))
            if kind in _COMPREHENSIONS:
                for child in reversed(_comprehension_parts(node)):
                    stack.append((child, node))
                continue
            if kind is cst.Attribute and store:
                stack.append((node.value, node))  # type: ignore[attr-defined]
                continue
            for child in reversed(children(node)):
                stack.append((child, node))
        for name, above, escape in after:
            self._changed(state, name, above, escape)


def _use(name: cst.Name, parent: cst.CSTNode, scopes: Scopes) -> Optional[bool]:
    """How a read of ``name`` treats its value: None when it only reads it,
    False when it changes it in place (a method call), True when the value
    escapes (handed on or stored)."""
    if isinstance(parent, (cst.Attribute, cst.Arg)):
        return None  # `d.x`, `d.method(...)`, `f(d)`, `**d`: seen from the call
    if isinstance(parent, (cst.Element, cst.DictElement, cst.StarredDictElement, cst.Return, cst.Yield,
                           cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Param)):
        if isinstance(parent, cst.Assign) and parent.value is not name:
            return None
        if isinstance(parent, (cst.AnnAssign, cst.AugAssign)) and parent.value is not name:
            return None
        if isinstance(parent, cst.DictElement) and parent.key is name:
            return None
        return True
    return None


def _keeps(call: cst.Call, scopes: Scopes) -> bool:
    """A call that reads its arguments without keeping or changing them: a
    builtin such as ``len(d)`` or ``dict(d)``, or ``x.update(d)`` (which
    copies what ``d`` holds)."""
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value == "update"
    return isinstance(func, cst.Name) and func.value in _KEEPING_BUILTINS and not scopes.resolve(func)


def _method_change(call: cst.Call) -> Optional[cst.Name]:
    """The local name ``call`` changes in place: ``d.update(...)`` and any
    other method but those that only read (``get``, ``keys``, ``copy``...)."""
    func = call.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        if func.attr.value not in _READ_ONLY_METHODS:
            return func.value
    return None


def _leaves(target: cst.BaseExpression) -> List[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [leaf for element in target.elements for leaf in _leaves(element.value)]
    return [target]


def _pattern_names(pattern: cst.MatchPattern) -> List[cst.Name]:
    found: List[cst.Name] = []
    stack: List[cst.CSTNode] = [pattern]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.MatchAs) and node.name is not None:
            found.append(node.name)
        elif isinstance(node, cst.MatchStar) and node.name is not None:
            found.append(node.name)
        elif isinstance(node, cst.MatchMapping) and node.rest is not None:
            found.append(node.rest)
        stack.extend(children(node))
    return found


def _comprehension_parts(node: cst.CSTNode) -> List[cst.CSTNode]:
    """A comprehension's parts in the order they run (its first iterable first)."""
    parts: List[cst.CSTNode] = []
    comp: Optional[cst.CompFor] = node.for_in  # type: ignore[attr-defined]
    while comp is not None:
        parts.append(comp.iter)
        parts.extend(c.test for c in comp.ifs)
        comp = comp.inner_for_in
    if isinstance(node, cst.DictComp):
        parts.extend([node.key, node.value])
    else:
        parts.append(node.elt)  # type: ignore[attr-defined]
    return parts


class Flow:
    """The flow facts of one module, each function walked on first use."""

    def __init__(self, module: cst.Module, scopes: Scopes, parents: Callable[[], Mapping[cst.CSTNode, cst.CSTNode]],
                 code: Callable[[cst.CSTNode], str]) -> None:
        self._module = module
        self._scopes = scopes
        self._parents = parents
        self._code = code
        self._flows: Dict[cst.CSTNode, Optional[_FunctionFlow]] = {}

    # -- reaching definitions ------------------------------------------------------------

    def _flow_of(self, name: cst.Name) -> Optional[_FunctionFlow]:
        """The walk of the function (or module body) whose local ``name`` is."""
        scope = self._scopes.name_scope(name)
        if scope is None:
            return None
        owner = scope.owner_of(name.value)
        while scope is not None and scope.kind is ScopeKind.COMPREHENSION:
            scope = scope.parent
        if owner is None or owner is not scope or owner.kind not in (ScopeKind.FUNCTION, ScopeKind.MODULE):
            return None  # a global or a closure's variable read in a function: order unknown
        return self._walk(owner)

    def _walk(self, owner: Scope) -> Optional[_FunctionFlow]:
        node = owner.node
        if node is None:
            return None
        if node in self._flows:
            return self._flows[node]
        found: Optional[_FunctionFlow] = None
        try:
            if isinstance(node, cst.Module):
                found = _FunctionFlow(owner, self._scopes, node.body, ())
            elif isinstance(node, cst.FunctionDef):
                parameters = [b for bindings in owner.bindings.values() for b in bindings
                              if b.kind is BindingKind.PARAMETER]
                body = node.body.body if isinstance(node.body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()
                found = _FunctionFlow(owner, self._scopes, body, parameters)
        except RecursionError:
            found = None
        self._flows[node] = found
        return found

    def definitions_at(self, name: cst.Name) -> Optional[Tuple[Definition, ...]]:
        """The definitions of ``name`` that reach this read of it, changes and
        escapes included (in source order); None when the read is not one
        the flow orders (a global or closure read in a function, a read in a
        lambda, a name that is not local)."""
        flow = self._flow_of(name)
        if flow is None:
            return None
        found = flow.reads.get(name)
        if found is None:
            return None
        return tuple(sorted(found, key=lambda d: _order(d, flow)))

    def before(self, definition: Definition) -> Tuple[Definition, ...]:
        """The definitions a change or escape follows (those reaching it)."""
        for flow in self._flows.values():
            if flow is not None and definition in flow.before:
                return tuple(flow.before[definition])
        return ()

    def reaching_bindings(self, name: cst.Name) -> Optional[Tuple[Binding, ...]]:
        """The bindings of ``name`` whose value reaches this read of it, looking
        through changes and escapes to the bindings they follow, in the order
        the walk made them; () when none does (a read before any write); None
        when the flow does not order the read (as :meth:`definitions_at`)."""
        definitions = self.definitions_at(name)
        if definitions is None:
            return None
        flow = self._flow_of(name)
        assert flow is not None
        return tuple(sorted(flow.behind(definitions), key=lambda b: _binding_order(b, flow)))

    def bindings_at(self, name: cst.Name) -> Tuple[Binding, ...]:
        """The bindings of ``name`` whose value this read can see
        (:meth:`reaching_bindings`), in :meth:`Scopes.resolve`'s order.  Every
        binding (:meth:`Scopes.resolve`) where the flow cannot order the
        read, and where none reaches it (a read before any write: a global,
        or a ``NameError``)."""
        resolved = self._scopes.resolve(name)
        if len(resolved) < 2:
            return resolved
        found = self.reaching_bindings(name)
        if not found:
            return resolved
        ordered = [b for b in resolved if b in found]
        return tuple(ordered) if ordered else resolved

    def reads_reached(self, target: cst.Name) -> Optional[Tuple[cst.Name, ...]]:
        """The reads that the binding written at ``target`` (the name node of
        an assignment, a loop target...) reaches: the reads whose
        :meth:`reaching_bindings` include it, in the order Python runs them
        (reads in nested functions and lambdas left out: the flow does not
        order them).  None when the flow does not order the name."""
        flow = self._flow_of(target)
        if flow is None:
            return None
        return tuple(flow.reached().get(target, ()))

    # -- branches -----------------------------------------------------------------------

    def branches(self, node: cst.CSTNode) -> Tuple[Tuple[cst.If, bool], ...]:
        """The ``if`` statements around ``node`` up to its function, innermost
        first, each with whether ``node`` is in its body (True) or its ``else``."""
        parents = self._parents()
        found: List[Tuple[cst.If, bool]] = []
        child, parent = node, parents.get(node)
        while parent is not None and not isinstance(parent, _SCOPES):
            if isinstance(parent, cst.If) and child is not parent.test:
                found.append((parent, child is parent.body))
            child, parent = parent, parents.get(parent)
        return tuple(found)

    def fills_default(self, binding: Binding) -> bool:
        """``if p is None: p = ...``: an assignment whose innermost ``if`` (in
        its body) tests that its own name is None; where every value ``p``
        is given is not None, it never runs."""
        if binding.kind is not BindingKind.ASSIGN:
            return False
        chain = self.branches(binding.node)
        if not chain or not chain[0][1]:
            return False
        test = chain[0][0].test
        return (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name)
                and test.left.value == binding.name and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, cst.Is)
                and isinstance(test.comparisons[0].comparator, cst.Name)
                and test.comparisons[0].comparator.value == "None")

    def exclusive(self, first: cst.CSTNode, second: cst.CSTNode) -> bool:
        """No run executes both: they sit on different sides of one ``if``, or
        of two ``if`` statements of one function with the same test
        (:meth:`same_test`: ``if amp: ...`` then later ``if amp: ... else: ...``)."""
        mine = self.branches(first)
        theirs = self.branches(second)
        sides = {id(statement): side for statement, side in theirs}
        if any(id(statement) in sides and sides[id(statement)] != side for statement, side in mine):
            return True
        for statement, side in mine:
            for other, other_side in theirs:
                if other is not statement and other_side != side and self.same_test(statement, other):
                    return True
        return False

    def same_test(self, first: cst.If, second: cst.If) -> bool:
        """Two ``if`` tests written alike whose names have the same reaching
        bindings at both: ``if amp:`` twice is one condition, but not across
        ``amp = not amp``.  What the names hold is taken to answer alike each
        time (``if cfg["amp"]:`` or ``if use_amp():`` twice is one condition;
        a change made in place in between is not noticed); a test that binds
        a name (``:=``) or holds a lambda is never the same."""
        if self._code(first.test) != self._code(second.test):
            return False
        first_names = _names_read(first.test)
        second_names = _names_read(second.test)
        if first_names is None or second_names is None:
            return False
        return all(set(self.bindings_at(one)) == set(self.bindings_at(other))
                   for one, other in zip(first_names, second_names))

    def invariant_in(self, test: cst.BaseExpression, loop: cst.CSTNode) -> bool:
        """``test`` (a condition inside ``loop``) has the same value on every
        iteration: it calls nothing, and no name or attribute it reads is
        written inside the loop (a run-wide flag such as ``args.use_ema``,
        not a cadence such as ``step % 100 == 0``)."""
        names = _test_names(test)
        if names is None:
            return False
        written = self._written_in(loop)
        for name in names:
            if name.value in written[0]:
                return False
        return not (_attribute_chains(test) & written[1])

    def _written_in(self, loop: cst.CSTNode) -> Tuple[Set[str], Set[str]]:
        """The names a loop binds (its target included) and the attribute
        chains it assigns (``self.flag``), nested functions left out."""
        names: Set[str] = set()
        chains: Set[str] = set()
        stack: List[cst.CSTNode] = [loop]
        while stack:
            node = stack.pop()
            if isinstance(node, _SCOPES) and node is not loop:
                if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                    names.add(node.name.value)
                continue
            targets: List[cst.BaseExpression] = []
            if isinstance(node, cst.AssignTarget):
                targets = [node.target]
            elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
                targets = [node.target]
            elif isinstance(node, (cst.For, cst.CompFor)):
                targets = [node.target]
            elif isinstance(node, cst.AsName):
                targets = [node.name]
            elif isinstance(node, cst.NamedExpr):
                targets = [node.target]
            for target in targets:
                for leaf in _leaves(target):
                    if isinstance(leaf, cst.StarredElement):
                        leaf = leaf.value
                    if isinstance(leaf, cst.Name):
                        names.add(leaf.value)
                    elif isinstance(leaf, cst.Attribute):
                        chain = dotted(leaf)
                        if chain is not None:
                            chains.add(chain)
            stack.extend(children(node))
        return names, chains


def _order(definition: Definition, flow: _FunctionFlow) -> int:
    return flow.order.get(definition, 0)


def _binding_order(binding: Binding, flow: _FunctionFlow) -> int:
    return flow.order.get(flow.definition_of(binding), 0)


def _test_names(test: cst.BaseExpression) -> Optional[List[cst.Name]]:
    """The names a condition reads (attribute roots included), or None when
    it calls something or indexes (its value may change without a write)."""
    found: List[cst.Name] = []
    stack: List[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Call, cst.Subscript, cst.Lambda, cst.Await, cst.Yield, cst.NamedExpr,
                             cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            return None
        if isinstance(node, cst.Attribute):
            stack.append(node.value)
            continue
        if isinstance(node, cst.Name):
            if not literal_constant(node):
                found.append(node)
            continue
        stack.extend(children(node))
    return found


def _names_read(test: cst.BaseExpression) -> Optional[List[cst.Name]]:
    """The names a condition reads, in source order (attribute names left
    out), or None when it binds a name or holds code that runs elsewhere."""
    found: List[cst.Name] = []
    stack: List[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Lambda, cst.NamedExpr, cst.Yield, cst.Await)):
            return None
        if isinstance(node, cst.Attribute):
            stack.append(node.value)
        elif isinstance(node, cst.Arg):
            stack.append(node.value)  # not the keyword's name
        elif isinstance(node, cst.Name):
            if not literal_constant(node):
                found.append(node)
        else:
            stack.extend(reversed(children(node)))
    return found


def _attribute_chains(test: cst.BaseExpression) -> Set[str]:
    found: Set[str] = set()
    stack: List[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Attribute):
            chain = dotted(node)
            if chain is not None:
                found.add(chain)
                continue
        stack.extend(children(node))
    return found


__all__ = ["Definition", "Flow", "State"]
