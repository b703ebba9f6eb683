"""The code `torchlint verify` runs in its child processes.

This file is run by path, never imported by ``check`` or ``fix``, and needs
only the standard library and torch::

    python harness.py --serve       fork server: imports torch once, then forks
                                    one process per spec path read from stdin
    python harness.py --run SPEC    one run in this process

A *compare* run executes one program (an original or a fixed source) the way
``python script.py`` would, with seeds, determinism flags and a thread count
set, and saves what it left behind with ``torch.save``.  A *time* run loads
several variants into one process and times them with ``timing.py``.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import gc
import importlib.util
import json
import linecache
import math
import os
import platform
import random
import signal
import sys
import time
import timeit
import traceback
import types
import zlib
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple

_HERE = Path(__file__).resolve().parent
# Run as a file, Python puts this directory first on sys.path, where its
# modules could shadow a user's; the program's own directory goes there instead.
if sys.path and sys.path[0] and Path(sys.path[0]).resolve() == _HERE:
    del sys.path[0]

Spec = Dict[str, Any]
Flat = Dict[str, Any]

EXIT_OK = 0
EXIT_INTERNAL = 70  # the harness itself failed; the parent shows stderr


# -- running one program ------------------------------------------------------


class Program:
    """One source file, compiled once, executed as ``__main__`` on demand."""

    def __init__(self, entry: Mapping[str, str]) -> None:
        self.display = entry["display"]
        self.file = entry["file"]
        with open(entry["source"], encoding="utf-8") as handle:
            self.source = handle.read()
        # dont_inherit: this file's `from __future__` imports must not leak in.
        self.code = compile(self.source, self.display, "exec", dont_inherit=True)
        linecache.cache[self.display] = (
            len(self.source), None, self.source.splitlines(True), self.display
        )

    def execute(self, seed: int) -> types.ModuleType:
        """Run the program top to bottom in a fresh module; return the module."""
        module = types.ModuleType("__main__")
        module.__file__ = self.file
        module.__dict__["__builtins__"] = builtins
        seed_everything(seed)
        with as_main(module):
            try:
                exec(self.code, module.__dict__)
            except SystemExit as stop:
                if stop.code not in (None, 0):
                    raise
        return module


@contextlib.contextmanager
def as_main(module: types.ModuleType) -> Iterator[None]:
    """Make ``module`` the ``__main__`` module (pickling and `sys.argv` rely on it)."""
    saved_main, saved_argv = sys.modules.get("__main__"), sys.argv
    sys.modules["__main__"] = module
    sys.argv = [str(getattr(module, "__file__", ""))]
    try:
        yield
    finally:
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
        sys.argv = saved_argv


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy (when the program can use it) and torch (all devices)."""
    import torch

    random.seed(seed)
    torch.manual_seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is None:
        with contextlib.suppress(ImportError):
            numpy = importlib.import_module("numpy")
    if numpy is not None:
        numpy.random.seed(seed % 2**32)


# -- random streams, math mode, steps and printed text of a compare run ---------


