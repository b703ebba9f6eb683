"""`torchlint verify` on a real GPU (skipped without one; see conftest.py).

These check what the CPU tests can only fake (tests/fake_device.py): device
synchronisation in the timed blocks, per-device peak memory, the run flags,
``--device cuda:N``, and NVML figures when ``nvidia-ml-py`` is installed.
"""

from __future__ import annotations

import importlib.util
import json
import textwrap
from pathlib import Path

from click.testing import CliRunner

from torchlint.interfaces.cli import main


def _verify(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "verify.json"
    result = CliRunner().invoke(main, ["verify", "--quick", "--json", str(out), *args])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def test_shipped_program_on_cuda_records_device_memory_and_flags(tmp_path):
    data = _verify(tmp_path, "--rules", "TL301", "--device", "cuda")
    (case,) = data["cases"]
    memory = case["memory"]
    assert memory["kind"] == "cuda" and memory["original_peak_bytes"] > 0
    device = memory["original_devices"][0]
    assert device["peak_reserved"] >= device["peak_allocated"] > 0
    assert data["environment"]["device"] == "cuda" and data["environment"]["cuda"]
    processes = case["timing"]["processes"]
    assert processes and all(p["device_memory"] for p in processes)
    if importlib.util.find_spec("pynvml") is not None:
        gpu = data["environment"]["gpu"]
        assert gpu["name"] and gpu["driver"] and gpu["max_sm_clock_mhz"] > 0
        assert all(p["gpu_usage"]["samples"] > 0 for p in processes)


def test_timed_blocks_count_asynchronous_kernels(tmp_path):
    script = tmp_path / "kernel.py"
    script.write_text(textwrap.dedent("""
        import torch

        model = torch.nn.Linear(8, 8).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer.zero_grad(set_to_none=False)
        model(torch.ones(2, 8, device="cuda")).sum().backward()
        optimizer.step()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(50_000_000)
        end.record()
        torch.cuda.synchronize()
        kernel_seconds = torch.tensor(start.elapsed_time(end) / 1000)


        def torchlint_outputs():
            return {"model": model}


        def torchlint_step():
            torch.cuda._sleep(50_000_000)  # returns at once; the kernel runs on
    """))
    data = _verify(tmp_path, str(script), "--rules", "TL302", "--device", "cuda")
    (case,) = data["cases"]
    # Without synchronising at block boundaries the step would look like a few microseconds.
    assert case["timing"]["original_median_s"] > 1e-3


def test_device_cuda_n_runs_on_that_gpu_and_the_script_flags_win():
    from torchlint.verify.session import Case, Session, VerifyOptions

    source = textwrap.dedent("""
        import os

        import torch

        torch.backends.cudnn.benchmark = True
        device = torch.device(os.environ["TORCHLINT_VERIFY_DEVICE"])
        model = torch.nn.Conv2d(3, 4, 3).to(device)
        out = model(torch.ones(1, 3, 8, 8, device=device))


        def torchlint_outputs():
            return {"out": out, "visible": os.environ.get("CUDA_VISIBLE_DEVICES"), "device": str(out.device)}
    """)
    case = Case("TL302", "zero-grad-not-set-to-none", "flags.py", source, source, 0)
    with Session(VerifyOptions(device="cuda:0", quick=True, timing=False, timeout=120)) as session:
        run = session._run_original(case, seed_probe=False)
    assert run.ok, run.error
    assert run.values["device"] == "cuda:0" and run.values["visible"] is not None
    flags = run.env["flags"]
    assert flags["cuda_initialized"] and flags["cudnn_benchmark"] is True  # the script's setting wins
    assert flags["cublas_workspace_config"] == ":4096:8"
    assert run.memory["kind"] == "cuda" and run.memory["devices"][0]["peak_allocated"] > 0


def test_tl101_and_tl201_programs_train_on_the_gpu_in_their_timed_steps(tmp_path):
    # TL101's step copies pageable tensors while its kernels run; TL201's trains on each
    # batch: both must verify as equivalent on CUDA and do device work in every timed process.
    data = _verify(tmp_path, "--rules", "TL101,TL201", "--device", "cuda")
    assert {case["rule"] for case in data["cases"]} == {"TL101", "TL201"}
    for case in data["cases"]:
        assert case["status"] == "equivalent", case["findings"]
        for process in case["timing"]["processes"]:
            assert process["device_memory"] and process["device_memory"][0]["peak_allocated"] > 0
