"""`torchlint verify --slurm` against a real Slurm (tests/slurm/setup_slurm.sh sets
up a one-node cluster; CI runs it first).  Skipped where Slurm is not there."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import pytest


def _slurm_answers() -> bool:
    if shutil.which("sbatch") is None or shutil.which("sinfo") is None:
        return False
    try:
        done = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and bool(done.stdout.strip())


pytestmark = [
    pytest.mark.skipif(
        not _slurm_answers(),
        reason="no Slurm here (sbatch/sinfo missing or not answering); tests/slurm/setup_slurm.sh sets one up",
    ),
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="verify (on the node too) needs torch"),
]


def _env(tmp_path: Path) -> Dict[str, str]:
    return {**os.environ, "TORCHLINT_SLURM_DIR": str(tmp_path / "jobs"), "NO_COLOR": "1"}


def _verify(args: List[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "torchlint", "verify", "--slurm", *args],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, env=_env(tmp_path))


def test_verify_runs_as_a_job_set_up_by_the_setup_line_and_its_report_names_the_job(tmp_path: Path) -> None:
    # One job for both (each costs seconds of torch imports on the node): the
    # setup line is written into the job script and is what puts this Python on the PATH.
    report = tmp_path / "report.json"
    setup = f"export PATH={Path(sys.executable).parent}:$PATH"
    done = _verify(["--device", "cpu", "--quick", "--rules", "TL302", "--json", str(report), "--slurm-setup", setup],
                   tmp_path)
    assert done.returncode == 0, done.stderr
    (script,) = (tmp_path / "jobs").glob("*/job.sh")
    lines = script.read_text().splitlines()
    assert setup in lines
    assert lines[-1].startswith("python -m torchlint.verify.slurm_on_node ")
    submitted = re.search(r"submitted job (\d+)", done.stderr)
    assert submitted, done.stderr
    job_id = submitted.group(1)
    assert f"Slurm job {job_id} on node " in done.stdout
    assert "TL302" in done.stdout and "equivalent" in done.stdout
    assert f"job {job_id} RUNNING on " in done.stderr and f"job {job_id} COMPLETED" in done.stderr
    assert "torchlint verify [1/" in done.stderr  # the job's own progress lines, relayed
    environment = json.loads(report.read_text())["environment"]
    assert environment["slurm_job_id"] == job_id and environment["node"]


def test_a_refused_submission_is_exit_2_with_slurms_reason(tmp_path: Path) -> None:
    done = _verify(["--device", "cpu", "--quick", "--sbatch-arg=--partition=no-such-partition"], tmp_path)
    assert done.returncode == 2
    assert "sbatch refused the job" in done.stderr and "partition" in done.stderr.lower()


def test_config_sbatch_args_reach_sbatch(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint.verify]\nsbatch-args = ["--partition=nowhere"]\n')
    done = _verify(["--device", "cpu", "--quick"], tmp_path)
    assert done.returncode == 2 and "sbatch refused the job" in done.stderr


SLOW_SCRIPT = """\
import time
import torch
from torch.utils.data import DataLoader, TensorDataset


def main() -> None:
    loader = DataLoader(TensorDataset(torch.zeros(4, 2)), batch_size=2)
    batches = [batch for batch in loader]
    time.sleep(600)


if __name__ == "__main__":
    main()
"""


def test_the_slow_script_has_a_fix_to_verify(tmp_path: Path) -> None:
    # The jobs below only run long if verify has a fix to run the script for.
    (tmp_path / "slow.py").write_text(SLOW_SCRIPT)
    done = subprocess.run([sys.executable, "-m", "torchlint", "check", "--show-fixes", "--select", "TL201",
                           str(tmp_path / "slow.py")], capture_output=True, text=True, cwd=tmp_path, env=_env(tmp_path))
    assert "no fix is offered" not in done.stdout and "TL201" in done.stdout, done.stdout


def _start_slow_job(tmp_path: Path, extra: List[str]) -> "subprocess.Popen[str]":
    (tmp_path / "slow.py").write_text(SLOW_SCRIPT)
    return subprocess.Popen(
        [sys.executable, "-m", "torchlint", "verify", "--slurm", "--device", "cpu", "--quick", "--no-timing",
         "--timeout", "900", *extra, str(tmp_path / "slow.py")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=_env(tmp_path))


def _job_id(process: "subprocess.Popen[str]") -> str:
    assert process.stderr is not None
    for _ in range(50):
        line = process.stderr.readline()
        found = re.search(r"submitted job (\d+)", line)
        if found:
            return found.group(1)
    raise AssertionError("no job was submitted")


def test_a_job_cancelled_on_the_cluster_is_exit_2_with_its_error_tail(tmp_path: Path) -> None:
    process = _start_slow_job(tmp_path, [])
    job_id = _job_id(process)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # wait until the job's verify has started its first run
        state = subprocess.run(["scontrol", "show", "job", job_id], capture_output=True, text=True).stdout
        if "JobState=RUNNING" in state and list((tmp_path / "jobs").glob("*/slurm.json")):
            break
        time.sleep(1)
    subprocess.run(["scancel", job_id], check=True)
    out, err = process.communicate(timeout=180)
    assert process.returncode == 2, err
    assert f"job {job_id} ended CANCELLED before verify finished" in err
    assert "last lines of" in err


@pytest.mark.slow  # Slurm enforces time limits in whole minutes: over a minute of waiting
def test_a_job_over_its_time_limit_is_exit_2(tmp_path: Path) -> None:
    process = _start_slow_job(tmp_path, ["--sbatch-arg=--time=0:01"])
    job_id = _job_id(process)
    out, err = process.communicate(timeout=280)
    assert process.returncode == 2, err
    assert f"job {job_id} ended TIMEOUT before verify finished" in err


def test_ctrl_c_cancels_the_job(tmp_path: Path) -> None:
    process = _start_slow_job(tmp_path, [])
    job_id = _job_id(process)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        state = subprocess.run(["scontrol", "show", "job", job_id], capture_output=True, text=True).stdout
        if "JobState=RUNNING" in state:
            break
        time.sleep(1)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 2, err
    assert f"job {job_id} cancelled" in err
    for _ in range(30):
        state = subprocess.run(["scontrol", "show", "job", job_id], capture_output=True, text=True).stdout
        if "JobState=CANCELLED" in state:
            break
        time.sleep(1)
    assert "JobState=CANCELLED" in state
