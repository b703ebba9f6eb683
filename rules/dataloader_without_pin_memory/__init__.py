"""TL202 dataloader-without-pin-memory."""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Set

import libcst as cst

from torchlint.data import apidata
from torchlint.analysis.frameworks import FrameworkCall, class_words, keeps_off_cuda, packages
from torchlint.analysis.loaders import DATALOADER, WrappedLoader, loader_class
from torchlint.data.apidata import Framework
from torchlint.analysis.queries import summaries
from torchlint.analysis.summaries import MODULE_BODY, ReturnUse, loading_words, moving_words, returning_words
from torchlint.source.arguments import BoundArguments
from torchlint.ruleapi.fixes import add_keyword, bind
from torchlint.model import Applicability
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, FileContext, FixAvailability, FixRequest, OptionValue, Rule, TorchRange, innermost_statement
from torchlint.ruleapi.verification import Contract, Probe, VerificationSpec
from torchlint.analysis.values import literal_bool
from torchlint.source.tree import literal_constant


_TRANSFORMERS = Framework.TRANSFORMERS
_HF_PIN = "dataloader_pin_memory"
_LITERALS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float)


class DataLoaderWithoutPinMemory(Rule):
    """## What it does
    Reports a `torch.utils.data.DataLoader(...)` call without `pin_memory`
    (or with a literal `pin_memory=False`) whose batches the same file copies
    to CUDA: a `for` loop over the loader (directly, through `enumerate`,
    `tqdm` or `zip`, through a function of the file that receives the
    loader, or through a dict of loaders read by key, `loaders[phase]` of
    `{x: DataLoader(...) for x in phases}` or of a dict display, where any
    loader of the dict counts, also when the dict is handed to another
    module's function that loops over `dataloaders[phase]`) moves the batch, or a part of it (`x, y = batch`, `batch[0]`,
    `batch["image"]`, or the batch wrapped in the legacy
    `torch.autograd.Variable`, which returns the tensor itself since torch
    0.4), with `.cuda()` or `.to(device)` where the device is not the CPU.
    A batch made of several tensors counts whole: its items and values
    (`{k: v.cuda() for k, v in batch.items()}`, a `for k, v in
    batch.items()` loop, `[t.to(device) for t in batch]`), a dict or list
    built from it (`dict(zip(names, batch))`, or a function of the file
    that returns one for its parameter, answered call by call), and a
    helper of the project (this file or another module) that copies its
    parameter or its parameter's items, values or elements, recursive ones
    included (`def to_device(batch, device): return {k: v.to(device) for k,
    v in batch.items()}`): what the helper's code does to its parameter,
    never its name, decides (the summaries of the project's functions).  A
    loader is followed through a generator of the file kept on `self`
    (`self.valid_iter = cycle(self.valid_dl)`, then `next(self.valid_iter)`).
    A project function that hands out a loader's batches (`yield from
    loader`, for ever in a `while True:` or once) counts as returning them:
    its callers' copies of the items they draw (`batch, cond =
    next(self.data)` in a loop object the generator was handed to) copy the
    loader's batches; so does a generator of a script that no other module
    imports (`self.dl = cycle(DataLoader(...))`, then `next(self.dl).cuda()`).
    Batches drawn by hand count too: `x, y = next(data_iter)` where every
    assignment of `data_iter` is `iter(...)` of the same loader (a parameter,
    a value a project function returned, or `self.loader` in a method of a
    class that keeps the loader, in any module).
    A loader handed to the constructor of a project class (in this file or
    another module: `Solver(cfg, train_loader, val_loader)`) whose `__init__`
    keeps it on `self` counts as handed to the class's methods: one of them
    that loops over `self.train_loader` and copies the batches to the GPU
    reports the loader, at its `DataLoader(...)` (in the factory module when
    a function there builds and returns it).  A copy to `self.device` counts
    when the class, or a base class in another module, sets `self.device`
    once to a device that may be CUDA (`torch.device("cuda" if ... else
    "cpu")`, `torch.device("cuda:{}".format(i))`), or to what a method or
    function of the project returns when some `return` of it gives one
    (`self.device = self._acquire_device()`); set to the CPU, or by a
    subclass to anything else (`torch.device(args.device)`), it does not.
    That holds for a method of such an instance the file calls too
    (`Trainer(model, opt).train(train_loader=loader)`, whose epoch function
    copies to the `self.device` it is handed).  A device parameter the call
    (or the construction) leaves out counts at its default when that names
    a device: `def train_one_epoch(model, loader, device="cuda")` copies to
    the GPU from `train_one_epoch(model, loader)`, not when the default is
    `"cpu"`; the same holds for the file's own functions (`def
    train(dataset, model, device="cuda:0")` called as `train(ds, model)`:
    every call of it in the file that passes nothing for `device`, and no
    `*args`/`**kwargs`, uses the default).  A device index is a device too:
    an integer, or arithmetic on integers and on torch calls that return
    one (`rank % torch.cuda.device_count()`, `dist.get_rank()`).
    A loader a method keeps on its own instance (`self.tr_set =
    DataLoader(...)` in a base class) is reported when a method of a
    subclass, in any module, copies the batches of `self.tr_set` to the GPU.
    A caller's use of a returned loader also reaches through functions that
    return what they got from the factory (`data_set, data_loader =
    data_provider(args, flag); return data_set, data_loader`, or `return
    get_mnist(train)` in one branch and `return get_usps(train)` in another,
    whose callers unpack an element: `_, loader, _ = task_loader(...)`), and
    to every factory a name is bound from in branches (`train_loader,
    val_loader = get_sampled(...)` in one, `= get_plain(...)` in another;
    a `loader = None` placeholder before them does not count), also when
    a package re-exports the factory under its own submodule's name
    (`from .make_dataloader import make_dataloader`).
    Epoch functions of other modules are found under the names a file
    imports them as (`import helper.loops as loops`, `from loops import
    train as fit`).
    A method called on what a project factory returns (`model =
    define_model(opt); model.feed_data(batch)`, where every `return` of
    `define_model` builds a project class: imported inside the function in
    several branches under one name, taken from a module-level registry
    dict nothing writes to later, `MODELS[name](args)`, or another
    factory's result) copies the batches when the method of every class the
    factory may build does.  An inherited method runs the methods of the
    instance's own class: a base class's epoch loop over `self.loader`
    that hands each batch to `self.train_step(batch)`, which only a
    subclass defines, copies what that subclass's `train_step` copies.  A
    device bound once at module level (`device = torch.device("cuda:0")`)
    is that device in the functions that do not bind the name themselves.
    In a file whose Accelerate `Accelerator` places what it prepares on its
    device (see below), a copy to a device known only at run time
    (`batch.to(model.device)`) counts as a copy to that device.

    A `**` of a dictionary whose keys are known counts as its keywords
    (`kw = dict(num_workers=8); DataLoader(ds, **kw)`, the dict assigned
    once and used only in `**` unpackings); `pin_memory=False` inside such
    a dict is reported without a fix (the dict may serve other calls).

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
    `**kw` is set by passing it under that parameter's name.  What the function's code says, never its name, decides.  Such a call is reported, with a fix in the call, when
    its batches are copied to the GPU and the call decides `pin_memory`: a
    `pin_memory=False` it passes, a parameter's default `False` it leaves,
    or a missing `pin_memory` it could pass through `**kwargs`.  A function
    that takes no such option is not reported at its calls (its other
    callers may run on the CPU); the `DataLoader(...)` it returns is
    reported where it is built, as the next paragraph says.

    A `DataLoader(...)` that its function returns (the whole value, or an
    element of a returned tuple: `return dataset, loader`) is reported at
    that call, with the same fix, when at least one caller in the project
    (any module) copies its batches to the GPU: the caller keeps the
    returned loader in a name, a module global or a `self` attribute (also
    one element of the returned tuple each: `self.train_loader,
    self.val_loader = make_loaders(cfg)`; or loops over the call directly,
    or hands it to a function), and a loop
    over it moves its batches with `.cuda()`, `.to("cuda...")`, or
    `.to(device)` with a device known only at run time in a file that uses
    CUDA or taken from a project helper some `return` of which gives CUDA
    (`device = define_device("auto")`).  What callers do comes from the project index (each file's calls
    recorded once and joined), never from names; the function's own file
    need not mention CUDA.  Nor need a subclass's module: a copy to
    `self.device` where a base class of the project (in any module) sets
    `self.device` to CUDA on some path (`self.device = self.get_device()`,
    which returns `torch.device("cuda")` when it is available) is a copy
    to the GPU, unless the class sets its own device.

    Not reported: a loader with `**kwargs` that may carry `pin_memory`, a
    `pin_memory` given by a variable or any expression other than `False`,
    loaders whose batches are never moved in the file (a value computed from
    a batch, such as `images.float().cuda()`, is not the batch: a cast that
    changes the dtype copies a new, unpinned tensor that pinning the loader
    would not speed up, and the dtype is not known before the run; TL102
    agrees), and files with no
    CUDA use at all (no `torch.cuda`, no `.cuda()`, no `"cuda"` device), such
    as code that only runs on the CPU or on Apple's `mps`.

    Training frameworks copy the batches themselves:
    - A loader handed to Hugging Face Accelerate's `accelerator.prepare(...)`
      (or `prepare_data_loader`) has its batches moved to the accelerator's
      device by Accelerate, which keeps the loader's own `pin_memory`; such
      a loader is reported without any `.cuda()` in the file, unless the
      `Accelerator` is given `cpu=True` or `device_placement=` (or `prepare`
      is; `cpu=args.cpu`, a flag that is off unless the run asks for the CPU
      as in Accelerate's own examples, and an `Accelerator(**kwargs)` count
      as placing batches on the device, its default).  Several loaders in one `prepare` call, and loaders kept
      in `self` attributes, count alike.  A loader whose items hold no data
      is left alone: its dataset is a class of the file whose `__getitem__`
      only assembles the index, literals and `self` attributes (the
      "prompt dataset" of DreamBooth scripts, whose batches are strings and
      an index), with no `collate_fn`; Accelerate moves nothing worth pinning.
      Batches of the prepared loader are already on the device, so a later
      `.to(device)` of them is not a copy (TL102 stays quiet there).
    - Hugging Face Transformers' `TrainingArguments` (and
      `Seq2SeqTrainingArguments`) with `dataloader_pin_memory=False`, from
      Transformers 4.9 (the oldest release checked to have the field; the
      release is the `transformers-version` setting, else the project's
      requirement, else the newest).  Its default is `True`; arguments that
      keep the Trainer off CUDA (`use_cpu`, `no_cuda`, `use_mps_device`)
      are left alone.
      Only arguments a Trainer reads are reported: those handed to a
      Transformers `Trainer` (`Seq2SeqTrainer`, a subclass, a TRL trainer) of
      the file, directly, through the file's functions and classes, or stored
      on `self` and passed later; those whose `dataloader_pin_memory` the file's own code
      reads; and those that reach code the file does not show (another
      module's or a library's function, a `return`, a module-level name) while
      the file names a Trainer class.  Arguments kept as a bag of settings for a
      hand-written loop (only their other fields read, printed, compared) are
      left alone, and so are arguments that reach unseen code from a file that
      names no Trainer (precision first; what other files name is not asked, as
      flake8 and the editor lint one file and must agree with `torchlint check`):
      a module that only builds the arguments another module hands to its
      Trainer is not reported.

    ## Why is this bad?
    A batch collated by the loader sits in ordinary (pageable) host memory.
    To copy it to the GPU, the CUDA driver first copies it into a page-locked
    staging buffer and only then transfers it, so every copy is done twice
    and the GPU waits for both.  With `pin_memory=True` the loader's pinning
    thread puts each batch in page-locked memory as it arrives, the transfer
    reads it directly at full bus speed, and `.to(device, non_blocking=True)`
    can overlap the copy with computation.

    ## Example
    ```python
    loader = DataLoader(train_set, batch_size=256, num_workers=8)
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
    Safe: pinning changes where the batch's host memory lives, never its
    values.  Page-locked memory cannot be swapped out, so very large batches
    with many prefetched copies (`num_workers * prefetch_factor`) hold that
    much RAM locked; on a machine without CUDA, torch warns and ignores it.

    ## Source guide
    *GPU Computing Guide* (Ohio Supercomputer Center) writes
    `pin_memory=True` into its efficient DataLoader ("Faster GPU transfer")
    and lists "Not using pin_memory" among the causes of low GPU
    utilisation; *DGX cluster guidelines* (a GPU cluster's user guide) asks
    for "Setting `pin_memory=True`" to keep the GPU fed; *Chapter 16: GPU
    Acceleration & Distributed Training* (an online PyTorch training book)
    lists "Use `pin_memory=True` and `num_workers>0`" among its takeaways.
    """

    code = "TL202"
    name = "dataloader-without-pin-memory"
    summary = "`DataLoader` whose batches are copied to CUDA does not pin them (`pin_memory` is missing or False)"
    fix_availability = FixAvailability.ALWAYS
    fix_summary = "safe: `pin_memory=True`"
    torch_range = TorchRange(note="`pin_memory` exists in every release")
    trigger_words = apidata.loader_words()
    project_queries = (summaries(),)

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """A torch ``DataLoader`` and a ``cuda``/``to``/``prepare`` method call
        (or a call of a project function that copies to a device) must both
        appear, or Transformers' training arguments."""
        if facts.imports_from(packages(_TRANSFORMERS)) and facts.mentions(class_words(_TRANSFORMERS, "training-arguments")):
            return True
        built = facts.mentions(loading_words(facts.project.summaries if facts.project is not None else None))
        if not built and not (facts.imports_torch and facts.mentions(apidata.loader_words())):
            return False
        if not facts.called_attributes.isdisjoint(("cuda", "to", "prepare", "prepare_data_loader")):
            return True
        known = facts.project.summaries if facts.project is not None else None
        return facts.mentions(moving_words(known)) or facts.contains_any(returning_words(known, "to_cuda"))

    valid = (
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=32, pin_memory=True)
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
        """,
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=32, pin_memory=args.pin)
        for x in loader:
            x = x.cuda()
        """,
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, **loader_kwargs)
        for x in loader:
            x = x.cuda()
        """,
        """
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=32)
        for x in loader:
            x = x.to(torch.device("mps"))
        """,
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=32)
        for x in loader:
            x = x.to("cpu")
        """,
    )
    invalid = (
        Example(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32)
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
            """,
            fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, pin_memory=True)
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
            """,
        ),
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            def train(loader):
                for batch in loader:
                    inputs = batch[0].to(device)
            train(DataLoader(ds, batch_size=32, pin_memory=False))
            """,
            fixed="""
            import torch
            from torch.utils.data import DataLoader
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            def train(loader):
                for batch in loader:
                    inputs = batch[0].to(device)
            train(DataLoader(ds, batch_size=32, pin_memory=True))
            """,
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        comparison=".verify_compare:check",
        probes=(Probe("pinned-batches", "verify_probe.py"),),
        contract=Contract(
            level="identical",
            promise=(
                "Pinned batches hold the same values; only where their host memory lives changes, "
                "so every batch that reaches the model is identical."
            ),
            checks=(
                "every output the program leaves and every printed number is identical",
                "observed (a probe): whether each pass over a loader asked for pinned memory and got pinned "
                "batches, reported (pageable before the fix, pinned after it where an accelerator is present)",
            ),
            speed=(
                "The timed unit is an epoch of large host-to-device copies, so the speedup is the copy "
                "bandwidth of pinned over pageable memory on CUDA; on the CPU nothing is copied, so no difference."
            ),
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._statements: Dict[cst.Call, Optional[cst.CSTNode]] = {}
        self._prepares: List[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if loader_class(self.names.call_name(node)) or self.facts.callees.built_loader(node) is not None:
            self._statements[node] = innermost_statement(self.parents)
            return
        fact = self.facts.frameworks.call(node)
        if fact is not None and fact.framework is _TRANSFORMERS and fact.role == "training-arguments":
            self._training_arguments(fact)
        elif self.facts.frameworks.device_moves(node):
            self._prepares.append(node)

    def _training_arguments(self, fact: FrameworkCall) -> None:
        """``dataloader_pin_memory=False`` in Transformers' training arguments."""
        field = apidata.frameworks().argument(_TRANSFORMERS, "training-arguments", _HF_PIN)
        given = fact.argument(_HF_PIN)
        if given is None or not field.exists_in(self.release(_TRANSFORMERS.value)):
            return
        if literal_bool(given.value) is not False:
            return
        if keeps_off_cuda(fact) or not self.facts.frameworks.arguments_read(fact, _HF_PIN):
            return  # the Trainer may not run on CUDA, or no Trainer reads these arguments (use_cpu=True forces it off anyway)
        self.report(
            given,
            f"`{_HF_PIN}=False` makes the Trainer's loaders copy every batch to the GPU through a staging "
            f"buffer (the default is True); remove it or set `{_HF_PIN}=True`",
            fix=self.replace(given.value, cst.Name("True"), Applicability.SAFE, f"Set `{_HF_PIN}=True`"),
        )

    def _items_hold_no_data(self, arguments: BoundArguments) -> bool:
        """The loader's dataset is a class of this file whose ``__getitem__``
        assembles its item from the index, literals and ``self`` attributes
        only (no data read per index), and no ``collate_fn`` builds more."""
        if arguments.may_be_present("collate_fn"):
            return False
        dataset = arguments.argument("dataset")
        makers = self.facts.instances.makers(dataset.value) if dataset is not None else None
        if not makers:
            return False
        return all(maker.local is not None and _constant_items(maker.local) for maker in makers)

    def _where(self, moved: Optional[cst.Call], by_callee: Optional[cst.Call], by_framework: Optional[cst.Call],
               by_callers: Optional[ReturnUse] = None) -> str:
        """Where the loader's batches go to the GPU, as the message says it."""
        lines = self.facts.positions
        if moved is None and by_callee is None and by_framework is None and by_callers is not None:
            named = sorted(by_callers.callers, key=lambda name: name.endswith(MODULE_BODY))
            first = named[0].replace("." + MODULE_BODY, "") if named else "a caller"
            more = f" (and {len(by_callers.callers) - 1} more)" if len(by_callers.callers) > 1 else ""
            how = ("kept on `self` for" if by_callers.kept else
                   "handed out batch by batch by a generator to" if by_callers.yielded else "returned to")
            return f"{how} `{first}`{more}, which copies its batches to the GPU"
        if moved is not None:
            return f"whose batches are copied to the GPU on {self.cite_line(lines[moved].start.line)}"
        if by_callee is not None:
            return (f"whose batches `{_callee_name(by_callee)}(...)` on {self.cite_line(lines[by_callee].start.line)} "
                    "copies to the GPU")
        assert by_framework is not None
        return (f"whose batches `{cst.Module([]).code_for_node(by_framework.func)}` on "
                f"{self.cite_line(lines[by_framework].start.line)} moves to the device")

    def _wrapped(self, wrapped: WrappedLoader, moved: Optional[cst.Call], by_framework: Optional[cst.Call],
                 by_callee: Optional[cst.Call]) -> None:
        """A loader a project function builds (in this file or another module),
        reported at the call when the call decides ``pin_memory`` (its
        argument, a default it leaves, or a keyword it could pass through
        ``**kwargs``); a value the function writes itself is reported at its
        ``DataLoader(...)``."""
        if moved is None and by_framework is None and by_callee is None:
            return
        if wrapped.loader != DATALOADER:
            return
        pin = wrapped.keyword("pin_memory")
        if not pin.known or not pin.at_call or (pin.value is not None and literal_bool(pin.value) is not False):
            return
        collate = wrapped.keyword("collate_fn")
        if moved is None and collate.known and collate.value is None and self._constant_dataset(
                wrapped.keyword("dataset").argument):
            return  # Accelerate would move an index tensor and strings
        fix: Optional[FixRequest] = None
        # The advice names what this call can change: the `False` it passes, or the
        # parameter (perhaps under another name) that the function hands to `pin_memory`.
        advice = "pass `pin_memory=True` here"
        if pin.argument is not None:
            fix = self.replace(pin.argument, cst.Name("True"), Applicability.SAFE, "Pass `True`")
            advice = "pass `True` where this call passes `False`"
        elif pin.settable is not None:
            fix = self.replace(wrapped.call, add_keyword(wrapped.call, pin.settable, cst.Name("True")),
                               Applicability.SAFE, f"Pass `{pin.settable}=True`")
            advice = f"pass `{pin.settable}=True` here"
        elif pin.value is not None:  # the `False` sits in a dict the call unpacks (`**kwargs`)
            advice = "make it `True` in the dict this call unpacks"
        what = "without `pin_memory`" if pin.value is None else "with `pin_memory=False`"
        self.report(
            wrapped.call,
            f"`{wrapped.name}(...)` builds a `DataLoader` {what} {self._where(moved, by_callee, by_framework)}: "
            f"every copy goes through a staging buffer; {advice}",
            fix=fix,
            statement=self._statements.get(wrapped.call),
        )

    def _constant_dataset(self, dataset: Optional[cst.BaseExpression]) -> bool:
        makers = self.facts.instances.makers(dataset) if dataset is not None else None
        return bool(makers) and all(maker.local is not None and _constant_items(maker.local) for maker in makers or ())

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self._statements:
            return
        loaders = self.facts.loaders
        prepared: Dict[cst.Call, cst.Call] = {}
        for prepare in self._prepares:
            for argument in self.facts.frameworks.device_moves(prepare):
                for loader in loaders.origins(argument):
                    prepared.setdefault(loader, prepare)
        first_move: Dict[cst.Call, cst.Call] = {}
        handed: Dict[cst.Call, cst.Call] = {}
        # A file whose Accelerator places what it prepares runs on that device: a copy to a
        # device known at run time there (`batch.to(model.device)`) is a copy to it.
        on_device = loaders.uses_cuda or bool(self._prepares)
        for move in loaders.moves():
            # (A file that never names CUDA may copy to a device a base class of
            # another module keeps: `batch_X.to(self.device)`, the summaries' CUDA by name.)
            if on_device or move.cuda:
                for loader in move.loaders:
                    first_move.setdefault(loader, move.call)
        for elsewhere in loaders.handed_moves():
            if elsewhere.cuda or on_device:
                for loader in elsewhere.loaders:
                    handed.setdefault(loader, elsewhere.call)
        by_callers: Dict[cst.Call, ReturnUse] = {}
        for call in loaders.constructors:  # returned to the project's callers, which copy its batches
            use = loaders.returned_use(call)
            if use is not None and use.to_cuda:
                by_callers[call] = use
        if not loaders.uses_cuda and not prepared and not handed and not by_callers and not first_move:
            return
        for wrapped in loaders.wrapped_calls:
            self._wrapped(wrapped, first_move.get(wrapped.call), prepared.get(wrapped.call), handed.get(wrapped.call))
        for call in loaders.constructors:
            moved = first_move.get(call)
            by_framework = prepared.get(call)
            by_callee = handed.get(call)
            returned = by_callers.get(call)
            if moved is None and by_framework is None and by_callee is None and returned is None:
                continue
            arguments = bind(call, loaders.signature(call), self.context.torch_version,
                             self.facts.values.splatted)
            if moved is None and returned is None and self._items_hold_no_data(arguments):
                continue  # Accelerate would move an index tensor and strings
            given = arguments.argument("pin_memory")
            if given is None and arguments.may_be_present("pin_memory"):
                continue
            if given is not None and literal_bool(given.value) is not False:
                continue
            where = self._where(moved, by_callee, by_framework, returned)
            fix: Optional[FixRequest]
            if given is None:
                fix = self.replace(call, add_keyword(call, "pin_memory", cst.Name("True")),
                                   Applicability.SAFE, "Set `pin_memory=True`")
                what = "without `pin_memory`"
            else:
                fix = None if "pin_memory" in arguments.splatted else self.replace(
                    given.value, cst.Name("True"), Applicability.SAFE, "Set `pin_memory=True`")
                what = "with `pin_memory=False`"
            self.report(
                call,
                f"`DataLoader` {what} {where}: every copy goes through a staging buffer; set `pin_memory=True`",
                fix=fix,
                statement=self._statements.get(call),
            )


