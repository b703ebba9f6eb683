"""Check an original run against a fixed run (needs torch).

The value comparisons and building blocks here are what a rule's own
comparison (named by its verification spec, e.g. ``".verify_compare:check"``
in its package) is made of; a rule without one gets ``check_generic``.
Outputs are the flattened ``{key: tensor or value}`` the harness saved;
``meta`` holds each tensor's shape, dtype, device and autograd status before
it was saved, and ``probes`` what the rule's probes recorded.
"""

from __future__ import annotations

import importlib
import math
import re
import sys
from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

import torch

from torchlint.ruleapi.rule import RuleClass
from torchlint.verify.results import (
    FAIL,
    INTENDED,
    NOT_COMPARED,
    NOTE,
    PASSED,
    UNALIGNED,
    WARN,
    Finding,
    OutputResult,
    RunData,
)

IDENTICAL = "identical"
CLOSE = "close"
DISTRIBUTION = "distribution"

# Relative L2 error allowed for "close", in units of the working precision's
# epsilon, per step and per unit of cancellation (see ErrorModel).  Rounding in a
# few training steps of a small network stays far below it; a real change is far above.
ROUNDING_EPS = 64
REDUCED_UNITS = 8  # the same, when the working precision is TF32, half or bfloat16: its rounding is
# much coarser than what a fix changes, and 64 of its units would let a 50% change through
TF32_EPS = 2.0 ** -10  # TF32 keeps 10 explicit mantissa bits
BF16_EPS = 2.0 ** -7
KS_REJECT = 1e-3  # p-value below which "same distribution" is rejected
KS_MIN_VALUES = 20  # fewer values: only metadata is checked
SHOWN = 4  # keys listed per finding before "and N more"


@dataclass(frozen=True)
class Context:
    """What a check needs besides the two runs."""

    device: str  # "cpu" or "cuda"
    replay: Optional[RunData] = None  # the original replaying what the fixed run did (intended changes)
    reference: Optional[RunData] = None  # the original with float64 as its default dtype (accuracy contracts)


@dataclass(frozen=True)
class ErrorModel:
    """How much rounding error a "close" comparison allows, and why.

    The allowed relative L2 error of an output is::

        units x eps x (1 + steps) x amplification

    ``units`` is ROUNDING_EPS (64), or REDUCED_UNITS (8) when ``eps`` is that
    of TF32 or coarser; ``eps`` the epsilon of the coarsest arithmetic the
    *original* used (never the changed program: a change that adds TF32
    must not widen its own budget): the output's dtype, TF32 when it was
    enabled on CUDA (or a float32 matmul precision below "highest"), an
    autocast dtype the program entered; ``steps`` the optimizer steps the
    original took (each step can add a rounding error of its own);
    ``amplification`` what a rule knows about cancellation (a bias removed in
    front of a batch norm: 1 + |mean| / std of the norm's input).  The
    original's own run-to-run noise widens nothing: an output that varies by
    more than this budget between runs of the original cannot be judged.
    """

    eps_floor: float = 0.0  # the coarsest arithmetic in effect, besides the dtype
    steps: int = 0
    amplification: float = 1.0
    why: str = ""

    def relative(self, dtype: Optional[torch.dtype], noise: float = 0.0) -> float:
        del noise  # the original's own noise widens nothing (see the class's docstring)
        eps = max(dtype_eps(dtype) if dtype is not None else 0.0, self.eps_floor)
        if eps == 0.0:
            eps = dtype_eps(torch.float32)
        return self.units(eps) * eps * (1 + self.steps) * max(1.0, self.amplification)

    @staticmethod
    def units(eps: float) -> int:
        return REDUCED_UNITS if eps >= TF32_EPS else ROUNDING_EPS

    def describe(self) -> str:
        parts = [f"{self.units(max(self.eps_floor, dtype_eps(torch.float32)))} eps"]
        if self.why:
            parts.append(self.why)
        if self.steps:
            parts.append(f"x {1 + self.steps} for {self.steps} optimizer steps")
        if self.amplification > 1.0:
            parts.append(f"x {self.amplification:.3g} for cancellation")
        return ", ".join(parts)


def error_model(original: RunData, fixed: Optional[RunData] = None, amplification: float = 1.0,
                declared: Sequence[RunData] = ()) -> ErrorModel:
    """The error model of a comparison, from the math modes and steps the original recorded.

    Only the original counts (``fixed`` is accepted and ignored): what the
    changed program switched on cannot buy it a larger budget.  A rule whose
    contract *declares* a change of math mode (TF32 on) passes that run in
    ``declared``."""
    del fixed
    floor, reasons = 0.0, []
    for run in (original, *declared):
        math_mode = run.math
        cuda = run.env.get("device") == "cuda"
        if cuda and (math_mode.get("cuda_matmul_tf32") or math_mode.get("cudnn_tf32")):
            floor = max(floor, TF32_EPS)
            reasons.append("TF32")
        precision = math_mode.get("float32_matmul_precision")
        if precision == "high":
            floor = max(floor, TF32_EPS)
            reasons.append("float32 matmul precision high")
        elif precision == "medium":
            floor = max(floor, BF16_EPS)
            reasons.append("float32 matmul precision medium")
        for name in math_mode.get("autocast", ()):
            dtype = getattr(torch, str(name).rsplit(".", 1)[-1], None)
            if isinstance(dtype, torch.dtype):
                floor = max(floor, dtype_eps(dtype))
                reasons.append(f"autocast {dtype}")
    steps = int(original.math.get("steps", 0) or 0)
    why = "eps of " + ", ".join(dict.fromkeys(reasons)) if reasons else ""
    return ErrorModel(floor, steps, amplification, why)


Checker = Callable[[RunData, RunData, Context], List[Finding]]


@dataclass(frozen=True)
class Check:
    """A rule's check, and whether the original needs a run with another seed."""

    run: Checker
    seed_probe: bool = False


# -- value comparisons ----------------------------------------------------------------


