"""Which library functions a method's ``self`` attribute may hold.

Code often picks a function once and calls it through an attribute:
``self.maybe_ckpt = checkpoint if use_ckpt else (lambda f, x: f(x))`` in
``__init__``, then ``self.maybe_ckpt(self.w_1, x)`` in ``forward``.  A rule
that recognises calls by the qualified name of the callee misses those.  This
fact answers, for a call ``self.<attr>(...)`` inside a method, the qualified
names of the functions the class assigns to that attribute (either branch of a
conditional expression), and whether every assignment is such a function (``certain``) or some may be
something else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, Mapping, Optional, Sequence, Set, Tuple

import libcst as cst

from torchlint.analysis.names import ImportTable

@dataclass(frozen=True)
class StoredCallable:
    """What ``self.<attr>`` may be when it is called."""

    names: FrozenSet[str]
    """Qualified names of the functions assigned to the attribute."""
    certain: bool
    """Every assignment gives one of ``names`` (no other branch, no other value)."""


def _method_of(node: cst.CSTNode, parents: Mapping[cst.CSTNode, cst.CSTNode]
               ) -> Optional[Tuple[cst.ClassDef, str]]:
    """The class whose method (directly) contains ``node``, and the name of
    that method's first parameter (the instance)."""
    current: Optional[cst.CSTNode] = parents.get(node)
    while current is not None and not isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        current = parents.get(current)
    if not isinstance(current, cst.FunctionDef):
        return None
    owner = parents.get(current)
    if isinstance(owner, cst.IndentedBlock):
        owner = parents.get(owner)
    if not isinstance(owner, cst.ClassDef):
        return None
    params = [*current.params.posonly_params, *current.params.params]
    if not params or any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
                         for d in current.decorators):
        return None
    return owner, params[0].name.value


class Callables:
    """The functions stored on ``self`` attributes, per class, for one module."""

    def __init__(self, names: ImportTable, parents: Mapping[cst.CSTNode, cst.CSTNode],
                 assignments: Sequence[cst.Assign]) -> None:
        self._names = names
        self._parents = parents
        found: Dict[Tuple[cst.ClassDef, str], Tuple[Set[str], bool]] = {}
        for assign in assignments:
            if len(assign.targets) != 1:
                continue
            target = assign.targets[0].target
            if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)):
                continue
            method = _method_of(assign, parents)
            if method is None or target.value.value != method[1]:
                continue
            functions, certain = self._functions(assign.value)
            key = (method[0], target.attr.value)
            known, all_certain = found.get(key, (set(), True))
            found[key] = (known | functions, all_certain and certain and bool(functions))
        self._stored = {key: StoredCallable(frozenset(functions), certain)
                        for key, (functions, certain) in found.items() if functions}

    def _functions(self, value: cst.BaseExpression) -> Tuple[Set[str], bool]:
        """The qualified names ``value`` may evaluate to, and whether it can
        be nothing else."""
        if isinstance(value, cst.IfExp):
            body, body_certain = self._functions(value.body)
            orelse, orelse_certain = self._functions(value.orelse)
            return body | orelse, body_certain and orelse_certain
        if isinstance(value, (cst.Name, cst.Attribute)):
            qualified = self._names.qualified_name(value)
            return ({qualified}, True) if qualified is not None else (set(), False)
        return set(), False

    def of_call(self, call: cst.Call) -> Optional[StoredCallable]:
        """What ``call`` runs when it is ``self.<attr>(...)`` and the class
        stores functions in that attribute; None otherwise."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
            return None
        method = _method_of(call, self._parents)
        if method is None or func.value.value != method[1]:
            return None
        return self._stored.get((method[0], func.attr.value))


__all__ = ["Callables", "StoredCallable"]
