"""Helpers for the hostile-input tests: very deep trees and unreadable folders."""

from __future__ import annotations

import os
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Sequence, Tuple

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


def cli_in_child(args: "Sequence[str]", cwd: Path, timeout: float = 60.0,
                 env: "Optional[Dict[str, Optional[str]]]" = None,
                 user: "Optional[Tuple[int, Sequence[int]]]" = None) -> "subprocess.CompletedProcess[str]":
    """``torchlint ARGS`` run in-process (:func:`conftest.run_in_process`) in
    a forked child: as cheap as an in-process call, but a hang or a crash
    fails the test instead of stopping the test run.  With ``user`` (a uid
    and its groups, the first its primary group; needs root) the child runs
    as that user."""
    import multiprocessing

    from conftest import run_in_process
    from torchlint.interfaces import cli  # noqa: F401  (imported once here, not in every child)
    from torchlint.ruleapi.registry import all_rules

    all_rules()
    context = multiprocessing.get_context("fork")
    receiving, sending = context.Pipe(duplex=False)

    def child() -> None:
        if user is not None:
            uid, groups = user
            os.setgroups(list(groups))
            os.setgid(groups[0])
            os.setuid(uid)
        result = run_in_process(args, cwd, env=env)
        sending.send((result.returncode, result.stdout, result.stderr))

    process = context.Process(target=child)
    process.start()
    sending.close()
    answer = None
    if receiving.poll(timeout):
        try:
            answer = receiving.recv()
        except EOFError:
            answer = None
    process.join(1 if answer is not None else 0)
    if process.is_alive():
        process.kill()
        process.join()
    if answer is None:
        pytest.fail(f"`torchlint {' '.join(args)}` gave no answer in {timeout:.0f} s "
                    f"(exit code {process.exitcode})")
    code, stdout, stderr = answer
    return subprocess.CompletedProcess(["torchlint", *args], code, stdout, stderr)


@contextmanager
def package_chain(top: Path, depth: int, name: str = "p") -> Iterator[Path]:
    """``top/p/p/.../p`` (``depth`` levels), each folder a package (an empty
    ``__init__.py``); yields the deepest.  Built and removed through folder
    descriptors, one step per level, so deep chains are cheap to make."""
    handles = [os.open(top, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=handles[-1])
            handles.append(os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=handles[-1]))
            os.close(os.open("__init__.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=handles[-1]))
        yield Path(top, *[name] * depth)
    finally:
        for level in range(len(handles) - 1, 0, -1):
            with os.scandir(handles[level]) as entries:
                for entry in entries:
                    if not entry.is_dir(follow_symlinks=False):
                        os.unlink(entry.name, dir_fd=handles[level])
            os.close(handles[level])
            os.rmdir(name, dir_fd=handles[level - 1])
        os.close(handles[0])