def float64(tensor: torch.Tensor) -> torch.Tensor:
    """The values in float64 (complex as pairs of reals), for exact arithmetic on differences."""
    if tensor.is_complex():
        return torch.view_as_real(tensor).double()
    return tensor.double()


RELATIVE_L2 = "relative L2 error"
DIFFERING = "values that differ"
KS_STATISTIC = "Kolmogorov-Smirnov statistic"


@dataclass(frozen=True)
class Outcome:
    """One value compared: the verdict, its reason, and what was measured against what
    was allowed (in ``measure``'s units; None where nothing could be measured)."""

    ok: bool
    detail: str
    difference: Optional[float] = None
    allowed: Optional[float] = None
    measure: str = ""

    @property
    def pair(self) -> Tuple[bool, str]:
        """``(ok, detail)``, what the plain comparison functions return."""
        return self.ok, self.detail


def identical(a: Any, b: Any) -> Tuple[bool, str]:
    """Same bits; ``0.0 == -0.0`` and NaN == NaN.  Returns (ok, detail)."""
    return identical_outcome(a, b).pair


def identical_outcome(a: Any, b: Any) -> Outcome:
    """:func:`identical`, with the difference measured: the relative L2 error of floating
    values (allowed 0), the number of values that differ of anything else."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        floating = a.is_floating_point() or a.is_complex()
        measure = RELATIVE_L2 if floating else DIFFERING
        if a.dtype != b.dtype or a.shape != b.shape:
            return Outcome(False, f"{a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}", None, 0.0, measure)
        if a.numel() == 0:
            return Outcome(True, "", 0.0, 0.0, measure)
        bits_a = a.contiguous().reshape(-1).view(torch.uint8)
        bits_b = b.contiguous().reshape(-1).view(torch.uint8)
        if torch.equal(bits_a, bits_b):
            return Outcome(True, "", 0.0, 0.0, measure)
        if floating:
            x, y = float64(a), float64(b)
            same = (x == y) | (torch.isnan(x) & torch.isnan(y))
            if bool(same.all()):
                return Outcome(True, "equal up to the sign of zero", 0.0, 0.0, measure)
            diff = torch.nan_to_num((x - y).abs(), nan=math.inf)
            detail = f"{int((~same).sum())} of {a.numel()} values differ, by up to {float(diff.max()):.3g}"
            return Outcome(False, detail, _relative_l2(x, y), 0.0, measure)
        differing = int((a != b).sum())
        return Outcome(False, f"{differing} of {a.numel()} values differ", float(differing), 0.0, measure)
    if isinstance(a, float) and isinstance(b, float):
        if a == b or (math.isnan(a) and math.isnan(b)):
            return Outcome(True, "", 0.0, 0.0, RELATIVE_L2)
        relative = abs(a - b) / abs(a) if a != 0 and math.isfinite(a) and math.isfinite(b) else None
        return Outcome(False, f"{_short(a)} vs {_short(b)}", relative, 0.0, RELATIVE_L2)
    if type(a) is type(b) and a == b:
        return Outcome(True, "", 0.0, 0.0, DIFFERING)
    return Outcome(False, f"{_short(a)} vs {_short(b)}", 1.0, 0.0, DIFFERING)


def _relative_l2(x: torch.Tensor, y: torch.Tensor) -> Optional[float]:
    """||x - y|| / ||x|| over the finite values (float64); None where NaN or infinities differ."""
    if not torch.equal(torch.isnan(x), torch.isnan(y)):
        return None
    infinite = torch.isinf(x)
    if not torch.equal(infinite, torch.isinf(y)) or not torch.equal(x[infinite], y[infinite]):
        return None
    finite = torch.isfinite(x)
    x, y = x[finite], y[finite]
    error = float(torch.linalg.vector_norm(x - y))
    scale = float(torch.linalg.vector_norm(x))
    return error / scale if scale > 0 else (0.0 if error == 0 else math.inf)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def default_tolerance(dtype: torch.dtype) -> Tuple[float, float]:
    """``torch.testing.assert_close``'s (rtol, atol) for a dtype."""
    table = {
        torch.float16: (1e-3, 1e-5),
        torch.bfloat16: (1.6e-2, 1e-5),
        torch.float32: (1.3e-6, 1e-5),
        torch.float64: (1e-7, 1e-7),
        torch.complex64: (1.3e-6, 1e-5),
        torch.complex128: (1e-7, 1e-7),
    }
    return table.get(dtype, (0.0, 0.0))


def dtype_eps(dtype: torch.dtype) -> float:
    """Machine epsilon of a floating dtype (of its real part); 0 for integers."""
    real = {torch.complex64: torch.float32, torch.complex128: torch.float64}.get(dtype, dtype)
    return float(torch.finfo(real).eps) if real.is_floating_point else 0.0


def close(
    a: Any, b: Any, noise: float = 0.0, rounding_eps: float = ROUNDING_EPS, model: Optional[ErrorModel] = None
) -> Tuple[bool, str]:
    """Equal up to rounding: relative L2 error within the error model's budget
    (``rounding_eps * eps`` without one; ``noise`` widens nothing) and every element
    within the larger of that budget and ``assert_close``'s rtol, plus an atol
    of that tolerance times the largest magnitude (so large values' rounding
    does not fail an absolute tolerance meant for values near 1)."""
    return close_outcome(a, b, noise, rounding_eps, model).pair


