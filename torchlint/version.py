"""torchlint's version and the fingerprint of its code, in a module of their
own: everything that reports or keys on them reads them here, so nothing
inside the package imports the package itself.  Standard library only (the
replay of an unchanged run computes the fingerprint before anything else of
torchlint is imported)."""

from __future__ import annotations

import hashlib
import importlib
import os

TYPE_CHECKING = False  # typing is not imported on a replay's path (mypy reads this name as typing's)
if TYPE_CHECKING:
    from typing import List, Tuple

__version__ = "0.1.0"

_PACKAGE_FOLDER = os.path.dirname(os.path.realpath(__file__))
"""torchlint's own folder: its modules, sub-packages and data."""

_KNOWN: "List[str]" = []
"""The fingerprint once computed (one process, one build: files do not change under a run)."""


def code_fingerprint(forget: bool = False) -> str:
    """torchlint's version plus the size and mtime of its source files and data,
    sub-packages included (rules/<name>/, torchlint/analysis/, torchlint/data/),
    so an edited rule invalidates what is keyed on it even without a version
    bump.  ``forget``: compute it again (tests that edit a file)."""
    if _KNOWN and not forget:
        return _KNOWN[0]
    digest = hashlib.sha256(__version__.encode())
    rules = os.path.dirname(os.path.realpath(importlib.import_module("torchlint.rules").__file__ or ""))
    inside = rules.startswith(os.path.join(_PACKAGE_FOLDER, ""))  # installed: torchlint/rules/, seen once
    for folder in (_PACKAGE_FOLDER,) if inside else (_PACKAGE_FOLDER, rules):
        for parts, size, mtime in sorted(_sources(folder)):
            digest.update(f"{'/'.join(parts)}:{size}:{mtime}".encode())
    found = digest.hexdigest()[:16]
    _KNOWN[:] = [found]
    return found


def _sources(folder: str) -> List[Tuple[Tuple[str, ...], int, int]]:
    """The ``.py`` and ``.toml`` files under ``folder`` (its relative path's
    parts, the order ``Path`` sorts in) with their size and mtime; byte-code
    folders are not entered.  Run on every start, so one ``scandir`` a folder."""
    found: "List[Tuple[Tuple[str, ...], int, int]]" = []
    pending: "List[Tuple[str, Tuple[str, ...]]]" = [(folder, ())]
    while pending:
        here, parts = pending.pop()
        with os.scandir(here) as entries:
            for entry in entries:
                if entry.is_dir():
                    if entry.name != "__pycache__":
                        pending.append((entry.path, (*parts, entry.name)))
                elif entry.name.endswith((".py", ".toml")) and entry.is_file():
                    info = entry.stat()
                    found.append(((*parts, entry.name), info.st_size, info.st_mtime_ns))
    return found
