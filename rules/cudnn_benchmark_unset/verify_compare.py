"""The comparison of cudnn-benchmark-unset's fix (imported only by `torchlint verify`).

The fix turns on one flag.  What is checked is that it is that flag and
nothing else: the original ran with `cudnn.benchmark` off and the fixed run
with it on, the float32 matmul precision and the TF32 flags are the same in
both, and the values are identical on the CPU (cuDNN is not used there) and
close within the error model on CUDA (another algorithm rounds differently).
"""

from __future__ import annotations

from typing import List

from torchlint.verify.compare import CLOSE, IDENTICAL, Context, Findings, common_checks, metadata_checks, summary
from torchlint.verify.compare import value_checks
from torchlint.verify.results import FAIL, NOTE, Finding, RunData

_MATH = ("float32_matmul_precision", "cuda_matmul_tf32", "cudnn_tf32", "autocast")


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    found = Findings()
    keys = common_checks(original, fixed, found)
    metadata_checks(original, fixed, keys, found)
    before = _benchmark(original)
    after = _benchmark(fixed)
    if before is not False:
        found.add(FAIL, "the original did not run with `cudnn.benchmark` off: the program no longer "
                        "exercises the rule")
    if after is not True:
        found.add(FAIL, "the fixed run did not run with `cudnn.benchmark` on")
    if before is False and after is True:
        found.add(NOTE, "`cudnn.benchmark`: off before the fix, on after")
    for name in _MATH:
        if original.math.get(name) != fixed.math.get(name):
            found.add(FAIL, f"the fix changed another math mode: {name} "
                            f"{original.math.get(name)!r} -> {fixed.math.get(name)!r}")
    level = IDENTICAL if context.device == "cpu" else CLOSE
    passed = value_checks(original, fixed, keys, lambda key: level, found)
    if context.device != "cpu":
        found.add(NOTE, "known difference: cuDNN may choose another convolution algorithm, which rounds differently")
    found.add(NOTE, summary(passed))
    return found.result()


def _benchmark(run: RunData) -> object:
    flags = run.env.get("flags")
    return flags.get("cudnn_benchmark") if isinstance(flags, dict) else None
