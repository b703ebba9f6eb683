"""TL302 zero-grad-not-set-to-none."""

from __future__ import annotations

from typing import Mapping

import libcst as cst

from torchlint.analysis.queries import method_shapes
from torchlint.data import apidata
from torchlint.analysis import Analysis
from torchlint.ruleapi.fixes import add_keyword, bind, replace_argument
from torchlint.model import Applicability
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, OptionValue, FixAvailability, Rule, Severity, TorchRange, TorchVersion
from torchlint.ruleapi.verification import Contract, Probe, VerificationSpec
from torchlint.analysis.values import literal_bool

_ARGUMENT_ADDED = TorchVersion(1, 7)
_DEFAULT_FLIPPED = TorchVersion(2, 0)
_ZERO_GRAD = "torch.optim.Optimizer.zero_grad"


class ZeroGradNotSetToNone(Rule):
    """## What it does
    Reports `<optimizer or module>.zero_grad(...)` calls that fill the
    gradients with zeros instead of releasing them: calls that pass
    `set_to_none=False` (as a keyword or as the only positional argument),
    and, when the target torch version is older than 2.0, calls that do not
    pass `set_to_none` at all.  Since torch 2.0 `set_to_none` defaults to
    `True`, so a bare `zero_grad()` is fine there.

    Only method calls with at most one argument are considered; a plain
    function named `zero_grad`, a `set_to_none` given as a variable, and
    in-place tensor methods such as `p.grad.zero_()` are left alone.  So is
    a call on a value that can only be an instance of a class of your own
    (in the same file or imported from another file of the project) whose
    `zero_grad` has no `set_to_none` parameter, such as a learning-rate
    schedule or mixed-precision wrapper: passing the keyword there would
    raise `TypeError`.  The value is followed through assignments,
    `self.<attribute>` assignments in the class's methods, and the
    arguments the file's own calls pass to a function's parameters
    (`main()` builds the wrapper and hands it to `train(optimizer)`).

    ## Why is this bad?
    Writing zeros into every gradient costs one memory-bound kernel per
    parameter on each step, and the next backward pass then has to add its
    result to those zeros instead of simply storing it.  With
    `set_to_none=True` the gradient tensors are dropped: the zeroing work
    disappears, backward writes fresh gradients, and the memory they held is
    free between the optimizer step and the next backward pass.

    ## Example
    ```python
    for inputs, targets in loader:
        optimizer.zero_grad(set_to_none=False)
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
    ```

    Use instead:
    ```python
    for inputs, targets in loader:
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
    ```

    ## Fix safety
    The fix writes `set_to_none=True` (replacing `False`, or adding the
    keyword).  It is unsafe because a gradient of `None` is not the same as a
    gradient of zeros:
    - A parameter that receives no gradient in a step (an unused branch, a
      frozen head, an idle mixture-of-experts expert) is skipped by the
      built-in optimizers when its gradient is `None`, while a zero gradient
      still moves it through momentum and weight decay and advances Adam's
      moment estimates and step count.
    - Code that reads or modifies `p.grad` after `zero_grad()` (gradient
      logging, clipping helpers, manual accumulation such as
      `p.grad += ...`) must handle `None`.
    - Optimizers from other libraries may treat `set_to_none` differently
      from `torch.optim`, and a class of your own whose `zero_grad()` takes
      no argument raises `TypeError` once the keyword is added.

    ## Source guide
    *DGX cluster guidelines* (a GPU cluster's user guide) lists
    `zero_grad(set_to_none=True)` among the changes to make in every
    training script; *GPU Computing Guide* (Ohio Supercomputer Center)
    recommends it as the memory-efficient way to clear gradients.
    """

    code = "TL302"
    name = "zero-grad-not-set-to-none"
    summary = "`zero_grad()` fills gradients with zeros; pass `set_to_none=True`"
    aliases = ("TOR402",)
    fix_availability = FixAvailability.ALWAYS
    severity = Severity.WARNING  # advice: the right call depends on the project
    fix_summary = "unsafe: `set_to_none=True`"
    torch_range = TorchRange(
        min=_ARGUMENT_ADDED, note="`set_to_none` exists since 1.7; its default became True in 2.0"
    )
    trigger_words = ("zero_grad",)
    requires = frozenset({Analysis.PROJECT})
    project_queries = (method_shapes("zero_grad"),)

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """Only ``x.zero_grad(...)`` calls are reported."""
        return "zero_grad" in facts.called_attributes
    valid = ("optimizer.zero_grad()\n", "p.grad.zero_()\n")
    invalid = (
        Example("optimizer.zero_grad(set_to_none=False)\n", fixed="optimizer.zero_grad(set_to_none=True)\n"),
        Example("optimizer.zero_grad()\n", fixed="optimizer.zero_grad(set_to_none=True)\n", torch="1.13"),
        Example("optimizer.zero_grad()\n", findings=0, torch="1.6"),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        comparison=".verify_compare:check",
        probes=(Probe("optimizer-steps", "verify_probe.py"),),
        contract=Contract(
            level="identical",
            promise=(
                "When every parameter receives a gradient in every step, training with "
                "`zero_grad(set_to_none=True)` gives the same parameters and optimizer state, "
                "step by step, for SGD, Adam and the other built-in optimizers."
            ),
            checks=(
                "every output (parameters, optimizer state, losses) is identical",
                (
                    "at each optimizer step, the parameters with no gradient (`None` after the "
                    "fix, all zeros before) are counted"
                ),
            ),
            differences=(
                (
                    "A parameter that gets no gradient in a step is skipped by the optimizer when "
                    "its gradient is `None`, but updated with a zero gradient before the fix: "
                    "momentum, weight decay and Adam's moment estimates still move it, and Adam's "
                    "step count advances."
                ),
                (
                    "Code that reads `p.grad` between `zero_grad()` and `backward()` gets `None`."
                ),
            ),
            speed=(
                "Saves one memset per parameter per step and lets backward write gradients "
                "instead of adding to zeros: a few percent for parameter-heavy, small-batch "
                "steps."
            ),
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "zero_grad"):
            return
        version = self.context.torch_version
        if version < _ARGUMENT_ADDED:
            return  # no `set_to_none` to pass
        if self._rejects_keyword(func.value):
            return
        if not node.args:
            if version < _DEFAULT_FLIPPED:
                self.report(
                    node,
                    f"`zero_grad()` fills gradients with zeros before torch 2.0 (target: "
                    f"{version}); pass `set_to_none=True` to release them instead",
                    fix=self.replace(
                        node,
                        add_keyword(node, "set_to_none", cst.Name("True")),
                        Applicability.UNSAFE,
                        "Pass `set_to_none=True`",
                    ),
                    hint="Since torch 2.0 a bare `zero_grad()` already sets gradients to None",
                )
            return
        if len(node.args) != 1:
            return
        arg = bind(node, apidata.signature(_ZERO_GRAD), version).argument("set_to_none")
        if arg is None or literal_bool(arg.value) is not False:
            return
        written = "zero_grad(False)" if arg.keyword is None else "zero_grad(set_to_none=False)"
        fixed = replace_argument(node, arg, cst.Name("True"), keyword="set_to_none")
        self.report(
            node,
            f"`{written}` fills gradients with zeros; pass `set_to_none=True` to release "
            "them instead",
            fix=self.replace(node, fixed, Applicability.UNSAFE, "Use `set_to_none=True`"),
        )

    def _rejects_keyword(self, receiver: cst.BaseExpression) -> bool:
        """Whether every value ``receiver`` can hold was built by a class (of
        this file or of the project) whose ``zero_grad`` has no
        ``set_to_none`` parameter: adding the keyword there raises
        ``TypeError``.  A torch optimizer or module, or any class whose
        method is not known, is not such a class."""
        makers = self.facts.instances.makers(receiver)
        if not makers:
            return False
        for maker in makers:
            shape = self.facts.instances.method(maker, "zero_grad")
            if shape is None or shape.accepts_keyword("set_to_none"):
                return False
        return True
