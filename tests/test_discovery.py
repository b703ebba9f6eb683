"""Discovery: folders, default excludes, .gitignore, exclude, force-exclude."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List

import pytest

from torchlint.discovery import discover
from torchlint.settings import Settings, SettingsResolver


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")


def found(root: Path, *paths: Path, force: bool = False, settings: Settings = None) -> List[str]:  # type: ignore[assignment]
    settings = settings or Settings(root=root)
    result = discover(list(paths) or [root], lambda _: settings, force_exclude=force)
    return [p.relative_to(root).as_posix() for p in result.files]


def test_python_files_sorted_and_default_excludes(tmp_path: Path) -> None:
    touch(tmp_path, "b.py", "a/z.py", "a/y.pyi", "notes.txt", ".venv/lib.py", "build/gen.py",
          "pkg/__pycache__/c.py", "site-packages/x.py", ".git/hooks/h.py")
    assert found(tmp_path) == ["a/y.pyi", "a/z.py", "b.py"]


def test_gitignore_is_respected_in_a_repo(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    touch(tmp_path, "keep.py", "gen/out.py", "src/secret_x.py", "src/ok.py", "src/sub/deep_gen.py")
    (tmp_path / ".gitignore").write_text("gen/\nsecret_*.py\n/src/sub/\n!keep.py\n")
    assert found(tmp_path) == ["keep.py", "src/ok.py"]
    assert found(tmp_path, settings=Settings(root=tmp_path, respect_gitignore=False)) == [
        "gen/out.py", "keep.py", "src/ok.py", "src/secret_x.py", "src/sub/deep_gen.py"]


def test_nested_gitignore_and_negation(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    touch(tmp_path, "a/x.py", "a/y.py", "b/x.py")
    (tmp_path / ".gitignore").write_text("x.py\n")
    (tmp_path / "a" / ".gitignore").write_text("!x.py\n")
    assert found(tmp_path) == ["a/x.py", "a/y.py"]


def test_exclude_patterns(tmp_path: Path) -> None:
    touch(tmp_path, "src/a.py", "src/migrations/m.py", "src/gen_pb2.py", "docs/conf.py")
    settings = Settings(root=tmp_path, extend_exclude=("migrations", "*_pb2.py", "docs/"))
    assert found(tmp_path, settings=settings) == ["src/a.py"]


def test_explicit_file_is_linted_unless_force_exclude(tmp_path: Path) -> None:
    touch(tmp_path, "build/gen.py")
    target = tmp_path / "build" / "gen.py"
    assert found(tmp_path, target) == ["build/gen.py"]
    assert found(tmp_path, target, force=True) == []


def test_missing_path_is_an_error_not_a_crash(tmp_path: Path) -> None:
    result = discover([tmp_path / "nope.py"], lambda _: Settings(root=tmp_path))
    assert result.files == () and result.errors[0][1] == "No such file or directory"


def test_symlink_loop_does_not_hang(tmp_path: Path) -> None:
    touch(tmp_path, "a/x.py")
    os.symlink(tmp_path / "a", tmp_path / "a" / "loop")
    assert found(tmp_path) == ["a/x.py"]


def test_config_excludes_apply_per_directory(tmp_path: Path) -> None:
    touch(tmp_path, "proj/a.py", "proj/skip/b.py")
    (tmp_path / "proj" / "pyproject.toml").write_text('[tool.torchlint]\nextend-exclude = ["skip"]\n')
    resolver = SettingsResolver()
    result = discover([tmp_path / "proj"], resolver.for_path)
    assert [p.name for p in result.files] == ["a.py"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads everything")
def test_unreadable_directory_is_reported(tmp_path: Path) -> None:
    touch(tmp_path, "locked/a.py")
    os.chmod(tmp_path / "locked", 0)
    try:
        result = discover([tmp_path], lambda _: Settings(root=tmp_path))
        assert result.errors
    finally:
        os.chmod(tmp_path / "locked", 0o755)
