"""What a run of a program leaves to compare (needs torch; loaded by path by the harness).

A script written the usual way keeps its state in ``main()`` or in a trainer
object, not in module globals, so verify observes instead of asking:

- ``Locals`` records the locals of the program's own functions as each one
  returns (``sys.settrace``, with line events off, so only calls into the
  program's own code cost anything); the last return of each function is kept.
- ``collect`` gathers what to compare: ``torchlint_outputs()`` when the
  script defines it, else its globals and those captured locals, and follows
  the attributes of the script's own objects (a ``Trainer``'s model and
  optimizer), argparse namespaces and dataclasses.
- ``Flattener`` turns it into ``{dotted.key: tensor or plain value}`` with
  metadata: modules through their ``state_dict``, the ``.grad`` of each
  parameter and of each leaf tensor that requires grad, their configuration
  (plain attributes such as ``p`` or ``eps``), optimizers' hyperparameters
  and state, schedulers and scalers through theirs.  Each object is compared
  once, under the first name it is found by; what cannot be compared is listed.

Every plain value is tagged with where it came from: ``config`` (optimizer
hyperparameters, module attributes, argparse values, schedulers) is compared
exactly whatever the contract; ``value`` is a number the script computed.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import types
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

Flat = Dict[str, Any]
PLAIN = (bool, int, float, str, type(None))
OBJECT_DEPTH = 3  # attribute levels followed into the script's own objects
CONTAINER_DEPTH = 5
CONTAINER_ITEMS = 1000  # items of one list or dict, beyond which the rest is "not compared"
_CO_OPTIMIZED, _CO_NEWLOCALS = 0x1, 0x2


def _qualname(code: types.CodeType) -> str:
    return str(getattr(code, "co_qualname", code.co_name))


class Locals:
    """The locals of the program's own functions, as each last returned."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.captured: Dict[str, Dict[str, Any]] = {}
        self._saved: Any = None

    def __enter__(self) -> "Locals":
        self._saved = sys.gettrace()
        sys.settrace(self._call)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.settrace(self._saved)

    def _call(self, frame: types.FrameType, event: str, arg: Any) -> Optional[Callable[..., Any]]:
        code = frame.f_code
        if event != "call" or code.co_filename != self.filename:
            return None
        if code.co_flags & (_CO_OPTIMIZED | _CO_NEWLOCALS) != (_CO_OPTIMIZED | _CO_NEWLOCALS):
            return None  # a class body or the module itself
        if code.co_name.startswith("<") or code.co_name.startswith("torchlint_"):
            return None  # comprehensions, lambdas; the verify hooks
        frame.f_trace_lines = False
        return self._local

    def _local(self, frame: types.FrameType, event: str, arg: Any) -> Optional[Callable[..., Any]]:
        if event == "return":
            name = _qualname(frame.f_code) + "()"
            self.captured.pop(name, None)  # insertion order: the order of last returns
            self.captured[name] = dict(frame.f_locals)
        return self._local


def _user_class(cls: type, roots: Tuple[str, ...]) -> bool:
    """Is ``cls`` defined by the script (its ``__main__``) or a module in its folder?"""
    module = sys.modules.get(cls.__module__)
    if cls.__module__ == "__main__":
        return True
    path = getattr(module, "__file__", None)
    if not path:
        return False
    real = os.path.realpath(path)
    return any(real.startswith(root + os.sep) for root in roots)


def _ignored(value: Any) -> bool:
    """Code, not data: modules, functions, classes, methods."""
    return isinstance(value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type,
                              types.MethodType, staticmethod, classmethod, property))


