"""Training facts: where gradients are off, what is put in eval mode, where
backward and optimizer steps run, which loops train, and who calls whom.

Gathered in one walk of the module.  Facts are per function (the module body
counts as one, keyed by the ``Module`` node) and per loop.  Calls to the
file's own functions are resolved through scopes (``evaluate(...)``) and
through the enclosing class (``self.evaluate(...)``), giving an intra-file
call graph that says, for each local function, whether any call of it sits
in a grad-disabled region, and whether it reaches ``backward()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple, Union, cast

import libcst as cst

from torchlint.data.apidata import loader_classes
from torchlint.analysis.gradmode import GRAD_CONTEXTS, GradMode, grad_mode_of
from torchlint.analysis.summaries import BACKWARD
from torchlint.analysis.scopes import Binding, BindingKind, ScopeKind, Scopes
from torchlint.analysis.values import Value, ValueKind, Values, literal_bool
from torchlint.analysis.names import ImportTable
from torchlint.source.tree import children, dotted

if TYPE_CHECKING:
    from torchlint.analysis.callees import Callees
    from torchlint.analysis.flow import Flow

_PARALLEL_WRAPPERS = frozenset({
    "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.DistributedDataParallel",
    "torch.distributed.fsdp.FullyShardedDataParallel",
})

_MODULE_MOVES = frozenset({"cuda", "cpu", "to", "half", "float", "double", "bfloat16", "to_empty"})
"""Methods of a module that return the module itself (moved or cast)."""

FunctionNode = Union[cst.FunctionDef, cst.Module]
LoopNode = Union[cst.For, cst.While]


def grad_mode(expr: cst.BaseExpression, names: ImportTable) -> Optional[GradMode]:
    """The grad mode a context manager or decorator expression sets
    (``torch.no_grad()``, ``@torch.inference_mode``, ``set_grad_enabled(False)``),
    or None (not one, or it depends on a run-time value)."""
    called = isinstance(expr, cst.Call)
    target = expr.func if isinstance(expr, cst.Call) else expr
    first = literal_bool(expr.args[0].value) if isinstance(expr, cst.Call) and expr.args else None
    return grad_mode_of(names.qualified_name(target), called, first)


_AUTOGRAD_GRAD = frozenset({"torch.autograd.grad"})
_AUTOGRAD_BACKWARD = frozenset({"torch.autograd.backward"})


@dataclass(frozen=True)
class GradRegion:
    """A ``with`` block or a decorated function that sets the grad mode."""

    node: Union[cst.With, cst.FunctionDef]
    mode: GradMode
    qualified: str


@dataclass(frozen=True)
class ModeCall:
    """``x.eval()`` (``train=False``) or ``x.train(...)``, and what ``x`` is."""

    call: cst.Call
    receiver: cst.BaseExpression
    train: bool
    value: Optional[Value]


@dataclass(frozen=True)
class CallFact:
    """A call and where it stands."""

    call: cst.Call
    grad_disabled: bool
    loops: Tuple[LoopNode, ...]
    elsewhere: bool = False
    """A backward that another module's function runs (known from the
    project's summaries, not written here or in a library wrapper)."""


@dataclass(frozen=True)
class LocalCall:
    """A call of one of the file's functions (an edge of the call graph)."""

    call: cst.Call
    caller: FunctionNode
    callee: cst.FunctionDef
    grad_disabled: bool


@dataclass
class LoopFacts:
    """One ``for``/``while`` loop."""

    node: LoopNode
    function: FunctionNode
    parent: Optional["LoopFacts"]
    over_dataloader: bool = False
    backward: List[CallFact] = field(default_factory=list)
    local_calls: List[LocalCall] = field(default_factory=list)
    children: List["LoopFacts"] = field(default_factory=list)
    training_calls: List[CallFact] = field(default_factory=list)
    """Calls of another module's function that runs a training loop itself."""


