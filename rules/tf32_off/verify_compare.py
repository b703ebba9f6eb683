"""The comparison of tf32-off's fix (imported only by `torchlint verify`).

The fix changes one process-wide math mode.  What is checked is that it is
exactly that mode: the fixed run allowed TF32 for float32 matmuls (precision
`high`, not the bfloat16 of `medium`), the original did not, and the values
differ by no more than that rounding explains: identical on the CPU, where
the flag selects no other kernel, close within the error model on CUDA,
whose epsilon is TF32's because the fixed run allowed it.
"""

from __future__ import annotations

from typing import List

from torchlint.verify.compare import (
    CLOSE,
    IDENTICAL,
    Context,
    Findings,
    common_checks,
    error_model,
    metadata_checks,
    summary,
)
from torchlint.verify.compare import value_checks
from torchlint.verify.results import FAIL, NOTE, Finding, RunData


def check(original: RunData, fixed: RunData, context: Context) -> List[Finding]:
    found = Findings()
    keys = common_checks(original, fixed, found)
    metadata_checks(original, fixed, keys, found)
    before = str(original.math.get("float32_matmul_precision"))
    after = str(fixed.math.get("float32_matmul_precision"))
    if before != "highest" or original.math.get("cuda_matmul_tf32"):
        found.add(FAIL, f"the original already allowed reduced float32 matmul precision ({before}): "
                        "the program no longer exercises the rule")
    if after == "medium":
        found.add(FAIL, "the fixed run used float32 matmul precision `medium` (bfloat16 products), "
                        "coarser than the TF32 the fix promises")
    elif after != "high" and not fixed.math.get("cuda_matmul_tf32"):
        found.add(FAIL, f"the fixed run did not allow TF32 for float32 matmuls (precision {after})")
    else:
        found.add(NOTE, f"float32 matmul precision: {before} before the fix, {after} after")
    level = IDENTICAL if context.device == "cpu" else CLOSE
    # The fix turns TF32 on by design: its rounding is the budget the contract declares.
    passed = value_checks(original, fixed, keys, lambda key: level, found,
                          model=error_model(original, declared=(fixed,)))
    if context.device == "cpu":
        found.add(NOTE, "on the CPU the TF32 setting selects no other kernel: outputs must be identical")
    else:
        found.add(NOTE, "known difference: on Ampere and newer GPUs, values differ by TF32 rounding")
    found.add(NOTE, summary(passed))
    return found.result()