def close_outcome(
    a: Any, b: Any, noise: float = 0.0, rounding_eps: float = ROUNDING_EPS, model: Optional[ErrorModel] = None
) -> Outcome:
    """:func:`close`, with the relative L2 error measured and the budget it was allowed."""
    if isinstance(a, bool) or isinstance(b, bool):
        return identical_outcome(a, b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and (isinstance(a, float) or isinstance(b, float)):
        a, b = torch.tensor(a, dtype=torch.float32), torch.tensor(b, dtype=torch.float32)
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return identical_outcome(a, b)
    if not (a.is_floating_point() or a.is_complex()) or a.dtype != b.dtype or a.shape != b.shape:
        return identical_outcome(a, b)
    if model is None:
        budget = rounding_eps * dtype_eps(a.dtype)
    else:
        budget = model.relative(a.dtype)
    if a.numel() == 0:
        return Outcome(True, "", 0.0, budget, RELATIVE_L2)
    x, y = float64(a), float64(b)
    if not torch.equal(torch.isnan(x), torch.isnan(y)):
        return Outcome(False, "NaN in different places", None, budget, RELATIVE_L2)
    infinite = torch.isinf(x)
    if not torch.equal(infinite, torch.isinf(y)) or not torch.equal(x[infinite], y[infinite]):
        return Outcome(False, "infinities differ", None, budget, RELATIVE_L2)
    finite = torch.isfinite(x)
    x, y = x[finite], y[finite]
    if x.numel() == 0:
        return Outcome(True, "", 0.0, budget, RELATIVE_L2)
    relative = _relative_l2(x, y)
    assert relative is not None  # only finite values are left
    rtol, atol = default_tolerance(a.dtype)
    rtol = max(rtol, budget)
    atol = max(atol, rtol * float(x.abs().max()))
    worst = float(((x - y).abs() - rtol * x.abs()).max())
    largest = float((x - y).abs().max())
    detail = f"relative error {relative:.2g} (allowed {budget:.2g}), max |diff| {largest:.3g}"
    return Outcome(relative <= budget and worst <= atol, detail, relative, budget, RELATIVE_L2)


def ks_test(a: torch.Tensor, b: torch.Tensor) -> Tuple[float, float]:
    """Two-sample Kolmogorov-Smirnov statistic and asymptotic p-value."""
    x = torch.sort(float64(a).reshape(-1)).values
    y = torch.sort(float64(b).reshape(-1)).values
    points = torch.cat([x, y])
    cdf_x = torch.searchsorted(x, points, right=True).double() / x.numel()
    cdf_y = torch.searchsorted(y, points, right=True).double() / y.numel()
    statistic = float((cdf_x - cdf_y).abs().max())
    if statistic == 0.0:
        return 0.0, 1.0
    n = x.numel() * y.numel() / (x.numel() + y.numel())
    lam = (math.sqrt(n) + 0.12 + 0.11 / math.sqrt(n)) * statistic
    p = 2 * sum((-1) ** (k - 1) * math.exp(-2 * k * k * lam * lam) for k in range(1, 101))
    return statistic, min(1.0, max(0.0, p))


def ks_critical(n: int, m: int) -> float:
    """The KS statistic at which :func:`ks_test`'s p-value falls to KS_REJECT for samples of n and m."""
    effective = n * m / (n + m)
    low, high = 0.0, 10.0
    for _ in range(60):  # p(lambda) decreases: bisect for p = KS_REJECT
        middle = (low + high) / 2
        p = 2 * sum((-1) ** (k - 1) * math.exp(-2 * k * k * middle * middle) for k in range(1, 101))
        low, high = (middle, high) if p > KS_REJECT else (low, middle)
    return high / (math.sqrt(effective) + 0.12 + 0.11 / math.sqrt(effective))


def same_distribution(a: Any, b: Any) -> Tuple[bool, str]:
    """Values that may come from a different random stream."""
    return same_distribution_outcome(a, b).pair


def same_distribution_outcome(a: Any, b: Any) -> Outcome:
    """:func:`same_distribution`, with the KS statistic measured against the one at which
    "same distribution" is rejected (the support and moment checks can fail it below that)."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return identical_outcome(a, b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return Outcome(False, f"{a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}", None, None, KS_STATISTIC)
    if a.numel() < KS_MIN_VALUES:
        return Outcome(True, "too few values for a statistical test; metadata only", None, None, KS_STATISTIC)
    statistic, p = ks_test(a, b)
    allowed = ks_critical(a.numel(), b.numel())
    if p < KS_REJECT:
        return Outcome(False, f"KS statistic {statistic:.3f}, p = {p:.3g}", statistic, allowed, KS_STATISTIC)
    problem = _support_and_moments(a, b)
    if problem:
        return Outcome(False, problem, statistic, allowed, KS_STATISTIC)
    detail = f"KS statistic {statistic:.3f}, p = {p:.3g}; support, range, mean and spread agree"
    return Outcome(True, detail, statistic, allowed, KS_STATISTIC)


MOMENT_SIGMAS = 8.0  # how many standard errors the mean or the spread may move
RANGE_SLACK = 0.1  # share of the original's 1%-99% range either end may move
RANGE_MIN_VALUES = 1000  # fewer values: the 1% quantiles are too noisy to compare


def _support_and_moments(a: torch.Tensor, b: torch.Tensor) -> str:
    """What a KS test at these sizes can miss: a value that can no longer occur (or a
    new one), a shifted range, a changed constant, a scaled spread.  "" if none."""
    if not (a.is_floating_point() or a.is_complex()):
        values_a, values_b = torch.unique(a), torch.unique(b)
        if values_a.numel() * 5 <= a.numel() and not torch.equal(values_a, values_b):
            return f"the values that occur differ: {_short(values_a.tolist())} vs {_short(values_b.tolist())}"
    x, y = float64(a).reshape(-1), float64(b).reshape(-1)
    x, y = x[torch.isfinite(x)], y[torch.isfinite(y)]
    if x.numel() < KS_MIN_VALUES or y.numel() < KS_MIN_VALUES:
        return ""
    if min(x.numel(), y.numel()) >= RANGE_MIN_VALUES:  # the extremes themselves are too noisy; 1% quantiles
        probabilities = torch.tensor([0.01, 0.99], dtype=torch.float64)
        low, high = torch.quantile(x, probabilities).tolist()
        low_b, high_b = torch.quantile(y, probabilities).tolist()
        slack = RANGE_SLACK * (high - low)
        if abs(low_b - low) > slack or abs(high_b - high) > slack:
            return f"1%-99% range [{low:.4g}, {high:.4g}] vs [{low_b:.4g}, {high_b:.4g}]"
    sd_a, sd_b = float(x.std()), float(y.std())
    n = min(x.numel(), y.numel())
    mean_error = MOMENT_SIGMAS * math.sqrt((sd_a ** 2 + sd_b ** 2) / n)
    if abs(float(x.mean()) - float(y.mean())) > mean_error:
        return f"mean {float(x.mean()):.4g} vs {float(y.mean()):.4g}"
    fourth = float(((x - x.mean()) ** 4).mean()) / max(sd_a ** 4, 1e-300)
    spread_error = MOMENT_SIGMAS * max(sd_a, sd_b) * math.sqrt(max(fourth - 1.0, 0.5) / (4 * n))
    if abs(sd_a - sd_b) > spread_error:
        return f"standard deviation {sd_a:.4g} vs {sd_b:.4g}"
    return ""


def compare_value(
    level: str, a: Any, b: Any, noise: float = 0.0, model: Optional[ErrorModel] = None
) -> Tuple[bool, str]:
    """``a`` against ``b`` at ``level``; "identical" of an output the original itself
    does not reproduce is "close" within the measured spread."""
    return compare_outcome(level, a, b, noise, model).pair


def compare_outcome(
    level: str, a: Any, b: Any, noise: float = 0.0, model: Optional[ErrorModel] = None
) -> Outcome:
    """:func:`compare_value`, with what was measured and what was allowed.

    An "identical" output the original itself does not reproduce is compared
    as close, within the rounding the error model allows (not within a multiple
    of the noise: see :func:`value_checks` for an original noisier than that)."""
    if level == IDENTICAL:
        if noise > 0 and math.isfinite(noise):
            return close_outcome(a, b, model=ErrorModel() if model is None else model)
        return identical_outcome(a, b)
    if level == CLOSE:
        return close_outcome(a, b, model=model)
    return same_distribution_outcome(a, b)


# -- building blocks for the rules' checks ---------------------------------------------


class CheckResult(List[Finding]):
    """A check's findings (a list, as every check returns) and the per-output results
    its comparison recorded, for the report's JSON."""

    def __init__(self, findings: Iterable[Finding] = (), outputs: Sequence[OutputResult] = ()) -> None:
        super().__init__(findings)
        self.outputs: Tuple[OutputResult, ...] = tuple(outputs)


def value_kind(value: Any, meta: Optional[Mapping[str, Any]] = None) -> str:
    """``tensor float32[4, 16]``, ``float``, ``str``: what an output is, for the report."""
    if isinstance(value, torch.Tensor):
        return f"tensor {str(value.dtype).replace('torch.', '')}{list(value.shape)}"
    if value is None and meta is not None:
        return f"tensor {str(meta.get('dtype', '?')).replace('torch.', '')}{meta.get('shape', '')}"
    return "None" if value is None else type(value).__name__


class Findings:
    """Collects findings in order, grouping per-key ones with the same message, and
    the result of each output's comparison (see :meth:`compare`)."""

    def __init__(self) -> None:
        self._entries: List[Tuple[str, str, List[str]]] = []  # severity, message, keys
        self._groups: Dict[Tuple[str, str], List[str]] = {}
        self._outputs: Dict[str, OutputResult] = {}  # recorded comparisons, by key
        self._marks: Dict[str, Tuple[str, str]] = {}  # key -> (severity, message) of a keyed failure
        self._runs: Optional[Tuple[RunData, RunData]] = None
        self._may_lack: Set[str] = set()

    def add(self, severity: str, message: str) -> None:
        self._entries.append((severity, message, []))

    def keyed(self, severity: str, message: str, key: str, detail: str = "") -> None:
        """``message`` about ``key``; keys with the same message share one finding."""
        keys = self._groups.get((severity, message))
        if keys is None:
            keys = self._groups[(severity, message)] = []
            self._entries.append((severity, message, keys))
        keys.append(f"`{key}`" + (f" ({detail})" if detail else ""))
        if severity == FAIL or (severity == UNALIGNED and self._marks.get(key, ("",))[0] != FAIL):
            self._marks[key] = (severity, message + (f" ({detail})" if detail else ""))

    def record(self, key: str, level: str, value: Any, outcome: Outcome) -> None:
        """Keep how ``key`` compared at ``level`` (the last record of a key wins)."""
        meta = self._runs[0].meta.get(key) if self._runs is not None else None
        self._outputs[key] = OutputResult(
            key, value_kind(value, meta), level, PASSED if outcome.ok else FAIL, outcome.difference,
            outcome.allowed, outcome.measure, outcome.detail,
        )

    def compare(
        self, key: str, level: str, a: Any, b: Any, noise: float = 0.0, model: Optional[ErrorModel] = None,
        failure: str = "", outcome: Optional[Outcome] = None,
    ) -> Outcome:
        """Compare ``a`` (original) with ``b`` (fixed) at ``level`` (or take the ``outcome``
        already measured), record the result for ``key`` and, when it fails, add a finding
        (``failure``, or "values not ...")."""
        if outcome is None:
            outcome = compare_outcome(level, a, b, noise, model)
        self.record(key, level, a, outcome)
        if not outcome.ok:
            words = {IDENTICAL: "not identical", CLOSE: "not close", DISTRIBUTION: "not the same distribution"}
            self.keyed(FAIL, failure or f"values {words.get(level, 'different')}", key, outcome.detail)
        return outcome

    def output(self, result: OutputResult) -> None:
        """Keep a result made by hand (the printed text's, a rule's own measure)."""
        self._outputs[result.name] = result

    def expect(self, original: RunData, fixed: RunData, may_lack: Iterable[str] = ()) -> None:
        """The runs whose outputs :meth:`result` accounts for (``common_checks`` calls it)."""
        self._runs = (original, fixed)
        self._may_lack = set(may_lack)

    def result(self) -> CheckResult:
        """Failures first, then warnings, then notes; otherwise in order; with every output's result."""
        findings = []
        for severity, message, keys in self._entries:
            if keys:
                more = f" and {len(keys) - SHOWN} more" if len(keys) > SHOWN else ""
                message = f"{message}: {', '.join(keys[:SHOWN])}{more}"
            findings.append(Finding(severity, message))
        order = {FAIL: 0, UNALIGNED: 1, INTENDED: 2, WARN: 3, NOTE: 4}
        return CheckResult(sorted(findings, key=lambda f: order.get(f.severity, 4)), self._output_results())

    def _output_results(self) -> List[OutputResult]:
        """One result per output of either run (and the printed text), in the original's order.

        An output the comparison did not record is "not compared", with its difference
        measured all the same, unless a finding about it failed (or was inconclusive); a
        failing or inconclusive finding about a recorded output sets its verdict."""
        if self._runs is None:
            return list(self._outputs.values())
        original, fixed = self._runs
        keys = self._keys()
        results = []
        for key in keys:
            recorded = self._outputs.get(key)
            mark = self._marks.get(key)
            if recorded is not None:
                if mark is not None and mark[0] != recorded.verdict:  # the rule's finding decides
                    recorded = replace(recorded, verdict=mark[0], detail=mark[1])
                results.append(recorded)
                continue
            value = original.values.get(key, fixed.values.get(key))
            kind = value_kind(value, original.meta.get(key) or fixed.meta.get(key))
            if key not in fixed.values:
                absent = key in self._may_lack and mark is None
                results.append(OutputResult(
                    key, kind, "", NOT_COMPARED if absent else FAIL,
                    detail="absent after the fix, as the contract expects" if absent
                    else "missing from the fixed run's outputs"))
                continue
            if key not in original.values:
                results.append(OutputResult(key, kind, "", FAIL, detail="new in the fixed run's outputs"))
                continue
            measured = identical_outcome(original.values[key], fixed.values[key])
            verdict, detail = mark if mark is not None else (NOT_COMPARED, "the contract does not compare it")
            results.append(OutputResult(key, kind, "", verdict, measured.difference, None, measured.measure,
                                        detail))
        listed = set(keys)
        return results + [result for key, result in self._outputs.items() if key not in listed]

    def _keys(self) -> List[str]:
        """Every output key of both runs (and the printed text), the original's first."""
        if self._runs is None:
            return []
        original, fixed = self._runs
        keys = [PRINTED] if PRINTED in self._outputs else []
        keys += list(original.values) + [key for key in fixed.values if key not in original.values]
        return keys

    @property
    def failed(self) -> bool:
        return any(severity == FAIL for severity, _, _ in self._entries)


def _captured(run: RunData) -> bool:
    """Were the outputs found by verify (globals, locals) rather than named by the script?"""
    return run.origin.startswith("globals")


def _plain(run: RunData, key: str) -> bool:
    """A plain Python value (number, string, None), not a tensor."""
    return not isinstance(run.values.get(key), torch.Tensor) and "shape" not in run.meta.get(key, {})


def _renamed(original: RunData, fixed: RunData, missing: Sequence[str], extra: Sequence[str]) -> Dict[str, str]:
    """Outputs found under another name in the changed run (a local renamed): the same
    tensor, bit for bit, under a new key.  ``{old key: new key}``."""
    pairs: Dict[str, str] = {}
    free = [key for key in extra if isinstance(fixed.values.get(key), torch.Tensor)]
    for key in missing:
        value = original.values.get(key)
        if not isinstance(value, torch.Tensor):
            continue
        for other in free:
            if other not in pairs.values() and identical(value, fixed.values[other])[0]:
                pairs[key] = other
                break
    return pairs


def common_checks(
    original: RunData,
    fixed: RunData,
    found: Findings,
    may_lack: Callable[[str], bool] = lambda key: False,
    printed: str = IDENTICAL,
    printed_severity: str = FAIL,
    seed_free: bool = True,
    autograd: bool = True,
    reference: Optional[str] = None,
) -> List[str]:
    """Key sets, nondeterminism, skipped outputs and the printed text (its numbers at
    level ``printed``; numbers that change with the seed are left out unless
    ``seed_free``; ``autograd`` False when the contract lets tensors stop requiring
    grad, so ``grad_fn=...`` in printed tensors is not a difference; ``reference``:
    what a float64 run of the original printed, for accuracy contracts); returns the
    keys to compare.

    Outputs verify found by itself (globals, locals) are matched leniently: a
    plain value present in one run only (a loop variable, a timer) is a note, and
    a tensor found under a new name, bit for bit, is a rename.  Outputs the
    script named (``torchlint_outputs()``) must all be there."""
    found.expect(original, fixed, [key for key in original.values if key not in fixed.values and may_lack(key)])
    printed_checks(original, fixed, found, printed, printed_severity, seed_free, autograd, reference)
    lenient = _captured(original)
    if not original.values:
        if _parse(original.printed)[1]:
            found.add(NOTE, "the program left nothing else to compare: what it printed was compared")
        else:
            found.add(UNALIGNED, "the program exposed nothing to compare: no tensors, models, optimizers or "
                                 "numbers in its globals or its functions' locals, and nothing printed "
                                 "(define `torchlint_outputs()`)")
    missing = [key for key in original.values if key not in fixed.values and not may_lack(key)]
    extra = [key for key in fixed.values if key not in original.values]
    renamed = _renamed(original, fixed, missing, extra) if lenient else {}
    for key, other in renamed.items():
        found.keyed(NOTE, "found under another name in the changed run, with the same values", key, other)
    functions = {key.partition("().")[0] for key in fixed.values if "()." in key}
    for key in missing:
        if key in renamed:
            continue
        function = key.partition("().")[0] if "()." in key else None
        if lenient and function is not None and function not in functions:
            found.keyed(NOTE, "not compared: this function did not return in the changed program's own process "
                              "(it may have run in loader workers)", key)
        elif lenient and _plain(original, key) and original.meta.get(key, {}).get("source", "value") == "value":
            found.keyed(NOTE, "a plain value only the original left (not compared)", key)
        else:
            found.keyed(FAIL, "missing from the fixed run's outputs", key)
    for key in extra:
        if key in renamed.values():
            continue
        if lenient and (_plain(fixed, key) or fixed.meta.get(key, {}).get("source") == "value"):
            found.keyed(NOTE, "only in the changed run (a new variable; not compared)", key)
        else:
            found.keyed(FAIL, "new in the fixed run's outputs", key)
    keys = []
    varying = []
    for key in original.values:
        if key not in fixed.values:
            continue
        noise = original.noise.get(key, 0.0)
        if noise > 0 and _plain(original, key):
            varying.append(key)  # a time, an address, a count of something outside the program
            continue
        if math.isinf(noise):
            found.keyed(UNALIGNED, "the original gives a different value each run; cannot be judged", key)
            continue
        keys.append(key)
    for key in varying:
        found.keyed(NOTE, "not compared: differs between runs of the original (a time, an id?)", key)
    skipped = list(original.skipped)
    if skipped:
        shown = ", ".join(f"`{item}`" for item in skipped[:SHOWN * 2])
        more = f" and {len(skipped) - SHOWN * 2} more" if len(skipped) > SHOWN * 2 else ""
        found.add(NOTE, f"not compared ({len(skipped)}; not data verify can compare): {shown}{more}")
    if original.origin in ("globals", "globals and locals"):
        found.add(NOTE, "compared what the script left in its globals and its functions' locals (as each last "
                        "returned), following its own objects' attributes: tensors, models (weights, buffers, "
                        "gradients, settings), optimizers, numbers, strings and containers of these")
    return keys


def metadata_checks(
    original: RunData, fixed: RunData, keys: Iterable[str], found: Findings, autograd: bool = True
) -> None:
    """Shape, dtype, device and layout; autograd status too unless ``autograd`` is False."""
    fields = ("shape", "dtype", "device", "layout")
    for key in keys:
        a, b = original.meta.get(key), fixed.meta.get(key)
        if a is None or b is None or not (isinstance(original.values.get(key), torch.Tensor)
                                          and isinstance(fixed.values.get(key), torch.Tensor)):
            continue  # a plain value (or a missing gradient) on either side: the value check judges it
        for name in fields:
            if a.get(name) != b.get(name):
                found.keyed(FAIL, f"{name} changed", key, f"{a.get(name)} -> {b.get(name)}")
        status_a, status_b = (a.get("requires_grad"), a.get("is_leaf")), (b.get("requires_grad"), b.get("is_leaf"))
        if autograd and status_a != status_b:
            found.keyed(
                FAIL,
                "autograd status changed (requires_grad, is_leaf)",
                key,
                f"{a.get('requires_grad')}, {a.get('is_leaf')} -> {b.get('requires_grad')}, {b.get('is_leaf')}",
            )


def exact_level(run: RunData, key: str, level: str) -> str:
    """``level`` for values computed from tensors; IDENTICAL for configuration (optimizer
    hyperparameters, module settings, parsed arguments) and for anything not a float."""
    meta = run.meta.get(key, {})
    if meta.get("source") == "config":
        return IDENTICAL
    value = run.values.get(key)
    if not isinstance(value, (torch.Tensor, float)) or isinstance(value, bool):
        return IDENTICAL
    return level


def value_checks(
    original: RunData,
    fixed: RunData,
    keys: Iterable[str],
    level_of: Callable[[str], str],
    found: Findings,
    model: Optional[ErrorModel] = None,
) -> Dict[str, int]:
    """Compare values at each key's level (configuration always exactly); returns how many
    passed per level.  An output the original does not reproduce within the error model's
    budget, and that the change moved beyond it, is inconclusive, not a failure."""
    passed: Dict[str, int] = {}
    model = model if model is not None else error_model(original)
    for key in keys:
        level = exact_level(original, key, level_of(key))
        noise = original.noise.get(key, 0.0)
        a, b = original.values[key], fixed.values[key]
        outcome = compare_outcome(level, a, b, noise, model)
        if not outcome.ok and noise > 0 and level != DISTRIBUTION and noise >= (outcome.allowed or 0.0):
            found.record(key, level, a, outcome)
            found.keyed(UNALIGNED, "the original differs from itself between runs by more than the rounding "
                                   "allowed, so this difference cannot be judged", key,
                        f"run to run {noise:.2g}; {outcome.detail}")
            continue
        found.compare(key, level, a, b, outcome=outcome)
        if outcome.ok:
            passed[level] = passed.get(level, 0) + 1
    return passed


def standard_checks(
    original: RunData, fixed: RunData, found: Findings, level_of: Callable[[str], str]
) -> Dict[str, int]:
    """Key sets, metadata (autograd included) and values at ``level_of(key)``: what
    most comparisons start with.  Returns how many outputs passed per level."""
    keys = common_checks(original, fixed, found)
    metadata_checks(original, fixed, keys, found)
    return value_checks(original, fixed, keys, level_of, found)


def device_level(context: Context) -> str:
    """What a change that picks no other kernel promises: identical on the CPU, close on CUDA
    (another kernel, or another algorithm, may round differently)."""
    return IDENTICAL if context.device == "cpu" else CLOSE


def nothing_to_change(original: RunData, fixed: RunData, found: Findings, level: str, why: str) -> CheckResult:
    """An original that never did what a fix changes on purpose (its probe saw none): the two
    programs must then be equivalent, outputs and printed text at ``level``."""
    keys = common_checks(original, fixed, found, printed=level)
    metadata_checks(original, fixed, keys, found)
    passed = value_checks(original, fixed, keys, lambda key: level, found)
    found.add(NOTE, f"{why}: there was nothing for the fix to change, so the two programs were held to the "
                    "same outputs")
    found.add(NOTE, summary(passed))
    return found.result()


def replay_checks(
    original: RunData, replay: Optional[RunData], fixed: RunData, found: Findings, level: str,
    autograd: bool = True,
) -> bool:
    """For a change made on purpose: the original *replaying* what the fixed run was seen to
    do (a rule's probe forces it: see ``VerificationSpec.replay``) must equal the fixed run,
    outputs and printed text, at ``level``.  Then nothing but the replayed difference
    separates the two programs.  Each difference is a failure "beyond the promised
    change"; a replay that could not run makes the case inconclusive.  The outputs' results
    (the JSON's) become the replay's against the fixed run.  True when equal."""
    if replay is None:
        found.add(UNALIGNED, "the original could not replay the change (no record of it from the fixed run)")
        return False
    if not replay.ok:
        found.add(UNALIGNED, "the original replaying the change " + replay.describe_failure())
        return False
    own = Findings()
    replayed = replace(replay, noise=original.noise, printed_repeat=original.printed_repeat,
                       printed_repeats=original.printed_repeats, origin=original.origin)
    keys = common_checks(replayed, fixed, own, printed=level, autograd=autograd)
    metadata_checks(replayed, fixed, keys, own, autograd=autograd)
    value_checks(replayed, fixed, keys, lambda key: level, own)
    equal = True
    judged = own.result()
    for finding in judged:
        if finding.severity in (FAIL, UNALIGNED):
            equal = False
            found.add(finding.severity, "beyond the promised change (the original replaying it differs from the "
                                        "fixed run): " + finding.message)
    # Each output's result is the replay's against the fixed run: the promised difference is no failure.
    found.expect(replayed, fixed)
    for result in judged.outputs:
        found.output(result)
    return equal


# -- what the program printed ----------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])|\b(?:nan|inf)\b")


PRINTED_VARIES = 1e-3  # relative change between two runs of the original beyond which a printed number is
# taken for a time or an address, not a result


def _parse(text: str) -> Tuple[str, List[str]]:
    """The text with each number replaced by ``#``, and the numbers as printed."""
    numbers: List[str] = []

    def keep(match: "re.Match[str]") -> str:
        numbers.append(match.group(0))
        return "#"

    return _NUMBER.sub(keep, text), numbers


def _last_digit(number: str) -> float:
    """One unit in the last printed digit: what rounding to the printed precision may move."""
    mantissa, _, exponent = number.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (-decimals + (int(exponent) if exponent else 0))


def _line_of(text: str, index: int) -> str:
    """The printed line holding the ``index``-th number."""
    seen = 0
    for line in text.splitlines():
        count = len(_parse(line)[1])
        if seen + count > index:
            return line.strip()
        seen += count
    return ""


PRINTED = "<printed text>"  # the name the printed text's result goes by among the outputs
PRINTED_MEASURE = "absolute difference of the printed number nearest its limit"


_AUTOGRAD_ANNOTATION = re.compile(r",\s*(?:grad_fn=<\w+>|requires_grad=True)")


def without_autograd(text: str) -> str:
    """Printed text with tensors' autograd annotations (``, grad_fn=<AddBackward0>``,
    ``, requires_grad=True``) removed: for contracts under which a tensor may stop
    requiring grad."""
    return _AUTOGRAD_ANNOTATION.sub("", text)


def printed_checks(
    original: RunData, fixed: RunData, found: Findings, level: str = IDENTICAL, severity: str = FAIL,
    seed_free: bool = True, autograd: bool = True, reference: Optional[str] = None,
) -> None:
    """What the program printed: the same text, with each number equal (``identical``:
    within the original's own spread over its runs) or within the error model plus one
    unit in the last printed digit (``close``).  Integers are always compared exactly.
    With ``autograd`` False, tensors' autograd annotations are not part of the text.
    With a ``reference`` (what a float64 run of the original printed), a number that
    changed passes when it is at least as close to the reference as the original's."""
    normal: Callable[[str], str] = (lambda text: text) if autograd else without_autograd
    before, after = normal(original.printed), normal(fixed.printed)
    skeleton, numbers = _parse(before)
    kind = f"printed text ({len(numbers)} numbers)"
    if before == after:
        if original.printed:
            found.output(OutputResult(PRINTED, kind, level, PASSED, 0.0, 0.0, PRINTED_MEASURE, "the same text"))
        return
    fixed_skeleton, fixed_numbers = _parse(after)
    repeats = [_parse(normal(text)) for text in (original.printed_repeat, *original.printed_repeats)
               if text is not None]
    other = _parse(normal(original.printed_other_seed)) if original.printed_other_seed is not None else None
    if skeleton != fixed_skeleton:
        if any(repeat[0] != skeleton for repeat in repeats):
            message = "the printed text was not compared: the original prints different text each run"
            found.add(WARN, message)
            found.output(OutputResult(PRINTED, kind, "", NOT_COMPARED, detail=message))
            return
        gone = [line for line in before.splitlines() if line not in after.splitlines()]
        new = [line for line in after.splitlines() if line not in before.splitlines()]
        message = f"the printed text differs: {_short(gone[:1] or '(nothing)')} -> {_short(new[:1] or '(nothing)')}"
        found.add(severity, message)
        found.output(OutputResult(PRINTED, kind, level, severity, detail=message))
        return
    model = error_model(original)
    truth = _parse(normal(reference)) if reference is not None else None
    if truth is not None and truth[0] != skeleton:
        truth = None
    skipped = varying = closer = 0
    worst: Optional[Outcome] = None  # the compared number nearest its limit (the first failure, if any)
    for index, (a, b) in enumerate(zip(numbers, fixed_numbers)):
        if a == b:
            continue
        if not seed_free and other is not None and (other[0] != skeleton or other[1][index] != a):
            skipped += 1
            continue
        agains = [repeat[1][index] for repeat in repeats if repeat[0] == skeleton]
        if any(_varies(a, again) for again in agains):
            varying += 1
            continue
        outcome = _printed_number(a, b, agains, level, model)
        if not outcome.ok and truth is not None and _at_least_as_accurate(a, b, truth[1][index]):
            closer += 1
            continue
        if not outcome.ok:
            message = (f"a printed number changed: {_short(_line_of(before, index))} "
                       f"-> {_short(_line_of(after, index))} ({outcome.detail})")
            found.add(severity, message)
            found.output(OutputResult(PRINTED, kind, level, severity, outcome.difference, outcome.allowed,
                                      PRINTED_MEASURE, message))
            return
        if worst is None or _nearer_limit(outcome, worst):
            worst = outcome
    notes = []
    if skipped:
        notes.append(f"{skipped} printed number(s) change with the seed; not compared")
    if varying:
        notes.append(f"{varying} printed number(s) differ between runs of the original by more than "
                     f"{PRINTED_VARIES:g} (times, addresses); not compared")
    if closer:
        notes.append(f"{closer} printed number(s) changed, each at least as close to the float64 reference as "
                     "before")
    for note in notes:
        found.add(NOTE, note)
    difference, allowed = (worst.difference, worst.allowed) if worst is not None else (0.0, 0.0)
    found.output(OutputResult(PRINTED, kind, level, PASSED, difference, allowed, PRINTED_MEASURE,
                              "; ".join(["the same text, numbers within their limits"] + notes)))


def _at_least_as_accurate(a: str, b: str, truth: str) -> bool:
    """Is the changed number ``b`` at least as close to ``truth`` as ``a`` (up to a last digit)?"""
    try:
        x, y, t = float(a), float(b), float(truth)
    except ValueError:
        return False
    if not all(math.isfinite(v) for v in (x, y, t)):
        return False
    return abs(y - t) <= abs(x - t) + max(_last_digit(a), _last_digit(b))


def _nearer_limit(outcome: Outcome, than: Outcome) -> bool:
    """Is ``outcome``'s difference a larger share of its allowance than ``than``'s?"""
    def share(item: Outcome) -> float:
        difference, allowed = item.difference or 0.0, item.allowed or 0.0
        return difference / allowed if allowed > 0 else (math.inf if difference > 0 else 0.0)

    return share(outcome) > share(than)


def _varies(a: str, again: str) -> bool:
    """Does a printed number move between two runs of the original beyond any rounding
    (a time, a memory address)?  Such numbers say nothing about the fix."""
    try:
        x, z = float(a), float(again)
    except ValueError:
        return a != again
    return x != z and abs(x - z) > PRINTED_VARIES * max(abs(x), abs(z))


def _printed_number(a: str, b: str, agains: Sequence[str], level: str, model: ErrorModel) -> Outcome:
    try:
        x, y = float(a), float(b)
        others = [float(again) for again in agains]
    except ValueError:
        return Outcome(False, f"{a} vs {b}", None, 0.0, PRINTED_MEASURE)
    if not any(mark in text for text in (a, b) for mark in ".eEna"):  # integers: counts, steps, sizes
        return Outcome(x == y, f"{a} vs {b}", abs(x - y), 0.0, PRINTED_MEASURE)
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or math.isinf(y):
        return Outcome(False, f"{a} vs {b}", None, 0.0, PRINTED_MEASURE)
    values = [x, *others]
    spread = max(values) - min(values)  # the original's own spread over its runs, not widened
    allowed = spread
    if level != IDENTICAL:  # "close" (and anything looser) is never judged at zero tolerance
        allowed = max(spread, model.relative(torch.float32) * abs(x)) + _last_digit(a)
    return Outcome(abs(x - y) <= allowed, f"{a} vs {b}, allowed difference {allowed:.3g}", abs(x - y), allowed,
                   PRINTED_MEASURE)


def rng_shift(original: RunData, fixed: RunData) -> Optional[str]:
    """Which generators end in a different state, if any."""
    shifted = []
    for name in sorted(set(original.rng) | set(fixed.rng)):
        a, b = original.rng.get(name), fixed.rng.get(name)
        states_a = a if isinstance(a, list) else [a]
        states_b = b if isinstance(b, list) else [b]
        same = len(states_a) == len(states_b) and all(
            isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and torch.equal(x, y)
            for x, y in zip(states_a, states_b)
        )
        if not same:
            shifted.append(name.upper())
    return ", ".join(shifted) or None


def summary(passed: Mapping[str, int]) -> str:
    """The closing note: how many outputs passed at each level."""
    parts = [f"{count} {level}" for level, count in passed.items() if count]
    return "outputs compared: " + (", ".join(parts) if parts else "none")


# -- the comparison of a rule without its own --------------------------------------------


def check_strict(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    """The "same outputs" contract of ``verify A --against B`` without a rule."""
    del context
    found = Findings()
    passed = standard_checks(original, fixed, found, lambda key: IDENTICAL)
    found.add(NOTE, "checked the strict contract: the same outputs and the same printed text")
    found.add(NOTE, summary(passed))
    return found.result()


def check_generic(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    del context
    found = Findings()
    keys = common_checks(original, fixed, found, printed=CLOSE)
    metadata_checks(original, fixed, keys, found)
    passed = value_checks(original, fixed, keys, lambda key: CLOSE, found)
    found.add(NOTE, "checked the rule's \"close\" contract: every output is close")
    found.add(NOTE, summary(passed))
    return found.result()


def _resolve(reference: str, package: Optional[str]) -> Checker:
    """``"module:function"``, where a leading dot is relative to ``package``."""
    module_name, _, function = reference.partition(":")
    module = importlib.import_module(module_name, package=package if module_name.startswith(".") else None)
    found: Checker = getattr(module, function)
    return found


def check_for(rule: Optional[RuleClass]) -> Check:
    """The comparison a rule's verification spec names, the generic one for a rule
    without one, the strict "same outputs" one for no rule."""
    if rule is None:
        return Check(check_strict)
    spec = rule.verification
    if spec is None or not spec.comparison:
        seed_probe = spec.seed_probe if spec is not None else False
        if spec is not None and spec.contract.level.startswith(IDENTICAL):
            # An "identical" promise is held to it: same outputs, same printed text.
            return Check(check_strict, seed_probe=seed_probe)
        return Check(check_generic, seed_probe=seed_probe)
    package = sys.modules[rule.__module__].__package__
    return Check(_resolve(spec.comparison, package), seed_probe=spec.seed_probe)
