"""Writes are atomic and concurrent fixers do not corrupt files."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict

import torchlint
from torchlint.settings import Settings

ORIGINAL = (
    "from torch.utils.data import DataLoader\n"
    "import torch\n\n"
    "def loaders(ds):\n"
    "    a = DataLoader(ds, batch_size=8)\n"
    "    b = DataLoader(ds, batch_size=16, num_workers=0)\n"
    "    return a, b\n"
) + "".join(f"# padding line {i} so that writing takes a moment\n" for i in range(200))
FIXED = torchlint.fix_source(ORIGINAL, "x.py", Settings(select=("ALL",)), unsafe=True).source


def tree(root: Path, count: int) -> Dict[Path, str]:
    files = {}
    for index in range(count):
        path = root / f"pkg{index % 10}" / f"mod{index}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(ORIGINAL)
        files[path] = ORIGINAL
    return files


def fix_command() -> list:  # type: ignore[type-arg]
    return [sys.executable, "-m", "torchlint", "fix", ".", "--apply", "--unsafe-fixes", "--no-cache", "-j", "1"]


def test_killed_fixer_leaves_every_file_old_or_new(tmp_path: Path) -> None:
    assert FIXED != ORIGINAL
    files = tree(tmp_path, 400)
    process = subprocess.Popen(fix_command(), cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Wait until it has written some files, then kill it without warning.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if sum(p.read_text() == FIXED for p in list(files)[:400:20]) >= 2:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    contents = [path.read_text() for path in files]
    assert all(text in (ORIGINAL, FIXED) for text in contents)
    assert any(text == FIXED for text in contents)
    # Nothing half-written is left where a linter would look at it.
    assert sorted(p.name for p in tmp_path.rglob("*.py")) == sorted(p.name for p in files)


def test_two_fixers_on_the_same_tree(tmp_path: Path) -> None:
    files = tree(tmp_path, 120)
    runs = [subprocess.Popen(fix_command(), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    results = [(run.wait(), run.stderr.read() if run.stderr else "") for run in runs]
    for code, stderr in results:
        assert code in (0, 1) and "Traceback" not in stderr
    assert all(path.read_text() == FIXED for path in files)
    again = subprocess.run(fix_command(), cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode == 0 and "No fixes available" in again.stderr
