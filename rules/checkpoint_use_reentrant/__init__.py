"""TL705 checkpoint-use-reentrant."""

from __future__ import annotations

from typing import ClassVar, Tuple

import libcst as cst

from torchlint.data import apidata
from torchlint.analysis.frameworks import imports_framework, literal_value
from torchlint.data.apidata import Framework
from torchlint.ruleapi.fixes import add_keyword, bind, set_argument
from torchlint.model import Applicability
from torchlint.ruleapi.rule import Example, FixAvailability, Rule, TorchRange, TorchVersion
from torchlint.ruleapi.verification import Contract, VerificationSpec

_CHECKPOINTS = ("torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential")
_PARAMETER = "use_reentrant"
_TRANSFORMERS = Framework.TRANSFORMERS
_HF_KWARGS = "gradient_checkpointing_kwargs"
_HF_VALUE = '{"use_reentrant": False}'


class CheckpointUseReentrant(Rule):
    """## What it does
    Reports calls of `torch.utils.checkpoint.checkpoint` and
    `torch.utils.checkpoint.checkpoint_sequential` that do not pass
    `use_reentrant` (by keyword, or for `checkpoint_sequential` as the fourth
    positional argument).  A call that unpacks `**kwargs` may pass it and is
    left alone.  Calls through an attribute the class stores the function in
    count too (`self.maybe_ckpt = checkpoint if use_ckpt else plain` in
    `__init__`, then `self.maybe_ckpt(block, x)`); such a call gets the fix
    only when every assignment of the attribute is the checkpoint function.

    Hugging Face Transformers checkpoints activations itself, and in the
    releases where its default is the reentrant variant (4.35 to 4.57; the
    release is the `transformers-version` setting, else the project's
    requirement, else the newest) the rule reads its spellings:
    `TrainingArguments(gradient_checkpointing=True)` (also
    `Seq2SeqTrainingArguments`) and `model.gradient_checkpointing_enable()`
    in a file that imports `transformers`, without
    `gradient_checkpointing_kwargs` naming `use_reentrant`.  Before 4.35
    neither takes `gradient_checkpointing_kwargs`, so there is nothing to
    pass; from 5.0 the default is `use_reentrant=False`.  A
    `gradient_checkpointing_kwargs` given as a variable, and unpacked
    arguments, are left alone, and so are TRL's configurations (`SFTConfig`,
    `DPOConfig`, ...), some releases of which set `use_reentrant=False`
    themselves (TRL 0.27), and a dataclass subclass of the file that declares
    `gradient_checkpointing_kwargs` again with its own default.
    Only arguments a Trainer reads are reported: those handed to a
    Transformers `Trainer` (`Seq2SeqTrainer`, a subclass, a TRL trainer) of
    the file, directly, through the file's functions and classes, or stored
    on `self` and passed later; those whose `gradient_checkpointing` (or its kwargs)` the file's own code
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
    Without `use_reentrant`, checkpoint uses the old reentrant
    implementation, and recent torch releases warn on every such call that
    the argument must be passed explicitly because the default is going to
    change to `False`.  The reentrant variant does not record the autograd
    graph inside the checkpointed function, so it cannot be used with
    `torch.autograd.grad`, needs at least one input with
    `requires_grad=True` (else the checkpointed part gets no gradients, only
    a warning), and does not support keyword arguments or nested structures
    the way the non-reentrant one does.  PyTorch's documentation recommends
    `use_reentrant=False`.

    ## Example
    ```python
    from torch.utils.checkpoint import checkpoint

    def forward(self, x):
        return checkpoint(self.block, x)
    ```

    Use instead:
    ```python
    def forward(self, x):
        return checkpoint(self.block, x, use_reentrant=False)
    ```

    ## Fix safety
    Unsafe: the fix writes `use_reentrant=False`, which switches
    implementations.  Gradients are the same in ordinary use, but the two
    differ at the edges: with no input requiring grad, the reentrant variant
    silently drops the block's parameter gradients while the non-reentrant
    one computes them; and the non-reentrant variant checks (by default)
    that the recomputed forward saves tensors of the same shapes, dtypes
    and devices as the first one, and raises if it does not.  Pass
    `use_reentrant=True` yourself to keep the old behaviour and silence the
    warning.

    ## Options
    None.

    ## Source
    PyTorch documentation, *torch.utils.checkpoint* (the `use_reentrant`
    parameter, the differences between the two variants, and the
    recommendation to use `use_reentrant=False`).  The online PyTorch
    training book *Chapter 16: GPU Acceleration & Distributed Training*
    shows `checkpoint.checkpoint(..., use_reentrant=False)` in its gradient
    checkpointing example.
    """

    code = "TL705"
    name = "checkpoint-use-reentrant"
    summary = "`torch.utils.checkpoint` call without an explicit `use_reentrant`"
    aliases: ClassVar[Tuple[str, ...]] = ("TOR003",)
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "unsafe: pass `use_reentrant=False`"
    torch_range = TorchRange(min=TorchVersion(1, 11), note="`use_reentrant` exists since 1.11")
    trigger_words = ("checkpoint",)
    valid = (
        "from torch.utils.checkpoint import checkpoint\ny = checkpoint(block, x, use_reentrant=False)\n",
        "from torch.utils.checkpoint import checkpoint\ny = checkpoint(block, x, **options)\n",
        "import torch\ny = torch.utils.checkpoint.checkpoint_sequential(blocks, 2, x, True)\n",
        "from deepspeed import checkpointing\ny = checkpointing.checkpoint(block, x)\n",
        Example('from transformers import TrainingArguments\nargs = TrainingArguments("out", gradient_checkpointing=True)\n',
                findings=0, frameworks={"transformers": "5.0.0"}),
    )
    invalid = (
        Example(
            "from torch.utils.checkpoint import checkpoint\ny = checkpoint(block, x)\n",
            fixed="from torch.utils.checkpoint import checkpoint\ny = checkpoint(block, x, use_reentrant=False)\n",
        ),
        Example(
            "import torch.utils.checkpoint as cp\ny = cp.checkpoint_sequential(blocks, 2, x)\n",
            fixed="import torch.utils.checkpoint as cp\ny = cp.checkpoint_sequential(blocks, 2, x, use_reentrant=False)\n",
        ),
        Example(
            'from transformers import Trainer, TrainingArguments\n'
            'args = TrainingArguments("out", gradient_checkpointing=True)\nTrainer(model=model, args=args).train()\n',
            fixed='from transformers import Trainer, TrainingArguments\nargs = TrainingArguments("out", gradient_checkpointing=True, '
                  'gradient_checkpointing_kwargs={"use_reentrant": False})\nTrainer(model=model, args=args).train()\n',
            frameworks={"transformers": "4.57.6"},
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        contract=Contract(
            level="close",
            promise="Outputs and gradients of the checkpointed blocks are the same up to rounding.",
            checks=("every output is close, with the same shape, dtype, device and autograd status",),
            differences=("a block whose inputs do not require grad gets parameter gradients only after the fix",),
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self._transformers_checkpointing(node):
            return
        qualified = self.names.call_name(node)
        stored = None
        if qualified not in _CHECKPOINTS:
            # ``self.maybe_ckpt(f, x)`` where the class stored ``checkpoint`` there.
            stored = self.facts.callables.of_call(node)
            found = sorted(stored.names.intersection(_CHECKPOINTS)) if stored is not None else []
            if len(found) != 1:
                return
            qualified = found[0]
        signature = apidata.signature(qualified)
        if bind(node, signature).may_be_present(_PARAMETER):
            return
        function = qualified.rsplit(".", 1)[1]
        fix = None
        # No fix when the attribute may hold something else: that need not take the keyword.
        if stored is None or stored.certain:
            fixed = set_argument(node, signature, _PARAMETER, cst.Name("False"))
            if fixed is not None:
                fix = self.replace(node, fixed, Applicability.UNSAFE, "Pass `use_reentrant=False`")
        if stored is None:
            what = f"`{function}`"
        else:
            held = "holds" if stored.certain else "may hold"
            what = f"`{self.context.module.code_for_node(node.func)}` ({held} `{function}`)"
        self.report(
            node,
            f"{what} without `use_reentrant` uses the reentrant variant (recent torch warns); "
            "pass `use_reentrant=False` (recommended) or `True` explicitly",
            fix=fix,
        )

    # -- Transformers ---------------------------------------------------------------------

    def _transformers_checkpointing(self, node: cst.Call) -> bool:
        """Transformers' own checkpointing switched on without `use_reentrant`;
        True when ``node`` is one of its spellings (reported or not)."""
        fact = self.facts.frameworks.call(node)
        data = apidata.frameworks()
        release = self.release(_TRANSFORMERS.value)
        if fact is not None and fact.framework is _TRANSFORMERS and fact.role == "training-arguments":
            switch = fact.argument("gradient_checkpointing")
            if switch is None or literal_value(switch.value) is not True:
                return True
            if fact.argument(_HF_KWARGS) is None and fact.may_be_present(_HF_KWARGS):
                return True  # from **kwargs, or a default the class changes (TRL's configurations)
            if not self.facts.frameworks.arguments_read(fact, "gradient_checkpointing", _HF_KWARGS):
                return True  # a bag of settings no Trainer reads
            behaviour = data.behaviour(_TRANSFORMERS, "trainer-gradient-checkpointing-reentrant", release)
            what = "`gradient_checkpointing=True`"
            target: cst.CSTNode = switch
        elif (isinstance(node.func, cst.Attribute) and node.func.attr.value == "gradient_checkpointing_enable"
              and self.names.call_name(node) is None and imports_framework(self.names, _TRANSFORMERS)):
            if any(arg.keyword is None or arg.star for arg in node.args):
                return True  # passed by position, or unpacked
            behaviour = data.behaviour(_TRANSFORMERS, "gradient-checkpointing-enable-reentrant", release)
            what = f"`{cst.Module([]).code_for_node(node.func)}()`"
            target = node
        else:
            return False
        takes_kwargs = data.argument(_TRANSFORMERS, "gradient_checkpointing_enable", _HF_KWARGS).exists_in(release)
        if behaviour != "reentrant" or not takes_kwargs:
            return True
        given = next((arg for arg in node.args if arg.keyword is not None and arg.keyword.value == _HF_KWARGS), None)
        fix = None
        if given is None:
            fixed = add_keyword(node, _HF_KWARGS, cst.parse_expression(_HF_VALUE))
            fix = self.replace(node, fixed, Applicability.UNSAFE, f"Pass `{_HF_KWARGS}={_HF_VALUE}`")
        else:
            value = literal_value(given.value)
            if not isinstance(value, dict) or _PARAMETER in value:
                return True  # chosen, or only known at run time
        self.report(
            target,
            f"{what} without `{_HF_KWARGS}` naming `use_reentrant` checkpoints with the reentrant variant in "
            f"Transformers {release} (recent torch warns); pass `{_HF_KWARGS}={_HF_VALUE}` (recommended) "
            "or `True` explicitly",
            fix=fix,
        )
        return True
