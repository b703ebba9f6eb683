"""The pre-commit hooks of .pre-commit-hooks.yaml, run by the real pre-commit.

A snapshot of this checkout (working tree included) becomes a git repository
that throwaway projects name in their .pre-commit-config.yaml; pre-commit
installs the hook environment from it once (PRE_COMMIT_HOME is shared by the
tests of this module) and runs the hooks on real ``git commit``s.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator

import pytest

# Real pre-commit installs the hooks into a fresh environment: `pytest -m slow`.
pytestmark = pytest.mark.slow

pytest.importorskip("pre_commit")
if shutil.which("git") is None:  # pragma: no cover
    pytest.skip("git is not installed", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIRS = ("torchlint", "rules")  # what `pip install .` needs besides top-level files

BAD = "import torch.nn as nn\n\nmodel = nn.DataParallel(net)\n"  # TL501: no fix
FIXABLE = "import torch\n\nx = torch.zeros(3).cuda()\n"  # TL101: a safe fix
FIXED = 'import torch\n\nx = torch.zeros(3, device="cuda")\n'
CLEAN = "import torch\n\nx = torch.zeros(3)\n"


@dataclass(frozen=True)
class Hooks:
    """Where the hook repository is and the environment to run git in."""

    repo: Path
    rev: str
    env: Dict[str, str]


def git(cwd: Path, env: Dict[str, str], *args: str, check: bool = True) -> "subprocess.CompletedProcess[str]":
    result = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    if check and result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def _environment(home: Path, scratch: Path) -> Dict[str, str]:
    """os.environ without git/pre-commit state of an outer run, with a blank git config."""
    env = {
        key: value for key, value in os.environ.items()
        if not key.startswith(("GIT_", "PRE_COMMIT")) and key != "SKIP"
    }
    global_config = scratch / "gitconfig"
    global_config.write_text(
        "[user]\n\tname = torchlint tests\n\temail = tests@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n",
        encoding="utf-8",
    )
    env.update(
        GIT_CONFIG_GLOBAL=str(global_config),
        GIT_CONFIG_NOSYSTEM="1",
        PRE_COMMIT_HOME=str(home),
        PRE_COMMIT_COLOR="never",
    )
    return env


def _snapshot(target: Path, env: Dict[str, str]) -> str:
    """Copy the checkout's package files (committed or not) into a new repository."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        top = Path(name).parts[0]
        wanted = (len(Path(name).parts) == 1 and (not top.startswith(".") or top == ".pre-commit-hooks.yaml")) or (
            top in PACKAGE_DIRS
        )
        if wanted and source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    git(target, env, "init", "-q")
    git(target, env, "add", "-A")
    git(target, env, "commit", "-q", "-m", "snapshot")
    return git(target, env, "rev-parse", "HEAD").stdout.strip()


