"""What a job script needs to know about the Python file it launches.

Read from the file's syntax tree through the import table (what each name
refers to), never from the words in names: whether it sets up
DistributedDataParallel (or another per-process distributed setup), whether
it wraps a model in ``DataParallel``, whether it starts its own processes,
the ``num_workers`` of each ``DataLoader``, and what its training framework
does with the GPUs (a Transformers ``Trainer`` in one process wraps the
model in ``DataParallel``; a Lightning ``Trainer`` takes its process count
from ``devices`` and ``num_nodes``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import List, Optional, Set, Tuple, Union

import libcst as cst

from torchlint.analysis.frameworks import UNKNOWN, Unknown, literal_value
from torchlint.data.apidata import Framework, frameworks
from torchlint.source.parsing import parse_module
from torchlint.analysis.names import ImportTable
from torchlint.source.sourcefile import SourceError, read_source

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
_ONE_GPU_PER_PROCESS_KEYWORDS = frozenset({
    "device_map", "load_in_8bit", "load_in_4bit", "quantization_config", "use_cpu", "no_cuda",
})
"""Keywords after which a Transformers Trainer in one process may not wrap the
model in ``DataParallel``: a model spread over the GPUs (``device_map``) or
loaded quantized (skipped by ``_wrap_model``), or a Trainer kept off CUDA."""


@dataclass(frozen=True)
class LightningTrainer:
    """A Lightning ``Trainer(...)``: its ``devices`` (an int, ``"auto"``,
    None when left out, UNKNOWN otherwise) and ``num_nodes`` (an int, None
    when left out, UNKNOWN otherwise)."""

    devices: Union[int, str, None, Unknown]
    num_nodes: Union[int, None, Unknown]
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
    hf_trainer: bool = False
    """Builds a Transformers ``Trainer`` (or ``Seq2SeqTrainer``, or a class of the file deriving from one)."""
    one_gpu_per_process_hint: bool = False
    """Passes a keyword that may keep a Transformers Trainer off ``DataParallel``."""
    lightning_trainers: Tuple[LightningTrainer, ...] = ()


_SCOPE_NODES = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
                cst.GeneratorExp)


class _Collector(cst.CSTVisitor):
    def __init__(self, names: ImportTable) -> None:
        super().__init__()
        self.names = names
        self.called: List[str] = []
        self.workers: List[Optional[int]] = []
        self.hf_trainer = False
        self.one_gpu_hint = False
        self.lightning: List[LightningTrainer] = []
        self.hf_subclasses: Set[str] = set()

    # The import table resolves names in the scope the walk is in.
    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, _SCOPE_NODES):
            self.names.enter(node)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        super().on_leave(original_node)
        if isinstance(original_node, _SCOPE_NODES):
            self.names.leave(original_node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        """A module-level class deriving from Transformers' Trainer (``class MyTrainer(Trainer)``)."""
        for base in node.bases:
            found = frameworks().class_of(self.names.qualified_name(base.value))
            if (found is not None and (found.framework, found.role) == (Framework.TRANSFORMERS, "trainer")) or (
                    isinstance(base.value, cst.Name) and base.value.value in self.hf_subclasses):
                self.hf_subclasses.add(node.name.value)

    def visit_Call(self, node: cst.Call) -> None:
        if any(arg.keyword is not None and arg.keyword.value in _ONE_GPU_PER_PROCESS_KEYWORDS for arg in node.args):
            self.one_gpu_hint = True
        name = self.names.call_name(node)
        if name is None:
            if isinstance(node.func, cst.Name) and node.func.value in self.hf_subclasses:
                self.hf_trainer = True
            return
        found = frameworks().class_of(name)
        if found is not None and (found.framework, found.role) == (Framework.TRANSFORMERS, "trainer"):
            self.hf_trainer = True
        elif found is not None and (found.framework, found.role) == (Framework.LIGHTNING, "trainer"):
            self.lightning.append(_lightning_trainer(node))
        self.called.append(name)
        if name == _DATALOADER:
            self.workers.append(_num_workers(node))


def _lightning_trainer(node: cst.Call) -> LightningTrainer:
    keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
    unpacked = any(arg.star for arg in node.args)

    def read(name: str) -> Union[int, str, None, Unknown]:
        if name not in keywords:
            return UNKNOWN if unpacked else None
        value = literal_value(keywords[name])
        return value if isinstance(value, (int, str)) and not isinstance(value, bool) else UNKNOWN

    devices = read("devices")
    num_nodes = read("num_nodes")
    return LightningTrainer(devices, num_nodes if not isinstance(num_nodes, str) else UNKNOWN)


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
        hf_trainer=collector.hf_trainer,
        one_gpu_per_process_hint=collector.one_gpu_hint,
        lightning_trainers=tuple(collector.lightning),
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
