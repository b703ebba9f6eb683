"""How `torchlint verify` runs things (needs torch; CPU, quick sizes): the user's
folder is left alone, timing finds a slower fix, the device settings the runs
get, and the CUDA code paths through a fake device layer (tests/fake_device.py).
"""

from __future__ import annotations

import hashlib
import textwrap
import warnings
from pathlib import Path

import pytest

with warnings.catch_warnings():  # torch warns at import when NumPy is missing
    warnings.simplefilter("ignore")
    torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from torchlint.interfaces.cli import main  # noqa: E402
from torchlint.ruleapi.registry import by_code_or_name  # noqa: E402
from torchlint.lint.settings import Settings  # noqa: E402
from torchlint.verify.results import EQUIVALENT, Environment, VerifyReport  # noqa: E402
from torchlint.verify.plan import Case, plan_script  # noqa: E402
from torchlint.verify.session import Session, VerifyOptions, device_environment  # noqa: E402

FAKE_DEVICE = Path(__file__).resolve().with_name("fake_device.py")


@pytest.fixture(scope="module")
def session():
    with Session(VerifyOptions(quick=True, timing=True, timeout=60)) as shared:
        yield shared


def _snapshot(folder: Path) -> dict:
    """Every file under ``folder`` with its bytes' hash (and every folder)."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        for path in sorted(folder.rglob("*"))
    }


@pytest.mark.slow  # a full verify run in fresh processes: `pytest -m slow`
def test_verify_leaves_the_users_folder_byte_identical(session, tmp_path):
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "data" / "train.txt").write_text("1 2 3\n")
    (project / "history.log").write_text("earlier run\n")
    script = project / "train.py"
    script.write_text(textwrap.dedent("""
        from pathlib import Path

        import torch
        from torch import nn

        here = Path(__file__).resolve().parent
        data = [float(v) for v in (here / "data" / "train.txt").read_text().split()]
        model = nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.tensor([data])
        for _ in range(2):
            optimizer.zero_grad(set_to_none=False)
            model(x).sum().backward()
            optimizer.step()
        torch.save(model.state_dict(), "model.pt")
        torch.save(model.state_dict(), here / "checkpoints.pt")
        (here / "run.log").write_text("done\\n")
        with open("history.log", "a") as log:
            log.write("another run\\n")


        def torchlint_step():
            with open("history.log", "a") as log:
                log.write("step\\n")
    """))
    before = _snapshot(project)
    (case,) = plan_script(script, [by_code_or_name("TL302")], Settings())
    (result,) = session.run_cases([case])
    assert session.linked == set()
    assert result.status == EQUIVALENT, result.findings
    assert result.timing is not None, result.timing_error
    assert _snapshot(project) == before


def test_beyond_the_copy_budget_files_are_linked_and_named_and_run_copies_restore(tmp_path, monkeypatch):
    from torchlint.verify import scratch

    monkeypatch.setattr(scratch, "COPY_BYTES", 10)
    monkeypatch.setattr(scratch, "REFLINK_BYTES", 10)
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "small.txt").write_text("tiny")
    (folder / "big.bin").write_bytes(b"x" * 100)
    (folder / "__pycache__").mkdir()
    mirror = scratch.Mirror.build(folder, tmp_path / "mirror")
    assert mirror.linked == ["big.bin"]
    assert str(folder.resolve()) in mirror.protected and str((folder / "big.bin").resolve()) in mirror.protected
    run = tmp_path / "run"
    mirror.materialize(run)
    assert (run / "big.bin").is_symlink() and not (run / "small.txt").is_symlink()
    assert not (run / "__pycache__").exists()
    # A run that changes a copied file in place reaches only the mirror, which is restored.
    (run / "small.txt").write_text("changed by a run")
    assert mirror.restore() == ["small.txt"]
    again = tmp_path / "again"
    mirror.materialize(again)
    assert (again / "small.txt").read_text() == "tiny" == (folder / "small.txt").read_text()


SLEEPER = """
import os
import time

import torch

x = torch.zeros(2)


def torchlint_step(rule):
    assert rule == os.environ["TORCHLINT_VERIFY_RULE"] == "TL302", rule
    time.sleep({seconds})
"""


def test_a_fix_that_makes_the_step_slower_is_reported_slower_and_fails_with_fail_on_slower(session):
    original, slow = SLEEPER.format(seconds=0.02), SLEEPER.format(seconds=0.06)
    result = session.compare_sources("TL302", original, slow)
    assert result.status == EQUIVALENT and not result.timing_error, result.timing_error
    timing = result.timing
    assert timing.verdict == "slower", timing.reason
    assert timing.per_process_counts() == {"original": 2, "original again": 2, "fixed": 2}
    assert len({p.slot for p in timing.processes if p.label == "fixed"}) >= 1
    env = Environment("cpu", "Some CPU", "2.13.0+cpu", None, 1, "3.11.7", 2, "Linux")
    assert VerifyReport(env, (result,), True, 0, 60.0).exit_code == 0
    assert VerifyReport(env, (result,), True, 0, 60.0, fail_on_slower=True).exit_code == 1


FLAGS = """
import os

import torch

