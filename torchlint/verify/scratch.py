"""Scratch copies of a script's folder, so that verify touches nothing of the user's.

Every run of a user's script (each variant, each timing process) happens in
its own copy of the script's folder: what the script writes next to itself
(a checkpoint, a log, an appended line) lands in the copy, which is deleted
with verify's temporary directory.

Copying a folder of datasets would be slow and could fill the disk, so the
copy has limits.  Files larger than ``LINK_FILE_BYTES``, folders with more
than ``LINK_DIR_ENTRIES`` entries (counted recursively) or more than
``LINK_DIR_BYTES`` in all, and everything once ``COPY_BYTES`` have been
copied, are symbolic links to the originals instead: read-only inputs work
as before, but a write *through* such a link reaches the user's file.
``link_report`` lists them so the report can say so.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Tuple

LINK_FILE_BYTES = 8 * 2**20
LINK_DIR_ENTRIES = 2000
LINK_DIR_BYTES = 32 * 2**20
COPY_BYTES = 64 * 2**20
# Folders that are never a script's working files: linked whatever their size.
ALWAYS_LINKED = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__"})


@dataclass
class _Tally:
    copied: int = 0
    linked: List[str] = field(default_factory=list)


def _measure(directory: Path) -> Tuple[int, int]:
    """(entries, bytes) under ``directory``, counting stops past the limits."""
    entries = size = 0
    for root, dirs, files in os.walk(directory):
        entries += len(dirs) + len(files)
        for name in files:
            try:
                size += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
        if entries > LINK_DIR_ENTRIES or size > LINK_DIR_BYTES:
            break
    return entries, size


def _link(source: Path, target: Path, tally: _Tally, root: Path) -> None:
    target.symlink_to(source, target_is_directory=source.is_dir())
    tally.linked.append(str(source.relative_to(root)))


def _copy_into(source: Path, target: Path, tally: _Tally, root: Path) -> None:
    target.mkdir(exist_ok=True)
    for entry in sorted(source.iterdir()):
        destination = target / entry.name
        if entry.is_symlink():
            destination.symlink_to(os.readlink(entry))
        elif entry.is_dir():
            entries, size = _measure(entry)
            if (entry.name in ALWAYS_LINKED or entries > LINK_DIR_ENTRIES or size > LINK_DIR_BYTES
                    or tally.copied + size > COPY_BYTES):
                _link(entry, destination, tally, root)
            else:
                _copy_into(entry, destination, tally, root)
        elif entry.is_file():
            size = entry.stat().st_size
            if size > LINK_FILE_BYTES or tally.copied + size > COPY_BYTES:
                _link(entry, destination, tally, root)
            else:
                shutil.copy2(entry, destination)
                tally.copied += size
        # sockets, FIFOs and devices are left out: a script does not write its results there


def scratch_copy(folder: Path, target: Path) -> List[str]:
    """Copy ``folder`` into ``target`` (created) within the limits; returns what was linked."""
    tally = _Tally()
    _copy_into(folder, target, tally, folder)
    return tally.linked
