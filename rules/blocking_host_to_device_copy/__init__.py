"""TL102 blocking-host-to-device-copy."""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Set

import libcst as cst

from torchlint.data import apidata
from torchlint.analysis.loaders import BatchMove, Loaders, loader_class
from torchlint.analysis.queries import summaries
from torchlint.analysis.summaries import loading_words, moving_words, pinned_words
from torchlint.ruleapi.fixes import add_keyword, bind
from torchlint.model import Applicability
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, FileContext, FixAvailability, OptionValue, Rule, TorchRange, innermost_statement
from torchlint.ruleapi.verification import Contract, VerificationSpec
from torchlint.analysis.values import literal_bool


def _passes_non_blocking(call: cst.Call) -> bool:
    """``non_blocking`` given by keyword, by ``*``/``**``, or by position
    (``.cuda(device, True)``, ``.to(device, dtype, True)``): a decision made."""
    if any(arg.star or (arg.keyword is not None and arg.keyword.value == "non_blocking") for arg in call.args):
        return True
    positional = [arg for arg in call.args if arg.keyword is None]
    return len(positional) >= 2


def _drawn_in_place(expr: cst.BaseExpression) -> bool:
    """``next(it)`` (or ``next(it)[0]``, ``it.__next__()``): a batch drawn right
    where it is copied, which no name holds afterwards."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    return (isinstance(func, cst.Name) and func.value == "next") or (
        isinstance(func, cst.Attribute) and func.attr.value == "__next__" and not expr.args)


def _root(expr: cst.BaseExpression) -> Optional[str]:
    """The name an expression reads through subscripts and attributes (``batch`` of ``batch["x"]``)."""
    while isinstance(expr, (cst.Subscript, cst.Attribute)):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def _rebinds(statement: Optional[cst.CSTNode], name: str) -> bool:
    """The statement assigns ``name`` itself (``x = x.cuda()``, ``x, y = x.cuda(), y.cuda()``)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                names = target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else [target.target]
                for element in names:
                    value = element.value if isinstance(element, cst.BaseElement) else element
                    if isinstance(value, cst.Name) and value.value == name:
                        return True
    return False