class Flattener:
    """Turns outputs into ``{dotted.key: tensor or plain value}`` plus metadata."""

    def __init__(self, parameter_names: Mapping[int, str], roots: Tuple[str, ...] = (),
                 modules: Sequence[Any] = ()) -> None:
        self.values: Flat = {}
        self.meta: Dict[str, Dict[str, Any]] = {}
        self.batchnorms: Dict[str, Dict[str, Any]] = {}
        self.skipped: List[str] = []
        self.aliases: Dict[str, str] = {}  # a key -> the key its object was compared under
        self._names = parameter_names
        self._roots = roots
        self._seen: Dict[int, str] = {}
        self._keep: List[Any] = []  # objects seen, kept alive so their ids stay theirs
        self._states = _state_signatures(modules)

    def _first(self, key: str, value: Any) -> bool:
        """True the first time ``value`` (an object) is met; later keys become aliases."""
        seen = self._seen.get(id(value))
        if seen is not None:
            self.aliases[key] = seen
            return False
        self._seen[id(value)] = key
        self._keep.append(value)
        return True

    def plain(self, key: str, value: Any, source: str) -> None:
        self.values[key] = value
        self.meta[key] = {"source": source, "kind": type(value).__name__}

    def add(self, key: str, value: Any, source: str = "value", owner: str = "", name: str = "",
            depth: int = 0) -> None:
        import torch

        if isinstance(value, bool) or value is None or isinstance(value, (int, float, str)):
            self.plain(key, value, source)
        elif isinstance(value, torch.Tensor):
            if self._first(key, value):
                self._tensor(key, value, source, owner, name)
                if value.is_leaf and value.requires_grad and source == "value":
                    grad = value.grad
                    self._grad(f"{key}.grad", grad, owner or key, name)
        elif isinstance(value, torch.nn.Module):
            if self._first(key, value):
                self._module(key, value)
        elif isinstance(value, torch.optim.Optimizer):
            if self._first(key, value):
                self._optimizer(key, value)
        elif isinstance(value, (torch.device, torch.dtype)):
            self.plain(key, str(value), "config")
        elif _is_numpy_scalar(value):
            self.plain(key, value.item(), source)
        elif _is_numpy_array(value):
            if self._first(key, value):
                self._tensor(key, torch.as_tensor(value), source, owner, name)
        elif isinstance(value, Mapping):
            if depth >= CONTAINER_DEPTH or not self._first(key, value):
                return
            module = self._module_whose_state_is(value)
            if module is not None:
                self._state_dict(key, value, module)
                return
            for index, (inner, item) in enumerate(value.items()):
                if index >= CONTAINER_ITEMS:
                    self.skipped.append(f"{key} (items after the first {CONTAINER_ITEMS})")
                    break
                self.add(f"{key}.{inner}", item, source, owner, name, depth + 1)
        elif isinstance(value, (list, tuple)):
            if depth >= CONTAINER_DEPTH or not self._first(key, value):
                return
            for index, item in enumerate(value):
                if index >= CONTAINER_ITEMS:
                    self.skipped.append(f"{key} (items after the first {CONTAINER_ITEMS})")
                    break
                self.add(f"{key}[{index}]", item, source, owner, name, depth + 1)
        elif _ignored(value):
            return
        else:
            self._object(key, value, depth)

    def _object(self, key: str, value: Any, depth: int) -> None:
        """Schedulers and scalers through their state; the script's own objects, namespaces
        and dataclasses through their attributes; anything else is listed as not compared."""
        import argparse

        state = _state_of(value)
        if state is not None:
            if self._first(key, value):
                for inner, item in state.items():
                    self.add(f"{key}.{inner}", item, "config", depth=depth + 1)
            return
        config = isinstance(value, (argparse.Namespace, types.SimpleNamespace)) or (
            dataclasses.is_dataclass(value) and not isinstance(value, type))
        if not (config or _user_class(type(value), self._roots)):
            if not _quiet(value):
                self.skipped.append(f"{key} ({type(value).__name__})")
            return
        if depth >= OBJECT_DEPTH + CONTAINER_DEPTH or not self._first(key, value):
            return
        attributes = getattr(value, "__dict__", None)
        items: List[Tuple[str, Any]] = list(attributes.items()) if isinstance(attributes, dict) else []
        for slot in getattr(type(value), "__slots__", ()):
            if isinstance(slot, str) and hasattr(value, slot):
                items.append((slot, getattr(value, slot)))
        for inner, item in items:
            if inner.startswith("__"):
                continue
            self.add(f"{key}.{inner}", item, "config" if config else "value", depth=depth + 1)

    def _tensor(self, key: str, tensor: Any, source: str, owner: str, name: str) -> None:
        import torch

        self.meta[key] = {
            "shape": list(tensor.shape),
            "dtype": str(tensor.dtype),
            "device": tensor.device.type,
            "layout": str(tensor.layout),
            "requires_grad": bool(tensor.requires_grad),
            "is_leaf": bool(tensor.is_leaf),
            "grad_fn": type(tensor.grad_fn).__name__ if tensor.grad_fn is not None else None,
            "source": source,
            "owner": owner,
            "name": name,
        }
        if tensor.device.type == "meta":
            self.skipped.append(f"{key} (meta tensor, no values)")
            return
        value = tensor.detach()
        if value.layout != torch.strided:
            value = value.to_dense()
        if value.is_quantized:
            value = value.dequantize()
        self.values[key] = value.to("cpu", copy=True)

    def _grad(self, key: str, grad: Any, owner: str, name: str) -> None:
        """A gradient, or None when there is none (a parameter whose gradient was set to None)."""
        import torch

        if isinstance(grad, torch.Tensor):
            self._tensor(key, grad, "grad", owner, name)
        else:
            self.values[key] = None
            self.meta[key] = {"source": "grad", "kind": "None", "owner": owner, "name": name}

    def _module(self, key: str, module: Any) -> None:
        import torch

        for tensor in list(module.parameters()) + list(module.buffers()):
            self._first(key, tensor)  # compared here, not again under another name
        for name, tensor in module.state_dict().items():
            if isinstance(tensor, torch.Tensor):
                self._tensor(f"{key}.{name}", tensor, "module", key, name)
        for name, parameter in module.named_parameters():
            self._grad(f"{key}.{name}.grad", parameter.grad, key, name)
        for name, sub in module.named_modules():
            prefix = f"{key}.{name}" if name else key
            for attribute, setting in vars(sub).items():
                if attribute.startswith("_") or not _plain_setting(setting):
                    continue
                self.plain(f"{prefix}.{attribute}", _setting(setting), "config")
        self._batchnorms(key, module)

    def _batchnorms(self, key: str, module: Any) -> None:
        """What a rule needs to know of each batch norm with running statistics in ``module``,
        whose state is flattened under ``key`` (the module itself, or a copy of its state)."""
        import torch

        for name, sub in module.named_modules():
            prefix = f"{key}.{name}" if name else key
            if isinstance(sub, torch.nn.modules.batchnorm._BatchNorm) and sub.running_mean is not None:
                self.batchnorms[prefix + ".running_mean"] = {
                    "momentum": sub.momentum,
                    "eps": float(sub.eps),
                    "weight": prefix + ".weight" if sub.affine else None,
                    "running_var": prefix + ".running_var",
                    "count": prefix + ".num_batches_tracked",
                }

    def _module_whose_state_is(self, mapping: Mapping[Any, Any]) -> Any:
        """The module in sight whose ``state_dict()`` has exactly ``mapping``'s names, shapes and
        dtypes (a checkpoint of it, a copy kept as the best state), or None."""
        if not self._states or not mapping:
            return None
        signature = _signature(mapping)
        return self._states.get(signature) if signature is not None else None

    def _state_dict(self, key: str, state: Mapping[str, Any], module: Any) -> None:
        """A module's state saved or copied apart from it: its tensors are module state (what a
        rule's comparison treats as weights and buffers), its batch norms those of ``module``."""
        for name, tensor in state.items():
            if self._first(f"{key}.{name}", tensor):
                self._tensor(f"{key}.{name}", tensor, "module", key, name)
        self._batchnorms(key, module)

    def _optimizer(self, key: str, optimizer: Any) -> None:
        for group_index, group in enumerate(optimizer.param_groups):
            for option, setting in group.items():
                if option != "params":
                    self.add(f"{key}.param_groups[{group_index}].{option}", setting, "config")
            for index, parameter in enumerate(group["params"]):
                name = self._names.get(id(parameter), f"group{group_index}.param{index}")
                for entry, value in optimizer.state.get(parameter, {}).items():
                    self.add(f"{key}.state[{name}].{entry}", value, "optimizer")


