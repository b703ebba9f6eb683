"""Check an original run against a fixed run, rule by rule (needs torch).

Each rule's check implements its contract in ``contracts.py``.  Outputs are
the flattened ``{key: tensor or value}`` the harness saved; ``meta`` holds
each tensor's shape, dtype, device and autograd status before it was saved.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import torch

from torchlint.verify.results import FAIL, NOTE, WARN, Finding, RunData

IDENTICAL = "identical"
CLOSE = "close"
DISTRIBUTION = "distribution"

# Relative L2 error allowed for "close", in units of the dtype's epsilon.
# Rounding in a few training steps of a small network stays far below it
# (about 1 eps in the programs shipped); a real change is far above.
ROUNDING_EPS = 64
KS_REJECT = 1e-3  # p-value below which "same distribution" is rejected
KS_MIN_VALUES = 20  # fewer values: only metadata is checked
BIAS_GRAD_EPS = 1e4  # a cancelled bias's gradient norm / its weight's, in eps units
SHOWN = 4  # keys listed per finding before "and N more"


@dataclass(frozen=True)
class Context:
    """What a check needs besides the two runs."""

    device: str  # "cpu" or "cuda"


Checker = Callable[[RunData, RunData, Context], List[Finding]]


@dataclass(frozen=True)
class Check:
    """A rule's check, and whether the original needs a run with another seed."""

    run: Checker
    seed_probe: bool = False


# -- value comparisons ----------------------------------------------------------------


def _float64(tensor: torch.Tensor) -> torch.Tensor:
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
            x, y = _float64(a), _float64(b)
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


def _eps(dtype: torch.dtype) -> float:
    real = {torch.complex64: torch.float32, torch.complex128: torch.float64}.get(dtype, dtype)
    return float(torch.finfo(real).eps) if real.is_floating_point else 0.0


def close(a: Any, b: Any, noise: float = 0.0, rounding_eps: float = ROUNDING_EPS) -> Tuple[bool, str]:
    """Equal up to rounding: relative L2 error within ``max(4 * noise,
    rounding_eps * eps)`` and every element within ``assert_close``'s rtol
    plus an atol of rtol times the largest magnitude (so large values'
    rounding does not fail an absolute tolerance meant for values near 1)."""
    if isinstance(a, float) and isinstance(b, float):
        a, b = torch.tensor(a, dtype=torch.float32), torch.tensor(b, dtype=torch.float32)
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return identical(a, b)
    if not (a.is_floating_point() or a.is_complex()) or a.dtype != b.dtype or a.shape != b.shape:
        return identical(a, b)
    if a.numel() == 0:
        return True, ""
    x, y = _float64(a), _float64(b)
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
    budget = max(4 * noise, rounding_eps * _eps(a.dtype))
    rtol, atol = default_tolerance(a.dtype)
    atol = max(atol, rtol * float(x.abs().max()))
    worst = float(((x - y).abs() - rtol * x.abs()).max())
    largest = float((x - y).abs().max())
    detail = f"relative error {relative:.2g} (allowed {budget:.2g}), max |diff| {largest:.3g}"
    return relative <= budget and worst <= atol, detail


def ks_test(a: torch.Tensor, b: torch.Tensor) -> Tuple[float, float]:
    """Two-sample Kolmogorov-Smirnov statistic and asymptotic p-value."""
    x = torch.sort(_float64(a).reshape(-1)).values
    y = torch.sort(_float64(b).reshape(-1)).values
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
    return p >= KS_REJECT, f"KS statistic {statistic:.3f}, p = {p:.3g}"


def compare_value(level: str, a: Any, b: Any, noise: float = 0.0) -> Tuple[bool, str]:
    if level == IDENTICAL:
        return identical(a, b)
    if level == CLOSE:
        return close(a, b, noise)
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
        order = {FAIL: 0, WARN: 1, NOTE: 2}
        return sorted(findings, key=lambda f: order.get(f.severity, 3))

    @property
    def failed(self) -> bool:
        return any(severity == FAIL for severity, _, _ in self._entries)


