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
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple

import torch

from torchlint.rule import RuleClass
from torchlint.verify.results import FAIL, NOTE, UNALIGNED, WARN, Finding, RunData

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


@dataclass(frozen=True)
class ErrorModel:
    """How much rounding error a "close" comparison allows, and why.

    The allowed relative L2 error of an output is::

        max(4 x noise, units x eps x (1 + steps) x amplification)

    ``units`` is ROUNDING_EPS (64), or REDUCED_UNITS (8) when ``eps`` is that
    of TF32 or coarser; ``noise`` is the original's measured run-to-run error for that output;
    ``eps`` the epsilon of the coarsest arithmetic the runs used: the output's
    dtype, TF32 when it was enabled on CUDA (or a float32 matmul precision
    below "highest"), an autocast dtype the program entered; ``steps`` the
    optimizer steps the original took (each step can add a rounding error of
    its own); ``amplification`` what a rule knows about cancellation (a bias
    removed in front of a batch norm: 1 + |mean| / std of the norm's input).
    """

    eps_floor: float = 0.0  # the coarsest arithmetic in effect, besides the dtype
    steps: int = 0
    amplification: float = 1.0
    why: str = ""

    def relative(self, dtype: Optional[torch.dtype], noise: float = 0.0) -> float:
        eps = max(dtype_eps(dtype) if dtype is not None else 0.0, self.eps_floor)
        if eps == 0.0:
            eps = dtype_eps(torch.float32)
        return max(4 * noise, self.units(eps) * eps * (1 + self.steps) * max(1.0, self.amplification))

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


def error_model(original: RunData, fixed: RunData, amplification: float = 1.0) -> ErrorModel:
    """The error model of a pair of runs, from the math modes and steps they recorded."""
    floor, reasons = 0.0, []
    for run in (original, fixed):
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


def identical(a: Any, b: Any) -> Tuple[bool, str]:
    """Same bits; ``0.0 == -0.0`` and NaN == NaN.  Returns (ok, detail)."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False, f"{a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}"
        if a.numel() == 0:
            return True, ""
        bits_a = a.contiguous().reshape(-1).view(torch.uint8)
        bits_b = b.contiguous().reshape(-1).view(torch.uint8)
        if torch.equal(bits_a, bits_b):
            return True, ""
        if a.is_floating_point() or a.is_complex():
            x, y = float64(a), float64(b)
            same = (x == y) | (torch.isnan(x) & torch.isnan(y))
            if bool(same.all()):
                return True, "equal up to the sign of zero"
            diff = torch.nan_to_num((x - y).abs(), nan=math.inf)
            return False, f"{int((~same).sum())} of {a.numel()} values differ, by up to {float(diff.max()):.3g}"
        differing = int((a != b).sum())
        return False, f"{differing} of {a.numel()} values differ"
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True, ""
    if type(a) is type(b) and a == b:
        return True, ""
    return False, f"{_short(a)} vs {_short(b)}"


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
    (``max(4 * noise, rounding_eps * eps)`` without one) and every element
    within the larger of that budget and ``assert_close``'s rtol, plus an atol
    of that tolerance times the largest magnitude (so large values' rounding
    does not fail an absolute tolerance meant for values near 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return identical(a, b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and (isinstance(a, float) or isinstance(b, float)):
        a, b = torch.tensor(a, dtype=torch.float32), torch.tensor(b, dtype=torch.float32)
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return identical(a, b)
    if not (a.is_floating_point() or a.is_complex()) or a.dtype != b.dtype or a.shape != b.shape:
        return identical(a, b)
    if a.numel() == 0:
        return True, ""
    x, y = float64(a), float64(b)
    if not torch.equal(torch.isnan(x), torch.isnan(y)):
        return False, "NaN in different places"
    infinite = torch.isinf(x)
    if not torch.equal(infinite, torch.isinf(y)) or not torch.equal(x[infinite], y[infinite]):
        return False, "infinities differ"
    finite = torch.isfinite(x)
    x, y = x[finite], y[finite]
    if x.numel() == 0:
        return True, ""
    error = float(torch.linalg.vector_norm(x - y))
    scale = float(torch.linalg.vector_norm(x))
    relative = error / scale if scale > 0 else (0.0 if error == 0 else math.inf)
    if model is None:
        budget = max(4 * noise, rounding_eps * dtype_eps(a.dtype))
    else:
        budget = model.relative(a.dtype, noise)
    rtol, atol = default_tolerance(a.dtype)
    rtol = max(rtol, budget)
    atol = max(atol, rtol * float(x.abs().max()))
    worst = float(((x - y).abs() - rtol * x.abs()).max())
    largest = float((x - y).abs().max())
    detail = f"relative error {relative:.2g} (allowed {budget:.2g}), max |diff| {largest:.3g}"
    return relative <= budget and worst <= atol, detail


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


def same_distribution(a: Any, b: Any) -> Tuple[bool, str]:
    """Values that may come from a different random stream."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return identical(a, b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False, f"{a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}"
    if a.numel() < KS_MIN_VALUES:
        return True, "too few values for a statistical test; metadata only"
    statistic, p = ks_test(a, b)
    if p < KS_REJECT:
        return False, f"KS statistic {statistic:.3f}, p = {p:.3g}"
    problem = _support_and_moments(a, b)
    if problem:
        return False, problem
    return True, f"KS statistic {statistic:.3f}, p = {p:.3g}; support, range, mean and spread agree"


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
    if level == IDENTICAL:
        if noise > 0 and math.isfinite(noise):
            return close(a, b, noise, model=ErrorModel() if model is None else model)
        return identical(a, b)
    if level == CLOSE:
        return close(a, b, noise, model=model)
    return same_distribution(a, b)


