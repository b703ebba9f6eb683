"""TL903 legacy-launcher-in-job."""

from __future__ import annotations

from typing import List, Optional, Tuple

from torchlint.jobscript.model import JobScript, Launch, Launcher, Span
from torchlint.jobscript.rule import JobFix, JobScriptRule
from torchlint.model import Applicability, Edit
from torchlint.ruleapi.rule import Example, FixAvailability, TorchRange, TorchVersion
from torchlint.ruleapi.verification import Contract, VerificationSpec

_USE_ENV = frozenset({"--use_env", "--use-env"})
_MODULE = "torch.distributed.launch"


class LegacyLauncherInJob(JobScriptRule):
    """## What it does
    Reports `python -m torch.distributed.launch` in a batch script.

    ## Why is this bad?
    `torch.distributed.launch` is deprecated since torch 1.10 in favour of
    `torchrun`, which restarts failed workers, supports elastic membership
    and always passes the local rank in the `LOCAL_RANK` environment
    variable.  The old launcher passes `--local-rank=N` (`--local_rank`
    before torch 2.0) as a command-line argument unless given `--use_env`,
    so scripts written for it break in confusing ways as releases change.

    ## Example
    ```bash
    #SBATCH --gres=gpu:4
    python -m torch.distributed.launch --use_env --nproc_per_node=4 train.py
    ```

    Use instead:
    ```bash
    #SBATCH --gres=gpu:4
    torchrun --nproc_per_node=4 train.py
    ```

    Only real launch lines are read: not the bodies of here-documents
    (`cat <<EOF`) or quoted strings that span lines.

    ## Fix safety
    The fix (unsafe) writes `torchrun` in place of `python -m
    torch.distributed.launch`, keeps every other argument and drops
    `--use_env`, which torchrun always implies.  With any other interpreter
    (`python3.11 -u`, `/env/bin/python`) it keeps the interpreter and its
    options and names `torch.distributed.run` instead, which is torchrun
    under that interpreter; a module named through a variable gets no fix.
    It is unsafe because the launched script must then read its local rank
    from the `LOCAL_RANK` environment variable: a script that only reads a
    `--local_rank` argument gets none (see TL503 for the Python side).

    ## Source guide
    *DGX cluster guidelines* (a GPU cluster's user guide) points to
    `torchrun`; *GPU Computing Guide* (Ohio Supercomputer Center) and
    *Chapter 16: GPU Acceleration & Distributed Training* (an online
    PyTorch training book) still show `python -m torch.distributed.launch`
    in their job scripts, which is what this rule updates.
    """

    code = "TL903"
    name = "legacy-launcher-in-job"
    summary = "`python -m torch.distributed.launch` in a job script; use `torchrun`"
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "unsafe: `torchrun` (or `torch.distributed.run` under the same interpreter) with the same arguments (the script must read `LOCAL_RANK`)"
    torch_range = TorchRange(min=TorchVersion(1, 10), note="torchrun exists from 1.10")
    verification = VerificationSpec(
        contract=Contract(
            level="changed",
            promise=(
                "The same script starts with the same arguments and process count under torchrun; "
                "the local rank arrives in `LOCAL_RANK` instead of a `--local-rank` argument."
            ),
            checks=(
                "no program: the fix edits a job script, not Python; run the fixed job once "
                "(`torchlint verify --slurm` runs verify itself on a compute node)",
            ),
            differences=("A script that reads only the `--local-rank` argument no longer gets its rank.",),
        ),
    )
    valid = (
        "#SBATCH --gres=gpu:2\ntorchrun --nproc_per_node=2 train.py\n",
        "#SBATCH --gres=gpu:1\npython train.py\n",
        Example("#SBATCH --gres=gpu:2\npython -m torch.distributed.launch --nproc_per_node=2 train.py\n",
                torch="1.9", findings=0),
    )
    invalid = (
        Example(
            "#SBATCH --gres=gpu:4\npython -m torch.distributed.launch --use_env --nproc_per_node=4 train.py --lr 0.1\n",
            fixed="#SBATCH --gres=gpu:4\ntorchrun --nproc_per_node=4 train.py --lr 0.1\n",
        ),
        Example(
            "#!/bin/bash\n#SBATCH --gpus-per-node=4\n#SBATCH --ntasks-per-node=4\n\n"
            "python -m torch.distributed.launch \\\n    --nproc_per_node=4 \\\n    train_ddp.py\n",
            fixed="#!/bin/bash\n#SBATCH --gpus-per-node=4\n#SBATCH --ntasks-per-node=4\n\n"
            "torchrun \\\n    --nproc_per_node=4 \\\n    train_ddp.py\n",
        ),
    )

    def check(self, job: JobScript) -> None:
        for launch in job.launches:
            if launch.launcher is Launcher.LEGACY_LAUNCH:
                words = launch.launcher_words
                where = Span(words[0].span.start, words[-1].span.end, words[0].span.line)
                edits = self._edits(launch, where)
                plain = edits is not None and edits[0].text == "torchrun"
                fix = None if edits is None else JobFix(
                    edits, Applicability.UNSAFE,
                    "Replace with `torchrun` (the script must read LOCAL_RANK from the environment)" if plain else
                    "Run `torch.distributed.run` (torchrun) under the same interpreter (the script must read "
                    "LOCAL_RANK from the environment)")
                self.report_span(
                    where,
                    "`python -m torch.distributed.launch` is deprecated; use `torchrun` (the script then reads "
                    "`LOCAL_RANK` from the environment)",
                    fix=fix,
                )

    def _edits(self, launch: Launch, where: Span) -> Optional[Tuple[Edit, ...]]:
        """``torchrun`` for a plain ``python -m torch.distributed.launch``;
        for any other interpreter (``python3.11 -u``, ``/env/bin/python``)
        only the module's name changes, so that interpreter still runs it;
        None when the module's name is not written out in the script."""
        text = self.context.source
        words = launch.launcher_words
        if [text[w.span.start:w.span.end] for w in words] == ["python", "-m", _MODULE]:
            edits: List[Edit] = [Edit(where.start, where.end, "torchrun")]
        else:
            module = words[-1]
            written = text[module.span.start:module.span.end]
            if written.count(_MODULE) != 1:
                return None
            start = module.span.start + written.index(_MODULE) + len("torch.distributed.")
            edits = [Edit(start, start + len("launch"), "run")]
        for word in launch.option_words:
            if word.text in _USE_ENV:
                start = word.span.start
                while start > 0 and text[start - 1] in " \t":
                    start -= 1
                edits.append(Edit(start, word.span.end, ""))
        return tuple(edits)
