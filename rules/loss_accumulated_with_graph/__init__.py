"""TL305 loss-accumulated-with-graph."""

from __future__ import annotations

from typing import FrozenSet, Iterator, Mapping, Optional, Tuple, Union

import libcst as cst

from torchlint.analysis.queries import summaries
from torchlint.analysis.training import GradMode, LoopFacts, grad_mode
from torchlint.analysis.values import ValueKind
from torchlint.model import Applicability
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, FixAvailability, OptionValue, Rule, TorchRange, TorchVersion
from torchlint.source.tree import walk_body
from torchlint.ruleapi.verification import Contract, Probe, VerificationSpec

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_LOSS_FUNCTIONS: FrozenSet[str] = frozenset({
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_embedding_loss", "cross_entropy",
    "ctc_loss", "gaussian_nll_loss", "hinge_embedding_loss", "huber_loss", "kl_div", "l1_loss",
    "margin_ranking_loss", "mse_loss", "multi_margin_loss", "multilabel_margin_loss",
    "multilabel_soft_margin_loss", "nll_loss", "poisson_nll_loss", "smooth_l1_loss", "soft_margin_loss",
    "triplet_margin_loss", "triplet_margin_with_distance_loss",
})
"""``torch.nn.functional``'s loss functions (each returns a tensor with a graph)."""
_DETACHING_METHODS: FrozenSet[str] = frozenset({"item", "detach", "tolist", "numpy"})
_DETACHING_FUNCTIONS: FrozenSet[str] = frozenset({"float", "int"})
_AUTOGRAD_BACKWARD = "torch.autograd.backward"
Loop = Union[cst.For, cst.While]


def _contains_name(node: cst.CSTNode, name: str) -> bool:
    return any(isinstance(n, cst.Name) and n.value == name for n in walk_body(node))


