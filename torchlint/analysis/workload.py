"""What a file trains, and where: its step loop, whether it runs on CUDA,
whether its model is convolutional, whether it is a program's entry point.

These are the facts the throughput suggestions (mixed precision, TF32,
cuDNN benchmarking, channels-last, compilation) decide from.  Each is read
from torch's API through the file's imports and from the training facts,
never from words in names: a CUDA file calls into ``torch.cuda``, calls
``.cuda()`` or names a ``"cuda"`` device; a convolutional model is built
from ``torch.nn`` convolutions or a torchvision convolutional network.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from torchlint.analysis.training import LoopFacts, Training
from torchlint.analysis.names import ImportTable
from torchlint.source.tree import walk, walk_body

_CUDA_DEVICE = re.compile(r"^cuda(?::\d+)?$")

CONVOLUTIONS: FrozenSet[str] = frozenset({
    "torch.nn.Conv2d", "torch.nn.Conv3d", "torch.nn.ConvTranspose2d", "torch.nn.ConvTranspose3d",
    "torch.nn.LazyConv2d", "torch.nn.LazyConv3d", "torch.nn.LazyConvTranspose2d", "torch.nn.LazyConvTranspose3d",
})
"""Layers over 4-D and 5-D inputs, which cuDNN runs and whose memory format matters."""

# torchvision's convolutional families (model builders in ``torchvision.models``).
_TORCHVISION_CONV = re.compile(
    r"^torchvision\.models\.(?:resnet\d+|resnext\w+|wide_resnet\w+|vgg\w+|densenet\d+|mobilenet_v\w+|"
    r"efficientnet\w+|regnet_\w+|convnext_\w+|alexnet|googlenet|inception_v3|squeezenet\w+|"
    r"shufflenet_v2\w+|mnasnet\w+)$"
)


@dataclass(frozen=True)
class Workload:
    """The file's training, as the throughput suggestions see it."""

    step_loop: Optional[LoopFacts]
    """The first loop (in source order) whose own iterations run a backward
    pass and that holds no other such loop: the loop over batches."""
    cuda: Optional[cst.CSTNode]
    """The first sign that the file runs on CUDA, or None."""
    convolution: Optional[cst.CSTNode]
    """The first convolution layer or convolutional torchvision model built, or None."""
    entry_point: bool
    """The file runs as a program: an ``if __name__ == "__main__":`` block,
    or a training loop in the module body."""
    imports_end: Optional[cst.SimpleStatementLine]
    """The last import-only statement of the module body before its first
    function, class or ``__main__`` block (where a process-wide setting goes)."""
    step_loops: Tuple[LoopFacts, ...] = ()
    """Every loop that qualifies as :attr:`step_loop`, in source order (a
    notebook's cells may train on the CPU before a later cell uses CUDA)."""


def workload(module: cst.Module, names: ImportTable, training: Training) -> Workload:
    """The workload facts of one module."""
    cuda: Optional[cst.CSTNode] = None
    convolution: Optional[cst.CSTNode] = None
    order: Dict[cst.CSTNode, int] = {}
    for node, _parent in walk(module):
        if isinstance(node, (cst.For, cst.While)):
            order[node] = len(order)
        if cuda is None and _runs_on_cuda(node, names):
            cuda = node
        if convolution is None and isinstance(node, cst.Call) and _builds_convolution(node, names):
            convolution = node
    loops = sorted(_step_loops(training), key=lambda loop: order.get(loop.node, len(order)))
    module_loops = training.function(module).loops
    return Workload(
        step_loop=loops[0] if loops else None,
        cuda=cuda,
        convolution=convolution,
        entry_point=_has_main_block(module) or any(training.is_training_loop(loop) for loop in module_loops),
        imports_end=_imports_end(module),
        step_loops=tuple(loops),
    )


def _runs_on_cuda(node: cst.CSTNode, names: ImportTable) -> bool:
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "cuda" and names.qualified_name(func) is None:
            return True  # `model.cuda()`, `x.cuda(non_blocking=True)`
        qualified = names.call_name(node)
        return qualified is not None and qualified.startswith("torch.cuda.")
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return isinstance(value, str) and bool(_CUDA_DEVICE.match(value))
    return False


def _builds_convolution(call: cst.Call, names: ImportTable) -> bool:
    qualified = names.call_name(call)
    return qualified is not None and (qualified in CONVOLUTIONS or bool(_TORCHVISION_CONV.match(qualified)))


def _step_loops(training: Training) -> List[LoopFacts]:
    """Loops over batches that update a model: each iteration runs a backward
    pass and a ``.step()`` (an optimizer's or a gradient scaler's), in the
    loop or in the file's functions it calls.  A loop that only differentiates
    (a profiler, a gradient check, a saliency map) trains nothing."""
    found: List[LoopFacts] = []
    for facts in training.functions.values():
        for loop in facts.loops:
            if (
                training.is_training_loop(loop) and not training.is_epoch_loop(loop)
                and _steps(loop, training)
            ):
                found.append(loop)
    return found


def _steps(loop: LoopFacts, training: Training) -> bool:
    """A ``x.step(...)`` method call runs in the loop, directly or through the file's functions."""
    if _calls_step(loop.node):
        return True
    seen: Set[cst.FunctionDef] = set()
    pending = [edge.callee for edge in loop.local_calls]
    while pending:
        function = pending.pop()
        if function in seen:
            continue
        seen.add(function)
        if _calls_step(function.body):
            return True
        facts = training.functions.get(function)
        if facts is not None:
            pending.extend(edge.callee for edge in facts.local_calls)
    return False


def _calls_step(node: cst.CSTNode) -> bool:
    return any(
        isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) and inner.func.attr.value == "step"
        for inner in walk_body(node)
    )


def _has_main_block(module: cst.Module) -> bool:
    for statement in module.body:
        if isinstance(statement, cst.If) and isinstance(statement.test, cst.Comparison):
            test = statement.test
            left = test.left
            if isinstance(left, cst.Name) and left.value == "__name__":
                return True
    return False


def _imports_end(module: cst.Module) -> Optional[cst.SimpleStatementLine]:
    last: Optional[cst.SimpleStatementLine] = None
    for statement in module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or (
            isinstance(statement, cst.If) and _has_main_block(cst.Module(body=[statement]))
        ):
            break
        if isinstance(statement, cst.SimpleStatementLine) and statement.body and all(
            isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
        ):
            last = statement
    return last


__all__: Sequence[str] = ("CONVOLUTIONS", "Workload", "workload")
