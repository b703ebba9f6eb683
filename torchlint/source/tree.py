"""Fast access to a libcst tree's children, for the engine and for rules.

libcst's ``node.children`` and ``node.visit`` rebuild nodes on the way; these
read the dataclass fields directly and skip the fields that only hold
whitespace, comments and punctuation, which no rule looks inside.  And
:func:`collected_once`: the garbage collector around the work on one tree.
"""

from __future__ import annotations

import ast
import dataclasses
import gc
from contextlib import contextmanager
from typing import Dict, Iterator, List, Optional, Tuple

import libcst as cst

@contextmanager
def collected_once() -> Iterator[None]:
    """The cyclic garbage collector paused while one file's tree is built and
    used (a lint, or the index's part of a file), then run once over what
    that made.

    A tree of up to millions of nodes lives until the work on it ends, and
    the facts (scopes and their bindings, flows) tie it into reference
    cycles, so the collector, not reference counting, frees it.  Left
    running, the collector walks the growing tree again at each collection
    of the oldest generation (about a sixth of a cold run's CPU on torch's
    source).  Paused, everything the work made stays in the youngest
    generation, and one collection of that generation frees its cycles.
    Inside a pause (a caller's) it does nothing: the caller collects."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(0)


_SKIPPED_FIELDS = frozenset({
    "lpar", "rpar", "leading_lines", "lines_after_decorator", "header", "footer",
    "comma", "semicolon", "equal", "colon", "dot", "newline", "indent",
    "trailing_whitespace", "first_line", "empty_lines", "lbracket", "rbracket",
    "lbrace", "rbrace", "whitespace_after_at",
})
_CHILD_FIELDS: Dict[type, Tuple[str, ...]] = {}


def child_fields(node_type: type) -> Tuple[str, ...]:
    """The fields of a node type that can hold child nodes, in source order."""
    cached = _CHILD_FIELDS.get(node_type)
    if cached is None:
        names = [
            f.name for f in dataclasses.fields(node_type)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        ]
        if "decorators" in names:  # written above the def, stored after the body
            names.remove("decorators")
            names.insert(0, "decorators")
        cached = _CHILD_FIELDS[node_type] = tuple(names)
    return cached


_IS_NODE: Dict[type, bool] = {}


def _is_node(kind: type) -> bool:
    """Whether values of this type are nodes (``isinstance`` against libcst's
    abstract base is an ABC check, slow enough to matter on every node)."""
    known = _IS_NODE.get(kind)
    if known is None:
        known = _IS_NODE[kind] = issubclass(kind, cst.CSTNode)
    return known


def children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The node's children that carry code, in source order."""
    found: List[cst.CSTNode] = []
    for name in child_fields(type(node)):
        value = getattr(node, name)
        kind = type(value)
        if kind is list or kind is tuple:
            found.extend(item for item in value if _is_node(type(item)))
        elif _is_node(kind):
            found.append(value)
    return found


def walk(root: cst.CSTNode) -> Iterator[Tuple[cst.CSTNode, Optional[cst.CSTNode]]]:
    """Every node under ``root`` (included) with its parent, depth first."""
    stack: List[Tuple[cst.CSTNode, Optional[cst.CSTNode]]] = [(root, None)]
    while stack:
        node, parent = stack.pop()
        yield node, parent
        for child in reversed(children(node)):
            stack.append((child, node))


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


_NESTED_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def walk_body(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``root`` and every node under it, depth first in source order, without
    entering nested functions, classes or lambdas (code that runs elsewhere)."""
    stack: List[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in reversed(children(node)) if not isinstance(child, _NESTED_SCOPES))


def python_nodes(tree: ast.AST) -> List[ast.AST]:
    """Every node of a CPython tree, in ``ast.walk``'s order (breadth first),
    as a list: the same nodes without a generator per node, which is most of
    what ``ast.walk`` costs."""
    nodes: List[ast.AST] = [tree]
    node_type = ast.AST
    index = 0
    while index < len(nodes):
        node = nodes[index]
        index += 1
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, node_type):
                nodes.append(value)
            elif type(value) is list:
                for item in value:
                    if isinstance(item, node_type):
                        nodes.append(item)
    return nodes


def literal_bool(expr: Optional[cst.BaseExpression]) -> Optional[bool]:
    """``True`` or ``False`` when ``expr`` is that literal (the keyword, which
    no binding can shadow), else None.  With :func:`literal_none`,
    :func:`literal_constant` and :func:`python_literal_bool`, the one test of
    a literal truth value that rules and facts share (the analyses re-export
    it from ``torchlint.analysis.values``)."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


def literal_none(expr: object) -> bool:
    """``expr`` is the literal ``None``."""
    return isinstance(expr, cst.Name) and expr.value == "None"


def literal_constant(expr: Optional[cst.BaseExpression]) -> bool:
    """``expr`` is ``True``, ``False`` or ``None``: a name node that names no binding."""
    return literal_bool(expr) is not None or literal_none(expr)


def python_literal_bool(expr: Optional[ast.expr]) -> Optional[bool]:
    """:func:`literal_bool` for CPython's ``ast`` (the cross-file facts)."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, bool):
        return expr.value
    return None
