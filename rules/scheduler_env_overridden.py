"""TL504 scheduler-env-overridden."""

from __future__ import annotations

from typing import Iterator, Mapping, Optional, Tuple

import libcst as cst

from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, OptionValue, Rule

_ENVIRON = "os.environ"
_VISIBLE = "CUDA_VISIBLE_DEVICES"
_PORT = "MASTER_PORT"
_KEYS = (_VISIBLE, _PORT)
_NO_GPU = frozenset({"", "-1"})


def _text(expr: Optional[cst.BaseExpression]) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _literal_port(value: cst.BaseExpression) -> bool:
    """``"12355"``, ``12355`` or ``str(12355)``: the same port in every run."""
    if isinstance(value, (cst.SimpleString, cst.Integer)):
        return True
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "str":
        return len(value.args) == 1 and isinstance(value.args[0].value, (cst.SimpleString, cst.Integer))
    return False


class SchedulerEnvOverridden(Rule):
    """## What it does
    A suggestion, off by default.  Reports code that writes `CUDA_VISIBLE_DEVICES`, or a literal
    `MASTER_PORT`, into the process environment: `os.environ[KEY] = ...`,
    `os.environ.update(...)` with that key, and `os.putenv(KEY, ...)`,
    however `os` or `environ` is imported.

    Not reported: reading the variables (`os.environ["MASTER_PORT"]`,
    `os.environ.get(...)`), `os.environ.setdefault(...)` (which keeps what
    the launcher set), hiding every GPU for a CPU run
    (`CUDA_VISIBLE_DEVICES = ""` or `"-1"`), a `MASTER_PORT` computed at run time (a free port
    found by the script, a command-line option), and a write under an `if`
    whose test names the same variable (`if "MASTER_PORT" not in
    os.environ:`).  Off by default because a script that is only ever run
    on a workstation may pick its GPU this way on purpose.

    ## Why is this bad?
    On a cluster the scheduler decides which GPUs a job may use and sets
    `CUDA_VISIBLE_DEVICES` (Slurm through its GPU binding) before the script
    starts.  A script that overwrites it, say with `"0"`, computes on the
    node's first GPU whatever it was given: two jobs on one node end up on
    the same GPU while the GPUs they were allocated sit idle.  Likewise a
    launcher (`torchrun`, `srun`) chooses `MASTER_PORT` per job; a port
    written into the code makes two distributed jobs that land on the same
    node try to bind the same port, and the second fails to start or hangs.

    ## Example
    ```python
    import os

    os.environ["CUDA_VISIBLE_DEVICES"] = "0"
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    ```

    Use instead: let the scheduler and the launcher set them, and only
    supply defaults for runs outside a cluster:
    ```python
    import os

    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "12355")
    ```

    ## Fix safety
    No automatic fix: whether the value is a default for local runs or a
    deliberate choice is the author's call.

    ## Source guide
    *GPU Computing Guide* (Ohio Supercomputer Center) sets
    `os.environ['CUDA_VISIBLE_DEVICES'] = '0'` and a fixed `MASTER_PORT`
    in its examples, and *Chapter 16: GPU Acceleration & Distributed
    Training* (an online PyTorch training book) writes
    `os.environ['MASTER_PORT'] = '12355'` in its DDP setup; both show
    single-machine code.  On a cluster, the scheduler's GPU binding and the
    launcher's rendezvous settings are what the job must use (Slurm's
    `--gpus`/`--gres` documentation; PyTorch's `torchrun` documentation).
    """

    code = "TL504"
    name = "scheduler-env-overridden"
    summary = "suggestion: code sets `CUDA_VISIBLE_DEVICES` or a fixed `MASTER_PORT`, overriding the scheduler's choice"
    fix_summary = "none: let the scheduler and launcher set them (`setdefault` for local defaults)"
    default_enabled = False
    trigger_words = (_VISIBLE, _PORT)

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """The file must name ``environ`` or ``putenv`` and one of the two variables."""
        return facts.mentions(("environ", "putenv")) and facts.contains_any(_KEYS)

    valid = (
        """
        import os
        port = os.environ["MASTER_PORT"]
        os.environ.setdefault("MASTER_PORT", "12355")
        os.environ["MASTER_PORT"] = str(find_free_port())
        """,
        """
        import os
        if "CUDA_VISIBLE_DEVICES" not in os.environ:
            os.environ["CUDA_VISIBLE_DEVICES"] = "0"
        """,
    )
    invalid = (
        Example(
            """
            import os
            os.environ["CUDA_VISIBLE_DEVICES"] = "0"
            """
        ),
        Example(
            """
            from os import environ
            environ.update({"MASTER_ADDR": "localhost", "MASTER_PORT": "12355"})
            """
        ),
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            key = self._environ_key(target.target)
            if key is not None:
                self._check(target.target, key, node.value)

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.names.call_name(node)
        if qualified == "os.putenv" and len(node.args) == 2:
            key = _text(node.args[0].value)
            if key in _KEYS and key is not None:
                self._check(node, key, node.args[1].value)
        elif qualified == _ENVIRON + ".update":
            for key, value, where in self._updates(node):
                self._check(where, key, value)

    def _updates(self, call: cst.Call) -> Iterator[Tuple[str, cst.BaseExpression, cst.CSTNode]]:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in _KEYS:
                yield arg.keyword.value, arg.value, arg
            elif arg.keyword is None and not arg.star and isinstance(arg.value, cst.Dict):
                for element in arg.value.elements:
                    if isinstance(element, cst.DictElement):
                        key = _text(element.key)
                        if key in _KEYS and key is not None:
                            yield key, element.value, element

    def _environ_key(self, target: cst.BaseExpression) -> Optional[str]:
        if not isinstance(target, cst.Subscript) or self.names.qualified_name(target.value) != _ENVIRON:
            return None
        if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
            return None
        key = _text(target.slice[0].slice.value)
        return key if key in _KEYS else None

    def _check(self, node: cst.CSTNode, key: str, value: cst.BaseExpression) -> None:
        if key == _PORT and not _literal_port(value):
            return
        if key == _VISIBLE and _text(value) in _NO_GPU:
            return  # hides every GPU (a CPU run): takes nothing the job was not given
        if self._guarded(key):
            return
        if key == _VISIBLE:
            message = (
                "suggestion: setting `CUDA_VISIBLE_DEVICES` in code overrides the GPUs the scheduler gave the job; "
                "on a shared node the job may compute on another job's GPU"
            )
        else:
            message = (
                "suggestion: a fixed `MASTER_PORT` collides when two distributed jobs share a node; let the launcher "
                "(torchrun, srun) set it, or use `os.environ.setdefault`"
            )
        self.report(node, message)

    def _guarded(self, key: str) -> bool:
        """An enclosing ``if`` (or conditional expression) tests the same variable."""
        for parent in self.parents:
            test = parent.test if isinstance(parent, (cst.If, cst.IfExp, cst.While)) else None
            if test is not None and any(
                isinstance(found, cst.SimpleString) and _text(found) == key for found in _strings(test)
            ):
                return True
        return False


def _strings(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    from torchlint.source.tree import walk

    for found, _parent in walk(node):
        if isinstance(found, cst.SimpleString):
            yield found
