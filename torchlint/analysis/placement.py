"""Where a statement runs relative to the training loops of its file.

A node runs "on every iteration" of a loop when it sits in the loop's body
(or in a function of the file that the body calls), with no branch, handler
or loop ``else`` in between.  Rules that report per-step costs (emptying
the cache, host synchronisations) share this walk.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Mapping, Optional, Set, Tuple

import libcst as cst

from torchlint.analysis.training import CallFact, FunctionNode, LoopFacts, Training

# Where a statement runs only sometimes: a branch, an exception handler, the
# right side of `and`/`or`, a lambda or comprehension (which may run any number of times).
SOMETIMES: Tuple[type, ...] = (
    cst.If, cst.IfExp, cst.ExceptHandler, cst.ExceptStarHandler, cst.BooleanOperation,
    cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.ClassDef,
)
BRANCHES: Tuple[type, ...] = (
    cst.If, cst.IfExp, cst.ExceptHandler, cst.ExceptStarHandler, cst.BooleanOperation, cst.Lambda, cst.ClassDef,
)
"""Like :data:`SOMETIMES`, with comprehensions counted as running (at least
once per iteration, usually many times)."""



class StepPlacement:
    """Where calls run, from the parent map and the training facts: which
    training loop (or, with ``data_loops``, loop over a ``DataLoader``) runs a
    node on every one of its iterations."""

    def __init__(self, parents: Mapping[cst.CSTNode, cst.CSTNode], training: Training, *,
                 conditional: Tuple[type, ...] = SOMETIMES, data_loops: bool = True,
                 invariant: Optional[Callable[[cst.BaseExpression, cst.CSTNode], bool]] = None) -> None:
        self._invariant = invariant
        """With the flow's ``invariant_in``: an ``if`` whose test has the same
        value on every iteration of the loop (a run-wide flag) runs its branch
        on every iteration or on none, so it does not make a node conditional."""
        self._parents = parents
        self._training = training
        self._conditional = conditional
        self._data_loops = data_loops
        self._loops: Dict[cst.CSTNode, LoopFacts] = {}
        self._facts: Dict[cst.Call, CallFact] = {}
        for function in training.functions.values():
            for loop in function.loops:
                self._loops[loop.node] = loop
            for fact in function.calls:
                self._facts[fact.call] = fact
        self._stepping: Dict[FunctionNode, bool] = {}

    def step_loop(self, node: cst.CSTNode, seen: Set[cst.CSTNode]) -> Optional[LoopFacts]:
        """The training or data loop that runs ``node`` on every one of its
        iterations, directly or through the file's functions; None when a
        branch or handler stands between them."""
        child = node
        parent = self._parents.get(child)
        flags: List[cst.If] = []  # `if`s on the way whose test may be a run-wide flag
        while parent is not None:
            if (self._invariant is not None and isinstance(parent, cst.If)
                    and (child is parent.body or child is parent.orelse)):
                flags.append(parent)
            elif isinstance(parent, self._conditional):
                return None
            elif isinstance(parent, cst.Else) and not isinstance(self._parents.get(parent), cst.Try):
                if self._invariant is None or not isinstance(self._parents.get(parent), cst.If):
                    return None  # an `if`'s else, or a loop's else (runs once, after the loop)
            if isinstance(parent, (cst.For, cst.While)):
                if child is not parent.body:
                    return None  # the iterable or the test
                loop = self._loops.get(parent)
                if loop is not None and ((self._data_loops and loop.over_dataloader) or self._steps_in(loop)):
                    invariant = self._invariant
                    if flags and (invariant is None or not all(invariant(f.test, parent) for f in flags)):
                        return None
                    return loop
            if isinstance(parent, cst.FunctionDef):
                return None if flags else self._via_callers(parent, seen)
            child, parent = parent, self._parents.get(parent)
        return None

    def _via_callers(self, function: cst.FunctionDef, seen: Set[cst.CSTNode]) -> Optional[LoopFacts]:
        if function in seen:
            return None
        seen.add(function)
        for edge in self._training.callers(function):
            found = self.step_loop(edge.call, seen)
            if found is not None:
                return found
        return None

    def _steps_in(self, loop: LoopFacts) -> bool:
        """Each iteration of this loop (not of a loop inside it) runs a backward
        pass, and does not set up a run (build the optimizer it steps, wrap a model
        for data parallelism): an iteration that does is a whole experiment."""
        function = self._training.functions.get(loop.function)
        if function is not None and any(self._innermost(f.call) is loop.node for f in function.setup_calls):
            return False
        if any(self._innermost(fact.call) is loop.node for fact in loop.backward):
            return True
        return any(
            self._innermost(edge.call) is loop.node and self._steps(edge.callee, set())
            for edge in loop.local_calls
        )

    def _innermost(self, call: cst.Call) -> Optional[cst.CSTNode]:
        fact = self._facts.get(call)
        return fact.loops[-1] if fact is not None and fact.loops else None

    def _steps(self, function: FunctionNode, seen: Set[FunctionNode]) -> bool:
        """One call of ``function`` runs one backward pass (outside any loop of its own)."""
        if function in self._stepping:
            return self._stepping[function]
        if function in seen:
            return False
        seen.add(function)
        facts = self._training.functions.get(function)
        found = facts is not None and not any(not fact.loops for fact in facts.setup_calls) and (
            any(not fact.loops for fact in (*facts.backward, *facts.autograd_grad))
            or any(
                self._innermost(edge.call) is None and self._steps(edge.callee, seen)
                for edge in facts.local_calls
            )
        )
        self._stepping[function] = found
        return found


__all__ = ["BRANCHES", "SOMETIMES", "StepPlacement"]
