"""Hostile input: each case gives a one-line diagnostic naming the file, no
traceback, the other files still linted, and the documented exit code."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List, Sequence, Tuple

import pytest

from conftest import run_in_process
from hostile_support import deep_folders

GOOD = "import torch.nn as nn\nmodel = nn.DataParallel(net)\n"


def cli(args: Sequence[str], cwd: Path) -> "subprocess.CompletedProcess[str]":
    return run_in_process([*args, "--no-cache", "--output-format", "concise"], cwd)


def lint_with_good_file(tmp_path: Path, name: str) -> Tuple[int, List[str], str]:
    (tmp_path / "zz_good.py").write_text(GOOD)
    result = cli(["check", name, "zz_good.py"], tmp_path)
    assert "Traceback" not in result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith(name)]
    assert any(line.startswith("zz_good.py:2:9: TL501") for line in result.stdout.splitlines())
    return result.returncode, lines, result.stderr


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b"import torch\ndef broken(:\n", "SyntaxError"),
        (b"import torch\nx = '\xff\xfe'\n", "not valid utf-8"),
        (b"import torch\nx = (" + b"(" * 1000 + b"1" + b")" * 1001 + b"\n", "nested"),
        (b"# -*- coding: klingon -*-\nimport torch\n", "unknown encoding"),
    ],
    ids=["syntax-error", "not-utf8", "deep-nesting", "unknown-codec"],
)
def test_broken_files_are_one_line_tl000(tmp_path: Path, content: bytes, fragment: str) -> None:
    (tmp_path / "bad.py").write_bytes(content)
    code, lines, _ = lint_with_good_file(tmp_path, "bad.py")
    assert code == 1
    assert len(lines) == 1 and " TL000 " in lines[0] and fragment in lines[0]


@pytest.mark.parametrize(
    "content",
    [
        b"# -*- coding: latin-1 -*-\nimport torch.nn as nn\nname = '\xe9t\xe9'\nm = nn.DataParallel(n)\n",
        b"\xef\xbb\xbfimport torch.nn as nn\nm = nn.DataParallel(n)\n",
        b"import torch.nn as nn\r\nm = nn.DataParallel(n)\r\n",
        b"import torch.nn as nn\nif True:\n\tm = nn.DataParallel(n)\n",
        b"import torch.nn as nn\r\nx = 1\nm = nn.DataParallel(n)\r\n",
    ],
    ids=["latin1-cookie", "utf8-bom", "crlf", "tabs", "mixed-newlines"],
)
def test_unusual_but_valid_files_are_linted(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "odd.py").write_bytes(content)
    code, lines, _ = lint_with_good_file(tmp_path, "odd.py")
    assert code == 1
    assert len(lines) == 1 and " TL501 " in lines[0]


def test_empty_file_is_clean(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_bytes(b"")
    code, lines, _ = lint_with_good_file(tmp_path, "empty.py")
    assert code == 1 and lines == []


def test_huge_file_is_skipped_with_a_diagnostic(tmp_path: Path) -> None:
    line = b"x = torch.zeros(3)  # padding padding padding padding padding\n"
    (tmp_path / "huge.py").write_bytes(b"import torch\n" + line * (20 * 1024 * 1024 // len(line)))
    code, lines, _ = lint_with_good_file(tmp_path, "huge.py")
    assert code == 1 and len(lines) == 1 and "TL000" in lines[0] and "MB" in lines[0]


def test_symlink_loop_fifo_and_missing_path(tmp_path: Path) -> None:
    os.symlink(tmp_path / "loop.py", tmp_path / "loop.py")
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "zz_good.py").write_text(GOOD)
    result = cli(["check", "loop.py", "pipe.py", "missing.py", "zz_good.py"], tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    out = result.stdout.splitlines()
    for name in ("loop.py", "pipe.py", "missing.py"):
        assert len([line for line in out if line.startswith(f"{name}:") and "TL000" in line]) == 1, name
    assert any(line.startswith("zz_good.py:2:9: TL501") for line in out)
    # Walking a folder skips the FIFO and the loop silently.
    walked = cli(["check", "."], tmp_path)
    assert walked.returncode == 1 and "Traceback" not in walked.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read a file without read permission")
def test_unreadable_file(tmp_path: Path) -> None:
    (tmp_path / "secret.py").write_text(GOOD)
    os.chmod(tmp_path / "secret.py", 0)
    code, lines, _ = lint_with_good_file(tmp_path, "secret.py")
    assert code == 1 and len(lines) == 1 and "TL000" in lines[0]


@pytest.mark.parametrize(
    "config, fragment",
    [
        ("[tool.torchlint\n", "invalid TOML"),
        ("[tool.torchlint]\nfrobnicate = true\n", "frobnicate"),
        ("[tool.torchlint]\nselect = ['TL123']\n", "TL123"),
        ("[project]\nname = 'caf\udce9'\n", "not UTF-8"),
        ("[tool]\ntorchlint = 'x'\n", "`tool.torchlint` must be a table"),
        ("[tool.torchlint.TL201]\nnum-workers = -3\n", "`TL201.num-workers` must be at least 1"),
    ],
    ids=["invalid-toml", "unknown-setting", "unknown-code", "not-utf8", "tool-torchlint-string", "negative-option"],
)
def test_bad_configuration_exits_2_with_one_line(tmp_path: Path, config: str, fragment: str) -> None:
    (tmp_path / "pyproject.toml").write_bytes(os.fsencode(config))
    (tmp_path / "a.py").write_text(GOOD)
    result = cli(["check", "a.py"], tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    [line] = result.stderr.strip().splitlines()
    assert "pyproject.toml" in line and fragment in line


def test_fix_keeps_crlf_mixed_endings_and_tabs(tmp_path: Path) -> None:
    source = b'from torch.utils.data import DataLoader\r\nif __name__ == "__main__":\n\tloader = DataLoader(ds)\r\n'
    (tmp_path / "a.py").write_bytes(source)
    fixed = run_in_process(["fix", "a.py", "--apply", "--unsafe-fixes", "--no-cache"], tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    assert (tmp_path / "a.py").read_bytes() == source.replace(b"DataLoader(ds)", b"DataLoader(ds, num_workers=4)")


# -- run-level hostile input (issue 9) ------------------------------------------------

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def _nobody_can_run_torchlint() -> str:
    """Why the unprivileged-user test cannot run here, or "" when it can."""
    if os.geteuid() != 0:
        return "needs root to switch to the unprivileged user"
    if shutil.which("setpriv") is None:
        return "needs setpriv (util-linux)"
    probe = subprocess.run([*NOBODY, sys.executable, "-c", "import torchlint.interfaces.cli, libcst"],
                           cwd="/", capture_output=True, timeout=120)
    if probe.returncode != 0:
        return "the unprivileged user cannot read this Python environment"
    return ""


@pytest.mark.skipif(bool(_nobody_can_run_torchlint()), reason=_nobody_can_run_torchlint() or "runs")
def test_unreadable_folder_and_config_as_an_unprivileged_user() -> None:
    """A root-owned mode-700 folder (a container volume) and an unreadable
    pyproject.toml: one TL000 each, naming them; everything else is linted."""
    top = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        os.chmod(top, 0o755)
        for name in ("locked/secret.py", "ok/a.py", "sub/c.py"):
            (top / name).parent.mkdir(exist_ok=True)
            (top / name).write_text(GOOD)
            os.chmod(top / name, 0o644)
        for folder in ("ok", "sub"):
            os.chmod(top / folder, 0o755)
        os.chmod(top / "locked", 0o700)
        (top / "sub" / "pyproject.toml").write_text("[tool.torchlint]\nselect = ['TL2']\n")
        os.chmod(top / "sub" / "pyproject.toml", 0)
        result = subprocess.run([*NOBODY, sys.executable, "-m", "torchlint", "check", "--no-cache",
                                 "--output-format", "concise", "."], cwd=top, capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(top)
    assert result.returncode == 1 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.startswith("locked")] == ["locked:1:1: TL000 cannot read folder: Permission denied"]
    assert ("sub/pyproject.toml:1:1: TL000 cannot read configuration file: Permission denied; "
            "it was ignored as if absent") in lines
    assert any(line.startswith("ok/a.py:2:9: TL501") for line in lines)
    assert any(line.startswith("sub/c.py:2:9: TL501") for line in lines)  # linted with the defaults


def test_a_file_a_thousand_folders_deep(tmp_path: Path) -> None:
    with deep_folders(tmp_path, 1000) as deep:
        (deep / "x.py").write_text(GOOD)
        walked = cli(["check", "."], tmp_path)
        named = cli(["check", os.path.relpath(deep / "x.py", tmp_path)], tmp_path)
    for result in (walked, named):
        assert result.returncode == 1 and "Traceback" not in result.stderr and result.stderr == ""
        assert result.stdout.count(" TL501 ") == 1


DEEP = "x = " + "-" * 10_000 + "1\n"  # 10 KB; libcst's native parser used to segfault on it


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_that_crashed_the_parser_costs_one_tl000(tmp_path: Path, jobs: str) -> None:
    (tmp_path / "deep.py").write_text(DEEP)
    for number in range(5):
        (tmp_path / f"good{number}.py").write_text(GOOD)
    result = cli(["check", ".", "-j", jobs], tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    lines = result.stdout.splitlines()
    deep = [line for line in lines if line.startswith("deep.py:")]
    assert len(deep) == 1 and " TL000 " in deep[0] and "nested too deeply" in deep[0] and "limit 1000" in deep[0]
    assert sorted(line.split(":")[0] for line in lines if " TL501 " in line) == [f"good{n}.py" for n in range(5)]


def test_fix_apply_goes_on_past_a_file_that_crashed_the_parser(tmp_path: Path) -> None:
    fixable = "import torch\n\ndef step(opt):\n    opt.zero_grad()\n"
    (tmp_path / "deep.py").write_text(DEEP)
    for number in range(5):
        (tmp_path / f"good{number}.py").write_text(fixable)
    result = run_in_process(
        ["fix", ".", "--apply", "--unsafe-fixes", "--torch-version", "1.13", "--no-cache", "-j", "2"], tmp_path
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "Fixed 5 findings in 5 files." in result.stderr
    assert "deep.py:1:" in result.stderr and "TL000" in result.stderr
    assert (tmp_path / "deep.py").read_text() == DEEP
    assert all("zero_grad(set_to_none=True)" in (tmp_path / f"good{n}.py").read_text() for n in range(5))


def test_a_one_job_run_lints_an_unusual_file_in_a_worker_parsing_it_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Text the scan finds unusual is linted in a worker process (which may die
    for it) instead of being parsed in a trial child and then again here; the
    findings are the ones of a lint in this process."""
    import torchlint.source.parsing as parsing
    from torchlint.lint.runner import lint_file, run_files
    from torchlint.lint.settings import SettingsResolver

    long_statement = "table = [" + "1, " * 3_000 + "]\n"  # 6,000 tokens in one statement
    (tmp_path / "unusual.py").write_text(GOOD + long_statement)
    (tmp_path / "plain.py").write_text(GOOD)
    assert parsing.measure(GOOD + long_statement).suspicious
    resolver = SettingsResolver()
    files = [tmp_path / "plain.py", tmp_path / "unusual.py"]
    alone = [lint_file(path, resolver.for_path(path)) for path in files]  # the trial parse, then the real one

    def no_trial(source: str) -> None:
        raise AssertionError("a trial parse in the run's own process")

    monkeypatch.setattr(parsing, "_dies_parsing", no_trial)
    outcomes = run_files(files, resolver.for_path, lint_file, jobs=1)
    assert outcomes == alone
    assert [d.code for d in outcomes[1].diagnostics] == ["TL501"]


