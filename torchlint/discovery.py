"""Turn the paths a user gave into the files to lint, honouring excludes."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, List, Sequence, Set, Tuple

from torchlint.gitignore import GitIgnore
from torchlint.jobscript.parse import is_job_script_file
from torchlint.settings import Settings

PYTHON_SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass(frozen=True)
class Discovered:
    """The files to lint, in a stable order, and the paths that failed."""

    files: Tuple[Path, ...]
    errors: Tuple[Tuple[Path, str], ...]


def discover(
    paths: Sequence[Path],
    settings_for: Callable[[Path], Settings],
    *,
    force_exclude: bool = False,
) -> Discovered:
    """Expand files and folders into Python files, sorted and de-duplicated."""
    files: List[Path] = []
    errors: List[Tuple[Path, str]] = []
    seen: Set[Path] = set()
    gitignore = GitIgnore()

    def add(path: Path) -> None:
        key = path.absolute()
        if key not in seen:
            seen.add(key)
            files.append(path)

    for given in paths:
        if not os.path.lexists(given):
            errors.append((given, "No such file or directory"))
            continue
        if given.is_dir():
            for found in _walk(given, settings_for, gitignore, errors):
                add(found)
            continue
        settings = settings_for(given)
        if force_exclude and settings.is_excluded(given):
            continue
        add(given)
    return Discovered(tuple(sorted(files, key=_sort_key)), tuple(errors))


def _sort_key(path: Path) -> Tuple[str, ...]:
    return tuple(path.as_posix().split("/"))


def _walk(
    top: Path,
    settings_for: Callable[[Path], Settings],
    gitignore: GitIgnore,
    errors: List[Tuple[Path, str]],
) -> Iterator[Path]:
    stack = [top]
    while stack:
        directory = stack.pop()
        settings = settings_for(directory)
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda e: e.name, reverse=True)
        except OSError as error:
            errors.append((directory, error.strerror or str(error)))
            continue
        for entry in entries:
            path = directory / entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file()
            except OSError:
                continue
            if not is_dir and not (is_file and (entry.name.endswith(PYTHON_SUFFIXES) or is_job_script_file(path))):
                continue
            if settings.is_excluded(path):
                continue
            if settings.respect_gitignore and gitignore.is_ignored(path, is_dir):
                continue
            if is_dir:
                stack.append(path)
            else:
                yield path
