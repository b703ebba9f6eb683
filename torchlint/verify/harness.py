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
    """What a compare run did besides its outputs, and, when asked, aligned random streams.

    By default the program runs as its user runs it: one global random stream.
    With ``aligned`` (used only to explain a difference between two runs),
    parameter initialisation (``reset_parameters`` of torch's modules) draws
    from a generator seeded by the run's seed, the seed the program itself last
    gave ``torch.manual_seed``, the module's class and how many modules of that
    class came before, and leaves the global stream alone; a ``DataLoader``
    without a generator gets one seeded the same way.  A fix that changes how
    many numbers one module's init draws (a removed bias) then changes no other
    draw, while a changed seed still changes every one.
    """

    def __init__(self, seed: int, aligned: bool = False) -> None:
        self.seed = seed
        self.aligned = aligned
        self.user_seed: Optional[int] = None  # what the program last gave torch.manual_seed
        self.counts: Dict[str, int] = {}
        self.steps = 0
        self.autocast: List[str] = []
        self.printed = ""
        self._undo: List[Callable[[], None]] = []
        self._inside = False

    def _stream_seed(self, kind: str) -> int:
        index = self.counts.get(kind, 0)
        self.counts[kind] = index + 1
        return zlib.crc32(f"{self.seed}:{self.user_seed}:{kind}:{index}".encode())

    def _patch(self, owner: Any, name: str, replacement: Any) -> None:
        original = getattr(owner, name)
        setattr(owner, name, replacement)
        self._undo.append(functools.partial(setattr, owner, name, original))

    def __enter__(self) -> "Observed":
        import torch
        import torch.optim.optimizer as optimizer_module

        if self.aligned:
            self._align()
        observed = self
        manual_seed: Any = torch.manual_seed

        @functools.wraps(manual_seed)
        def recording_seed(seed: Any) -> Any:
            with contextlib.suppress(TypeError, ValueError):
                observed.user_seed = int(seed)
            return manual_seed(seed)

        for owner in (torch, torch.random):
            if getattr(owner, "manual_seed", None) is manual_seed:
                self._patch(owner, "manual_seed", recording_seed)

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

        self._patch(torch.autocast, "__enter__", recording_enter)
        tee = Tee(sys.stdout)
        saved_stdout = sys.stdout
        sys.stdout = tee

        def restore_stdout() -> None:
            self.printed = tee.text()
            sys.stdout = saved_stdout

        self._undo.append(restore_stdout)
        return self

    def _align(self) -> None:
        import torch
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

            self._patch(cls, "reset_parameters", functools.wraps(original_reset)(seeded_reset))

        loader_init: Any = DataLoader.__init__

        @functools.wraps(loader_init)
        def seeded_loader(loader: Any, *args: Any, **kwargs: Any) -> None:
            if kwargs.get("generator") is None and len(args) <= 12:
                kwargs["generator"] = torch.Generator().manual_seed(observed._stream_seed("DataLoader"))
            loader_init(loader, *args, **kwargs)

        self._patch(DataLoader, "__init__", seeded_loader)

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


def _map_tensors(function: Callable[[Any], Any], value: Any) -> Any:
    """``value`` with ``function`` applied to every tensor in its lists, tuples and dicts."""
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_map_tensors(function, item) for item in value)
    if isinstance(value, dict):
        return {key: _map_tensors(function, item) for key, item in value.items()}
    return function(value)


