"""TL302 zero-grad-not-set-to-none."""

from __future__ import annotations

from typing import Mapping, Optional, Set

import libcst as cst

from torchlint import apidata
from torchlint.analysis.scopes import BindingKind
from torchlint.fixes import add_keyword, bind, replace_argument
from torchlint.model import Applicability
from torchlint.precheck import PrecheckFacts
from torchlint.rule import Example, OptionValue, FixAvailability, Rule, Severity, TorchRange, TorchVersion
from torchlint.verification import Contract, Probe, VerificationSpec

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
    in-place tensor methods such as `p.grad.zero_()` are left alone, and so
    is a name that only ever holds an instance of a class of the same file
    built on no outside class (so not a torch optimizer or module) whose own
    `zero_grad()` takes no argument, such as a learning-rate-schedule
    wrapper.

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
        if self._own_class_without_argument(func.value):
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
        if arg is None or not (isinstance(arg.value, cst.Name) and arg.value.value == "False"):
            return
        written = "zero_grad(False)" if arg.keyword is None else "zero_grad(set_to_none=False)"
        fixed = replace_argument(node, arg, cst.Name("True"), keyword="set_to_none")
        self.report(
            node,
            f"`{written}` fills gradients with zeros; pass `set_to_none=True` to release "
            "them instead",
            fix=self.replace(node, fixed, Applicability.UNSAFE, "Use `set_to_none=True`"),
        )

    def _own_class_without_argument(self, receiver: cst.BaseExpression) -> bool:
        """Whether every value ``receiver`` can hold is an instance of a class
        of this file built only on the file's own classes (so not a torch
        optimizer or module), whose ``zero_grad`` takes no argument: adding
        ``set_to_none`` there would raise ``TypeError``."""
        if not isinstance(receiver, cst.Name):
            return False
        bindings = self.facts.scopes.resolve(receiver)
        if not bindings:
            return False
        for binding in bindings:
            value = binding.value
            if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
                return False
            cls = self._own_class(value.func)
            if cls is None or not _zero_grad_without_argument(self, cls, set()):
                return False
        return True

    def _own_class(self, name: cst.Name) -> Optional[cst.ClassDef]:
        bindings = self.facts.scopes.resolve(name)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.CLASS:
            return None
        node = bindings[0].node
        return node if isinstance(node, cst.ClassDef) else None


def _zero_grad_without_argument(rule: ZeroGradNotSetToNone, cls: cst.ClassDef, seen: Set[cst.ClassDef]) -> bool:
    """``cls`` (or the first of its bases, all of them the file's own
    classes, that defines it) has a ``zero_grad(self)`` with no other parameter."""
    if cls in seen:
        return False
    seen.add(cls)
    method = next(
        (s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "zero_grad"), None
    )
    if method is not None:
        params = method.params
        return (
            len([*params.posonly_params, *params.params]) == 1
            and not params.kwonly_params
            and not isinstance(params.star_arg, cst.Param)
            and params.star_kwarg is None
            and not method.decorators
        )
    if not cls.bases:
        return False
    first = cls.bases[0]  # the base whose zero_grad Python finds next
    if first.keyword is not None or not isinstance(first.value, cst.Name):
        return False
    parent = rule._own_class(first.value)
    # An imported base (torch.optim.Optimizer, a library class) is not known.
    return parent is not None and _zero_grad_without_argument(rule, parent, seen)