def common_checks(
    original: RunData, fixed: RunData, found: Findings, may_lack: Callable[[str], bool] = lambda key: False
) -> List[str]:
    """Key sets, nondeterminism and skipped outputs; returns the keys to compare."""
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
        found.add(NOTE, "compared the tensors, modules and optimizers left in the script's globals")
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
    original: RunData, fixed: RunData, keys: Iterable[str], level_of: Callable[[str], str], found: Findings
) -> Dict[str, int]:
    """Compare values at each key's level; returns how many passed per level."""
    passed: Dict[str, int] = {}
    words = {IDENTICAL: "not identical", CLOSE: "not close", DISTRIBUTION: "not the same distribution"}
    for key in keys:
        level = level_of(key)
        ok, detail = compare_value(level, original.values[key], fixed.values[key], original.noise.get(key, 0.0))
        if ok:
            passed[level] = passed.get(level, 0) + 1
        else:
            found.keyed(FAIL, f"values {words[level]}", key, detail)
    return passed


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


def _summary(passed: Mapping[str, int]) -> str:
    parts = [f"{count} {level}" for level, count in passed.items() if count]
    return "outputs compared: " + (", ".join(parts) if parts else "none")


def _top_key(key: str) -> str:
    return key.split(".", 1)[0].split("[", 1)[0]


# -- the rules ------------------------------------------------------------------------------