def float64_reference() -> Any:
    """A torch function mode that runs the program in float64 with the float32 program's values.

    Every float32 tensor an operation takes or returns becomes float64, so the
    arithmetic is float64 throughout.  Random numbers are still drawn as float32
    (a fill of a float64 tensor draws into a float32 one and copies it; ``*_like``
    draws and dropout masks likewise), so the generator moves as in the float32
    run and the inputs are the same numbers: what comes out is the original's
    computation with float64 rounding, the reference an accuracy contract needs.
    """
    import torch
    from torch.overrides import TorchFunctionMode

    functional = torch.nn.functional
    fills = {torch.Tensor.uniform_, torch.Tensor.normal_, torch.Tensor.bernoulli_, torch.Tensor.random_,
             torch.Tensor.exponential_, torch.Tensor.cauchy_, torch.Tensor.log_normal_, torch.Tensor.geometric_}
    likes = {torch.rand_like, torch.randn_like, torch.randint_like, torch.bernoulli}
    dropouts = {getattr(functional, name) for name in ("dropout", "dropout1d", "dropout2d", "dropout3d",
                                                       "alpha_dropout", "feature_alpha_dropout")
                if hasattr(functional, name)}

    def up(value: Any) -> Any:
        if isinstance(value, torch.Tensor) and value.dtype == torch.float32:
            with torch._C.DisableTorchFunction():
                widened = value.double()
                if value.requires_grad and value.is_leaf:
                    widened = widened.detach().requires_grad_()
            return widened
        return value

    def fills_in_place(func: Any) -> bool:
        return func in fills or (getattr(func, "__module__", "") == "torch.nn.init"
                                 and str(getattr(func, "__name__", "")).endswith("_"))

    class Float64(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            first = args[0] if args else kwargs.get("tensor", kwargs.get("input"))
            if isinstance(first, torch.Tensor) and first.dtype == torch.float64:
                if fills_in_place(func):
                    scratch = torch.empty(first.shape, dtype=torch.float32, device=first.device)
                    if args:
                        func(scratch, *args[1:], **kwargs)
                    else:
                        func(**{**kwargs, "tensor": scratch})
                    with torch.no_grad():
                        first.copy_(scratch)
                    return first
                if func in likes and "dtype" not in kwargs:
                    return up(func(first.float(), *args[1:], **kwargs))
                if func in dropouts:
                    kept = func(torch.ones(first.shape, dtype=torch.float32, device=first.device), *args[1:],
                                **kwargs)
                    return first * kept.double()
            return _map_tensors(up, func(*_map_tensors(up, tuple(args)), **_map_tensors(up, dict(kwargs))))

    return Float64()


def observed_execute(program: "Program", seed: int, aligned: bool = False) -> Tuple[types.ModuleType, Observed, Any]:
    """Run the program with its side channels recorded (and its random streams aligned
    when asked); returns the module, what was observed and the captured locals."""
    capture = _capture_module()
    with Observed(seed, aligned) as observed, capture.Locals(program.display) as captured:
        module = program.execute(seed)
    return module, observed, captured


def outputs_of(module: types.ModuleType, captured: Any) -> Tuple[List[Tuple[str, Any]], str]:
    """What the program exposes for comparison, and where it came from: the dict its
    ``torchlint_outputs()`` returns, else its globals and its functions' locals."""
    namespace = module.__dict__
    hook = namespace.get("torchlint_outputs")
    if callable(hook):
        with as_main(module):
            produced = hook()
        if not isinstance(produced, dict):
            raise TypeError(f"torchlint_outputs() must return a dict, not {type(produced).__name__}")
        return [(str(key), value) for key, value in produced.items()], "torchlint_outputs()"
    found = list(_capture_module().collect(namespace, captured.captured))
    return found, "globals and locals" if captured.captured else "globals"


def _capture_module() -> Any:
    """``capture.py``, loaded by path under a private name."""
    return _load_file("_torchlint_verify_capture", _HERE / "capture.py")


def _sandbox_module() -> Any:
    """``sandbox.py``, loaded by path under a private name."""
    return _load_file("_torchlint_verify_sandbox", _HERE / "sandbox.py")


def flatten(items: List[Tuple[str, Any]], roots: Tuple[str, ...] = ()) -> Any:
    flattened: Any = _capture_module().flatten(items, roots)
    return flattened


def difference(a: Any, b: Any) -> float:
    """0 when equal, the relative L2 error for floating tensors, inf otherwise."""
    measured: float = _capture_module().difference(a, b)
    return measured


# -- what the program did besides its outputs ---------------------------------


class ProbeTools:
    """What the harness lends a rule's probe (see ``Probe`` in torchlint/ruleapi/verification.py)."""

    @staticmethod
    def seed_everything(seed: int) -> None:
        seed_everything(seed)

    replay: Any = None  # what the same probe recorded in the run this one replays, if any
    program: str = ""  # the file name the program's code objects carry (its frames' co_filename)

    @staticmethod
    def flatten(value: Any) -> Flat:
        """``{key: tensor or plain value}`` for any output-like value."""
        flat = _capture_module().Flattener({})
        flat.add("value", value)
        values: Flat = flat.values
        return values

    @staticmethod
    def difference(a: Any, b: Any) -> float:
        return difference(a, b)

    @staticmethod
    def tensors(value: Any, depth: int = 0) -> List[Any]:
        """The tensors in ``value`` and its lists, tuples and dicts (three levels deep)."""
        import torch

        if isinstance(value, torch.Tensor):
            return [value]
        if depth < 3 and isinstance(value, (list, tuple)):
            return [t for item in value for t in ProbeTools.tensors(item, depth + 1)]
        if depth < 3 and isinstance(value, dict):
            return [t for item in value.values() for t in ProbeTools.tensors(item, depth + 1)]
        return []


def load_probes(entries: List[Mapping[str, Any]], program: str = "") -> List[Tuple[str, Any]]:
    """(name, probe) for each probe file the spec names, loaded by path; a probe whose
    entry names a ``replay`` file gets what that file holds as ``tools.replay``."""
    import torch

    probes = []
    for index, entry in enumerate(entries):
        module = _load_file(f"_torchlint_verify_probe_{index}", Path(entry["path"]))
        tools = ProbeTools()
        tools.program = program
        if entry.get("replay"):
            with warnings_suppressed():
                tools.replay = torch.load(entry["replay"], map_location="cpu", weights_only=True)
        probes.append((entry["name"], module.Probe(tools)))
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
    words = str(error).lower()
    if (out_of_memory and isinstance(error, out_of_memory)) or isinstance(error, MemoryError) \
            or "out of memory" in words or "can't allocate memory" in words or "cannot allocate memory" in words:
        limit = os.environ.get("TORCHLINT_VERIFY_MEMORY_LIMIT_TEXT")
        if limit:
            text += f"\n(each process of a run may grow by {limit} at most: --memory-limit)\n"
        return "oom", text
    return "raised", text


# -- the two modes --------------------------------------------------------------


def compare_run(spec: Spec) -> Dict[str, Any]:
    """Run the program once and collect (repeats are separate runs: see session.py).

    ``spec["aligned"]`` aligns the random streams (see ``Observed``);
    ``spec["float64"]`` runs the program in float64 with the float32 run's
    values (a reference for contracts judged by accuracy: ``float64_reference``).
    """
    import torch

    seed = int(spec["seed"])
    result: Dict[str, Any] = {"status": "ok", "error": "", "env": environment(spec["device"])}
    started = time.perf_counter()
    began = time.time() - 1.0  # file times have a coarse clock
    baseline = _peak_rss()
    autocast: List[Dict[str, Any]] = []
    try:
        program = Program(spec["program"])
        probes = load_probes(spec.get("probes", []), program.display)
        with contextlib.ExitStack() as stack:
            if spec.get("float64"):
                stack.enter_context(float64_reference())
            stack.enter_context(autocast_recorder(autocast))
            for _, probe in probes:
                stack.enter_context(probe)
            module, observed, captured = observed_execute(program, seed, bool(spec.get("aligned")))
            for _, probe in probes:  # before the outputs are read (a replay sets its final state)
                finished = getattr(probe, "finished", None)
                if callable(finished):
                    finished()
            outputs, origin = outputs_of(module, captured)
            if spec.get("roots"):  # a user's script: the checkpoints it wrote are outputs too
                outputs += list(_capture_module().written_checkpoints(spec["cwd"], began))
            first = flatten(outputs, tuple(spec.get("roots", ())))
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
            aliases=first.aliases,
            probes={name: probe.result() for name, probe in probes},
        )
        del module, outputs, captured, first
    except BaseException as error:  # the program's failure is a result, not a crash
        if isinstance(error, KeyboardInterrupt):
            raise
        result["status"], result["error"] = _failure(error)
        result.setdefault("seconds", time.perf_counter() - started)
    result["refused"] = list(_GUARD.refused) if _GUARD is not None else []
    result["protection"] = dict(_PROTECTION)
    return result