class Tee:
    """Writes through to the real stream and keeps a copy of what the program printed."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.parts: List[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return int(self.stream.write(text))

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)

    def text(self) -> str:
        return "".join(self.parts)


def _module_classes() -> List[type]:
    """Every ``nn.Module`` subclass defined so far that has its own ``reset_parameters``."""
    import torch

    found: List[type] = []
    pending = [torch.nn.Module]
    seen = set()
    while pending:
        cls = pending.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                pending.append(sub)
                if "reset_parameters" in sub.__dict__:
                    found.append(sub)
    return found


class Observed:
    """What a compare run did besides its outputs, and the random streams it was given.

    Parameter initialisation (``reset_parameters`` of torch's modules) draws from a
    generator seeded by the run's seed, the module's class and how many modules of
    that class came before, and leaves the global stream alone; a ``DataLoader``
    without a generator gets one seeded the same way.  A fix that changes how many
    numbers one module's init draws (a removed bias) then changes no other draw.
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.counts: Dict[str, int] = {}
        self.steps = 0
        self.autocast: List[str] = []
        self.printed = ""
        self._undo: List[Callable[[], None]] = []
        self._inside = False

    def _stream_seed(self, kind: str) -> int:
        index = self.counts.get(kind, 0)
        self.counts[kind] = index + 1
        return zlib.crc32(f"{self.seed}:{kind}:{index}".encode())

    def __enter__(self) -> "Observed":
        import torch
        import torch.optim.optimizer as optimizer_module
        from torch.utils.data import DataLoader

        observed = self
        for cls in _module_classes():
            original_reset = cls.__dict__["reset_parameters"]

            def seeded_reset(module: Any, *args: Any, _original: Any = original_reset, **kwargs: Any) -> Any:
                if observed._inside:
                    return _original(module, *args, **kwargs)
                kind = f"{type(module).__module__}.{type(module).__qualname__}"
                initialized: Callable[[], bool] = getattr(torch.cuda, "is_initialized")
                devices = list(range(torch.cuda.device_count())) if initialized() else []
                observed._inside = True
                try:
                    with torch.random.fork_rng(devices=devices):
                        torch.manual_seed(observed._stream_seed(kind))
                        return _original(module, *args, **kwargs)
                finally:
                    observed._inside = False

            setattr(cls, "reset_parameters", functools.wraps(original_reset)(seeded_reset))
            self._undo.append(functools.partial(setattr, cls, "reset_parameters", original_reset))

        loader_init: Any = DataLoader.__init__

        @functools.wraps(loader_init)
        def seeded_loader(loader: Any, *args: Any, **kwargs: Any) -> None:
            if kwargs.get("generator") is None and len(args) <= 12:
                kwargs["generator"] = torch.Generator().manual_seed(observed._stream_seed("DataLoader"))
            loader_init(loader, *args, **kwargs)

        setattr(DataLoader, "__init__", seeded_loader)
        self._undo.append(functools.partial(setattr, DataLoader, "__init__", loader_init))

        def count_step(*_: Any) -> None:
            observed.steps += 1

        handle = optimizer_module.register_optimizer_step_post_hook(count_step)
        self._undo.append(handle.remove)

        autocast_enter: Any = torch.autocast.__enter__

        @functools.wraps(autocast_enter)
        def recording_enter(context: Any) -> Any:
            if getattr(context, "_enabled", False):
                name = str(getattr(context, "fast_dtype", ""))
                if name and name not in observed.autocast:
                    observed.autocast.append(name)
            return autocast_enter(context)

        setattr(torch.autocast, "__enter__", recording_enter)
        self._undo.append(functools.partial(setattr, torch.autocast, "__enter__", autocast_enter))
        tee = Tee(sys.stdout)
        saved_stdout = sys.stdout
        sys.stdout = tee

        def restore_stdout() -> None:
            self.printed = tee.text()
            sys.stdout = saved_stdout

        self._undo.append(restore_stdout)
        return self

    def __exit__(self, *exc: object) -> None:
        while self._undo:
            self._undo.pop()()

    def math(self) -> Dict[str, Any]:
        """The floating-point modes the program ran with (read after it ran: its own settings win)."""
        import torch

        with warnings_suppressed():
            matmul = torch.get_float32_matmul_precision()
            cuda_matmul_tf32 = bool(torch.backends.cuda.matmul.allow_tf32)
            cudnn_tf32 = bool(torch.backends.cudnn.allow_tf32)
        return {
            "float32_matmul_precision": matmul,
            "cuda_matmul_tf32": cuda_matmul_tf32,
            "cudnn_tf32": cudnn_tf32,
            "autocast": list(self.autocast),
            "steps": self.steps,
        }


@contextlib.contextmanager
def warnings_suppressed() -> Iterator[None]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def observed_execute(program: "Program", seed: int) -> Tuple[types.ModuleType, Observed]:
    """Run the program with its random streams controlled and its side channels recorded."""
    with Observed(seed) as observed:
        module = program.execute(seed)
    return module, observed


def outputs_of(module: types.ModuleType) -> Tuple[Dict[str, Any], str]:
    """What the program exposes for comparison, and where it came from."""

    namespace = module.__dict__
    hook = namespace.get("torchlint_outputs")
    if callable(hook):
        with as_main(module):
            produced = hook()
        if not isinstance(produced, dict):
            raise TypeError(f"torchlint_outputs() must return a dict, not {type(produced).__name__}")
        return {str(key): value for key, value in produced.items()}, "torchlint_outputs()"
    return {
        name: value for name, value in namespace.items() if not name.startswith("_") and _comparable(value)
    }, "globals"


def _comparable(value: Any, depth: int = 0) -> bool:
    """Is ``value`` something the script computed that can be compared: a tensor, module,
    optimizer, Python number or string, NumPy array, or a container of only these?"""
    import torch

    if isinstance(value, (torch.Tensor, torch.nn.Module, torch.optim.Optimizer, bool, int, float, str)):
        return True
    if type(value).__module__ == "numpy" and hasattr(value, "__array__"):
        return True
    if depth < 4 and isinstance(value, (list, tuple)):
        return all(_comparable(item, depth + 1) for item in value)
    if depth < 4 and isinstance(value, dict):
        return all(isinstance(key, (str, int)) and _comparable(item, depth + 1) for key, item in value.items())
    return False


# -- flattening outputs into named tensors and plain values -------------------


class Flattener:
    """Turns outputs into ``{dotted.key: tensor or plain value}`` plus metadata."""

    def __init__(self, parameter_names: Mapping[int, str]) -> None:
        self.values: Flat = {}
        self.meta: Dict[str, Dict[str, Any]] = {}
        self.batchnorms: Dict[str, Dict[str, Any]] = {}
        self.skipped: List[str] = []
        self._names = parameter_names

    def add(self, key: str, value: Any, source: str = "value", owner: str = "", name: str = "") -> None:
        import torch

        if isinstance(value, torch.Tensor):
            self._tensor(key, value, source, owner, name)
        elif isinstance(value, torch.nn.Module):
            self._module(key, value)
        elif isinstance(value, torch.optim.Optimizer):
            self._optimizer(key, value)
        elif isinstance(value, Mapping):
            for inner, item in value.items():
                self.add(f"{key}.{inner}", item, source, owner, name)
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                self.add(f"{key}[{index}]", item, source, owner, name)
        elif value is None or isinstance(value, (bool, int, float, str)):
            self.values[key] = value
        elif type(value).__module__ == "numpy" and hasattr(value, "item") and not hasattr(value, "shape"):
            self.values[key] = value.item()
        elif type(value).__module__ == "numpy" and hasattr(value, "__array__"):
            self._tensor(key, torch.as_tensor(value), source, owner, name)
        else:
            self.skipped.append(f"{key} ({type(value).__name__})")

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

    def _module(self, key: str, module: Any) -> None:
        import torch

        for name, tensor in module.state_dict().items():
            if isinstance(tensor, torch.Tensor):
                self._tensor(f"{key}.{name}", tensor, "module", key, name)
        for name, sub in module.named_modules():
            if isinstance(sub, torch.nn.modules.batchnorm._BatchNorm) and sub.running_mean is not None:
                prefix = f"{key}.{name}." if name else f"{key}."
                self.batchnorms[prefix + "running_mean"] = {
                    "momentum": sub.momentum,
                    "eps": float(sub.eps),
                    "weight": prefix + "weight" if sub.affine else None,
                    "running_var": prefix + "running_var",
                    "count": prefix + "num_batches_tracked",
                }

    def _optimizer(self, key: str, optimizer: Any) -> None:
        for group_index, group in enumerate(optimizer.param_groups):
            for option, setting in group.items():
                if option != "params":
                    self.add(f"{key}.param_groups[{group_index}].{option}", setting, "optimizer")
            for index, parameter in enumerate(group["params"]):
                name = self._names.get(id(parameter), f"group{group_index}.param{index}")
                for entry, value in optimizer.state.get(parameter, {}).items():
                    self.add(f"{key}.state[{name}].{entry}", value, "optimizer")


def parameter_names(outputs: Mapping[str, Any], namespace: Mapping[str, Any]) -> Dict[int, str]:
    """``id(parameter) -> "model.layer.weight"`` over every module in sight."""
    import torch

    names: Dict[int, str] = {}
    modules: List[Tuple[str, Any]] = []

    def collect(prefix: str, value: Any, depth: int) -> None:
        if isinstance(value, torch.nn.Module):
            modules.append((prefix, value))
        elif depth < 4 and isinstance(value, Mapping):
            for inner, item in value.items():
                collect(f"{prefix}.{inner}", item, depth + 1)
        elif depth < 4 and isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                collect(f"{prefix}[{index}]", item, depth + 1)

    for key, value in outputs.items():
        collect(key, value, 0)
    for key, value in namespace.items():
        if not key.startswith("_") and isinstance(value, torch.nn.Module):
            modules.append((key, value))
    for prefix, module in modules:
        for name, parameter in module.named_parameters():
            names.setdefault(id(parameter), f"{prefix}.{name}")
    return names


def flatten(outputs: Mapping[str, Any], namespace: Mapping[str, Any]) -> Flattener:
    flat = Flattener(parameter_names(outputs, namespace))
    for key, value in outputs.items():
        flat.add(key, value)
    return flat


def difference(a: Any, b: Any) -> float:
    """0 when equal, the relative L2 error for floating tensors, inf otherwise."""
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
    if isinstance(a, float) and isinstance(b, float):
        if a == b or (math.isnan(a) and math.isnan(b)):
            return 0.0
        if a == 0.0 or not (math.isfinite(a) and math.isfinite(b)):
            return math.inf
        return abs(a - b) / abs(a)
    return 0.0 if type(a) is type(b) and a == b else math.inf


# -- what the program did besides its outputs ---------------------------------


class ProbeTools:
    """What the harness lends a rule's probe (see ``Probe`` in torchlint/verification.py)."""

    @staticmethod
    def seed_everything(seed: int) -> None:
        seed_everything(seed)

    @staticmethod
    def flatten(value: Any) -> Flat:
        """``{key: tensor or plain value}`` for any output-like value."""
        flat = Flattener({})
        flat.add("value", value)
        return flat.values

    @staticmethod
    def difference(a: Any, b: Any) -> float:
        return difference(a, b)


def load_probes(entries: List[Mapping[str, str]]) -> List[Tuple[str, Any]]:
    """(name, probe) for each probe file the spec names, loaded by path."""
    probes = []
    for index, entry in enumerate(entries):
        module = _load_file(f"_torchlint_verify_probe_{index}", Path(entry["path"]))
        probes.append((entry["name"], module.Probe(ProbeTools())))
    return probes


def environment(device: str) -> Dict[str, Any]:
    """The machine, as the report names it."""
    import torch

    name = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    cuda = device.startswith("cuda")
    if cuda:
        name = torch.cuda.get_device_name()
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return {
        "device": device,
        "device_name": name,
        "torch": str(torch.__version__),
        "cuda": torch.version.cuda if cuda else None,
        "threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "cpus": cpus,
        "platform": platform.platform(terse=True),
        "load": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "gpu": gpu_details() if cuda or cuda_in_use() else None,
    }


# -- the GPU: synchronisation, memory, flags, NVML ------------------------------------


def cuda_in_use() -> bool:
    """Whether this process has initialised CUDA (whatever ``--device`` said)."""
    torch = sys.modules.get("torch")
    return torch is not None and bool(torch.cuda.is_initialized())


def synchronize() -> None:
    """Wait for every queued kernel, if CUDA is in use, so a clock reading counts them."""
    if cuda_in_use():
        sys.modules["torch"].cuda.synchronize()


def device_clock() -> float:
    """``timeit.default_timer`` after synchronising the device (when CUDA is in use)."""
    synchronize()
    return timeit.default_timer()


def device_memory() -> List[Dict[str, Any]]:
    """Peak memory of every CUDA device this process used: allocated and reserved bytes."""
    if not cuda_in_use():
        return []
    import torch

    synchronize()
    return [
        {
            "index": index,
            "name": torch.cuda.get_device_name(index),
            "peak_allocated": int(torch.cuda.max_memory_allocated(index)),
            "peak_reserved": int(torch.cuda.max_memory_reserved(index)),
        }
        for index in range(torch.cuda.device_count())
    ]


def reset_device_memory() -> None:
    if cuda_in_use():
        import torch

        for index in range(torch.cuda.device_count()):
            torch.cuda.reset_peak_memory_stats(index)


@contextlib.contextmanager
def autocast_recorder(seen: List[Dict[str, Any]]) -> Iterator[None]:
    """Record every autocast region the program enters (device type, dtype, enabled)."""
    import torch

    autocast = torch.amp.autocast_mode.autocast
    original_enter: Callable[[Any], Any] = autocast.__enter__

    def enter(self: Any) -> Any:
        entry = {"device": str(getattr(self, "device", "?")), "dtype": str(getattr(self, "fast_dtype", "?")),
                 "enabled": bool(getattr(self, "_enabled", True))}
        if entry not in seen:
            seen.append(entry)
        return original_enter(self)

    autocast.__enter__ = enter  # type: ignore[method-assign]
    try:
        yield
    finally:
        autocast.__enter__ = original_enter  # type: ignore[method-assign]


def run_flags(autocast: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The determinism and math-mode settings in effect when the program finished.

    Read after the run, so a script's own ``cudnn.benchmark = True`` (or
    TF32 setting) is what is recorded, not what the harness set before it.
    """
    import torch

    cuda_matmul = getattr(torch.backends.cuda, "matmul", None)
    return {
        "deterministic_algorithms": bool(torch.are_deterministic_algorithms_enabled()),
        "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
        "cudnn_deterministic": bool(torch.backends.cudnn.deterministic),
        "tf32_matmul": bool(getattr(cuda_matmul, "allow_tf32", False)),
        "tf32_cudnn": bool(torch.backends.cudnn.allow_tf32),
        "float32_matmul_precision": str(torch.get_float32_matmul_precision()),
        "autocast": list(autocast),
        "cublas_workspace_config": os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
        "cuda_initialized": cuda_in_use(),
    }


def _nvml() -> Any:
    """The NVML bindings (``pip install 'torchlint[gpu]'``), initialised, or None."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no driver: no NVML figures, nothing else changes
        return None
    return pynvml


def _nvml_handle(nvml: Any) -> Any:
    return nvml.nvmlDeviceGetHandleByIndex(int(os.environ.get("TORCHLINT_VERIFY_NVML_INDEX", "0")))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def gpu_details() -> Optional[Dict[str, Any]]:
    """GPU name, driver, clocks and other processes on the GPU (NVML), or None without NVML."""
    nvml = _nvml()
    if nvml is None:
        return None
    try:
        handle = _nvml_handle(nvml)
        others = [
            {"pid": int(process.pid), "used_memory": process.usedGpuMemory}
            for process in nvml.nvmlDeviceGetComputeRunningProcesses(handle)
            if int(process.pid) != os.getpid()
        ]
        return {
            "name": _text(nvml.nvmlDeviceGetName(handle)),
            "driver": _text(nvml.nvmlSystemGetDriverVersion()),
            "sm_clock_mhz": int(nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM)),
            "max_sm_clock_mhz": int(nvml.nvmlDeviceGetMaxClockInfo(handle, nvml.NVML_CLOCK_SM)),
            "memory_total": int(nvml.nvmlDeviceGetMemoryInfo(handle).total),
            "other_processes": others,
        }
    except Exception as error:  # noqa: BLE001 - NVML's own errors; the run goes on
        return {"error": f"NVML: {error}"}


