"""The order a notebook's code runs in.

A notebook's code cells are linted as one module, but they run one after
the other, top to bottom: a training loop in the third cell runs before the
fifth cell moves the model to the GPU, so it trains on the CPU.  A fact
about the whole file (it uses CUDA) therefore holds for a node of a notebook
only when the code that makes it true runs first.  A node runs when its
top-level statement runs, or, inside a function, when the last top-level
statement that calls it runs (through the file's call graph); a function
nothing calls counts where it is defined.  In a script everything is one
program, and these queries answer as the whole-file fact does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Mapping, Optional, Set

import libcst as cst

if TYPE_CHECKING:
    from torchlint.analysis import Facts
    from torchlint.analysis.training import Training


class CellOrder:
    """When the nodes of one module run, for a notebook; for a script, always.
    Built from a file's :class:`~torchlint.analysis.Facts`; a script's
    queries read no other fact."""

    def __init__(self, facts: "Facts") -> None:
        self._facts = facts
        self._notebook = facts.path.endswith(".ipynb")
        self._index: Dict[cst.CSTNode, int] = {}
        self._functions: Dict[cst.FunctionDef, int] = {}

    def ran_before(self, sign: Optional[cst.CSTNode], node: cst.CSTNode) -> bool:
        """Whether ``sign`` (the node that makes a file-wide fact true, such
        as its first CUDA call) has run by the time ``node`` runs."""
        if sign is None:
            return False
        if not self._notebook:
            return True
        if not self._index:
            self._index = {statement: number for number, statement in enumerate(self._facts.module.body)}
        return self._runs_at(sign, set()) <= self._runs_at(node, set())

    @property
    def _parents(self) -> Mapping[cst.CSTNode, cst.CSTNode]:
        return self._facts.parents

    @property
    def _training(self) -> "Training":
        return self._facts.training

    def _runs_at(self, node: cst.CSTNode, seen: Set[cst.CSTNode]) -> int:
        """The index of the top-level statement during which ``node`` runs."""
        child: cst.CSTNode = node
        parent = self._parents.get(child)
        while parent is not None and not isinstance(parent, cst.Module):
            if isinstance(parent, cst.FunctionDef) and child is parent.body:
                return self._called_at(parent, seen)
            child, parent = parent, self._parents.get(parent)
        return self._index.get(child, 0)

    def _called_at(self, function: cst.FunctionDef, seen: Set[cst.CSTNode]) -> int:
        if function in self._functions:
            return self._functions[function]
        defined = self._runs_at(function, seen)
        if function in seen:
            return defined
        seen.add(function)
        calls = [self._runs_at(edge.call, seen) for edge in self._training.callers(function)]
        found = max(calls) if calls else defined
        self._functions[function] = found
        return found


__all__ = ["CellOrder"]
