"""TL606 float64-on-gpu."""

from __future__ import annotations

from functools import cached_property
from typing import FrozenSet, Mapping, Optional, Sequence

import libcst as cst

from torchlint.analysis.cells import CellOrder

from torchlint.analysis import Analysis
from torchlint.analysis.scopes import BindingKind
from torchlint.analysis.values import ValueKind
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, OptionValue, Rule, Severity

_FLOAT64 = "float64"
_DEFAULT_DTYPE = frozenset({"torch.set_default_dtype"})
_DEFAULT_TENSOR_TYPE = frozenset({"torch.set_default_tensor_type"})
_DOUBLE_TENSOR_TYPES: FrozenSet[str] = frozenset({"torch.DoubleTensor", "torch.cuda.DoubleTensor"})
# Methods that move or cast a batch and keep it the same batch.
_MOVES: FrozenSet[str] = frozenset({"to", "cuda", "contiguous", "float", "requires_grad_"})
_WORDS = ("double", "float64", "DoubleTensor")


class Float64OnGpu(Rule):
    """## What it does
    Off by default.  In CUDA code (a file that calls into `torch.cuda`,
    calls `.cuda()` or names a `"cuda"` device), reports:

    - `.double()`, `.to(torch.float64)` (or `dtype=torch.float64`,
      `torch.double`) and `.type(torch.float64)` on a model (an `nn.Module`
      value: built from `torch.nn`, from a class of the file deriving from
      `nn.Module`, or passed to an optimizer) or on a batch (a variable of a
      `for` loop over a `DataLoader`, directly or after `.to(...)`/`.cuda()`);
    - a `torch.nn` layer built with `dtype=torch.float64`;
    - `torch.set_default_dtype(torch.float64)` and
      `torch.set_default_tensor_type(torch.DoubleTensor)` (or
      `torch.cuda.DoubleTensor`), which make every later parameter and
      tensor float64.

    Not reported: float64 tensors made by factories (`torch.zeros(...,
    dtype=torch.float64)`) and casts of other values, which are usually
    small metric or statistics accumulators where the precision is wanted,
    and any of the above in a file with no CUDA use.

    ## Why is this bad?
    Data-centre GPUs run float64 at a half (A100, H100) of their float32
    rate without tensor cores, and consumer and workstation GPUs at 1/32 or
    1/64 of it; float64 also doubles the memory and bandwidth of every
    activation, gradient and optimizer state.  A model or its batches in
    float64 make every step that much slower, and training rarely needs it:
    float32 (or mixed precision) is the norm.  Scientific models that need
    float64 are the exception, which is why this rule is off by default.

    ## Example
    ```python
    model = Net().cuda().double()
    for x, y in loader:
        loss = criterion(model(x.cuda().double()), y.cuda())
    ```

    Use instead:
    ```python
    model = Net().cuda()
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
    ```

    ## Fix safety
    No automatic fix: whether the model needs float64 is a modelling
    decision, and inputs, checkpoints and losses must change together.

    ## Source guide
    *DGX cluster guidelines* (a GPU cluster's user guide) recommends
    training in reduced precision, "in theory doubling your compute speed
    while halving your memory consumption"; *Using GPUs with Python*
    (HPC2N/UPPMAX/LUNARC/NSC course) writes its GPU kernels in float32.
    """

    code = "TL606"
    name = "float64-on-gpu"
    summary = "a model or its batches are cast to float64 in CUDA code"
    fix_summary = "none: keep float32 unless float64 is needed"
    default_enabled = False
    severity = Severity.WARNING
    requires = frozenset({Analysis.VALUES, Analysis.TRAINING})

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """A torch file that mentions double precision."""
        return facts.imports_torch and facts.mentions(_WORDS + ("set_default_dtype",))

    valid = (
        """
        import torch
        model = torch.nn.Linear(3, 3).cuda()
        total = torch.zeros(10, dtype=torch.float64)
        for x in loader:
            total += model(x.cuda()).double().sum()
        """,
        """
        import torch
        model = torch.nn.Linear(3, 3).double()
        """,
    )
    invalid = (
        Example(
            """
            import torch
            model = torch.nn.Linear(3, 3).cuda().double()
            """
        ),
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset)
            model = torch.nn.Linear(3, 3).cuda()
            for x, y in loader:
                out = model(x.cuda().to(torch.float64))
            """
        ),
        Example(
            """
            import torch
            torch.set_default_dtype(torch.float64)
            device = "cuda"
            """
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        what = self._float64_use(node)
        if what is None:
            return
        if not CellOrder(self.facts).ran_before(self.facts.workload.cuda, node):
            return  # no CUDA, or (in a notebook) none until a later cell
        self.report(
            node,
            f"{what} in CUDA code: float64 runs at a fraction of float32's speed on GPUs and doubles "
            "memory; train in float32 unless the model needs float64",
        )

    def _float64_use(self, call: cst.Call) -> Optional[str]:
        qualified = self.names.call_name(call)
        positional = [arg.value for arg in call.args if arg.keyword is None]
        if qualified in _DEFAULT_DTYPE:
            return "`set_default_dtype(torch.float64)` makes every parameter float64" if (
                positional and self._is_float64(positional[0])) else None
        if qualified in _DEFAULT_TENSOR_TYPE:
            first = positional[0] if positional else None
            if first is not None and self.names.qualified_name(first) in _DOUBLE_TENSOR_TYPES:
                return "`set_default_tensor_type(DoubleTensor)` makes every parameter float64"
            return None
        if qualified is not None:
            value = self.facts.values.of(call)
            dtype = _keyword(call, "dtype")
            if value is not None and value.kind is ValueKind.MODEL and dtype is not None and self._is_float64(dtype):
                return "a layer built with `dtype=torch.float64`"
            return None
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        if method == "double" and not call.args:
            cast = "`.double()`"
        elif method in ("to", "type") and any(self._is_float64(arg.value) for arg in call.args
                                               if arg.keyword is None or arg.keyword.value == "dtype"):
            cast = f"`.{method}(torch.float64)`"
        else:
            return None
        target = self._target(func.value)
        return f"{cast} on {target}" if target is not None else None

    def _is_float64(self, expr: cst.BaseExpression) -> bool:
        return self.facts.values.dtype_name(expr) == _FLOAT64

    def _target(self, receiver: cst.BaseExpression) -> Optional[str]:
        """``a model`` or ``a batch`` when the receiver is one, else None."""
        value = self.facts.values.of(receiver)
        if value is not None and value.kind is ValueKind.MODEL:
            return "a model"
        return "a batch" if self._is_batch(receiver, 0) else None

    def _is_batch(self, expr: cst.BaseExpression, depth: int) -> bool:
        """A variable of a loop over a DataLoader, perhaps moved or indexed."""
        if depth > 6:
            return False
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _MOVES:
            return self._is_batch(expr.func.value, depth + 1)
        if isinstance(expr, cst.Subscript):
            return self._is_batch(expr.value, depth + 1)
        if not isinstance(expr, cst.Name):
            return False
        bindings = self.facts.scopes.resolve(expr)
        loops = [b for b in bindings if b.kind is BindingKind.FOR]
        if not loops or not all(b.statement in self._loader_loops for b in loops):
            return False
        return all(
            b.kind is BindingKind.FOR or (b.kind is BindingKind.ASSIGN and b.value is not None
                                          and _root_name(b.value) == expr.value)
            for b in bindings
        )

    @cached_property
    def _loader_loops(self) -> FrozenSet[cst.CSTNode]:
        """The file's ``for`` loops over a DataLoader (from the training facts)."""
        return frozenset(
            loop.node for facts in self.facts.training.functions.values() for loop in facts.loops if loop.over_dataloader
        )


def _keyword(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def _root_name(expr: cst.BaseExpression) -> Optional[str]:
    """``x`` for ``x.to(device).float()`` or ``x[0]``."""
    while True:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        elif isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Name):
            return expr.value
        else:
            return None


__all__: Sequence[str] = ("Float64OnGpu",)
