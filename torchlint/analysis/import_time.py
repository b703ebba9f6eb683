"""What runs when a file is imported, not only when it is run as a program.

Under the ``spawn`` and ``forkserver`` start methods (Windows, macOS, and
Linux from Python 3.14), every worker process imports the main script again
(as ``__mp_main__``): whatever the script does at import time, it does again
in each worker, so work that starts workers must sit under an
``if __name__ == "__main__":`` block (or in functions only that block calls).
Workers also unpickle what they are given by reference to where it is
defined: a class or function defined in a notebook, inside a function, or a
lambda cannot be found there.  The facts come from the tree and the file's
call graph, never from names.
"""

from __future__ import annotations

from typing import Dict, Mapping, Set

import libcst as cst

from torchlint.analysis.training import Training


def is_main_guard(statement: cst.CSTNode) -> bool:
    """``if __name__ == "__main__":`` (either side of the comparison)."""
    if not isinstance(statement, cst.If) or not isinstance(statement.test, cst.Comparison):
        return False
    test = statement.test
    if len(test.comparisons) != 1 or not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    sides = (test.left, test.comparisons[0].comparator)
    names = [side for side in sides if isinstance(side, cst.Name) and side.value == "__name__"]
    strings = [side for side in sides if isinstance(side, cst.SimpleString) and side.evaluated_value == "__main__"]
    return len(names) == 1 and len(strings) == 1


class ImportTime:
    """Which nodes of one module run when it is imported."""

    def __init__(self, parents: Mapping[cst.CSTNode, cst.CSTNode], training: Training) -> None:
        self._parents = parents
        self._training = training
        self._functions: Dict[cst.FunctionDef, bool] = {}

    def runs_at_import(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` runs when the module is imported: it is module
        code (class bodies included) outside a main guard, or in a function
        of the file that such code calls, directly or through others."""
        return self._runs(node, set())

    def _runs(self, node: cst.CSTNode, seen: Set[cst.CSTNode]) -> bool:
        child: cst.CSTNode = node
        parent = self._parents.get(child)
        while parent is not None:
            if isinstance(parent, cst.If) and is_main_guard(parent) and child is not parent.test:
                return False
            # A def's decorators and defaults run where the def is; its body when it is called.
            if isinstance(parent, cst.FunctionDef) and child is parent.body:
                return self._called_at_import(parent, seen)
            if isinstance(parent, cst.Lambda) and child is parent.body:
                return False  # when a lambda runs is not known
            child, parent = parent, self._parents.get(parent)
        return True  # reached the module

    def _called_at_import(self, function: cst.FunctionDef, seen: Set[cst.CSTNode]) -> bool:
        if function in self._functions:
            return self._functions[function]
        if function in seen:
            return False
        seen.add(function)
        found = any(self._runs(edge.call, seen) for edge in self._training.callers(function))
        self._functions[function] = found
        return found


def defined_in_function(definition: cst.CSTNode, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> bool:
    """Whether a class or ``def`` is defined inside a function (a local
    object, which pickle cannot find by name)."""
    parent = parents.get(definition)
    while parent is not None:
        if isinstance(parent, (cst.FunctionDef, cst.Lambda)):
            return True
        parent = parents.get(parent)
    return False


__all__ = ["ImportTime", "defined_in_function", "is_main_guard"]