def _callee_name(call: cst.Call) -> str:
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else cst.Module([]).code_for_node(func)


def _constant_items(node: cst.ClassDef) -> bool:
    """``__getitem__(self, index)`` of the class is made only of assignments to
    local names (or their ``[literal]`` items) and a ``return``, all of
    index-free values: the index itself, literals, ``self.<attr>``, local names
    so assigned, and dict, tuple or list displays of those."""
    method = next((s for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__getitem__"), None)
    if method is None or method.decorators or not isinstance(method.body, cst.IndentedBlock):
        return False
    params = method.params.params
    if len(params) != 2 or isinstance(method.params.star_arg, cst.Param) or method.params.star_kwarg is not None:
        return False
    owner = params[0].name.value
    allowed = {params[1].name.value}
    returned = False
    for statement in method.body.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            if isinstance(small, cst.Expr) and isinstance(small.value, _LITERALS):
                continue  # a docstring
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and _index_free(small.value, allowed, owner):
                target = small.targets[0].target
                if isinstance(target, cst.Name) and target.value != owner:
                    allowed.add(target.value)
                    continue
                if (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name)
                        and target.value.value in allowed and len(target.slice) == 1
                        and isinstance(target.slice[0].slice, cst.Index)
                        and isinstance(target.slice[0].slice.value, _LITERALS)):
                    continue
                return False
            if isinstance(small, cst.Return) and small.value is not None and _index_free(small.value, allowed, owner):
                returned = True
                continue
            return False
    return returned


def _index_free(expr: cst.BaseExpression, names: Set[str], owner: str) -> bool:
    """``expr`` is built from ``names`` (the index, local names so built),
    literals and attributes of ``owner`` (the method's ``self``) only."""
    if isinstance(expr, _LITERALS):
        return True
    if isinstance(expr, cst.Name):
        return expr.value in names or literal_constant(expr)
    if isinstance(expr, cst.Attribute):
        return isinstance(expr.value, cst.Name) and expr.value.value == owner
    if isinstance(expr, cst.Dict):
        return all(isinstance(e, cst.DictElement) and _index_free(e.key, names, owner)
                   and _index_free(e.value, names, owner) for e in expr.elements)
    if isinstance(expr, (cst.Tuple, cst.List)):
        return all(isinstance(e, cst.Element) and _index_free(e.value, names, owner) for e in expr.elements)
    return False


__all__: List[str] = ["DataLoaderWithoutPinMemory"]
