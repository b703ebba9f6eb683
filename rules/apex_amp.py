"""TL702 apex-amp."""

from __future__ import annotations

import libcst as cst

from torchlint.ruleapi.rule import Example, FixAvailability, Rule, TorchRange, TorchVersion

# What each NVIDIA Apex entry point is replaced by in torch itself.
_TARGETS = {
    "apex.amp.initialize": "`apex.amp.initialize` patches the model and optimizer for mixed precision; "
                           "use `torch.amp.autocast` and `torch.amp.GradScaler`",
    "apex.amp.scale_loss": "`apex.amp.scale_loss` scales the loss for mixed precision; "
                           "use `torch.amp.GradScaler`'s `scale(loss).backward()`",
    "apex.parallel.DistributedDataParallel": "`apex.parallel.DistributedDataParallel` is Apex's data parallelism; "
                                             "use `torch.nn.parallel.DistributedDataParallel`",
    "apex.parallel.convert_syncbn_model": "`apex.parallel.convert_syncbn_model` converts batch norms; "
                                          "use `torch.nn.SyncBatchNorm.convert_sync_batchnorm`",
}


class ApexAmp(Rule):
    """## What it does
    Reports NVIDIA Apex's mixed-precision and data-parallel entry points:
    `apex.amp.initialize`, `apex.amp.scale_loss`,
    `apex.parallel.DistributedDataParallel` and
    `apex.parallel.convert_syncbn_model`, however they are imported.

    ## Why is this bad?
    Apex was the way to train in mixed precision before torch 1.6 shipped
    native automatic mixed precision.  Its `amp` module has been deprecated
    by NVIDIA in favour of `torch.amp` for years: it patches functions
    globally (`opt_level="O1"`) or casts the model itself (`"O2"`), needs a
    separate CUDA build that breaks with new torch releases, and does not
    compose with `torch.compile`, FSDP or the BF16 path of recent GPUs.
    Native `autocast` + `GradScaler` does the same job per region, and
    torch's own `DistributedDataParallel` and `SyncBatchNorm` replace
    Apex's.

    ## Example
    ```python
    from apex import amp
    from apex.parallel import DistributedDataParallel as DDP

    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    model = DDP(model)
    for x, y in loader:
        loss = criterion(model(x), y)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    ```

    Use instead:
    ```python
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    model = DDP(model, device_ids=[local_rank])
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.amp.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    ```
    With `dtype=torch.bfloat16` (GPUs from Ampere on) the scaler is not
    needed.  Checkpoints saved with `amp.state_dict()` are replaced by
    `scaler.state_dict()`.

    ## Fix safety
    No automatic fix: the migration moves the forward pass under
    `autocast`, replaces the `scale_loss` block by three scaler calls and
    changes what a checkpoint holds, which depends on the training loop.

    ## Source
    The "Automatic Mixed Precision package - torch.amp" page and the
    "Automatic Mixed Precision examples" of the PyTorch documentation; the
    Apex README, which points `apex.amp` users to native `torch.amp`.
    """

    code = "TL702"
    name = "apex-amp"
    summary = "NVIDIA Apex AMP or DDP is used; migrate to `torch.amp` and torch's `DistributedDataParallel`"
    fix_availability = FixAvailability.NONE
    fix_summary = "none (the doc page shows the `torch.amp` rewrite)"
    torch_range = TorchRange(min=TorchVersion(1, 6), note="native `torch.cuda.amp` exists from 1.6")
    trigger_words = ("apex",)
    valid = (
        "import torch\nscaler = torch.amp.GradScaler('cuda')\n",
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(net)\n",
        "import amp\nmodel, opt = amp.initialize(model, opt)\n",
        "from apex.optimizers import FusedAdam\nopt = FusedAdam(params)\n",
    )
    invalid = (
        Example("from apex import amp\nmodel, opt = amp.initialize(model, opt, opt_level='O1')\n"),
        Example(
            "from apex import amp\nwith amp.scale_loss(loss, opt) as scaled:\n    scaled.backward()\n"
        ),
        Example("import apex\nmodel = apex.parallel.DistributedDataParallel(model)\n"),
        Example("from apex import amp\nmodel = amp.initialize(model)\n", findings=0, torch="1.5"),
    )

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.names.call_name(node)
        if qualified in _TARGETS:
            self.report(node, _TARGETS[qualified], hint="See `torchlint explain TL702` for the torch.amp rewrite")
