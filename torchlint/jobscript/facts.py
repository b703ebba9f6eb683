"""What a job script needs to know about the Python file it launches.

Read from the file's syntax tree through the import table (what each name
refers to), never from the words in names: whether it sets up
DistributedDataParallel (or another per-process distributed setup), whether
it wraps a model in ``DataParallel``, whether it starts its own processes,
and the ``num_workers`` of each ``DataLoader``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import List, Optional, Tuple

import libcst as cst

from torchlint.parsing import parse_module
from torchlint.names import ImportTable
from torchlint.sourcefile import SourceError, read_source

_DISTRIBUTED = frozenset({
    "torch.nn.parallel.DistributedDataParallel",
    "torch.distributed.init_process_group",
    "torch.distributed.fsdp.FullyShardedDataParallel",
    "torch.distributed.fsdp.fully_shard",
    "accelerate.Accelerator",
})
_DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.data_parallel"})
_SPAWN = frozenset({"torch.multiprocessing.spawn", "torch.multiprocessing.start_processes"})
_DATALOADER = "torch.utils.data.DataLoader"
_NUM_WORKERS_POSITION = 5  # DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, ...)


@dataclass(frozen=True)
class CodeFacts:
    """Facts about one launched Python file.

    ``workers`` has one entry per ``DataLoader(...)`` call: its
    ``num_workers`` as an integer literal (0 when left out), or ``None`` when
    it is an expression whose value is not written in the file.
    """

    distributed: bool
    data_parallel: bool
    spawns: bool
    workers: Tuple[Optional[int], ...]


_SCOPE_NODES = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
                cst.GeneratorExp)


class _Collector(cst.CSTVisitor):
    def __init__(self, names: ImportTable) -> None:
        super().__init__()
        self.names = names
        self.called: List[str] = []
        self.workers: List[Optional[int]] = []

    # The import table resolves names in the scope the walk is in.
    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, _SCOPE_NODES):
            self.names.enter(node)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        super().on_leave(original_node)
        if isinstance(original_node, _SCOPE_NODES):
            self.names.leave(original_node)

    def visit_Call(self, node: cst.Call) -> None:
        name = self.names.call_name(node)
        if name is None:
            return
        self.called.append(name)
        if name == _DATALOADER:
            self.workers.append(_num_workers(node))


def _num_workers(node: cst.Call) -> Optional[int]:
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "num_workers":
            return _literal(arg.value)
    if any(arg.star for arg in node.args):
        return None
    positional = [arg for arg in node.args if arg.keyword is None]
    if len(positional) > _NUM_WORKERS_POSITION:
        return _literal(positional[_NUM_WORKERS_POSITION].value)
    return 0


def _literal(value: cst.BaseExpression) -> Optional[int]:
    if isinstance(value, cst.Integer):
        return int(value.evaluated_value)
    return None


def facts_of_module(module: cst.Module) -> CodeFacts:
    """The facts of an already parsed module."""
    collector = _Collector(ImportTable.from_module(module))
    module.visit(collector)
    called = set(collector.called)
    return CodeFacts(
        distributed=bool(called & _DISTRIBUTED),
        data_parallel=bool(called & _DATA_PARALLEL),
        spawns=bool(called & _SPAWN),
        workers=tuple(collector.workers),
    )


@lru_cache(maxsize=64)
def _facts_cached(path: Path, mtime_ns: int, size: int) -> Optional[CodeFacts]:
    try:
        text = read_source(path).text
    except (SourceError, OSError):
        return None
    # The guarded parser: a launched file that would crash libcst, or break
    # its limits, gives no facts (and so no finding), never a dead run.
    module = parse_module(text, str(path))
    if not isinstance(module, cst.Module):
        return None
    return facts_of_module(module)


def code_facts(path: Path) -> Optional[CodeFacts]:
    """The facts of the file at ``path``; None when it cannot be read or parsed
    (a rule then stays silent: the file's own lint reports the problem)."""
    try:
        status = path.stat()
    except OSError:
        return None
    return _facts_cached(path.resolve(), status.st_mtime_ns, status.st_size)
