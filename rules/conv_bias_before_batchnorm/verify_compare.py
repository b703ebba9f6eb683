"""The comparison of conv-bias-before-batchnorm's fix (imported only by `torchlint verify`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import torch

from torchlint.verify.compare import (
    CLOSE,
    IDENTICAL,
    Context,
    ErrorModel,
    Findings,
    Outcome,
    close,
    close_outcome,
    common_checks,
    dtype_eps,
    error_model,
    exact_level,
    float64,
    metadata_checks,
    rng_shift,
    summary,
    value_kind,
)
from torchlint.verify.results import FAIL, NOTE, PASSED, UNALIGNED, WARN, Finding, OutputResult, RunData

BIAS_GRAD_EPS = 1e4  # a cancelled bias's gradient norm / its weight's, in eps units
PROBE = "batchnorm-pairs"  # the rule's probe (verify_probe.py)
# The checks of this contract, as the per-output results name them besides "close":
REPLAYED = "close to the original model replayed with the absorbed bias"
ABSORBED = "moved by the absorbed share of the removed bias"
CANCELLED = "gradient of a removed bias cancelled by the batch norm"


@dataclass(frozen=True)
class _RemovedBias:
    key: str  # the state-dict key in the original's outputs, e.g. "model.0.bias"
    owner: str  # the output the module came from, e.g. "model"
    name: str  # the parameter's name in the module, e.g. "0.bias"

    def covers(self, key: str, meta: Mapping[str, Any]) -> bool:
        """Does ``key`` (with its ``meta``) belong to this parameter: its state, its gradient,
        its optimizer state, or a gradient the program collected under the parameter's name?
        The state of another module (a second model with the same layer names, a checkpoint
        or a copy of this model's state) is never this parameter's, whatever its name."""
        if key == self.key or key == self.key + ".grad":
            return True
        if meta.get("source") == "module" or (meta.get("source") == "grad" and meta.get("owner") != self.owner):
            return False
        return key.endswith("." + self.name) or f"[{self.key}]" in key or f"[{self.name}]" in key


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
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
    probe = original.probes.get(PROBE, {})
    model = error_model(original, fixed, float(probe.get("amplification", 1.0)))
    removed_names = ",".join(sorted({r.name for r in removed}))
    recorded = list(probe.get("eval_calls", ()))
    calls = [(call["output"], call.get("predictions", {"": call["predicted"]}).get(removed_names))
             for call in recorded]
    unreplayed = any(predicted is None for _, predicted in calls)
    calls = [(output, predicted) for output, predicted in calls if predicted is not None]
    eval_changes = unreplayed or any(not close(out, predicted, model=model)[0] for out, predicted in calls)
    shift = rng_shift(original, fixed)
    # Why an output may differ that neither the contract nor a replay accounts for.  When
    # the trained state itself differs, training changed: nothing is excused.
    cause = ""
    if _state_differs(original, fixed, model):
        cause = ""
    elif eval_changes:
        cause = ("the program ran the model in eval mode, where the fix changes outputs by the part of the "
                 "bias the running means have not absorbed, and this output is not the return value of a "
                 "model call verify could replay")
    elif shift:
        cause = (f"the fixed run drew a different amount from the {shift} random generator, so later "
                 "random numbers cannot be aligned")
    keys = common_checks(original, fixed, found,
                         may_lack=lambda key: any(r.covers(key, original.meta.get(key, {})) for r in removed),
                         printed=CLOSE, printed_severity=UNALIGNED if cause else FAIL)
    metadata_checks(original, fixed, keys, found)
    order = list(original.values)
    noise_only = _kept_cancelled(original, fixed, order, removed)
    paired: Dict[str, _RemovedBias] = {}
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
        outcome = _absorbed(bias, running_mean, original, fixed)
        found.keyed(NOTE if outcome.ok else FAIL, outcome.detail, running_mean)
        found.output(OutputResult(running_mean, value_kind(original.values[running_mean]), ABSORBED,
                                  PASSED if outcome.ok else FAIL, outcome.difference, outcome.allowed,
                                  outcome.measure, outcome.detail))
    for key in order:
        is_gradient = any(r.covers(key, original.meta.get(key, {})) and key != r.key
                          and (key.endswith(r.name) or key == r.key + ".grad") for r in removed)
        if not is_gradient or key in fixed.values:
            continue
        weight = key[: -len("bias.grad")] + "weight.grad" if key.endswith(".grad") else key[: -len("bias")] + "weight"
        if weight in original.values:
            outcome = _cancelled(original.values[key], original.values[weight])
            found.keyed(NOTE if outcome.ok else FAIL, "gradient of the removed bias" +
                        (" is rounding noise: the batch norm cancels it" if outcome.ok else " is not negligible: "
                         "the batch norm does not cancel this bias"), key, outcome.detail)
            found.output(OutputResult(key, value_kind(original.values[key]), CANCELLED,
                                      PASSED if outcome.ok else FAIL, outcome.difference, outcome.allowed,
                                      outcome.measure, outcome.detail))
    passed: Dict[str, int] = {}
    replayed = 0
    for key in keys:
        if key in paired:
            continue
        a, b = original.values[key], fixed.values[key]
        noise = original.noise.get(key, 0.0)
        if exact_level(original, key, CLOSE) != CLOSE:
            found.compare(key, IDENTICAL, a, b)
            continue
        weight_grad = noise_only.get(key)
        if weight_grad is not None and _cancelled(a, original.values.get(weight_grad)).ok \
                and _cancelled(b, fixed.values.get(weight_grad)).ok:
            found.record(key, CANCELLED, a, Outcome(True, "rounding noise in both runs: the batch norm cancels "
                                                          "this bias", None, None, "|grad b| / |grad W|"))
            passed[CLOSE] = passed.get(CLOSE, 0) + 1
            continue
        predicted = _replayed(a, calls)
        if predicted is not None:
            outcome = close_outcome(predicted, b, noise, model=model)
            found.record(key, REPLAYED, a, outcome)
            replayed += outcome.ok
            if not outcome.ok:
                found.keyed(FAIL, "eval-mode output is not what the removed bias accounts for (compared "
                                  "with the original model replayed with the absorbed part of its bias)",
                            key, outcome.detail)
                continue
        else:
            outcome = close_outcome(a, b, noise, model=model)
            found.record(key, CLOSE, a, outcome)
            if not outcome.ok:
                if cause and not _is_state(original, key):
                    found.keyed(UNALIGNED, f"differs, and cannot be judged: {cause}", key, outcome.detail)
                else:
                    found.keyed(FAIL, "values not close", key, outcome.detail)
                continue
        passed[CLOSE] = passed.get(CLOSE, 0) + 1
    if replayed:
        found.add(NOTE, f"{replayed} eval-mode output(s) matched the original model replayed with the part of "
                        "the bias the running means absorbed")
    found.add(NOTE, f"allowed rounding error: {model.describe()}")
    if removed:
        found.add(NOTE, f"the state_dict loses {', '.join('`' + r.name + '`' for r in removed)}: loading a "
                        "checkpoint saved before the fix with strict=True raises \"Unexpected key(s)\", and a "
                        "saved optimizer state no longer matches its parameter groups")
    found.add(NOTE, summary(passed))
    return found.result()


def _kept_cancelled(original: RunData, fixed: RunData, order: Sequence[str],
                    removed: Sequence[_RemovedBias]) -> Dict[str, str]:
    """For a bias the fix kept in front of a batch norm (a fix may remove only some): its
    gradient and optimizer state are rounding noise, compared by their size next to the
    weight's gradient, not as values.  ``{such key: the weight's gradient key}``."""
    found: Dict[str, str] = {}
    gone = {r.key for r in removed}
    for key, meta in original.meta.items():
        name = str(meta.get("name", ""))
        if (meta.get("source") != "module" or not name.endswith("bias") or key in gone
                or key not in fixed.values):
            continue
        bias = _RemovedBias(key, str(meta.get("owner", "")), name)
        if _nearest_norm(bias, order, original) is None:
            continue
        weight_grad = key[: -len("bias")] + "weight.grad"
        for other in original.values:
            if other != key and bias.covers(other, original.meta.get(other, {})):
                found[other] = weight_grad
    return found


def _is_state(run: RunData, key: str) -> bool:
    return run.meta.get(key, {}).get("source") in ("module", "optimizer")


def _state_differs(original: RunData, fixed: RunData, model: ErrorModel) -> bool:
    """Does any weight or optimizer state (running means aside) differ beyond rounding?"""
    for key, value in original.values.items():
        if key in fixed.values and key not in original.batchnorms and _is_state(original, key):
            if not close(value, fixed.values[key], original.noise.get(key, 0.0), model=model)[0]:
                return True
    return False


def _replayed(value: Any, calls: Sequence[Tuple[Any, Any]]) -> Optional[torch.Tensor]:
    """The replayed prediction for an output that is the return value of an eval-mode call."""
    if not isinstance(value, torch.Tensor):
        return None
    for output, predicted in calls:
        if output.shape == value.shape and output.dtype == value.dtype and torch.equal(output, value):
            result: torch.Tensor = predicted
            return result
    return None


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


def _absorbed(bias: _RemovedBias, running_mean: str, original: RunData, fixed: RunData) -> Outcome:
    """Is the running means' difference the EMA of the old bias?  Measured: the largest gap
    between how far each running mean moved and the share of the old bias it absorbed."""
    info = original.batchnorms[running_mean]
    b = float64(original.values[bias.key])
    moved = float64(original.values[running_mean]) - float64(fixed.values[running_mean])
    count_value = original.values.get(str(info.get("count")))
    steps = int(count_value) if isinstance(count_value, torch.Tensor) else 0
    momentum = info.get("momentum")
    share = 1.0 - (1.0 - float(momentum)) ** steps if momentum is not None else (1.0 if steps else 0.0)
    expected = b * share
    scale = max(float(b.abs().max()), float(float64(original.values[running_mean]).abs().max()), 1e-12)
    error = float((moved - expected).abs().max())
    unabsorbed = float((b - moved).abs().max())
    allowed = 1e-3 * scale
    ok = error <= allowed
    mom = "cumulative" if momentum is None else f"momentum {momentum}"
    if ok:
        message = (f"running mean moved by the absorbed part of the old bias ({share:.3f} of it after "
                   f"{steps} steps, {mom}); unabsorbed: up to {unabsorbed:.3g}")
    else:
        message = (f"running mean moved by something other than the old bias (off by {error:.3g} from "
                   f"{share:.3f} x bias after {steps} steps, {mom})")
    return Outcome(ok, message, error, allowed, "largest gap between the move and the absorbed share of the bias")


def _cancelled(bias_grad: Any, weight_grad: Any) -> Outcome:
    measure = "|grad b| / |grad W|"
    if not (isinstance(bias_grad, torch.Tensor) and isinstance(weight_grad, torch.Tensor)):
        return Outcome(True, "", None, None, measure)
    ratio = float(torch.linalg.vector_norm(float64(bias_grad))) / max(
        float(torch.linalg.vector_norm(float64(weight_grad))), 1e-30
    )
    allowed = BIAS_GRAD_EPS * dtype_eps(bias_grad.dtype)
    return Outcome(ratio <= allowed, f"{measure} = {ratio:.2g}, allowed {allowed:.2g}", ratio, allowed, measure)