def _modifies_in_place(node: cst.CSTNode, name: str) -> bool:
    """``name.add_(...)``, ``name[...] = ...`` or ``name += ...``."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        method = node.func.attr.value
        if method.endswith("_") and not method.startswith("_") and _root(node.func.value) == name:
            return True
    if isinstance(node, cst.AugAssign):
        return _root(node.target) == name
    if isinstance(node, cst.AssignTarget):
        return isinstance(node.target, (cst.Subscript, cst.Attribute)) and _root(node.target) == name
    return False


class BlockingHostToDeviceCopy(Rule):
    """## What it does
    Reports `.cuda()` and `.to(device)` calls without `non_blocking=True`
    that copy a batch (or a part of it, or a view of one: `x.view(n, -1)`,
    `x.squeeze(0)`, `x.permute(...)` keep its pinned memory) drawn from a `DataLoader` (also one
    read by key from a dict of loaders, `loaders[phase]`, every loader of
    which is pinned) built in
    the same file with a literal `pin_memory=True` (written in the call, or
    in a dictionary unpacked into it whose keys are known:
    `kw = dict(num_workers=8, pin_memory=True); DataLoader(ds, **kw)`, also
    when a branch adds it, as `if use_cuda: kwargs.update(cuda_kwargs)` does:
    the copies the finding is about are made on the paths that pin), or
    by a function of the project whose every `return` builds the loader,
    in this file or another module, with `pin_memory=True` as the call
    gives it: a literal in the function, the call's argument for one of
    its parameters (or the parameter's default), or a keyword the call
    passes through the function's `**kwargs`
    (`get_dataloader(ds, 32, num_workers=4, pin_memory=True)`), also
    through functions that return another project function's call that
    builds it, up to eight deep.
    The batch is followed from the loader through `for` loops (also through
    `enumerate`, `tqdm`, `zip`, a project generator such as a logger's
    `log_every(loader, n)`, and a function of the file the loader is passed
    to), unpacking,
    subscripts, `.items()`/`.values()`, `next(iter(loader))` and a batch
    drawn by hand from a stored iterator (`it = enumerate(loader)`, then
    `next(it)` or `it.__next__()`; `it.next()` before torch 1.13).  In
    another module's function the same holds, and batches are also followed
    through `enumerate(zip(a, b))`, `Variable(batch)` (the batch itself), a
    loop variable bound in branches to the loader or a progress bar over it
    (`batches = tqdm(loader) if verbose else loader`), and `*args` of a tuple
    bound once (`step(epoch, *args, loader)`).  A loader a project function
    builds with a dict that holds `pin_memory=True` on some paths only
    (`kwargs = {"num_workers": 1, "pin_memory": True} if cuda else {}`) is
    pinned where it is passed, as a direct `DataLoader(**kwargs)` is.

    Across modules, the copy is reported where it is made, with the same
    fix: a function or method of the project whose callers hand it a pinned
    loader, or one of its batches (also a batch of a loader the caller
    builds pinned itself: `for data in train_loader: model.feed_data(data)`,
    the copy in `feed_data`, whichever class a factory built `model` with;
    `train_one_epoch(model, train_loader, optimizer)` in a driver, `x, y = x.cuda(), y.cuda()` in the epoch
    function's loop; a trainer object built with the loader, whose method
    copies the batches of what it kept on `self`, also through the
    instance's other methods and helpers it hands a batch to; a plain
    object built with the loader and handed to a function that copies the
    batches of its attribute, `session = Session(train_set=loader)` then
    `for x, y in session.train_set: x.to(device)` in the function it is
    given to (any object of a class one of whose constructions kept a
    pinned loader there counts); a loop over a
    project generator the function hands the pinned loader to, in any
    module, when the generator yields the loader's items as they come:
    `for i, (x, y) in enumerate(metric_logger.log_every(loader, 50))`, with
    `log_every` doing `for obj in iterable: yield obj`; not one that yields
    something it made of them, such as `yield x.cuda(non_blocking=True)`).  The
    callers are followed through the project's summaries: a loader built
    with a literal `pin_memory=True` (directly, by a project function
    whose loader gets it, or returned by a project function that builds it
    so, alone or in a tuple: `train_loader, val_loader = get_loaders(cfg)`,
    or in a list it fills with `append` in a loop, every loader pinned; a
    loader it builds with `pin_memory=<parameter>` whose default is `True`
    counts where the caller's calls leave that parameter out),
    passed on through parameters, constructions and batches drawn from it,
    or kept on `self` by a class whose methods, its base classes' or its
    subclasses' methods, copy its batches (`self.train_loader = DataLoader(...,
    pin_memory=True)` in a subclass, the loop in the base class's module;
    a base class keeping the loaders and handing each batch to a
    `train_step` a subclass in another module writes, unless that subclass
    sets the attribute itself; also a loader a project function returns
    pinned, whole or as one element of its tuple, that a class keeps on
    `self`: `self.train_loader, self.val_loader = get_loaders(cfg)`, then
    `[t.cuda() for t in batch]` in a method of it, of a base class or of a
    subclass).  In the file itself, `Variable(batch).cuda()` and a view's
    copy are copies of the batch too.  A class chosen at run time counts as each class it may
    be: a factory whose every `return` builds a project class (imported
    inside the function in several branches under one name, taken from a
    module-level registry dict nothing writes to later,
    `TRAINERS[args.trainer_code](args, model, train_loader)`, or another
    factory's result) hands a pinned loader to whichever class it builds.
    An inherited method runs the methods of the instance's own class
    (a base class's loop calling `self.train_step(batch)` that only the
    subclass defines).  One such caller is enough: the flag costs
    nothing where the memory is not pinned.  The copy counts as the
    summary sees it (items drawn from the parameter, their parts, not
    values computed from them, copied with `.cuda()` or `.to(...)` of a
    device the summary can name or one known only at run time, such as
    `args.device`: a pinned loader's batch is copied where it goes); a
    later in-place change of the source is not looked for there.  A
    loader that may be `None` (`DataLoader(...) if test_set is not None
    else None`) is that loader wherever it is iterated, and writing an
    attribute of it (`gen.dataset.epoch_now = epoch`) keeps it the loader
    it was.  A device index counts as a GPU: an integer, `rank %
    torch.cuda.device_count()`, or a command-line option every
    `add_argument` of the file gives `type=int` and an integer default
    (`args.local_rank`, also with `args` handed down as a parameter); an
    option that may be None or a string does not.  Where the summaries cannot follow the loader
    into the function that copies it, the call that hands the loader over
    is reported instead, without a fix, when that function's summary says
    it copies the batches without `non_blocking`.

    Not reported: a loader whose `pin_memory` is a variable, copies to the
    CPU (`.cpu()`, `.to("cpu")`), a call that passes `non_blocking` in any
    way (an explicit `False` is taken as deliberate), a value computed from
    the batch (`batch.float().cuda()` copies a new, unpinned tensor), and a
    copy whose source the code modifies in place afterwards (`x.add_(...)`,
    `x[...] = ...`, `x += ...` on the original host tensor).  Batches of a
    loader handed to Hugging Face Accelerate's `accelerator.prepare(...)`
    are not followed either: Accelerate moves them to the device itself
    (device placement is on by default), so a later `.to(accelerator.device)`
    copies nothing (the loader's own `pin_memory` is TL202's business).

    ## Why is this bad?
    The loader has already put the batch in page-locked memory, which the
    GPU's copy engine can read on its own.  Without `non_blocking=True` the
    Python thread still waits for every copy to finish before it queues the
    next kernel, so the copy and the previous step's computation run one
    after the other instead of overlapping, and the benefit of pinning is
    mostly lost.

    ## Example
    ```python
    loader = DataLoader(train_set, batch_size=256, num_workers=8, pin_memory=True)
    for images, labels in loader:
        images, labels = images.cuda(), labels.cuda()
    ```

    Use instead:
    ```python
    loader = DataLoader(train_set, batch_size=256, num_workers=8, pin_memory=True)
    for images, labels in loader:
        images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
    ```

    ## Fix safety
    Safe: the copy is ordered on the current CUDA stream, so every kernel
    that reads the copied tensor on that stream sees the finished copy.
    What can change meaning is host code that touches the *source* while
    the copy is in flight: modifying the pinned tensor in place (excluded
    by the rule when it happens in the same function), or reading the GPU
    tensor from another stream.  On the CPU, or for unpinned memory, the
    flag does nothing.

    ## Source guide
    *GPU Computing Guide* (Ohio Supercomputer Center) moves each batch with
    `data.cuda(non_blocking=True)` ("Async transfer") next to a loader with
    `pin_memory=True`; *Chapter 16: GPU Acceleration & Distributed
    Training* (an online PyTorch training book) moves its batches with
    `.to(self.device, non_blocking=True)`.
    """

    code = "TL102"
    name = "blocking-host-to-device-copy"
    summary = "a pinned batch is copied to the GPU without `non_blocking=True`"
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "safe: `non_blocking=True`"
    torch_range = TorchRange(note="`non_blocking` exists in every release (named `async` before 0.4)")
    trigger_words = apidata.loader_words()
    project_queries = (summaries(),)

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """A torch ``DataLoader`` and a ``cuda``/``to`` call must both appear
        (``pin_memory`` may be passed by position, so its word is not required)."""
        summaries = facts.project.summaries if facts.project is not None else None
        if not facts.functions.isdisjoint(pinned_words(summaries)) and not facts.called_attributes.isdisjoint(
                ("cuda", "to")):
            return True  # a function whose callers hand it pinned loaders copies something
        built = facts.mentions(loading_words(summaries))
        return bool(
            (built or facts.imports_torch and facts.mentions(apidata.loader_words()))
            and (not facts.called_attributes.isdisjoint(("cuda", "to")) or facts.mentions(moving_words(summaries)))
        )

    valid = (
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=32, pin_memory=True)
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        """,
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=32, pin_memory=args.pin)
        for x in loader:
            x = x.cuda()
        """,
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=32, pin_memory=True)
        for x in loader:
            gpu = x.cuda()
            x.mul_(0.5)
        """,
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=32, pin_memory=True)
        for x in loader:
            x = x.to("cpu")
        """,
    )
    invalid = (
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, pin_memory=True)
            for x, y in loader:
                x, y = x.cuda(), y.to("cuda:0")
            """,
            fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, pin_memory=True)
            for x, y in loader:
                x, y = x.cuda(non_blocking=True), y.to("cuda:0", non_blocking=True)
            """,
            findings=2,
        ),
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            def train(loader, device):
                for batch in loader:
                    inputs = batch["image"].to(device)
            train(DataLoader(ds, pin_memory=True), torch.device("cuda"))
            """,
            fixed="""
            import torch
            from torch.utils.data import DataLoader
            def train(loader, device):
                for batch in loader:
                    inputs = batch["image"].to(device, non_blocking=True)
            train(DataLoader(ds, pin_memory=True), torch.device("cuda"))
            """,
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        contract=Contract(
            level="identical",
            promise=(
                "The copy is ordered on the stream that computes with it, so the model sees the "
                "same batches and every result is identical; only the host stops waiting for each copy."
            ),
            checks=(
                "every output (the losses, the trained weights, a checksum of every batch as the model saw it) "
                "is identical",
            ),
            speed=(
                "On CUDA the next batch's copy overlaps with the current step's kernels; on the CPU "
                "the flag does nothing, so no difference."
            ),
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._statements: Dict[cst.Call, Optional[cst.CSTNode]] = {}
        self._loaders = False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("cuda", "to"):
            self._statements[node] = innermost_statement(self.parents)
        elif not self._loaders and (loader_class(self.names.call_name(node))
                                    or self.facts.callees.built_loader(node) is not None):
            self._loaders = True

    def leave_Module(self, original_node: cst.Module) -> None:
        reported: Set[cst.Call] = set()
        if self._loaders:
            self._in_file(reported)
        if self._statements and self.facts.callees.pinned_copies():
            self._callers_pin(reported)

    def _in_file(self, reported: Set[cst.Call]) -> None:
        """Copies of batches of the file's own pinned loaders."""
        loaders = self.facts.loaders
        pinned: Dict[cst.Call, bool] = {}
        self._handed(loaders, pinned)
        if not self._statements:
            return
        for move in loaders.moves():
            if move.settled or move.call not in self._statements:
                continue
            if not all(pinned.setdefault(l, self._pins(l)) for l in loaders.decided(move.loaders)):
                continue
            if self._source_modified_later(loaders, move):
                continue
            reported.add(move.call)
            self._blocking(move.call, "a batch from a loader with `pin_memory=True`")

    def _callers_pin(self, reported: Set[cst.Call]) -> None:
        """Copies in this file's functions of batches drawn from what the
        project's callers hand them pinned (:meth:`Callees.pinned_copies`,
        which names each copy call by its line and UTF-8 column)."""
        wanted = self.facts.callees.pinned_copies()
        lines = self.context.source.splitlines()
        found: List[cst.Call] = []
        for call in self._statements:
            start = self.facts.positions[call].start
            text = lines[start.line - 1] if 0 < start.line <= len(lines) else ""
            if (start.line, len(text[:start.column].encode("utf-8"))) in wanted:
                found.append(call)
        for call in found:
            # The index's summaries may predate this text (a fix pass re-reads the file, not the
            # project): a copy that now decides `non_blocking` is settled.
            if call in reported or _passes_non_blocking(call):
                continue
            reported.add(call)
            self._blocking(call, "a batch from a loader built with `pin_memory=True` elsewhere in the project")

    def _blocking(self, call: cst.Call, what: str) -> None:
        func = call.func
        method = "cuda()" if isinstance(func, cst.Attribute) and func.attr.value == "cuda" else "to(...)"
        self.report(
            call,
            f"`.{method}` copies {what} and waits for it; "
            "pass `non_blocking=True` so the copy overlaps with computation",
            fix=self.replace(call, add_keyword(call, "non_blocking", cst.Name("True")),
                             Applicability.SAFE, "Pass `non_blocking=True`"),
            statement=self._statements[call],
        )

    def _handed(self, loaders: Loaders, pinned: Dict[cst.Call, bool]) -> None:
        """A pinned loader (or one of its batches) handed to another module's
        function that copies the batches without ``non_blocking``, as its
        summary says (``train_one_epoch(model, loader, optimizer)``): reported
        at the call, without a fix, since the copy is in the other module."""
        reported: Set[cst.Call] = set()
        for handed in loaders.handed_moves():
            if not handed.blocking or handed.call in reported or self.facts.callees.takes_pinned(handed.call):
                continue  # (the callee's module reports the copies it makes of a loader the project pins)
            if not all(pinned.setdefault(l, self._pins(l)) for l in loaders.decided(handed.loaders)):
                continue
            reported.add(handed.call)
            name = self.names.call_name(handed.call) or self.context.module.code_for_node(handed.call.func)
            self.report(
                handed.call,
                f"`{name}` copies batches from a loader with `pin_memory=True` to the GPU and waits for "
                "each copy; pass `non_blocking=True` to its `.cuda()`/`.to(...)` calls",
            )

    def _pins(self, loader: cst.Call) -> bool:
        """``pin_memory=True`` on every path that passes it (a dict that holds
        it only under ``if use_cuda:`` pins the batches where they are copied);
        for a loader a project function builds, ``pin_memory=True`` as the
        call gives it (its argument, a default, what its ``**kwargs`` carry,
        or a literal in the function)."""
        wrapped = self.facts.loaders.wrapped(loader)
        if wrapped is not None:
            pin = wrapped.keyword("pin_memory")
            return pin.known and pin.value is not None and literal_bool(pin.value) is True
        values = bind(loader, self.facts.loaders.signature(loader), self.context.torch_version,
                      self.facts.values.splatted).values("pin_memory")
        return bool(values) and all(literal_bool(value) is True for value in values)

    def _source_modified_later(self, loaders: Loaders, move: BatchMove) -> bool:
        if _drawn_in_place(move.receiver):
            return False  # `next(it).cuda()`: the source is a fresh batch no name holds
        name = loaders.read_name(move.receiver)
        if name is None:
            return True  # a source the rule cannot follow
        if _rebinds(self._statements.get(move.call), name):
            return False  # later uses of the name are the device copy
        function = loaders.function_of(move.call)
        if function is None:
            return True
        return any(_modifies_in_place(node, name) for node in loaders.nodes_after(move.call, function))


__all__: List[str] = ["BlockingHostToDeviceCopy"]