WORKER_DEATH = """
import os, signal, sys
from pathlib import Path
from torchlint.lint.runner import lint_file, run_files
from torchlint.lint.settings import SettingsResolver

def work(path, settings):
    if path.name == "bad.py":
        os.kill(os.getpid(), signal.SIGSEGV)  # what a native parser crash looks like
    return lint_file(path, settings)

if __name__ == "__main__":
    files = sorted(Path(sys.argv[1]).glob("*.py"))
    resolver = SettingsResolver()
    for outcome in run_files(files, resolver.for_path, work, jobs=2):
        print(outcome.path, [(d.code, d.message) for d in outcome.diagnostics])
"""


def test_a_dead_worker_is_a_tl000_for_its_file_only(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "bad.py").write_text(GOOD)
    for number in range(6):
        (tree / f"good{number}.py").write_text(GOOD)
    (tmp_path / "run.py").write_text(WORKER_DEATH)
    result = subprocess.run([sys.executable, str(tmp_path / "run.py"), str(tree)],
                            capture_output=True, text=True, timeout=300)
    # The file is never retried in the main process, which would die too.
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    [bad] = [line for line in lines if "bad.py" in line]
    assert "TL000" in bad and "killed by SIGSEGV" in bad
    assert len([line for line in lines if "good" in line and "TL501" in line]) == 6


