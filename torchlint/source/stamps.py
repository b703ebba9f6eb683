"""What a run read, by the files' status: so that the next run can tell,
without reading a file, that nothing it depends on changed.

A file's *stamp* is its size, modification time, inode and change time (what
Ruff and build systems compare).  A stamp is trusted only when the file had
not changed for :data:`RACY_NS` before it was taken: a file written in the
same tick of the file system's clock as it was read could change again
without its stamp changing ("racily clean", as git calls it), so such a file
is read and its digest compared on the next run instead.

Besides its own files, a project index depends on files it read from disk
(modules the run's files import), on whether some paths exist (a package's
``__init__.py``, a module looked for under a root, a folder that became a
symbolic link) and on the names in some folders (the roots imports are
looked up in).  :class:`Seen` collects those while an index is built;
:class:`RunRecord` keeps them, sealed in the cache like every entry, for the
next run with the same files and configuration.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple, Union

from torchlint.source.reads import (
    current_stamp as current_stamp, digest_of as digest_of, names_digest as names_digest,
    presence as presence,
)
from torchlint.source.sourcefile import MAX_FILE_BYTES, SourceError, read_regular_with_status

Stamp = Tuple[int, int, int, int]
"""(size, mtime_ns, inode, ctime_ns) of a file's status."""
Presence = Tuple[int, int]
"""(file type bits, inode) of a path's own status (a link is not followed)."""

PathLike = Union[str, "os.PathLike[str]"]

RACY_NS = 2_000_000_000
"""A stamp taken less than this after the file's last change is not trusted."""

RECORD_FORMAT = 3


def now_ns() -> int:
    """The clock stamps are compared against (a function, so tests can move it)."""
    return time.time_ns()


def stamp_of(info: os.stat_result, taken_ns: Optional[int] = None) -> Optional[Stamp]:
    """The stamp of a status taken at ``taken_ns``; None when the file changed
    too recently for its stamp to be trusted."""
    taken = now_ns() if taken_ns is None else taken_ns
    if taken - max(info.st_mtime_ns, info.st_ctime_ns) < RACY_NS:
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns)


def read_stamped(path: PathLike, max_bytes: int = MAX_FILE_BYTES) -> Tuple[bytes, Optional[Stamp], str]:
    """The bytes of the regular file at ``path``, the stamp taken as it was
    read and their digest (SourceError as
    :func:`~torchlint.source.sourcefile.read_regular`)."""
    data, info = read_regular_with_status(path, max_bytes)
    return data, stamp_of(info), digest_of(data)


@dataclass


class Seen:
    """What one index build looked at besides the run's files: the files it
    read (path -> (stamp, digest)), the paths whose existence it checked and
    the folders whose names it listed.  Filled while the index is built."""

    files: Dict[str, Tuple[Optional[Stamp], str]] = field(default_factory=dict)
    probes: Set[str] = field(default_factory=set)
    listings: Set[str] = field(default_factory=set)

    def read(self, path: PathLike, max_bytes: int = MAX_FILE_BYTES) -> bytes:
        """The bytes of the regular file at ``path``, remembered with its stamp
        (SourceError as :func:`~torchlint.source.sourcefile.read_regular`)."""
        data, stamp, digest = read_stamped(path, max_bytes)
        self.files[os.path.abspath(path)] = (stamp, digest)
        return data

    def probe(self, path: PathLike) -> None:
        """The index depends on whether ``path`` exists (and as what)."""
        self.probes.add(os.fspath(path))

    def listing(self, folder: PathLike) -> None:
        """The index depends on the names in ``folder``."""
        self.listings.add(os.fspath(folder))


@dataclass(frozen=True)


class FileRow:
    """One file of a run, as the next run needs it: its stamp (None: read it
    again) and the digest of its bytes (None: nothing was cached for it)."""

    stamp: Optional[Stamp]
    digest: Optional[str]
    indexless: bool = False
    """Not cached, and its lint reads nothing from the index (a job script):
    linted again on every run, without building the index."""


@dataclass(frozen=True)


