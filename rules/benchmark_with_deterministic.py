"""TL605 benchmark-with-deterministic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, List, Mapping, Optional, Tuple

import libcst as cst

from torchlint.precheck import PrecheckFacts
from torchlint.rule import Example, OptionValue, FileContext, Rule
from torchlint.analysis.values import literal_bool

_BENCHMARK = "torch.backends.cudnn.benchmark"
_DETERMINISTIC = "torch.backends.cudnn.deterministic"


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
        """Both cuDNN flags must be assigned, as attributes of an imported torch module."""
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
        benchmarks = [s for s in self._settings if s.flag == _BENCHMARK]
        if not benchmarks or not all(s.is_true for s in benchmarks):
            return
        deterministic = next((s for s in self._settings if s.flag == _DETERMINISTIC and s.is_true), None)
        if deterministic is None:
            return
        lines = self.facts.positions
        first, second = sorted(
            (benchmarks[0], deterministic), key=lambda s: (lines[s.target].start.line, lines[s.target].start.column)
        )
        first_words = "benchmark = True" if first.flag == _BENCHMARK else "deterministic = True"
        second_words = "deterministic = True" if first.flag == _BENCHMARK else "benchmark = True"
        self.report(
            second.target,
            f"`cudnn.{second_words}` contradicts `cudnn.{first_words}` on line "
            f"{lines[first.target].start.line}: benchmarking picks algorithms by timing, "
            "determinism asks for repeatable ones; keep one",
            statement=second.statement,
        )
