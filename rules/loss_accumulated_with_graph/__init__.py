"""TL305 loss-accumulated-with-graph."""

from __future__ import annotations

from typing import FrozenSet, Iterator, Mapping, Optional, Sequence, Tuple, Union

import libcst as cst

from torchlint.analysis.queries import summaries
from torchlint.analysis.scopes import Binding, BindingKind
from torchlint.analysis.training import LoopFacts
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


_MAX_OPERANDS = 8
"""How many operators deep a loss value's arithmetic is read."""
_ARITHMETIC = (cst.Multiply, cst.Divide, cst.Add, cst.Subtract)


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
    `F.cross_entropy`) made with gradients on, or arithmetic on one
    (`content = w * criterion(a, b)`, `loss / accum_steps`), whatever the
    other operand (the call itself may be what is added: `total +=
    criterion(out, y)`), or it is returned by one of
    the file's own functions that backpropagates that very tensor and
    returns it as it is (`loss, acc = step(batch)` where `step` ends with
    `loss.backward()` ... `return loss, acc`).  A loop calls backward also
    through a library wrapper that runs it (`accelerator.backward(loss)`,
    timm's `loss_scaler(loss, optimizer)`) or another module's function
    whose code does (the project index's summaries; a scaler passed in as a
    parameter counts when every call in the project passes the same class).
    A pass over a loader inside a loop that trains counts too: the
    validation loop an epoch loop runs after its training loop, outside
    `torch.no_grad()` (`val_loss += criterion(model(x), y)`), keeps the
    graph of every validation batch, which no backward ever frees.

    What `loss` holds is read from the assignments that reach the addition
    (the shared flow fact): `loss = loss.detach()` after `total += loss`
    comes too late and is reported.

    Not reported: accumulating `loss.item()`, `loss.detach()` or
    `float(loss)`; a `loss` that, where it is added, may hold one of these
    (an assignment that reaches the addition on some path); an
    accumulator that is itself backpropagated in the same function
    (gradient accumulation: `acc += loss` ... `acc.backward()`); additions
    where gradients are off (the innermost grad-mode context around them:
    `torch.no_grad()`, `inference_mode()`, a decorator, Lightning's
    evaluation hooks).

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
            "for x in data:\n    loss = model(x).sum()\n    loss.backward()\n    total += loss\n    loss = loss.detach()\n",
            fixed=(
                "for x in data:\n    loss = model(x).sum()\n    loss.backward()\n    total += loss.detach()\n"
                "    loss = loss.detach()\n"
            ),
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
        if isinstance(node.operator, cst.AddAssign) and isinstance(node.value, (cst.Name, cst.Call)):
            self._check(node, node.target, node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        value = node.value
        if not (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add)):
            return
        target = node.targets[0].target
        code = self.context.module.code_for_node
        for total, added in ((value.left, value.right), (value.right, value.left)):
            if isinstance(added, (cst.Name, cst.Call)) and code(total) == code(target):
                self._check(node, target, added)
                return

    def _check(self, statement: Union[cst.AugAssign, cst.Assign], total: cst.BaseExpression,
               loss: Union[cst.Name, cst.Call]) -> None:
        if not isinstance(total, (cst.Name, cst.Attribute)):
            return
        loop = self._loop()
        if loop is None or self.facts.training.grad_disabled(statement):
            return
        function = self._function()
        facts = self.facts.training.function(function)
        loop_facts = next((f for f in facts.loops if f.node is loop), None)
        # What `loss` may hold here; a call added as it is (`total += criterion(out, y)`) holds its result.
        bindings = self.facts.flow.bindings_at(loss) if isinstance(loss, cst.Name) else ()
        if loop_facts is None or self._detached(bindings):
            return
        total_code = self.context.module.code_for_node(total)
        for fact in facts.backward:
            target = self._backward_target(fact.call)
            if target is not None and self._mentions(target, total_code):
                return  # gradient accumulation: the total is what is backpropagated
        trains = self.facts.training.is_training_loop(loop_facts) or self._pass_in_training_loop(loop_facts)
        if isinstance(loss, cst.Call):
            if not (trains and self._is_loss_call(loss)):
                return
            shown = self.context.module.code_for_node(loss.func)
            why, what = f"`{shown}(...)` is a loss computed with gradients on", f"`{shown}(...).detach()`"
        elif self._backpropagated(loop_facts, loss.value):
            why, what = f"`{loss.value}` is backpropagated in this loop", f"`{loss.value}.detach()`"
        elif self._from_loss_call(bindings) and trains:
            why, what = f"`{loss.value}` is a loss computed with gradients on", f"`{loss.value}.detach()`"
        elif self._returned_backpropagated(bindings):
            why = f"`{loss.value}` is a loss that the function called here backpropagates and returns"
            what = f"`{loss.value}.detach()`"
        else:
            return
        fixed = cst.Call(func=cst.Attribute(value=loss, attr=cst.Name("detach")))
        self.report(
            loss,
            f"{why}; adding it to `{total_code}` keeps every step's autograd graph alive until "
            f"`{total_code}` is dropped; add {what} (or `.item()`)",
            fix=self.replace(loss, fixed, Applicability.SAFE, f"Add {what}"),
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

    def _pass_in_training_loop(self, loop: LoopFacts) -> bool:
        """A pass over a loader (``for x, y in val_loader``) inside a loop that
        trains (the epoch loop): its losses carry graphs nothing frees."""
        if not loop.over_dataloader:
            return False
        outer = loop.parent
        while outer is not None:
            if self.facts.training.is_training_loop(outer):
                return True
            outer = outer.parent
        return False

    def _backpropagated(self, loop: LoopFacts, name: str) -> bool:
        for fact in loop.backward:
            target = self._backward_target(fact.call)
            if isinstance(target, cst.Name) and target.value == name:
                return True
        return False

    @staticmethod
    def _call_results(bindings: Sequence[Binding]) -> Iterator[Tuple[cst.Call, Optional[int]]]:
        """The calls whose result the name holds through ``bindings``, with its
        position when the result is unpacked (``a, b = f()``), ``None`` when
        bound whole."""
        for binding in bindings:
            if binding.kind is not BindingKind.ASSIGN:
                continue
            if binding.path == () and isinstance(binding.value, cst.Call):
                yield binding.value, None
            elif binding.path is not None and len(binding.path) == 1 and isinstance(binding.source, cst.Call):
                yield binding.source, binding.path[0]

    def _returned_backpropagated(self, bindings: Sequence[Binding]) -> bool:
        """The name holds what one of the file's functions returns, on every
        ``return``, undetached: a tensor that function calls backward on."""
        training = self.facts.training
        for call, index in self._call_results(bindings):
            callee = training.local_function(call)
            if callee is None or training.grad_disabled(call):
                continue
            facts = training.function(callee)
            backpropagated = {
                target.value for target in (self._backward_target(f.call) for f in facts.backward)
                if isinstance(target, cst.Name)
            }
            returns = [n for n in walk_body(callee.body) if isinstance(n, cst.Return)]
            returned = [self._returned_name(r, index) for r in returns]
            names = {name.value if name is not None else None for name in returned}
            if returns and len(names) == 1:
                only = names.pop()
                if only is not None and only in backpropagated and not any(
                    name is not None and self._detached(self.facts.flow.bindings_at(name)) for name in returned
                ):
                    return True
        return False

    @staticmethod
    def _returned_name(node: cst.Return, index: Optional[int]) -> Optional[cst.Name]:
        value = node.value
        if index is not None:
            if not (isinstance(value, cst.Tuple) and index < len(value.elements)):
                return None
            element = value.elements[index]
            if isinstance(element, cst.StarredElement):
                return None
            value = element.value
        return value if isinstance(value, cst.Name) else None

    @staticmethod
    def _detached(bindings: Sequence[Binding]) -> bool:
        """Some binding the read may see detaches the value (``loss = loss.item()``)."""
        for binding in bindings:
            value = binding.value if binding.path == () else None
            if not isinstance(value, cst.Call):
                continue
            func = value.func
            if isinstance(func, cst.Attribute) and func.attr.value in _DETACHING_METHODS:
                return True
            if isinstance(func, cst.Name) and func.value in _DETACHING_FUNCTIONS:
                return True
        return False

    def _from_loss_call(self, bindings: Sequence[Binding]) -> bool:
        for binding in bindings:
            value = binding.value if binding.path == () else None
            call = self._scaled_loss_call(value) if value is not None else None
            if call is not None:
                return not self.facts.training.grad_disabled(call)
        return False

    def _scaled_loss_call(self, value: cst.BaseExpression) -> Optional[cst.Call]:
        """The loss call ``value`` is, or is arithmetic on (``w * criterion(out, y)``,
        ``criterion(out, y) / accum_steps``, ``-F.nll_loss(...)``): the result
        carries that call's graph whatever the other operand is."""
        for _ in range(_MAX_OPERANDS):
            if isinstance(value, cst.Call):
                return value if self._is_loss_call(value) else None
            if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
                value = value.expression
            elif isinstance(value, cst.BinaryOperation) and isinstance(value.operator, _ARITHMETIC):
                left = self._scaled_loss_call(value.left) if isinstance(value.left, cst.Call) else None
                if left is not None:
                    return left
                value = value.right
            else:
                return None
        return None

    def _is_loss_call(self, call: cst.Call) -> bool:
        qualified = self.names.call_name(call)
        if qualified is not None:
            module, _, function = qualified.rpartition(".")
            return module == "torch.nn.functional" and function in _LOSS_FUNCTIONS
        return self.facts.values.kind(call.func) is ValueKind.LOSS
