"""TL602 amp-suggestion."""

from __future__ import annotations

from torchlint.analysis.queries import method_called, name_used
from torchlint.analysis.workload import Workload
from torchlint.rule import Example, TorchRange, TorchVersion

import libcst as cst

from ._suggestion import Suggestion

_LOW_PRECISION_CASTS = ("half", "bfloat16")


class AmpSuggestion(Suggestion):
    """## What it does
    A suggestion, off by default.  Reports a CUDA training loop (a loop
    whose iterations call `backward()` and a `step()`, in a file that calls into
    `torch.cuda`, calls `.cuda()` or names a `"cuda"` device) when the
    project never chooses a reduced precision: no file refers to
    `torch.autocast` (or `torch.amp.autocast`, `torch.cuda.amp.autocast`),
    a `GradScaler`, `torch.float16`/`torch.bfloat16`, NVIDIA Apex's `amp`,
    or a framework that configures precision itself (Hugging Face
    Accelerate's `Accelerator`, DeepSpeed), and no file casts anything
    with `.half()` or `.bfloat16()` (hand-rolled float16 training, such as
    a helper that converts the model's layers).  It fires at most once per file, on
    the first such loop, and never in test files.

    ## Why is this bad?
    It is not a defect.  Under `torch.autocast`, matrix multiplications and
    convolutions run in float16 or bfloat16 on the GPU's tensor cores,
    several times the float32 rate, and activations take half the memory;
    the operations that need float32 (reductions, losses, softmax) stay in
    it.  Most models train to the same accuracy, but a model should be
    checked for stability (float16 also needs a `GradScaler`), which is why
    this is only a suggestion.

    ## Example
    ```python
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
    ```

    Use instead:
    ```python
    for x, y in loader:
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
    ```

    ## Fix safety
    No automatic fix: the dtype, the region under autocast and the need
    for a gradient scaler are the author's choice.

    ## Source guide
    *GPU Computing Guide* (Ohio Supercomputer Center) lists mixed precision
    among the ways to speed up training and not using it among the common
    mistakes; *DGX cluster guidelines* (a GPU cluster's user guide) suggests
    `with torch.autocast(device_type="cuda"):` once the model is stable;
    *Chapter 16: GPU Acceleration & Distributed Training* (an online
    PyTorch training book) shows the autocast and `GradScaler` loop.
    """

    code = "TL602"
    name = "amp-suggestion"
    summary = "suggestion: the CUDA training loop runs in float32; consider `torch.autocast`"
    fix_summary = "none: choose the dtype and region"
    torch_range = TorchRange(min=TorchVersion(1, 6), note="`torch.cuda.amp.autocast` exists since 1.6")
    settings = (
        "torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast",
        "torch.amp.GradScaler", "torch.cuda.amp.GradScaler", "torch.float16", "torch.half", "torch.bfloat16",
        "apex.amp", "accelerate.Accelerator", "deepspeed.initialize",
    )
    project_queries = (name_used(*settings), method_called(*_LOW_PRECISION_CASTS))
    valid = (
        """
        import torch
        for x, y in loader:
            with torch.autocast("cuda"):
                loss = model(x.cuda()).sum()
            loss.backward()
            optimizer.step()
        """,
        """
        import torch
        model = Net().cuda().half()
        for x, y in loader:
            model(x.cuda().half()).sum().backward()
            optimizer.step()
        """,
        """
        import torch
        for x, y in loader:
            model(x).sum().backward()
            optimizer.step()
        """,
    )
    invalid = (
        Example(
            """
            import torch
            model = Net().cuda()
            for x, y in loader:
                model(x.cuda()).sum().backward()
                optimizer.step()
            """
        ),
    )

    def also_declined(self, work: Workload) -> bool:
        """The project casts something to half precision by hand (a model
        converted with `.half()` in a helper module, as hand-rolled fp16
        training does), in this file or another."""
        if any(self.facts.project.calls_method(cast) for cast in _LOW_PRECISION_CASTS):
            return True
        return any(
            isinstance(node.func, cst.Attribute)
            and node.func.attr.value in _LOW_PRECISION_CASTS and self.names.qualified_name(node.func) is None
            for node in self.facts.nodes_of(cst.Call)
        )

    def message(self, work: Workload, line: int) -> str:
        return (
            "suggestion: this CUDA training loop runs entirely in float32; mixed precision "
            "(`torch.autocast`) usually makes each step faster and halves activation memory"
        )
