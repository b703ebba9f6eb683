"""Writes are atomic and concurrent fixers do not corrupt files."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict

import pytest
from conftest import run_in_process

import torchlint
from torchlint.lint.settings import Settings

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


@pytest.mark.slow  # over 4 s on 2 busy cores; `pytest -m slow` (run by .ci/run) keeps it
def test_two_fixers_on_the_same_tree(tmp_path: Path) -> None:
    files = tree(tmp_path, 40)
    runs = [subprocess.Popen(fix_command(), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    results = [(run.wait(), run.stderr.read() if run.stderr else "") for run in runs]
    for code, stderr in results:
        assert code in (0, 1) and "Traceback" not in stderr
    assert all(path.read_text() == FIXED for path in files)
    again = run_in_process(fix_command()[3:], tmp_path)
    assert again.returncode == 0 and "No fixes available" in again.stderr


# -- a write that fails leaves the old file; one-line error, exit 2 --------------------------

import errno  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import stat  # noqa: E402
import tempfile  # noqa: E402
from typing import Any, Callable, List, Sequence  # noqa: E402

import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from torchlint.source import sourcefile  # noqa: E402
from torchlint.interfaces.cli import main  # noqa: E402
from torchlint.source.sourcefile import SourceError, read_source, write_source  # noqa: E402

FINDING = "import torch.nn as nn\n\nmodel = nn.DataParallel(net)\n"
FIXABLE = ("from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, batch_size=8)\n"
           'if __name__ == "__main__":\n    train(loader)\n')  # guarded: TL201's fix is offered


def full_disk_after(calls_ok: int) -> Callable[[int, bytes], None]:
    """A stand-in for the low-level write whose call after the first
    ``calls_ok`` ones writes half of its bytes and fails the way a full disk
    does; the calls before and after it succeed."""
    calls: List[int] = []
    real = sourcefile._write_all

    def write(fd: int, data: bytes) -> None:
        calls.append(fd)
        if len(calls) != calls_ok + 1:
            real(fd, data)
            return
        os.write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    return write


def _runner() -> CliRunner:
    """A runner that keeps stderr apart (click < 8.2, on Python 3.9, mixes it in by default)."""
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:  # click >= 8.2: always separate
        return CliRunner()


def invoke(args: Sequence[str], cwd: Path) -> Any:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return _runner().invoke(main, list(args), env={"TORCHLINT_CACHE_DIR": None})
    finally:
        os.chdir(old)


def stderr_of(result: Any) -> str:
    return str(getattr(result, "stderr", result.output))


def assert_only(folder: Path, names: Sequence[str]) -> None:
    assert sorted(p.name for p in folder.iterdir()) == sorted(names)


def test_full_disk_keeps_the_old_baseline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.py").write_text(FINDING)
    assert invoke(["check", "a.py", "--no-cache", "--write-baseline", "base.json"], tmp_path).exit_code == 0
    old = (tmp_path / "base.json").read_bytes()
    (tmp_path / "b.py").write_text(FINDING)
    monkeypatch.setattr(sourcefile, "_write_all", full_disk_after(0))
    result = invoke(["check", ".", "--no-cache", "--write-baseline", "base.json"], tmp_path)
    assert result.exit_code == 2
    message = stderr_of(result).strip()
    assert len(message.splitlines()) == 1 and "base.json" in message and "No space left" in message
    assert (tmp_path / "base.json").read_bytes() == old
    assert_only(tmp_path, ["a.py", "b.py", "base.json"])
    monkeypatch.undo()
    assert invoke(["check", "a.py", "--no-cache", "--baseline", "base.json"], tmp_path).exit_code == 0


def test_full_disk_keeps_the_old_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.py").write_text(FINDING)
    (tmp_path / "report.json").write_text("[]\n")
    monkeypatch.setattr(sourcefile, "_write_all", full_disk_after(0))
    result = invoke(["check", "a.py", "--no-cache", "--output-format", "json", "-o", "report.json"], tmp_path)
    assert result.exit_code == 2
    message = stderr_of(result).strip()
    assert len(message.splitlines()) == 1 and "report.json" in message and "No space left" in message
    assert (tmp_path / "report.json").read_text() == "[]\n"
    assert_only(tmp_path, ["a.py", "report.json"])


def test_report_and_baseline_are_written_whole(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(FINDING)
    (tmp_path / "report.json").write_text("old")
    os.chmod(tmp_path / "report.json", 0o640)
    result = invoke(["check", "a.py", "--no-cache", "--output-format", "json", "-o", "report.json"], tmp_path)
    assert result.exit_code == 1
    assert json.loads((tmp_path / "report.json").read_text())[0]["code"] == "TL501"
    assert stat.S_IMODE((tmp_path / "report.json").stat().st_mode) == 0o640
    assert invoke(["check", "a.py", "--no-cache", "-o", "new/r.txt"], tmp_path).exit_code == 2
    assert_only(tmp_path, ["a.py", "report.json"])


def test_report_to_a_pipe_is_written_through(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(FINDING)
    result = subprocess.run([sys.executable, "-m", "torchlint", "check", "a.py", "--no-cache",
                             "--output-format", "concise", "-o", "/dev/stdout"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 1 and "TL501" in result.stdout


# -- a broken baseline is a one-line error naming it ----------------------------------------

def _baseline(count: Any = 1, **entry: Any) -> Any:
    item = {"path": "a.py", "code": "TL501", "line": "model = nn.DataParallel(net)", "count": count}
    item.update(entry)
    return {"version": 1, "tool": "torchlint", "findings": [item]}


BAD_BASELINES = [
    "1e400-count", "negative", "fraction", "text-count", "bool-count", "list", "findings-dict",
    "entry-list", "path-number", "version-text", "deep", "not-utf8",
]


def _bad_baseline(kind: str) -> bytes:
    shapes = {
        "1e400-count": json.dumps(_baseline(1e400)).replace("Infinity", "1e400"),
        "negative": json.dumps(_baseline(-1)),
        "fraction": json.dumps(_baseline(1.5)),
        "text-count": json.dumps(_baseline("2")),
        "bool-count": json.dumps(_baseline(True)),
        "list": "[]",
        "findings-dict": json.dumps({"version": 1, "findings": {"a": 1}}),
        "entry-list": json.dumps({"version": 1, "findings": [["a.py", "TL501", "x", 1]]}),
        "path-number": json.dumps(_baseline(path=3)),
        "version-text": json.dumps({"version": "1", "findings": []}),
        "deep": "[" * 100000 + "]" * 100000,
    }
    return b"\xff\xfe{}" if kind == "not-utf8" else shapes[kind].encode()


@pytest.mark.parametrize("kind", BAD_BASELINES)
def test_a_broken_baseline_is_a_one_line_error(tmp_path: Path, kind: str) -> None:
    (tmp_path / "a.py").write_text(FINDING)
    (tmp_path / "base.json").write_bytes(_bad_baseline(kind))
    result = run_in_process(["check", "a.py", "--no-cache", "--baseline", "base.json"], tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "base.json" in lines[0], result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr


def test_a_valid_baseline_still_loads(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(FINDING)
    (tmp_path / "base.json").write_text(json.dumps(_baseline(1)))
    assert invoke(["check", "a.py", "--no-cache", "--baseline", "base.json"], tmp_path).exit_code == 0


# -- fixing keeps what the file is: read-only, owner, links, xattrs, encoding ---------------

def fix_in(folder: Path, *names: str) -> "subprocess.CompletedProcess[str]":
    """``torchlint fix NAMES --apply --unsafe-fixes``, run in this process (the
    files' metadata is under test, not how the command starts)."""
    return run_in_process(["fix", *names, "--apply", "--unsafe-fixes", "--no-cache"], folder)


def test_fixing_works_on_a_plain_file(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(FIXABLE)
    result = fix_in(tmp_path, "a.py")
    assert result.returncode == 0, result.stderr
    assert "num_workers" in (tmp_path / "a.py").read_text()


@pytest.mark.parametrize("mode", [0o444, 0o400, 0o555])
def test_read_only_file_is_refused(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "a.py"
    path.write_text(FIXABLE)
    os.chmod(path, mode)
    result = fix_in(tmp_path, "a.py")
    assert result.returncode == 1
    assert "read-only" in result.stderr and "a.py" in result.stderr and "Traceback" not in result.stderr
    assert path.read_text() == FIXABLE and stat.S_IMODE(path.stat().st_mode) == mode
    with pytest.raises(SourceError, match="read-only"):
        write_source(read_source(path), "x = 1\n")


def _as_nobody() -> List[str]:
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("setpriv") is None,
                                reason="needs root (to chown files and to run as another user)")


def _nobody_cannot_run_python() -> bool:
    """The other user may not be able to start this interpreter (a private pyenv)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("setpriv") is None:
        return True
    probe = subprocess.run([*_as_nobody(), sys.executable, "-c", "import torchlint.interfaces.cli"], cwd="/",
                           capture_output=True, timeout=120)
    return probe.returncode != 0


@needs_root
@pytest.mark.skipif(_nobody_cannot_run_python(), reason="the unprivileged user cannot run this Python environment")
def test_unprivileged_user_cannot_fix_a_file_it_may_not_write() -> None:
    # pytest's own temporary folders are private to root; this one the other user can enter.
    folder = Path(tempfile.mkdtemp(prefix="torchlint-shared-"))
    try:
        _refused_for_another_user(folder)
    finally:
        shutil.rmtree(folder)


def _refused_for_another_user(folder: Path) -> None:
    os.chmod(folder, 0o777)  # the folder is writable, the file is not
    path = folder / "a.py"
    path.write_text(FIXABLE)
    os.chmod(path, 0o644)
    command = _as_nobody() + [sys.executable, "-m", "torchlint", "fix", "a.py", "--apply", "--unsafe-fixes",
                              "--no-cache"]
    environment = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    result = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=environment)
    assert result.returncode == 1, result.stderr
    assert "read-only" in result.stderr
    assert path.read_text() == FIXABLE and path.stat().st_uid == 0
    assert_only(folder, ["a.py"])


@needs_root
def test_owner_and_group_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text(FIXABLE)
    os.chown(path, 1234, 4321)
    assert fix_in(tmp_path, "a.py").returncode == 0
    info = path.stat()
    assert "num_workers" in path.read_text() and (info.st_uid, info.st_gid) == (1234, 4321)


def test_hard_links_stay_in_sync(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text(FIXABLE)
    other = tmp_path / "elsewhere.txt"
    os.link(path, other)
    inode = path.stat().st_ino
    assert fix_in(tmp_path, "a.py").returncode == 0
    assert "num_workers" in path.read_text()
    assert other.read_text() == path.read_text()
    assert path.stat().st_ino == inode and path.stat().st_nlink == 2
    assert_only(tmp_path, ["a.py", "elsewhere.txt"])


def test_hard_linked_file_survives_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.py"
    path.write_text(FIXABLE * 50)
    os.link(path, tmp_path / "b.py")
    source = read_source(path)
    # The backup copy is written, then writing the new text runs out of space.
    monkeypatch.setattr(sourcefile, "_write_all", full_disk_after(1))
    with pytest.raises(SourceError, match="No space left"):
        write_source(source, source.text.replace("batch_size=8", "batch_size=8, num_workers=4"))
    assert path.read_text() == FIXABLE * 50 and (tmp_path / "b.py").read_text() == FIXABLE * 50
    assert_only(tmp_path, ["a.py", "b.py"])


def test_extended_attributes_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text(FIXABLE)
    if not hasattr(os, "setxattr"):
        pytest.skip("no extended attributes on this platform")
    try:
        os.setxattr(path, "user.torchlint.test", b"kept")
    except OSError as error:
        if error.errno in (errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
            pytest.skip("this filesystem does not take user extended attributes")
        raise
    assert fix_in(tmp_path, "a.py").returncode == 0
    assert "num_workers" in path.read_text()
    assert os.getxattr(path, "user.torchlint.test") == b"kept"


def test_encoding_that_does_not_round_trip_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    original = b"# coding: unicode_escape\n" + FIXABLE.encode()
    path.write_bytes(original)
    checked = subprocess.run([sys.executable, "-m", "torchlint", "check", "a.py", "--no-cache",
                              "--output-format", "concise"], cwd=tmp_path, capture_output=True, text=True)
    assert checked.returncode == 1 and "TL" in checked.stdout  # checking still works
    result = fix_in(tmp_path, "a.py")
    assert result.returncode == 1
    assert "unicode_escape" in result.stderr and "a.py" in result.stderr and "Traceback" not in result.stderr
    assert path.read_bytes() == original
    assert_only(tmp_path, ["a.py"])


def test_failed_source_write_leaves_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.py"
    path.write_text(FIXABLE)
    source = read_source(path)
    monkeypatch.setattr(sourcefile, "_write_all", full_disk_after(0))
    with pytest.raises(SourceError, match="No space left"):
        write_source(source, FIXABLE + "# more\n")
    assert path.read_text() == FIXABLE
    assert_only(tmp_path, ["a.py"])
