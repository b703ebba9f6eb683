"""TL502 sampler-without-set-epoch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, List, Mapping, Optional, Set, Tuple, Union

import libcst as cst

from torchlint.analysis import Analysis
from torchlint.analysis.callees import arguments
from torchlint.analysis.queries import summaries
from torchlint.analysis.scopes import BindingKind
from torchlint.analysis.summaries import BACKWARD, building_words
from torchlint.analysis.training import CallFact, FunctionNode, LoopNode
from torchlint.ruleapi.fixes import StatementSite, insert_statements, parse_statement
from torchlint.model import Applicability
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, FixRequest, FixAvailability, OptionValue, Rule, TorchRange, TorchVersion
from torchlint.ruleapi.verification import Contract, Probe, VerificationSpec
from torchlint.analysis.values import literal_bool

_DISTRIBUTED = frozenset({
    "torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler",
})
_LOADER = "torch.utils.data.DataLoader"
_BATCH_SAMPLERS = frozenset({"torch.utils.data.BatchSampler", "torch.utils.data.sampler.BatchSampler"})
_MAX_DEPTH = 4
_Code = Callable[[cst.CSTNode], str]


@dataclass(frozen=True)
class _Use:
    """A training loop iterating the loader, and the loop around it that repeats it (the epoch loop)."""

    loop: Union[LoopNode, cst.BaseExpression]
    """The loop, or a call of another module's function that loops over the loader."""
    epoch: Union[LoopNode, cst.Call]
    epoch_function: FunctionNode
    loader_text: str  # how the epoch loop's function spells the loader
    keeper: Optional[str] = None
    """The project class that keeps the loader and runs the epoch loop itself
    (``Solver(cfg, loader)``), or the function that runs it over the loader
    it is given (``train(model, loader, epochs)``), when that is how it is iterated."""
    constructed: bool = True
    """:attr:`keeper` is a class (built by the call), not a function."""


