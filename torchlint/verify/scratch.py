"""Scratch copies of a script's folder, so that verify touches nothing of the user's.

Every run of a user's script (each variant, each timing process) happens in
its own copy of the script's folder: what the script writes next to itself
(a checkpoint, a log, an appended line) lands in the copy, which is deleted
when the run ends.

The folder is copied once per session into a *mirror* (a reflink where the
file system offers one, else a plain copy), and each run's copy is made of
hard links into the mirror, so a 100 MB checkpoint costs one copy, not one
per run.  A run that changes a file in place changes the mirror's inode:
after every run, each mirrored file whose inode, size, modification time
or mode moved is copied again from the user's folder, so every run starts from the same
files and none sees what another wrote.

Only what is beyond the copy budget (``COPY_BYTES`` in all, or a folder of
more than ``LINK_DIR_ENTRIES`` entries) and tool folders (``.git``,
``.venv``, ``node_modules`` ...) are symbolic links to the user's files
instead; ``protected`` names them, with the user's folder itself and the
targets of its own symbolic links, and the runs make all of them unwritable
(see sandbox.py): a write there is an error that names the file.
``__pycache__`` is left out (the runs write no bytecode).
"""

from __future__ import annotations

import errno
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Tuple

LINK_DIR_ENTRIES = 20000
COPY_BYTES = 512 * 2**20  # copied into the mirror; beyond it, linked read-only
REFLINK_BYTES = 64 * 2**30  # the budget where copies are reflinks (they cost no space)
# Folders that are never a script's working files: linked (read-only) whatever their size.
ALWAYS_LINKED = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules"})
SKIPPED = frozenset({"__pycache__"})
_FICLONE = 0x40049409  # ioctl: share the source's blocks (btrfs, XFS, ...)


def _reflink(source: Path, target: Path) -> bool:
    """Clone ``source`` into a new ``target``; False where the file system cannot."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        with open(source, "rb") as src, open(target, "xb") as dst:
            try:
                fcntl.ioctl(dst.fileno(), _FICLONE, src.fileno())
            except OSError:
                ok = False
            else:
                ok = True
        if not ok:
            target.unlink()
        return ok
    except OSError:
        return False


def _measure(directory: Path) -> Tuple[int, int]:
    """(entries, bytes) under ``directory``; counting stops past the limits."""
    entries = size = 0
    for root, dirs, files in os.walk(directory):
        dirs[:] = [name for name in dirs if name not in SKIPPED]
        entries += len(dirs) + len(files)
        for name in files:
            try:
                size += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
        if entries > LINK_DIR_ENTRIES:
            break
    return entries, size


def _signature(path: Path) -> Tuple[int, int, int, int]:
    """What a write, a replacement or a chmod changes (not the change time: every run's
    hard links move it)."""
    info = os.lstat(path)
    return info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode


@dataclass
class Mirror:
    """One copy of a user's folder per session, and the per-run copies made from it."""

    folder: Path  # the user's folder (resolved)
    root: Path  # where the mirror lives (verify's temporary folder)
    copied: int = 0
    reflinks: bool = True  # until a clone fails
    files: Dict[str, Tuple[int, int, int, int]] = field(default_factory=dict)  # relative -> signature
    dirs: List[str] = field(default_factory=list)
    links: Dict[str, str] = field(default_factory=dict)  # relative -> what the link points to
    linked: List[str] = field(default_factory=list)  # user's entries linked (too big or tool folders)
    targets: List[str] = field(default_factory=list)  # where the folder's own symbolic links point

    @classmethod
    def build(cls, folder: Path, root: Path) -> "Mirror":
        mirror = cls(folder.resolve(), root)
        root.mkdir(parents=True, exist_ok=True)
        mirror._copy_tree(mirror.folder, Path("."))
        return mirror

    def _budget(self) -> int:
        return REFLINK_BYTES if self.reflinks else COPY_BYTES

    def _copy_file(self, source: Path, relative: Path) -> None:
        target = self.root / relative
        if not (self.reflinks and _reflink(source, target)):
            self.reflinks = False
            shutil.copy2(source, target)
            self.copied += os.lstat(target).st_size
        else:
            shutil.copystat(source, target)
        self.files[str(relative)] = _signature(target)

    def _copy_tree(self, source: Path, relative: Path) -> None:
        (self.root / relative).mkdir(exist_ok=True)
        if str(relative) != ".":
            self.dirs.append(str(relative))
        for entry in sorted(source.iterdir(), key=lambda path: path.name):
            inner = relative / entry.name
            if entry.name in SKIPPED:
                continue
            if entry.is_symlink():
                self.links[str(inner)] = os.readlink(entry)
                self.targets.append(os.path.realpath(entry))
            elif entry.is_dir():
                entries, size = _measure(entry)
                if (entry.name in ALWAYS_LINKED or entries > LINK_DIR_ENTRIES
                        or self.copied + size > self._budget()):
                    self._link(entry, inner)
                else:
                    self._copy_tree(entry, inner)
            elif entry.is_file():
                size = entry.stat().st_size
                if self.copied + size > self._budget():
                    self._link(entry, inner)
                else:
                    self._copy_file(entry, inner)
            # sockets, FIFOs and devices are left out: a script does not write its results there

    def _link(self, source: Path, relative: Path) -> None:
        self.links[str(relative)] = str(source)
        self.linked.append(str(relative))

    @property
    def protected(self) -> List[str]:
        """What no run may write: the user's folder, the targets of its links."""
        return sorted({str(self.folder), *(os.path.realpath(self.folder / name) for name in self.linked),
                       *self.targets})

    def materialize(self, target: Path) -> None:
        """A run's copy: the mirror's files hard-linked (copied across file systems)."""
        target.mkdir(parents=True)
        for relative in self.dirs:
            (target / relative).mkdir(exist_ok=True)
        for relative in self.files:
            source = self.root / relative
            try:
                os.link(source, target / relative)
            except OSError as error:
                if error.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
                    raise
                shutil.copy2(source, target / relative)
        for relative, pointee in self.links.items():
            (target / relative).symlink_to(pointee)

    def restore(self) -> List[str]:
        """Copy again every mirrored file a run changed in place; returns their names."""
        changed = []
        for relative, signature in self.files.items():
            path = self.root / relative
            try:
                now = _signature(path)
            except OSError:
                now = None
            if now == signature:
                continue
            changed.append(relative)
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            self._copy_file(self.folder / relative, Path(relative))
        return changed


def scratch_copy(folder: Path, target: Path) -> List[str]:
    """Copy ``folder`` into ``target`` (created) within the limits; returns what was linked.

    A one-run mirror: what the tests of the limits use."""
    mirror = Mirror.build(folder, target.with_name(target.name + ".mirror"))
    mirror.materialize(target)
    return list(mirror.linked)
