"""TL403 channels-last-suggestion."""

from __future__ import annotations

from torchlint.analysis.queries import name_used
from torchlint.analysis.workload import Workload
from torchlint.ruleapi.rule import Example, TorchRange, TorchVersion

from ._suggestion import Suggestion


class ChannelsLastSuggestion(Suggestion):
    """## What it does
    A suggestion, off by default.  Reports a CUDA training loop in a file
    that builds a convolutional model (a `torch.nn` `Conv2d`/`Conv3d` or
    transposed convolution, or a torchvision convolutional network such as
    `resnet50`) when no file of the project refers to
    `torch.channels_last` (or `torch.channels_last_3d`).  A loop is a
    training loop when its iterations call `backward()` and a `step()`; the file is CUDA
    code when it calls into `torch.cuda`, calls `.cuda()` or names a
    `"cuda"` device.  It fires at most once per file, on the first such
    loop, and never in test files.

    ## Why is this bad?
    It is not a defect.  cuDNN's fastest convolution kernels for tensor
    cores (mixed precision, TF32) work on NHWC data; a model and inputs in
    the default NCHW layout are transposed around every convolution.
    Converting the model and each batch with
    `memory_format=torch.channels_last` avoids that.  Code that indexes
    dimensions by hand, `view`s activations, or runs on older GPUs may gain
    nothing, which is why this is only a suggestion.

    ## Example
    ```python
    model = torchvision.models.resnet50().cuda()
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
    ```

    Use instead:
    ```python
    model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    for x, y in loader:
        x = x.cuda().to(memory_format=torch.channels_last)
        loss = criterion(model(x), y.cuda())
        loss.backward()
        optimizer.step()
    ```

    ## Fix safety
    No automatic fix: both the model and every input must be converted,
    and custom layers must tolerate the layout.

    ## Source guide
    *DGX cluster guidelines* (a GPU cluster's user guide) suggests the
    channels-last memory format for vision models, for the data and the
    model alike, where no operation depends on exact tensor dimensions.
    """

    code = "TL403"
    name = "channels-last-suggestion"
    summary = "suggestion: a convolutional model trains on CUDA in NCHW; consider `torch.channels_last`"
    fix_summary = "none: convert model and inputs"
    torch_range = TorchRange(min=TorchVersion(1, 5), note="`torch.channels_last` exists since 1.5")
    settings = ("torch.channels_last", "torch.channels_last_3d")
    project_queries = (name_used(*settings),)
    needs_convolution = True
    valid = (
        """
        import torch
        model = torch.nn.Conv2d(3, 8, 3).cuda().to(memory_format=torch.channels_last)
        for x in loader:
            model(x.cuda().to(memory_format=torch.channels_last)).sum().backward()
            optimizer.step()
        """,
        """
        import torch
        model = torch.nn.Linear(3, 8).cuda()
        for x in loader:
            model(x.cuda()).sum().backward()
            optimizer.step()
        """,
    )
    invalid = (
        Example(
            """
            import torch
            model = torch.nn.Conv2d(3, 8, 3).cuda()
            for x in loader:
                model(x.cuda()).sum().backward()
                optimizer.step()
            """
        ),
    )

    def message(self, work: Workload, line: int) -> str:
        return (
            "suggestion: a convolutional model trains on CUDA in the default NCHW layout; "
            "`memory_format=torch.channels_last` on the model and its inputs usually speeds up convolutions"
        )