@dataclass
class FunctionFacts:
    """One function (or the module body)."""

    node: FunctionNode
    decorated_mode: Optional[GradMode] = None
    regions: List[GradRegion] = field(default_factory=list)
    mode_calls: List[ModeCall] = field(default_factory=list)
    backward: List[CallFact] = field(default_factory=list)
    autograd_grad: List[CallFact] = field(default_factory=list)
    optimizer_steps: List[CallFact] = field(default_factory=list)
    setup_calls: List[CallFact] = field(default_factory=list)
    """Calls that set a run up: an optimizer built, a model wrapped for data
    parallelism, or whatever built an object this function then ``.step()``s."""
    scaler_steps: List[CallFact] = field(default_factory=list)
    grad_reads: List[cst.Attribute] = field(default_factory=list)
    loops: List[LoopFacts] = field(default_factory=list)
    local_calls: List[LocalCall] = field(default_factory=list)
    calls: List[CallFact] = field(default_factory=list)
    training_calls: List[CallFact] = field(default_factory=list)
    """Calls of another module's function (or a library's) that runs a whole
    training loop (``train_one_epoch(model, loader, optimizer)``)."""

    @property
    def computes_gradients(self) -> bool:
        """Calls backward (itself, or through a library wrapper) or
        autograd.grad, or reads ``.grad`` itself."""
        return any(not fact.elsewhere for fact in self.backward) or bool(self.autograd_grad or self.grad_reads)


