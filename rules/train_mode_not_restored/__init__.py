"""TL306 train-mode-not-restored."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

import libcst as cst

from torchlint.analysis import Analysis
from torchlint.analysis.scopes import BindingKind
from torchlint.analysis.training import CallFact, FunctionNode, LoopFacts, ModeCall
from torchlint.analysis.values import ValueKind
from torchlint.ruleapi.fixes import StatementSite, insert_statements, parse_statement
from torchlint.model import Applicability
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, FixRequest, FixAvailability, OptionValue, Rule, TorchRange, TorchVersion
from torchlint.source.tree import walk_body
from torchlint.ruleapi.verification import Contract, Probe, VerificationSpec

_MAX_DEPTH = 4
_LEAVES = (cst.Return, cst.Break, cst.Continue, cst.Raise)
# `nn.Module` methods that return the module itself: `model.to(device).train()` trains `model`.
_RETURN_SELF = frozenset({
    "to", "cuda", "cpu", "xpu", "float", "half", "double", "bfloat16", "train", "eval", "requires_grad_",
    "to_empty", "apply", "zero_grad", "share_memory",
})


@dataclass(frozen=True)
class _Site:
    """Where an ``eval()`` takes effect inside a training loop: the eval call
    itself, or the call of the file's function that reaches it."""

    call: cst.Call
    function: FunctionNode
    receiver: str  # the model, as ``function`` spells it
    direct: bool  # ``call`` is the ``eval()`` itself