class RunRecord:
    """What a run over some files read: each file's row, and what its index
    depended on outside those files (see :class:`Seen`)."""

    files: Tuple[FileRow, ...]
    inputs: Tuple[Tuple[str, Optional[Stamp], str], ...] = ()
    probes: Tuple[Tuple[str, Optional[Presence]], ...] = ()
    listings: Tuple[Tuple[str, str], ...] = ()

    @classmethod
    def of(cls, files: Sequence[FileRow], seen: Optional[Seen]) -> "RunRecord":
        """The record of a run whose index build looked at ``seen``."""
        if seen is None:
            return cls(tuple(files))
        return cls(
            tuple(files),
            tuple((path, stamp, digest) for path, (stamp, digest) in sorted(seen.files.items())),
            tuple((path, presence(path)) for path in sorted(seen.probes)),
            tuple((folder, names_digest(folder)) for folder in sorted(seen.listings)),
        )

    @property
    def dependencies(self) -> Tuple[Any, ...]:
        """What the index depended on outside the run's files (inputs, probes,
        listings): kept as they are by a run that built no index."""
        return (self.inputs, self.probes, self.listings)

    def unchanged_rows(self, files: Sequence[PathLike]) -> Optional[Tuple[FileRow, ...]]:
        """Each file's row (with a new stamp where only its stamp changed) when
        no file's bytes and nothing the index read changed; else None."""
        rows = [_unchanged(path, row) for path, row in zip(files, self.files)]
        if any(row is None for row in rows) or not self.index_unchanged():
            return None
        return tuple(row for row in rows if row is not None)

    def index_unchanged(self) -> bool:
        """Whether everything the index depended on outside the run's files is
        as it was: the files it read (by stamp, else by digest), the paths it
        probed and the folders it listed."""
        for path, recorded, digest in self.inputs:
            if recorded is not None and current_stamp(path) == recorded:
                continue
            try:
                data, _ = read_regular_with_status(path)
            except SourceError:
                return False
            if digest_of(data) != digest:
                return False
        if any(presence(path) != recorded for path, recorded in self.probes):
            return False
        return all(names_digest(folder) == digest for folder, digest in self.listings)

    def to_json(self) -> Dict[str, Any]:
        return {
            "format": RECORD_FORMAT,
            "files": [[None if r.stamp is None else list(r.stamp), r.digest, r.indexless]
                      for r in self.files],
            "inputs": [[path, None if s is None else list(s), digest] for path, s, digest in self.inputs],
            "probes": [[path, None if p is None else list(p)] for path, p in self.probes],
            "listings": [[folder, digest] for folder, digest in self.listings],
        }

    @classmethod
    def from_json(cls, data: Any, cached: Sequence[bool]) -> Optional["RunRecord"]:
        """The record a stored value holds for a run of ``len(cached)`` files
        whose findings are cached where ``cached`` says; None unless it has
        exactly the shape :meth:`to_json` writes and a digest for exactly
        the files that are cached."""
        if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
            return None
        try:
            files = tuple(FileRow(_stamp(s), _text_or_none(d), _flag(indexless))
                          for s, d, indexless in _list(data["files"]))
            inputs = tuple((_text(p), _stamp(s), _text(d)) for p, s, d in _list(data["inputs"]))
            probes = tuple((_text(p), _presence(v)) for p, v in _list(data["probes"]))
            listings = tuple((_text(p), _text(d)) for p, d in _list(data["listings"]))
        except (KeyError, TypeError, ValueError):
            return None
        if len(files) != len(cached) or any((row.digest is not None) != hit for row, hit in zip(files, cached)):
            return None
        return cls(files, inputs, probes, listings)


def _unchanged(path: PathLike, row: FileRow) -> Optional[FileRow]:
    """The file's row (with a new stamp if only its stamp changed) when its
    bytes are those the row records, else None."""
    if row.stamp is not None and current_stamp(path) == row.stamp:
        return row
    if row.digest is None:
        # only .py files are part of the index
        return row if os.path.splitext(os.fspath(path))[1] != ".py" else None
    try:
        data, info = read_regular_with_status(path)
    except SourceError:
        return None
    return FileRow(stamp_of(info), row.digest) if digest_of(data) == row.digest else None


def _list(value: Any) -> List[Any]:
    if not isinstance(value, list):
        raise TypeError("not a list")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("not a string")
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError("not a flag")
    return value


def _text_or_none(value: Any) -> Optional[str]:
    return None if value is None else _text(value)


def _numbers(value: Any, size: int) -> Tuple[int, ...]:
    items = _list(value)
    if len(items) != size or not all(isinstance(n, int) and not isinstance(n, bool) for n in items):
        raise ValueError("not a stamp")
    return tuple(items)


def _stamp(value: Any) -> Optional[Stamp]:
    if value is None:
        return None
    a, b, c, d = _numbers(value, 4)
    return (a, b, c, d)


def _presence(value: Any) -> Optional[Presence]:
    if value is None:
        return None
    a, b = _numbers(value, 2)
    return (a, b)
