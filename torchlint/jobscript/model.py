"""Value types of a parsed batch script (frozen; built by ``parse``)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Tuple


GPU_OPTIONS = ("gpus-per-node", "gres", "gpus", "gpus-per-task")
"""The options that ask for GPUs, in the order they are read: the first one
given decides."""


@dataclass(frozen=True)
class Span:
    """Character offsets ``[start, end)`` in the script's text, and the 1-based
    line the span starts on."""

    start: int
    end: int
    line: int


@dataclass(frozen=True)
class Directive:
    """One option of an ``#SBATCH`` line, its long name without dashes
    (``-c 4`` is ``cpus-per-task``), its value ("" for a flag) and where the
    whole ``#SBATCH`` line is."""

    option: str
    value: str
    span: Span


class Launcher(enum.Enum):
    """What starts the Python processes of a launch line."""

    PYTHON = "python"
    TORCHRUN = "torchrun"
    LEGACY_LAUNCH = "python -m torch.distributed.launch"
    DISTRIBUTED_RUN = "python -m torch.distributed.run"
    ACCELERATE = "accelerate launch"


@dataclass(frozen=True)
class Word:
    """One shell word after quote removal and expansion (``None`` when it uses
    a variable whose value is unknown), and where it was written."""

    text: Optional[str]
    span: Span


@dataclass(frozen=True)
class Launch:
    """One command that starts Python code.

    ``processes_per_node`` is how many copies run on each node (``None``:
    unknown, e.g. ``torchrun --nproc_per_node=gpu``); ``target`` is the
    launched file when it could be resolved and exists; ``under_srun`` and
    ``under_mpirun`` say which wrapper started it.
    """

    launcher: Launcher
    span: Span
    target: Optional[Path]
    processes_per_node: Optional[int]
    under_srun: bool
    under_mpirun: bool
    launcher_words: Tuple[Word, ...]
    """The words that name the launcher (``python -m torch.distributed.launch``)."""
    option_words: Tuple[Word, ...]
    """The launcher's own options, before the script."""


@dataclass(frozen=True)
class Resources:
    """What the job asks Slurm for, per node where that is what matters;
    ``None`` when the script does not say (or says it in a form not read)."""

    nodes: Optional[int]
    tasks_per_node: Optional[int]
    cpus_per_task: Optional[int]
    gpus_per_node: Optional[int]

    @property
    def cpus_per_node(self) -> Optional[int]:
        """CPUs per task times tasks per node (one task when not given)."""
        if self.cpus_per_task is None:
            return None
        return self.cpus_per_task * (self.tasks_per_node or 1)


@dataclass(frozen=True)
class JobScript:
    """A parsed batch script."""

    path: Path
    directives: Tuple[Directive, ...]
    launches: Tuple[Launch, ...]
    resources: Resources

    def gpu_directive(self) -> Optional[Directive]:
        """The directive the GPUs per node are read from (in the order
        ``Resources`` reads them)."""
        for option in GPU_OPTIONS:
            found = self.directive(option)
            if found is not None:
                return found
        return None

    def directive(self, *options: str) -> Optional[Directive]:
        """The last of these options given (sbatch keeps the last value)."""
        found = [d for d in self.directives if d.option in options]
        return found[-1] if found else None
