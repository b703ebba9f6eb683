"""Ctrl-C and SIGTERM stop `fix --apply` at once: exit 128 + the signal,
every file either untouched or fully fixed, the written ones reported, and
no worker process left behind."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads worker pids from /proc")

# Long enough files that the run is still going when the signal comes, even now that
# the pre-check and the rules are faster (300 short files once finished in a blink).
ORIGINAL = (
    "import torch\n\n\ndef train(model, loader, optimizer):\n    for batch in loader:\n"
    "        optimizer.zero_grad()\n        model(batch).sum().backward()\n        optimizer.step()\n\n\n"
    + "".join(f"def helper_{i}(x):\n    return x * {i} + torch.zeros({i})\n\n\n" for i in range(120))
)
FIXED = ORIGINAL.replace("optimizer.zero_grad()", "optimizer.zero_grad(set_to_none=True)")
FILES = 300


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def children(pid: int) -> List[int]:
    found: List[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        found.extend(int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split())
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def contents(folder: Path) -> Dict[str, str]:
    found = {}
    for path in folder.iterdir():
        try:
            found[path.name] = path.read_text()
        except FileNotFoundError:  # a temporary file renamed meanwhile
            pass
    return found


@pytest.mark.parametrize("sent, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_fix_apply_stops_at_once_and_cleanly(tmp_path: Path, sent: signal.Signals, code: int) -> None:
    for number in range(FILES):
        (tmp_path / f"f{number:03d}.py").write_text(ORIGINAL)
    process = subprocess.Popen(
        [sys.executable, "-m", "torchlint", "fix", "--apply", "--unsafe-fixes", "--torch-version", "1.13",
         "--no-cache", "-j", "2", "."],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # As typed in a terminal: a test run started in the background of a
        # script (`pytest &`) has SIGINT ignored, and a child would inherit that.
        preexec_fn=_interruptible,
    )
    try:
        # Wait until the workers run and a first file is written: mid-run.
        deadline = time.monotonic() + 120
        while FIXED not in contents(tmp_path).values():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "no file was fixed in two minutes"
            time.sleep(0.05)
        workers = children(process.pid)
        assert workers, "fix -j 2 started no worker process"
        process.send_signal(sent)
        _, stderr = process.communicate(timeout=60)  # a hang fails here
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == code, stderr
    assert "Traceback" not in stderr
    after = contents(tmp_path)
    assert set(after) == {f"f{n:03d}.py" for n in range(FILES)}, "a temporary file was left behind"
    assert set(after.values()) <= {ORIGINAL, FIXED}, "a file was left half written"
    written = sorted(name for name, text in after.items() if text == FIXED)
    report = re.search(r"interrupted; (\d+) files? written", stderr)
    assert report is not None, stderr
    assert int(report.group(1)) == len(written)
    assert [pid for pid in workers if alive(pid)] == [], "worker processes outlived the run"
