"""The comparison of loss-accumulated-with-graph's fix (imported only by `torchlint verify`).

Everything the program computes and prints must be identical, except that a
running total may stop requiring grad (so printed tensors lose their
`grad_fn=...`).  The rule's probe counts, after every optimizer step, the
autograd nodes each tensor in the program's frames keeps alive: a total that
holds every step's graph grows step after step before the fix, and nothing
may grow after it.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence

import torch

from torchlint.verify.compare import (
    CLOSE,
    Context,
    Findings,
    common_checks,
    device_level,
    error_model,
    metadata_checks,
    summary,
    value_checks,
)
from torchlint.verify.results import FAIL, NOTE, UNALIGNED, Finding, RunData

PROBE = "kept-graphs"


def growing(steps: Sequence[Mapping[str, int]]) -> Dict[str, List[int]]:
    """The tensors whose graph grew at each of three steps in a row or more (a running total of
    losses keeps each step's graph; it may start over each epoch), with their longest such run."""
    series: Dict[str, List[int]] = {}
    for held in steps:
        for name, count in held.items():
            series.setdefault(name, []).append(int(count))
    found: Dict[str, List[int]] = {}
    for name, counts in series.items():
        run: List[int] = counts[:1]
        longest: List[int] = []
        for count in counts[1:]:
            run = run + [count] if count > run[-1] else [count]
            if len(run) > len(longest):
                longest = run
        if len(longest) >= 3:
            found[name] = longest
    return found


def output_key(name: str) -> str:
    """The output a probe's name stands for: ``train.total`` (a local of ``train``) is
    ``train().total``; a global keeps its name."""
    function, dot, variable = name.rpartition(".")
    if not dot:
        return name
    if function.endswith(".self"):
        return f"{function[:-len('.self')]}().self.{variable}"
    return f"{function}().{variable}"


def _as_tensor(value: Any) -> Any:
    """A running total kept as a Python number, as the 0-dim float32 tensor the loss sums were."""
    if isinstance(value, float):
        return torch.tensor(value, dtype=torch.float32)
    if isinstance(value, torch.Tensor) and value.dim() == 0 and value.is_floating_point():
        return value.float()
    return value


def _number_or_scalar(a: Any, b: Any) -> bool:
    """One side a 0-dim floating tensor, the other a Python float: `.item()` taken earlier."""
    def scalar(value: Any) -> bool:
        return isinstance(value, torch.Tensor) and value.dim() == 0 and value.is_floating_point()

    return (scalar(a) and isinstance(b, float)) or (isinstance(a, float) and scalar(b))


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    found = Findings()
    level = device_level(context)
    before, after = original.probes.get(PROBE), fixed.probes.get(PROBE)
    observed = isinstance(before, dict) and isinstance(after, dict)
    leak_before = growing(before.get("steps", ())) if isinstance(before, dict) else {}
    leak_after = growing(after.get("steps", ())) if isinstance(after, dict) else {}
    # A total that leaked may become a Python number (`total += loss.item()`): summed in float64
    # instead of float32, it is compared as close, and printed numbers likewise.
    totals = {output_key(name) for name in leak_before}
    keys = common_checks(original, fixed, found, printed=CLOSE if totals else level, autograd=False)
    totals |= {key for key in keys if _number_or_scalar(original.values[key], fixed.values[key])}
    metadata_checks(original, fixed, [key for key in keys if key not in totals], found, autograd=False)
    plain = [key for key in keys if key not in totals]
    passed = value_checks(original, fixed, plain, lambda key: level, found)
    for key in keys:
        if key in totals:
            outcome = found.compare(key, CLOSE, _as_tensor(original.values[key]), _as_tensor(fixed.values[key]),
                                    model=error_model(original))
            if outcome.ok:
                passed[CLOSE] = passed.get(CLOSE, 0) + 1
    if not observed:
        found.add(UNALIGNED, "the autograd graphs the program kept were not observed")
        return found.result()
    for name, counts in leak_after.items():
        found.keyed(FAIL, "after the change this tensor still keeps a graph that grows every step", name,
                    f"{counts[0]} -> {counts[-1]} nodes over {len(counts)} steps")
    if leak_before:
        name, counts = next(iter(leak_before.items()))
        found.add(NOTE, f"before the change `{name}` kept a growing autograd graph ({counts[0]} nodes after its "
                        f"first step, {counts[-1]} after step {len(counts)})"
                        + ("; after it nothing grows" if not leak_after else ""))
    elif not isinstance(before, dict) or not before.get("steps"):
        found.add(NOTE, "the program took no optimizer step, so no graph kept across steps could be observed")
    else:
        found.add(NOTE, "no tensor in the program's frames kept a graph that grew step after step in the original")
    found.add(NOTE, "known difference: the running total no longer requires grad")
    found.add(NOTE, summary(passed))
    return found.result()
