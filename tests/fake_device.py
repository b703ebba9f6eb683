"""A fake device layer for `torchlint verify`'s CUDA code paths (tests only).

verify's harness loads this file in each child process when
``TORCHLINT_VERIFY_TEST_SHIM`` names it, before the program runs.  It makes
``torch.cuda`` look initialised with one device and installs a fake
``pynvml``, so the synchronisation, per-device memory and NVML code runs on
a machine without a GPU.  Each ``synchronize()`` appends a line to the file
named by ``TORCHLINT_FAKE_SYNC_LOG``.
"""

import os
import sys
import types

import torch

ALLOCATED, RESERVED = 123 * 2**20, 256 * 2**20


def _synchronize(device=None):
    with open(os.environ["TORCHLINT_FAKE_SYNC_LOG"], "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()}\n")


fake_cuda = {
    "is_initialized": lambda: True,
    "synchronize": _synchronize,
    "device_count": lambda: 1,
    "current_device": lambda: 0,
    "get_device_name": lambda device=None: "Fake GPU 80GB",
    "max_memory_allocated": lambda device=None: ALLOCATED,
    "max_memory_reserved": lambda device=None: RESERVED,
    "reset_peak_memory_stats": lambda device=None: None,
    "get_rng_state_all": lambda: [],
}
for name, value in fake_cuda.items():
    setattr(torch.cuda, name, value)


class _Record:
    def __init__(self, **fields):
        self.__dict__.update(fields)


nvml = types.ModuleType("pynvml")
nvml.NVML_CLOCK_SM = 1
nvml.nvmlInit = lambda: None
nvml.nvmlDeviceGetHandleByIndex = lambda index: ("handle", index)
nvml.nvmlDeviceGetName = lambda handle: b"Fake GPU 80GB"
nvml.nvmlSystemGetDriverVersion = lambda: "999.12"
nvml.nvmlDeviceGetClockInfo = lambda handle, kind: 1410
nvml.nvmlDeviceGetMaxClockInfo = lambda handle, kind: 1980
nvml.nvmlDeviceGetMemoryInfo = lambda handle: _Record(total=80 * 2**30, used=5 * 2**30)
nvml.nvmlDeviceGetUtilizationRates = lambda handle: _Record(gpu=87, memory=40)
nvml.nvmlDeviceGetComputeRunningProcesses = lambda handle: [_Record(pid=1, usedGpuMemory=2**30)]
sys.modules["pynvml"] = nvml
