"""TL604 cudnn-benchmark-unset."""

from __future__ import annotations

from typing import Optional

from torchlint.analysis.queries import name_used
from torchlint.analysis.workload import Workload
from torchlint.ruleapi.rule import Example, FixAvailability, FixRequest
from torchlint.ruleapi.verification import Contract, VerificationSpec

from .._suggestion import Suggestion, insert_after_imports


class CudnnBenchmarkUnset(Suggestion):
    """## What it does
    A suggestion, off by default.  Reports a program's entry point (a file
    with an `if __name__ == "__main__":` block, or a training loop in its
    module body) that trains a convolutional model on CUDA when no file of
    the project refers to `torch.backends.cudnn.benchmark` (however
    `cudnn` is imported; any value counts, even `False` or a command-line
    flag: the choice was made).  A convolutional model is built in the file
    from `torch.nn` 2-D/3-D convolutions or a torchvision convolutional
    network; a training loop is a loop whose iterations call `backward()` and a `step()`;
    CUDA code calls into `torch.cuda`, calls `.cuda()` or names a `"cuda"`
    device.  It fires at most once per file, on the first training loop,
    and never in test files.

    ## Why is this bad?
    With `cudnn.benchmark = True`, cuDNN times the candidate convolution
    algorithms the first time it sees each input shape and keeps the
    fastest; by default it picks one by heuristics, often a slower one.
    When input sizes are fixed (images resized to one size, fixed batches)
    the timing is paid once and every later step is faster.  When they vary
    (variable image sizes, a last smaller batch, text of varying lengths),
    every new shape is benchmarked again, and a run with many shapes can be
    slower: that is why this is only a suggestion.

    ## Example
    ```python
    import torch

    if __name__ == "__main__":
        model = torchvision.models.resnet50().cuda()
        for x, y in loader:
            loss_fn(model(x.cuda()), y.cuda()).backward()
            optimizer.step()
    ```

    Use instead:
    ```python
    import torch
    torch.backends.cudnn.benchmark = True

    if __name__ == "__main__":
        model = torchvision.models.resnet50().cuda()
        for x, y in loader:
            loss_fn(model(x.cuda()), y.cuda()).backward()
            optimizer.step()
    ```

    ## Fix safety
    The fix inserts `torch.backends.cudnn.benchmark = True` (spelled
    through the file's imports) right after the module's imports.  It is
    unsafe: the algorithm cuDNN picks depends on timing, so two runs may
    use different algorithms and differ by rounding (see the reproducibility
    notes of the PyTorch documentation); with input sizes that vary, the
    repeated benchmarking can cost more than it saves.  On a CPU it changes
    nothing.  No fix when the module has no imports before its first
    definition.

    ## Source guide
    *DGX cluster guidelines* (a GPU cluster's user guide, "No brainer code
    tweaks") recommends `torch.backends.cudnn.benchmark = True` to find the
    fastest convolution algorithm; *Chapter 16: GPU Acceleration &
    Distributed Training* (an online PyTorch training book) enables it "for
    fixed input sizes".
    """

    code = "TL604"
    name = "cudnn-benchmark-unset"
    summary = "suggestion: a convolutional CUDA training program never sets `cudnn.benchmark`"
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "unsafe: `torch.backends.cudnn.benchmark = True` after the imports"
    settings = ("torch.backends.cudnn.benchmark",)
    project_queries = (name_used(*settings),)
    needs_convolution = True
    needs_entry_point = True
    valid = (
        """
        import torch.backends.cudnn as cudnn
        import torch
        cudnn.benchmark = args.benchmark
        if __name__ == "__main__":
            net = torch.nn.Conv2d(3, 3, 3).cuda()
            for x in loader:
                net(x.cuda()).sum().backward()
                optimizer.step()
        """,
        """
        import torch
        if __name__ == "__main__":
            net = torch.nn.Linear(3, 3).cuda()
            for x in loader:
                net(x.cuda()).sum().backward()
                optimizer.step()
        """,
    )
    invalid = (
        Example(
            """
            from torch import nn
            from torch.backends import cudnn
            if __name__ == "__main__":
                net = nn.Conv2d(3, 3, 3).cuda()
                for x in loader:
                    net(x.cuda()).sum().backward()
                    optimizer.step()
            """,
            fixed="""
            from torch import nn
            from torch.backends import cudnn
            cudnn.benchmark = True
            if __name__ == "__main__":
                net = nn.Conv2d(3, 3, 3).cuda()
                for x in loader:
                    net(x.cuda()).sum().backward()
                    optimizer.step()
            """,
        ),
        Example(
            """
            import torch
            import torchvision
            model = torchvision.models.resnet18().cuda()
            for x in loader:
                model(x.cuda()).sum().backward()
                optimizer.step()
            """,
            fixed="""
            import torch
            import torchvision
            torch.backends.cudnn.benchmark = True
            model = torchvision.models.resnet18().cuda()
            for x in loader:
                model(x.cuda()).sum().backward()
                optimizer.step()
            """,
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        comparison=".verify_compare:check",
        contract=Contract(
            level="identical on the CPU; close on CUDA",
            promise=(
                "The fixed program runs with `cudnn.benchmark` on: cuDNN may pick another convolution "
                "algorithm, so on CUDA values differ by rounding only; on a CPU nothing changes."
            ),
            checks=(
                "the original ran with `cudnn.benchmark` off and the fixed run with it on",
                "nothing else about the math changed: the same float32 matmul precision and TF32 flags",
                "on the CPU every output is identical; on CUDA every output is close within the error model",
            ),
            differences=(
                "On CUDA, another convolution algorithm may round differently (and differ between runs).",
            ),
            speed="faster convolutions on CUDA after the first step of each input shape; nothing on a CPU",
        ),
    )

    def message(self, work: Workload, line: int) -> str:
        return (
            "suggestion: this program trains a convolutional model on CUDA and never sets "
            "`torch.backends.cudnn.benchmark`; with fixed input sizes, `= True` picks faster convolution algorithms"
        )

    def fix(self, work: Workload) -> Optional[FixRequest]:
        return insert_after_imports(self, work, "{name} = True\n", "torch.backends.cudnn.benchmark",
                                    "Insert `torch.backends.cudnn.benchmark = True` after the imports")
