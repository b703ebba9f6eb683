"""Parallel runs match serial ones; the cache is correct, shared and robust."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import pytest
from conftest import run_in_process

from torchlint.lint.cache import Cache
from torchlint.analysis.index import EMPTY, ProjectIndex
from torchlint.lint.runner import cached_run, lint_file, run_files
from torchlint.lint.settings import Settings

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def corpus(tmp_path: Path, copies: int = 6) -> Path:
    root = tmp_path / "corpus"
    for index in range(copies):
        shutil.copytree(FIXTURES, root / f"copy{index}", ignore=shutil.ignore_patterns("*.fixed.py"))
    return root


def cli(args: Sequence[str], cwd: Path) -> "subprocess.CompletedProcess[str]":
    return run_in_process(args, cwd)


@pytest.mark.slow  # over 4 s on 2 busy cores; `pytest -m slow` (run by .ci/run) keeps it
def test_parallel_results_equal_serial_in_the_same_order(tmp_path: Path) -> None:
    root = corpus(tmp_path, copies=1)
    files = sorted(root.rglob("*.py"))
    settings = Settings(select=("ALL",), root=root)
    serial = run_files(files, lambda _: settings, lint_file, jobs=1)
    parallel = run_files(files, lambda _: settings, lint_file, jobs=2)
    assert [o.diagnostics for o in parallel] == [o.diagnostics for o in serial]
    assert sum(len(o.diagnostics) for o in serial) > 20


@pytest.mark.slow  # over 4 s on 2 busy cores; `pytest -m slow` (run by .ci/run) keeps it
def test_cli_jobs_do_not_change_output(tmp_path: Path) -> None:
    root = corpus(tmp_path, copies=1)
    one = cli(["check", ".", "--no-cache", "-j", "1", "--output-format", "json"], root)
    two = cli(["check", ".", "--no-cache", "-j", "2", "--output-format", "json"], root)
    assert one.returncode == two.returncode == 1
    assert one.stdout == two.stdout


@pytest.mark.slow  # over 4 s on 2 busy cores; `pytest -m slow` (run by .ci/run) keeps it
def test_warm_cache_gives_the_same_findings(tmp_path: Path) -> None:
    root = corpus(tmp_path, copies=1)
    cold = cli(["check", ".", "--output-format", "json"], root)
    cache_dir = root / ".torchlint_cache"
    assert (cache_dir / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache_dir / ".gitignore").read_text().strip().endswith("*")
    warm = cli(["check", ".", "--output-format", "json"], root)
    assert warm.stdout == cold.stdout and warm.returncode == cold.returncode == 1


def test_cache_follows_content_and_settings(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import torch.nn as nn\nm = nn.DataParallel(x)\n")
    assert cli(["check", "a.py"], tmp_path).returncode == 1
    assert cli(["check", "a.py", "--ignore", "TL501"], tmp_path).returncode == 0
    (tmp_path / "a.py").write_text("import torch.nn as nn\nm = x\n")
    assert cli(["check", "a.py"], tmp_path).returncode == 0


@pytest.mark.slow  # over 4 s on 2 busy cores; `pytest -m slow` (run by .ci/run) keeps it
def test_corrupt_cache_entries_are_ignored_and_rewritten(tmp_path: Path) -> None:
    root = corpus(tmp_path, copies=1)
    first = cli(["check", ".", "--output-format", "concise"], root)
    entries = [p for p in (root / ".torchlint_cache").rglob("*.json")]
    assert entries
    for index, entry in enumerate(entries):
        entry.write_bytes(b"\x00garbage" if index % 2 else entry.read_bytes()[: len(entry.read_bytes()) // 2])
    second = cli(["check", ".", "--output-format", "concise"], root)
    assert second.stdout == first.stdout and "Traceback" not in second.stderr
    third = cli(["check", ".", "--output-format", "concise"], root)
    assert third.stdout == first.stdout


@pytest.mark.slow  # over 4 s on 2 busy cores; `pytest -m slow` (run by .ci/run) keeps it
def test_two_processes_share_the_cache(tmp_path: Path) -> None:
    root = corpus(tmp_path, copies=1)
    expected = cli(["check", ".", "--no-cache", "--output-format", "json"], root).stdout
    command = [sys.executable, "-m", "torchlint", "check", ".", "--output-format", "json"]
    runs = [subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [run.communicate()[0] for run in runs]
    assert outputs == [expected, expected]
    assert cli(["check", ".", "--output-format", "json"], root).stdout == expected


def test_clean_removes_the_cache(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    cli(["check", "a.py"], tmp_path)
    assert (tmp_path / ".torchlint_cache").is_dir()
    cli(["clean"], tmp_path)
    assert not (tmp_path / ".torchlint_cache").exists()


@pytest.mark.parametrize("stride", [
    3,  # the default run: every third fixture file (85 of 254, findings of 27 of the 38 rules that report)
    pytest.param(1, marks=pytest.mark.slow),  # every fixture file (`pytest -m slow`, run by .ci/run)
])
def test_cached_run_skips_work_on_hits(tmp_path: Path, stride: int) -> None:
    root = corpus(tmp_path, copies=1)
    files = sorted(root.rglob("*.py"))[::stride]
    settings = Settings(select=("ALL",), root=root)
    cache = Cache(tmp_path / "cache")
    calls = []

    def counting(path: Path, s: Settings, project: ProjectIndex = EMPTY):  # type: ignore[no-untyped-def]
        calls.append(path)
        return lint_file(path, s, project)

    first = cached_run(files, lambda _: settings, counting, cache=cache)
    assert len(calls) == len(files)
    second = cached_run(files, lambda _: settings, counting, cache=cache)
    assert len(calls) == len(files)
    assert [o.diagnostics for o in second] == [o.diagnostics for o in first]
    assert all(o.from_cache for o in second)


def test_editing_a_rule_package_changes_the_tool_fingerprint(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A rule that is a package (rules/<name>/__init__.py) and the analyses
    in torchlint/analysis/ are part of the code the cache key covers."""
    import os

    import torchlint.rules
    from torchlint.lint import cache

    rules_dir = Path(torchlint.rules.__file__ or "").parent
    package_file = next(p for p in sorted(rules_dir.glob("*/__init__.py")) if "__pycache__" not in p.parts)
    cache.tool_fingerprint.cache_clear()
    before = cache.tool_fingerprint()
    info = package_file.stat()
    try:
        os.utime(package_file, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
        cache.tool_fingerprint.cache_clear()
        assert cache.tool_fingerprint() != before
    finally:
        os.utime(package_file, ns=(info.st_atime_ns, info.st_mtime_ns))
        cache.tool_fingerprint.cache_clear()