class TrainModeNotRestored(Rule):
    """## What it does
    Reports `model.eval()` (or `model.train(False)`) inside a training loop
    (a loop whose iterations call `backward()`, directly or through the
    file's functions), directly or through a function of the same file that
    the loop calls, when nothing in that loop, or in the functions it calls,
    puts the model back with `model.train()` (on the model or on a module
    that contains it).

    The model is the one being trained: `.train()` is called on it somewhere
    in the file, or its `.parameters()` are given to an optimizer.  Not
    reported: `.eval()` before the loop (freezing BatchNorm statistics, a
    linear probe), `.eval()` of an EMA or teacher copy (never trained, never
    optimized), and helpers that end with `.train()`.

    ## Why is this bad?
    `eval()` switches dropout off and makes BatchNorm use and stop updating
    its running statistics.  If the loop goes on to the next `backward()`
    without `train()`, every later step trains without dropout and with
    frozen, stale normalisation statistics: the loss still goes down, nothing
    fails, and the model quietly overfits or trains worse from the first
    evaluation on.

    ## Example
    ```python
    model.train()
    for epoch in range(epochs):
        for x, y in loader:
            criterion(model(x), y).backward()
            optimizer.step()
            optimizer.zero_grad()
        model.eval()
        validate(model, val_loader)
    ```

    Use instead:
    ```python
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            criterion(model(x), y).backward()
            optimizer.step()
            optimizer.zero_grad()
        model.eval()
        validate(model, val_loader)
    ```

    ## Fix safety
    The fix inserts `model.train()` after the evaluation: after the call of
    the file's function that runs `eval()`, or, for an `eval()` written in
    the loop, at the end of its block (before the first later statement of
    that block that trains).  It is unsafe because it changes training:
    dropout and BatchNorm updates come back from the next step on, which is
    the point; code that meant to keep some modules frozen through the loop
    must freeze them again after `train()`.

    ## Source guide
    *Chapter 16: GPU Acceleration & Distributed Training* (an online
    PyTorch training book) calls `model.train()` at the start of every
    epoch, before the batches, and `model.eval()` only in its evaluation
    code; PyTorch's `nn.Module.eval` documentation describes what the mode
    changes (dropout, BatchNorm).
    """

    code = "TL306"
    name = "train-mode-not-restored"
    summary = "`model.eval()` inside a training loop with no `model.train()` before the next backward"
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "unsafe: insert `model.train()` after the evaluation"
    torch_range = TorchRange(min=TorchVersion(1, 0), note="`nn.Module.train`/`eval` as today since 1.0")
    trigger_words = ("eval(", "train(False")
    requires = frozenset({Analysis.TRAINING, Analysis.VALUES})
    valid = (
        """
        for epoch in range(10):
            model.train()
            for x in loader:
                model(x).sum().backward()
                optimizer.step()
            model.eval()
        """,
        """
        model.train()
        teacher.eval()
        for x in loader:
            model(x).sum().backward()
            optimizer.step()
        """,
        """
        def evaluate(model):
            model.eval()
            score = model(val).mean()
            model.train()
            return score
        model.train()
        for x in loader:
            model(x).sum().backward()
            evaluate(model)
        """,
    )
    invalid = (
        Example(
            """
            model.train()
            for epoch in range(10):
                for x in loader:
                    model(x).sum().backward()
                    optimizer.step()
                model.eval()
                print(model(val).mean())
            """,
            fixed="""
            model.train()
            for epoch in range(10):
                for x in loader:
                    model(x).sum().backward()
                    optimizer.step()
                model.eval()
                print(model(val).mean())
                model.train()
            """,
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        comparison=".verify_compare:check",
        probes=(Probe("training-modes", "verify_probe.py"),),
        replay="training-modes",
        contract=Contract(
            level="intended change",
            promise=(
                "After the fix every training step after an evaluation runs in training mode: "
                "dropout drops activations and BatchNorm updates its running statistics, as in "
                "the steps before the first evaluation.  Nothing else changes."
            ),
            checks=(
                "observed (a probe, no outputs asked of the script): every module's training flag at "
                "each top-level module call, and which calls a backward pass went through",
                "before the fix some training forward runs with a module in eval mode that was in train "
                "mode at its first training forward; after it none does",
                "the flags differ only at training forwards, only from eval to train: evaluations keep "
                "their mode",
                "the original, with the probe setting every module's flag before each call to what the "
                "fixed run had, gives the fixed run's outputs and printed text (identical on the CPU, "
                "close on CUDA): nothing but the mode changed",
                "an original that never trains in eval mode must be equivalent to the fixed program",
            ),
            differences=("Losses and weights differ after the first evaluation, as intended.",),
        ),
    )

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        # A training loop needs `backward` or `autograd.grad` (called or imported by name).
        return facts.mentions(("backward", "grad")) and bool({"eval", "train"} & facts.called_attributes)

    # -- the module ------------------------------------------------------------------

    def leave_Module(self, original_node: cst.Module) -> None:
        training = self.facts.training
        mode_calls = [(facts.node, mc) for facts in training.functions.values() for mc in facts.mode_calls]
        if not any(not mc.train for _, mc in mode_calls):
            return
        self._parents = self.facts.parents
        self._facts: Dict[cst.Call, CallFact] = {
            fact.call: fact for facts in training.functions.values() for fact in facts.calls
        }
        self._loops: Dict[cst.CSTNode, LoopFacts] = {
            loop.node: loop for facts in training.functions.values() for loop in facts.loops
        }
        self._restorers: List[Tuple[FunctionNode, ModeCall]] = [(f, mc) for f, mc in mode_calls if mc.train]
        self._trained = self._trained_models()
        reported: Set[cst.Call] = set()
        for function, mode_call in mode_calls:
            if mode_call.train:
                continue
            if _method(mode_call.call) == "eval" and mode_call.call.args:
                continue  # not nn.Module.eval()
            text = self._text(mode_call.receiver)
            for site in self._sites(mode_call, function, text, 0):
                if site.call in reported:
                    continue
                loop = self._training_loop(site.call)
                if loop is None or not self._is_trained(site.receiver) or self._restored(loop, site.receiver):
                    continue
                reported.add(site.call)
                self._report(site, loop, mode_call)

    def _line(self, node: cst.CSTNode) -> int:
        """The line ``node`` starts on (from the file's shared positions)."""
        return self.facts.positions[node].start.line

    # -- facts -----------------------------------------------------------------------

    def _trained_models(self) -> Set[str]:
        """Spellings of the models being trained: put in train mode somewhere, or whose
        ``.parameters()`` go to an optimizer."""
        code = self.context.module.code_for_node
        found = {self._text(mc.receiver) for _, mc in self._restorers}
        for call in self._facts:
            if self.facts.values.kind(call) is not ValueKind.OPTIMIZER or self.names.call_name(call) is None:
                continue
            for arg in call.args:
                for node in walk_body(arg.value):
                    if isinstance(node, cst.Call) and _method(node) in ("parameters", "named_parameters"):
                        assert isinstance(node.func, cst.Attribute)
                        found.add(code(node.func.value))
        return found

    def _text(self, expr: cst.BaseExpression) -> str:
        """The module's spelling, through the methods that return it (``m.to(device)``)."""
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _RETURN_SELF:
            expr = expr.func.value
        return self.context.module.code_for_node(expr)

    def _is_trained(self, receiver: str) -> bool:
        return any(receiver == t or receiver.startswith(t + ".") for t in self._trained)

    def _sites(self, mode_call: ModeCall, function: FunctionNode, text: str, depth: int) -> Iterator[_Site]:
        """The eval call, and the calls of the file's functions that reach it, each with
        the model as the calling function spells it."""
        yield _Site(mode_call.call, function, text, direct=True)
        yield from self._callers(function, text, depth)

    def _callers(self, function: FunctionNode, text: str, depth: int) -> Iterator[_Site]:
        if depth >= _MAX_DEPTH or not isinstance(function, cst.FunctionDef):
            return
        for edge in self.facts.training.callers(function):
            receiver = self._mapped(edge.call, function, text)
            if receiver is None:
                continue
            yield _Site(edge.call, edge.caller, receiver, direct=False)
            yield from self._callers(edge.caller, receiver, depth + 1)

    def _mapped(self, call: cst.Call, callee: cst.FunctionDef, text: str) -> Optional[str]:
        """How the caller spells the model the callee calls ``text``."""
        head = text.split(".", 1)[0]
        params = [*callee.params.posonly_params, *callee.params.params, *callee.params.kwonly_params]
        names = [p.name.value for p in params]
        if head not in names:
            scope = self.facts.scopes.scope_of(callee)
            if scope is not None and scope.binds(head):
                return None  # the callee's own local (a model it builds itself), not the caller's
            return text  # a global
        code = self.context.module.code_for_node
        method = self._is_method(callee) and isinstance(call.func, cst.Attribute)
        index = names.index(head)
        if method and index == 0:
            assert isinstance(call.func, cst.Attribute)
            return code(call.func.value) + text[len(head):]  # ``self.model`` of the instance called
        position = index - (1 if method else 0)
        for number, arg in enumerate(call.args):
            if arg.star:
                return None
            if (arg.keyword is not None and arg.keyword.value == head) or (arg.keyword is None and number == position):
                return code(arg.value) + text[len(head):]
        return None

    def _is_method(self, function: cst.FunctionDef) -> bool:
        return isinstance(self._parents.get(self._parents.get(function, function)), cst.ClassDef)

    def _training_loop(self, call: cst.Call) -> Optional[LoopFacts]:
        """The innermost training loop around ``call`` in its function."""
        fact = self._facts.get(call)
        if fact is None:
            return None
        for node in reversed(fact.loops):
            loop = self._loops.get(node)
            if loop is not None and self.facts.training.is_training_loop(loop):
                return loop
        return None

    def _restored(self, loop: LoopFacts, receiver: str) -> bool:
        """A ``train()`` of the model (or of a module holding it) in the loop, or in a
        function of the file the loop calls (any parameter counts: it may be the model)."""
        reachable = self._reachable(loop)
        for function, mode_call in self._restorers:
            fact = self._facts.get(mode_call.call)
            inside = fact is not None and loop.node in fact.loops
            if not (inside or function in reachable):
                continue
            text = self._text(mode_call.receiver)
            if receiver == text or receiver.startswith(text + "."):
                return True
            if function in reachable and self._is_parameter(mode_call.receiver):
                return True
        return False

    def _reachable(self, loop: LoopFacts) -> Set[FunctionNode]:
        found: Set[FunctionNode] = set()
        stack = [edge.callee for edge in loop.local_calls]
        while stack:
            function = stack.pop()
            if function in found:
                continue
            found.add(function)
            facts = self.facts.training.functions.get(function)
            if facts is not None:
                stack.extend(edge.callee for edge in facts.local_calls)
        return found

    def _is_parameter(self, expr: cst.BaseExpression) -> bool:
        while isinstance(expr, cst.Attribute):
            expr = expr.value
        return isinstance(expr, cst.Name) and any(
            b.kind is BindingKind.PARAMETER for b in self.facts.scopes.resolve(expr)
        )

    # -- the report and the fix ------------------------------------------------------

    def _report(self, site: _Site, loop: LoopFacts, mode_call: ModeCall) -> None:
        line = self.cite_line(self._line(loop.node))
        if site.direct:
            message = (f"`{site.receiver}` is put in eval mode inside the training loop on {line} and nothing "
                       f"in the loop calls `{site.receiver}.train()` before the next backward: dropout and "
                       "BatchNorm stay in eval mode for the rest of training")
        else:
            message = (f"this call puts `{site.receiver}` in eval mode ({self.cite_line(self._line(mode_call.call))}) "
                       f"inside the training loop on {line}, and nothing in the loop calls "
                       f"`{site.receiver}.train()` before the next backward")
        self.report(site.call, message, fix=self._fix(site, loop), statement=self._statement(site.call))

    def _statement(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        parent = self._parents.get(node)
        while parent is not None and not isinstance(parent, cst.SimpleStatementLine):
            parent = self._parents.get(parent)
        return parent

    def _anchor(self, call: cst.Call, loop: LoopFacts) -> Optional[Tuple[cst.IndentedBlock, cst.BaseStatement]]:
        """The statement holding ``call`` in a block of ``loop``, a loop nested in it
        counting as one statement."""
        node: cst.CSTNode = call
        while True:
            parent = self._parents.get(node)
            if parent is None or isinstance(parent, cst.SimpleStatementSuite):
                return None
            if isinstance(parent, cst.IndentedBlock) and isinstance(node, cst.BaseStatement):
                owner = self._parents.get(parent)
                if owner is not loop.node and isinstance(owner, (cst.For, cst.While)):
                    node = owner
                    continue
                return parent, node
            node = parent

    def _fix(self, site: _Site, loop: LoopFacts) -> Optional[FixRequest]:
        anchor = self._anchor(site.call, loop)
        if anchor is None:
            return None
        block, statement = anchor
        body = list(block.body)
        index = next(i for i, s in enumerate(body) if s is statement)
        new = parse_statement(f"{site.receiver}.train()\n", self.context.module)
        if site.direct:
            later = body[index + 1:]
            trains = next((s for s in later if self._trains(s)), None)
            if trains is not None:
                return self._insert(StatementSite(block, trains), new, after=False)
            last = body[-1]
            if any(isinstance(node, _LEAVES) for node in walk_body(last)):
                return None
            return self._insert(StatementSite(block, last), new, after=True)
        return self._insert(StatementSite(block, statement), new, after=True)

    def _insert(self, site: StatementSite, new: cst.BaseStatement, *, after: bool) -> FixRequest:
        replacement = insert_statements(site, (new,), after=after)
        return self.replace(replacement.node, replacement.new_node, Applicability.UNSAFE,
                            "Insert a `.train()` call after the evaluation")

    def _trains(self, statement: cst.CSTNode) -> bool:
        """The statement runs a backward pass, directly or through the file's functions."""
        training = self.facts.training
        for node in walk_body(statement):
            if not isinstance(node, cst.Call):
                continue
            if _method(node) == "backward":
                return True
            for facts in training.functions.values():
                for edge in facts.local_calls:
                    if edge.call is node and training.reaches_backward(edge.callee):
                        return True
        return False


def _method(call: cst.Call) -> Optional[str]:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


__all__: Sequence[str] = ("TrainModeNotRestored",)
