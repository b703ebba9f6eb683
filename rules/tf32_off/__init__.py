"""TL603 tf32-off."""

from __future__ import annotations

from typing import Optional

from torchlint.analysis.frameworks import FrameworkCall, keeps_off_cuda
from torchlint.analysis.queries import name_used
from torchlint.analysis.workload import Workload
from torchlint.data.apidata import Framework, frameworks
from torchlint.ruleapi.rule import Example, FixAvailability, FixRequest, TorchRange, TorchVersion
from torchlint.ruleapi.verification import Contract, VerificationSpec

from .._suggestion import Suggestion, insert_after_imports

_PRECISION_API = TorchVersion(1, 12)


class Tf32Off(Suggestion):
    """## What it does
    A suggestion, off by default.  Reports a program's entry point (a file
    with an `if __name__ == "__main__":` block, or a training loop in its
    module body) that trains on CUDA (a loop whose iterations call
    `backward()` and a `step()`, in a file that calls into `torch.cuda`, calls `.cuda()` or
    names a `"cuda"` device) when no file of the project enables TF32 for
    float32 matrix multiplications: none refers to
    `torch.backends.cuda.matmul.allow_tf32`,
    `torch.set_float32_matmul_precision`, or the `fp32_precision` settings
    of `torch.backends` (torch 2.9).  Any setting counts, even one that
    turns TF32 off: the choice was made.  It fires at most once per file,
    on the first training loop, and never in test files.

    Hugging Face Transformers' `TrainingArguments` (and
    `Seq2SeqTrainingArguments`) have a `tf32` field from 4.20 (the release
    is the `transformers-version` setting, else the project's requirement,
    else the newest); left out, it leaves PyTorch's setting alone.  The
    first such call of a file that passes no `tf32` is reported, unless
    `use_cpu`, `no_cuda` or `use_mps_device` is passed, or
    `torch_compile=True` makes Transformers turn TF32 on itself (from
    4.26, unless `fp16=True` without `bf16=True`).  Arguments with
    `fp16=True` or `bf16=True` are still reported: autocast runs most
    matrix multiplications in half precision, so the gain is smaller, but
    the float32 ones it leaves (code outside the autocast region, layers
    kept in float32) still run at full float32 cost, and turning TF32 on
    changes nothing else.
    Only arguments a Trainer reads are reported: those handed to a
    Transformers `Trainer` (`Seq2SeqTrainer`, a subclass, a TRL trainer) of
    the file, directly, through the file's functions and classes, or stored
    on `self` and passed later; those whose `tf32` the file's own code
    reads; and those that reach code the file does not show (another
    module's or a library's function, a `return`, a module-level name) while
    the file names a Trainer class.  Arguments kept as a bag of settings for a
    hand-written loop (only their other fields read, printed, compared) are
    left alone, and so are arguments that reach unseen code from a file that
    names no Trainer (precision first; what other files name is not asked, as
    flake8 and the editor lint one file and must agree with `torchlint check`):
    a module that only builds the arguments another module hands to its
    Trainer is not reported.
    The fix is the same
    statement after the imports; `tf32=True` works too, but raises where
    the GPU has no TF32.  PyTorch Lightning is not read: it logs its own
    advice about `set_float32_matmul_precision` on Ampere and newer GPUs.

    ## Why is this bad?
    Since torch 1.12, float32 matrix multiplications on CUDA run in full
    float32 by default.  On Ampere and newer GPUs, TF32 tensor cores run
    them several times faster by rounding the inputs' mantissas to 10 bits
    (accumulating in float32); convolutions already use TF32 by default
    (`torch.backends.cudnn.allow_tf32`).  Most training is insensitive to
    that rounding, but some numerics (ill-conditioned solves, large sums of
    nearly cancelling products) are not, which is why this is only a
    suggestion.

    ## Example
    ```python
    import torch

    if __name__ == "__main__":
        model = Net().cuda()
        for x, y in loader:
            loss_fn(model(x.cuda()), y.cuda()).backward()
            optimizer.step()
    ```

    Use instead:
    ```python
    import torch
    torch.set_float32_matmul_precision("high")

    if __name__ == "__main__":
        model = Net().cuda()
        for x, y in loader:
            loss_fn(model(x.cuda()), y.cuda()).backward()
            optimizer.step()
    ```

    ## Fix safety
    The fix inserts, right after the module's imports, the spelling that
    fits the targeted torch version: `torch.set_float32_matmul_precision("high")`
    from 1.12 (where it exists), `torch.backends.cuda.matmul.allow_tf32 = True`
    before.  It is unsafe because it changes numerics: float32 matrix
    products on Ampere and newer GPUs are computed from inputs rounded to
    TF32 (a relative error of about 1e-3 per product instead of 1e-7).  On
    older GPUs and on CPUs it changes nothing.  No fix when the module has
    no imports before its first definition.

    ## Source guide
    *DGX cluster guidelines* (a GPU cluster's user guide, "No brainer code
    tweaks") recommends `torch.backends.cuda.matmul.allow_tf32 = True` (and
    the cuDNN flag) so that matrix multiplications and convolutions use the
    tensor cores of newer GPUs.
    """

    code = "TL603"
    name = "tf32-off"
    summary = "suggestion: CUDA training never enables TF32 for float32 matmuls"
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "unsafe: `set_float32_matmul_precision(\"high\")` (`matmul.allow_tf32 = True` before 1.12)"
    torch_range = TorchRange(min=TorchVersion(1, 7), note="`matmul.allow_tf32` exists since 1.7, "
                                                           "`set_float32_matmul_precision` since 1.12")
    settings = (
        "torch.backends.cuda.matmul.allow_tf32", "torch.set_float32_matmul_precision",
        "torch.backends.cuda.matmul.fp32_precision", "torch.backends.fp32_precision",
    )
    project_queries = (name_used(*settings),)
    needs_entry_point = True
    framework_roles = ((Framework.TRANSFORMERS, "training-arguments"),)
    valid = (
        """
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
        if __name__ == "__main__":
            for x in loader:
                model(x.cuda()).sum().backward()
                optimizer.step()
        """,
        """
        import torch
        def train(loader):
            for x in loader:
                model(x.cuda()).sum().backward()
                optimizer.step()
        """,
    )
    invalid = (
        Example(
            """
            import torch
            if __name__ == "__main__":
                for x in loader:
                    model(x.cuda()).sum().backward()
                    optimizer.step()
            """,
            fixed="""
            import torch
            torch.set_float32_matmul_precision("high")
            if __name__ == "__main__":
                for x in loader:
                    model(x.cuda()).sum().backward()
                    optimizer.step()
            """,
        ),
        Example(
            """
            import torch as th
            for x in loader:
                model(x.cuda()).sum().backward()
                optimizer.step()
            """,
            fixed="""
            import torch as th
            th.backends.cuda.matmul.allow_tf32 = True
            for x in loader:
                model(x.cuda()).sum().backward()
                optimizer.step()
            """,
            torch="1.11",
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        comparison=".verify_compare:check",
        contract=Contract(
            level="close within TF32 rounding on CUDA; identical where the flag is a no-op",
            promise=(
                "The fixed program runs with float32 matmul precision `high` (TF32 allowed for "
                "float32 matrix products): on an Ampere or newer GPU its values differ from the "
                "original's by TF32 rounding only; on a CPU or an older GPU the flag changes nothing."
            ),
            checks=(
                "the original ran at float32 matmul precision `highest` with CUDA matmul TF32 off",
                "the fixed run ran at precision `high` (or with CUDA matmul TF32 on), never `medium`",
                "every output is close within the error model, whose epsilon is TF32's (2^-10) "
                "because the fixed run allowed it",
                "on the CPU every output is identical (the flag is a no-op there); a difference fails",
            ),
            differences=(
                "On Ampere and newer GPUs, losses and weights differ from the original's by TF32 rounding.",
            ),
            speed="float32 matmuls several times faster on Ampere and newer GPUs; nothing on a CPU",
        ),
    )

    def message(self, work: Workload, line: int) -> str:
        return (
            "suggestion: this program trains on CUDA without enabling TF32 for float32 matmuls; "
            "`torch.set_float32_matmul_precision(\"high\")` lets Ampere and newer GPUs use tensor cores"
        )

    def fix(self, work: Workload) -> Optional[FixRequest]:
        if _PRECISION_API < self.context.torch_version or self.context.torch_version == _PRECISION_API:
            return insert_after_imports(self, work, '{name}("high")\n', "torch.set_float32_matmul_precision",
                                        'Insert `torch.set_float32_matmul_precision("high")` after the imports')
        return insert_after_imports(self, work, "{name} = True\n", "torch.backends.cuda.matmul.allow_tf32",
                                    "Insert `torch.backends.cuda.matmul.allow_tf32 = True` after the imports")

    def framework_call(self, fact: FrameworkCall) -> None:
        """Transformers' training arguments that never set ``tf32``."""
        data = frameworks()
        release = self.release(Framework.TRANSFORMERS.value)
        owner = "training-arguments"
        if self._framework_reported or not data.argument(Framework.TRANSFORMERS, owner, "tf32").exists_in(release):
            return
        if fact.may_be_present("tf32") or keeps_off_cuda(fact) or self.setting_present():
            return
        if not self.facts.frameworks.arguments_read(fact, "tf32"):
            return  # a bag of settings no Trainer reads
        compiled = fact.argument("torch_compile") is not None and fact.literal("torch_compile") is True
        if compiled and data.behaviour(Framework.TRANSFORMERS, "compile-enables-tf32", release) == "yes":
            fp16 = fact.argument("fp16") is not None and fact.literal("fp16") is True
            bf16 = fact.argument("bf16") is not None and fact.literal("bf16") is True
            if bf16 or not fp16:
                return  # Transformers turns TF32 on itself
        self._framework_reported = True
        self.report(
            fact.call,
            "suggestion: these training arguments run float32 matmuls on CUDA without TF32 (no `tf32`); "
            "`torch.set_float32_matmul_precision(\"high\")` (or `tf32=True`) lets Ampere and newer GPUs "
            "use tensor cores",
            fix=self.fix(self.facts.workload),
        )
