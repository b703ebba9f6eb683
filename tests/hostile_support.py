"""Helpers for the hostile-input tests: very deep trees and unreadable folders."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest


def remove_tree(top: Path) -> None:
    """Remove a folder of any depth without recursion (``shutil.rmtree`` and
    pytest's own clean-up recurse and fail past ~1,000 levels)."""
    if not os.path.lexists(top):
        return
    folders = []
    stack = [str(top)]
    while stack:
        folder = stack.pop()
        folders.append(folder)
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            else:
                os.unlink(entry.path)
    for folder in reversed(folders):
        os.rmdir(folder)


@contextmanager
def deep_folders(top: Path, depth: int, name: str = "d") -> Iterator[Path]:
    """``top/d/d/.../d`` (``depth`` levels); yields the deepest, removes them all afterwards."""
    leaf = top
    try:
        for _ in range(depth):
            leaf = leaf / name
            leaf.mkdir()
        yield leaf
    finally:
        remove_tree(top / name)


def deny(monkeypatch: pytest.MonkeyPatch, denied: Path) -> None:
    """Make ``denied`` unlistable and every path inside it fail with EACCES, as a
    root-owned mode-700 folder does for an ordinary user (tests run as root)."""
    real_stat, real_scandir = os.stat, os.scandir
    prefix = str(denied) + os.sep

    def refuse(path: Any) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    def stat(path: Any, *args: Any, **kwargs: Any) -> Any:
        if str(os.fspath(path)).startswith(prefix):
            refuse(path)
        return real_stat(path, *args, **kwargs)

    def scandir(path: Any = ".") -> Any:
        text = str(os.fspath(path))
        if text.rstrip(os.sep) == str(denied) or text.startswith(prefix):
            refuse(path)
        return real_scandir(path)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "scandir", scandir)