class LossAccumulatedWithGraph(Rule):
    """## What it does
    Reports `total += loss` and `total = total + loss` inside a loop when
    `loss` is a tensor that still carries its autograd graph: it is
    backpropagated in that loop (`loss.backward()`,
    `scaler.scale(loss).backward()`, `torch.autograd.backward(loss)`), or,
    in a loop that calls backward, it is the result of a loss call (an
    `nn.*Loss` module of the file, or a `torch.nn.functional` loss such as
    `F.cross_entropy`) made with gradients on, or it is returned by one of
    the file's own functions that backpropagates that very tensor and
    returns it as it is (`loss, acc = step(batch)` where `step` ends with
    `loss.backward()` ... `return loss, acc`).  A loop calls backward also
    through a library wrapper that runs it (`accelerator.backward(loss)`,
    timm's `loss_scaler(loss, optimizer)`) or another module's function
    whose code does (the project index's summaries; a scaler passed in as a
    parameter counts when every call in the project passes the same class).

    Not reported: accumulating `loss.item()`, `loss.detach()` or
    `float(loss)`; a `loss` reassigned to one of these in the loop; an
    accumulator that is itself backpropagated in the same function
    (gradient accumulation: `acc += loss` ... `acc.backward()`); additions
    under `torch.no_grad()`/`inference_mode()`.

    ## Why is this bad?
    A tensor that requires grad holds the graph that produced it, and
    `total + loss` builds a new node that holds both `total`'s graph and
    `loss`'s.  `backward()` frees the buffers each graph saved, but the
    nodes themselves, and whatever they still reference, stay reachable
    from `total` until it is dropped, usually at the end of the epoch: a
    small leak per step that grows with the number of steps, and on a GPU
    keeps device memory allocated for nothing.

    ## Example
    ```python
    total_loss = 0.0
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total_loss += loss
    ```

    Use instead:
    ```python
    total_loss = 0.0
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total_loss += loss.detach()
    ```

    `total_loss += loss.item()` works too when the total is only printed,
    at the cost of one device synchronisation per step.

    ## Fix safety
    Safe: `loss.detach()` is the same number on the same device, with the
    same dtype; only its graph is dropped, so the accumulated value is
    unchanged.  The only thing lost is the ability to backpropagate through
    the total, and when the total is backpropagated in the same function
    the rule does not report at all.  (A total returned to a caller that
    backpropagates it would lose its gradient; the rule only reports in
    loops that already call backward on their own losses.)

    ## Source guide
    *Chapter 16: GPU Acceleration & Distributed Training* (a deep-learning
    training book) accumulates the epoch's loss as
    `total_loss += loss.item()` in its mixed-precision training loop.
    PyTorch's FAQ, "My model reports 'cuda runtime error(2): out of
    memory'", names `total_loss += loss` as the classic way to accumulate
    history across the training loop.
    """

    code = "TL305"
    name = "loss-accumulated-with-graph"
    summary = "a loss tensor accumulated with its autograd graph; add `loss.detach()`"
    fix_availability = FixAvailability.ALWAYS
    fix_summary = "safe: `loss.detach()`"
    torch_range = TorchRange(min=TorchVersion(0, 4), note="tensors carry autograd graphs since 0.4")
    trigger_words = ("backward",)  # every report needs a backward call (here, or in what the file calls)
    project_queries = (summaries(),)

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """A backward pass in the file, or a call of something that runs one
        (a library wrapper such as timm's loss scaler, another module's step)."""
        return facts.may_train()

    valid = (
        (
            "def step(x):\n    loss = model(x).sum()\n    loss.backward()\n    return loss.detach()\n"
            "for x in data:\n    loss = step(x)\n    total += loss\n"
        ),
        "for x in data:\n    loss = model(x).sum()\n    loss.backward()\n    total += loss.item()\n",
        "for x in data:\n    loss = model(x).sum()\n    acc += loss\n    acc.backward()\n",
        (
            "import torch\n"
            "with torch.no_grad():\n"
            "    for x in data:\n"
            "        loss = model(x).sum()\n"
            "        total += loss\n"
        ),
    )
    invalid = (
        Example(
            (
                "def step(x):\n    loss = model(x).sum()\n    loss.backward()\n    return loss, x.shape[0]\n"
                "for x in data:\n    loss, n = step(x)\n    total += loss\n"
            ),
            fixed=(
                "def step(x):\n    loss = model(x).sum()\n    loss.backward()\n    return loss, x.shape[0]\n"
                "for x in data:\n    loss, n = step(x)\n    total += loss.detach()\n"
            ),
        ),
        Example(
            "for x in data:\n    loss = model(x).sum()\n    loss.backward()\n    total += loss\n",
            fixed="for x in data:\n    loss = model(x).sum()\n    loss.backward()\n    total += loss.detach()\n",
        ),
        Example(
            "for x in data:\n    loss = model(x).sum()\n    loss.backward()\n    total = total + loss\n",
            fixed=(
                "for x in data:\n    loss = model(x).sum()\n    loss.backward()\n"
                "    total = total + loss.detach()\n"
            ),
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        comparison=".verify_compare:check",
        probes=(Probe("kept-graphs", "verify_probe.py"),),
        contract=Contract(
            level="identical",
            promise=(
                "The accumulated total is the same number (same dtype, same device); it just no "
                "longer holds every step's autograd graph, so memory stops growing with the "
                "number of steps."
            ),
            checks=(
                "every output (the accumulated totals, the parameters, gradients, optimizer state) and "
                "printed number is identical; tensors may stop requiring grad (printed `grad_fn=...` "
                "annotations are ignored)",
                "observed (a probe): after every optimizer step, how many autograd nodes each tensor in "
                "the program's frames keeps alive; after the fix none may grow step after step",
            ),
            differences=("The total no longer requires grad: backward through it raises.",),
        ),
    )

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign) and isinstance(node.value, cst.Name):
            self._check(node.target, node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        value = node.value
        if not (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add)):
            return
        target = node.targets[0].target
        code = self.context.module.code_for_node
        for total, added in ((value.left, value.right), (value.right, value.left)):
            if isinstance(added, cst.Name) and code(total) == code(target):
                self._check(target, added)
                return

    def _check(self, total: cst.BaseExpression, loss: cst.Name) -> None:
        if not isinstance(total, (cst.Name, cst.Attribute)):
            return
        loop = self._loop()
        if loop is None or self._grad_disabled():
            return
        function = self._function()
        facts = self.facts.training.function(function)
        loop_facts = next((f for f in facts.loops if f.node is loop), None)
        if loop_facts is None or self._detached_in(loop, loss.value):
            return
        total_code = self.context.module.code_for_node(total)
        for fact in facts.backward:
            target = self._backward_target(fact.call)
            if target is not None and self._mentions(target, total_code):
                return  # gradient accumulation: the total is what is backpropagated
        if self._backpropagated(loop_facts, loss.value):
            why = f"`{loss.value}` is backpropagated in this loop"
        elif self._from_loss_call(loop, loss.value) and self.facts.training.is_training_loop(loop_facts):
            why = f"`{loss.value}` is a loss computed with gradients on"
        elif self._returned_backpropagated(loop, loss.value):
            why = f"`{loss.value}` is a loss that the function called here backpropagates and returns"
        else:
            return
        fixed = cst.Call(func=cst.Attribute(value=loss, attr=cst.Name("detach")))
        self.report(
            loss,
            f"{why}; adding it to `{total_code}` keeps every step's autograd graph alive until "
            f"`{total_code}` is dropped; add `{loss.value}.detach()` (or `.item()`)",
            fix=self.replace(loss, fixed, Applicability.SAFE, f"Add `{loss.value}.detach()`"),
        )

    # -- facts about the surroundings --------------------------------------------------

    def _loop(self) -> Optional[Loop]:
        for parent in reversed(self.parents):
            if isinstance(parent, _SCOPES):
                return None
            if isinstance(parent, (cst.For, cst.While)):
                return parent
        return None

    def _function(self) -> Union[cst.FunctionDef, cst.Module]:
        for parent in reversed(self.parents):
            if isinstance(parent, cst.FunctionDef):
                return parent
        return self.context.module

    def _grad_disabled(self) -> bool:
        for parent in reversed(self.parents):
            if isinstance(parent, cst.With):
                modes = [grad_mode(item.item, self.names) for item in parent.items]
                if GradMode.DISABLED in modes:
                    return True
                if GradMode.ENABLED in modes:
                    return False
            if isinstance(parent, cst.FunctionDef):
                modes = [grad_mode(d.decorator, self.names) for d in parent.decorators]
                return GradMode.DISABLED in modes
        return False

    def _backward_target(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """What a backward call backpropagates: ``x`` of ``x.backward()``,
        ``scaler.scale(x).backward()`` or ``torch.autograd.backward(x)``."""
        func = call.func
        if self.names.call_name(call) == _AUTOGRAD_BACKWARD:
            return call.args[0].value if call.args else None
        if not (isinstance(func, cst.Attribute) and func.attr.value == "backward"):
            return None
        receiver = func.value
        if (
            isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute)
            and receiver.func.attr.value == "scale" and len(receiver.args) == 1
            and self.facts.values.kind(receiver.func.value) is ValueKind.GRAD_SCALER
        ):
            return receiver.args[0].value
        return receiver

    def _mentions(self, node: cst.CSTNode, code: str) -> bool:
        module = self.context.module
        return any(
            isinstance(n, (cst.Name, cst.Attribute)) and module.code_for_node(n) == code for n in walk_body(node)
        )

    def _backpropagated(self, loop: LoopFacts, name: str) -> bool:
        for fact in loop.backward:
            target = self._backward_target(fact.call)
            if isinstance(target, cst.Name) and target.value == name:
                return True
        return False

    def _assigned_values(self, loop: Union[Loop, cst.FunctionDef], name: str) -> Iterator[cst.BaseExpression]:
        for node in walk_body(loop.body):
            if isinstance(node, cst.Assign) and any(
                isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets
            ):
                yield node.value

    def _call_results(self, loop: Loop, name: str) -> Iterator[Tuple[cst.Call, Optional[int]]]:
        """Calls whose result is bound to ``name`` in the loop, with the position of
        ``name`` when the result is unpacked (``a, b = f()``), ``None`` when bound whole."""
        for node in walk_body(loop.body):
            if not (isinstance(node, cst.Assign) and isinstance(node.value, cst.Call)):
                continue
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value == name:
                    yield node.value, None
                elif isinstance(target.target, (cst.Tuple, cst.List)):
                    elements = target.target.elements
                    for index, element in enumerate(elements):
                        if isinstance(element, cst.StarredElement):
                            break
                        if isinstance(element.value, cst.Name) and element.value.value == name:
                            yield node.value, index

    def _returned_backpropagated(self, loop: Loop, name: str) -> bool:
        """``name`` comes from one of the file's functions that calls backward on the
        tensor it returns there, returned undetached, on every ``return``."""
        training = self.facts.training
        for call, index in self._call_results(loop, name):
            callee = training.local_function(call)
            if callee is None or training.grad_disabled(call):
                continue
            facts = training.function(callee)
            backpropagated = {
                target.value for target in (self._backward_target(f.call) for f in facts.backward)
                if isinstance(target, cst.Name)
            }
            returns = [n for n in walk_body(callee.body) if isinstance(n, cst.Return)]
            names = {self._returned_name(r, index) for r in returns}
            if returns and len(names) == 1:
                returned = names.pop()
                if returned is not None and returned in backpropagated and not self._detached_in(callee, returned):
                    return True
        return False

    @staticmethod
    def _returned_name(node: cst.Return, index: Optional[int]) -> Optional[str]:
        value = node.value
        if index is not None:
            if not (isinstance(value, cst.Tuple) and index < len(value.elements)):
                return None
            element = value.elements[index]
            if isinstance(element, cst.StarredElement):
                return None
            value = element.value
        return value.value if isinstance(value, cst.Name) else None

    def _detached_in(self, loop: Union[Loop, cst.FunctionDef], name: str) -> bool:
        """``name`` is (also) assigned a detached value in the loop (or function)."""
        for value in self._assigned_values(loop, name):
            if not isinstance(value, cst.Call):
                continue
            func = value.func
            if isinstance(func, cst.Attribute) and func.attr.value in _DETACHING_METHODS:
                return True
            if isinstance(func, cst.Name) and func.value in _DETACHING_FUNCTIONS:
                return True
        return False

    def _from_loss_call(self, loop: Loop, name: str) -> bool:
        for value in self._assigned_values(loop, name):
            if isinstance(value, cst.Call) and self._is_loss_call(value):
                return not self.facts.training.grad_disabled(value)
        return False

    def _is_loss_call(self, call: cst.Call) -> bool:
        qualified = self.names.call_name(call)
        if qualified is not None:
            module, _, function = qualified.rpartition(".")
            return module == "torch.nn.functional" and function in _LOSS_FUNCTIONS
        return self.facts.values.kind(call.func) is ValueKind.LOSS
