"""TL203 dataloader-without-persistent-workers."""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Set

import libcst as cst

from torchlint.analysis.queries import keyword_passed, summaries
from torchlint.data import apidata
from torchlint.analysis import Analysis
from torchlint.analysis.scopes import BindingKind
from torchlint.analysis.loaders import DATALOADER, WrappedLoader, loader_class
from torchlint.analysis.summaries import BuiltLoader, loading_words
from torchlint.ruleapi.fixes import add_keyword, bind
from torchlint.model import Applicability
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import (
    Example, FileContext, FixAvailability, OptionValue, Rule, TorchRange, TorchVersion, innermost_statement,
)
from torchlint.ruleapi.verification import Contract, Probe, VerificationSpec

_SETTING = "persistent_workers"


def _pure(expr: cst.BaseExpression) -> bool:
    """A name or attribute chain (``n``, ``args.workers``): safe to read twice."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return isinstance(expr, cst.Name)


class DataLoaderWithoutPersistentWorkers(Rule):
    """## What it does
    A suggestion, off by default.  Reports a `torch.utils.data.DataLoader`
    with worker processes (`num_workers` a positive literal, or any value
    other than a literal `0`: a variable, `args.workers`, `int(opt.workers)`,
    `max(1, n // 2)`; a count only known at run time is taken to start workers)
    and no `persistent_workers`, when the file iterates the loader again
    and again (also through a dict of loaders read by key, `loaders[phase]`,
    or walked by `for name, loader in loaders.items()` or `.values()`, the
    dict a display, a comprehension, or filled key by key
    (`loaders[kind] = DataLoader(...)` in a loop), where any loader of the
    dict counts; a loop that only walks the dict repeats nothing, in this file or in another
    module's function the dict is handed to; and through a loop that walks
    a list or tuple display of loaders, `for loader, split in
    zip([valid_loader, test_loader], names)`, which alone repeats nothing): a `for` loop over it that itself runs inside another loop
    (an epoch loop), directly or through a function of the file that an
    epoch loop calls (when that function loops over its parameter, only the
    loaders the calls made in a loop pass count: `test(model, test_loader)`
    once after the epochs is one pass; a method of the file's class called
    on its one instance counts as such a function); or a call in an epoch loop that hands the loader to
    a function of another module that iterates it
    (`train_one_epoch(model, loader, ...)`, through `enumerate`, `tqdm` or
    a logger's `log_every(loader)`), or to one that iterates it again and
    again itself (a generator over `while True: for batch in loader`, or
    `while True: yield from loader`, in any module);
    or a generator of the file that hands out its batches pass after pass
    (`while True: yield from loader`, also when the generator builds the
    loader itself; also `with tqdm(loader) as bar: for batch in bar`); or
    a loader iterated by hand with an `iter(loader)` that runs again and
    again (in the epoch loop, or where a run-dry iterator is made anew in
    the step loop: `except StopIteration: it = iter(loader)`), in this
    file or in a method of a project class, in any module, that keeps the
    loader on `self` (`data_iter = iter(self.loader)` again in its step loop).
    What another module's function does comes from its code (the project
    index's summaries), never from its name.  An epoch loop may also be a
    `while` loop (`while step < max_step:` or `while True:` with a `break`)
    around the `for`.  A loader handed to the constructor of a project class
    (`Solver(model, optimizer, loader)`, in any module) whose `__init__` keeps
    it on `self` counts when a method of the class iterates `self.<name>`
    again and again (inside its own epoch loop, or in a method its epoch
    loop calls); the report is at the loader's `DataLoader(...)`, in the
    factory module when a function there builds and returns it (a name the
    caller binds in branches from several such functions reaches each, as
    does a function that returns another's tuple as it is).  A loader
    a method keeps on its own instance (`self.tr_set = DataLoader(...)` in a
    base class) counts when a method of a subclass, in any module, iterates
    `self.tr_set` again and again.  Epoch functions are found under the names a file imports them as
    (`import helper.loops as loops`, `from loops import train as fit`).

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
    `**kw` is set by passing it under that parameter's name.  What the function's code says, never its name, decides.  Such a call, iterated again and again, is reported
    when its worker count is a literal above 0 and it gets no
    `persistent_workers`: fixed in the call when the call can pass it
    (through `**kwargs`, or a parameter whose default it leaves), reported
    without a fix when the function (in another module) cannot take it and
    the call gives the worker count.  A function that fixes the count
    itself (a literal above 0) and cannot take `persistent_workers` is
    reported at its `DataLoader(...)`, with the fix, as below, not at its
    calls.

    A `DataLoader(...)` that its function returns (the whole value, or an
    element of a returned tuple: `return dataset, loader`) is reported at
    that call, with the same fix, when at least one caller in the project
    (any module) iterates the returned loader again and again: a loop over
    it inside an epoch loop, or in a function an epoch loop calls (a loader
    kept in a module global or a `self` attribute counts wherever it is
    iterated, also one element of a returned tuple each: `self.train_loader,
    self.val_loader = make_loaders(cfg)`).  A caller that builds it anew inside the loop does not
    count.  When every `return` builds the loader, its worker count is a
    literal or one of the function's parameters, and a call can pass
    `persistent_workers` (or gives the count), the calls decide and are
    reported instead (above).  A worker count that is one of the function's own
    parameters (`num_workers=num_workers`) is decided by the calls (a call
    may pass 0) and is not reported at the returned loader either.

    Not reported: `num_workers=0` or a missing `num_workers` (there are no
    workers to keep), a `**kwargs` that may carry `persistent_workers`, a
    loader iterated once (a loop over `range(1)` runs its body once) or
    built anew for every pass (a `DataLoader(...)` inside the epoch loop, or
    in a function called from it; not a loader built once per phase in a
    loop over the configuration's datasets and iterated by a later loop of
    the same function), test files
    (`test_*.py`, `*_test.py`, `conftest.py`, unless a script run under
    `if __name__ == "__main__":` that imports no test framework nor defines a test pytest can call: a test may
    check the exact batch order), and any project where some call already passes
    `persistent_workers=` (the project has made its choice).

    ## Why is this bad?
    Without `persistent_workers=True`, every `for batch in loader:` starts
    `num_workers` new processes, each of which imports its modules (or
    receives a copy of the dataset under `spawn`), runs `worker_init_fn`
    and fills its prefetch queue before the first batch of the epoch
    arrives; at the end of the epoch they are shut down again.  With many
    workers, a heavy dataset object or short epochs, the GPU idles at every
    epoch boundary.  Persistent workers are started once and reused.

    ## Example
    ```python
    loader = DataLoader(train_set, batch_size=256, shuffle=True, num_workers=8)
    for epoch in range(epochs):
        for images, labels in loader:
            ...
    ```

    Use instead:
    ```python
    loader = DataLoader(train_set, batch_size=256, shuffle=True, num_workers=8,
                        persistent_workers=True)
    ```

    ## Fix safety
    Unsafe.  The fix adds `persistent_workers=True` (with a worker count
    given by a variable `n`, `persistent_workers=n > 0`, since
    `persistent_workers=True` with zero workers raises `ValueError`).  What
    changes from the second epoch on:
    - The shuffle order.  Each new iterator draws a seed for its workers
      from the loader's generator (or the global one); persistent workers
      draw it once, so the shuffling sampler sees a different random stream
      and yields another order from epoch 2 (the same samples, each epoch).
    - Per-epoch dataset state.  The workers keep the copy of the dataset
      they started with: changes the main process makes to the dataset
      between epochs (`dataset.set_epoch(e)`, a curriculum, a resized image
      list) no longer reach them.  Samplers, which run in the main process,
      are unaffected (`DistributedSampler.set_epoch` still works).
    - Random augmentations continue their per-worker streams instead of
      being reseeded every epoch, and the worker processes stay alive (and
      keep their memory) between epochs, during evaluation too.

    ## Source guide
    *DGX cluster guidelines* (a GPU cluster's user guide) lists
    "Setting `persistent_workers=True`" among the ways to keep the GPU fed,
    *GPU Computing Guide* (Ohio Supercomputer Center) sets it in its
    efficient DataLoader ("Keep workers alive"), and so does *Chapter 16:
    GPU Acceleration & Distributed Training* (an online PyTorch training
    book).
    """

    code = "TL203"
    name = "dataloader-without-persistent-workers"
    summary = "suggestion: a `DataLoader` iterated every epoch restarts its workers; set `persistent_workers`"
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "unsafe: `persistent_workers=True` (`n > 0` for a variable count)"
    default_enabled = False
    torch_range = TorchRange(min=TorchVersion(1, 7), note="`persistent_workers` exists since 1.7")
    requires = frozenset({Analysis.PROJECT})
    project_queries = (keyword_passed(_SETTING), summaries())
    trigger_words = apidata.loader_words()

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """A torch ``DataLoader`` must be named."""
        if facts.mentions(loading_words(facts.project.summaries if facts.project is not None else None)):
            return True  # a call of a project function that builds a loader
        return facts.imports_torch and facts.mentions(apidata.loader_words())

    valid = (
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, num_workers=0)
        for epoch in range(10):
            for x in loader:
                pass
        """,
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, num_workers=4)
        for x in loader:
            pass
        """,
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, num_workers=4)
        other = DataLoader(ds, num_workers=4, persistent_workers=False)
        for epoch in range(10):
            for x in loader:
                pass
        """,
    )
    invalid = (
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=8, num_workers=4)
            for epoch in range(10):
                for x in loader:
                    pass
            """,
            fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=8, num_workers=4, persistent_workers=True)
            for epoch in range(10):
                for x in loader:
                    pass
            """,
        ),
        Example(
            """
            from torch.utils.data import DataLoader
            def train_one_epoch(loader):
                for x in loader:
                    pass
            loader = DataLoader(ds, num_workers=args.workers)
            for epoch in range(10):
                train_one_epoch(loader)
            """,
            fixed="""
            from torch.utils.data import DataLoader
            def train_one_epoch(loader):
                for x in loader:
                    pass
            loader = DataLoader(ds, num_workers=args.workers, persistent_workers=args.workers > 0)
            for epoch in range(10):
                train_one_epoch(loader)
            """,
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        comparison=".verify_compare:check",
        probes=(Probe("loader-epochs", "verify_probe.py"),),
        replay="loader-epochs",
        contract=Contract(
            level="identical",
            promise=(
                "The first epoch yields identical batches; every later epoch yields the same samples, "
                "each exactly once, possibly in another order.  Nothing else changes."
            ),
            checks=(
                "observed (a probe): the sample indices of every pass over every loader",
                "the first pass over each loader gives the same indices in the same order",
                "every later pass holds the same samples as the original's (compared as sets)",
                "the original, with each extra worker-seed draw given back (one long-lived iterator draws "
                "once), gives the fixed run's outputs and printed text (identical on the CPU)",
                "a change in the order of a later epoch is reported as the documented difference",
            ),
            differences=(
                "From the second epoch on, the shuffle order changes: the loader no longer draws a new "
                "worker seed from its generator every epoch.",
                "Changes made to the dataset in the main process between epochs no longer reach the workers.",
            ),
            speed=(
                "Worker start-up (process creation, imports, `worker_init_fn`, the first prefetch) is paid "
                "once instead of every epoch."
            ),
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._statements: Dict[cst.Call, Optional[cst.CSTNode]] = {}
        self._set_here = False

    def visit_Call(self, node: cst.Call) -> None:
        if any(arg.keyword is not None and arg.keyword.value == _SETTING for arg in node.args):
            self._set_here = True
        if loader_class(self.names.call_name(node)) or self.facts.callees.built_loader(node) is not None:
            self._statements[node] = innermost_statement(self.parents)

    def _wrapped(self, wrapped: WrappedLoader) -> None:
        """A loader a project function builds, iterated every epoch: reported
        at the call when its worker count is a literal above 0 and nothing
        may pass ``persistent_workers``; fixed there when the call can pass
        it (through ``**kwargs``, or a parameter whose default it leaves).
        A loader the function of this file builds without a way to pass it
        is reported at its ``DataLoader(...)`` instead."""
        if wrapped.loader != DATALOADER:
            return
        persistent = wrapped.keyword(_SETTING)
        workers = wrapped.keyword("num_workers")
        if not persistent.known or persistent.value is not None or not workers.known:
            return
        if not (isinstance(workers.value, cst.Integer) and int(workers.value.evaluated_value) > 0):
            return
        if workers.partial and not workers.at_call:
            return  # a count the function's own dict gives on some paths: its `DataLoader(...)` is reported
        found = self.facts.callees.built_loader(wrapped.call)
        if persistent.settable is None and (
                self.facts.training.local_function(wrapped.call) is not None
                or (found is not None and _fixed_inside(found[0]))):
            return  # no call can change it: its `DataLoader(...)` is reported where the function builds it
        fix = None
        if persistent.settable is not None and not workers.partial:
            # (with workers on some paths only, `persistent_workers=True` would raise where there are none)
            fix = self.replace(wrapped.call, add_keyword(wrapped.call, persistent.settable, cst.Name("True")),
                               Applicability.UNSAFE, f"Pass `{persistent.settable}=True`")
        where = "pass `persistent_workers=True` here" if fix is not None else (
            "pass `persistent_workers=True` beside `num_workers` in the dict this call unpacks" if workers.partial
            else f"`{wrapped.name}` cannot take `persistent_workers`; set it where it builds the loader")
        starts = (", where the keywords it gets give it workers, starts them anew each time" if workers.partial
                  else " starts its worker processes anew each time")
        self.report(
            wrapped.call,
            f"suggestion: the `DataLoader` `{wrapped.name}(...)` builds is iterated every epoch and{starts}; {where}",
            fix=fix,
            statement=self._statements.get(wrapped.call),
        )

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self._statements or self._set_here or self.context.is_test_file:
            return
        if self.facts.project.passes_keyword(_SETTING):
            return
        loaders = self.facts.loaders
        repeated: Set[cst.Call] = set()
        each_built: Set[cst.Call] = set()  # iterated again and again by one call: whatever builds them
        foreign: Set[cst.Call] = set()  # repeated only by functions other than the one that builds them
        here: Set[cst.Call] = set()
        for loop in loaders.loops():
            if loop.repeated:
                repeated |= loop.loaders
                for call in loop.loaders:
                    (here if loaders.function_of(call) is loaders.function_of(loop.loop) else foreign).add(call)
        by_hand = loaders.looped_yields() | loaders.restarted()  # `while True: yield from loader`, `iter(loader)` again
        repeated |= by_hand
        here |= by_hand
        for handed in loaders.passes():  # iterated by another module's function, once per call
            if handed.repeated:
                repeated |= handed.loaders
                each_built |= handed.each_call
                for call in handed.loaders:
                    (here if loaders.function_of(call) is loaders.function_of(handed.call) else foreign).add(call)
        # A worker count that is the building function's own parameter, for a loader that function
        # returns to the code that repeats it: its calls decide the count (one may pass 0).
        constructors = set(loaders.constructors)
        returned_with_parameter = {call for call in foreign - here
                                   if call in constructors and self._count_is_a_parameter(call)}
        repeated -= returned_with_parameter
        for wrapped in loaders.wrapped_calls:
            if wrapped.call in repeated and not (loaders.rebuilt(wrapped.call) and wrapped.call not in each_built):
                self._wrapped(wrapped)
        by_callers: Set[cst.Call] = set()
        kept: Set[cst.Call] = set()
        for call in loaders.constructors:  # returned to callers in the project that iterate it every epoch
            if (call not in repeated and not loaders.rebuilt(call) and not self._decided_at_calls(call)
                    and not self._count_is_a_parameter(call)):
                use = loaders.returned_use(call)
                if use is not None and use.repeated:
                    repeated.add(call)
                    (kept if use.kept else by_callers).add(call)
        for call in loaders.constructors:
            if call not in repeated or (loaders.rebuilt(call) and call not in each_built):
                continue  # iterated once, or built anew for every pass
            arguments = bind(call, loaders.signature(call), self.context.torch_version, self.facts.values.splatted)
            if arguments.may_be_present(_SETTING):
                continue
            workers = arguments.argument("num_workers")
            if workers is None:
                # Missing (no workers), carried by `**kwargs`, or by a dict on some
                # paths only (`if use_cuda: kwargs.update(num_workers=4)`): reported
                # where every such path starts workers, without a fix (`True` on the
                # other paths would raise: persistent workers need workers).
                sometimes = arguments.values("num_workers")
                if sometimes and not any(isinstance(v, cst.Integer) and v.evaluated_value == 0 for v in sometimes):
                    self.report(
                        call,
                        "suggestion: this `DataLoader` is iterated every epoch and, where its keywords give it "
                        "workers, starts them anew each time; `persistent_workers=True` beside `num_workers` keeps them",
                        statement=self._statements.get(call),
                    )
                continue
            value = workers.value
            fix = None
            if isinstance(value, cst.Integer):
                if value.evaluated_value == 0:
                    continue
                fix = self.replace(call, add_keyword(call, _SETTING, cst.Name("True")), Applicability.UNSAFE,
                                   "Set `persistent_workers=True`")
            elif _pure(value):
                condition = cst.Comparison(
                    left=value, comparisons=(cst.ComparisonTarget(cst.GreaterThan(), cst.Integer("0")),)
                )
                text = self.context.module.code_for_node(value)
                fix = self.replace(call, add_keyword(call, _SETTING, condition), Applicability.UNSAFE,
                                   f"Set `persistent_workers={text} > 0`")
            where = "is returned to callers that iterate it every epoch" if call in by_callers else (
                "is kept on `self` for subclasses' methods that iterate it every epoch" if call in kept else
                "is iterated every epoch")
            self.report(
                call,
                f"suggestion: this `DataLoader` {where} and starts its worker processes "
                "anew each time; `persistent_workers=True` keeps them",
                fix=fix,
                statement=self._statements.get(call),
            )

    def _count_is_a_parameter(self, constructor: cst.Call) -> bool:
        """The worker count is one of the function's own parameters
        (`num_workers=num_workers`): its calls decide it, and a call may pass
        0, so a loader returned to callers (in a tuple, where
        :meth:`_decided_at_calls` does not read the calls) is left alone, as
        one returned whole is left to its calls."""
        arguments = bind(constructor, self.facts.loaders.signature(constructor), self.context.torch_version,
                         self.facts.values.splatted)
        workers = arguments.argument("num_workers")
        if workers is None or not isinstance(workers.value, cst.Name):
            return False
        return any(binding.kind is BindingKind.PARAMETER for binding in self.facts.scopes.resolve(workers.value))

    def _decided_at_calls(self, constructor: cst.Call) -> bool:
        """The loader's function builds it on every return with a worker count
        that is a literal above 0 or one of its parameters: its calls decide,
        and each call iterated every epoch is reported there (a count left
        at a default of 0 starts no workers)."""
        function = self.facts.loaders.function_of(constructor)
        if not isinstance(function, cst.FunctionDef):
            return False
        qualified = self.facts.callees.qualified(function)
        built = self.facts.project.summaries.loader_of(qualified) if (
            qualified is not None and self.facts.project.summaries is not None) else None
        if built is None:
            return False
        if _fixed_inside(built):
            return False  # no call can change it: the `DataLoader(...)` is reported where it is built
        if dict(built.arguments).get("num_workers", "").startswith("param:"):
            return True  # the calls give the count: reported there when it is a literal above 0
        return _starts_workers(built)


def _fixed_inside(built: BuiltLoader) -> bool:
    """A project function's loader that no call can change: a literal worker
    count above 0 and no way to pass ``persistent_workers`` (no ``**kwargs``,
    no parameter for it): the fix belongs at its ``DataLoader(...)``."""
    return (built.forwards is None and not dict(built.arguments).get(_SETTING, "").startswith("param:")
            and _starts_workers(built))


def _starts_workers(built: BuiltLoader) -> bool:
    """The function gives its loader a literal worker count above 0."""
    workers = dict(built.arguments).get("num_workers", "")
    text = workers[len("lit:"):] if workers.startswith("lit:") else ""
    return text.isdigit() and int(text) > 0


__all__: List[str] = ["DataLoaderWithoutPersistentWorkers"]