class GpuSampler:
    """Samples GPU utilisation and memory with NVML in a thread while the timed blocks run."""

    INTERVAL = 0.05

    def __init__(self, enabled: bool) -> None:
        import threading

        # NVML sees every GPU whatever CUDA_VISIBLE_DEVICES says: sample only a run that uses CUDA.
        self._nvml: Any = _nvml() if enabled else None
        self._samples: List[Tuple[int, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True) if self._nvml is not None else None

    def _loop(self) -> None:
        nvml = self._nvml
        handle = _nvml_handle(nvml)
        while not self._stop.is_set():
            utilisation = nvml.nvmlDeviceGetUtilizationRates(handle)
            memory = nvml.nvmlDeviceGetMemoryInfo(handle)
            self._samples.append((int(utilisation.gpu), int(memory.used)))
            self._stop.wait(self.INTERVAL)

    def __enter__(self) -> "GpuSampler":
        if self._thread is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()

    def summary(self) -> Optional[Dict[str, Any]]:
        if not self._samples:
            return None
        utilisation = [sample[0] for sample in self._samples]
        used = [sample[1] for sample in self._samples]
        return {
            "samples": len(self._samples),
            "utilization_mean_pct": sum(utilisation) / len(utilisation),
            "utilization_max_pct": max(utilisation),
            "memory_used_max": max(used),
        }


def _peak_rss() -> Optional[int]:
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


def _failure(error: BaseException) -> Tuple[str, str]:
    """("raised" or "oom", the traceback without the harness's own frames)."""
    import torch

    trace = error.__traceback__
    while trace is not None and Path(trace.tb_frame.f_code.co_filename).resolve() == Path(__file__).resolve():
        trace = trace.tb_next
    text = "".join(traceback.format_exception(type(error), error, trace))
    out_of_memory = getattr(torch.cuda, "OutOfMemoryError", ())
    if (out_of_memory and isinstance(error, out_of_memory)) or "out of memory" in str(error).lower():
        return "oom", text
    return "raised", text


# -- the two modes --------------------------------------------------------------


def compare_run(spec: Spec) -> Dict[str, Any]:
    """Run the program once and collect (repeats are separate runs: see session.py)."""
    import torch

    seed = int(spec["seed"])
    result: Dict[str, Any] = {"status": "ok", "error": "", "env": environment(spec["device"])}
    started = time.perf_counter()
    baseline = _peak_rss()
    autocast: List[Dict[str, Any]] = []
    try:
        program = Program(spec["program"])
        probes = load_probes(spec.get("probes", []))
        with contextlib.ExitStack() as stack:
            stack.enter_context(autocast_recorder(autocast))
            for _, probe in probes:
                stack.enter_context(probe)
            module, observed = observed_execute(program, seed)
            outputs, origin = outputs_of(module)
            first = flatten(outputs, module.__dict__)
        result["math"] = observed.math()
        result["printed"] = observed.printed
        result["env"]["flags"] = run_flags(autocast)
        result["memory"] = _memory_record(baseline)
        result["seconds"] = time.perf_counter() - started
        result["rng"] = {"cpu": torch.get_rng_state()}
        if cuda_in_use():
            result["rng"]["cuda"] = list(torch.cuda.get_rng_state_all())
        result.update(
            origin=origin,
            values=first.values,
            meta=first.meta,
            batchnorms=first.batchnorms,
            skipped=first.skipped,
            probes={name: probe.result() for name, probe in probes},
        )
        del module, outputs
        gc.collect()
    except BaseException as error:  # the program's failure is a result, not a crash
        if isinstance(error, KeyboardInterrupt):
            raise
        result["status"], result["error"] = _failure(error)
        result.setdefault("seconds", time.perf_counter() - started)
    return result


def _memory_record(baseline: Optional[int]) -> Dict[str, Any]:
    """Peak memory: per CUDA device when CUDA was used (kind "cuda"), else the RSS growth."""
    devices = device_memory()
    record: Dict[str, Any] = {"rss_peak": _peak_rss(), "rss_baseline": baseline, "devices": devices}
    if devices:
        current = sys.modules["torch"].cuda.current_device()
        mine = next((d for d in devices if d["index"] == current), devices[0])
        record.update(kind="cuda", peak=mine["peak_allocated"], baseline=0, reserved=mine["peak_reserved"])
    else:
        record.update(kind="rss", peak=record["rss_peak"], baseline=baseline)
    return record


def time_run(spec: Spec) -> Dict[str, Any]:
    """Load one program, then time its step (see timing.py): one copy per process."""
    timing = _timing_module()
    seed = int(spec["seed"])
    entry = spec["variant"]
    try:
        program = Program(entry)
        module = program.execute(seed)
        hook = module.__dict__.get("torchlint_step")
        if callable(hook):
            step = _as_main_call(module, hook, spec.get("rule", ""))
        else:
            step = functools.partial(program.execute, seed)
        reset_device_memory()
        with GpuSampler(cuda_in_use()) as sampler:
            measured: Dict[str, Any] = timing.measure(
                step, clock=device_clock, number=spec.get("number"), **spec["timing"]
            )
        measured.update(
            status="ok", error="", whole_script=not callable(hook), label=entry["label"],
            gpu_usage=sampler.summary(), memory=device_memory(), env=environment(spec["device"]),
        )
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt):
            raise
        status, text = _failure(error)
        return {"status": status, "error": text}
    return measured