torch.backends.cudnn.benchmark = True
with torch.autocast("cpu", dtype=torch.bfloat16):
    y = torch.ones(2, 2) @ torch.ones(2, 2)
x = torch.zeros(2)


def torchlint_outputs():
    return {"x": x, "visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "cublas": os.environ.get("CUBLAS_WORKSPACE_CONFIG")}


def torchlint_step():
    assert os.environ.get("CUBLAS_WORKSPACE_CONFIG") is None, "timing runs must not get it"
"""


def test_cpu_runs_hide_gpus_and_record_the_flags_the_script_ran_with(session):
    if "CUBLAS_WORKSPACE_CONFIG" in session.runner._env:  # set by whoever runs the tests
        pytest.skip("CUBLAS_WORKSPACE_CONFIG is set in the environment")
    case = Case("TL302", "zero-grad-not-set-to-none", "flags.py", FLAGS, FLAGS, 0)
    run = session._run_original(case, seed_probe=False)
    timing, error = session._time(case)
    assert run.ok, run.error
    assert run.values["visible"] == "" and run.values["cublas"] == ":4096:8"
    flags = run.env["flags"]
    assert flags["cudnn_benchmark"] is True  # the script's own setting wins over the harness's False
    assert flags["deterministic_algorithms"] is True and flags["cuda_initialized"] is False
    assert {"device": "cpu", "dtype": "torch.bfloat16", "enabled": True} in flags["autocast"]
    assert timing is not None, error


@pytest.mark.slow  # over 4 s on 2 busy cores; `pytest -m slow` (run by .ci/run) keeps it
def test_the_cuda_paths_through_a_fake_device_layer(tmp_path, monkeypatch):
    sync_log = tmp_path / "sync.log"
    monkeypatch.setenv("TORCHLINT_VERIFY_TEST_SHIM", str(FAKE_DEVICE))
    monkeypatch.setenv("TORCHLINT_FAKE_SYNC_LOG", str(sync_log))
    source = "import torch\nx = torch.zeros(2)\n\n\ndef torchlint_step():\n    x.add_(1)\n"
    # --device cpu: the harness must still synchronise, because CUDA is initialised.
    with Session(VerifyOptions(quick=True, timing=True, timeout=60)) as session:
        result = session.compare_sources("TL302", source, source)
        environment = session.environment
    assert result.status == EQUIVALENT and result.timing is not None, result.timing_error
    assert sync_log.read_text().count("\n") > 10
    memory = result.memory
    assert memory.kind == "cuda" and memory.original_peak == 123 * 2**20
    assert memory.original_devices[0]["peak_reserved"] == 256 * 2**20
    assert environment.gpu["driver"] == "999.12" and environment.gpu["other_processes"][0]["pid"] == 1
    assert "driver 999.12, SM clock 1410/1980 MHz, 1 other process on the GPU" in environment.line()
    usage = [p.gpu_usage for p in result.timing.processes]
    assert all(u is not None and u["utilization_mean_pct"] == 87 for u in usage)
    assert all(p.device_memory[0]["peak_allocated"] == 123 * 2**20 for p in result.timing.processes)


def test_device_environment_hides_gpus_for_the_cpu_and_picks_gpu_n():
    assert device_environment("cpu", {}) == {"TORCHLINT_VERIFY_DEVICE": "cpu", "CUDA_VISIBLE_DEVICES": ""}
    cuda1 = device_environment("cuda:1", {"CUDA_VISIBLE_DEVICES": "2,3"})
    assert cuda1["CUDA_VISIBLE_DEVICES"] == "3" and cuda1["TORCHLINT_VERIFY_NVML_INDEX"] == "3"
    assert cuda1["TORCHLINT_VERIFY_DEVICE"] == "cuda" and cuda1["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
    plain = device_environment("cuda", {})
    assert "CUDA_VISIBLE_DEVICES" not in plain and plain["TORCHLINT_VERIFY_NVML_INDEX"] == "0"


def test_tl201_fix_of_a_users_script_caps_workers_at_the_usable_cpus(tmp_path, monkeypatch):
    import torchlint.rules.dataloader_without_workers as tl201

    monkeypatch.setattr(tl201, "usable_cpus", lambda: 2)
    script = tmp_path / "load.py"
    script.write_text('from torch.utils.data import DataLoader\nif __name__ == "__main__":\n'
                      "    loader = DataLoader(range(8), batch_size=2)\n")
    (case,) = plan_script(script, [by_code_or_name("TL201")], Settings())
    assert "num_workers=2" in case.fixed


def test_device_option_accepts_cuda_n_and_warns_when_auto_falls_back(tmp_path):
    runner = CliRunner()
    bad = runner.invoke(main, ["verify", "--device", "gpu"])
    assert bad.exit_code == 2 and "cuda:N" in bad.output
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: auto does not fall back")
    clean = tmp_path / "clean.py"
    clean.write_text("import torch\nx = torch.zeros(3)\n")
    auto = runner.invoke(main, ["verify", str(clean), "--quick"])
    assert auto.exit_code == 0 and "--device auto found no CUDA device" in auto.output
    cuda1 = runner.invoke(main, ["verify", "--device", "cuda:1", str(clean)])
    assert cuda1.exit_code == 2 and "no CUDA device" in cuda1.output
