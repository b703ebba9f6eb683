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


@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_a_write_still_reports_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest, sent: signal.Signals
) -> None:
    """The window the subprocess test above hits only by chance: the signal
    comes right after a fixed file replaced the original, before the run
    noted it.  The file is on disk, so the report must name it, and the run
    must still stop there."""
    from torchlint.lint import runner
    from torchlint.lint.settings import Settings

    # Python's own Ctrl-C handler, whatever this test process inherited: a pytest
    # started in the background (`&`, nohup) ignores SIGINT, and the run rightly
    # keeps an ignored signal ignored.
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, inherited))
    files = [tmp_path / f"f{number}.py" for number in range(3)]
    for path in files:
        path.write_text(ORIGINAL)
    real_write = runner.write_source

    def write_then_signal(original: object, text: str) -> None:
        real_write(original, text)  # type: ignore[arg-type]
        os.kill(os.getpid(), sent)

    monkeypatch.setattr(runner, "write_source", write_then_signal)
    settings = Settings(torch_version="1.13", root=tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(runner.Interrupted) as stopped:
        runner.run_files(files, lambda _: settings,
                         lambda path, s: runner.fix_file(path, s, unsafe=True, write=True), jobs=1)
    assert stopped.value.signal_number == sent
    assert stopped.value.written == ("f0.py",)
    assert [path.read_text() == FIXED for path in files] == [True, False, False]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handlers put back
