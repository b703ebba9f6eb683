"""Turn the paths a user gave into the files to lint, honouring excludes.

The walk is iterative (no recursion limit on depth) and does a constant
amount of work per folder: settings and ``.gitignore`` lookups are memoised
per folder, and excludes are tested only against what a folder adds to the
path of its parent.  A file reachable under several names (a symlink to a
file in the tree, a folder given twice) is linted once, under the name that
sorts first.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from torchlint.source.gitignore import GitIgnore
from torchlint.lint.settings import Settings

PYTHON_SUFFIXES = (".py", ".pyi", ".ipynb")


def _is_job_script_file(path: Path) -> bool:
    """:func:`~torchlint.jobscript.parse.is_job_script_file`, imported on the
    first file that is not Python (a run over Python files never needs the
    job-script parser)."""
    from torchlint.jobscript.parse import is_job_script_file

    return is_job_script_file(path)


@dataclass(frozen=True)
class Discovered:
    """The files to lint, in a stable order, and the paths that failed."""

    files: Tuple[Path, ...]
    errors: Tuple[Tuple[Path, str], ...]
    folders: Tuple[str, ...] = ()
    """Every folder whose entries the walk listed (what the files found depend on)."""


@dataclass(frozen=True)
class _Folder:
    """A folder waiting to be read, and what its parent already established."""

    path: Path
    real: str
    checked_under: Optional[Settings]
    """The settings under which every parent of ``path`` passed the exclude
    test (None for a folder the user named, whose parents were never tested)."""


def discover(
    paths: Sequence[Path],
    settings_for: Callable[[Path], Settings],
    *,
    force_exclude: bool = False,
) -> Discovered:
    """Expand files and folders into Python files, sorted and de-duplicated."""
    found: List[Tuple[Path, str]] = []
    errors: List[Tuple[Path, str]] = []
    folders: List[str] = []
    gitignore = GitIgnore()
    for given in paths:
        if not os.path.lexists(given):
            errors.append((given, "No such file or directory"))
            continue
        if os.path.isdir(given):
            found.extend(_walk(given, settings_for, gitignore, errors, folders))
            continue
        settings = settings_for(given)
        if force_exclude and settings.is_excluded(given):
            continue
        found.append((given, os.path.realpath(given)))
    errors.extend((Path(path), reason) for path, reason in gitignore.problems)
    found.sort(key=lambda item: _sort_key(item[0]))
    files: List[Path] = []
    first_name: Dict[str, Path] = {}
    for path, real in found:
        if real not in first_name:
            first_name[real] = path
            files.append(path)
    return Discovered(tuple(files), tuple(errors), tuple(folders))


def _sort_key(path: Path) -> Tuple[str, ...]:
    return tuple(path.as_posix().split("/"))


def _walk(
    top: Path,
    settings_for: Callable[[Path], Settings],
    gitignore: GitIgnore,
    errors: List[Tuple[Path, str]],
    folders: List[str],
) -> List[Tuple[Path, str]]:
    """The Python files under ``top``, each with its real path (``folders``
    gets every folder listed)."""
    files: List[Tuple[Path, str]] = []
    stack = [_Folder(top, os.path.realpath(top), None)]
    while stack:
        folder = stack.pop()
        directory = folder.path
        settings = settings_for(directory)
        # The parents of this folder's entries were tested under these same
        # settings (or a nested configuration starts here), so only the new
        # name needs testing; see Settings.is_excluded.
        incremental = folder.checked_under is not None and (
            folder.checked_under is settings or settings.root == Path(os.path.abspath(directory))
        )
        folders.append(os.fspath(directory))
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda e: e.name, reverse=True)
        except OSError as error:
            errors.append((directory, f"cannot read folder: {error.strerror or error}"))
            continue
        for entry in entries:
            path = directory / entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            if not is_dir and not (is_file and (entry.name.endswith(PYTHON_SUFFIXES) or _is_job_script_file(path))):
                continue
            if settings.is_excluded(path, parents_checked=incremental):
                continue
            if settings.respect_gitignore and gitignore.is_ignored(path, is_dir):
                continue
            if is_dir:
                stack.append(_Folder(path, os.path.join(folder.real, entry.name), settings))
            elif entry.is_symlink():
                files.append((path, os.path.realpath(path)))
            else:
                files.append((path, os.path.join(folder.real, entry.name)))
    return files