def _as_main_call(module: types.ModuleType, step: Callable[..., object], rule: str) -> Callable[[], object]:
    """``torchlint_step()``, or ``torchlint_step(rule)`` when it takes the rule being verified."""
    import inspect

    try:
        takes_rule = bool(inspect.signature(step).parameters)
    except (TypeError, ValueError):
        takes_rule = False
    arguments = (rule,) if takes_rule else ()

    def call() -> object:
        sys.modules["__main__"] = module
        return step(*arguments)

    return call


def _timing_module() -> Any:
    """``timing.py``, loaded by path under a private name."""
    return _load_file("_torchlint_verify_timing", _HERE / "timing.py")


def _load_file(name: str, path: Path) -> Any:
    """The module in ``path``, loaded once under ``name`` (torchlint itself need not be importable)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


# -- process plumbing -------------------------------------------------------------


def prepare(spec: Spec) -> None:
    """Directory, import path, environment, threads and determinism for a run.

    Comparison runs get the determinism settings (``CUBLAS_WORKSPACE_CONFIG``
    among them, set before CUDA starts); timing runs get none of them, so
    they time what the program does on its own.
    """
    import torch

    os.chdir(spec["cwd"])
    sys.path.insert(0, spec["path0"])
    os.environ.update(spec["env"])
    shim = os.environ.get("TORCHLINT_VERIFY_TEST_SHIM")
    if shim:  # tests only: a fake device layer (fake torch.cuda, fake pynvml)
        _load_file("_torchlint_verify_test_shim", Path(shim))
    torch.set_num_threads(int(spec["threads"]))
    if spec["mode"] == "compare":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True


def run_spec(spec_path: str, redirect: bool) -> int:
    """Do one run described by the JSON spec at ``spec_path``."""
    with open(spec_path, encoding="utf-8") as handle:
        spec: Spec = json.load(handle)
    if redirect:
        _redirect(spec)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    prepare(spec)
    if spec["mode"] == "compare":
        import torch

        torch.save(compare_run(spec), spec["out"])
    else:
        with open(spec["out"], "w", encoding="utf-8") as handle:
            json.dump(time_run(spec), handle)
    return EXIT_OK


def _redirect(spec: Spec) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    for fd, path in ((1, spec["stdout"]), (2, spec["stderr"])):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - lives as long as the run


def serve() -> int:
    """Import torch once, then fork a fresh process for each spec path on stdin.

    Protocol (one JSON object per line on stdout): ``{"ready": true}`` once;
    then for each request ``{"pid": N}`` as soon as the run starts (it leads
    its own process group, so the parent can kill it and its workers) and
    ``{"pid": N, "exit": code}`` when it ends (a negative code is a signal).
    No torch operation may run here before forking: thread pools do not
    survive ``fork``.
    """
    import torch  # noqa: F401 - shared by every forked run
    import torch.utils.benchmark  # noqa: F401

    with contextlib.suppress(ImportError):  # torch < 2.0 has no inductor
        importlib.import_module("torch._inductor.config")  # use_deterministic_algorithms imports it: seconds

    _timing_module()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when runs stop
    channel = sys.stdout
    channel.write(json.dumps({"ready": True}) + "\n")
    channel.flush()
    for line in sys.stdin:
        spec_path = line.strip()
        if not spec_path:
            continue
        pid = os.fork()
        if pid == 0:  # the run
            code = EXIT_INTERNAL
            try:
                os.setsid()
                code = run_spec(spec_path, redirect=True)
            except BaseException:  # noqa: BLE001 - reported through stderr and the exit code
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        channel.write(json.dumps({"pid": pid}) + "\n")
        channel.flush()
        _, status = os.waitpid(pid, 0)
        channel.write(json.dumps({"pid": pid, "exit": os.waitstatus_to_exitcode(status)}) + "\n")
        channel.flush()
    return EXIT_OK


def main(argv: List[str]) -> int:
    if argv[1:2] == ["--serve"]:
        return serve()
    if argv[1:2] == ["--run"] and len(argv) == 3:
        try:
            return run_spec(argv[2], redirect=False)
        except BaseException:  # noqa: BLE001
            traceback.print_exc()
            return EXIT_INTERNAL
    print("usage: harness.py --serve | --run SPEC", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
