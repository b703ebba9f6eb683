"""TL103 host-sync-in-step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Mapping, Optional, Set

import libcst as cst

from torchlint.analysis import Analysis
from torchlint.analysis.cells import CellOrder
from torchlint.analysis.queries import summaries
from torchlint.analysis.summaries import STEP
from torchlint.analysis.placement import BRANCHES, StepPlacement
from torchlint.analysis.scopes import BindingKind
from torchlint.analysis.training import FunctionNode, LoopFacts
from torchlint.analysis.values import ValueKind
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, FileContext, OptionValue, Rule, innermost_statement

_SYNC_METHODS = frozenset({"item", "cpu", "numpy", "tolist"})
_SYNCHRONIZE = frozenset({"torch.cuda.synchronize"})
_HOST_RESULTS = frozenset({"item", "tolist", "numpy", "size", "dim", "numel", "__len__"})
"""Tensor methods whose result is a Python or NumPy value, not a tensor."""
_PARAMETER_METHODS = frozenset({"parameters", "named_parameters"})
_NOT_TENSOR_MODULES = ("torch.cuda.", "torch.distributed.", "torch.utils.", "torch.backends.", "torch.optim.",
                       "torch.autograd.", "torch.onnx.", "torch.jit.", "torch.hub.", "torch.multiprocessing.")
_MAX_DEPTH = 6


@dataclass(frozen=True)
class _Site:
    """A synchronising call and the statement a suppression comment precedes."""

    call: cst.Call
    what: str
    statement: Optional[cst.CSTNode]


class HostSyncInStep(Rule):
    """## What it does
    A suggestion, off by default.  Reports calls that make the host wait
    for the GPU on every iteration of a training loop (a loop whose own
    iterations run `backward()`, directly or through the file's functions,
    another module's or a library wrapper that runs it: `accelerator.backward`,
    timm's `loss_scaler(loss, optimizer)`):
    `.item()`, `.cpu()`, `.numpy()` and `.tolist()` on a tensor,
    `torch.cuda.synchronize()`, and `print(...)` of a tensor.  A call inside
    a loop over `model.parameters()` within the step is called out: it
    waits once per parameter.

    A value counts as a tensor from facts only: a torch factory or
    function's result, a model's or loss module's output, a batch drawn from
    a `DataLoader`, a parameter, and anything computed from those by tensor
    methods, indexing or arithmetic.  Not reported: a call under an `if`
    (a logging cadence such as `if step % 100 == 0:`), in an `except`
    handler, in a loop's `else` or after the loop; loops that only evaluate
    (no `backward()`) or that never step an optimizer, themselves or through a
    wrapper (gradient checks);
    files with no CUDA use (no `torch.cuda`, `.cuda()` or `"cuda"` device),
    where nothing waits for a GPU; and test files (`test_*.py`,
    `*_test.py`, `conftest.py`, unless a script: an `if __name__ ==
    "__main__":` block no test-framework import and no test pytest can call).

    ## Why is this bad?
    CUDA runs asynchronously: the Python thread queues kernels and moves on,
    and the GPU works through the queue.  Reading a value on the host
    (`loss.item()`, `.cpu()`, printing a tensor) blocks until every queued
    kernel has finished, so the host cannot queue the next step's work
    while the GPU computes and the GPU idles while the host catches up.
    Once per step this costs a little; per parameter, it serialises the
    whole step.

    ## Example
    ```python
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
        running += loss.item()
    ```

    Use instead:
    ```python
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
        running += loss.detach()          # stays on the GPU
        if step % 100 == 0:
            print(running.item() / (step + 1))
    ```

    ## Fix safety
    No automatic fix: what to log, and how often, is the author's choice.

    ## Source guide
    *Single-GPU Training* (Princeton Research Computing) logs the loss with
    `loss.item()` only every `log_interval` steps and points to PyTorch's
    *Performance Tuning Guide* (which asks to avoid unnecessary CPU-GPU
    synchronisation such as `tensor.item()` and `print(cuda_tensor)`);
    *Using GPUs with Python* (HPC2N/UPPMAX) notes that transfers between
    host and GPU over PCI-E are "rather slow".
    """

    code = "TL103"
    name = "host-sync-in-step"
    summary = "suggestion: `.item()`, `.cpu()`, printing a tensor... make the host wait for the GPU on every step"
    fix_summary = "none: log under a cadence, or keep the values on the GPU"
    default_enabled = False
    requires = frozenset({Analysis.TRAINING, Analysis.PROJECT})
    project_queries = (summaries(),)
    trigger_words = ("backward",)

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """A backward pass and one of the synchronising calls must appear."""
        return (
            facts.imports_torch
            and facts.may_train()
            and (not facts.called_attributes.isdisjoint(_SYNC_METHODS | {"synchronize"})
                 or facts.mentions(("print",)))
        )

    valid = (
        """
        import torch
        for step, (x, y) in enumerate(loader):
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            loss.backward()
            optimizer.step()
            if step % 100 == 0:
                print(loss.item())
        """,
        """
        import torch
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            loss.backward()
            optimizer.step()
        print(loss.item())
        """,
        """
        import torch
        for x, y in loader:
            try:
                torch.nn.functional.mse_loss(model(x), y).backward()
            except RuntimeError:
                torch.cuda.synchronize()
        """,
        """
        import torch
        with torch.no_grad():
            for x, y in loader:
                total += torch.nn.functional.mse_loss(model(x), y).item()
        """,
    )
    invalid = (
        Example(
            """
            import torch
            criterion = torch.nn.CrossEntropyLoss()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
                running += loss.item()
            """
        ),
        Example(
            """
            import torch
            from torch import nn
            model = nn.Linear(4, 2).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            def step(x):
                model(x).sum().backward()
                optimizer.step()
                for p in model.parameters():
                    print(p.grad.norm())
                torch.cuda.synchronize()
            while True:
                step(next(batches))
            """,
            findings=2,
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._sites: List[_Site] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        what: Optional[str] = None
        qualified = self.names.call_name(node)
        if qualified in _SYNCHRONIZE:
            what = "`torch.cuda.synchronize()`"
        elif isinstance(func, cst.Attribute) and func.attr.value in _SYNC_METHODS and qualified is None:
            what = f"`.{func.attr.value}()`"
        elif isinstance(func, cst.Name) and func.value == "print" and not self.facts.scopes.resolve(func):
            what = "printing a tensor"
        if what is not None:
            self._sites.append(_Site(node, what, innermost_statement(self.parents)))

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self._sites or self.context.is_test_file or not self.facts.loaders.uses_cuda:
            return
        parents = self.facts.parents
        lines = self.facts.positions
        placement = StepPlacement(parents, self.facts.training, conditional=BRANCHES, data_loops=False)
        # In a notebook, a loop in a cell before the first CUDA use runs on the CPU.
        order = CellOrder(self.facts)
        for site in self._sites:
            if not self._syncs(site.call):
                continue
            loop = placement.step_loop(site.call, set())
            if loop is None or not self._updates(loop, set()):
                continue
            if not order.ran_before(self.facts.loaders.cuda_sign, loop.node):
                continue
            per_parameter = self._in_parameter_loop(site.call, parents, loop.node)
            where = "once per parameter on every step" if per_parameter else "on every step"
            self.report(
                site.call,
                f"suggestion: {site.what} waits for the GPU {where} of the training loop on "
                f"{self.cite_line(lines[loop.node].start.line)}; keep values on the GPU and read them under a logging cadence",
                statement=site.statement,
            )

    # -- facts ---------------------------------------------------------------------------

    def _updates(self, loop: LoopFacts, seen: Set[FunctionNode]) -> bool:
        """The loop's iterations also call ``.step()`` on an optimizer or a
        scaler (or on a value of unknown kind): training, not a gradient check."""
        training = self.facts.training
        facts = training.functions.get(loop.function)
        if facts is not None and any(
            loop.node in fact.loops and self._is_step(fact.call) for fact in facts.calls
        ):
            return True
        return any(self._function_updates(edge.callee, seen) for edge in loop.local_calls)

    def _function_updates(self, function: FunctionNode, seen: Set[FunctionNode]) -> bool:
        if function in seen:
            return False
        seen.add(function)
        facts = self.facts.training.functions.get(function)
        if facts is None:
            return False
        return any(self._is_step(fact.call) for fact in facts.calls) or any(
            self._function_updates(edge.callee, seen) for edge in facts.local_calls
        )

    def _is_step(self, call: cst.Call) -> bool:
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "step") or self.names.call_name(call):
            runs = self.facts.callees.runs(call)[0]  # a wrapper that steps: `loss_scaler(loss, optimizer)`
            return STEP in runs
        return self.facts.values.kind(func.value) in (None, ValueKind.OPTIMIZER, ValueKind.GRAD_SCALER)

    def _syncs(self, call: cst.Call) -> bool:
        func = call.func
        if isinstance(func, cst.Attribute):
            if self.names.call_name(call) in _SYNCHRONIZE:
                return True
            return self._tensor(func.value, 0)
        if isinstance(func, cst.Name) and func.value == "print":
            return any(arg.keyword is None and self._printed_tensor(arg.value) for arg in call.args)
        return True

    def _printed_tensor(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.FormattedString):
            return any(
                isinstance(part, cst.FormattedStringExpression) and self._tensor(part.expression, 0)
                for part in expr.parts
            )
        return self._tensor(expr, 0)

    def _tensor(self, expr: cst.BaseExpression, depth: int) -> bool:
        """``expr`` holds a tensor, as far as the file's facts say."""
        if depth > _MAX_DEPTH:
            return False
        values = self.facts.values
        if values.kind(expr) is ValueKind.TENSOR:
            return True
        if isinstance(expr, cst.Call):
            qualified = self.names.call_name(expr)
            if qualified is not None:
                return qualified.startswith("torch.") and not qualified.startswith(_NOT_TENSOR_MODULES) \
                    and qualified.rsplit(".", 1)[-1][:1].islower()
            func = expr.func
            if isinstance(func, cst.Attribute):
                if func.attr.value in _HOST_RESULTS:
                    return False
                return self._tensor(func.value, depth + 1)
            return values.kind(func) in (ValueKind.MODEL, ValueKind.LOSS)
        if isinstance(expr, (cst.Subscript, cst.Attribute)):
            if isinstance(expr, cst.Attribute) and self.names.qualified_name(expr) is not None:
                return False
            return self._tensor(expr.value, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            return self._tensor(expr.left, depth + 1) or self._tensor(expr.right, depth + 1)
        if isinstance(expr, cst.Comparison):
            return self._tensor(expr.left, depth + 1)
        if isinstance(expr, cst.UnaryOperation):
            return self._tensor(expr.expression, depth + 1)
        if isinstance(expr, cst.Name):
            return self._tensor_name(expr, depth)
        return False

    def _tensor_name(self, name: cst.Name, depth: int) -> bool:
        bindings = self.facts.scopes.resolve(name)
        if not bindings:
            return False
        if self.facts.loaders.batch_origins(name):
            return True
        for binding in bindings:
            drawn = binding.value if binding.value is not None else binding.source
            if binding.kind in (BindingKind.ASSIGN, BindingKind.WALRUS) and drawn is not None:
                if self._tensor(drawn, depth + 1):
                    return True
            elif binding.kind is BindingKind.FOR and binding.source is not None and self._parameters(binding.source):
                return True
        return False

    def _parameters(self, expr: cst.BaseExpression) -> bool:
        """``model.parameters()`` or ``model.named_parameters()`` of a model."""
        return (
            isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value in _PARAMETER_METHODS
            and self.facts.values.kind(expr.func.value) is ValueKind.MODEL
        )

    def _in_parameter_loop(self, call: cst.Call, parents: Mapping[cst.CSTNode, cst.CSTNode],
                           step: cst.CSTNode) -> bool:
        child: cst.CSTNode = call
        parent = parents.get(child)
        seen: Set[int] = set()
        while parent is not None and parent is not step and id(parent) not in seen:
            seen.add(id(parent))
            if isinstance(parent, cst.For) and child is not parent.iter and self._parameters(parent.iter):
                return True
            if isinstance(parent, (cst.CompFor,)) and self._parameters(parent.iter):
                return True
            child, parent = parent, parents.get(parent)
        return False
