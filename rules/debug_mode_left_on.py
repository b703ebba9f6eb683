"""TL304 debug-mode-left-on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Set, Tuple

import libcst as cst

from torchlint.analysis import Analysis
from torchlint.analysis.import_time import is_main_guard
from torchlint.analysis.training import FunctionNode, LoopFacts, Training
from torchlint.data.apidata import Framework, frameworks
from torchlint.ruleapi.rule import Example, FileContext, Option, OptionValue, Rule, innermost_statement
from torchlint.source.tree import children
from torchlint.analysis.values import literal_bool

_SET_ANOMALY = frozenset({"torch.autograd.set_detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly"})
_DETECT_ANOMALY = frozenset({"torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly"})
_PROFILERS = frozenset({
    "torch.profiler.profile", "torch.autograd.profiler.profile", "torch.autograd.profiler.emit_nvtx",
    "torch.autograd.profiler_legacy.profile",
})
# The files pytest collects by default, and its shared fixtures.
# Branches and handlers: whatever runs there runs only when the author asks.
_GUARDS = (cst.If, cst.IfExp, cst.ExceptHandler, cst.ExceptStarHandler, cst.BooleanOperation, cst.Lambda)


@dataclass(frozen=True)
class _Site:
    """A debugging switch and what it is."""

    node: cst.CSTNode  # the call, or the `with` item's call
    what: str
    profiler: bool
    statement: Optional[cst.CSTNode]
    trainer: bool = False
    """A framework Trainer's argument: the Trainer runs the training itself."""


def _enabled_argument(call: cst.Call, keyword: str) -> Optional[cst.BaseExpression]:
    """The argument bound to ``keyword`` (first positional or keyword), if any."""
    for index, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
        if arg.keyword is None and arg.star == "" and index == 0:
            return arg.value
    return None


class _Training:
    """Which functions and ``with`` bodies run a training loop."""

    def __init__(self, training: Training) -> None:
        self._training = training
        self._loops: Dict[cst.CSTNode, LoopFacts] = {}
        self._callees: Dict[cst.Call, FunctionNode] = {}
        for function in training.functions.values():
            for loop in function.loops:
                self._loops[loop.node] = loop
            for edge in function.local_calls:
                self._callees[edge.call] = edge.callee
        self._trains: Dict[FunctionNode, bool] = {}

    def function_trains(self, function: FunctionNode, seen: Set[FunctionNode]) -> bool:
        """The function has a training loop, or calls one of the file's functions that does."""
        if function in self._trains:
            return self._trains[function]
        if function in seen:
            return False
        seen.add(function)
        facts = self._training.functions.get(function)
        found = facts is not None and (
            any(self._training.is_training_loop(loop) for loop in facts.loops)
            or any(self.function_trains(edge.callee, seen) for edge in facts.local_calls)
        )
        self._trains[function] = found
        return found

    def file_trains(self) -> bool:
        """Some function of the file (or its module level) runs a training loop."""
        return any(self.function_trains(function, set()) for function in self._training.functions)

    def block_trains(self, node: cst.CSTNode) -> bool:
        """The code under ``node`` (not inside functions it defines) holds a whole training loop."""
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        loop = self._loops.get(node)
        if loop is not None and self._training.is_training_loop(loop):
            return True
        callee = self._callees.get(node) if isinstance(node, cst.Call) else None
        if callee is not None and self.function_trains(callee, set()):
            return True
        return any(self.block_trains(child) for child in children(node))


