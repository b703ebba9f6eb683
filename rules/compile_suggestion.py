"""TL404 compile-suggestion."""

from __future__ import annotations

from torchlint.analysis.frameworks import FrameworkCall, keeps_off_cuda
from torchlint.analysis.queries import name_used
from torchlint.analysis.workload import Workload
from torchlint.data.apidata import Framework, frameworks
from torchlint.ruleapi.rule import Example, TorchRange, TorchVersion

from ._suggestion import Suggestion


class CompileSuggestion(Suggestion):
    """## What it does
    A suggestion, off by default.  Reports a CUDA training loop (a loop
    whose iterations call `backward()` and a `step()`, in a file that calls into
    `torch.cuda`, calls `.cuda()` or names a `"cuda"` device) when no file
    of the project refers to `torch.compile` (or the older
    `torch._dynamo.optimize`).  It fires at most once per file, on the
    first such loop, and never in test files.

    Hugging Face Transformers' `TrainingArguments` (and
    `Seq2SeqTrainingArguments`) compile the model with `torch_compile=True`
    from 4.26 (the release is the `transformers-version` setting, else the
    project's requirement, else the newest).  The first such call of a file
    that passes none of `torch_compile`, `torch_compile_backend` or
    `torch_compile_mode` (either of the last two turns compiling on) is
    reported, unless `use_cpu`, `no_cuda` or `use_mps_device` is passed.
    Only arguments a Trainer reads are reported: those handed to a
    Transformers `Trainer` (`Seq2SeqTrainer`, a subclass, a TRL trainer) of
    the file, directly, through the file's functions and classes, or stored
    on `self` and passed later; those whose `torch_compile` the file's own code
    reads; and those that reach code the file does not show (another
    module's or a library's function, a `return`, a module-level name) while
    the file names a Trainer class.  Arguments kept as a bag of settings for a
    hand-written loop (only their other fields read, printed, compared) are
    left alone, and so are arguments that reach unseen code from a file that
    names no Trainer (precision first; what other files name is not asked, as
    flake8 and the editor lint one file and must agree with `torchlint check`):
    a module that only builds the arguments another module hands to its
    Trainer is not reported.

    ## Why is this bad?
    It is not a defect.  `torch.compile` traces the model's forward (and,
    through AOTAutograd, its backward) into fused kernels: fewer launches,
    fewer round trips through GPU memory, often a sizeable speed-up for the
    same numbers.  It costs compilation time on the first steps (and again
    when input shapes change), and some models do not compile, which is why
    this is only a suggestion.

    ## Example
    ```python
    model = Net().cuda()
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
    ```

    Use instead:
    ```python
    model = Net().cuda()
    compiled = torch.compile(model)
    for x, y in loader:
        loss = criterion(compiled(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
    ```

    ## Fix safety
    No automatic fix: compiling may fail on a model, and where to compile
    (the whole model, a block, under a `try`) is the author's choice.

    ## Source guide
    *DGX cluster guidelines* (a GPU cluster's user guide) suggests
    compiling the model with `torch.compile(my_model)` once debugging is
    done, wrapped in a `try` because compilation can fail.
    """

    code = "TL404"
    name = "compile-suggestion"
    summary = "suggestion: the CUDA training loop's model is never passed to `torch.compile`"
    fix_summary = "none: compile where it fits"
    torch_range = TorchRange(min=TorchVersion(2, 0), note="`torch.compile` exists since 2.0")
    settings = ("torch.compile", "torch._dynamo.optimize")
    project_queries = (name_used(*settings),)
    framework_roles = ((Framework.TRANSFORMERS, "training-arguments"),)
    valid = (
        """
        import torch
        model = torch.compile(Net().cuda())
        for x, y in loader:
            model(x.cuda()).sum().backward()
            optimizer.step()
        """,
        """
        import torch
        model = Net()
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

    def message(self, work: Workload, line: int) -> str:
        return (
            "suggestion: this CUDA training loop runs a model that is never passed to `torch.compile`; "
            "compiling it usually makes each step faster"
        )

    def framework_call(self, fact: FrameworkCall) -> None:
        """Transformers' training arguments that never ask to compile."""
        release = self.release(Framework.TRANSFORMERS.value)
        field = frameworks().argument(Framework.TRANSFORMERS, "training-arguments", "torch_compile")
        if self._framework_reported or not field.exists_in(release) or keeps_off_cuda(fact) \
                or not self.facts.frameworks.arguments_read(fact, "torch_compile"):
            return
        if any(fact.may_be_present(name) for name in ("torch_compile", "torch_compile_backend", "torch_compile_mode")):
            return
        if self.setting_present():
            return
        self._framework_reported = True
        self.report(
            fact.call,
            "suggestion: these training arguments never compile the model; `torch_compile=True` usually "
            "makes each step faster",
        )
