"""`pip install .` ships every rule: each rules/<name>/ package, its
verification programs and its measured results, with no setuptools warning."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _copy_of_project(target: Path) -> Path:
    """The files a source distribution has (no caches, no build folders)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist", ".venv", ".*cache*", ".ci")
    target.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, target / name)
    for folder in ("torchlint", "rules"):
        shutil.copytree(ROOT / folder, target / folder, ignore=ignore)
    return target


@pytest.mark.slow
def test_the_wheel_holds_every_rule_package_and_its_files(tmp_path: Path) -> None:
    # Without build isolation the wheel is built by this environment's setuptools, which must
    # meet pyproject's build requirement (a fresh 3.9 venv carries 58, which cannot read it).
    pytest.importorskip("setuptools", minversion="77")
    source = _copy_of_project(tmp_path / "src")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", str(source),
         "-w", str(tmp_path / "wheel")],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "is absent from" not in result.stdout + result.stderr  # setuptools: "Package ... is absent from the `packages` configuration"
    [wheel] = (tmp_path / "wheel").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        "torchlint/rules/" + path.relative_to(source / "rules").as_posix()
        for path in (source / "rules").rglob("*")
        if path.is_file() and path.suffix in {".py", ".json"}
    }
    assert any("/" in name[len("torchlint/rules/"):] for name in expected)  # rule packages exist
    assert sorted(expected - names) == []
