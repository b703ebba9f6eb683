"""TL602 amp-suggestion."""

from __future__ import annotations

from typing import List

from torchlint.analysis.frameworks import UNKNOWN, FrameworkCall, keeps_off_cuda, literal_value
from torchlint.analysis.queries import method_called, name_used
from torchlint.analysis.workload import Workload
from torchlint.data.apidata import Framework, frameworks
from torchlint.ruleapi.rule import Example, TorchRange, TorchVersion

import libcst as cst

from ._suggestion import Suggestion

_LOW_PRECISION_CASTS = ("half", "bfloat16")
_LIGHTNING, _TRANSFORMERS, _ACCELERATE = Framework.LIGHTNING, Framework.TRANSFORMERS, Framework.ACCELERATE
_REDUCED = (
    "torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast",
    "torch.amp.GradScaler", "torch.cuda.amp.GradScaler", "torch.float16", "torch.half", "torch.bfloat16",
    "apex.amp",
)
"""Names whose use means the project already chose a reduced precision (for
the framework checks: the settings less the frameworks themselves)."""
_QUANTIZED = ("load_in_8bit", "load_in_4bit", "quantization_config")
"""Keywords that load a model's weights quantized (Transformers' `from_pretrained`):
its precision is already chosen."""


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

    Training frameworks set precision as an argument, and the rule reads
    it where the code says it trains on a GPU (the releases come from the
    `lightning-version`, `transformers-version` and `accelerate-version`
    settings, else the project's requirements, else the newest; the
    spellings from `torchlint/data/frameworks.toml`):
    - PyTorch Lightning's `Trainer` (`lightning`, `lightning.pytorch`,
      `pytorch_lightning`) with `accelerator="gpu"`/`"cuda"`, `gpus=`
      (before 2.0) given anything but a literal 0/`None`/empty (a count
      read from the command line is GPUs the program was written to take),
      or in a file that otherwise uses CUDA, whose
      `precision` is full: `32`, `"32"` (1.5 on), `"32-true"` (2.0 on),
      `None` (2.1 on) or left out.  The finding suggests the release's
      mixed spelling: `precision=16` (or `"bf16"` from 1.5) before 2.0,
      `"16-mixed"`/`"bf16-mixed"` from 2.0.  A Trainer given `plugins=`
      (which may set precision) is left alone, and so is one whose other
      arguments come from elsewhere (`**kwargs`, a config file's table,
      `Trainer.from_argparse_args(args)`) unless it writes `precision`.
    - Lightning Fabric's `Fabric` (`lightning.Fabric`, `lightning.fabric`,
      `lightning_fabric`; from 1.9) given a full `precision` (`32`, `"32"`,
      `"32-true"` from 2.0) on the GPU (as above, by `accelerator`).
      Left out, the `fabric run --precision` launcher decides (Fabric reads
      it from the environment), so that is left alone.
    - Transformers' `TrainingArguments`/`Seq2SeqTrainingArguments` with
      neither `fp16` nor `bf16` (from 4.20, where both exist), unless
      `use_cpu`, `no_cuda` or `use_mps_device` is passed, or the file loads a
      model quantized (`load_in_8bit`, `load_in_4bit`,
      `quantization_config`).  TRL's configurations (`SFTConfig`,
      `DPOConfig`, ...) turn `bf16` on by default (TRL 0.19 on), so they
      are reported only with an explicit `bf16=False` and no `fp16`.
      Only arguments a Trainer reads are reported: those handed to a
      Transformers `Trainer` (`Seq2SeqTrainer`, a subclass, a TRL trainer) of
      the file, directly, through the file's functions and classes, or stored
      on `self` and passed later; those whose `fp16` or `bf16` the file's own code
      reads; and those that reach code the file does not show (another
      module's or a library's function, a `return`, a module-level name) while
      the file names a Trainer class.  Arguments kept as a bag of settings for a
      hand-written loop (only their other fields read, printed, compared) are
      left alone, and so are arguments that reach unseen code from a file that
      names no Trainer (precision first; what other files name is not asked, as
      flake8 and the editor lint one file and must agree with `torchlint check`):
      a module that only builds the arguments another module hands to its
      Trainer is not reported.
    - Accelerate's `Accelerator(mixed_precision="no")` (from 0.6), unless
      `cpu=` is passed.  Without the argument, `accelerate launch
      --mixed_precision` and the `accelerate config` file decide, so that
      is left alone.
    A project that refers to `torch.autocast`, a `GradScaler`,
    `torch.float16`/`torch.bfloat16` or Apex's `amp` is left alone here too.

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
    framework_roles = ((_LIGHTNING, "trainer"), (_LIGHTNING, "fabric"), (_TRANSFORMERS, "training-arguments"),
                       (_ACCELERATE, "accelerator"))
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

    # -- frameworks --------------------------------------------------------------------

    def framework_call(self, fact: FrameworkCall) -> None:
        if self._reduced_elsewhere():
            return
        if fact.framework is _LIGHTNING and fact.role == "fabric":
            self._fabric(fact)
        elif fact.framework is _LIGHTNING:
            self._lightning(fact)
        elif fact.framework is _TRANSFORMERS:
            self._transformers(fact)
        elif fact.framework is _ACCELERATE:
            self._accelerate(fact)

    def _reduced_elsewhere(self) -> bool:
        """The project (or this file) already chooses a reduced precision by hand."""
        project = self.facts.project
        if any(project.uses(name) for name in _REDUCED) or not self.facts.names_mentioned.isdisjoint(_REDUCED):
            return True
        return self.also_declined(self.facts.workload)

    def _mixed(self, framework: Framework, owner: str, argument: str) -> List[str]:
        """The release's mixed-precision spellings of ``argument``, bfloat16 first."""
        release = self.release(framework.value)
        found = []
        for meaning in ("mixed-bfloat16", "mixed-float16"):
            entry = frameworks().preferred(framework, owner, argument, meaning, release)
            if entry is not None:
                found.append(f"`{argument}={entry.spelling}`")
        return found

    def _lightning(self, trainer: FrameworkCall) -> None:
        release = self.release(_LIGHTNING.value)
        data = frameworks()
        precision = trainer.argument("precision")
        if precision is None and trainer.may_be_present("precision"):
            return  # from **kwargs, a config file or the command line
        if trainer.argument("plugins") is not None or not self._lightning_gpu(trainer):
            return
        value = literal_value(precision.value) if precision is not None else \
            data.argument(_LIGHTNING, "trainer", "precision").default_in(release)
        if value is UNKNOWN or data.meaning(_LIGHTNING, "trainer", "precision", value, release) != "full-precision":
            return
        written = f"`precision={cst.Module([]).code_for_node(precision.value)}`" if precision is not None \
            else "no `precision`"
        suggested = " (Ampere or newer) or ".join(self._mixed(_LIGHTNING, "trainer", "precision"))
        self.report(
            precision if precision is not None else trainer.call,
            f"suggestion: this Lightning Trainer trains on the GPU in float32 ({written}); {suggested} "
            "usually makes each step faster and halves activation memory",
        )

    def _fabric(self, fabric: FrameworkCall) -> None:
        """``Fabric(precision=32)`` on the GPU: only an explicit value (left out,
        the launcher's ``--precision`` decides)."""
        release = self.release(_LIGHTNING.value)
        data = frameworks()
        precision = fabric.argument("precision")
        if precision is None or not data.argument(_LIGHTNING, "fabric", "precision").exists_in(release):
            return  # the launcher decides; or a release before Fabric
        if fabric.argument("plugins") is not None or not self._lightning_gpu(fabric):
            return
        value = literal_value(precision.value)
        if value is UNKNOWN or data.meaning(_LIGHTNING, "fabric", "precision", value, release) != "full-precision":
            return
        suggested = " (Ampere or newer) or ".join(self._mixed(_LIGHTNING, "fabric", "precision"))
        self.report(
            precision,
            f"suggestion: this Lightning Fabric trains on the GPU in float32 "
            f"(`precision={cst.Module([]).code_for_node(precision.value)}`); {suggested} "
            "usually makes each step faster and halves activation memory",
        )

    def _lightning_gpu(self, trainer: FrameworkCall) -> bool:
        """The Trainer (or Fabric) runs on a GPU: ``accelerator="gpu"``, GPUs
        given with ``gpus=`` (a Trainer before 2.0; an expression counts: a
        count from the command line is GPUs the program takes), or a file that
        uses CUDA and names no other accelerator."""
        release = self.release(_LIGHTNING.value)
        data = frameworks()
        accelerator = trainer.literal("accelerator") if trainer.argument("accelerator") is not None else None
        if isinstance(accelerator, str):
            meaning = data.meaning(_LIGHTNING, trainer.role, "accelerator", accelerator, release)
            if meaning == "gpu":
                return True
            if accelerator != "auto":
                return False  # another accelerator ("cpu", "tpu", "mps", a DataParallel spelling)
        gpus = trainer.argument("gpus")
        if gpus is not None and trainer.role == "trainer" \
                and data.argument(_LIGHTNING, "trainer", "gpus").exists_in(release):
            given = literal_value(gpus.value)
            if given not in (None, 0, "0", "", []):
                return True
        return self.facts.workload.cuda is not None

    def _transformers(self, arguments: FrameworkCall) -> None:
        release = self.release(_TRANSFORMERS.value)
        data = frameworks()
        if not data.argument(_TRANSFORMERS, "training-arguments", "bf16").exists_in(release):
            return
        if keeps_off_cuda(arguments) or self._quantized() or not self.facts.frameworks.arguments_read(arguments, "fp16", "bf16"):
            return
        for name in ("fp16", "bf16"):
            if arguments.argument(name) is not None and arguments.literal(name) is not False:
                return  # mixed precision on, or chosen at run time
            if arguments.argument(name) is None and arguments.may_be_present(name):
                return  # from **kwargs, or a default the class changes (TRL's bf16)
        suggested = " (Ampere or newer) or ".join(f"`{name}=True`" for name in ("bf16", "fp16"))
        self.report(
            arguments.call,
            f"suggestion: these `{_name(arguments)}` train in float32 on the GPU (neither `fp16` nor `bf16`); "
            f"{suggested} usually makes each step faster and halves activation memory",
        )

    def _quantized(self) -> bool:
        return any(
            arg.keyword is not None and arg.keyword.value in _QUANTIZED
            for call in self.facts.nodes_of(cst.Call) for arg in call.args
        )

    def _accelerate(self, accelerator: FrameworkCall) -> None:
        release = self.release(_ACCELERATE.value)
        data = frameworks()
        argument = accelerator.argument("mixed_precision")
        if argument is None or accelerator.argument("cpu") is not None:
            return  # no argument: `accelerate launch` or the config file decide
        value = literal_value(argument.value)
        if value is UNKNOWN or data.meaning(_ACCELERATE, "accelerator", "mixed_precision", value, release) \
                != "full-precision":
            return
        suggested = " (Ampere or newer) or ".join(self._mixed(_ACCELERATE, "accelerator", "mixed_precision"))
        self.report(
            argument,
            f"suggestion: `Accelerator(mixed_precision={cst.Module([]).code_for_node(argument.value)})` trains in "
            "float32, whatever `accelerate launch --mixed_precision` or the config file say (an explicit "
            f"argument wins); {suggested} usually makes each step faster and halves activation memory",
        )


def _name(fact: FrameworkCall) -> str:
    func = fact.call.func
    return func.attr.value if isinstance(func, cst.Attribute) else cst.Module([]).code_for_node(func)