class Training:
    """Training facts of one module.

    ``lightning_module`` says whether a class of the file is a LightningModule:
    Lightning runs its evaluation hooks (``validation_step``, ``test_step``,
    ``predict_step``, ``on_validation_*``...) with gradients off, so those
    methods are grad-disabled functions here, and its ``manual_backward(loss)``
    is a backward pass.
    """

    def __init__(self, module: cst.Module, scopes: Scopes, names: ImportTable, values: Values,
                 lightning_module: Callable[[cst.ClassDef], bool] = lambda node: False,
                 callees: "Optional[Callable[[], Callees]]" = None,
                 flow: "Optional[Callable[[], Flow]]" = None) -> None:
        self._scopes = scopes
        self._flow = flow
        """Which bindings reach a read: ``train_loader = train_loader(ds)``
        calls the function the name held before the assignment."""
        self._names = names
        self._values = values
        self._lightning_module = lightning_module
        self._classes: List[Tuple[cst.ClassDef, bool]] = []
        self._hooks_without_grad: Optional[FrozenSet[str]] = None
        self._callees = callees
        """What calls of library wrappers and of the project's other modules
        run (``loss_scaler(loss, optimizer)`` calls backward)."""
        self.functions: Dict[FunctionNode, FunctionFacts] = {}
        self._disabled: Set[cst.CSTNode] = set()
        """Calls, and simple statements (``total += loss``), made with gradients off."""
        self._walker_function: List[FunctionFacts] = []
        self._loops: List[LoopFacts] = []
        self._grad: List[GradMode] = []
        self._walker_function.append(self._enter_function(module, None))
        for statement in module.body:
            self._walk(statement)
        self._callers: Dict[cst.FunctionDef, List[LocalCall]] = {}
        for facts in self.functions.values():
            for edge in facts.local_calls:
                self._callers.setdefault(edge.callee, []).append(edge)
        self._reach: Dict[FunctionNode, bool] = {}
        self._reach_here: Dict[FunctionNode, bool] = {}
        for facts in list(self.functions.values()):
            for loop in facts.loops:
                if not loop.over_dataloader and isinstance(loop.node, cst.For):
                    loop.over_dataloader = self._parameter_loader(loop.node.iter)
        self._steps: Optional[Dict[cst.Call, Tuple[FunctionFacts, Optional[LoopNode]]]] = None

    # -- questions ------------------------------------------------------------------

    def function(self, node: FunctionNode) -> FunctionFacts:
        """The facts of a function (or of the module body)."""
        return self.functions[node]

    def local_function(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        """The file's function a call invokes (``f(...)`` or ``self.f(...)``), if known."""
        return self._local_function(call)

    def model_alias(self, name: cst.Name) -> Optional[str]:
        """The dotted text of the module every binding of ``name`` holds when
        each is that module itself, moved or cast (``model.cuda()``,
        ``model.to(device)``), or wrapped for data parallelism
        (``nn.DataParallel(model, dim=1).cuda()``): a call of ``name`` runs
        that module's forward.  None when any binding is something else."""
        bindings = self._scopes.resolve(name)
        found: Optional[str] = None
        for binding in bindings:
            if binding.kind is not BindingKind.ASSIGN or binding.value is None or binding.path:
                return None
            root = self._unwrapped(binding.value)
            text = dotted(root) if root is not None else None
            if text is None or text == name.value or (found is not None and text != found):
                return None
            found = text
        return found

    def _unwrapped(self, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """``expr`` without moves, casts and data-parallel wrappers around it."""
        for _ in range(8):
            if not isinstance(expr, cst.Call):
                return expr
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in _MODULE_MOVES:
                expr = func.value
            elif self._names.call_name(expr) in _PARALLEL_WRAPPERS and expr.args and expr.args[0].keyword is None \
                    and not expr.args[0].star:
                expr = expr.args[0].value
            else:
                return None
        return None

    def callers(self, function: cst.FunctionDef) -> Tuple[LocalCall, ...]:
        """Calls of ``function`` inside this file."""
        return tuple(self._callers.get(function, ()))

    def parameter_arguments(
        self, binding: Binding, extra_calls: Sequence[cst.Call] = (),
    ) -> Optional[List[cst.BaseExpression]]:
        """What the file's calls of a function (and ``extra_calls``) pass for
        its parameter ``binding``; None when ``binding`` is not a parameter
        of one of the file's functions.  A call that certainly passes nothing
        for it (no ``*args`` or ``**kwargs`` there) gives the parameter's
        default (``train(epochs)`` of ``def train(epochs, device="cuda")``)."""
        scope = binding.scope
        function = scope.node if scope is not None else None
        if (
            binding.kind is not BindingKind.PARAMETER or scope is None
            or not isinstance(function, cst.FunctionDef) or not isinstance(binding.node, cst.Param)
        ):
            return None
        positional = [*function.params.posonly_params, *function.params.params]
        index = next((i for i, p in enumerate(positional) if p is binding.node), None)
        method = scope.parent is not None and scope.parent.kind is ScopeKind.CLASS
        calls = [edge.call for edge in self.callers(function)] + list(extra_calls)
        found: List[cst.BaseExpression] = []
        for call in calls:
            passed = argument_for(call, binding.name, index, method)
            if passed is None and binding.node.default is not None and not any(arg.star for arg in call.args):
                passed = binding.node.default
            if passed is not None:
                found.append(passed)
        return found

    def grad_disabled(self, node: Union[cst.Call, cst.BaseSmallStatement]) -> bool:
        """Whether ``node`` (a call, or a simple statement such as an
        assignment) runs in a grad-disabled ``with`` block or function: the
        innermost grad-mode context around it, within its function, turns
        gradients off (the function's decorator, or Lightning's evaluation
        hooks, count as its outermost one)."""
        return node in self._disabled

    def reaches_backward(self, function: FunctionNode, elsewhere: bool = True) -> bool:
        """Whether ``function`` calls backward/autograd.grad, directly or
        through the file's functions it calls (and, with ``elsewhere``,
        through other modules' functions whose summaries say they do)."""
        return self._reaches(function, set(), elsewhere)

    def _reaches(self, function: FunctionNode, seen: Set[FunctionNode], elsewhere: bool) -> bool:
        memo = self._reach if elsewhere else self._reach_here
        if function in memo:
            return memo[function]
        if function in seen:
            return False
        seen.add(function)
        facts = self.functions.get(function)
        found = facts is not None and (
            any(elsewhere or not fact.elsewhere for fact in facts.backward)
            or bool(facts.autograd_grad or (elsewhere and facts.training_calls))
            or any(self._reaches(edge.callee, seen, elsewhere) for edge in facts.local_calls)
        )
        memo[function] = found
        return found

    def is_training_loop(self, loop: LoopFacts) -> bool:
        """A loop that calls backward, directly or via the file's functions
        (or another module's function that trains)."""
        if loop.backward or loop.training_calls:
            return True
        if any(self.reaches_backward(edge.callee) for edge in loop.local_calls):
            return True
        return any(self.is_training_loop(child) for child in loop.children)

    def is_epoch_loop(self, loop: LoopFacts) -> bool:
        """A loop that contains a training loop (or calls a function with one)."""
        if loop.training_calls or any(self.is_training_loop(child) for child in loop.children):
            return True
        for edge in loop.local_calls:
            callee = self.functions.get(edge.callee)
            if callee is not None and any(self.is_training_loop(inner) for inner in callee.loops):
                return True
        return False

    def in_training_step(self, call: cst.Call) -> bool:
        """Whether ``call`` runs in the same step as a ``backward()``: the
        innermost loop around it (or, outside loops, its function) calls
        backward or ``autograd.grad`` itself, not only in a nested loop or in
        another function (an epoch loop that trains through a helper and then
        evaluates is not one step)."""
        if self._steps is None:
            self._steps = {}
            for facts in self.functions.values():
                for fact in facts.calls:
                    self._steps[fact.call] = (facts, fact.loops[-1] if fact.loops else None)
        found = self._steps.get(call)
        if found is None:
            return False
        facts, loop = found
        return any(
            (b.loops[-1] if b.loops else None) is loop for b in (*facts.backward, *facts.autograd_grad)
        )

    def called_only_under_no_grad(self, function: cst.FunctionDef) -> bool:
        """Every call of ``function`` in this file is in a grad-disabled region
        (False when nothing here calls it)."""
        edges = self.callers(function)
        return bool(edges) and all(edge.grad_disabled for edge in edges)

    def called_under_no_grad(self, function: cst.FunctionDef) -> bool:
        """Some call of ``function`` in this file is in a grad-disabled region."""
        return any(edge.grad_disabled for edge in self.callers(function))

    # -- the walk -------------------------------------------------------------------

    @property
    def _current(self) -> FunctionFacts:
        return self._walker_function[-1]

    def _enter_function(self, node: FunctionNode, mode: Optional[GradMode]) -> FunctionFacts:
        facts = FunctionFacts(node, decorated_mode=mode)
        self.functions[node] = facts
        return facts

    def _grad_mode(self, expr: cst.BaseExpression) -> Optional[Tuple[GradMode, str]]:
        mode = grad_mode(expr, self._names)
        if mode is None:
            return None
        target = expr.func if isinstance(expr, cst.Call) else expr
        return mode, self._names.qualified_name(target) or ""

    def _walk(self, node: cst.CSTNode) -> None:
        # Exact types (libcst's concrete nodes have no subclasses): an
        # ``isinstance`` against libcst's ABC-based classes costs a Python-level
        # check, and this runs on every node of every module.
        kind = type(node)
        if kind is cst.FunctionDef:
            self._function(cast(cst.FunctionDef, node))
            return
        if kind is cst.ClassDef:
            definition = cast(cst.ClassDef, node)
            self._classes.append((definition, self._lightning_module(definition)))
            try:
                for child in children(definition):
                    self._walk(child)
            finally:
                self._classes.pop()
            return
        if kind is cst.With:
            self._with(cast(cst.With, node))
            return
        if kind is cst.For or kind is cst.While:
            self._loop(cast(Union[cst.For, cst.While], node))
            return
        if kind is cst.SimpleStatementLine or kind is cst.SimpleStatementSuite:
            line = cast(Union[cst.SimpleStatementLine, cst.SimpleStatementSuite], node)
            if self._grad and self._grad[-1] is GradMode.DISABLED:
                self._disabled.update(line.body)
            for child in children(node):
                self._walk(child)
            for small in line.body:  # `torch.set_grad_enabled(False)` as a statement: from here on
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                    setting = small.value
                    found = self._grad_mode(setting)
                    if found is not None and found[1].endswith("set_grad_enabled"):
                        self._grad.append(found[0])
            return
        elif kind is cst.Call:
            self._call(cast(cst.Call, node))
        elif kind is cst.Attribute and cast(cst.Attribute, node).attr.value == "grad":
            self._current.grad_reads.append(cast(cst.Attribute, node))
        for child in children(node):
            self._walk(child)

    def _function(self, node: cst.FunctionDef) -> None:
        for decorator in node.decorators:
            self._walk(decorator.decorator)
        mode: Optional[GradMode] = None
        for decorator in node.decorators:
            found = self._grad_mode(decorator.decorator)
            if found is not None:
                mode = found[0]
        if mode is None and self._lightning_hook_without_grad(node):
            mode = GradMode.DISABLED
        facts = self._enter_function(node, mode)
        if mode is not None:
            facts.regions.append(GradRegion(node, mode, ""))
        saved_loops, saved_grad = self._loops, self._grad
        self._loops, self._grad = [], [mode] if mode is not None else []
        self._walker_function.append(facts)
        try:
            self._walk(node.body)
        finally:
            self._walker_function.pop()
            self._loops, self._grad = saved_loops, saved_grad

    def _with(self, node: cst.With) -> None:
        depth = len(self._grad)
        for item in node.items:
            self._walk(item.item)
            found = self._grad_mode(item.item)
            if found is not None:
                self._current.regions.append(GradRegion(node, found[0], found[1]))
                self._grad.append(found[0])
        try:
            self._walk(node.body)
        finally:
            del self._grad[depth:]

    def _loop(self, node: LoopNode) -> None:
        parent = self._loops[-1] if self._loops else None
        facts = LoopFacts(node, self._current.node, parent)
        if parent is not None:
            parent.children.append(facts)
        self._current.loops.append(facts)
        if isinstance(node, cst.For):
            self._walk(node.iter)
            facts.over_dataloader = self._iterates_dataloader(node.iter)
            self._walk(node.target)
        else:
            self._walk(node.test)
        self._loops.append(facts)
        try:
            self._walk(node.body)
        finally:
            self._loops.pop()
        if node.orelse is not None:
            self._walk(node.orelse)

    def _iterates_dataloader(self, expr: cst.BaseExpression) -> bool:
        return any(self._is_loader(level) for level in _drawn_from(expr))

    def _is_loader(self, expr: cst.BaseExpression) -> bool:
        if self._values.kind(expr) is ValueKind.DATALOADER:
            return True
        if isinstance(expr, cst.Call):
            return self._names.call_name(expr) in loader_classes()
        if isinstance(expr, cst.Name):
            bindings = self._scopes.resolve(expr)
            return bool(bindings) and all(
                isinstance(b.value, cst.Call) and self._names.call_name(b.value) in loader_classes()
                for b in bindings
            )
        return False

    def _parameter_loader(self, expr: cst.BaseExpression) -> bool:
        """A loop over a parameter that every call of the function in this file
        fills with a data loader (at least one call passes it)."""
        for level in _drawn_from(expr):
            if not isinstance(level, cst.Name):
                continue
            bindings = self._scopes.resolve(level)
            if len(bindings) != 1:
                continue
            passed = self.parameter_arguments(bindings[0])
            if passed and all(self._is_loader(value) for value in passed):
                return True
        return False

    @property
    def _disabled_here(self) -> bool:
        return bool(self._grad) and self._grad[-1] is GradMode.DISABLED

    def _call(self, call: cst.Call) -> None:
        disabled = self._disabled_here
        if disabled:
            self._disabled.add(call)
        fact = CallFact(call, disabled, tuple(loop.node for loop in self._loops))
        current = self._current
        current.calls.append(fact)
        qualified = self._names.call_name(call)
        func = call.func
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        if qualified in _AUTOGRAD_GRAD:
            current.autograd_grad.append(fact)
        elif qualified in _AUTOGRAD_BACKWARD or (method == "backward" and qualified is None) or (
            method == "manual_backward" and qualified is None and any(lightning for _, lightning in self._classes)
        ):
            current.backward.append(fact)
            for loop in self._loops:
                loop.backward.append(fact)
        elif method in ("eval", "train") and qualified is None and isinstance(func, cst.Attribute):
            train = method == "train" and not _false_argument(call)
            current.mode_calls.append(ModeCall(call, func.value, train, self._values.of(func.value)))
        elif method == "step" and isinstance(func, cst.Attribute):
            receiver = self._values.kind(func.value)
            if receiver is ValueKind.OPTIMIZER:
                current.optimizer_steps.append(fact)
            elif receiver is ValueKind.GRAD_SCALER:
                current.scaler_steps.append(fact)
            self._built_here(current, func.value)
        elif self._callees is not None and self._local_function(call) is None:  # (the file's own: its call graph)
            runs, loop_runs, library = self._callees().runs(call)
            if BACKWARD in runs:  # a wrapper's or another module's step: backward in this step
                elsewhere = CallFact(call, disabled, fact.loops, elsewhere=not library)
                current.backward.append(elsewhere)
                for loop in self._loops:
                    loop.backward.append(elsewhere)
            elif BACKWARD in loop_runs:  # a whole training loop, in another module
                current.training_calls.append(fact)
                for loop in self._loops:
                    loop.training_calls.append(fact)
        if qualified is not None and (
            qualified in _PARALLEL_WRAPPERS
            or (qualified.startswith("torch.optim.") and self._values.kind(call) is ValueKind.OPTIMIZER)
        ):
            current.setup_calls.append(fact)
        callee = self._local_function(call)
        if callee is not None:
            edge = LocalCall(call, current.node, callee, disabled)
            current.local_calls.append(edge)
            for loop in self._loops:
                loop.local_calls.append(edge)

    def _lightning_hook_without_grad(self, node: cst.FunctionDef) -> bool:
        """A method of a LightningModule that Lightning runs with gradients off."""
        if not self._classes:
            return False
        owner, lightning = self._classes[-1]
        if not lightning or not any(statement is node for statement in owner.body.body):
            return False
        if self._hooks_without_grad is None:
            from torchlint.analysis.frameworks import hooks_without_grad

            self._hooks_without_grad = hooks_without_grad()
        return node.name.value in self._hooks_without_grad

    def _built_here(self, current: FunctionFacts, receiver: cst.BaseExpression) -> None:
        """``x.step()`` where every binding of ``x`` is this function's own, made
        by a call (``opt = Adam(...)``, ``model, opt = setup(...)``): the
        function builds what it steps, and the call that built it is set-up."""
        if not isinstance(receiver, cst.Name):
            return
        made: Set[int] = set()
        for binding in self._scopes.resolve(receiver):
            built = binding.value if binding.value is not None else binding.source
            if (
                binding.kind is not BindingKind.ASSIGN or not isinstance(built, cst.Call)
                or binding.scope is None or binding.scope.node is not current.node
            ):
                return
            made.add(id(built))
        made -= {id(f.call) for f in current.setup_calls}
        current.setup_calls.extend(f for f in current.calls if id(f.call) in made)

    def _local_function(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        """The file's function a call invokes: ``f(...)``, ``self.f(...)``, or
        a method of one of the file's classes on an instance the call's
        scope builds once (``trainer = Trainer(...)`` then ``trainer.fit()``,
        or ``Trainer(...).fit()``), the method defined in that class itself."""
        func = call.func
        if isinstance(func, cst.Name):
            bindings = self._scopes.resolve(func)
            if len(bindings) > 1 and self._flow is not None:
                bindings = self._flow().bindings_at(func)  # the function the name holds at this call
            if len(bindings) == 1 and bindings[0].kind is BindingKind.FUNCTION:
                node = bindings[0].node
                return node if isinstance(node, cst.FunctionDef) else None
            return None
        if not isinstance(func, cst.Attribute):
            return None
        receiver = func.value
        if isinstance(receiver, cst.Call):
            return self._method_of_built(receiver, func.attr.value)
        if not isinstance(receiver, cst.Name):
            return None
        bindings = self._scopes.resolve(receiver)
        if len(bindings) != 1:
            return None
        if bindings[0].kind is BindingKind.ASSIGN and isinstance(bindings[0].value, cst.Call) and bindings[0].path == ():
            return self._method_of_built(bindings[0].value, func.attr.value)
        if bindings[0].kind is not BindingKind.PARAMETER:
            return None
        method_scope = bindings[0].scope
        class_scope = method_scope.parent if method_scope is not None else None
        if class_scope is None or class_scope.kind is not ScopeKind.CLASS:
            return None
        found = class_scope.bindings.get(func.attr.value, [])
        if len(found) == 1 and isinstance(found[0].node, cst.FunctionDef):
            return found[0].node
        return None

    def _method_of_built(self, construction: cst.Call, method: str) -> Optional[cst.FunctionDef]:
        """``method`` as the file's class that ``construction`` builds
        (``Trainer(...)``) defines it, when that is the file's only
        construction of the class (its one use by name): what the instance
        keeps is then what this call passed (the file's facts join ``self``
        attributes over every construction of a class)."""
        if not isinstance(construction.func, cst.Name):
            return None
        bindings = self._scopes.resolve(construction.func)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.CLASS:
            return None
        owner = bindings[0].scope
        if owner is None or self._scopes.references(owner, bindings[0].name) != (construction.func,):
            return None  # the class is named elsewhere too: built (or used) more than once
        scope = self._scopes.scope_of(bindings[0].node)
        if scope is None or scope.kind is not ScopeKind.CLASS:
            return None
        found = scope.bindings.get(method, [])
        if len(found) == 1 and isinstance(found[0].node, cst.FunctionDef):
            return found[0].node
        return None


def _drawn_from(expr: cst.BaseExpression) -> List[cst.BaseExpression]:
    """What a loop may draw from: the iterable itself, and through
    ``enumerate(loader)``, ``tqdm(loader)`` or ``zip(loader, ...)`` its first
    argument, three calls deep."""
    levels = [expr]
    for _ in range(2):
        if not (isinstance(expr, cst.Call) and expr.args and expr.args[0].keyword is None):
            break
        expr = expr.args[0].value
        levels.append(expr)
    return levels


def argument_for(call: cst.Call, name: str, index: Optional[int], method: bool) -> Optional[cst.BaseExpression]:
    """The argument ``call`` passes for parameter ``name`` at position ``index``
    (``method``: the call binds ``self`` itself, as ``self.f(a)`` and ``Cls(a)`` do)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    if index is None:
        return None
    if method:
        index -= 1
    positional = [arg for arg in call.args if arg.keyword is None]
    if any(arg.star for arg in positional[: index + 1]) or not 0 <= index < len(positional):
        return None
    return positional[index].value


def _false_argument(call: cst.Call) -> bool:
    """``train(False)`` or ``train(mode=False)``."""
    return any(literal_bool(arg.value) is False for arg in call.args)


__all__: Sequence[str] = (
    "grad_mode", "GRAD_CONTEXTS", "CallFact", "FunctionFacts", "GradMode", "GradRegion", "LocalCall", "LoopFacts", "ModeCall", "Training",
)