# -- building blocks for the rules' checks ---------------------------------------------


class Findings:
    """Collects findings in order, grouping per-key ones with the same message."""

    def __init__(self) -> None:
        self._entries: List[Tuple[str, str, List[str]]] = []  # severity, message, keys
        self._groups: Dict[Tuple[str, str], List[str]] = {}

    def add(self, severity: str, message: str) -> None:
        self._entries.append((severity, message, []))

    def keyed(self, severity: str, message: str, key: str, detail: str = "") -> None:
        """``message`` about ``key``; keys with the same message share one finding."""
        keys = self._groups.get((severity, message))
        if keys is None:
            keys = self._groups[(severity, message)] = []
            self._entries.append((severity, message, keys))
        keys.append(f"`{key}`" + (f" ({detail})" if detail else ""))

    def result(self) -> List[Finding]:
        """Failures first, then warnings, then notes; otherwise in order."""
        findings = []
        for severity, message, keys in self._entries:
            if keys:
                more = f" and {len(keys) - SHOWN} more" if len(keys) > SHOWN else ""
                message = f"{message}: {', '.join(keys[:SHOWN])}{more}"
            findings.append(Finding(severity, message))
        order = {FAIL: 0, UNALIGNED: 1, WARN: 2, NOTE: 3}
        return sorted(findings, key=lambda f: order.get(f.severity, 4))

    @property
    def failed(self) -> bool:
        return any(severity == FAIL for severity, _, _ in self._entries)


def common_checks(
    original: RunData,
    fixed: RunData,
    found: Findings,
    may_lack: Callable[[str], bool] = lambda key: False,
    printed: str = IDENTICAL,
    printed_severity: str = FAIL,
    seed_free: bool = True,
) -> List[str]:
    """Key sets, nondeterminism, skipped outputs and the printed text (its numbers at
    level ``printed``; numbers that change with the seed are left out unless
    ``seed_free``); returns the keys to compare."""
    printed_checks(original, fixed, found, printed, printed_severity, seed_free)
    if not original.values:
        found.add(FAIL, "the program exposed nothing to compare (define `torchlint_outputs()`)")
    missing = [key for key in original.values if key not in fixed.values and not may_lack(key)]
    extra = [key for key in fixed.values if key not in original.values]
    for key in missing:
        found.keyed(FAIL, "missing from the fixed run's outputs", key)
    for key in extra:
        found.keyed(FAIL, "new in the fixed run's outputs", key)
    keys = []
    for key in original.values:
        if key not in fixed.values:
            continue
        if math.isinf(original.noise.get(key, 0.0)):
            found.keyed(WARN, "not compared: the original gives a different value each run", key)
            continue
        keys.append(key)
    noisy = [key for key in keys if original.noise.get(key, 0.0) > 0]
    if noisy:
        worst = max(original.noise[key] for key in noisy)
        found.add(NOTE, f"the original differs from itself between runs (relative error up to {worst:.2g}); "
                        "tolerances widened to match")
    for skipped in original.skipped:
        found.keyed(NOTE, "not compared (unsupported type)", skipped)
    if original.origin == "globals":
        found.add(NOTE, "compared what the script left in its globals: tensors, modules, optimizers, numbers, "
                        "strings, NumPy arrays and containers of these")
    return keys


def metadata_checks(
    original: RunData, fixed: RunData, keys: Iterable[str], found: Findings, autograd: bool = True
) -> None:
    """Shape, dtype, device and layout; autograd status too unless ``autograd`` is False."""
    fields = ("shape", "dtype", "device", "layout")
    for key in keys:
        a, b = original.meta.get(key), fixed.meta.get(key)
        if a is None or b is None:
            if (a is None) != (b is None):
                found.keyed(FAIL, "a tensor in one run and a plain value in the other", key)
            continue
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


