"""TL901 gpus-requested-not-used."""

from __future__ import annotations

import os
from pathlib import Path

from torchlint.data.apidata import Framework, frameworks
from torchlint.jobscript.model import JobScript
from torchlint.jobscript.rule import JobScriptRule
from torchlint.ruleapi.rule import Example, TorchRange

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
_HF_TRAINER = """\
from transformers import Trainer, TrainingArguments

args = TrainingArguments("out", per_device_train_batch_size=8)
Trainer(model=model, args=args, train_dataset=dataset).train()
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

    Training frameworks change what one process does with several GPUs:
    - A Hugging Face Transformers `Trainer` (or `Seq2SeqTrainer`, or a
      class of the file deriving from one) started as one plain process
      (`python`, not `torchrun` or `accelerate launch`) sees every GPU of
      the node and wraps the model in `nn.DataParallel` itself; the job is
      reported with the launcher to use instead.  Read for Transformers
      4.35 and newer (the releases the fact was checked in; the release is
      the `transformers-version` setting, else the project's requirement,
      else the newest).  Code that passes `device_map`, loads a model
      quantized (`load_in_8bit`, `load_in_4bit`, `quantization_config`) or
      keeps the Trainer off CUDA (`use_cpu`, `no_cuda`) is left alone: the
      Trainer may then not use `DataParallel`.
    - A PyTorch Lightning `Trainer` starts (or expects) the processes of
      its strategy itself, so it is left alone here; TL904 compares the
      job's tasks with its `devices` and `num_nodes`.

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
        Example("#SBATCH --gres=gpu:4\npython finetune.py\n", files={"finetune.py": _HF_TRAINER}),
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
            if facts.lightning_trainers:
                devices = [trainer.devices for trainer in facts.lightning_trainers]
                if all(isinstance(count, int) and 0 < count < gpus for count in devices):
                    used = max(count for count in devices if isinstance(count, int))
                    self.report_span(
                        directive.span,
                        f"{gpus} GPUs per node are requested, but the Lightning `Trainer` that line "
                        f"{launch.span.line} runs uses `devices={used}`: the other GPUs stay idle",
                        hint="Ask for as many GPUs as the Trainer's devices, or raise `devices`",
                    )
                return  # Lightning starts the processes of its strategy; TL904 checks their count
            if facts.hf_trainer and not facts.distributed:
                wraps = frameworks().behaviour(Framework.TRANSFORMERS, "single-process-multi-gpu",
                                               self.release(Framework.TRANSFORMERS.value))
                if facts.one_gpu_per_process_hint or wraps != "data-parallel":
                    return  # the model may be spread over the GPUs, or the release is not known to wrap it
                script = _relative(launch.target, job) if launch.target is not None else "train.py"
                self.report_span(
                    directive.span,
                    f"{gpus} GPUs per node are requested and line {launch.span.line} starts one process running a "
                    "Transformers `Trainer`, which then wraps the model in `nn.DataParallel` (one process drives "
                    f"every GPU); launch one process per GPU: `torchrun --nproc_per_node={gpus} {script}` or "
                    f"`accelerate launch --num_processes {gpus} {script}`",
                    hint="The Trainer then uses DistributedDataParallel; the batch size becomes per process",
                )
            elif facts.data_parallel:
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


def _relative(target: Path, job: JobScript) -> str:
    """The launched file as the script's folder sees it (``src/train.py``)."""
    try:
        return Path(os.path.relpath(target, job.path.parent)).as_posix()
    except ValueError:  # another drive on Windows
        return target.name
