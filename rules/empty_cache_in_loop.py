"""TL303 empty-cache-in-loop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Set

import libcst as cst

from torchlint.analysis import Analysis
from torchlint.analysis.training import CallFact, FunctionNode, LoopFacts, Training
from torchlint.edits import Located
from torchlint.rule import Example, FileContext, Rule
from torchlint.tree import walk

_EMPTY_CACHE = frozenset({"torch.cuda.empty_cache", "torch.cuda.memory.empty_cache"})

# Where a statement runs only sometimes: a branch, an exception handler, the
# right side of `and`/`or`, a lambda or comprehension (which may run any number of times).
_CONDITIONAL = (
    cst.If, cst.IfExp, cst.ExceptHandler, cst.ExceptStarHandler, cst.BooleanOperation,
    cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.ClassDef,
)


@dataclass(frozen=True)
class _Site:
    """One `empty_cache()` call and the statement a suppression comment precedes."""

    call: cst.Call
    statement: Optional[cst.CSTNode]


class _Placement:
    """Where calls run, from the parent map and the training facts."""

    def __init__(self, parents: Mapping[cst.CSTNode, cst.CSTNode], training: Training) -> None:
        self._parents = parents
        self._training = training
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
        while parent is not None:
            if isinstance(parent, _CONDITIONAL):
                return None
            if isinstance(parent, cst.Else) and not isinstance(self._parents.get(parent), cst.Try):
                return None  # an `if`'s else, or a loop's else (runs once, after the loop)
            if isinstance(parent, (cst.For, cst.While)):
                if child is not parent.body:
                    return None  # the iterable or the test
                loop = self._loops.get(parent)
                if loop is not None and (loop.over_dataloader or self._steps_in(loop)):
                    return loop
            if isinstance(parent, cst.FunctionDef):
                return self._via_callers(parent, seen)
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
        """Each iteration of this loop (not of a loop inside it) runs a backward pass."""
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
        found = facts is not None and (
            any(not fact.loops for fact in (*facts.backward, *facts.autograd_grad))
            or any(
                self._innermost(edge.call) is None and self._steps(edge.callee, seen)
                for edge in facts.local_calls
            )
        )
        self._stepping[function] = found
        return found


class EmptyCacheInLoop(Rule):
    """## What it does
    Reports `torch.cuda.empty_cache()` (however `torch` is imported) that
    runs on every iteration of a training loop or of a loop over a
    `DataLoader`: in the loop's body, or in a function of the same file that
    such a loop calls on every iteration.

    A training loop here is one whose own iterations call `backward()` (or
    `torch.autograd.grad`), directly or through the file's functions.  A loop
    that only calls a training function once per iteration, such as an epoch
    loop or a loop over experiments, is not reported: emptying the cache
    between epochs or between experiments is cheap and is what the guides
    recommend.

    Not reported either: a call under any `if` inside the loop (a cadence
    such as `if step % 100 == 0:`), in an `except` handler (recovery from an
    out-of-memory error), in a loop's `else`, after the loop, or in a
    function that no such loop calls.

    ## Why is this bad?
    PyTorch's caching allocator keeps freed GPU memory so that the next
    step's tensors of the same sizes are allocated without asking the
    driver.  `empty_cache()` hands that memory back, so the next step has to
    `cudaMalloc` all of it again, and `empty_cache()` itself synchronizes
    the device.  Called on every step, it makes every step slower and it
    frees nothing the training can use: the memory of live tensors is not
    released, and the same amount is reserved again a moment later.  It
    only helps other processes on the same GPU, or code that switches to a
    task with a different memory pattern.

    ## Example
    ```python
    for inputs, targets in loader:
        loss = criterion(model(inputs.cuda()), targets.cuda())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        torch.cuda.empty_cache()
    ```

    Use instead:
    ```python
    for inputs, targets in loader:
        loss = criterion(model(inputs.cuda()), targets.cuda())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    torch.cuda.empty_cache()  # once, before the next task
    ```

    ## Fix safety
    No automatic fix: whether the call belongs after the loop, under a
    cadence, or nowhere is the author's choice.

    ## Options
    None.

    ## Source guide
    *GPU Computing Guide* (Ohio Supercomputer Center) advises clearing the
    GPU cache "when switching tasks", and *Chapter 16: GPU Acceleration &
    Distributed Training* (an online PyTorch training book) "between
    experiments"; neither does it per step.  The cost of releasing cached
    blocks is described in the "CUDA semantics" notes of the PyTorch
    documentation (memory management).
    """

    code = "TL303"
    name = "empty-cache-in-loop"
    summary = "`torch.cuda.empty_cache()` runs on every iteration of a training or data loop"
    fix_summary = "none: move it after the loop or under a cadence"
    trigger_words = ("empty_cache",)
    requires = frozenset({Analysis.TRAINING})
    valid = (
        """
        import torch
        for step, (x, y) in enumerate(loader):
            loss = model(x).sum()
            loss.backward()
            if step % 100 == 0:
                torch.cuda.empty_cache()
        """,
        """
        import torch
        for config in configs:
            train(config)
            torch.cuda.empty_cache()
        """,
        """
        import torch
        for x in loader:
            try:
                model(x).sum().backward()
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
        """,
    )
    invalid = (
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=32)
            for x, y in loader:
                model(x).sum().backward()
                torch.cuda.empty_cache()
            """
        ),
        Example(
            """
            from torch.cuda import empty_cache as free
            def step(batch):
                model(batch).sum().backward()
                free()
            while True:
                step(next(batches))
            """
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._sites: List[_Site] = []

    def visit_Call(self, node: cst.Call) -> None:
        if self.names.call_name(node) in _EMPTY_CACHE:
            statement = next(
                (p for p in reversed(self.parents) if isinstance(p, cst.SimpleStatementLine)), None
            )
            self._sites.append(_Site(node, statement))

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self._sites:
            return
        # The parent map from one plain walk, and positions only for the loops
        # named in messages: libcst's metadata providers cost a full visit and
        # a rendering of the whole module each.
        parents = {node: parent for node, parent in walk(original_node) if parent is not None}
        placement = _Placement(parents, self.facts.training)
        found = [(site, placement.step_loop(site.call, set())) for site in self._sites]
        loops: Set[cst.CSTNode] = {loop.node for _, loop in found if loop is not None}
        if not loops:
            return
        located = Located(original_node, self.context.source, loops)
        for site, loop in found:
            if loop is None:
                continue
            what = "loop over a DataLoader" if loop.over_dataloader else "training loop"
            self.report(
                site.call,
                f"`torch.cuda.empty_cache()` runs on every iteration of the {what} on line "
                f"{located.line(loop.node)}; it slows every step and frees nothing training can use: "
                "call it once after the loop",
                statement=site.statement,
            )