class DebugModeLeftOn(Rule):
    """## What it does
    Reports autograd's anomaly detection switched on around training:
    `torch.autograd.set_detect_anomaly(True)` (called, or used as a context
    manager) and `with torch.autograd.detect_anomaly():`, at module level or
    in a function that runs a training loop (a loop calling `backward()`),
    directly or through the file's own functions.  The call
    `set_detect_anomaly(True)` (not used as a context manager) is a global
    switch that stays on after its function returns, so it is also
    reported in any other function of a file that trains, such as an
    evaluation method the training loop runs between epochs.

    PyTorch Lightning's `Trainer(detect_anomaly=True)` (from `lightning`,
    `lightning.pytorch` or `pytorch_lightning`; the argument exists from
    Lightning 1.5, read from the `lightning-version` setting, else the
    project's requirement, else the newest) runs every training step under
    anomaly detection and is reported on the argument, unless the Trainer
    is built under a guard.

    With the option `include-profilers`, also reports
    `with torch.profiler.profile(...)`, `torch.autograd.profiler.profile(...)`
    and `torch.autograd.profiler.emit_nvtx(...)` whose body holds a whole
    training loop, unless they are given `enabled=` (a literal `False`, or a
    value from a flag, is the author's switch).

    Not reported: a switch under any `if` (`if args.debug:`) other than
    `if __name__ == "__main__":`, in an `except` handler, the argument
    `False` or a variable, and anything in a test file.  Test files are
    the files pytest collects by name, `test_*.py`, `*_test.py` and
    `conftest.py`, that are not scripts (no `if __name__ == "__main__":`
    block, or an import of a test framework, or a test pytest can call); in such files anomaly
    detection is usually what the test is checking.

    Each file is read on its own, so a function that trains under anomaly
    detection is reported even when every caller, in another module, runs
    it only behind a flag.  Over the source of torch 2.13 itself the rule
    reports one line, for that reason: `numeric_check_if_enabled` in
    `torch/_inductor/fx_passes/numeric_utils.py` runs a loop of
    `backward()` and optimizer steps under `set_detect_anomaly(True)`, and
    `pre_grad.py` calls it only when `config.fx_passes_numeric_check` asks
    for it.  Nothing in the reported file says so (a function's name is not
    a fact); the finding stands as the rule defines it, and a line like that
    is what `# noqa: TL304` is for.

    ## Why is this bad?
    Anomaly detection records a traceback for every operation of the forward
    pass and checks every gradient for NaN during the backward pass, which
    synchronizes the device on each check.  Training runs several times
    slower (slowdowns of 10x and more are reported for GPU training), and
    the setting is global: once on, it stays on for the rest of the
    process.  A profiler wrapped around a whole run records every operator
    of every step: it slows training and its trace grows without bound.
    Both are debugging tools, meant to be switched on for a short run.

    ## Example
    ```python
    torch.autograd.set_detect_anomaly(True)
    for x, y in loader:
        criterion(model(x), y).backward()
        optimizer.step()
    ```

    Use instead:
    ```python
    torch.autograd.set_detect_anomaly(args.debug)
    for x, y in loader:
        criterion(model(x), y).backward()
        optimizer.step()
    ```

    ## Fix safety
    No automatic fix: whether a run is a debugging run is the author's choice.

    ## Options
    - `include-profilers` (default `false`): also report `torch.profiler`
      and `torch.autograd.profiler` contexts without `enabled=` around a
      whole training loop.  Off by default because a profiler with a
      `schedule` records only the steps it is told to.

    ## Source guide
    *DGX cluster guidelines* (a GPU cluster's user guide) lists "Disabling
    debugging APIs" among its code tweaks: once a model works, turn off
    `torch.autograd.set_detect_anomaly`, `torch.autograd.profiler.profile`
    and `torch.autograd.profiler.emit_nvtx`.
    """

    code = "TL304"
    name = "debug-mode-left-on"
    summary = "Anomaly detection (or, optionally, a profiler) is left on around training"
    fix_summary = "none: turn it off or put it behind a flag"
    trigger_words = ("anomaly",)
    options = {
        "include-profilers": Option(
            False, "Also report profiler contexts without `enabled=` around a whole training loop."
        ),
    }
    requires = frozenset({Analysis.TRAINING})
    valid = (
        """
        import torch
        if args.debug:
            torch.autograd.set_detect_anomaly(True)
        """,
        """
        import torch
        torch.autograd.set_detect_anomaly(False)
        torch.autograd.set_detect_anomaly(args.debug)
        """,
        """
        import torch
        def check_gradients(model, x):
            with torch.autograd.detect_anomaly():
                model(x).sum().backward()
        """,
        Example(
            """
            import torch
            with torch.profiler.profile(enabled=args.profile):
                for x in loader:
                    model(x).sum().backward()
            """,
            findings=0,
            options={"include-profilers": True},
        ),
    )
    invalid = (
        Example(
            """
            import torch
            torch.autograd.set_detect_anomaly(True)
            """
        ),
        Example(
            """
            from torch import autograd
            def train(model, loader):
                with autograd.detect_anomaly():
                    for x in loader:
                        model(x).sum().backward()
            """
        ),
        Example(
            """
            import torch
            with torch.profiler.profile():
                for x in loader:
                    model(x).sum().backward()
            """,
            options={"include-profilers": True},
        ),
        Example(
            """
            import torch
            with torch.profiler.profile():
                for x in loader:
                    model(x).sum().backward()
            """,
            findings=0,
        ),
    )

    @classmethod
    def triggers(cls, options: Mapping[str, OptionValue]) -> Tuple[str, ...]:
        """The profilers' names too when they are included."""
        if options.get("include-profilers", False):
            return cls.trigger_words + ("profile", "emit_nvtx")
        return cls.trigger_words

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._sites: List[_Site] = []
        self._test_file = context.is_test_file

    def visit_Call(self, node: cst.Call) -> None:
        if self._test_file:
            return
        fact = self.facts.frameworks.call(node)
        if fact is not None and fact.framework is Framework.LIGHTNING and fact.role == "trainer":
            argument = fact.argument("detect_anomaly")
            exists = frameworks().argument(Framework.LIGHTNING, "trainer", "detect_anomaly").exists_in(
                self.release(Framework.LIGHTNING.value))
            if argument is not None and exists and literal_bool(argument.value) is True:
                self._sites.append(_Site(argument, "`Trainer(detect_anomaly=True)`", False,
                                         innermost_statement(self.parents), trainer=True))
            return
        qualified = self.names.call_name(node)
        if qualified in _SET_ANOMALY:
            mode = _enabled_argument(node, "mode")
            if mode is not None and literal_bool(mode) is True:
                self._add(node, "`set_detect_anomaly(True)`", profiler=False)

    def visit_With(self, node: cst.With) -> None:
        if self._test_file:
            return
        for item in node.items:
            call = item.item
            if not isinstance(call, cst.Call):
                continue
            qualified = self.names.call_name(call)
            if qualified in _DETECT_ANOMALY:
                self._add(call, "`detect_anomaly()`", profiler=False)
            elif qualified in _PROFILERS and self.option("include-profilers"):
                if not any(arg.keyword is not None and arg.keyword.value == "enabled" for arg in call.args):
                    self._add(call, f"`{qualified.rsplit('.', 1)[-1]}()`", profiler=True)

    def _add(self, node: cst.CSTNode, what: str, profiler: bool) -> None:
        statement = next(
            (p for p in reversed(self.parents) if isinstance(p, (cst.SimpleStatementLine, cst.With))), None
        )
        self._sites.append(_Site(node, what, profiler, statement))

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self._sites:
            return
        parents = self.facts.parents
        training = _Training(self.facts.training)
        for site in self._sites:
            function = _enclosing_function(site.node, parents)
            if function is None:
                continue  # under a guard
            if site.trainer:
                message = (
                    f"{site.what} runs every training step under anomaly detection, several times slower: "
                    "turn it off or put it behind a debug flag"
                )
            elif site.profiler:
                with_node = parents.get(parents[site.node])
                if not isinstance(with_node, cst.With) or not training.block_trains(with_node.body):
                    continue
                message = f"{site.what} profiles a whole training loop; it slows every step and its trace keeps growing"
            elif isinstance(function, cst.Module) or training.function_trains(function, set()):
                message = (
                    f"anomaly detection ({site.what}) is left on around training; it makes every step several "
                    "times slower: turn it off or put it behind a debug flag"
                )
            elif not isinstance(parents.get(site.node), cst.WithItem) and training.file_trains():
                # A call, not a `with`: the switch is global and outlives the
                # function, so the training this file runs afterwards runs under it.
                message = (
                    f"anomaly detection ({site.what}) switched on here stays on for the training this file runs "
                    "(the switch is global); every later step is several times slower: turn it off or put it "
                    "behind a debug flag"
                )
            else:
                continue
            self.report(site.node, message, statement=site.statement)


def _enclosing_function(
    node: cst.CSTNode, parents: Mapping[cst.CSTNode, cst.CSTNode]
) -> Optional[FunctionNode]:
    """The function (or module) whose code runs ``node`` unconditionally; None under a guard."""
    parent = parents.get(node)
    while parent is not None:
        if isinstance(parent, _GUARDS) and not is_main_guard(parent):
            return None
        if isinstance(parent, cst.Else) and isinstance(parents.get(parent), cst.If):
            return None
        if isinstance(parent, (cst.FunctionDef, cst.Module)):
            return parent
        if isinstance(parent, cst.ClassDef):
            return None
        parent = parents.get(parent)
    return None