def value_checks(
    original: RunData,
    fixed: RunData,
    keys: Iterable[str],
    level_of: Callable[[str], str],
    found: Findings,
    model: Optional[ErrorModel] = None,
) -> Dict[str, int]:
    """Compare values at each key's level; returns how many passed per level."""
    passed: Dict[str, int] = {}
    words = {IDENTICAL: "not identical", CLOSE: "not close", DISTRIBUTION: "not the same distribution"}
    model = model if model is not None else error_model(original, fixed)
    for key in keys:
        level = level_of(key)
        ok, detail = compare_value(
            level, original.values[key], fixed.values[key], original.noise.get(key, 0.0), model
        )
        if ok:
            passed[level] = passed.get(level, 0) + 1
        else:
            found.keyed(FAIL, f"values {words[level]}", key, detail)
    return passed


def standard_checks(
    original: RunData, fixed: RunData, found: Findings, level_of: Callable[[str], str]
) -> Dict[str, int]:
    """Key sets, metadata (autograd included) and values at ``level_of(key)``: what
    most comparisons start with.  Returns how many outputs passed per level."""
    keys = common_checks(original, fixed, found)
    metadata_checks(original, fixed, keys, found)
    return value_checks(original, fixed, keys, level_of, found)


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


def printed_checks(
    original: RunData, fixed: RunData, found: Findings, level: str = IDENTICAL, severity: str = FAIL,
    seed_free: bool = True,
) -> None:
    """What the program printed: the same text, with each number equal (``identical``;
    within the original's own spread) or within the error model plus one unit in the
    last printed digit (``close``).  Integers are always compared exactly."""
    if original.printed == fixed.printed:
        return
    skeleton, numbers = _parse(original.printed)
    fixed_skeleton, fixed_numbers = _parse(fixed.printed)
    repeat = _parse(original.printed_repeat) if original.printed_repeat is not None else (skeleton, numbers)
    other = _parse(original.printed_other_seed) if original.printed_other_seed is not None else None
    if skeleton != fixed_skeleton:
        if repeat[0] != skeleton:
            found.add(WARN, "the printed text was not compared: the original prints different text each run")
            return
        before = [line for line in original.printed.splitlines() if line not in fixed.printed.splitlines()]
        after = [line for line in fixed.printed.splitlines() if line not in original.printed.splitlines()]
        found.add(severity, f"the printed text differs: {_short(before[:1] or '(nothing)')} -> "
                            f"{_short(after[:1] or '(nothing)')}")
        return
    model = error_model(original, fixed)
    skipped = varying = 0
    for index, (a, b) in enumerate(zip(numbers, fixed_numbers)):
        if a == b:
            continue
        if not seed_free and other is not None and (other[0] != skeleton or other[1][index] != a):
            skipped += 1
            continue
        again = repeat[1][index] if repeat[0] == skeleton else a
        if _varies(a, again):
            varying += 1
            continue
        ok, detail = _printed_number(a, b, again, level, model)
        if not ok:
            found.add(severity, f"a printed number changed: {_short(_line_of(original.printed, index))} "
                                f"-> {_short(_line_of(fixed.printed, index))} ({detail})")
            return
    if skipped:
        found.add(NOTE, f"{skipped} printed number(s) change with the seed; not compared")
    if varying:
        found.add(NOTE, f"{varying} printed number(s) differ between two runs of the original by more than "
                        f"{PRINTED_VARIES:g} (times, addresses); not compared")


def _varies(a: str, again: str) -> bool:
    """Does a printed number move between two runs of the original beyond any rounding
    (a time, a memory address)?  Such numbers say nothing about the fix."""
    try:
        x, z = float(a), float(again)
    except ValueError:
        return a != again
    return x != z and abs(x - z) > PRINTED_VARIES * max(abs(x), abs(z))


def _printed_number(a: str, b: str, again: str, level: str, model: ErrorModel) -> Tuple[bool, str]:
    try:
        x, y, z = float(a), float(b), float(again)
    except ValueError:
        return False, f"{a} vs {b}"
    if not any(mark in text for text in (a, b) for mark in ".eEna"):  # integers: counts, steps, sizes
        return x == y, f"{a} vs {b}"
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or math.isinf(y):
        return False, f"{a} vs {b}"
    noise = abs(x - z) / abs(x) if x != 0 and z != x else 0.0
    allowed = 4 * noise * abs(x)
    if level == CLOSE:
        allowed = max(allowed, model.relative(torch.float32) * abs(x)) + _last_digit(a)
    return abs(x - y) <= allowed, f"{a} vs {b}, allowed difference {allowed:.3g}"


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
