"""TL503 legacy-distributed-launch."""

from __future__ import annotations

from typing import Iterator, List, Mapping, Optional, Sequence, Set, Tuple

import libcst as cst

from torchlint.analysis.scopes import BindingKind
from torchlint.model import Applicability
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, FixAvailability, OptionValue, Rule, TorchRange, TorchVersion
from torchlint.source.tree import walk_body
from torchlint.ruleapi.verification import Contract, Probe, VerificationSpec

_LAUNCH = "torch.distributed.launch"
_PARSER = "argparse.ArgumentParser"
# Methods of a parser that return an object whose `add_argument` adds to the same command line.
_GROUPS = frozenset({"add_argument_group", "add_mutually_exclusive_group", "add_parser"})
_RUNNERS = frozenset({"runpy.run_module"})
_SHELLS = ("subprocess.", "os.system", "os.popen", "os.exec", "os.spawn")
_VERSION_NAMES = ("torch.__version__", "torch.version", "torch.torch_version")


def _string(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _option_strings(call: cst.Call) -> List[Tuple[int, str]]:
    """The leading positional string arguments of ``add_argument``: its option strings."""
    found: List[Tuple[int, str]] = []
    for index, arg in enumerate(call.args):
        if arg.keyword is not None or arg.star:
            break
        text = _string(arg.value)
        if text is None:
            break
        found.append((index, text))
    return found


def _is_add_argument(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_argument"


class LegacyDistributedLaunch(Rule):
    """## What it does
    Reports `add_argument("--local_rank", ...)` on an `argparse` parser
    (one the file builds with `argparse.ArgumentParser`, one of its groups or
    sub-parsers, or a parameter the file's callers pass such a parser to)
    when no `add_argument` in the file accepts `"--local-rank"`.

    Also reports `torch.distributed.launch` used from Python: imported
    (`import torch.distributed.launch`, `from torch.distributed import
    launch`, `from torch.distributed.launch import main`), run with
    `runpy.run_module("torch.distributed.launch")`, or started as
    `-m torch.distributed.launch` in a command given to `subprocess` or
    `os.system` (a list of strings or a command string).

    Not reported: an `add_argument` under an `if` that tests torch's
    version (`torch.__version__`, or a name the file binds to an expression
    that reads it), and a parser whose arguments are read
    with `parse_known_args`, which leaves `--local-rank=N` among the unknown
    arguments instead of stopping the script.  Any `parse_known_args` call
    on the parser counts, even one taken only on some paths (ultralytics'
    yolov5 `parse_opt(known=True)`): precision first.

    ## Why is this bad?
    Since torch 2.0, `torch.distributed.launch` passes the local rank to the
    script as `--local-rank=N` (with a dash); before, it passed
    `--local_rank=N`.  A script that only declares `--local_rank` stops at
    once under the newer launcher with `error: unrecognized arguments:
    --local-rank=0`, on every rank of a job that may have waited hours in a
    queue.  The launcher itself is deprecated in favour of `torchrun`, which
    passes the rank in the `LOCAL_RANK` environment variable instead.

    ## Example
    ```python
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    ```

    Use instead:
    ```python
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", "--local-rank", type=int, default=0)
    ```

    ## Fix safety
    The fix adds `"--local-rank"` as a second option string right after
    `"--local_rank"`.  It is safe: `argparse` names the destination after
    the first long option string, so `args.local_rank` is still where the
    value lands, and `--local_rank=N` still parses; only `--local-rank=N`
    is accepted in addition.  Calls that use the launcher from Python get no
    fix: switching to `torchrun` (`torch.distributed.run`) changes how the
    rank reaches the script.

    ## Source guide
    *DGX cluster guidelines* (a GPU cluster's user guide) points to
    `torchrun` for launching distributed training; *GPU Computing Guide*
    (Ohio Supercomputer Center) and *Chapter 16: GPU Acceleration &
    Distributed Training* (an online PyTorch training book) still launch
    with `python -m torch.distributed.launch`, whose `--local-rank`
    argument changed spelling in torch 2.0 (PyTorch's *torchrun (Elastic
    Launch)* documentation, "Transitioning from torch.distributed.launch to
    torchrun").
    """

    code = "TL503"
    name = "legacy-distributed-launch"
    summary = "`--local_rank` without the `--local-rank` spelling torch ≥ 2.0's launcher passes, or the deprecated launcher run from Python"
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "safe: add `\"--local-rank\"` as a second option string (same `dest`)"
    torch_range = TorchRange(
        min=TorchVersion(2, 0), note="`torch.distributed.launch` passes `--local-rank` from torch 2.0"
    )
    trigger_words = ("local_rank", "distributed.launch", "distributed import launch")
    valid = (
        """
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", "--local-rank", type=int, default=0)
        """,
        """
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int, default=0)
        args, unknown = parser.parse_known_args()
        """,
        """
        import argparse, torch
        parser = argparse.ArgumentParser()
        if torch.__version__ < "2.0":
            parser.add_argument("--local_rank", type=int)
        else:
            parser.add_argument("--local-rank", type=int)
        """,
        """
        import subprocess
        subprocess.run(["torchrun", "--nproc-per-node=2", "train.py"])
        """,
    )
    invalid = (
        Example(
            """
            import argparse
            parser = argparse.ArgumentParser()
            parser.add_argument('--local_rank', type=int, default=-1)
            """,
            fixed="""
            import argparse
            parser = argparse.ArgumentParser()
            parser.add_argument('--local_rank', '--local-rank', type=int, default=-1)
            """,
        ),
        Example(
            """
            import subprocess, sys
            subprocess.run([sys.executable, "-m", "torch.distributed.launch", "--nproc_per_node=2", "train.py"])
            """
        ),
        Example(
            """
            from torch.distributed import launch
            """
        ),
        Example(
            """
            import argparse
            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int)
            """,
            findings=0,
            torch="1.13",
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        comparison=".verify_compare:check",
        probes=(Probe("argument-parsers", "verify_probe.py"),),
        replay="argument-parsers",
        contract=Contract(
            level="intended change",
            promise=(
                "The script accepts the dashed `--local-rank=N` that torch ≥ 2.0's launcher passes, "
                "into the same `args.local_rank`, and still accepts `--local_rank=N`; nothing else changes."
            ),
            checks=(
                "observed (a probe): the parsers the program parses with, and where each spelling of the "
                "local-rank option leads",
                "before the fix `--local-rank` is rejected; after it, it sets the destination `--local_rank` "
                "set, which it still sets",
                "the original, with the dashed spelling added to its option as the fix adds it, gives the "
                "fixed run's outputs and printed text (identical)",
                "an original that already accepts `--local-rank` must be equivalent to the fixed program",
            ),
        ),
    )

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        if any(name == _LAUNCH or name.startswith(_LAUNCH + ".") for name in facts.imports):
            return True
        return facts.contains_any(cls.trigger_words)

    _has_dashed: bool = False
    _known_args: Set[str] = set()

    def visit_Module(self, node: cst.Module) -> None:
        calls = self.facts.nodes_of(cst.Call)
        self._has_dashed = any(
            _is_add_argument(call) and any(text == "--local-rank" for _, text in _option_strings(call))
            for call in calls
        )
        known: Set[str] = set()
        for call in calls:
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "parse_known_args":
                known.add(self._root_text(func.value, 0) or "?")
        self._known_args = known

    # -- imports ---------------------------------------------------------------------

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = self.context.module.code_for_node(alias.name)
            if name == _LAUNCH or name.startswith(_LAUNCH + "."):
                self._report_launcher(alias, "imports")

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = self.context.module.code_for_node(node.module)
        if module == _LAUNCH or module.startswith(_LAUNCH + "."):
            self._report_launcher(node, "imports")
            return
        if module == "torch.distributed":
            for alias in node.names:
                if self.context.module.code_for_node(alias.name) == "launch":
                    self._report_launcher(alias, "imports")

    def _report_launcher(self, node: cst.CSTNode, how: str) -> None:
        self.report(
            node,
            f"this {how} `torch.distributed.launch`, deprecated since torch 1.10; from 2.0 it passes "
            "`--local-rank=N` to the script: use `torchrun` (`torch.distributed.run`), which passes `LOCAL_RANK`",
        )

    # -- calls -----------------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.names.call_name(node)
        if qualified in _RUNNERS and node.args and _string(node.args[0].value) == _LAUNCH:
            self._report_launcher(node, "runs")
            return
        if qualified is not None and qualified.startswith(_SHELLS):
            if any(self._starts_launcher(arg.value) for arg in node.args if arg.keyword is None):
                self._report_launcher(node, "starts")
            return
        if _is_add_argument(node):
            self._add_argument(node)

    def _starts_launcher(self, expr: cst.BaseExpression) -> bool:
        """A command (a list/tuple of strings, or a command string) with ``-m torch.distributed.launch``."""
        if isinstance(expr, (cst.List, cst.Tuple)):
            items = [_string(element.value) for element in expr.elements]
            return any(a == "-m" and b == _LAUNCH for a, b in zip(items, items[1:]))
        if isinstance(expr, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
            words = self.context.module.code_for_node(expr).split()
            return any(a == "-m" and b.rstrip("'\"") == _LAUNCH for a, b in zip(words, words[1:]))
        return False

    def _add_argument(self, node: cst.Call) -> None:
        options = _option_strings(node)
        position = next((index for index, text in options if text == "--local_rank"), None)
        if position is None or self._has_dashed:
            return
        func = node.func
        assert isinstance(func, cst.Attribute)
        root = self._root_text(func.value, 0)
        if root is None or root in self._known_args or "?" in self._known_args:
            return
        if self._version_guarded():
            return
        self.report(
            node,
            "`--local_rank` has no `--local-rank` spelling: torch ≥ 2.0's `torch.distributed.launch` passes "
            "`--local-rank=N` and the script stops with 'unrecognized arguments'",
            fix=self.replace(node, _with_dashed(node, position), Applicability.SAFE,
                             'Add "--local-rank" as a second option string'),
        )

    def _version_guarded(self) -> bool:
        """Under an ``if`` whose test reads torch's version, directly or through a
        name bound to an expression that does (``MAJOR = int(torch.__version__[0])``)."""
        return any(
            isinstance(parent, (cst.If, cst.IfExp)) and self._reads_version(parent.test, 0)
            for parent in self.parents
        )

    def _reads_version(self, expr: cst.CSTNode, depth: int) -> bool:
        for found in walk_body(expr):
            if not isinstance(found, (cst.Name, cst.Attribute)):
                continue
            if (self.names.qualified_name(found) or "").startswith(_VERSION_NAMES):
                return True
            if isinstance(found, cst.Name) and depth < 2:
                for binding in self.facts.scopes.resolve(found):
                    if binding.value is not None and self._reads_version(binding.value, depth + 1):
                        return True
        return False

    # -- parsers ---------------------------------------------------------------------

    def _root_text(self, expr: cst.BaseExpression, depth: int) -> Optional[str]:
        """The text of the `ArgumentParser` that ``expr`` adds arguments to, or None
        when ``expr`` is not known to be a parser (or one of its groups)."""
        if depth > 6:
            return None
        if isinstance(expr, cst.Call):
            if self.names.call_name(expr) == _PARSER:
                return self.context.module.code_for_node(expr)
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in _GROUPS | {"add_subparsers"}:
                return self._root_text(func.value, depth + 1)
            return None
        if not isinstance(expr, cst.Name):
            return None
        for binding in self.facts.scopes.resolve(expr):
            if binding.kind is BindingKind.PARAMETER:
                if binding.annotation is not None and self.names.qualified_name(binding.annotation) == _PARSER:
                    return expr.value
                for argument in self._passed_for(binding.node, binding.name):
                    found = self._root_text(argument, depth + 1)
                    if found is not None:
                        return found
            elif binding.value is not None:
                found = self._root_text(binding.value, depth + 1)
                if found is not None:
                    return expr.value if isinstance(binding.value, cst.Call) and found == self.context.module.code_for_node(binding.value) else found
        return None

    def _passed_for(self, param: cst.CSTNode, name: str) -> Iterator[cst.BaseExpression]:
        """The arguments the file's calls pass for parameter ``name`` of the function owning ``param``."""
        training = self.facts.training
        for function in training.functions:
            if not isinstance(function, cst.FunctionDef):
                continue
            params = [*function.params.posonly_params, *function.params.params]
            index = next((i for i, p in enumerate(params) if p is param), None)
            if index is None:
                continue
            for edge in training.callers(function):
                yield from _argument_for(edge.call, index, name)


def _argument_for(call: cst.Call, index: int, name: str) -> Iterator[cst.BaseExpression]:
    for position, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == name:
            yield arg.value
        elif arg.keyword is None and not arg.star and position == index:
            yield arg.value


def _with_dashed(call: cst.Call, position: int) -> cst.Call:
    """``add_argument`` with ``"--local-rank"`` right after ``"--local_rank"`` (same quotes)."""
    args: Sequence[cst.Arg] = call.args
    original = args[position]
    assert isinstance(original.value, cst.SimpleString)
    dashed = original.value.with_changes(value=original.value.value.replace("local_rank", "local-rank"))
    first = original.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    second = cst.Arg(value=dashed, comma=original.comma)
    return call.with_changes(args=[*args[:position], first, second, *args[position + 1:]])
