"""TL902 workers-exceed-cpus."""

from __future__ import annotations

from typing import List

from torchlint.jobscript.model import JobScript
from torchlint.jobscript.rule import JobScriptRule
from torchlint.ruleapi.rule import Example, Option, TorchRange


def _code(workers: str) -> str:
    return (
        "from torch.utils.data import DataLoader\n\n"
        f"loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers={workers})\n"
    )


class WorkersExceedCpus(JobScriptRule):
    """## What it does
    Compares the `num_workers` of the launched code's `DataLoader`s with the
    CPUs the job requests per node (`--cpus-per-task` times the tasks per
    node).  It reports, on the `--cpus-per-task` line:
    - more data-loading workers per node (the largest `num_workers` times
      the processes the launch line starts per node) than CPUs requested;
    - `num_workers=0` (or left out) in every loader while each process has
      two or more CPUs.

    A `num_workers` that is not an integer literal (for example read from
    `SLURM_CPUS_PER_TASK`) counts as the `assumed-workers` option's value;
    by default such loaders are not judged.  Scripts without
    `--cpus-per-task` are left alone.

    ## Why is this bad?
    Each worker is a process that wants a core.  More workers than the
    cores Slurm gave the job makes them share cores with the training
    processes, so loading gets slower, not faster.  No workers with several
    cores requested leaves those cores idle while the training loop loads
    every batch itself and the GPU waits.

    ## Example
    ```bash
    #SBATCH --cpus-per-task=4
    #SBATCH --gres=gpu:1
    python train.py       # DataLoader(..., num_workers=16)
    ```

    Use instead:
    ```bash
    #SBATCH --cpus-per-task=16
    #SBATCH --gres=gpu:1
    python train.py       # DataLoader(..., num_workers=16)
    ```

    ## Fix safety
    No automatic fix: the right number depends on the cluster's nodes.

    ## Options
    - `assumed-workers` (default `-1`): the `num_workers` to assume when the
      code's value is not an integer literal; `-1` leaves such loaders out.

    ## Source guide
    *GPU Computing Guide* (Ohio Supercomputer Center) comments
    `num_workers=4` with "match --cpus-per-task"; *Single-GPU Training*
    (Princeton Research Computing) raises `num_workers` and
    `--cpus-per-task` together; *DGX cluster guidelines* (a GPU cluster's
    user guide) sets `num_workers` to the CPU cores available.
    """

    code = "TL902"
    name = "workers-exceed-cpus"
    summary = "DataLoader workers per node do not fit the CPUs the job requests"
    fix_summary = "none"
    torch_range = TorchRange(note="every DataLoader worker is a separate process")
    options = {
        "assumed-workers": Option(-1, "The `num_workers` assumed when the code's value is not a literal; -1: skip."),
    }
    valid = (
        Example("#SBATCH --cpus-per-task=4\npython train.py\n", findings=0, files={"train.py": _code("4")}),
        Example("#SBATCH --cpus-per-task=4\npython train.py\n", findings=0,
                files={"train.py": _code("int(os.environ['SLURM_CPUS_PER_TASK'])")}),
        Example("#SBATCH --cpus-per-task=1\npython train.py\n", findings=0, files={"train.py": _code("0")}),
    )
    invalid = (
        Example("#SBATCH --cpus-per-task=4\npython train.py\n", files={"train.py": _code("16")}),
        Example("#SBATCH -c 8\npython train.py\n", files={"train.py": _code("0")}),
        Example("#SBATCH --cpus-per-task=8\ntorchrun --nproc_per_node=4 train.py\n", files={"train.py": _code("4")}),
        Example("#SBATCH --cpus-per-task=2\npython train.py\n", files={"train.py": _code("workers")},
                options={"assumed-workers": 8}),
    )

    def check(self, job: JobScript) -> None:
        cpus = job.resources.cpus_per_node
        directive = job.directive("cpus-per-task")
        if cpus is None or directive is None:
            return
        assumed = self.option("assumed-workers")
        for launch in job.launches:
            facts = self.code_facts(launch)
            processes = launch.processes_per_node
            if facts is None or processes is None or not facts.workers:
                continue
            known: List[int] = [w if w is not None else assumed for w in facts.workers]
            known = [w for w in known if w >= 0]
            if not known:
                continue
            workers = max(known)
            if workers * processes > cpus:
                per = f" x {processes} processes" if processes != 1 else ""
                self.report_span(
                    directive.span,
                    f"`num_workers={workers}`{per} starts {workers * processes} data-loading workers per node, "
                    f"but the job requests {cpus} CPU{'s' if cpus != 1 else ''} per node",
                    hint="Match `num_workers` to `--cpus-per-task` (per process)",
                )
                return
            if workers == 0 and len(known) == len(facts.workers) and cpus // processes >= 2:
                self.report_span(
                    directive.span,
                    f"{cpus // processes} CPUs per process are requested, but every DataLoader of the code "
                    "on line {line} loads in the main process (`num_workers=0`)".format(line=launch.span.line),
                    hint="Set `num_workers` to the CPUs per task (see TL201)",
                )
                return