@pytest.mark.parametrize(
    "content",
    [
        b"import torch\nx = 'a\x00b'\n\ndef step(opt):\n    opt.zero_grad()\n",
        b"\xef\xbb\xbf# -*- coding: latin-1 -*-\nimport torch\n\ndef step(opt):\n    opt.zero_grad()\n",
    ],
    ids=["raw-nul", "bom-with-latin1-cookie"],
)
def test_files_cpython_refuses_get_a_tl000_and_no_fix(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "bad.py").write_bytes(content)
    result = run_in_process(
        ["fix", "bad.py", "--apply", "--unsafe-fixes", "--torch-version", "1.13", "--no-cache"], tmp_path
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "bad.py:" in result.stderr and " TL000 SyntaxError: " in result.stderr
    assert (tmp_path / "bad.py").read_bytes() == content


def test_stdin_has_the_file_size_limit(tmp_path: Path) -> None:
    data = b"# a comment line of padding text, no code here at all\n" * (11 * 1024 * 1024 // 54)
    result = run_in_process(
        ["check", "-", "--stdin-filename", "big.py", "--no-cache", "--output-format", "concise"], tmp_path,
        stdin=data.decode("ascii"),
    )
    assert result.returncode == 1
    [line] = [line for line in result.stdout.splitlines() if line.startswith("big.py")]
    assert line.startswith("big.py:1:1: TL000 ") and "10 MB limit" in line
