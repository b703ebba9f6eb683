"""A configuration file above the project (issue 25, item 16): an error in it
names the file, says it was found above the project and how to do without
it; TORCHLINT_CEILING_DIRECTORIES keeps the search below a folder; and the
test suite itself is hermetic against such files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional

import pytest

from conftest import run_in_process

GOOD = "import torch.nn as nn\nmodel = nn.DataParallel(net)\n"
BAD = "select = ['TL123']\n"
REPOSITORY = Path(__file__).resolve().parent.parent


def check(cwd: Path, *args: str, ceiling: Optional[Path] = None) -> "subprocess.CompletedProcess[str]":
    """``torchlint check``; the search never goes above ``ceiling`` (default:
    the test's folder, so nothing outside the test is read)."""
    env: Dict[str, Optional[str]] = {"TORCHLINT_CEILING_DIRECTORIES": str(ceiling), "TORCHLINT_CACHE_DIR": None,
                                     "TORCHLINT_OUTPUT_FORMAT": "concise"}
    return run_in_process(["check", "--no-cache", *args], cwd, env=env)


def _project(tmp_path: Path, repository: bool) -> Path:
    (tmp_path / "above").mkdir()
    (tmp_path / "above" / ".torchlint.toml").write_text(BAD)
    project = tmp_path / "above" / "work" / "project"
    project.mkdir(parents=True)
    if repository:
        (project / ".git").mkdir()
    (project / "train.py").write_text(GOOD)
    return project


def test_an_error_in_a_configuration_above_the_repository_names_the_file_and_the_way_out(tmp_path: Path) -> None:
    project = _project(tmp_path, repository=True)
    result = check(project, "train.py", ceiling=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    [line] = result.stderr.strip().splitlines()
    assert str(tmp_path / "above" / ".torchlint.toml") in line and "TL123" in line
    assert f"above the project's repository {project}" in line
    assert "--isolated" in line and "--config" in line
    isolated = check(project, "train.py", "--isolated", ceiling=tmp_path)
    assert isolated.returncode == 1 and "train.py:2:9: TL501" in isolated.stdout


def test_an_error_in_a_configuration_above_the_working_folder_says_so(tmp_path: Path) -> None:
    project = _project(tmp_path, repository=False)
    result = check(project, "train.py", ceiling=tmp_path)
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert str(tmp_path / "above" / ".torchlint.toml") in line and "above the project" in line
    assert "--isolated" in line and "--config" in line


def test_an_error_in_the_projects_own_configuration_has_no_such_hint(tmp_path: Path) -> None:
    project = _project(tmp_path, repository=True)
    (project / "pyproject.toml").write_text("[tool.torchlint]\n" + BAD)
    result = check(project, "train.py", ceiling=tmp_path)
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert str(project / "pyproject.toml") in line and "found above" not in line and "--isolated" not in line


def test_a_ceiling_folder_stops_the_search(tmp_path: Path) -> None:
    project = _project(tmp_path, repository=True)
    result = check(project, "train.py", ceiling=tmp_path / "above")
    assert result.returncode == 1 and "train.py:2:9: TL501" in result.stdout, result.stderr
    # The ceiling is not searched, but the folders below it are.
    (tmp_path / "above" / "work" / ".torchlint.toml").write_text("ignore = ['TL501']\n")
    assert check(project, "train.py", ceiling=tmp_path / "above").returncode == 0


def test_a_ceiling_folder_stops_the_repository_search_as_git_does(tmp_path: Path) -> None:
    (tmp_path / "outer" / ".git").mkdir(parents=True)
    (tmp_path / "outer" / ".gitignore").write_text("*.py\n")
    project = tmp_path / "outer" / "project"
    project.mkdir()
    (project / "train.py").write_text(GOOD)
    env: Dict[str, Optional[str]] = {"TORCHLINT_CEILING_DIRECTORIES": str(tmp_path), "TORCHLINT_CACHE_DIR": None}
    listed = run_in_process(["check", "--show-files", "."], project, env={**env, "GIT_CEILING_DIRECTORIES": str(tmp_path)})
    assert listed.stdout.split() == []  # inside the outer repository, its .gitignore applies
    env["GIT_CEILING_DIRECTORIES"] = str(tmp_path / "outer")
    listed = run_in_process(["check", "--show-files", "."], project, env=env)
    assert listed.stdout.split() == ["train.py"]


HERMETIC_TESTS = [
    "tests/test_hostile.py::test_empty_file_is_clean",  # the in-process CLI helper
    "tests/test_cli.py::test_closed_stdout_exits_by_the_findings_quietly[findings]",  # torchlint in a child process
    "tests/test_discovery.py::test_python_files_sorted_and_default_excludes",  # folder walks and .gitignore
]


@pytest.mark.slow  # a pytest run of its own (~25 s); .ci/run's second call runs it
def test_the_suite_is_hermetic_against_files_above_its_temporary_folder(tmp_path: Path) -> None:
    """A bad configuration file, a repository and a .gitignore ignoring every
    Python file, all above the temporary folder of a test session, change no
    test's result (before, about 170 tests failed)."""
    above = tmp_path / "above"
    (above / ".git").mkdir(parents=True)
    (above / ".gitignore").write_text("*.py\n*.sh\n*.slurm\n")
    (above / ".torchlint.toml").write_text(BAD)
    (above / "pyproject.toml").write_text("[tool.torchlint]\n" + BAD)
    env = {key: value for key, value in os.environ.items()
           if key not in ("TORCHLINT_CEILING_DIRECTORIES", "GIT_CEILING_DIRECTORIES", "PYTEST_XDIST_WORKER",
                          "PYTEST_XDIST_TESTRUNUID", "PYTEST_CURRENT_TEST")}
    env["TMPDIR"] = str(above)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "--basetemp", str(above / "tmp"),
         *HERMETIC_TESTS], cwd=REPOSITORY, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:]
    assert f"{len(HERMETIC_TESTS)} passed" in result.stdout
