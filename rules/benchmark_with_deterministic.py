"""TL605 benchmark-with-deterministic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, List, Mapping, Optional, Tuple, Union

import libcst as cst

from torchlint.analysis.frameworks import UNKNOWN, FrameworkCall, Unknown, packages
from torchlint.data.apidata import Framework, frameworks
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, OptionValue, FileContext, Rule
from torchlint.data.versions import Release
from torchlint.analysis.values import literal_bool

_BENCHMARK = "torch.backends.cudnn.benchmark"
_DETERMINISTIC = "torch.backends.cudnn.deterministic"
_LIGHTNING = Framework.LIGHTNING
_DETERMINISTIC_ALGORITHMS = Release(1, 5)
"""From Lightning 1.5.0 `deterministic` calls `torch.use_deterministic_algorithms`
and leaves `cudnn.deterministic` alone; before, it toggled that flag itself."""


@dataclass(frozen=True)
class _Setting:
    """One assignment to a cuDNN flag."""

    flag: str  # _BENCHMARK or _DETERMINISTIC
    target: cst.BaseExpression
    is_true: bool  # the value is the literal True
    statement: Optional[cst.CSTNode]


def _pairs(target: cst.BaseExpression, value: cst.BaseExpression) -> Iterator[Tuple[cst.BaseExpression, bool]]:
    """(assigned expression, value is literal True), unpacking ``a, b = x, y``."""
    if isinstance(target, (cst.Tuple, cst.List)):
        elements = [element.value for element in target.elements]
        if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(elements) and not any(
            isinstance(element, cst.StarredElement) for element in (*target.elements, *value.elements)
        ):
            for inner, assigned in zip(elements, value.elements):
                yield from _pairs(inner, assigned.value)
        else:  # unpacking something else: the values are unknown
            for inner in elements:
                yield inner, False
        return
    yield target, literal_bool(value) is True


class BenchmarkWithDeterministic(Rule):
    """## What it does
    Reports a file that sets both `torch.backends.cudnn.benchmark = True`
    and `torch.backends.cudnn.deterministic = True`, however `cudnn` is
    imported (`import torch`, `from torch.backends import cudnn`,
    `import torch.backends.cudnn as cudnn`) and also inside tuple
    assignments (`cudnn.benchmark, cudnn.deterministic = True, True`).  The
    finding sits on the later of the two assignments and names the line of
    the earlier one.

    Only the literal `True` counts: a flag taken from a variable or a
    command-line option is left alone, and so is a file that ever sets
    `benchmark` to anything other than `True` (the usual "reproducible
    mode" branch turns benchmarking off there).  Objects that merely happen
    to be called `cudnn` are not torch's and are ignored.

    PyTorch Lightning's `Trainer` (from `lightning`, `lightning.pytorch` or
    `pytorch_lightning`) sets the same flags from its `benchmark` and
    `deterministic` arguments, differently by release (the
    `lightning-version` setting, else the project's requirement, else the
    newest; `torchlint/data/frameworks.toml`):
    - `Trainer(benchmark=True, deterministic=True)` (or, from 1.7,
      `deterministic="warn"`) is reported in every release; from 1.6.4
      Lightning only warns about it at run time.
    - `Trainer(benchmark=True)` in a file that sets
      `cudnn.deterministic = True` is reported from 1.5, where Lightning's
      own `deterministic` no longer touches that flag.
    - From 1.6.0 to 1.6.3, a Trainer without `benchmark` sets
      `cudnn.benchmark = True` itself unless `deterministic` is set: in a
      file that sets `cudnn.deterministic = True`, that Trainer is reported.
    - Lightning overwrites a file's `cudnn.benchmark = True` when the
      Trainer is built: before 1.6 with its `benchmark` argument (default
      `False`), and in every release when `deterministic` is set and
      `benchmark` is not.  Then the two `cudnn` assignments no longer
      contradict, and the file is left alone.

    ## Why is this bad?
    The two settings ask for opposite things.  `benchmark = True` makes
    cuDNN time several convolution algorithms for each new input shape and
    keep the fastest; which one wins depends on timing noise and on the
    machine, so two runs of the same script may pick different algorithms.
    `deterministic = True` asks for results that repeat from run to run.
    Set together, cuDNN benchmarks among its deterministic algorithms only:
    the speed-up that `benchmark` was set for is partly lost, and the choice
    of algorithm can still change between runs, so the reproducibility that
    `deterministic` was set for is not what PyTorch's reproducibility notes
    promise either; those notes ask for `benchmark = False` together with
    `deterministic = True`.  Usually one of the two lines is a leftover from
    a copied template.

    ## Example
    ```python
    import torch

    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.deterministic = True
    ```

    Use instead, for fast training on fixed input sizes:
    ```python
    import torch

    torch.backends.cudnn.benchmark = True
    ```

    or, for runs that repeat exactly:
    ```python
    import torch

    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    ```

    ## Fix safety
    No automatic fix: only the author knows whether this script wants speed
    or reproducibility.

    ## Source guide
    *DGX cluster guidelines* (a GPU cluster's user guide, "No brainer code
    tweaks") recommends `torch.backends.cudnn.benchmark = True` for every
    training script, and *Chapter 16: GPU Acceleration & Distributed
    Training* (an online PyTorch training book) enables it for fixed input
    sizes; neither mentions `deterministic`, which a script that follows
    them must then not set.  The contradiction itself is described in the
    "Reproducibility" notes of the PyTorch documentation (PyTorch
    Foundation).
    """

    code = "TL605"
    name = "benchmark-with-deterministic"
    summary = "`cudnn.benchmark = True` and `cudnn.deterministic = True` are both set; they contradict"
    fix_summary = "none: keep the one the script is for"
    trigger_words = ("benchmark",)

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """Both cuDNN flags must be assigned, as attributes of an imported torch
        module; or a Lightning file must name one of them."""
        if facts.imports_from(packages(_LIGHTNING)) and facts.contains_any(("benchmark", "deterministic")):
            return True
        return facts.imports_torch and {"benchmark", "deterministic"} <= facts.assigned_attributes
    valid = (
        """
        import torch
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
        """,
        """
        from torch.backends import cudnn
        cudnn.benchmark = True
        cudnn.deterministic = args.deterministic
        """,
    )
    invalid = (
        Example(
            """
            import torch
            torch.backends.cudnn.benchmark = True
            torch.backends.cudnn.deterministic = True
            """
        ),
        Example(
            """
            import torch.backends.cudnn as cudnn
            cudnn.benchmark, cudnn.deterministic = True, True
            """
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._settings: List[_Setting] = []
        self._trainers: List[FrameworkCall] = []

    def visit_Call(self, node: cst.Call) -> None:
        fact = self.facts.frameworks.call(node)
        if fact is not None and fact.framework is _LIGHTNING and fact.role == "trainer":
            self._trainers.append(fact)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._record(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._record(node.target, node.value)

    def _record(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        for assigned, is_true in _pairs(target, value):
            if not isinstance(assigned, cst.Attribute):
                continue
            flag = self.names.qualified_name(assigned)
            if flag in (_BENCHMARK, _DETERMINISTIC):
                statement = next(
                    (p for p in reversed(self.parents) if isinstance(p, cst.SimpleStatementLine)), None
                )
                self._settings.append(_Setting(flag, assigned, is_true, statement))

    def leave_Module(self, original_node: cst.Module) -> None:
        deterministic = next((s for s in self._settings if s.flag == _DETERMINISTIC and s.is_true), None)
        for trainer in self._trainers:
            self._lightning(trainer, deterministic)
        benchmarks = [s for s in self._settings if s.flag == _BENCHMARK]
        if not benchmarks or not all(s.is_true for s in benchmarks):
            return
        if deterministic is None:
            return
        if any(self._trainer_benchmark(trainer) in (False, UNKNOWN) for trainer in self._trainers):
            return  # the Trainer overwrites (or may overwrite) `cudnn.benchmark = True`
        lines = self.facts.positions
        first, second = sorted(
            (benchmarks[0], deterministic), key=lambda s: (lines[s.target].start.line, lines[s.target].start.column)
        )
        first_words = "benchmark = True" if first.flag == _BENCHMARK else "deterministic = True"
        second_words = "deterministic = True" if first.flag == _BENCHMARK else "benchmark = True"
        self.report(
            second.target,
            f"`cudnn.{second_words}` contradicts `cudnn.{first_words}` on "
            f"{self.cite_line(lines[first.target].start.line)}: benchmarking picks algorithms by timing, "
            "determinism asks for repeatable ones; keep one",
            statement=second.statement,
        )

    # -- Lightning ------------------------------------------------------------------------

    def _deterministic(self, trainer: FrameworkCall) -> Union[bool, Unknown]:
        """True: ``deterministic`` asks for deterministic algorithms; False: it
        does not; UNKNOWN: not known (an expression, or unpacked arguments)."""
        if not trainer.may_be_present("deterministic"):
            return False
        value = trainer.literal("deterministic")
        if value is UNKNOWN:
            return UNKNOWN
        meaning = frameworks().meaning(_LIGHTNING, "trainer", "deterministic", value,
                                       self.release(_LIGHTNING.value))
        if meaning == "deterministic":
            return True
        return False if value in (False, None) else UNKNOWN

    def _trainer_benchmark(self, trainer: FrameworkCall) -> Union[bool, None, Unknown]:
        """What ``cudnn.benchmark`` is after this Trainer is built: True, False,
        None (left alone) or UNKNOWN."""
        given = trainer.literal("benchmark") if trainer.may_be_present("benchmark") else None
        if given is UNKNOWN or isinstance(given, bool):
            return given if isinstance(given, bool) else UNKNOWN
        if given is not None:
            return UNKNOWN
        behaviour = frameworks().behaviour(_LIGHTNING, "trainer-sets-cudnn-benchmark", self.release(_LIGHTNING.value))
        deterministic = self._deterministic(trainer)
        if behaviour == "from-argument":
            return False  # the default, False, is assigned
        if deterministic is UNKNOWN:
            return UNKNOWN
        if behaviour == "not-deterministic":
            return not deterministic
        if behaviour == "only-if-given":
            return False if deterministic else None
        return UNKNOWN

    def _lightning(self, trainer: FrameworkCall, file_deterministic: Optional[_Setting]) -> None:
        release = self.release(_LIGHTNING.value)
        benchmark = trainer.argument("benchmark")
        deterministic = trainer.argument("deterministic")
        if benchmark is not None and trainer.literal("benchmark") is True:
            if deterministic is not None and self._deterministic(trainer) is True:
                later = max((benchmark, deterministic), key=lambda arg: self._start(arg))
                self.report(
                    later,
                    f"`Trainer(benchmark=True, deterministic={_code(deterministic.value)})` contradicts itself: "
                    "Lightning turns cuDNN benchmarking on and asks for deterministic algorithms; keep one",
                )
            elif file_deterministic is not None and not release < _DETERMINISTIC_ALGORITHMS \
                    and not trainer.may_be_present("deterministic"):
                self.report(
                    benchmark,
                    "`Trainer(benchmark=True)` turns cuDNN benchmarking on, contradicting "
                    f"`cudnn.deterministic = True` on {self.cite_line(self._line(file_deterministic))}; keep one",
                )
            return
        if file_deterministic is None or trainer.may_be_present("benchmark"):
            return
        if frameworks().behaviour(_LIGHTNING, "trainer-sets-cudnn-benchmark", release) == "not-deterministic" \
                and self._trainer_benchmark(trainer) is True:
            self.report(
                trainer.call,
                f"Lightning {release} sets `cudnn.benchmark = True` for a Trainer without `benchmark` "
                f"(1.6.0 to 1.6.3), contradicting `cudnn.deterministic = True` on line "
                f"{self._line(file_deterministic)}; pass `benchmark=False` or `deterministic=True`",
            )

    def _start(self, node: cst.CSTNode) -> Tuple[int, int]:
        start = self.facts.positions[node].start
        return start.line, start.column

    def _line(self, setting: _Setting) -> int:
        return self.facts.positions[setting.target].start.line


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)