def new_project(path: Path, hooks: Hooks) -> Path:
    """A git repository whose commits run both torchlint hooks."""
    path.mkdir(parents=True, exist_ok=True)
    (path / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"  - repo: {hooks.repo.as_posix()}\n"
        f"    rev: {hooks.rev}\n"
        "    hooks:\n"
        "      - id: torchlint-fix\n"
        "      - id: torchlint\n",
        encoding="utf-8",
    )
    git(path, hooks.env, "init", "-q")
    subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"],
        cwd=path, env=hooks.env, capture_output=True, text=True, check=True, timeout=120,
    )
    git(path, hooks.env, "add", ".pre-commit-config.yaml")
    return path


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hooks]:
    scratch = tmp_path_factory.mktemp("precommit")
    env = _environment(scratch / "home", scratch)
    (scratch / "hooks").mkdir()
    rev = _snapshot(scratch / "hooks", env)
    found = Hooks(scratch / "hooks", rev, env)
    # Install the hook environment once (pip, from the snapshot); every
    # project below uses the same repo and rev, so pre-commit reuses it.
    installed = subprocess.run(
        [sys.executable, "-m", "pre_commit", "install-hooks"],
        cwd=new_project(scratch / "seed", found), env=env, capture_output=True, text=True, timeout=900,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    yield found


def commit(project: Path, hooks: Hooks, files: Dict[str, str]) -> "subprocess.CompletedProcess[str]":
    for name, text in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
    git(project, hooks.env, "add", *files)
    return git(project, hooks.env, "commit", "-m", "change", check=False)


def commit_count(project: Path, hooks: Hooks) -> int:
    result = git(project, hooks.env, "rev-list", "--count", "HEAD", check=False)
    return int(result.stdout) if result.returncode == 0 else 0


def test_commit_with_a_finding_is_refused(hooks: Hooks, tmp_path: Path) -> None:
    project = new_project(tmp_path / "project", hooks)
    result = commit(project, hooks, {"train.py": BAD})
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "TL501" in output and "train.py:3:9" in output  # the finding, printed
    assert commit_count(project, hooks) == 0


def test_fix_hook_rewrites_the_file(hooks: Hooks, tmp_path: Path) -> None:
    project = new_project(tmp_path / "project", hooks)
    result = commit(project, hooks, {"train.py": FIXABLE})
    output = result.stdout + result.stderr
    assert result.returncode != 0, output  # a hook that changes files fails the commit
    assert "files were modified by this hook" in output
    assert (project / "train.py").read_text(encoding="utf-8") == FIXED
    again = commit(project, hooks, {"train.py": FIXED})
    assert again.returncode == 0, again.stdout + again.stderr
    assert git(project, hooks.env, "show", "HEAD:train.py").stdout == FIXED


def test_clean_file_passes(hooks: Hooks, tmp_path: Path) -> None:
    project = new_project(tmp_path / "project", hooks)
    result = commit(project, hooks, {"train.py": CLEAN})
    assert result.returncode == 0, result.stdout + result.stderr
    assert commit_count(project, hooks) == 1


def test_excluded_file_is_skipped(hooks: Hooks, tmp_path: Path) -> None:
    project = new_project(tmp_path / "project", hooks)
    result = commit(project, hooks, {
        "pyproject.toml": '[tool.torchlint]\nextend-exclude = ["generated/"]\n',
        "generated/model.py": BAD,
    })
    output = result.stdout + result.stderr
    # pre-commit passes generated/model.py by name; --force-exclude skips it.
    assert result.returncode == 0, output
    assert "TL501" not in output
    ran = [line for line in output.splitlines() if line.startswith("torchlint")]
    assert len(ran) == 2 and all(line.endswith("Passed") for line in ran), output  # not "Skipped"
    assert commit_count(project, hooks) == 1


def test_notebook_with_a_finding_is_refused(hooks: Hooks, tmp_path: Path) -> None:
    """The hooks' ``types_or`` includes jupyter: pre-commit passes notebooks to torchlint."""
    import json

    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": BAD.splitlines(keepends=True)}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    project = new_project(tmp_path / "project", hooks)
    result = commit(project, hooks, {"explore.ipynb": json.dumps(notebook, indent=1) + "\n"})
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "TL501" in output and "explore.ipynb" in output
    assert commit_count(project, hooks) == 0


def readme_snippet() -> str:
    """The pre-commit configuration docs/pre-commit.md shows, exactly as printed."""
    text = (ROOT / "docs" / "pre-commit.md").read_text(encoding="utf-8")
    block = text.split("<!-- pre-commit-snippet:start -->", 1)[1].split("<!-- pre-commit-snippet:end -->", 1)[0]
    return block.split("```yaml\n", 1)[1].split("```", 1)[0]


def test_readme_snippet_works_as_printed(hooks: Hooks, tmp_path: Path) -> None:
    """The docs' `repo: local` snippet, copied verbatim, with torchlint on PATH."""
    env = dict(hooks.env, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    project = tmp_path / "project"
    project.mkdir()
    (project / ".pre-commit-config.yaml").write_text(readme_snippet(), encoding="utf-8")
    git(project, env, "init", "-q")
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=project, env=env,
                   capture_output=True, text=True, check=True, timeout=120)
    git(project, env, "add", ".pre-commit-config.yaml")
    local = Hooks(hooks.repo, hooks.rev, env)
    fixed = commit(project, local, {"train.py": FIXABLE})
    assert fixed.returncode != 0 and (project / "train.py").read_text(encoding="utf-8") == FIXED
    refused = commit(project, local, {"train.py": FIXED, "model.py": BAD})
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "TL501" in output and "model.py:3:9" in output, output
    assert commit_count(project, local) == 0
    clean = commit(project, local, {"model.py": CLEAN})
    assert clean.returncode == 0, clean.stdout + clean.stderr