def _signature(state: Mapping[Any, Any]) -> Optional[Tuple[Tuple[str, Tuple[int, ...], str], ...]]:
    """``((name, shape, dtype), ...)`` of a mapping of names to tensors; None for anything else."""
    import torch

    items = []
    for name, tensor in state.items():
        if not isinstance(name, str) or not isinstance(tensor, torch.Tensor):
            return None
        items.append((name, tuple(tensor.shape), str(tensor.dtype)))
    return tuple(items)


def _state_signatures(modules: Sequence[Any]) -> Dict[Tuple[Tuple[str, Tuple[int, ...], str], ...], Any]:
    """The state-dict signature of each module in sight and of each of its submodules (a
    checkpoint may hold a part of a model), the first module of each signature."""
    found: Dict[Tuple[Tuple[str, Tuple[int, ...], str], ...], Any] = {}
    for module in [*modules, *(sub for module in modules for sub in list(module.modules())[1:])]:
        try:
            signature = _signature(module.state_dict())
        except Exception:  # noqa: BLE001 - a module of someone else's making
            continue
        if signature:
            found.setdefault(signature, module)
    return found


def _plain_setting(value: Any) -> bool:
    if isinstance(value, PLAIN):
        return True
    return isinstance(value, tuple) and len(value) <= 8 and all(isinstance(item, PLAIN) for item in value)


