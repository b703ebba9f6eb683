"""TL904 processes-gpus-mismatch."""

from __future__ import annotations

from typing import Optional

from torchlint.jobscript.facts import CodeFacts
from torchlint.jobscript.model import JobScript, Launch, Launcher
from torchlint.jobscript.rule import JobScriptRule
from torchlint.ruleapi.rule import Example, TorchRange
from torchlint.data.versions import Release

_DDP = """\
import os
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
model = DDP(net.to(int(os.environ["LOCAL_RANK"])))
"""
_LIGHTNING_CHECKS_SLURM = Release(2, 1)
"""Lightning's ``SLURMEnvironment.validate_settings`` raises on a mismatch from 2.1.0 (#18292)."""
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

    PyTorch Lightning run with `srun` takes its processes from Slurm: the
    tasks per node must equal the `Trainer`'s `devices` and the job's nodes
    its `num_nodes` (default 1).  A `srun` launch whose code builds a
    Lightning `Trainer` (from `lightning`, `lightning.pytorch` or
    `pytorch_lightning`) is reported when the tasks per node differ from a
    literal `devices` (or, for `devices="auto"` and for Lightning 2.0 and
    newer where that is the default, from the GPUs per node), or the job's
    `--nodes` from `num_nodes`.  From Lightning 2.1 the Trainer raises
    `ValueError` on the mismatch at start-up (the release is the
    `lightning-version` setting, else the project's requirement, else the
    newest); before, the ranks silently disagree with the devices.

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
        for launch in job.launches:
            if launch.under_srun and launch.launcher is Launcher.PYTHON and self._lightning(job, launch):
                continue
            processes = launch.processes_per_node
            if gpus is None or processes is None or processes == gpus:
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

    def _lightning(self, job: JobScript, launch: Launch) -> bool:
        """A ``srun`` launch of Lightning code: its tasks and nodes against the
        Trainer's ``devices`` and ``num_nodes`` (True: the launch is Lightning's)."""
        facts: Optional[CodeFacts] = self.code_facts(launch)
        if facts is None or not facts.lightning_trainers:
            return False
        release = self.release("lightning")
        tasks = launch.processes_per_node
        gpus = job.resources.gpus_per_node
        nodes = job.resources.nodes if job.directive("nodes") is not None else None
        fails = (f"Lightning {release} raises `ValueError` at start-up" if not release < _LIGHTNING_CHECKS_SLURM
                 else "the ranks Lightning computes disagree with the devices")
        problems = []
        for trainer in facts.lightning_trainers:
            devices = trainer.devices
            if devices is None and not release < Release(2, 0):
                devices = "auto"  # 2.x default: every visible GPU
            wanted = gpus if devices == "auto" else devices
            num_nodes = 1 if trainer.num_nodes is None else trainer.num_nodes
            found = []
            if isinstance(wanted, int) and not isinstance(wanted, bool) and tasks is not None and wanted != tasks:
                what = f"`devices={devices!r}`" if devices != "auto" else f'`devices="auto"` ({gpus} GPUs)'
                found.append(f"{tasks} task{'s' if tasks != 1 else ''} per node against the Trainer's {what}")
            if isinstance(num_nodes, int) and not isinstance(num_nodes, bool) and nodes is not None \
                    and num_nodes != nodes:
                found.append(f"{nodes} node{'s' if nodes != 1 else ''} against `num_nodes={num_nodes}`")
            if not found:
                if tasks is not None and gpus is not None and tasks != gpus:
                    self.report_span(
                        launch.span,
                        f"`srun` starts {tasks} Lightning process{'es' if tasks != 1 else ''} per node, but the "
                        f"job requests {gpus} GPU{'s' if gpus != 1 else ''} per node",
                        hint="Start one process per GPU",
                    )
                return True  # a Trainer that matches the job's tasks
            problems.append(" and ".join(found))
        self.report_span(
            launch.span,
            f"`srun` starts Lightning with {problems[0]}: {fails}; Slurm's tasks per node must equal `devices` "
            "and its nodes `num_nodes`",
            hint="Set `--ntasks-per-node` to the Trainer's devices and `--nodes` to its num_nodes",
        )
        return True