_GUARD: Any = None  # the sandbox's guard of the user's files in this run, if any
_PROTECTION: Dict[str, Any] = {}  # how the user's files and memory were protected in this run


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
    """Directory, import path, environment, bounds, threads and determinism for a run.

    The run works in its scratch copy (``PWD`` and ``TMPDIR`` point into it),
    writes no bytecode, may grow by ``spec["memory"]`` bytes per process, and
    cannot write the folders ``spec["protect"]`` names (see sandbox.py).
    Comparison runs get the determinism settings (``CUBLAS_WORKSPACE_CONFIG``
    among them, set before CUDA starts); timing runs get none of them, so
    they time what the program does on its own.
    """
    global _GUARD
    import torch

    os.chdir(spec["cwd"])
    sys.path.insert(0, spec["path0"])
    os.environ.update(spec["env"])
    os.environ["PWD"] = spec["cwd"]
    if spec.get("tmp"):
        os.makedirs(spec["tmp"], exist_ok=True)
        for name in ("TMPDIR", "TEMP", "TMP"):
            os.environ[name] = spec["tmp"]
        import tempfile

        tempfile.tempdir = None  # read TMPDIR again
    sys.dont_write_bytecode = True
    shim = os.environ.get("TORCHLINT_VERIFY_TEST_SHIM")
    if shim:  # tests only: a fake device layer (fake torch.cuda, fake pynvml)
        _load_file("_torchlint_verify_test_shim", Path(shim))
    sandbox = _sandbox_module()
    memory = int(spec.get("memory") or 0)
    _PROTECTION["memory"] = sandbox.limit_memory(memory, spec.get("device") == "cuda")
    if _PROTECTION["memory"]:
        os.environ["TORCHLINT_VERIFY_MEMORY_LIMIT_TEXT"] = f"{memory / 2**30:.3g} GiB"
    if spec.get("protect"):
        done = sandbox.protect(list(spec["protect"]))
        _GUARD = done.pop("_guard", None)
        _PROTECTION.update(done)
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
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    prepare(spec)
    if spec["mode"] == "compare":
        import torch

        torch.save(compare_run(spec), spec["out"])
    else:
        measured = time_run(spec)
        with open(spec["out"], "w", encoding="utf-8") as handle:
            json.dump(measured, handle)
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