def _setting(value: Any) -> Any:
    return str(value) if isinstance(value, tuple) else value


def _is_numpy_scalar(value: Any) -> bool:
    return type(value).__module__ == "numpy" and hasattr(value, "item") and not getattr(value, "shape", ())


def _is_numpy_array(value: Any) -> bool:
    return type(value).__module__ == "numpy" and hasattr(value, "__array__") and hasattr(value, "shape")


def _state_of(value: Any) -> Optional[Dict[str, Any]]:
    """The state of a learning-rate scheduler or a gradient scaler (plain values)."""
    import torch

    schedulers = tuple(cls for cls in (getattr(torch.optim.lr_scheduler, "LRScheduler", None),
                                      getattr(torch.optim.lr_scheduler, "_LRScheduler", None),
                                      getattr(torch.optim.lr_scheduler, "ReduceLROnPlateau", None)) if cls)
    scalers = tuple(cls for cls in (getattr(getattr(torch, "amp", None), "GradScaler", None),) if cls)
    if isinstance(value, schedulers + scalers):
        try:
            state = value.state_dict()
        except Exception:  # noqa: BLE001 - a scheduler of someone else's making
            return None
        found = {str(k): v for k, v in state.items() if not callable(v) and k not in ("optimizer", "_get_lr_called_within_step")}
        if isinstance(value, scalers) and callable(getattr(value, "is_enabled", None)):
            found["enabled"] = bool(value.is_enabled())  # a disabled scaler's state_dict() is empty
        return found
    return None


def _quiet(value: Any) -> bool:
    """Objects no script computes a result in: files, locks, loaders, generators, iterators."""
    import io
    import threading

    import torch

    quiet: Tuple[type, ...] = (io.IOBase, type(threading.Lock()), torch.Generator, torch.utils.data.DataLoader,
                               types.GeneratorType)
    return isinstance(value, quiet) or type(value).__name__.endswith("Iterator")


def collect(namespace: Mapping[str, Any], captured: Mapping[str, Mapping[str, Any]]) -> Iterator[Tuple[str, Any]]:
    """(name, value) of what a script without ``torchlint_outputs()`` leaves: its globals
    (names not starting with ``_``), then the locals of its functions as they last returned,
    the last to return first (``main()`` before the helpers it called), so that an object
    is named after the outermost function that held it."""
    for name, value in namespace.items():
        if not name.startswith("_") and not _ignored(value):
            yield name, value
    for function, local in reversed(list(captured.items())):
        for name, value in local.items():
            if not name.startswith("_") and not _ignored(value):
                yield f"{function}.{name}", value


CHECKPOINT_SUFFIXES = (".pt", ".pth", ".ckpt", ".tar")
MAX_CHECKPOINTS, MAX_CHECKPOINT_BYTES = 16, 256 * 2**20


def _checkpoint_files(root: str) -> Iterator[Tuple[str, str]]:
    """(relative path, path) of each regular file with a checkpoint's suffix under ``root``."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(name for name in dirs if not name.startswith("."))
        for name in sorted(files):
            path = os.path.join(folder, name)
            if name.endswith(CHECKPOINT_SUFFIXES) and not os.path.islink(path):
                yield os.path.relpath(path, root), path


FileState = Tuple[int, int, int, int]


def _file_state(path: str) -> Optional[FileState]:
    """What a write to ``path`` changes: its inode (a replaced file), size, modification and change
    times (a file rewritten in place); None if it cannot be read."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def checkpoint_states(root: str) -> Dict[str, Optional[FileState]]:
    """The checkpoint files under ``root`` before a run, with their states (``written_checkpoints``
    compares against them)."""
    return {relative: _file_state(path) for relative, path in _checkpoint_files(root)}


