"""The `torchlint verify` command.

Importing this module imports no torch (``check`` and ``fix`` import it to
register the command); torch is imported when the command runs.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import click

from torchlint.verify.results import EXIT_ERROR

TORCH_MISSING = (
    "torchlint verify runs your code with PyTorch, which is not installed here.\n"
    "Install it with:  pip install 'torchlint[verify]'\n"
    "(or install the torch build for your machine from https://pytorch.org first)"
)


def _rule_names(values: Sequence[str]) -> Tuple[str, ...]:
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def _memory_option(context: click.Context, parameter: click.Parameter, value: Optional[str]) -> int:
    """``8G``, ``512M``, a number of bytes, or ``0`` (no bound); -1 when not given (the default)."""
    del context, parameter
    if value is None:
        return -1
    text = value.strip().upper().removesuffix("B").removesuffix("I")
    unit = text[-1:] if text[-1:] in _UNITS else ""
    number = text[: len(text) - len(unit)]
    try:
        size = float(number)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a size such as 8G, 512M or 0") from None
    if size < 0 or not size == size:
        raise click.BadParameter(f"{value!r} is not a size such as 8G, 512M or 0")
    return int(size * _UNITS[unit])


def _device_option(context: click.Context, parameter: click.Parameter, value: str) -> str:
    """``auto``, ``cpu``, ``cuda`` or ``cuda:N``."""
    del context, parameter
    text = value.strip().lower()
    kind, colon, index = text.partition(":")
    if text in ("auto", "cpu", "cuda") or (kind == "cuda" and colon and index.isdigit()):
        return text
    raise click.BadParameter(f"{value!r} is not one of auto, cpu, cuda, cuda:N")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--rules", "rule_values", multiple=True, metavar="CODES",
              help="Rules to verify, comma-separated codes or names (default: every rule with a fix).")
@click.option("--device", callback=_device_option, default="auto", show_default=True,
              metavar="auto|cpu|cuda|cuda:N",
              help="Where to run: auto is CUDA when a GPU is available, else the CPU (with a warning); "
                   "cuda:N is GPU N as nvidia-smi counts them.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the full report as JSON to FILE.")
@click.option("--markdown", "markdown_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the report as Markdown (for a pull-request comment) to FILE.")
@click.option("--timeout", type=click.FloatRange(min=1), default=120.0, show_default=True,
              help="Seconds each child run may take before its process group is killed.")
@click.option("--memory-limit", "memory_limit", callback=_memory_option, metavar="SIZE",
              help="How much each process of a run may grow beyond its size at start, e.g. 8G or 512M; "
                   "0 for no bound (default: half the machine's memory).  A run past it fails with "
                   "'ran out of memory'.")
@click.option("--threads", type=click.IntRange(min=1), default=1, show_default=True,
              help="torch intra-op threads in every run (timings are per thread count).")
@click.option("--seed", type=int, default=0, show_default=True, help="The seed both versions start from.")
@click.option("--quick", is_flag=True,
              help="Small sizes and short timing budgets (also TORCHLINT_VERIFY_QUICK=1).")
@click.option("--no-timing", is_flag=True, help="Check equivalence only; do not time.")
@click.option("--against", type=click.Path(exists=True, dir_okay=False, path_type=Path), metavar="CHANGED",
              help="Check a change made by hand or by another tool: run PATH (the original) and CHANGED, "
                   "and check the --rules' contract (default: the strict same-outputs contract).")
@click.option("--fail-on-slower", is_flag=True,
              help="Exit 1 when a fix makes the timed step significantly slower.")
@click.option("--record", is_flag=True,
              help="Write each shipped program's result row into its rule's package (measured.json), "
                   "where `torchlint explain` shows it.")
@click.option("--slurm", is_flag=True,
              help="Run this verification as a Slurm job on a compute node (submitted with sbatch) and "
                   "print its report here.")
@click.option("--sbatch-arg", "sbatch_args", multiple=True, metavar="ARG",
              help="With --slurm: an sbatch option such as --gres=gpu:1 (repeatable; added to "
                   "[tool.torchlint.verify] sbatch-args).")
@click.option("--slurm-setup", metavar="LINE",
              help="With --slurm: a shell line that sets up Python on the node, e.g. "
                   "'source venv/bin/activate' (default: this same interpreter's path).")
def verify(paths: Tuple[Path, ...], rule_values: Tuple[str, ...], device: str, json_file: Optional[Path],
           markdown_file: Optional[Path], timeout: float, threads: int, seed: int, quick: bool,
           no_timing: bool, fail_on_slower: bool, record: bool, against: Optional[Path], slurm: bool,
           sbatch_args: Tuple[str, ...], slurm_setup: Optional[str], memory_limit: int = -1) -> None:
    """Run original and auto-fixed code; check that each fix keeps its meaning, and time it.

    With no PATHS, each selected rule's verification program (shipped with
    torchlint) is linted, fixed by torchlint's own fixer with only that rule
    selected, and both versions run in separate processes with the same
    seeds.  The rule's equivalence contract is checked, and both versions
    are timed in separate processes (one program each, seeded slot
    orders) with a 95% interval and an original-vs-original comparison,
    so that noise is not reported as a speedup.  With PATHS, the same
    happens for your own self-contained scripts, one case per rule whose
    fix changes the script; each run works in a copy of the script's
    folder, and nothing of yours is writable from a run.  With --against
    CHANGED, one PATH (the original) is run against CHANGED (a change made
    by hand or by another tool) and judged by the --rules' contracts, or
    without --rules by the strict "same outputs" contract.

    \b
    What is compared (see torchlint/verify/README.md): the script's
    globals and its functions' locals as they return (main(), a
    trainer's methods), followed into its own objects: models (weights,
    gradients, settings), optimizers, tensors, numbers, strings; and what
    it prints.  Nothing need be added to a script.  Optionally:
      torchlint_outputs()  a dict of what to compare instead.
      torchlint_step()     what to time (one training step, one
                           evaluation pass).  Without it the whole script
                           is re-run as the timed unit.
    A rule's probe observes what its contract needs in the run; its
    `torchlint explain` page says what.
    The script runs as __main__ in a copy of its directory with random,
    NumPy and torch seeded, deterministic algorithms on (comparison runs
    only), TORCHLINT_VERIFY_DEVICE set to "cuda" or "cpu" and
    TORCHLINT_VERIFY_RULE to the rule's code; torchlint_step(rule) gets
    the code too if it takes a parameter.

    \b
    Exit status: 0 every fix verified equivalent, an intended change, or
    inconclusive (the cause reported); 1 some fix is not equivalent (or
    changes the random stream where its contract does not expect it, or,
    with --fail-on-slower, is significantly slower); 2 errors (a run
    crashed, ran out of memory, timed out, tried to write your files or
    failed to start, bad options, torch not installed).
    """
    if slurm:
        from torchlint.verify.slurm_command import verify_on_slurm

        sys.exit(verify_on_slurm(click.get_current_context(), sbatch_args, slurm_setup))
    if importlib.util.find_spec("torch") is None:
        click.echo(TORCH_MISSING, err=True)
        sys.exit(EXIT_ERROR)
    from torchlint.verify.main import run_verify  # imports torch

    code = run_verify(
        paths=list(paths),
        rule_names=_rule_names(rule_values),
        device=device,
        json_file=json_file,
        markdown_file=markdown_file,
        timeout=timeout,
        threads=threads,
        seed=seed,
        quick=quick or os.environ.get("TORCHLINT_VERIFY_QUICK") == "1",
        timing=not no_timing,
        record=record,
        against=against,
        fail_on_slower=fail_on_slower,
        memory_limit=memory_limit,
    )
    sys.exit(code)


__all__: List[str] = ["verify"]
