"""The comparison of tensor-created-then-moved's fix (imported only by `torchlint verify`)."""

from __future__ import annotations

from typing import Dict, List

from torchlint.verify.compare import (
    CLOSE,
    DISTRIBUTION,
    IDENTICAL,
    Context,
    Findings,
    close_outcome,
    common_checks,
    compare_outcome,
    identical,
    metadata_checks,
    rng_shift,
    summary,
)
from torchlint.verify.results import FAIL, NOTE, WARN, Finding, RunData


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    found = Findings()
    # On the CPU the fixed factory draws from the very generator the original used:
    # every value, random or not, and everything printed must come out identical.
    same_generator = context.device == "cpu"
    keys = common_checks(original, fixed, found, seed_free=same_generator)
    metadata_checks(original, fixed, keys, found)
    if any(original.meta.get(k, {}).get("is_leaf") != fixed.meta.get(k, {}).get("is_leaf") for k in keys):
        found.add(NOTE, "a factory with `requires_grad=True` followed by `.to()` is a non-leaf copy; created "
                        "on the device it is a leaf, so the fix changes which tensor receives `.grad`")

    def level(key: str) -> str:
        return DISTRIBUTION if key in original.seed_dependent and not same_generator else IDENTICAL

    rounding: List[str] = []
    passed: Dict[str, int] = {}
    for key in keys:
        kind = level(key)
        a, b = original.values[key], fixed.values[key]
        outcome = compare_outcome(kind, a, b, original.noise.get(key, 0.0))
        if not outcome.ok and kind == IDENTICAL and context.device == "cuda":
            # CPU and CUDA kernels of float arange/linspace may round differently.
            rounded = close_outcome(a, b, rounding_eps=4)
            if rounded.ok:
                rounding.append(key)
                kind, outcome = CLOSE, rounded
        found.record(key, kind, a, outcome)
        if outcome.ok:
            passed[kind] = passed.get(kind, 0) + 1
        else:
            words = "not identical" if kind == IDENTICAL else "not the same distribution"
            found.keyed(FAIL, f"values {words}", key, outcome.detail)
    for key in rounding:
        found.keyed(NOTE, "equal up to last-bit rounding (the CPU and CUDA kernels differ)", key)
    random_keys = [k for k in keys if k in original.seed_dependent]
    if random_keys and same_generator:
        found.add(NOTE, f"{len(random_keys)} output(s) depend on the seed; on the CPU the fixed code draws from "
                        "the same generator, so they were required to be identical")
    elif random_keys:
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
    found.add(NOTE, summary(passed))
    return found.result()
