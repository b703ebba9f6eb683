"""TL201 dataloader-without-workers."""

from __future__ import annotations

from typing import Dict, Mapping, Optional, Tuple

import libcst as cst

from torchlint import apidata
from torchlint.fixes import add_keyword, bind, spell
from torchlint.model import Applicability
from torchlint.precheck import PrecheckFacts
from torchlint.rule import Example, FixAvailability, Option, OptionValue, Rule, Severity, TorchRange
from torchlint.verification import Contract, Probe, VerificationSpec, usable_cpus

_DATALOADER = "torch.utils.data.DataLoader"
_SLURM_FALLBACK = 4  # workers outside a Slurm job, where SLURM_CPUS_PER_TASK is unset
_TENSOR_DATASETS = frozenset(
    {"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"}
)


def _at_most_one_worker_per_cpu(options: Mapping[str, OptionValue]) -> Dict[str, OptionValue]:
    """For verify's runs (its own program and users' scripts): more workers than CPUs would only fight over cores."""
    configured = options.get("num-workers", 4)
    workers = configured if isinstance(configured, int) else 4
    return {**options, "num-workers": max(1, min(workers, usable_cpus()))}


class DataLoaderWithoutWorkers(Rule):
    """## What it does
    Reports `torch.utils.data.DataLoader(...)` calls that load data in the
    main process: calls that pass `num_workers=0` (as a keyword or as the
    sixth positional argument) and calls that leave `num_workers` out, since
    its default is 0.  Calls whose `num_workers` is a variable or any other
    expression, and calls with a `**kwargs` argument that may carry it, are
    left alone.  A `**` of a dictionary whose keys are known counts as its
    keywords (`kw = dict(batch_size=32); DataLoader(ds, **kw)`, the dict
    assigned once and used only in `**` unpackings): without a
    `num_workers` key the call is reported, with a fix that adds
    `num_workers=`; a `num_workers=0` inside such a dict is reported
    without a fix (the dict may serve other calls).

    ## Why is this bad?
    With no workers the training loop itself reads files, decodes images,
    runs the augmentations and collates every batch, and the GPU sits idle
    while it does.  Worker processes prepare the next batches in the
    background, so loading overlaps with the forward and backward passes.
    A reasonable starting point is one worker per CPU core allotted to each
    GPU (the `--cpus-per-task` of a Slurm job), tuned from there.  Once
    there are workers, `pin_memory=True` speeds up host-to-GPU copies and
    `persistent_workers=True` avoids restarting the workers every epoch;
    the rule mentions them in its hint but does not add them.

    A loader over a small in-memory `TensorDataset` gains little from
    workers; the finding still appears there, and a `# noqa: TL201` records
    that the choice was deliberate.

    ## Example
    ```python
    from torch.utils.data import DataLoader

    train_loader = DataLoader(train_set, batch_size=128, shuffle=True)
    ```

    Use instead:
    ```python
    from torch.utils.data import DataLoader

    train_loader = DataLoader(
        train_set,
        batch_size=128,
        shuffle=True,
        num_workers=8,
        pin_memory=True,
        persistent_workers=True,
    )
    ```

    ## Fix safety
    The fix sets `num_workers` to the value of the `num-workers` option (add
    the keyword, or replace the literal 0).  It is unsafe because worker
    processes change how the program runs:
    - Under the `spawn` and `forkserver` start methods (Windows, macOS, and
      Linux from Python 3.14) the dataset, `collate_fn` and
      `worker_init_fn` are pickled into every worker: lambdas and classes
      defined inside functions fail, and the script needs an
      `if __name__ == "__main__":` guard.
    - Each worker holds its own copy of the dataset, which costs memory, and
      changes a worker makes to it never reach the main process.
    - Random augmentations draw from per-worker seeds, so their values
      differ from a single-process run (before torch 1.9 every worker also
      inherited the same NumPy random state, repeating "random"
      augmentations across workers).
    - An `IterableDataset` that does not split its stream with
      `get_worker_info()` yields every sample once per worker.
    - Under `fork`, CUDA cannot be used inside the dataset.

    ## Options
    - `num-workers` (default `4`): the worker count the fix writes; or
      `"slurm"`, which makes the fix write
      `num_workers=int(os.environ.get("SLURM_CPUS_PER_TASK", 4))` (adding
      `import os` once when the file lacks it): the CPUs the job was given,
      so one fix is right on every node size, and 4 outside Slurm.
    - `min-workers` (default `1`): also report a literal `num_workers`
      below this count (*Single-GPU Training* moves from 1 to 8 workers);
      the fix then writes the larger of the two options.  The default
      reports only 0 or a missing `num_workers`.

    ## Source guide
    *DGX cluster guidelines* (a GPU cluster's user guide) asks for
    `num_workers` > 0 together with `pin_memory` and `persistent_workers`;
    *GPU Computing Guide* (Ohio Supercomputer Center) matches the worker
    count to the CPUs requested from Slurm; *Chapter 16: GPU Acceleration &
    Distributed Training* (an online PyTorch training book) lists
    `num_workers>0` among its takeaways; and *Single-GPU Training*
    (Princeton Research Computing) has the reader raise `num_workers` and
    the CPUs per task together.
    """

    code = "TL201"
    name = "dataloader-without-workers"
    summary = "`DataLoader` loads batches in the main process (`num_workers` is 0 or missing)"
    aliases = ("TOR401",)
    fix_availability = FixAvailability.ALWAYS
    severity = Severity.WARNING  # advice: the right call depends on the project
    fix_summary = "unsafe: `num_workers=4` (the `num-workers` option)"
    torch_range = TorchRange(note="`num_workers` has always defaulted to 0")
    options = {
        "num-workers": Option(
            4,
            'The `num_workers` value the fix writes, or `"slurm"`: the CPUs the Slurm job was given '
            "(`SLURM_CPUS_PER_TASK`, 4 outside Slurm).",
            minimum=1,
            words=("slurm",),
        ),
        "min-workers": Option(
            1,
            "Also report a literal `num_workers` below this (the default, 1, reports only 0 or a missing one).",
            minimum=1,
        ),
    }
    trigger_words = ("DataLoader",)

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """Only calls of torch's ``DataLoader`` are reported."""
        return facts.imports_torch and facts.mentions(("DataLoader",))
    valid = (
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(dataset, batch_size=32, num_workers=4)
        """,
    )
    invalid = (
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=32, shuffle=True)
            """,
            fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=32, shuffle=True, num_workers=4)
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=32, num_workers=0)
            """,
            fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=32, num_workers=2)
            """,
            options={"num-workers": 2},
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=32, num_workers=2)
            """,
            fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=32, num_workers=8)
            """,
            options={"min-workers": 8},
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=32)
            """,
            fixed="""
            import os
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=32, num_workers=int(os.environ.get("SLURM_CPUS_PER_TASK", 4)))
            """,
            options={"num-workers": "slurm"},
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        comparison=".verify_compare:check",
        probes=(Probe("datasets", "verify_probe.py"),),
        program_options=_at_most_one_worker_per_cpu,
        contract=Contract(
            level="identical",
            promise=(
                "A map-style dataset whose `__getitem__` is deterministic yields the same batches "
                "in the same order with worker processes as without, for a seeded sampler."
            ),
            checks=(
                "every output (the batches the program collected) is identical",
                (
                    "each dataset the program loads from is probed: an `IterableDataset`, or a "
                    "`__getitem__` that returns different values under different seeds, is "
                    "reported"
                ),
                "the main process's random generator state after the run is compared",
            ),
            differences=(
                (
                    "Random augmentations inside `__getitem__` draw from per-worker seeds, so "
                    "their values change with workers (and with the worker count), and the main "
                    "process's random stream is no longer consumed by them."
                ),
                (
                    "An `IterableDataset` that does not shard itself with `get_worker_info()` "
                    "yields every sample once per worker."
                ),
                (
                    "With `persistent_workers=True` the shuffle order differs from the second "
                    "epoch on unless the sampler has its own generator."
                ),
            ),
            speed=(
                "Loading overlaps with training: large when loading is I/O-bound or the machine "
                "has spare cores, none when the data is already in memory; worker start-up costs "
                "time every epoch."
            ),
        ),
    )

    def _is_tensor_dataset(self, value: cst.BaseExpression) -> bool:
        """``TensorDataset(...)``, or a name every known assignment of which is one."""
        found = self.facts.values.of(value)
        return found is not None and found.qualified in _TENSOR_DATASETS

    def visit_Call(self, node: cst.Call) -> None:
        if self.names.call_name(node) != _DATALOADER:
            return
        arguments = bind(node, apidata.signature(_DATALOADER), self.context.torch_version,
                         self.facts.values.splatted)
        given = arguments.argument("num_workers")
        if given is None and arguments.may_be_present("num_workers"):
            return  # `*args` or `**kwargs` may carry num_workers
        value: Optional[cst.BaseExpression] = given.value if given is not None else None
        minimum = self.option("min-workers")
        count = _literal_int(value) if value is not None else None
        if value is not None and (count is None or count >= max(1, minimum)):
            return  # enough workers, or an expression the linter cannot know
        if value is None:
            message = (
                "`DataLoader` without `num_workers` loads every batch in the main "
                "process; set `num_workers` > 0 so loading overlaps with training"
            )
        elif count == 0:
            message = (
                "`DataLoader` with `num_workers=0` loads every batch in the main "
                "process; set `num_workers` > 0 so loading overlaps with training"
            )
        else:
            message = (
                f"`DataLoader` with `num_workers={count}` has fewer workers than the configured "
                f"minimum ({minimum}); loading may not keep up with training"
            )
        fix = None
        workers = self._workers(minimum) if "num_workers" not in arguments.splatted else None
        if workers is not None:  # (a count in a dict others may share is not the fix's to change)
            expression, text, imports = workers
            description = f"Set `num_workers={text}`"
            target, new = (node, add_keyword(node, "num_workers", expression)) if value is None else (value, expression)
            fix = self.replace(target, new, Applicability.UNSAFE, description, imports=imports)
        self.report(node, message, fix=fix, hint=self._hint(node))

    def _workers(self, minimum: int) -> Optional[Tuple[cst.BaseExpression, str, Tuple[str, ...]]]:
        """What the fix writes: the configured count (at least ``min-workers``),
        or the CPUs of the Slurm job read from its environment."""
        configured = self.option("num-workers")
        if configured != "slurm":
            if not isinstance(configured, int) or configured < 1:
                return None  # only through the Python API: settings files refuse it
            workers = max(configured, minimum)
            return cst.Integer(str(workers)), str(workers), ()
        getter = spell(self.names, "os.environ.get")
        if getter is None:
            return None  # `os` is bound to something else in this file
        fallback = max(_SLURM_FALLBACK, minimum)
        text = f'int({getter.text}("SLURM_CPUS_PER_TASK", {fallback}))'
        return cst.parse_expression(text), text, getter.imports

    def _hint(self, node: cst.Call) -> str:
        arguments = bind(node, apidata.signature(_DATALOADER), self.context.torch_version)
        dataset = arguments.argument("dataset")
        if dataset is not None and self._is_tensor_dataset(dataset.value):
            return (
                "The dataset is an in-memory `TensorDataset`, where workers gain little; "
                "if loading is not the bottleneck, keep 0 and add `# noqa: TL201`"
            )
        missing = [
            f"`{name}=True`"
            for name in ("pin_memory", "persistent_workers")
            if not arguments.may_be_present(name)
        ]
        hint = "Start near the number of CPU cores per GPU"
        if missing:
            hint += "; with workers, " + " and ".join(missing) + " also usually help"
        return hint


def _literal_int(value: cst.BaseExpression) -> Optional[int]:
    """The value of an integer literal (in parentheses too), else None."""
    if isinstance(value, cst.Integer):
        number = value.evaluated_value
        return number if isinstance(number, int) else None
    return None