def check_tl101(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    found = Findings()
    keys = common_checks(original, fixed, found)
    metadata_checks(original, fixed, keys, found)
    if any(original.meta.get(k, {}).get("is_leaf") != fixed.meta.get(k, {}).get("is_leaf") for k in keys):
        found.add(NOTE, "a factory with `requires_grad=True` followed by `.to()` is a non-leaf copy; created "
                        "on the device it is a leaf, so the fix changes which tensor receives `.grad`")

    def level(key: str) -> str:
        return DISTRIBUTION if key in original.seed_dependent else IDENTICAL

    rounding: List[str] = []
    passed: Dict[str, int] = {}
    for key in keys:
        kind = level(key)
        ok, detail = compare_value(kind, original.values[key], fixed.values[key])
        if not ok and kind == IDENTICAL and context.device == "cuda":
            # CPU and CUDA kernels of float arange/linspace may round differently.
            ok, detail = close(original.values[key], fixed.values[key], rounding_eps=4)
            if ok:
                rounding.append(key)
        if ok:
            passed[kind] = passed.get(kind, 0) + 1
        else:
            words = "not identical" if kind == IDENTICAL else "not the same distribution"
            found.keyed(FAIL, f"values {words}", key, detail)
    for key in rounding:
        found.keyed(NOTE, "equal up to last-bit rounding (the CPU and CUDA kernels differ)", key)
    random_keys = [k for k in keys if k in original.seed_dependent]
    if random_keys:
        same = sum(1 for k in random_keys if identical(original.values[k], fixed.values[k])[0])
        found.add(
            NOTE,
            f"{len(random_keys)} output(s) depend on the seed and were checked by distribution; "
            + (f"{same} came out identical on this device" if same else "their values differ, as expected"),
        )
    shift = rng_shift(original, fixed)
    if shift:
        found.add(WARN, f"RNG-stream shift ({shift} generator): later random numbers of the program change, "
                        "since the fixed code no longer draws from the CPU generator")
    found.add(NOTE, _summary(passed))
    return found.result()


def check_tl201(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    del context
    found = Findings()
    keys = common_checks(original, fixed, found)
    metadata_checks(original, fixed, keys, found)
    passed = value_checks(original, fixed, keys, lambda key: IDENTICAL, found)
    for dataset in fixed.datasets or original.datasets:
        if dataset.get("iterable"):
            found.add(WARN, f"`{dataset['class']}` is an IterableDataset: unless it shards itself with "
                            "`get_worker_info()`, every worker yields every sample")
        elif dataset.get("random_getitem"):
            found.add(WARN, f"`{dataset['class']}.__getitem__` uses randomness: with workers it draws from "
                            "per-worker seeds, so its values change (and depend on the worker count)")
    shift = rng_shift(original, fixed)
    if shift:
        found.add(WARN, f"RNG-stream shift ({shift} generator): the main process's random stream ends "
                        "elsewhere, so later random numbers change")
    found.add(NOTE, _summary(passed))
    return found.result()


def check_tl301(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    found = Findings()
    keys = common_checks(original, fixed, found)
    metadata_checks(original, fixed, keys, found, autograd=False)
    released = []
    for key in keys:
        a, b = original.meta.get(key), fixed.meta.get(key)
        if a is None or b is None:
            continue
        if a.get("requires_grad") and not b.get("requires_grad"):
            released.append(key)
        elif b.get("requires_grad") and not a.get("requires_grad"):
            found.keyed(FAIL, "requires grad only after the fix", key)
    level = IDENTICAL if context.device == "cpu" else CLOSE
    passed = value_checks(original, fixed, keys, lambda key: level, found)
    if released:
        found.add(NOTE, f"{len(released)} output(s) no longer require grad, as the contract expects")
    else:
        found.add(WARN, "no output stopped requiring grad: the fix had no visible effect on the outputs")
    found.add(NOTE, _summary(passed))
    return found.result()


def check_tl302(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    del context
    found = Findings()
    keys = common_checks(original, fixed, found)
    metadata_checks(original, fixed, keys, found)
    passed = value_checks(original, fixed, keys, lambda key: IDENTICAL, found)
    idle = max(
        fixed.optimizer_steps.get("most_without_grad", 0), original.optimizer_steps.get("most_zero_grad", 0)
    )
    steps = original.optimizer_steps.get("steps", 0)
    if idle:
        found.add(WARN, f"up to {idle} parameter(s) had no gradient at an optimizer step: with "
                        "`set_to_none=True` the optimizer skips them, where a zero gradient still moved them through momentum, "
                        "weight decay or Adam's moment estimates")
    elif steps:
        found.add(NOTE, f"every parameter had a gradient at each of the {steps} optimizer steps")
    found.add(NOTE, "known difference: a parameter with no gradient in a step is skipped instead of updated "
                    "with zeros")
    found.add(NOTE, _summary(passed))
    return found.result()


@dataclass(frozen=True)
class _RemovedBias:
    key: str  # the state-dict key in the original's outputs, e.g. "model.0.bias"
    owner: str  # the output the module came from, e.g. "model"
    name: str  # the parameter's name in the module, e.g. "0.bias"

    def covers(self, key: str) -> bool:
        """Does ``key`` belong to this parameter (its state, gradient or optimizer state)?"""
        return (
            key == self.key
            or key.endswith("." + self.name)
            or f"[{self.key}]" in key
            or f"[{self.name}]" in key
        )


def check_tl401(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    del context
    found = Findings()
    removed = [
        _RemovedBias(key, str(meta.get("owner", "")), str(meta.get("name", "")))
        for key, meta in original.meta.items()
        if key not in fixed.values
        and meta.get("source") == "module"
        and str(meta.get("name", "")).endswith("bias")
    ]
    if not removed:
        found.add(FAIL, "no convolution bias disappeared from the model's state: the fix had no visible effect")
    keys = common_checks(original, fixed, found, may_lack=lambda key: any(r.covers(key) for r in removed))
    metadata_checks(original, fixed, keys, found)
    order = list(original.values)
    paired: Dict[str, _RemovedBias] = {}
    unabsorbed_max = 0.0
    bias_max = 0.0
    for bias in removed:
        running_mean = _nearest_norm(bias, order, original)
        if running_mean is None:
            found.keyed(WARN, "no batch norm with running statistics and a matching size sits next to the "
                              "removed bias in the model; checked through outputs and gradients only", bias.key)
            continue
        paired[running_mean] = bias
        if running_mean not in fixed.values:
            found.keyed(FAIL, "the batch norm next to the removed bias is gone from the fixed model",
                        running_mean)
            continue
        ok, message, unabsorbed = _absorbed(bias, running_mean, original, fixed)
        unabsorbed_max = max(unabsorbed_max, unabsorbed)
        bias_max = max(bias_max, float(original.values[bias.key].abs().max()))
        found.keyed(NOTE if ok else FAIL, message, running_mean)
    for key in order:
        is_gradient = any(r.covers(key) and key != r.key and key.endswith(r.name) for r in removed)
        if not is_gradient or key in fixed.values:
            continue
        weight = key[: -len("bias")] + "weight"
        if weight in original.values:
            ok, detail = _cancelled(original.values[key], original.values[weight])
            found.keyed(NOTE if ok else FAIL, "gradient of the removed bias" +
                        (" is rounding noise: the batch norm cancels it" if ok else " is not negligible: "
                         "the batch norm does not cancel this bias"), key, detail)
    eval_keys = [key for key in keys if _top_key(key).startswith("eval")]
    train_keys = [key for key in keys if key not in paired and key not in eval_keys]
    passed = value_checks(original, fixed, train_keys, lambda key: CLOSE, found)
    negligible = unabsorbed_max <= 1e-6 * max(bias_max, 1e-12)
    for key in eval_keys:
        ok, detail = close(original.values[key], fixed.values[key], original.noise.get(key, 0.0))
        if ok:
            passed[CLOSE] = passed.get(CLOSE, 0) + 1
        elif negligible:
            found.keyed(FAIL, "eval-mode output differs although the running means absorbed the whole bias",
                        key, detail)
        else:
            a, b = original.values[key], fixed.values[key]
            gap = float((_float64(a) - _float64(b)).abs().max()) if isinstance(a, torch.Tensor) else math.nan
            found.keyed(WARN, f"eval-mode output differs by up to {gap:.3g}, from the old bias the running "
                              f"means have not absorbed yet (up to {unabsorbed_max:.3g} at a norm's input); "
                              "it shrinks by (1 - momentum) per training step, or fold it now with "
                              "`bn.running_mean -= conv.bias`", key)
    if removed:
        found.add(NOTE, f"the state_dict loses {', '.join('`' + r.name + '`' for r in removed)}: loading a "
                        "checkpoint saved before the fix with strict=True raises \"Unexpected key(s)\", and a "
                        "saved optimizer state no longer matches its parameter groups")
    found.add(NOTE, _summary(passed))
    return found.result()


def _nearest_norm(bias: _RemovedBias, order: Sequence[str], run: RunData) -> Optional[str]:
    """The batch norm ``running_mean`` of the bias's size that follows it in the
    module's state (or, failing that, precedes it: modules may register the norm first)."""
    start = order.index(bias.key)
    shape = run.meta[bias.key].get("shape")
    same_module = [
        (index, key) for index, key in enumerate(order) if run.meta.get(key, {}).get("owner") == bias.owner
    ]
    after = [key for index, key in same_module if index > start]
    before = [key for index, key in reversed(same_module) if index < start]
    for key in after + before:
        if key in run.batchnorms and run.meta[key].get("shape") == shape:
            return key
    return None


def _absorbed(
    bias: _RemovedBias, running_mean: str, original: RunData, fixed: RunData
) -> Tuple[bool, str, float]:
    """Is the running means' difference the EMA of the old bias?  (ok, message, unabsorbed)"""
    info = original.batchnorms[running_mean]
    b = _float64(original.values[bias.key])
    moved = _float64(original.values[running_mean]) - _float64(fixed.values[running_mean])
    count_value = original.values.get(str(info.get("count")))
    steps = int(count_value) if isinstance(count_value, torch.Tensor) else 0
    momentum = info.get("momentum")
    share = 1.0 - (1.0 - float(momentum)) ** steps if momentum is not None else (1.0 if steps else 0.0)
    expected = b * share
    scale = max(float(b.abs().max()), float(_float64(original.values[running_mean]).abs().max()), 1e-12)
    error = float((moved - expected).abs().max())
    unabsorbed = float((b - moved).abs().max())
    ok = error <= 1e-3 * scale
    mom = "cumulative" if momentum is None else f"momentum {momentum}"
    if ok:
        message = (f"running mean moved by the absorbed part of the old bias ({share:.3f} of it after "
                   f"{steps} steps, {mom}); unabsorbed: up to {unabsorbed:.3g}")
    else:
        message = (f"running mean moved by something other than the old bias (off by {error:.3g} from "
                   f"{share:.3f} x bias after {steps} steps, {mom})")
    return ok, message, unabsorbed


def _cancelled(bias_grad: Any, weight_grad: Any) -> Tuple[bool, str]:
    if not (isinstance(bias_grad, torch.Tensor) and isinstance(weight_grad, torch.Tensor)):
        return True, ""
    ratio = float(torch.linalg.vector_norm(_float64(bias_grad))) / max(
        float(torch.linalg.vector_norm(_float64(weight_grad))), 1e-30
    )
    allowed = BIAS_GRAD_EPS * _eps(bias_grad.dtype)
    return ratio <= allowed, f"|grad b| / |grad W| = {ratio:.2g}, allowed {allowed:.2g}"


def check_generic(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    del context
    found = Findings()
    keys = common_checks(original, fixed, found)
    metadata_checks(original, fixed, keys, found)
    passed = value_checks(original, fixed, keys, lambda key: CLOSE, found)
    found.add(NOTE, "this rule has no contract of its own; checked that every output is close")
    found.add(NOTE, _summary(passed))
    return found.result()


CHECKS: Dict[str, Check] = {
    "TL101": Check(check_tl101, seed_probe=True),
    "TL201": Check(check_tl201),
    "TL301": Check(check_tl301),
    "TL302": Check(check_tl302),
    "TL401": Check(check_tl401),
}


def check_for(code: str) -> Check:
    return CHECKS.get(code.upper(), Check(check_generic))