class SamplerWithoutSetEpoch(Rule):
    """## What it does
    Reports a `torch.utils.data.DistributedSampler` (without a literal
    `shuffle=False`) that a `DataLoader` of the same function draws from,
    when that loader is iterated by a training loop (a loop that calls
    `backward()`) which itself runs inside another loop, the epoch loop
    (directly, through a function of the file that gets the loader as an
    argument, or through another module's function that runs a training
    loop over it: `train_one_epoch(model, loader, optimizer)` once per
    epoch), and nothing in the file calls `set_epoch(...)` on the sampler,
    on `<loader>.sampler`, or on a sampler passed to a function.  A sampler
    may also come from a project function whose code returns a
    `DistributedSampler` for the arguments given
    (`make_sampler(dataset, distributed=True)`, where `make_sampler`
    returns one under `if distributed:`): what that function builds comes
    from its code (the project index's summaries), never from its name.
    A loader handed to the constructor of a project class (in any module:
    `Solver(model, optimizer, loader, epochs).run()`) whose `__init__` keeps
    it on `self` counts too, when a method of the class iterates it inside
    another loop of its own (or of a method that calls it) and that loop
    calls `backward()`, and no method of the class, nor any function they
    call, lives in a module that calls `set_epoch`: the class runs the epoch
    loop, so the report has no fix.  So does a loader handed to another
    module's function or method that runs the epoch loop over it itself
    (`engine.train(model, loader, optimizer, epochs)`, whose code iterates
    the parameter inside another loop of its own and calls `backward()`
    there), when neither its module nor the functions it calls call
    `set_epoch`.

    A loader built by a helper of the same file and returned (alone, in a
    tuple, unpacked by the caller: `loader, n = prepare_dataloaders(cfg)`)
    is followed to the loops of the file that iterate it; it is reported
    when one of them trains inside another loop, the file calls
    `set_epoch` nowhere, and the loader goes to no other code than the
    file's functions, `len` and wrappers such as `tqdm` (code that gets it
    may set the epoch).  Those findings get no fix.

    Not reported: a loader built by another module's helper and returned
    (the helper's owner handles the epoch), a loader built anew for each
    pass (in a loop, or by a function called in one), a sampler from a
    helper whose choice depends on a run-time value
    (`make_sampler(dataset, distributed=args.distributed)`), a loader
    iterated once or only for evaluation (an epoch loop of `range(1)` runs
    once), and a sampler with
    `shuffle=False`; nor a sampler handed to the loader through a `**kwargs`
    dict.

    ## Why is this bad?
    `DistributedSampler` shuffles with a generator seeded from `seed +
    epoch`, and the epoch only changes when `set_epoch` is called.  Without
    it every epoch visits the data in exactly the same order on every rank:
    the shuffling the sampler was asked for happens once, and the model
    sees the same batches in the same sequence each epoch, which can slow
    convergence and hurt generalisation without any error or warning.

    ## Example
    ```python
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, sampler=sampler, batch_size=64)
    for epoch in range(epochs):
        for x, y in loader:
            criterion(model(x), y).backward()
            optimizer.step()
    ```

    Use instead:
    ```python
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, sampler=sampler, batch_size=64)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            criterion(model(x), y).backward()
            optimizer.step()
    ```

    ## Fix safety
    The fix inserts `sampler.set_epoch(epoch)` (or
    `loader.sampler.set_epoch(epoch)` where the epoch loop sees only the
    loader) as the first statement of the epoch loop, when that loop is
    `for <name> in range(...)`; other loops get no fix.  It is unsafe
    because it changes training: from the second epoch on the data come in
    a different order, so losses and weights differ from the run before the
    fix (that is the point), and a resumed run's order now depends on the
    epoch it resumes from.

    ## Source guide
    *GPU Computing Guide* (Ohio Supercomputer Center) calls
    `sampler.set_epoch(epoch)` first thing in each epoch, commented
    "Shuffle differently each epoch"; *Chapter 16: GPU Acceleration &
    Distributed Training* (an online PyTorch training book) does the same
    ("Set epoch for sampler") before `model.train()`.
    """

    code = "TL502"
    name = "sampler-without-set-epoch"
    summary = "`DistributedSampler` never gets `set_epoch`: every epoch shuffles the same way"
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "unsafe: insert `sampler.set_epoch(epoch)` at the top of the epoch loop"
    torch_range = TorchRange(min=TorchVersion(1, 0), note="`DistributedSampler.set_epoch` as today since 1.0")
    trigger_words = ("DistributedSampler",)
    requires = frozenset({Analysis.TRAINING, Analysis.VALUES, Analysis.PROJECT})
    project_queries = (summaries(),)
    valid = (
        """
        from torch.utils.data import DataLoader, DistributedSampler
        sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, sampler=sampler)
        for epoch in range(10):
            sampler.set_epoch(epoch)
            for x in loader:
                model(x).sum().backward()
        """,
        """
        from torch.utils.data import DataLoader, DistributedSampler
        loader = DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=False))
        for epoch in range(10):
            for x in loader:
                model(x).sum().backward()
        """,
        """
        from torch.utils.data import DataLoader, DistributedSampler
        def build(dataset):
            return DataLoader(dataset, sampler=DistributedSampler(dataset))
        loader = build(dataset)
        for epoch in range(10):
            loader.sampler.set_epoch(epoch)
            for x in loader:
                model(x).sum().backward()
        """,
    )
    invalid = (
        Example(
            """
            from torch.utils.data import DataLoader, DistributedSampler
            def build(dataset):
                return DataLoader(dataset, sampler=DistributedSampler(dataset))
            loader = build(dataset)
            for epoch in range(10):
                for x in loader:
                    model(x).sum().backward()
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader, DistributedSampler
            sampler = DistributedSampler(dataset)
            loader = DataLoader(dataset, sampler=sampler)
            for epoch in range(10):
                for x in loader:
                    model(x).sum().backward()
            """,
            fixed="""
            from torch.utils.data import DataLoader, DistributedSampler
            sampler = DistributedSampler(dataset)
            loader = DataLoader(dataset, sampler=sampler)
            for epoch in range(10):
                sampler.set_epoch(epoch)
                for x in loader:
                    model(x).sum().backward()
            """,
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        comparison=".verify_compare:check",
        probes=(Probe("sampler-epochs", "verify_probe.py"),),
        replay="sampler-epochs",
        contract=Contract(
            level="intended change",
            promise=(
                "After the fix each epoch visits the data in a different order, on every rank; "
                "the first epoch's order is unchanged.  Nothing else changes."
            ),
            checks=(
                "observed (a probe): each DistributedSampler's epoch at every start of an iteration over it",
                "before the fix a sampler is iterated more than once at the same epoch (the same order)",
                "after the fix each iteration has an epoch of its own, the first one unchanged",
                "the original, with the probe setting each iteration's epoch to the fixed run's, gives the "
                "fixed run's outputs and printed text (identical on the CPU, close on CUDA): nothing but the "
                "order changed",
                "an original that never repeats an epoch must be equivalent to the fixed program",
            ),
            differences=("Losses and weights differ from the second epoch on, as intended.",),
        ),
    )

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """The class is named, or a project function that builds it."""
        if facts.mentions(("DistributedSampler",)):
            return facts.imports_torch
        project = facts.project.summaries if facts.project is not None else None
        return facts.mentions(building_words(project, _DISTRIBUTED))

    # -- the module ------------------------------------------------------------------

    def leave_Module(self, original_node: cst.Module) -> None:
        self._parents = self.facts.parents
        calls = self.facts.nodes_of(cst.Call)
        set_epoch = [call for call in calls if _method(call) == "set_epoch"]
        loaders = [call for call in calls if self.names.call_name(call) == _LOADER]
        for call in calls:
            if _shuffle_off(call):
                continue
            if self.names.call_name(call) in _DISTRIBUTED or self.facts.callees.builds(call) in _DISTRIBUTED:
                self._check(call, loaders, set_epoch)

    def _check(self, sampler: cst.Call, loaders: List[cst.Call], set_epoch: List[cst.Call]) -> None:
        code = self.context.module.code_for_node
        target = self._target(sampler)
        sampler_text = code(target) if target is not None else None
        function = self._function_of(sampler)
        for loader in loaders:
            if not self._draws_from(loader, sampler, sampler_text, function):
                continue
            loader_target = self._target(loader)
            if loader_target is None:
                continue
            loader_text = code(loader_target)
            loader_function = self._function_of(loader)
            if any(self._sets_epoch(call, sampler_text, function, loader_text, loader_function) for call in set_epoch):
                return
            use = next(
                (u for u in self._uses(loader_text, loader_function, 0, set()) if u.epoch is not u.loop
                 and not (isinstance(u.epoch, cst.For) and self.facts.loaders.single_pass(u.epoch))), None
            )  # (`for epoch in range(1):` runs its body once: no epoch to shuffle anew)
            if use is None:
                continue
            where = f" on {self.cite_line(self._line(use.loop))}" if use.keeper is None else (
                f" by the `{use.keeper}` built on {self.cite_line(self._line(use.epoch))}, whose methods never call "
                "`set_epoch`") if use.constructed else (
                f" by `{use.keeper}`, called on {self.cite_line(self._line(use.epoch))}, which runs the epoch loop "
                "and never calls `set_epoch`")
            self.report(
                sampler,
                f"this `DistributedSampler` never gets `set_epoch(epoch)` but its loader is iterated every "
                f"epoch{where}: each epoch shuffles the data in the same order",
                fix=self._fix(use, sampler_text, function) if self._certain(sampler, loader) else None,
                statement=_statement(sampler, self._parents),
            )
            return
        if not set_epoch:
            self._check_returned(sampler)

    def _check_returned(self, sampler: cst.Call) -> None:
        """A loader the file builds from the sampler and hands on through its
        functions' returns and unpackings (``loader, n = prepare(ds)``), which
        a training loop of the file iterates inside another loop.  Asked only
        when the file calls no ``set_epoch`` at all; quiet when the loader goes
        to other code (which may set the epoch).  No fix: the epoch loop is in
        another function than the sampler."""
        loaders = self.facts.loaders
        built = [loader for loader in loaders.constructors if self._given(loader, sampler)]
        if not built:
            return
        training = self.facts.training
        facts_of = {loop.node: loop for function in training.functions.values() for loop in function.loops}
        for loop in loaders.loops():
            chosen = [loader for loader in built if loader in loop.loaders and not loaders.rebuilt(loader)]
            facts = facts_of.get(loop.loop)
            if not chosen or not loop.repeated or facts is None or not training.is_training_loop(facts):
                continue
            if any(loaders.handed_out(loader) for loader in chosen):
                return
            self.report(
                sampler,
                f"this `DistributedSampler` never gets `set_epoch(epoch)` but its loader is iterated every "
                f"epoch on {self.cite_line(self._line(loop.loop))}: each epoch shuffles the data in the same order",
                statement=_statement(sampler, self._parents),
            )
            return

    def _given(self, loader: cst.Call, sampler: cst.Call) -> bool:
        """``DataLoader(..., sampler=S)`` (or ``batch_sampler=BatchSampler(S, ...)``)
        where S may hold what ``sampler`` builds, through the file's bindings."""
        loaders = self.facts.loaders
        for arg in loader.args:
            if arg.keyword is None or arg.keyword.value not in ("sampler", "batch_sampler"):
                continue
            for value in loaders.held(arg.value):
                if self.names.call_name(value) in _BATCH_SAMPLERS and value.args:
                    if sampler in loaders.held(value.args[0].value):
                        return True
                elif value is sampler:
                    return True
        return False

    def _line(self, node: cst.CSTNode) -> int:
        """The line ``node`` starts on (from the file's shared positions)."""
        return self.facts.positions[node].start.line

    # -- facts -----------------------------------------------------------------------

    def _target(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """The single name or attribute ``call``'s value is assigned to (through ``x if c else y``)."""
        node: cst.CSTNode = call
        parent = self._parents.get(node)
        while isinstance(parent, cst.IfExp):
            node, parent = parent, self._parents.get(parent)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
            if isinstance(target, (cst.Name, cst.Attribute)):
                return target
        if isinstance(parent, cst.AnnAssign) and isinstance(parent.target, (cst.Name, cst.Attribute)):
            return parent.target
        return None

    def _function_of(self, node: cst.CSTNode) -> FunctionNode:
        parent = self._parents.get(node)
        while parent is not None:
            if isinstance(parent, (cst.FunctionDef, cst.Module)):
                return parent
            parent = self._parents.get(parent)
        return self.context.module

    def _draws_from(
        self, loader: cst.Call, sampler: cst.Call, sampler_text: Optional[str], function: FunctionNode
    ) -> bool:
        """``DataLoader(..., sampler=S)`` or ``batch_sampler=BatchSampler(S, ...)``, S the sampler."""
        for arg in loader.args:
            if arg.keyword is None or arg.keyword.value not in ("sampler", "batch_sampler"):
                continue
            for value in _branches(arg.value):
                if isinstance(value, cst.Call) and self.names.call_name(value) in _BATCH_SAMPLERS and value.args:
                    value = value.args[0].value
                if value is sampler:
                    return True
                if sampler_text is not None and self.context.module.code_for_node(value) == sampler_text:
                    return self._function_of(loader) is function or sampler_text.startswith("self.")
        return False

    def _sets_epoch(
        self, call: cst.Call, sampler_text: Optional[str], sampler_function: FunctionNode,
        loader_text: str, loader_function: FunctionNode,
    ) -> bool:
        """``S.set_epoch(..)`` or ``L.sampler.set_epoch(..)`` where S and L can be this
        sampler and its loader: the same spelling in the function that built them (or
        ``self.`` attributes, or module-level names), or a parameter they are passed as."""
        func = call.func
        assert isinstance(func, cst.Attribute)
        receiver = func.value
        where = self._function_of(call)
        if sampler_text is not None and self._same(receiver, sampler_text, sampler_function, where):
            return True
        if isinstance(receiver, cst.Attribute) and receiver.attr.value == "sampler":
            return self._same(receiver.value, loader_text, loader_function, where)
        return self._is_parameter(receiver)

    def _same(self, expr: cst.BaseExpression, text: str, home: FunctionNode, where: FunctionNode) -> bool:
        """``expr`` spells ``text`` and can mean the value bound to it in ``home``."""
        if where is home or text.startswith("self.") or isinstance(home, cst.Module):
            return self.context.module.code_for_node(expr) == text or self._is_parameter(expr)
        # Another function: a parameter may receive them, whatever its name (the
        # same name as the caller's local included).
        return self._is_parameter(expr)

    def _is_parameter(self, expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Name) and any(
            b.kind is BindingKind.PARAMETER for b in self.facts.scopes.resolve(expr)
        )

    def _uses(self, text: str, function: FunctionNode, depth: int, seen: Set[Tuple[str, int]]) -> Iterator[_Use]:
        """Training loops iterating the loader spelled ``text`` in ``function`` (or in
        the file's functions it is passed to) that run inside an epoch loop."""
        key = (text, id(function))
        if depth > _MAX_DEPTH or key in seen:
            return
        seen.add(key)
        training = self.facts.training
        code = self.context.module.code_for_node
        for facts in training.functions.values():
            here = facts.node is function or text.startswith("self.") or (
                isinstance(function, cst.Module) and not self._binds_locally(facts.node, text)
            )
            if not here:
                continue
            for loop in facts.loops:
                if isinstance(loop.node, cst.For) and code(_iterated(loop.node.iter)) == text:
                    if not training.is_training_loop(loop):
                        continue
                    if loop.parent is not None:
                        yield _Use(loop.node, loop.parent.node, facts.node, text)
                    else:
                        yield from self._repeated(loop.node, facts.node, text)
            yield from self._handed(facts.node, facts.calls, text)
            yield from self._kept(facts.node, facts.calls, text)
            for edge in facts.local_calls:
                method = isinstance(self._parents.get(self._parents.get(edge.callee, edge.callee)), cst.ClassDef)
                for name in _parameters_given(edge.call, edge.callee, text, code, method):
                    for inner in self._uses(name, edge.callee, depth + 1, seen):
                        if inner.epoch is not inner.loop:
                            yield inner
                            continue
                        fact = next((c for c in facts.calls if c.call is edge.call), None)
                        if fact is not None and fact.loops:
                            yield _Use(inner.loop, fact.loops[-1], facts.node, text)

    def _handed(self, function: FunctionNode, calls: List[CallFact], text: str) -> Iterator[_Use]:
        """Calls that hand the loader spelled ``text`` to another module's
        function that runs a training loop over it (its summary: it iterates
        that parameter and calls backward in a loop)."""
        code = self.context.module.code_for_node
        callees = self.facts.callees
        for fact in calls:
            if self.facts.training.local_function(fact.call) is not None:
                continue
            if not any(code(argument) == text for argument in callees.iterated(fact.call)):
                continue
            if BACKWARD not in callees.runs(fact.call)[1]:
                continue  # it iterates the loader without training (an evaluation)
            if fact.loops:
                yield _Use(fact.call, fact.loops[-1], function, text)
            else:
                yield _Use(fact.call, fact.call, function, text)

    def _kept(self, function: FunctionNode, calls: List[CallFact], text: str) -> Iterator[_Use]:
        """Constructions of a project class (in any module) that keeps the
        loader spelled ``text`` on ``self`` and trains over it every epoch in
        its own methods, none of which (nor the functions they call) is in a
        module that calls ``set_epoch`` (its construction summary); and calls
        of another module's function or method that runs the epoch loop over
        the loader it is given, in a module that never calls ``set_epoch``
        (its summary's ``epochs``)."""
        code = self.context.module.code_for_node
        callees = self.facts.callees
        for fact in calls:
            target = callees.target(fact.call)
            if target is None or target.summary.wrapper or not target.summary.epochs:
                continue
            for position, keyword, value in arguments(fact.call):
                if target.parameter(position, keyword) in target.summary.epochs and code(value) == text:
                    keeper = target.summary.qualified.rsplit(".", 1)[-1]
                    yield _Use(value, fact.call, function, text, keeper, target.summary.constructs)

    def _repeated(self, loop: LoopNode, function: FunctionNode, text: str) -> Iterator[_Use]:
        """A training loop with no loop around it: marked with itself as its epoch
        loop, for a caller to find the loop around the call."""
        yield _Use(loop, loop, function, text)

    def _binds_locally(self, function: FunctionNode, text: str) -> bool:
        if isinstance(function, cst.Module) or "." in text:
            return False
        scope = self.facts.scopes.scope_of(function)
        return scope is not None and scope.binds(text)

    # -- the fix ---------------------------------------------------------------------

    def _certain(self, sampler: cst.Call, loader: cst.Call) -> bool:
        """The sampler and loader are always what they are here: assigned once each,
        not through `x if c else y`, and the loader given the sampler itself (a fix
        that calls `set_epoch` on a None or another sampler would raise)."""
        for call in (sampler, loader):
            parent = self._parents.get(call)
            if isinstance(parent, cst.Arg) and call is sampler:
                continue
            if isinstance(parent, cst.Assign):
                target = parent.targets[0].target
            elif isinstance(parent, cst.AnnAssign):
                target = parent.target
            else:
                return False
            if isinstance(target, cst.Name) and len(self.facts.scopes.resolve(target)) != 1:
                return False
        return not any(
            isinstance(arg.value, cst.IfExp) for arg in loader.args
            if arg.keyword is not None and arg.keyword.value in ("sampler", "batch_sampler")
        )

    def _fix(self, use: _Use, sampler_text: Optional[str], function: FunctionNode) -> Optional[FixRequest]:
        epoch = use.epoch
        if use.epoch is use.loop or not isinstance(epoch, cst.For) or not isinstance(epoch.target, cst.Name):
            return None
        if not (isinstance(epoch.iter, cst.Call) and isinstance(epoch.iter.func, cst.Name)
                and epoch.iter.func.value == "range" and not self.facts.scopes.resolve(epoch.iter.func)):
            return None
        if not isinstance(epoch.body, cst.IndentedBlock) or not epoch.body.body:
            return None
        if sampler_text is not None and (use.epoch_function is function or sampler_text.startswith("self.")):
            receiver = sampler_text
        else:
            receiver = f"{use.loader_text}.sampler"
        statement = parse_statement(f"{receiver}.set_epoch({epoch.target.value})\n", self.context.module)
        first = epoch.body.body[0]
        replacement = insert_statements(StatementSite(epoch.body, first), (statement,), after=False)
        return self.replace(replacement.node, replacement.new_node, Applicability.UNSAFE,
                            f"Insert `{receiver}.set_epoch({epoch.target.value})` at the top of the epoch loop")


def _method(call: cst.Call) -> Optional[str]:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def _shuffle_off(call: cst.Call) -> bool:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "shuffle":
            return literal_bool(arg.value) is False
    return False


def _branches(expr: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    if isinstance(expr, cst.IfExp):
        yield from _branches(expr.body)
        yield from _branches(expr.orelse)
    else:
        yield expr


def _iterated(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``loader`` in ``enumerate(loader)``, ``tqdm(loader, ...)``, ``zip(loader, ...)``."""
    for _ in range(3):
        if isinstance(expr, cst.Call) and expr.args and expr.args[0].keyword is None and not expr.args[0].star:
            expr = expr.args[0].value
        else:
            break
    return expr


def _parameters_given(
    call: cst.Call, callee: cst.FunctionDef, text: str, code: _Code, method: bool
) -> Iterator[str]:
    """Names of ``callee``'s parameters that ``call`` passes the loader spelled ``text`` to
    (``method``: called through ``self.``, so the first parameter is the instance)."""
    params = [*callee.params.posonly_params, *callee.params.params]
    offset = 1 if method and isinstance(call.func, cst.Attribute) else 0
    for index, arg in enumerate(call.args):
        if arg.star or code(arg.value) != text:
            continue
        if arg.keyword is not None:
            yield arg.keyword.value
        elif index + offset < len(params):
            yield params[index + offset].name.value


def _statement(node: cst.CSTNode, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> Optional[cst.CSTNode]:
    parent = parents.get(node)
    while parent is not None and not isinstance(parent, cst.SimpleStatementLine):
        parent = parents.get(parent)
    return parent

