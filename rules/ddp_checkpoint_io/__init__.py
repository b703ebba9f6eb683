"""TL505 ddp-checkpoint-io."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Mapping, Optional, Set, Tuple

import libcst as cst

from torchlint.data import apidata
from torchlint.analysis.scopes import BindingKind
from torchlint.analysis.training import FunctionNode
from torchlint.ruleapi.fixes import add_keyword, bind
from torchlint.model import Applicability
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, FileContext, FixAvailability, OptionValue, Rule, innermost_statement
from torchlint.source.tree import children, walk
from torchlint.ruleapi.verification import Contract, Probe, VerificationSpec

_DDP = "torch.nn.parallel.DistributedDataParallel"
_SAVE = "torch.save"
_LOAD = "torch.load"
_CONDITIONAL = (cst.If, cst.IfExp, cst.BooleanOperation, cst.ExceptHandler, cst.Lambda)


@dataclass(frozen=True)
class _Save:
    """A ``torch.save`` call and whether an ``if`` encloses it in its function."""

    call: cst.Call
    function: Optional[cst.FunctionDef]
    conditional: bool
    statement: Optional[cst.CSTNode]


class DdpCheckpointIo(Rule):
    """## What it does
    A suggestion, off by default (the guard it looks for cannot be told
    from other `if`s, see below).  In a file that wraps a model in
    `torch.nn.parallel.DistributedDataParallel`, reports three checkpoint
    mistakes:
    - `torch.save(...)` that runs on every rank: at module level or in a
      function that the file calls, or passes along (`mp.spawn(train, ...)`),
      with no `if` around the save or around the calls on the way, and no
      early `return` under an `if` before it;
    - `torch.save` of the wrapper's `state_dict()` (a name bound to
      `DistributedDataParallel(...)`), whose keys all start with `module.`;
    - `torch.load(...)` without `map_location` (and no `**kwargs` that may
      carry it).

    Test files (`test_*.py`, `*_test.py`, `conftest.py`, not a script run
    under `if __name__ == "__main__":` that imports no test framework nor defines a test pytest can call) are left alone:
    they exercise checkpointing rather than run jobs.  Any `if` counts as a
    rank check (the linter cannot tell `if rank == 0:`
    from `if is_main_process():`), and a function the file neither calls nor
    passes along is taken to be guarded where it is called.

    ## Why is this bad?
    Every DDP process runs the same script.  Unguarded, N processes write
    the same checkpoint file at the same moment: at best wasted I/O on a
    shared file system, at worst a truncated or interleaved file.  The
    wrapper's `state_dict()` prefixes every key with `module.`, so the
    checkpoint does not load into the plain model used for evaluation or
    inference without renaming keys.  And `torch.load` restores each tensor
    onto the device it was saved from: every rank loads rank 0's checkpoint
    onto GPU 0 (using memory there and competing with rank 0), and a node
    or job without that GPU cannot load it at all.

    ## Example
    ```python
    model = DDP(net.to(rank), device_ids=[rank])
    ...
    torch.save(model.state_dict(), "checkpoint.pt")
    state = torch.load("checkpoint.pt")
    ```

    Use instead:
    ```python
    model = DDP(net.to(rank), device_ids=[rank])
    ...
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "checkpoint.pt")
    state = torch.load("checkpoint.pt", map_location="cpu")
    ```

    ## Fix safety
    Only `torch.load` has a fix: `map_location="cpu"`.  It is unsafe
    because the loaded tensors now live on the CPU: `load_state_dict`
    copies them onto the model's device as before, but code that uses a
    loaded tensor directly must move it (`map_location=f"cuda:{rank}"`
    keeps them on each rank's own GPU).  The save findings have no fix:
    which rank writes, and where, is the author's choice.

    ## Source guide
    *Chapter 16: GPU Acceleration & Distributed Training* (an online
    PyTorch training book) saves its DDP checkpoint "only on rank 0", with
    `if rank == 0: torch.save(model.module.state_dict(), ...)`, unwrapping
    the model first.  `map_location` is described in PyTorch's
    "Saving and Loading Models" tutorial (loading across devices).
    """

    code = "TL505"
    name = "ddp-checkpoint-io"
    summary = (
        "suggestion: DDP checkpoints: unguarded `torch.save`, the wrapper's `state_dict`, "
        "`torch.load` without `map_location`"
    )
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "unsafe: `map_location=\"cpu\"` on `torch.load`"
    default_enabled = False
    trigger_words = ("DistributedDataParallel",)

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """torch's DDP class and ``save`` or ``load`` must be named."""
        return (
            facts.imports_torch and facts.mentions(("DistributedDataParallel",))
            and facts.mentions(("save", "load"))
        )

    valid = (
        """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = DDP(net)
        if rank == 0:
            torch.save(model.module.state_dict(), "ckpt.pt")
        state = torch.load("ckpt.pt", map_location="cpu")
        """,
        """
        import torch
        model = net
        torch.save(model.state_dict(), "ckpt.pt")
        state = torch.load("ckpt.pt")
        """,
    )
    invalid = (
        Example(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(net)
            state = torch.load("ckpt.pt")
            """,
            fixed="""
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(net)
            state = torch.load("ckpt.pt", map_location="cpu")
            """,
        ),
        Example(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            def train(rank):
                model = DDP(net)
                torch.save(model.state_dict(), "ckpt.pt")
            mp.spawn(train, nprocs=4)
            """,
            findings=2,
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        comparison=".verify_compare:check",
        probes=(Probe("checkpoint-loads", "verify_probe.py"),),
        replay="checkpoint-loads",
        contract=Contract(
            level="intended change",
            promise=(
                "A checkpoint saved on a GPU this machine does not have loads with `map_location=\"cpu\"`, "
                "with exactly the values that were saved; without it, loading fails.  Nothing else changes."
            ),
            checks=(
                "observed (a probe): each `torch.load` of a file is tried again, with the same arguments, on "
                "a copy of what it loaded that says it was saved on an absent GPU",
                "after the fix every such copy loads onto the CPU with the saved values",
                "outputs and printed text are identical, or, where the program's own loads changed, the "
                "original with `map_location=\"cpu\"` added to its loads gives the fixed run's",
                "a program that loads no checkpoint while it runs is inconclusive",
            ),
            differences=("Loaded tensors are on the CPU instead of the device they were saved from.",),
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._ddp: List[cst.Call] = []
        self._saves: List[_Save] = []
        self._loads: List[cst.Call] = []
        self._arguments: Optional[Set[cst.BaseExpression]] = None

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.names.call_name(node)
        if qualified == _DDP:
            self._ddp.append(node)
        elif qualified == _SAVE:
            function, conditional = self._place()
            self._saves.append(_Save(node, function, conditional, innermost_statement(self.parents)))
        elif qualified == _LOAD:
            self._check_load(node)

    def _place(self) -> Tuple[Optional[cst.FunctionDef], bool]:
        conditional = False
        for parent in reversed(self.parents):
            if isinstance(parent, cst.FunctionDef):
                return parent, conditional or self._returns_early(parent)
            if isinstance(parent, _CONDITIONAL):
                conditional = True
        return None, conditional

    def _returns_early(self, function: cst.FunctionDef) -> bool:
        """``if ...: return`` among the function's top statements."""
        body = function.body
        statements = body.body if isinstance(body, cst.IndentedBlock) else ()
        for statement in statements:
            if isinstance(statement, cst.If) and any(isinstance(node, cst.Return) for node, _ in walk(statement.body)):
                return True
        return False

    def _check_load(self, node: cst.Call) -> None:
        arguments = bind(node, apidata.signature(_LOAD), self.context.torch_version)
        if arguments.may_be_present("map_location"):
            return
        self._loads.append(node)

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self._ddp or self.context.is_test_file:
            return
        for load in self._loads:
            self.report(
                load,
                "suggestion: `torch.load` without `map_location` puts every tensor back on the device it "
                "was saved from: each rank loads onto the saving GPU, and a machine without it cannot load; pass `map_location`",
                fix=self.replace(load, add_keyword(load, "map_location", cst.SimpleString('"cpu"')),
                                 Applicability.UNSAFE, 'Pass `map_location="cpu"`'),
            )
        for save in self._saves:
            wrapped = self._wrapper_state_dict(save.call)
            if wrapped is not None:
                self.report(
                    wrapped,
                    "suggestion: this saves the `state_dict()` of the `DistributedDataParallel` wrapper: "
                    "every key starts with `module.`, so a plain model cannot load it; save `<model>.module.state_dict()`",
                    statement=save.statement,
                )
            if not save.conditional and self._every_rank(save.function, set()):
                self.report(
                    save.call,
                    "suggestion: `torch.save` runs on every DDP rank: all processes write the same file at once; "
                    "save on rank 0 only",
                    statement=save.statement,
                )

    def _wrapper_state_dict(self, save: cst.Call) -> Optional[cst.Call]:
        for node, _ in walk(save):
            if (
                isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "state_dict" and self._is_wrapper(node.func.value)
            ):
                return node
        return None

    def _is_wrapper(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Name):
            for binding in self.facts.scopes.resolve(expr):
                if binding.kind is BindingKind.ASSIGN and isinstance(binding.value, cst.Call) \
                        and self.names.call_name(binding.value) == _DDP:
                    return True
            return False
        value = self.facts.values.of(expr)
        return value is not None and value.qualified == _DDP

    def _every_rank(self, function: Optional[cst.FunctionDef], seen: Set[FunctionNode]) -> bool:
        """Code in ``function`` (None: the module body) runs in every process,
        with no ``if`` on the way from the module body."""
        if function is None:
            return True
        if function in seen:
            return False
        seen.add(function)
        training = self.facts.training
        for edge in training.callers(function):
            if self._under_condition(edge.call, edge.caller):
                continue
            caller = edge.caller if isinstance(edge.caller, cst.FunctionDef) else None
            if self._every_rank(caller, seen):
                return True
        return self._passed_along(function)

    def _under_condition(self, call: cst.Call, caller: FunctionNode) -> bool:
        found = [False]

        def visit(node: cst.CSTNode, inside: bool) -> bool:
            if node is call:
                found[0] = inside
                return True
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is not caller:
                return False
            nested = inside or isinstance(node, _CONDITIONAL)
            return any(visit(child, nested) for child in children(node))

        visit(caller, False)
        return found[0] or (isinstance(caller, cst.FunctionDef) and self._returns_early(caller))

    def _passed_along(self, function: cst.FunctionDef) -> bool:
        """The function's name is read as a value (``mp.spawn(train, ...)``) at module level."""
        scope = self.facts.scopes.scope_of(function)
        owner = scope.parent if scope is not None else None
        if owner is None:
            return False
        for reference in self.facts.scopes.references(owner, function.name.value):
            if self._is_argument(reference):
                return True
        return False

    def _is_argument(self, name: cst.Name) -> bool:
        if self._arguments is None:
            self._arguments = {
                node.value for node, _ in walk(self.context.module) if isinstance(node, cst.Arg)
            }
        return name in self._arguments


__all__: List[str] = ["DdpCheckpointIo"]
