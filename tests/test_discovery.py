"""Discovery: folders, default excludes, .gitignore, exclude, force-exclude."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import List

import pytest
from hostile_support import deep_folders, deny

from torchlint.lint.discovery import discover
from torchlint.lint.settings import Settings, SettingsResolver


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


# -- issue 9: hostile trees ------------------------------------------------------


def test_unreadable_folder_is_reported_and_the_rest_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    touch(tmp_path, "locked/a.py", "ok/b.py")
    deny(monkeypatch, tmp_path / "locked")
    resolver = SettingsResolver()
    result = discover([tmp_path], resolver.for_path)
    assert [p.relative_to(tmp_path).as_posix() for p in result.files] == ["ok/b.py"]
    assert result.errors == ((tmp_path / "locked", "cannot read folder: Permission denied"),)


def test_a_thousand_folders_deep(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.pyc\n")
    with deep_folders(tmp_path, 1000) as deep:
        (deep / "x.py").write_text("x = 1\n")
        assert discover([tmp_path], SettingsResolver().for_path).files == (deep / "x.py",)
        # Named directly, the file's settings are searched for bottom-up, 1,000 folders.
        assert discover([deep / "x.py"], SettingsResolver().for_path).files == (deep / "x.py",)


def test_discovery_probes_the_file_system_a_constant_number_of_times_per_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Linear in the folders: the old walk re-probed every parent for ``.git``
    (and re-matched every parent against every exclude) for each folder."""
    depth = 150
    deep = tmp_path
    for _ in range(depth):
        deep = deep / "d"
        deep.mkdir()
        (deep / "m.py").write_text("x = 1\n")
    (tmp_path / ".git").mkdir()
    calls = {"n": 0}
    real_stat, real_lstat = os.stat, os.lstat

    def counting(real):  # type: ignore[no-untyped-def]
        def probe(*args, **kwargs):  # type: ignore[no-untyped-def]
            calls["n"] += 1
            return real(*args, **kwargs)
        return probe

    monkeypatch.setattr(os, "stat", counting(real_stat))
    monkeypatch.setattr(os, "lstat", counting(real_lstat))
    result = discover([tmp_path], SettingsResolver().for_path)
    assert len(result.files) == depth
    assert calls["n"] <= 12 * depth, calls["n"]


def test_a_symlink_to_a_file_in_the_tree_is_linted_once(tmp_path: Path) -> None:
    touch(tmp_path, "pkg/a.py", "outside/o.py")
    os.symlink("a.py", tmp_path / "pkg" / "link.py")
    os.symlink(tmp_path / "outside" / "o.py", tmp_path / "pkg" / "ext.py")
    tree = tmp_path / "pkg"
    assert found(tmp_path, tree) == ["pkg/a.py", "pkg/ext.py"]
    # The same folder named twice, once through a symlink, gives each file once.
    os.symlink(tree, tmp_path / "alias")
    assert found(tmp_path, tmp_path / "alias", tree) == ["alias/a.py", "alias/ext.py"]


def test_files_named_one_by_one_through_linked_folders_and_links_are_linted_once(tmp_path: Path) -> None:
    """Files given by name: one through a linked folder, one through a link to
    the file, one through `..`, each the same file as a plainly named one."""
    touch(tmp_path, "pkg/a.py", "pkg/b.py", "pkg/sub/c.py")
    os.symlink(tmp_path / "pkg", tmp_path / "alias")
    os.symlink("b.py", tmp_path / "pkg" / "link.py")
    pkg = tmp_path / "pkg"
    named = [tmp_path / "alias" / "a.py", pkg / "a.py", pkg / "link.py", pkg / "b.py",
             pkg / "sub" / ".." / "sub" / "c.py", tmp_path / "alias" / "sub" / "c.py"]
    assert found(tmp_path, *named) == ["alias/a.py", "alias/sub/c.py", "pkg/b.py"]


def test_gitignore_brackets_git_rejects_match_nothing_instead_of_crashing(tmp_path: Path) -> None:
    from torchlint.source.gitignore import parse_line, verdict

    names = ["z.py", "a.py", "].py", "\\.py", "!.py", "x.py"]
    for pattern, ignored in [
        ("[z-a].py", ["z.py"]),  # a reversed range matches nothing; its first end still does
        ("[\\].py", []),  # unterminated: the escaped "]" does not close the set
        ("[!].py", []),  # unterminated: the "]" right after "!" is a member
        ("[!]].py", ["z.py", "a.py", "\\.py", "!.py", "x.py"]),
        ("[]].py", ["].py"]),
    ]:
        rule = parse_line(pattern)
        assert rule is not None
        assert [n for n in names if verdict((rule,), n, False)] == ignored, pattern


GIT_NAMES = [
    "z.py", "a.py", "b.py", "B.py", "5.py", "-.py", "].py", "[.py", "\\.py", "!.py", "#.py", "^.py", ":.py",
    "*.py", "é.py", "ab.py", "abc.py", "a b.py", "x.py", "d1/x.py", "d1/d2/x.py", "dd/d1/x.py", "ddx/y/x.py",
    "foo/bar.py", "x/foo/bar.py", "foo/x/y/bar.py", "abz/q.py", "]x.py", "\\x.py",
]
GIT_PATTERNS = [
    "[z-a].py", "[!z-a].py", "[\\]", "[\\].py", "[!]", "[!].py", "[]].py", "[!]].py", "[]-a].py", "[a-].py",
    "[[:alpha:]].py", "[[:digit:]].py", "[[:foo:]].py", "[[:alpha:].py", "[[].py", "[\\\\].py", "[^a].py",
    "?.py", "\\!.py", "\\#.py", "#.py", "!a.py", "a\\ ", "a b.py", "**/x.py", "d1/**", "d1/**/x.py",
    "dd**/x.py", "foo/**/bar.py", "*/x.py", "/a.py", "d1/", "ab*/", "a**.py", "x.py\\", "é.py", "[é].py",
    "[--/].py", "x/[f]oo", "*.py  ", "*.py\\ ", "[a-c-z].py", "[[:]].py", "[:alpha:].py", "***/x.py",
    "d1/***", "[!a-z]*.py", "d1//", "//a.py", "d1/d2/", "\\*.py",
]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to compare with")
def test_gitignore_agrees_with_git(tmp_path: Path) -> None:
    """Each pattern in its own folder's .gitignore; git's list of untracked,
    not-ignored files must equal what discovery finds."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for number, pattern in enumerate(GIT_PATTERNS):
        folder = tmp_path / f"case{number:02d}"
        touch(folder, *GIT_NAMES)
        (folder / ".gitignore").write_bytes(os.fsencode(pattern) + b"\n")
    env = {**os.environ, "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1", "XDG_CONFIG_HOME": str(tmp_path)}
    listed = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "-z"], cwd=tmp_path,
                            env=env, capture_output=True, check=True).stdout
    git_files = sorted(os.fsdecode(p) for p in listed.split(b"\0") if p.endswith(b".py"))
    ours = found(tmp_path, settings=Settings(root=tmp_path, exclude=()))
    for number, pattern in enumerate(GIT_PATTERNS):
        prefix = f"case{number:02d}/"
        assert sorted(f for f in ours if f.startswith(prefix)) == [f for f in git_files if f.startswith(prefix)], pattern