def written_checkpoints(root: str, before: Mapping[str, Optional[FileState]]) -> Iterator[Tuple[str, Any]]:
    """(``file:<path>``, what it holds) for each checkpoint the run wrote in its copy of the
    script's folder (a file with a checkpoint's suffix that was not there before the run, or
    whose state changed since: ``before`` is ``checkpoint_states`` from the run's start), loaded
    with ``weights_only=True``: a checkpoint is an output of a training script like any other.
    A file the run only read is not one of its outputs, however recent its modification time."""
    import torch

    found: List[Tuple[str, str]] = []
    for relative, path in _checkpoint_files(root):
        state = _file_state(path)
        if state is None or (relative in before and before[relative] == state):
            continue
        if state[1] <= MAX_CHECKPOINT_BYTES:
            found.append((relative, path))
    for relative, path in found[:MAX_CHECKPOINTS]:
        try:
            loaded = torch.load(path, map_location="cpu", weights_only=True)
        except Exception:  # noqa: BLE001 - not a checkpoint torch can read safely: not compared
            continue
        yield f"file:{relative}", loaded


def parameter_names(items: List[Tuple[str, Any]]) -> Dict[int, str]:
    """``id(parameter) -> "model.layer.weight"`` over every module in sight."""
    return in_sight(items)[0]


def in_sight(items: List[Tuple[str, Any]]) -> Tuple[Dict[int, str], List[Any]]:
    """``id(parameter) -> "model.layer.weight"`` over every module in sight, and those modules."""
    import torch

    names: Dict[int, str] = {}
    modules: List[Any] = []
    seen: Set[int] = set()

    def visit(prefix: str, value: Any, depth: int) -> None:
        if id(value) in seen and not isinstance(value, PLAIN):
            return
        seen.add(id(value))
        if isinstance(value, torch.nn.Module):
            modules.append(value)
            for name, parameter in value.named_parameters():
                names.setdefault(id(parameter), f"{prefix}.{name}")
        elif depth < 4 and isinstance(value, Mapping):
            for inner, item in value.items():
                visit(f"{prefix}.{inner}", item, depth + 1)
        elif depth < 4 and isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                visit(f"{prefix}[{index}]", item, depth + 1)
        elif depth < OBJECT_DEPTH and hasattr(value, "__dict__") and not _ignored(value) \
                and not isinstance(value, torch.Tensor):
            attributes = getattr(value, "__dict__", None)
            if isinstance(attributes, dict) and type(value).__module__ not in ("torch", "builtins"):
                for inner, item in attributes.items():
                    visit(f"{prefix}.{inner}", item, depth + 1)

    for key, value in items:
        visit(key, value, 0)
    return names, modules


def flatten(items: List[Tuple[str, Any]], roots: Tuple[str, ...] = ()) -> Flattener:
    names, modules = in_sight(items)
    flat = Flattener(names, roots, modules)
    for key, value in items:
        flat.add(key, value)
    return flat


def difference(a: Any, b: Any) -> float:
    """0 when equal, the relative L2 error for floating tensors (relative error for
    floats), inf otherwise."""
    import torch

    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return math.inf
        if torch.equal(a, b):
            return 0.0
        if not (a.is_floating_point() or a.is_complex()):
            return math.inf
        a64 = torch.view_as_real(a).double() if a.is_complex() else a.double()
        b64 = torch.view_as_real(b).double() if b.is_complex() else b.double()
        if not torch.equal(torch.isnan(a64), torch.isnan(b64)):
            return math.inf
        a64, b64 = torch.nan_to_num(a64, nan=0.0), torch.nan_to_num(b64, nan=0.0)
        if not torch.equal(torch.isinf(a64), torch.isinf(b64)):
            return math.inf
        finite = torch.isfinite(a64)
        if not torch.equal(a64[~finite], b64[~finite]):
            return math.inf
        error = float(torch.linalg.vector_norm(a64[finite] - b64[finite]))
        scale = float(torch.linalg.vector_norm(a64[finite]))
        return error / scale if scale > 0 else error
    if isinstance(a, float) and isinstance(b, float) and not isinstance(a, bool):
        if a == b or (math.isnan(a) and math.isnan(b)):
            return 0.0
        if a == 0.0 or not (math.isfinite(a) and math.isfinite(b)):
            return math.inf
        return abs(a - b) / abs(a)
    return 0.0 if type(a) is type(b) and a == b else math.inf
