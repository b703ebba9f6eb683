"""TL501 data-parallel."""

from __future__ import annotations

from typing import List, Mapping, Optional, Set, Tuple

import libcst as cst

from torchlint.analysis import Analysis
from torchlint.analysis.frameworks import FrameworkCall, UNKNOWN, literal_value, packages
from torchlint.analysis.queries import subclasses_of
from torchlint.analysis.scopes import Binding, BindingKind
from torchlint.data.apidata import ArgumentValue, Framework, Literal, frameworks, literal_key
from torchlint.analysis.names import canonical
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, FixAvailability, OptionValue, Rule, Severity, TorchRange
from torchlint.data.versions import Release

_DATA_PARALLEL = "torch.nn.DataParallel"
_LIGHTNING = Framework.LIGHTNING
_DP_ARGUMENTS = ("strategy", "accelerator", "distributed_backend")
"""The Trainer arguments that have named DataParallel, newest first."""
_DP_CLASSES = ("data-parallel-strategy", "data-parallel-plugin")
_LIGHTNING_WORDS = ("Trainer", "DataParallelStrategy", "DataParallelPlugin")
_TARGETS = {
    "torch.nn.DataParallel": "`nn.DataParallel` runs one process that drives every GPU",
    "torch.nn.parallel.data_parallel": "`nn.parallel.data_parallel` runs one process that drives every GPU",
}


