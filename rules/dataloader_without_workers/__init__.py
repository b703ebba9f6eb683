"""TL201 dataloader-without-workers."""

from __future__ import annotations

from pathlib import PurePath
from typing import Callable, Dict, List, Mapping, Optional, Tuple

import libcst as cst

from torchlint.data import apidata
from torchlint.analysis.frameworks import FrameworkCall, class_words, packages
from torchlint.data.apidata import Framework
from torchlint.analysis.import_time import ImportTime, defined_in_function, is_main_guard
from torchlint.analysis.scopes import BindingKind
from torchlint.analysis.summaries import loading_words
from torchlint.analysis.queries import summaries
from torchlint.source.arguments import BoundArguments
from torchlint.ruleapi.fixes import add_keyword, bind, spell
from torchlint.model import Applicability
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, FileContext, FixAvailability, Option, OptionValue, Rule, Severity, TorchRange
from torchlint.ruleapi.verification import Contract, Probe, VerificationSpec, usable_cpus

_DATALOADER = "torch.utils.data.DataLoader"
_SLURM_FALLBACK = 4  # workers outside a Slurm job, where SLURM_CPUS_PER_TASK is unset
_TENSOR_DATASETS = frozenset(
    {"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"}
)
_TRANSFORMERS = Framework.TRANSFORMERS
_HF_WORKERS = "dataloader_num_workers"
_ITERABLE_DATASETS = frozenset({"torch.utils.data.IterableDataset", "torch.utils.data.dataset.IterableDataset"})
_WORKER_INFO = frozenset({"torch.utils.data.get_worker_info", "torch.utils.data._utils.worker.get_worker_info"})
_MAX_BASES = 8


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
    without a fix (the dict may serve other calls), and so is a dict that
    passes `num_workers=0` on some paths and nothing on the others
    (`**({"num_workers": 0, "pin_memory": True} if cuda else {})`: zero on
    every path).

    A loader built by a function of the project (in the same file or
    another module) whose every `return` builds it (or a tuple with
    loaders in it, read where a caller unpacks the call: `train_loader,
    test_loader = load_cifar100(ds_a, ds_b, bs, num_workers=8)`; a keyword
    the tuple's loaders pass differently is not known)
    (`def get_dataloader(ds, batch_size, **kwargs): return DataLoader(ds,
    batch_size=batch_size, **kwargs)`, a method such as
    `self.train_loader()`) is read at each call of the function: the
    keywords the function writes, with the call's arguments put in for its
    parameters (their defaults where the call leaves them), the call's
    extra positional arguments where the function passes its `*args` on
    (`return DataLoader(self, *args, **kwargs)`), and the
    keywords the call passes through `**kwargs` (a `**` of a dict the
    function spells, `dict(...)` or `{...}` assigned once, counts as its
    keywords; so does a `**` of a dict at the call whose keys the flow
    knows, `make_data_loader(args, **kwargs)` after `kwargs = {"num_workers":
    4, "pin_memory": True}`, a key it holds on some paths only, `{...} if
    use_cuda else {}`, counting where it is passed).  A function may also return another project
    function's call that builds it (`def make_loader(ds, workers=0, **kw):
    return build(ds, num_workers=workers, **kw)`), up to eight functions
    deep: the keyword is then read at the outermost call that decides it,
    and a keyword that reaches an inner function's parameter through
    `**kw` is set by passing it under that parameter's name.  What the function's code says, never its name, decides.  Such a call is reported when the call decides the
    worker count: a `num_workers=0` it passes, a parameter's default 0 it
    leaves, or a missing `num_workers` it could pass through `**kwargs`;
    the fix passes the count in the call.  A count the function writes
    itself is reported at its `DataLoader(...)`, and a call that unpacks
    `**options`, or a function that changes its `**kwargs` before passing
    them on, is left alone.

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
    that the choice was deliberate.  In test files (`test_*.py`,
    `*_test.py`, `conftest.py`, unless a script run under `if __name__ ==
    "__main__":` that imports no test framework nor defines a test pytest can call, or under a `tests/`
    folder) an explicit
    `num_workers=0` is such a choice and is not reported (the `test-files`
    option reports it); a missing `num_workers` still is.

    Hugging Face Transformers' `Trainer` builds its loaders from
    `TrainingArguments` (and `Seq2SeqTrainingArguments`, which inherits the
    field): `dataloader_num_workers`, default 0, is passed straight to
    `DataLoader(num_workers=...)`.  A `TrainingArguments(...)` call that
    leaves it out or passes 0 (or less than `min-workers`) is reported, for
    Transformers 4.9 and newer (the oldest release checked to have the
    field; the release is the `transformers-version` setting, else the
    project's requirement, else the newest); so are TRL's configurations
    (`SFTConfig`, `DPOConfig`, ...), which take the field unchanged.  Calls
    that unpack `**kwargs`, arguments parsed from the command line
    (`HfArgumentParser`) or read from a config file, and a
    `TrainingArguments(...)` that only stands in when a caller passes none
    (`if args is None: args = TrainingArguments(output_dir=...)`, as in a
    vendored `Trainer`) are left alone.
    Only arguments a Trainer reads are reported: those handed to a
    Transformers `Trainer` (`Seq2SeqTrainer`, a subclass, a TRL trainer) of
    the file, directly, through the file's functions and classes, or stored
    on `self` and passed later; those whose `dataloader_num_workers` the file's own code
    reads; and those that reach code the file does not show (another
    module's or a library's function, a `return`, a module-level name) while
    the file names a Trainer class.  Arguments kept as a bag of settings for a
    hand-written loop (only their other fields read, printed, compared) are
    left alone, and so are arguments that reach unseen code from a file that
    names no Trainer (precision first; what other files name is not asked, as
    flake8 and the editor lint one file and must agree with `torchlint check`):
    a module that only builds the arguments another module hands to its
    Trainer is not reported.

    Not reported, and not fixed: a loader over an `IterableDataset` whose
    class (in this file) never calls `torch.utils.data.get_worker_info()`
    and that is given no `worker_init_fn`: every worker would iterate the
    whole stream, so workers would repeat each sample.  The same holds for
    `TrainingArguments` given to a `Trainer` whose `train_dataset` is such a
    dataset; where the loader's (or the Trainer's) dataset is not known and
    the file builds such a dataset, the call is left alone too.

    ## Example
    ```python
    from torch.utils.data import DataLoader

    def make_loader(train_set):
        return DataLoader(train_set, batch_size=128, shuffle=True)
    ```

    Use instead:
    ```python
    from torch.utils.data import DataLoader

    def make_loader(train_set):
        return DataLoader(
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
      `worker_init_fn` are pickled into every worker, and every worker
      imports the main script again.  So no fix is offered, and the message
      says why, where workers could not start: the dataset's class, the
      `collate_fn` or the `worker_init_fn` is defined in a notebook or
      inside a function, or is a lambda (workers cannot unpickle them); or,
      in a file that is not a notebook, the loader is built when the file is
      imported and the file has no `if __name__ == "__main__":` block, or it
      is iterated when the file is imported (each worker would start the
      training again).
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
    - `test-files` (default `false`): also report an explicit literal
      `num_workers` (0, or below `min-workers`) in test files.
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
    fix_availability = FixAvailability.SOMETIMES
    severity = Severity.WARNING  # advice: the right call depends on the project
    fix_summary = ("unsafe: `num_workers=4` (the `num-workers` option); none where workers could not start under "
                   "the spawn start method (a script with no main guard, a dataset class defined in a notebook)")
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
        "test-files": Option(
            False,
            "Also report an explicit `num_workers=0` (or below `min-workers`) in test files (`test_*.py`, "
            "`*_test.py`, `conftest.py`, files under `tests/`); a missing `num_workers` is reported there anyway.",
        ),
    }
    project_queries = (summaries(),)

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """Only calls of torch's ``DataLoader`` and of Transformers' training arguments are reported."""
        if facts.imports_from(packages(_TRANSFORMERS)) and facts.mentions(class_words(_TRANSFORMERS, "training-arguments")):
            return True
        if facts.mentions(loading_words(facts.project.summaries if facts.project is not None else None)):
            return True  # a call of a project function that builds a loader
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
            def make_loader(dataset):
                return DataLoader(dataset, batch_size=32, shuffle=True)
            """,
            fixed="""
            from torch.utils.data import DataLoader
            def make_loader(dataset):
                return DataLoader(dataset, batch_size=32, shuffle=True, num_workers=4)
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=32, num_workers=0)
            if __name__ == "__main__":
                train(loader)
            """,
            fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=32, num_workers=2)
            if __name__ == "__main__":
                train(loader)
            """,
            options={"num-workers": 2},
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            def make_loader(dataset):
                return DataLoader(dataset, batch_size=32, num_workers=2)
            """,
            fixed="""
            from torch.utils.data import DataLoader
            def make_loader(dataset):
                return DataLoader(dataset, batch_size=32, num_workers=8)
            """,
            options={"min-workers": 8},
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            def make_loader(dataset):
                return DataLoader(dataset, batch_size=32)
            """,
            fixed="""
            import os
            from torch.utils.data import DataLoader
            def make_loader(dataset):
                return DataLoader(dataset, batch_size=32, num_workers=int(os.environ.get("SLURM_CPUS_PER_TASK", 4)))
            """,
            options={"num-workers": "slurm"},
        ),
        # No fix: workers could not start under the spawn start method.
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=32)
            for batch in loader:
                step(batch)
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader, Dataset
            def main():
                class Squares(Dataset):
                    def __getitem__(self, i):
                        return i * i
                return DataLoader(Squares(), batch_size=32)
            if __name__ == "__main__":
                main()
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            def make_loader(dataset):
                return DataLoader(dataset, batch_size=32, collate_fn=lambda batch: batch)
            """,
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
            fact = self.facts.frameworks.call(node)
            if fact is not None and fact.framework is _TRANSFORMERS and fact.role == "training-arguments":
                self._training_arguments(fact)
            elif fact is None and self.facts.callees.built_loader(node) is not None:
                self._wrapped(node)
            return
        arguments = bind(node, apidata.signature(_DATALOADER), self.context.torch_version,
                         self.facts.values.splatted)
        given = arguments.argument("num_workers")
        zero_on_every_path = False
        if given is None and arguments.may_be_present("num_workers"):
            # `**({"num_workers": 0, "pin_memory": True} if cuda else {})`: 0 where it is
            # passed, the default 0 where it is not; anything else may carry a count
            possible = arguments.values("num_workers")
            if not possible or not all(self.facts.values.int_constant(value) == 0 for value in possible):
                return  # `*args` or `**kwargs` may carry num_workers
            zero_on_every_path = True
        dataset = arguments.argument("dataset")
        if arguments.argument("worker_init_fn") is None and not arguments.may_be_present("worker_init_fn") \
                and self._repeats_per_worker(dataset.value if dataset is not None else None):
            return  # workers would each yield the whole stream
        self._check(node, "num_workers", given.value if given is not None else None,
                    ("`DataLoader`", "the main process", ""), lambda: self._hint(node),
                    lambda: self._spawn_problem(node, arguments),
                    "num_workers" in arguments.splatted or zero_on_every_path)

    def _wrapped(self, node: cst.Call) -> None:
        """A call of a project function that builds a loader (in this file or
        another module): reported here when this call decides the worker
        count (its argument, a default it leaves, or a keyword it could pass
        through ``**kwargs``); a count the function writes itself is
        reported at its ``DataLoader(...)``."""
        wrapped = self.facts.loaders.wrapped(node)
        if wrapped is None or wrapped.loader != _DATALOADER:
            return
        workers = wrapped.keyword("num_workers")
        if not workers.known or not workers.at_call:
            return
        if self._repeats_per_worker(wrapped.keyword("dataset").argument):
            return  # workers would each yield the whole stream
        if not wrapped.keyword("worker_init_fn").known or wrapped.keyword("worker_init_fn").value is not None:
            return
        subject = f"`{wrapped.name}(...)` builds a `DataLoader`"
        self._check(node, "num_workers", workers.value, (subject, "the main process", ""),
                    lambda: "Start near the number of CPU cores per GPU", lambda: self._spawn_problem_at(node),
                    wrapped=(workers.argument, workers.settable))

    def _training_arguments(self, fact: FrameworkCall) -> None:
        """Transformers' ``dataloader_num_workers``: missing, 0, or below ``min-workers``."""
        field = apidata.frameworks().argument(_TRANSFORMERS, "training-arguments", _HF_WORKERS)
        given = fact.argument(_HF_WORKERS)
        if not field.exists_in(self.release(_TRANSFORMERS.value)) or (given is None and fact.may_be_present(_HF_WORKERS)):
            return
        if not self.facts.frameworks.arguments_read(fact, _HF_WORKERS):
            return  # a bag of settings no Trainer reads
        datasets = self.facts.frameworks.trainer_dataset(fact)
        if any(self._repeats_per_worker(dataset) for dataset in datasets) if datasets is not None \
                else self._repeats_per_worker(None):
            return  # the Trainer's workers would each yield the whole stream
        self._check(fact.call, _HF_WORKERS, given.value if given is not None else None,
                    (f"`{_called_name(fact.call)}`", "the Trainer's main process", " (the default is 0)"),
                    lambda: "Start near the number of CPU cores per GPU; the Trainer already pins memory by default")

    def _check(self, call: cst.Call, keyword: str, value: Optional[cst.BaseExpression],
               words: Tuple[str, str, str], hint: Callable[[], str],
               withheld: Callable[[], Optional[str]] = lambda: None, splatted: bool = False,
               wrapped: Optional[Tuple[Optional[cst.BaseExpression], Optional[str]]] = None) -> None:
        """Report ``call`` when ``keyword`` is missing, 0 or below ``min-workers``; ``words``
        are the subject, the process that loads and a note on a missing value; ``withheld``
        says why no fix may be offered (None: a fix may be); ``splatted``: the value
        comes from a ``**`` dict, which the fix leaves alone; ``wrapped``: ``call`` runs a
        project function that builds the loader, with the call's own argument that
        carries the value (the fix replaces it) and the keyword the call may add instead."""
        subject, process, default = words
        minimum = self.option("min-workers")
        count = _literal_int(value) if value is not None else None
        if value is not None and (count is None or count >= max(1, minimum)):
            return  # enough workers, or an expression the linter cannot know
        if value is not None and _in_tests(self.context) and not self.option("test-files"):
            return  # a test that sets its worker count chose it
        if wrapped is not None:
            argument, settable = wrapped
            note = f" (the default of its parameter `{settable}`)" if value is not None and argument is None \
                and settable is not None else ""
            if value is None or count == 0:
                written = f"without `{keyword}`" if value is None else f"with `{keyword}=0`{note}"
                message = f"{subject} {written}, which loads every batch in {process}; pass `{keyword}` > 0 here"
            else:
                message = (f"{subject} with `{keyword}={count}`, fewer workers than the configured minimum "
                           f"({minimum}); loading may not keep up with training")
        elif value is None or count == 0:
            written = f"without `{keyword}`" if value is None else f"with `{keyword}=0`"
            message = (
                f"{subject} {written} loads every batch in {process}{default if value is None else ''}; "
                f"set `{keyword}` > 0 so loading overlaps with training"
            )
        else:
            message = (
                f"{subject} with `{keyword}={count}` has fewer workers than the configured "
                f"minimum ({minimum}); loading may not keep up with training"
            )
        fix = None
        workers = self._workers(minimum) if not splatted else None  # (a count in a dict others may share is not the fix's to change)
        reason = withheld()
        if reason is not None:
            message += f"; no fix is offered: {reason}"
            workers = None
        if workers is not None and wrapped is not None:
            expression, text, imports = workers
            argument, settable = wrapped
            if argument is not None:
                fix = self.replace(argument, expression, Applicability.UNSAFE, f"Pass `{text}`", imports=imports)
            elif settable is not None:
                fix = self.replace(call, add_keyword(call, settable, expression), Applicability.UNSAFE,
                                   f"Pass `{settable}={text}`", imports=imports)
        elif workers is not None:
            expression, text, imports = workers
            target, new = (call, add_keyword(call, keyword, expression)) if value is None else (value, expression)
            fix = self.replace(target, new, Applicability.UNSAFE, f"Set `{keyword}={text}`", imports=imports)
        self.report(call, message, fix=fix, hint=hint())

    def _repeats_per_worker(self, dataset: Optional[cst.BaseExpression]) -> bool:
        """The dataset is (or, not known, the file builds) an ``IterableDataset``
        of this file that does not shard by worker: each worker would yield
        every sample."""
        makers = self.facts.instances.makers(dataset) if dataset is not None else None
        if makers is not None:
            return any(maker.local is not None and self._unsharded_iterable(maker.local) for maker in makers)
        for call in self.facts.nodes_of(cst.Call):
            local = self._local_class(call.func)
            if local is not None and self._unsharded_iterable(local):
                return True
        return False

    def _local_class(self, func: cst.BaseExpression) -> Optional[cst.ClassDef]:
        if not isinstance(func, cst.Name):
            return None
        bindings = self.facts.scopes.resolve(func)
        if len(bindings) == 1 and bindings[0].kind is BindingKind.CLASS and isinstance(bindings[0].node, cst.ClassDef):
            return bindings[0].node
        return None

    def _unsharded_iterable(self, node: cst.ClassDef) -> bool:
        """A class of this file that derives from torch's ``IterableDataset``
        (through the file's classes) and whose classes never call
        ``get_worker_info()``."""
        chain: List[cst.ClassDef] = []
        current: Optional[cst.ClassDef] = node
        iterable = False
        while current is not None and all(current is not seen for seen in chain) and len(chain) < _MAX_BASES:
            chain.append(current)
            following: Optional[cst.ClassDef] = None
            for base in current.bases:
                if base.keyword is not None:
                    continue
                if self.names.qualified_name(base.value) in _ITERABLE_DATASETS:
                    iterable = True
                following = following or self._local_class(base.value)
            current = following
        if not iterable:
            return False
        parents = self.facts.parents
        for call in self.facts.nodes_of(cst.Call):
            if self.names.call_name(call) not in _WORKER_INFO:
                continue
            node_: Optional[cst.CSTNode] = call
            while node_ is not None:
                if any(node_ is cls for cls in chain):
                    return False  # the class shards its stream by worker
                node_ = parents.get(node_)
        return True

    def _spawn_problem(self, node: cst.Call, arguments: BoundArguments) -> Optional[str]:
        """Why worker processes could not start under the spawn start method
        (macOS, Windows, Linux from Python 3.14), which pickles the dataset
        and the loader's functions by reference and imports the main script
        again in every worker; None when nothing says they could not."""
        notebook = PurePath(self.context.path).suffix == ".ipynb"
        parents = self.facts.parents
        dataset = arguments.argument("dataset")
        for maker in sorted(self.facts.instances.makers(dataset.value) or (), key=lambda m: m.local_name or "") \
                if dataset is not None else ():
            if maker.local is None:
                continue
            if notebook:
                return (f"the dataset class `{maker.local_name}` is defined in this notebook, and workers started "
                        "with the spawn start method (macOS, Windows, Python 3.14 on Linux) cannot import it")
            if defined_in_function(maker.local, parents):
                return (f"the dataset class `{maker.local_name}` is defined inside a function, and workers started "
                        "with the spawn start method (macOS, Windows, Python 3.14 on Linux) cannot unpickle it")
        for keyword in ("collate_fn", "worker_init_fn"):
            given = arguments.argument(keyword)
            problem = self._unpicklable(given.value, notebook) if given is not None else None
            if problem is not None:
                return (f"`{keyword}` {problem}, which workers started with the spawn start method "
                        "(macOS, Windows, Python 3.14 on Linux) cannot unpickle")
        if notebook:
            return None  # a notebook is not imported again by workers
        at_import = ImportTime(parents, self.facts.training)
        unguarded = at_import.runs_at_import(node) and not any(is_main_guard(s) for s in self.context.module.body)
        iterated = any(node in loop.loaders and at_import.runs_at_import(loop.loop) for loop in self.facts.loaders.loops())
        if unguarded or iterated:
            where = "built" if unguarded else "iterated"
            return (f"the loader is {where} when the file is imported, not under `if __name__ == \"__main__\":`, "
                    "and with the spawn start method (macOS, Windows, Python 3.14 on Linux) every worker imports "
                    "the file again; put the training under a main guard first")
        return None

    def _spawn_problem_at(self, node: cst.Call) -> Optional[str]:
        """Why workers could not start under the spawn start method for a
        loader a project function builds at ``node``: the call runs when the
        file is imported and the file has no main guard (every worker would
        import it again), or the file is a notebook whose classes workers
        cannot import."""
        if PurePath(self.context.path).suffix == ".ipynb":
            return ("the loader is built in a notebook, and workers started with the spawn start method "
                    "(macOS, Windows, Python 3.14 on Linux) cannot import what the notebook defines")
        at_import = ImportTime(self.facts.parents, self.facts.training)
        if at_import.runs_at_import(node) and not any(is_main_guard(s) for s in self.context.module.body):
            return ("the loader is built when the file is imported, not under `if __name__ == \"__main__\":`, "
                    "and with the spawn start method (macOS, Windows, Python 3.14 on Linux) every worker imports "
                    "the file again; put the training under a main guard first")
        return None

    def _unpicklable(self, value: cst.BaseExpression, notebook: bool) -> Optional[str]:
        """How a function passed to the loader cannot be pickled by reference."""
        if isinstance(value, cst.Lambda):
            return "is a lambda"
        if not isinstance(value, cst.Name):
            return None
        bindings = self.facts.scopes.resolve(value)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.FUNCTION:
            return None
        definition = bindings[0].node
        if notebook:
            return f"is `{value.value}`, defined in this notebook"
        if definition is not None and defined_in_function(definition, self.facts.parents):
            return f"is `{value.value}`, defined inside a function"
        return None

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


def _called_name(call: cst.Call) -> str:
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else cst.Module([]).code_for_node(func)


def _in_tests(context: FileContext) -> bool:
    """A test file: pytest's default names (``test_*.py``, ``*_test.py``,
    ``conftest.py``) or a file under a ``tests`` folder."""
    return context.is_test_file or "tests" in PurePath(context.path).parts[:-1]


def _literal_int(value: cst.BaseExpression) -> Optional[int]:
    """The value of an integer literal (in parentheses too), else None."""
    if isinstance(value, cst.Integer):
        number = value.evaluated_value
        return number if isinstance(number, int) else None
    return None
