"""TL601 clip-before-unscale."""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Iterator, Optional, Sequence, Set, Tuple

import libcst as cst

from torchlint.analysis.queries import summaries
from torchlint.analysis.values import literal_bool, ValueKind
from torchlint.ruleapi.fixes import insert_statements, keyword_argument, parse_statement, statement_site
from torchlint.model import Applicability
from torchlint.ruleapi.rule import Example, FixRequest, FixAvailability, Rule, TorchRange, TorchVersion
from torchlint.source.tree import children, walk_body
from torchlint.ruleapi.verification import Contract, Probe, VerificationSpec

_CLIPS: FrozenSet[str] = frozenset({
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_value_",
    "torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad.clip_grad_norm_",
    "torch.nn.utils.clip_grad.clip_grad_value_", "torch.nn.utils.clip_grad.clip_grad_norm",
})


@dataclass(frozen=True)
class _Step:
    """``scaler.step(opt)`` after the clip: the scaler's text and the optimizer argument."""

    scaler: str
    optimizer: Optional[cst.BaseExpression]


def _calls(node: cst.CSTNode) -> Iterator[cst.Call]:
    """Every call inside ``node`` (not into nested functions or classes)."""
    return (found for found in walk_body(node) if isinstance(found, cst.Call))


class ClipBeforeUnscale(Rule):
    """## What it does
    Reports `torch.nn.utils.clip_grad_norm_` and `clip_grad_value_` calls
    that come after `scaler.scale(loss).backward()` (the scaler being a
    `torch.amp.GradScaler`, the older `torch.cuda.amp.GradScaler`, or FSDP's
    `ShardedGradScaler`, also when assigned as `GradScaler(...) if amp else
    None` or annotated as one) with no `scaler.unscale_(...)` in between, in
    the same block or the blocks around it, whether `scaler.step(optimizer)`
    follows in the same function or the caller steps.

    The scaler may be a parameter: the project's calls that fill it decide
    what it is (`train_one_epoch(model, loader, opt, scaler)` in another
    module, called by a driver that builds a `GradScaler`, or handed on
    through a base trainer's `fit(..., scaler: GradScaler)` to the
    `self.train_one_epoch(...)` a subclass overrides).  When every class
    the callers build it with is a gradient scaler it counts; when one of
    them is something else (a project's own object with a `scale` method),
    or nothing is known, the clip is left alone.

    A backward in one branch of an `if` does not reach a clip in the other
    branch: `if amp: scaler.scale(loss).backward() else: loss.backward()`
    followed by `if amp: ... else: clip_grad_norm_(...)` is not reported,
    because the `else` clip runs only when the scaler did not (the two
    tests are compared as written, so `if args.amp:` twice is one
    condition, unless a name the test reads is assigned again in between,
    as in `amp = not amp`).

    A scaler constructed in the file with a literal `enabled=False`, and
    clipping helpers of other libraries (`accelerator.clip_grad_norm_` of
    Hugging Face Accelerate unscales by itself) are left alone.

    ## Why is this bad?
    Under a gradient scaler, `backward()` leaves every gradient multiplied
    by the current scale (65,536 at the start, by default).  Clipping those
    gradients compares the scaled norm with your threshold: the clip fires
    on every step and, once `scaler.step` divides by the scale, shrinks the
    true gradient by up to the scale factor.  Training silently runs with
    a far smaller effective learning rate, or the threshold never means
    what it says.  `scaler.unscale_(optimizer)` divides the gradients first;
    `scaler.step` then knows not to divide again.

    ## Example
    ```python
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    ```

    Use instead:
    ```python
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Fix safety
    The fix inserts `scaler.unscale_(optimizer)` right before the clip's
    statement, with the optimizer taken from the `scaler.step(...)` that
    follows (no fix when no `scaler.step` follows in the same function, when
    that call has no optimizer argument, or when the clip sits in a one-line
    suite).  It is unsafe because it changes training:
    that is the point, clipping starts to act on the true gradients, so the
    threshold that was tuned against scaled gradients may need retuning.
    `unscale_` may be called only once per optimizer between `update()`
    calls: code that unscales elsewhere (in a helper, or for a second
    optimizer sharing the clip) raises `RuntimeError` after the fix.

    ## Source guide
    *Chapter 16: GPU Acceleration & Distributed Training* (a deep-learning
    training book) shows the mixed-precision step as "Unscale and clip
    gradients": `scaler.unscale_(optimizer)` directly before
    `clip_grad_norm_`, then `scaler.step` and `scaler.update`.  PyTorch's
    *Automatic Mixed Precision examples* page ("Gradient clipping") says the
    same.
    """

    code = "TL601"
    name = "clip-before-unscale"
    summary = "gradients clipped while still multiplied by the AMP scale; call `scaler.unscale_` first"
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "unsafe: insert `scaler.unscale_(optimizer)` before the clip"
    torch_range = TorchRange(min=TorchVersion(1, 6), note="`GradScaler` and `unscale_` exist since 1.6")
    project_queries = (summaries(),)
    trigger_words = ("clip_grad_",)
    valid = (
        (
            "import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "scaler.scale(loss).backward()\n"
            "scaler.unscale_(opt)\n"
            "torch.nn.utils.clip_grad_norm_(params, 1.0)\n"
            "scaler.step(opt)\n"
        ),
        (
            "import torch\n"
            "scaler = torch.amp.GradScaler('cuda', enabled=False)\n"
            "scaler.scale(loss).backward()\n"
            "torch.nn.utils.clip_grad_norm_(params, 1.0)\n"
            "scaler.step(opt)\n"
        ),
        (
            "import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "scaler.scale(loss).backward()\n"
            "accelerator.clip_grad_norm_(params, 1.0)\n"
            "scaler.step(opt)\n"
        ),
    )
    invalid = (
        Example(
            (
                "import torch\n"
                "scaler = torch.amp.GradScaler('cuda')\n"
                "for x in data:\n"
                "    scaler.scale(loss).backward()\n"
                "    torch.nn.utils.clip_grad_norm_(params, 1.0)\n"
                "    scaler.step(opt)\n"
            ),
            fixed=(
                "import torch\n"
                "scaler = torch.amp.GradScaler('cuda')\n"
                "for x in data:\n"
                "    scaler.scale(loss).backward()\n"
                "    scaler.unscale_(opt)\n"
                "    torch.nn.utils.clip_grad_norm_(params, 1.0)\n"
                "    scaler.step(opt)\n"
            ),
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        comparison=".verify_compare:check",
        probes=(Probe("clipping", "verify_probe.py"),),
        replay="clipping",
        contract=Contract(
            level="intended change",
            promise=(
                "After the fix the clip sees the true gradients: the norm it measures is the "
                "scaled norm divided by the scale, and the step applies gradients clipped to "
                "the threshold instead of gradients shrunk by up to the scale factor.  Nothing "
                "else changes."
            ),
            checks=(
                "observed (a probe): at each `clip_grad_norm_`/`clip_grad_value_`, whether an enabled "
                "scaler had scaled the loss and not yet unscaled the optimizer owning the clipped parameters",
                "before the fix some clip sees scaled gradients; after it none does, with as many clips",
                "the original, calling `scaler.unscale_(optimizer)` before each such clip as the fix does, "
                "gives the fixed run's outputs and printed text (identical on the CPU, close on CUDA)",
                "an original that never clips scaled gradients (a disabled scaler) must be equivalent",
            ),
            differences=(
                "Parameters and losses differ after the first step: training changes, as intended.",
            ),
        ),
    )

    _disabled: FrozenSet[str] = frozenset()

    def visit_Module(self, node: cst.Module) -> None:
        self._disabled = self._disabled_scalers(node)

    def _disabled_scalers(self, module: cst.Module) -> FrozenSet[str]:
        """Texts of targets assigned a scaler built with a literal ``enabled=False``."""
        found: Set[str] = set()
        for call in _calls(module):
            if self.names.call_name(call) is None or self.facts.values.kind(call) is not ValueKind.GRAD_SCALER:
                continue
            enabled = keyword_argument(call, "enabled")
            if enabled is not None and literal_bool(enabled.value) is False:
                found.update(self._targets_of(call))
        return frozenset(found)

    def _targets_of(self, call: cst.Call) -> Iterator[str]:
        for assign in _assignments(self.context.module):
            if assign.value is call:
                for target in assign.targets:
                    yield self.context.module.code_for_node(target.target)

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.names.call_name(node)
        if qualified not in _CLIPS:
            return
        scaler = self._scaled_backward_before(node)
        if scaler is None or scaler in self._disabled:
            return
        # No `scaler.step` after the clip in this function (the caller steps): still
        # clipped while scaled, but there is no optimizer to unscale, so no fix.
        step = self._step_after(node, scaler)
        fix: Optional[FixRequest] = None
        site = statement_site(self.parents, node)
        if step is not None and step.optimizer is not None and site is not None:
            optimizer = self.context.module.code_for_node(step.optimizer)
            statement = parse_statement(f"{scaler}.unscale_({optimizer})\n", self.context.module)
            replacement = insert_statements(site, (statement,), after=False)
            fix = self.replace(
                replacement.node, replacement.new_node, Applicability.UNSAFE,
                f"Insert `{scaler}.unscale_({optimizer})` before the clip",
            )
        function = qualified.rsplit(".", 1)[-1] if qualified else "clip"
        self.report(
            node,
            f"`{function}` clips gradients still multiplied by `{scaler}`'s loss scale; call "
            f"`{scaler}.unscale_(...)` before clipping",
            fix=fix,
        )

    # -- where the clip stands --------------------------------------------------------

    def _scaled_backward_before(self, node: cst.Call) -> Optional[str]:
        """The scaler text of a ``S.scale(..).backward()`` before the clip, in its
        block or the blocks around it, with no ``S.unscale_`` between, and not
        in a branch that excludes the clip's own branch."""
        flow = self.facts.flow
        unscaled: Set[str] = set()
        for before, _after in _sides(self.parents, node):
            for statement in reversed(before):
                for call in _calls(statement):
                    scaler = self._unscale_receiver(call)
                    if scaler is not None:
                        unscaled.add(scaler)
                if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                    continue  # runs when called, not here
                for call in _calls(statement):
                    scaler = self._scaled_backward(call)
                    if scaler is not None and not flow.exclusive(call, node):
                        return None if scaler in unscaled else scaler
        return None

    def _step_after(self, node: cst.Call, scaler: str) -> Optional[_Step]:
        for _before, after in _sides(self.parents, node):
            for statement in after:
                for call in _calls(statement):
                    func = call.func
                    if (
                        isinstance(func, cst.Attribute) and func.attr.value == "step"
                        and self.context.module.code_for_node(func.value) == scaler
                    ):
                        first = call.args[0] if call.args and call.args[0].keyword is None else None
                        return _Step(scaler, first.value if first is not None else None)
        return None

    def _scaler_text(self, expr: cst.BaseExpression) -> Optional[str]:
        if self.facts.values.kind(expr) is not ValueKind.GRAD_SCALER:
            return None
        return self.context.module.code_for_node(expr)

    def _scaled_backward(self, call: cst.Call) -> Optional[str]:
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "backward"):
            return None
        inner = func.value
        if not (isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute)):
            return None
        if inner.func.attr.value != "scale":
            return None
        return self._scaler_text(inner.func.value)

    def _unscale_receiver(self, call: cst.Call) -> Optional[str]:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "unscale_":
            return self.context.module.code_for_node(func.value)
        return None


def _assignments(node: cst.CSTNode) -> Iterator[cst.Assign]:
    if isinstance(node, cst.Assign):
        yield node
    for child in children(node):
        yield from _assignments(child)


def _sides(
    parents: Sequence[cst.CSTNode], node: cst.CSTNode
) -> Iterator[Tuple[Sequence[cst.BaseStatement], Sequence[cst.BaseStatement]]]:
    """For each block around ``node``, innermost first and up to the enclosing
    function: the statements before and after the one that holds ``node``."""
    chain = [*parents, node]
    for index in range(len(chain) - 1, 0, -1):
        candidate, parent = chain[index], chain[index - 1]
        if isinstance(candidate, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and candidate is not node:
            return
        if isinstance(parent, (cst.Module, cst.IndentedBlock)) and isinstance(candidate, cst.BaseStatement):
            body = list(parent.body)
            position = next((i for i, s in enumerate(body) if s is candidate), None)
            if position is not None:
                yield body[:position], body[position + 1:]