def _end_all(signum: int, frame: Any) -> None:
    """SIGTERM to the helper (or its parent died): end every run and what it started."""
    del frame
    _sandbox_module().end_descendants()
    os._exit(128 + signum)


def serve() -> int:
    """Import torch once, then fork a fresh process for each spec path on stdin.

    Protocol (one JSON object per line on stdout): ``{"ready": true}`` once;
    then for each request ``{"pid": N}`` as soon as the run starts (it leads
    its own process group, so the parent can kill it and its workers) and
    ``{"pid": N, "exit": code, "left": M}`` when it ends (a negative code is a
    signal; ``left``: processes the run left running, which the helper ended).
    The helper adopts every orphan of a run (a subreaper, on Linux), so a
    process that left the run's group (``os.fork()``, ``start_new_session``)
    is ended too; SIGTERM, or its parent's death, ends the helper, its runs
    and everything they started.  No torch operation may run here before
    forking: thread pools do not survive ``fork``.
    """
    import torch  # noqa: F401 - shared by every forked run
    import torch.utils.benchmark  # noqa: F401

    with contextlib.suppress(ImportError):  # torch < 2.0 has no inductor
        importlib.import_module("torch._inductor.config")  # use_deterministic_algorithms imports it: seconds

    _timing_module()
    _capture_module()
    sandbox = _sandbox_module()
    sandbox.become_subreaper()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when runs stop
    signal.signal(signal.SIGTERM, _end_all)
    sandbox.end_with_parent(signal.SIGTERM)
    # torch's objects live as long as the helper: a collection in a forked run would walk
    # (and copy, page by page) all of them for nothing.
    gc.freeze()
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
        left = sandbox.end_descendants()
        channel.write(json.dumps({"pid": pid, "exit": os.waitstatus_to_exitcode(status), "left": left}) + "\n")
        channel.flush()
    sandbox.end_descendants()
    return EXIT_OK


def supervise(spec_path: str) -> int:
    """``--run``: do the run in a child and, when it ends, end whatever it left running.

    This process adopts the run's orphans (a subreaper, on Linux); SIGTERM (a
    timeout) ends the run and all of them before it exits.
    """
    sandbox = _sandbox_module()
    if not (hasattr(os, "fork") and sandbox.become_subreaper()):
        return run_spec(spec_path, redirect=False)
    pid = os.fork()
    if pid == 0:
        code = EXIT_INTERNAL
        try:
            code = run_spec(spec_path, redirect=False)
        except BaseException:  # noqa: BLE001 - reported through stderr and the exit code
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    signal.signal(signal.SIGTERM, _end_all)
    signal.signal(signal.SIGINT, _end_all)
    _, status = os.waitpid(pid, 0)
    sandbox.end_descendants()
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # end the way the run ended, so the parent sees the signal
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code if code >= 0 else 128 - code


def main(argv: List[str]) -> int:
    if argv[1:2] == ["--serve"]:
        code = serve()
        sys.stdout.flush()
        os._exit(code)  # no need to wait for the interpreter to tear torch down
    if argv[1:2] == ["--run"] and len(argv) == 3:
        try:
            return supervise(argv[2])
        except BaseException:  # noqa: BLE001
            traceback.print_exc()
            return EXIT_INTERNAL
    print("usage: harness.py --serve | --run SPEC", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
