"""TL303 empty-cache-in-loop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Set

import libcst as cst

from torchlint.analysis import Analysis
from torchlint.analysis.queries import summaries
from torchlint.analysis.placement import StepPlacement
from torchlint.ruleapi.rule import Example, FileContext, Rule

_EMPTY_CACHE = frozenset({"torch.cuda.empty_cache", "torch.cuda.memory.empty_cache"})


@dataclass(frozen=True)
class _Site:
    """One `empty_cache()` call and the statement a suppression comment precedes."""

    call: cst.Call
    statement: Optional[cst.CSTNode]


class EmptyCacheInLoop(Rule):
    """## What it does
    Reports `torch.cuda.empty_cache()` (however `torch` is imported) that
    runs on every iteration of a training loop or of a loop over a
    `DataLoader`: in the loop's body, or in a function of the same file that
    such a loop calls on every iteration.

    A loop is over a `DataLoader` when what it iterates (or what
    `enumerate`/`tqdm`/`zip` or a project generator such as a logger's
    `log_every(loader, n)` draws from) is one: built in the file,
    returned by one of the file's functions or by a method of the same class
    (`for batch in self.load(files):`), or a parameter that every call of
    its function in the file fills with one.  The graph libraries' loaders
    count too (DGL's `dgl.dataloading.DataLoader`/`GraphDataLoader`, PyG's
    `torch_geometric.loader` loaders): each is a `DataLoader` subclass.

    A training loop here is one whose own iterations call `backward()` (or
    `torch.autograd.grad`), directly or through the file's functions, a
    library wrapper that runs it (`accelerator.backward(loss)`, timm's
    `loss_scaler(loss, optimizer)`), or another module's function whose
    code runs it (the project index's summaries; a parameter the function
    calls counts when every call in the project passes it the same class,
    such as `NativeScaler()`).  A loop
    whose iterations each run a whole training loop is not reported: an
    epoch loop (with the loop over batches written inside it, or a training
    function it calls once per epoch) or a loop over experiments.  That is a
    decision, not a blind spot: one `empty_cache()` per epoch costs one
    refill of the allocator's cache per epoch, noise against the hundreds of
    steps around it, and emptying the cache between epochs or experiments is
    what the guides recommend.

    A loop whose iterations each set a run up (build the optimizer they
    step, `torch.optim.SGD(model.parameters())` or any call whose result
    the same function then `.step()`s, or wrap a model in
    `DistributedDataParallel`/`DataParallel`/FSDP, in the loop's body or in
    the file's function it calls) runs one experiment per iteration, not
    one training step: not reported, for the same reason.

    Not reported either: a call under an `if` inside the loop whose test
    may change from one iteration to the next (a cadence such as `if step %
    100 == 0:`, a test that calls something, or reads a name or attribute
    the loop writes), in an `except` handler (recovery from an
    out-of-memory error), in a loop's `else`, after the loop, or in a
    function that no such loop calls.

    A call under an `if` whose test keeps its value for the whole loop (a
    run-wide flag such as `if args.use_ema:`, which nothing in the loop
    writes and which calls nothing; the flow fact decides) runs on every
    iteration or on none, and is reported.

    ## Why is this bad?
    PyTorch's caching allocator keeps freed GPU memory so that the next
    step's tensors of the same sizes are allocated without asking the
    driver.  `empty_cache()` hands that memory back, so the next step has to
    `cudaMalloc` all of it again, and `empty_cache()` itself synchronizes
    the device.  Called on every step, it makes every step slower and it
    frees nothing the training can use: the memory of live tensors is not
    released, and the same amount is reserved again a moment later.  It
    only helps other processes on the same GPU, or code that switches to a
    task with a different memory pattern.

    ## Example
    ```python
    for inputs, targets in loader:
        loss = criterion(model(inputs.cuda()), targets.cuda())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        torch.cuda.empty_cache()
    ```

    Use instead:
    ```python
    for inputs, targets in loader:
        loss = criterion(model(inputs.cuda()), targets.cuda())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    torch.cuda.empty_cache()  # once, before the next task
    ```

    ## Fix safety
    No automatic fix: whether the call belongs after the loop, under a
    cadence, or nowhere is the author's choice.

    ## Options
    None.

    ## Source guide
    *GPU Computing Guide* (Ohio Supercomputer Center) advises clearing the
    GPU cache "when switching tasks", and *Chapter 16: GPU Acceleration &
    Distributed Training* (an online PyTorch training book) "between
    experiments"; neither does it per step.  The cost of releasing cached
    blocks is described in the "CUDA semantics" notes of the PyTorch
    documentation (memory management).
    """

    code = "TL303"
    name = "empty-cache-in-loop"
    summary = "`torch.cuda.empty_cache()` runs on every iteration of a training or data loop"
    fix_summary = "none: move it after the loop or under a cadence"
    trigger_words = ("empty_cache",)
    requires = frozenset({Analysis.TRAINING, Analysis.PROJECT})
    project_queries = (summaries(),)
    valid = (
        """
        import torch
        def run(model_fn, batch):
            model = model_fn()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            model(batch).sum().backward()
            opt.step()
        for model_fn in zoo:
            run(model_fn, batch)
            torch.cuda.empty_cache()
        """,
        """
        import torch
        from project import make_optimizer
        for model_fn in zoo:
            model = model_fn()
            opt = make_optimizer(model)
            model(batch).sum().backward()
            opt.step()
            torch.cuda.empty_cache()
        """,
        """
        import torch
        for step, (x, y) in enumerate(loader):
            loss = model(x).sum()
            loss.backward()
            if step % 100 == 0:
                torch.cuda.empty_cache()
        """,
        """
        import torch
        for config in configs:
            train(config)
            torch.cuda.empty_cache()
        """,
        """
        import torch
        for x in loader:
            try:
                model(x).sum().backward()
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
        """,
    )
    invalid = (
        Example(
            """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, batch_size=32)
            for x, y in loader:
                model(x).sum().backward()
                torch.cuda.empty_cache()
            """
        ),
        Example(
            """
            from torch.cuda import empty_cache as free
            def step(batch):
                model(batch).sum().backward()
                free()
            while True:
                step(next(batches))
            """
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._sites: List[_Site] = []

    def visit_Call(self, node: cst.Call) -> None:
        if self.names.call_name(node) in _EMPTY_CACHE:
            statement = next(
                (p for p in reversed(self.parents) if isinstance(p, cst.SimpleStatementLine)), None
            )
            self._sites.append(_Site(node, statement))

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self._sites:
            return
        placement = StepPlacement(self.facts.parents, self.facts.training, invariant=self.facts.flow.invariant_in)
        found = [(site, placement.step_loop(site.call, set())) for site in self._sites]
        loops: Set[cst.CSTNode] = {loop.node for _, loop in found if loop is not None}
        if not loops:
            return
        located = self.facts.located
        for site, loop in found:
            if loop is None:
                continue
            what = "loop over a DataLoader" if loop.over_dataloader else "training loop"
            self.report(
                site.call,
                f"`torch.cuda.empty_cache()` runs on every iteration of the {what} on "
                f"{self.cite_line(located.line(loop.node))}; it slows every step and frees nothing training can use: "
                "call it once after the loop",
                statement=site.statement,
            )
