"""TL901 gpus-requested-not-used."""

from __future__ import annotations

from torchlint.jobscript.model import JobScript
from torchlint.jobscript.rule import JobScriptRule
from torchlint.rule import Example, TorchRange

_SINGLE = """\
import torch
from torch.utils.data import DataLoader

model = torch.nn.Linear(8, 2).cuda()
loader = DataLoader(dataset, batch_size=64, num_workers=4)
"""
_DATA_PARALLEL = """\
import torch
from torch import nn

model = nn.DataParallel(nn.Linear(8, 2)).cuda()
"""
_DDP = """\
import os
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
model = DDP(net.to(int(os.environ["LOCAL_RANK"])))
"""


class GpusRequestedNotUsed(JobScriptRule):
    """## What it does
    Reports a batch script that asks for more than one GPU per node while
    its launch line starts a single Python process whose code has no
    per-process distributed setup (no `DistributedDataParallel`,
    `init_process_group`, FSDP or `accelerate.Accelerator`, and no
    `torch.multiprocessing.spawn`), or whose code wraps the model in
    `nn.DataParallel`.  The finding is on the `#SBATCH` line that asks for
    the GPUs.  Launch lines whose Python file cannot be resolved are left
    alone.

    ## Why is this bad?
    A single process without a distributed setup computes on one GPU; the
    others are reserved for the whole job, count against the user's share
    and keep other jobs waiting in the queue.  With `DataParallel` the GPUs
    are used, but by one process that copies the model to each of them on
    every step, which is slower than one process per GPU.

    ## Example
    ```bash
    #SBATCH --gres=gpu:4
    python train.py        # one process, no DistributedDataParallel
    ```

    Use instead: ask for the GPUs the code uses,
    ```bash
    #SBATCH --gres=gpu:1
    python train.py
    ```
    or start one process per GPU with torchrun and DistributedDataParallel:
    ```bash
    #SBATCH --gres=gpu:4
    torchrun --standalone --nproc_per_node=4 train_ddp.py
    ```

    ## Fix safety
    No automatic fix: whether to ask for fewer GPUs or to make the code
    distributed is the author's choice.

    ## Source guide
    *GPU Computing Guide* (Ohio Supercomputer Center): "don't over-request
    GPUs you won't use", and DistributedDataParallel as the recommended way
    to use several; *Single-GPU Training* (Princeton Research Computing)
    asks for one GPU until the code is tuned on one.
    """

    code = "TL901"
    name = "gpus-requested-not-used"
    summary = "The job asks for several GPUs per node but starts one process without DDP"
    fix_summary = "none"
    torch_range = TorchRange(note="a single process without a distributed setup computes on one GPU")
    valid = (
        Example("#SBATCH --gres=gpu:1\npython train.py\n", findings=0, files={"train.py": _SINGLE}),
        Example("#SBATCH --gres=gpu:4\ntorchrun --nproc_per_node=4 train.py\n", findings=0,
                files={"train.py": _DDP}),
        Example("#SBATCH --gres=gpu:4\npython missing.py\n", findings=0),
    )
    invalid = (
        Example("#SBATCH --gres=gpu:4\npython train.py\n", files={"train.py": _SINGLE}),
        Example("#SBATCH --gpus-per-node=2\npython train.py\n", files={"train.py": _DATA_PARALLEL}),
    )

    def check(self, job: JobScript) -> None:
        gpus = job.resources.gpus_per_node
        directive = job.gpu_directive()
        if gpus is None or gpus < 2 or directive is None:
            return
        for launch in job.launches:
            facts = self.code_facts(launch)
            if facts is None or launch.processes_per_node != 1 or facts.spawns:
                continue
            if facts.data_parallel:
                self.report_span(
                    directive.span,
                    f"{gpus} GPUs per node are requested and `{launch.launcher.value}` starts one process "
                    "that drives them with `nn.DataParallel`; start one process per GPU with torchrun and "
                    "DistributedDataParallel",
                    hint="See `torchlint explain TL501` for the DistributedDataParallel migration",
                )
            elif not facts.distributed:
                self.report_span(
                    directive.span,
                    f"{gpus} GPUs per node are requested, but line {launch.span.line} starts one process "
                    "whose code has no DistributedDataParallel: it computes on one GPU",
                    hint="Ask for one GPU, or launch one process per GPU with torchrun and DDP",
                )
            return