class DataParallel(Rule):
    """## What it does
    Reports every construction of `torch.nn.DataParallel` and every call of
    the functional `torch.nn.parallel.data_parallel`, however the file
    reaches them: imports and their aliases, a name bound once to a torch
    module or to the class (`P = torch.nn; P.DataParallel(m)`,
    `DP = nn.DataParallel`), and classes of the project that derive from
    `nn.DataParallel`, in the file or in another module (`class
    ScatteredDataParallel(nn.DataParallel)` used from a training script,
    also through relative imports).

    PyTorch Lightning spells `nn.DataParallel` as a Trainer argument, and
    the rule reads it from the `Trainer` of `lightning`, `lightning.pytorch`
    or `pytorch_lightning` as each release does
    (`torchlint/data/frameworks.toml`; the release is the
    `lightning-version` setting, else the project's `lightning` or
    `pytorch-lightning` requirement, else the newest):
    `strategy="dp"` (1.5 to 1.9), `accelerator="dp"` (1.0 to 1.6),
    `distributed_backend="dp"` (before 1.5), and the strategy classes
    `DataParallelStrategy(...)` (1.6 to 1.9) and `DataParallelPlugin(...)`
    (before 1.6).  `strategy="dp"` with `accelerator="cpu"` is left alone
    (Lightning 1.x falls back to DDP there).  For a release that no longer
    has the spelling (`strategy="dp"` or `DataParallelStrategy` from 2.0,
    `accelerator="dp"` from 1.7, `distributed_backend` from 1.5) the
    finding says so: that Trainer fails at start-up, after the job waited
    in the queue.  Spellings from before a release added them are left
    alone.

    ## Why is this bad?
    `DataParallel` keeps one Python process in charge of all GPUs.  On every
    step it copies the model to each device, scatters the batch, gathers the
    outputs back onto the first GPU and computes the loss there, so the first
    GPU runs out of memory first and the others wait on the interpreter lock.
    `DistributedDataParallel` starts one process per GPU, keeps a model copy
    on each for the whole run and only all-reduces gradients, overlapping the
    communication with the backward pass.  It is faster even on one machine,
    and it is the only one of the two that scales to several nodes.

    ## Example
    ```python
    model = nn.DataParallel(Net()).cuda()
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
    ```

    Use instead (started with `torchrun --nproc_per_node=4 train.py`):
    ```python
    import os
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data.distributed import DistributedSampler

    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(Net().to(local_rank), device_ids=[local_rank])
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler, num_workers=4)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = criterion(model(x.to(local_rank)), y.to(local_rank))
    dist.destroy_process_group()
    ```
    The batch size is now per process; saving and logging belong on rank 0
    only (`if dist.get_rank() == 0:`).

    ## Fix safety
    No automatic fix: the move to DistributedDataParallel changes how the
    script is launched, how data is sharded and where checkpoints are
    written, which a linter cannot decide for you.

    ## Source guide
    *DGX cluster guidelines* (a GPU cluster's user guide) asks for
    `DistributedDataParallel` instead of `DataParallel`; *GPU Computing
    Guide* (Ohio Supercomputer Center) and *Chapter 16: GPU Acceleration &
    Distributed Training* (an online PyTorch training book) both call
    `DistributedDataParallel` the recommended choice.
    """

    code = "TL501"
    name = "data-parallel"
    summary = "`nn.DataParallel` is used; prefer `DistributedDataParallel` with torchrun"
    fix_availability = FixAvailability.NONE
    severity = Severity.WARNING  # advice: the right call depends on the project
    fix_summary = "none (the doc page shows the DDP + torchrun migration)"
    torch_range = TorchRange(note="`DistributedDataParallel` replaces it in every 1.x and 2.x release")
    trigger_words = ("DataParallel", "data_parallel")

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """The torch targets resolve only through a torch import; a project's
        class deriving from them need only be named; Lightning's spellings
        need a Lightning import."""
        if facts.imports_from(packages(_LIGHTNING)) and facts.mentions(_LIGHTNING_WORDS):
            return True
        project = facts.project
        others = sorted({name.rsplit(".", 1)[-1] for name in project.subclasses_of(_DATA_PARALLEL)}) if project else []
        return facts.mentions(others) or (facts.imports_torch and facts.mentions(cls.trigger_words))
    valid = (
        """
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = DDP(Net())
        """,
    )
    invalid = (
        Example(
            """
            from torch import nn
            model = nn.DataParallel(Net())
            """
        ),
        Example(
            """
            import torch
            out = torch.nn.parallel.data_parallel(model, inputs)
            """
        ),
        Example(
            """
            import pytorch_lightning as pl
            trainer = pl.Trainer(accelerator="gpu", devices=4, strategy="dp")
            """,
            frameworks={"lightning": "1.9.5"},
        ),
    )
    requires = frozenset({Analysis.PROJECT})
    project_queries = (subclasses_of(_DATA_PARALLEL),)

    def visit_Call(self, node: cst.Call) -> None:
        lightning = self.facts.frameworks.call(node)
        if lightning is not None and lightning.framework is _LIGHTNING:
            self._lightning(lightning)
            return
        qualified = self.names.call_name(node)
        if qualified is None:
            qualified = self._through_alias(node.func, 0) or self._relative(node.func)
        if qualified in _TARGETS:
            what = _TARGETS[qualified]
        elif self._derives_from_data_parallel(node.func, qualified, set()):
            what = f"`{_spelling(node.func)}` is an `nn.DataParallel`, which runs one process that drives every GPU"
        else:
            return
        self.report(
            node,
            f"{what}; use `DistributedDataParallel` launched with torchrun",
            hint="See `torchlint explain TL501` for the DistributedDataParallel migration",
        )

    def _lightning(self, fact: FrameworkCall) -> None:
        """DataParallel through a Lightning Trainer argument or strategy class."""
        release = self.release(_LIGHTNING.value)
        data = frameworks()
        hint = "See `torchlint explain TL501` for what DataParallel costs"
        ddp = self._ddp_spelling()
        if fact.role in _DP_CLASSES:
            entry = next(c for c in data.classes if c.framework is _LIGHTNING and c.role == fact.role)
            name = _spelling(fact.call.func)
            if entry.releases.contains(release):
                self.report(fact.call, f"`{name}` makes the Lightning Trainer wrap the model in `nn.DataParallel`, "
                            f"one process that drives every GPU; use {ddp}", hint=hint)
            elif entry.releases.until is not None and not release < entry.releases.until \
                    and fact.role == "data-parallel-strategy":
                self.report(fact.call, f"`{name}` was removed in Lightning {entry.releases.until} (the project targets "
                            f"{release}): the script fails before training; use {ddp}", hint=hint)
            return
        if fact.role != "trainer":
            return
        for argument in _DP_ARGUMENTS:
            arg = fact.argument(argument)
            value = literal_value(arg.value) if arg is not None else UNKNOWN
            if arg is None or value is UNKNOWN:
                continue
            meaning = data.meaning(_LIGHTNING, "trainer", argument, value, release)
            written = f"`{argument}={_spelling(arg.value)}`"
            if meaning == "data-parallel":
                if argument == "strategy" and _literal(fact, "accelerator") == "cpu":
                    continue  # Lightning 1.x falls back to DDP on the CPU
                self.report(arg, f"{written} makes the Lightning Trainer wrap the model in `nn.DataParallel`, one "
                            f"process that drives every GPU; use {ddp}", hint=hint)
                return
            gone = self._removed(data.spellings(_LIGHTNING, "trainer", argument, "data-parallel"), value, release)
            if gone is not None:
                self.report(arg, f"{written} (DataParallel) no longer runs from Lightning {gone} (the project "
                            f"targets {release}): the Trainer fails at start-up; use {ddp}", hint=hint)
                return

    @staticmethod
    def _removed(spellings: Tuple[ArgumentValue, ...], value: Literal, release: Release) -> Optional[Release]:
        """The release that removed ``value`` as a DataParallel spelling, if ``release`` is past it."""
        for entry in spellings:
            until = entry.releases.until
            if literal_key(entry.value) == literal_key(value) and until is not None and not release < until:
                return until
        return None

    def _ddp_spelling(self) -> str:
        """How the targeted release asks for DDP: the newest DataParallel
        argument it accepts, with ``"ddp"``."""
        release = self.release(_LIGHTNING.value)
        data = frameworks()
        for argument in _DP_ARGUMENTS:
            if any(e.releases.contains(release) for e in data.spellings(_LIGHTNING, "trainer", argument, "data-parallel")):
                return f'`{argument}="ddp"` (one process per GPU)'
        return '`strategy="ddp"` (one process per GPU)'

    def _through_alias(self, expr: cst.BaseExpression, depth: int) -> Optional[str]:
        """The dotted name of ``P.DataParallel`` where ``P`` is bound once, by
        an assignment, to a module or class the imports name (``P = torch.nn``,
        ``par = nn.parallel``, ``DP = nn.DataParallel``); None when the name
        is bound more than once or to anything else."""
        root, parts = _chain(expr)
        binding = self._only_binding(root, BindingKind.ASSIGN) if depth <= 3 else None
        value = binding.value if binding is not None else None
        if not isinstance(value, (cst.Name, cst.Attribute)):
            return None
        base = self.names.qualified_name(value) or self._through_alias(value, depth + 1)
        if base is None:
            return None
        return canonical(".".join([base, *parts]))

    def _relative(self, expr: cst.BaseExpression) -> Optional[str]:
        """``Name`` or ``module.Name`` imported relatively (``from .parallel
        import Wrap``, ``from . import parallel``), as the absolute name the
        project index knows; only asked when the project has such classes."""
        return self.facts.instances.absolute_name(expr) if self.facts.project.classes else None

    def _only_binding(self, name: Optional[cst.Name], kind: BindingKind) -> Optional[Binding]:
        """The one binding ``name`` refers to, if there is exactly one and of ``kind``."""
        bindings = self.facts.scopes.resolve(name) if name is not None else ()
        return bindings[0] if len(bindings) == 1 and bindings[0].kind is kind else None

    def _derives_from_data_parallel(
        self, func: cst.BaseExpression, qualified: Optional[str], seen: Set[cst.ClassDef]
    ) -> bool:
        """A class of this file, or of the project, deriving from `nn.DataParallel`."""
        if qualified is not None:
            return qualified == _DATA_PARALLEL or self.facts.project.derives_from(qualified, _DATA_PARALLEL)
        if not isinstance(func, cst.Name):
            return False
        bindings = self.facts.scopes.resolve(func)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.CLASS:
            return False
        node = bindings[0].node
        if not isinstance(node, cst.ClassDef) or node in seen:
            return False
        seen.add(node)
        return any(
            self._derives_from_data_parallel(base.value, self.names.qualified_name(base.value), seen)
            for base in node.bases
        )


def _chain(expr: cst.BaseExpression) -> Tuple[Optional[cst.Name], List[str]]:
    """``a.b.c`` -> (the name ``a``, ["b", "c"]); no name for other roots."""
    parts: List[str] = []
    while isinstance(expr, cst.Attribute):
        parts.insert(0, expr.attr.value)
        expr = expr.value
    return (expr if isinstance(expr, cst.Name) else None), parts


def _spelling(func: cst.BaseExpression) -> str:
    return cst.Module([]).code_for_node(func)


def _literal(fact: FrameworkCall, name: str) -> object:
    arg = fact.argument(name)
    return literal_value(arg.value) if arg is not None else None
