"""TL904 processes-gpus-mismatch."""

from __future__ import annotations

from torchlint.jobscript.model import JobScript, Launcher
from torchlint.jobscript.rule import JobScriptRule
from torchlint.rule import Example, TorchRange

_DDP = """\
import os
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
model = DDP(net.to(int(os.environ["LOCAL_RANK"])))
"""
_PER_PROCESS_LAUNCHERS = frozenset({Launcher.TORCHRUN, Launcher.LEGACY_LAUNCH, Launcher.DISTRIBUTED_RUN,
                                    Launcher.ACCELERATE})


class ProcessesGpusMismatch(JobScriptRule):
    """## What it does
    Reports a launch line that starts a different number of processes per
    node than the GPUs per node the job requests: `torchrun
    --nproc_per_node=N` (also `python -m torch.distributed.launch`/`run`
    and `accelerate launch --num_processes`), or `srun`/`mpirun` starting
    DistributedDataParallel code as one task per process.  Processes per
    node multiply: `srun` tasks per node times torchrun's `--nproc_per_node`.
    Lines whose count is not a number (`--nproc_per_node=gpu`) are left alone.

    ## Why is this bad?
    With fewer processes than GPUs, the extra GPUs sit idle for the whole
    job.  With more processes than GPUs, several processes share a GPU
    (or the code maps a rank to a device that does not exist), which runs
    out of memory or fails at start-up.

    ## Example
    ```bash
    #SBATCH --gres=gpu:4
    torchrun --nproc_per_node=2 train.py
    ```

    Use instead:
    ```bash
    #SBATCH --gres=gpu:4
    torchrun --nproc_per_node=4 train.py
    ```

    ## Fix safety
    No automatic fix: either number may be the intended one.

    ## Source guide
    *GPU Computing Guide* (Ohio Supercomputer Center) pairs
    `--gpus-per-node=4` with `--nproc_per_node=4`, and *Chapter 16: GPU
    Acceleration & Distributed Training* (an online PyTorch training book)
    pairs `--gres=gpu:4` with `--ntasks-per-node=4` for `srun`-launched
    DDP: one process per GPU.
    """

    code = "TL904"
    name = "processes-gpus-mismatch"
    summary = "The launch starts a different number of processes per node than GPUs requested"
    fix_summary = "none"
    torch_range = TorchRange(note="one process per GPU is how DistributedDataParallel is run")
    valid = (
        Example("#SBATCH --gres=gpu:4\ntorchrun --nproc_per_node=4 train.py\n", findings=0,
                files={"train.py": _DDP}),
        Example("#SBATCH --gres=gpu:4\n#SBATCH --ntasks-per-node=4\nsrun python train.py\n", findings=0,
                files={"train.py": _DDP}),
        Example("#SBATCH --gres=gpu:4\ntorchrun --nproc_per_node=gpu train.py\n", findings=0),
    )
    invalid = (
        Example("#SBATCH --gres=gpu:4\ntorchrun --nproc_per_node=2 train.py\n", files={"train.py": _DDP}),
        Example("#SBATCH -N 2\n#SBATCH --gpus=8\n#SBATCH --ntasks-per-node=2\nsrun python train.py\n",
                files={"train.py": _DDP}),
    )

    def check(self, job: JobScript) -> None:
        gpus = job.resources.gpus_per_node
        if gpus is None:
            return
        for launch in job.launches:
            processes = launch.processes_per_node
            if processes is None or processes == gpus:
                continue
            if launch.launcher in _PER_PROCESS_LAUNCHERS:
                what = f"`{launch.launcher.value}` starts {processes} process{'es' if processes != 1 else ''}"
            elif launch.under_srun or launch.under_mpirun:
                facts = self.code_facts(launch)
                if facts is None or not facts.distributed or facts.spawns:
                    continue
                wrapper = "srun" if launch.under_srun else "mpirun"
                what = f"`{wrapper}` starts {processes} DistributedDataParallel process{'es' if processes != 1 else ''}"
            else:
                continue
            self.report_span(
                launch.span,
                f"{what} per node, but the job requests {gpus} GPU{'s' if gpus != 1 else ''} per node",
                hint="Start one process per GPU",
            )
