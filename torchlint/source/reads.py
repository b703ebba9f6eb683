"""Bounded reads of regular files, the stat data that tells a file changed,
and the watch that records every read a run makes.

Standard library only, and no dataclass: the replay of an unchanged run
(``torchlint.interfaces.quick``) checks files with these before anything
else of torchlint is imported.  :mod:`torchlint.source.sourcefile` (decoding,
atomic writes) and :mod:`torchlint.source.stamps` (run records) build on them.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from contextvars import ContextVar

TYPE_CHECKING = False  # typing is not imported on a replay's path (mypy reads this name as typing's)
if TYPE_CHECKING:
    from typing import Optional, Tuple, Union

    Stamp = Tuple[int, int, int, int]
    Presence = Tuple[int, int]
    PathLike = Union[str, "os.PathLike[str]"]

MAX_FILE_BYTES = 10 * 1024 * 1024


class Watch:
    """What a run's reads are told to (see :data:`_WATCH`): each file read
    (its path, its status taken on the open descriptor, the bytes read and,
    for a head, how many were asked for), and each read that failed (missing
    or otherwise)."""

    def read(self, path: str, info: os.stat_result, data: bytes, head: Optional[int]) -> None:
        """A regular file was read."""

    def failed(self, path: str, follow: bool, missing: bool) -> None:
        """A read failed: no file there (``missing``), or one that could not be read."""

    def expanded(self, raw: str, value: str) -> None:
        """A path written with ``~`` or environment variables (``raw``) was taken as ``value``."""


_WATCH: ContextVar[Optional[Watch]] = ContextVar("torchlint_read_watch", default=None)
"""The watch of the code running now (a replayable command-line run sets
one); a context variable, so that no module-level state changes."""


def watched(watch: Optional[Watch]) -> object:
    """Set ``watch`` for the code that runs next in this context; returns
    the token :func:`unwatched` takes."""
    return _WATCH.set(watch)


def unwatched(token: object) -> None:
    _WATCH.reset(token)  # type: ignore[arg-type]


def expansion(raw: str, value: str) -> None:
    """Tell the watch that ``raw`` (a path with ``~`` or variables) was taken as ``value``."""
    watch = _WATCH.get()
    if watch is not None:
        watch.expanded(raw, value)


class SourceError(Exception):
    """A file that cannot be read or decoded; the message names why."""


class MissingFile(SourceError):
    """There is no file at the path (or a part of it is not a folder)."""


def _too_large(size: int, max_bytes: int) -> SourceError:
    return SourceError(f"file is {size / 1e6:.1f} MB, over the {max_bytes / 1e6:.0f} MB limit; skipped")


def _open_regular(path: "Union[str, os.PathLike[str]]", follow: bool) -> "Tuple[int, os.stat_result]":
    """An open descriptor of the regular file at ``path`` and its status;
    SourceError for anything else.  Nothing but a regular file is opened: a
    FIFO would block the open or the read forever, and opening some devices
    has effects of its own.  The kind is checked before opening (``stat``)
    and again on the open descriptor, so a file swapped in between is caught."""
    try:
        return _opened_regular(path, follow)
    except SourceError as error:
        watch = _WATCH.get()
        if watch is not None:
            watch.failed(os.fspath(path), follow, isinstance(error, MissingFile))
        raise


def _opened_regular(path: "Union[str, os.PathLike[str]]", follow: bool) -> "Tuple[int, os.stat_result]":
    try:
        info = os.stat(path) if follow else os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            raise SourceError("a symbolic link, not followed here")
        if not stat.S_ISREG(info.st_mode):
            raise SourceError("not a regular file")
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
        if not follow:
            flags |= getattr(os, "O_NOFOLLOW", 0)
        handle = os.open(path, flags)
    except SourceError:
        raise
    except (FileNotFoundError, NotADirectoryError) as error:
        raise MissingFile(error.strerror or str(error)) from None
    except OSError as error:
        if not follow and error.errno == errno.ELOOP:
            raise SourceError("a symbolic link, not followed here") from None
        raise SourceError(error.strerror or str(error)) from None
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise SourceError("not a regular file")
    except BaseException as error:
        os.close(handle)
        if isinstance(error, OSError):
            raise SourceError(error.strerror or str(error)) from None
        raise
    return handle, info


def read_at_most(handle: int, limit: int) -> bytes:
    """Up to ``limit`` bytes from an open descriptor, to its end."""
    chunks = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(handle, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_regular(path: "Union[str, os.PathLike[str]]", max_bytes: int = MAX_FILE_BYTES, *,
                 follow: bool = True) -> bytes:
    """The bytes of the regular file at ``path``, at most ``max_bytes`` of
    them; SourceError with a one-line reason for a file that is missing,
    unreadable, not a regular file (a FIFO, a device, a folder; with
    ``follow=False`` also a symbolic link) or over the limit.  Every file
    torchlint reads goes through here (or :func:`read_head`): sources,
    configuration, ``.gitignore``, requirements, baselines, imported modules."""
    return read_regular_with_status(path, max_bytes, follow=follow)[0]


def read_regular_with_status(path: "Union[str, os.PathLike[str]]", max_bytes: int = MAX_FILE_BYTES, *,
                             follow: bool = True) -> "Tuple[bytes, os.stat_result]":
    """:func:`read_regular`, with the file's status taken on the open
    descriptor before reading (a change made while it is read shows in the
    next status, never hides behind this one)."""
    handle, info = _open_regular(path, follow)
    watch = _WATCH.get()
    try:
        try:
            if info.st_size > max_bytes:
                raise _too_large(info.st_size, max_bytes)
            data = read_at_most(handle, max_bytes + 1)
        except OSError as error:
            raise SourceError(error.strerror or str(error)) from None
        finally:
            os.close(handle)
        if len(data) > max_bytes:  # it grew after the check
            raise _too_large(len(data), max_bytes)
    except SourceError:
        if watch is not None:
            watch.failed(os.fspath(path), follow, False)
        raise
    if watch is not None:
        watch.read(os.fspath(path), info, data, None)
    return data, info


def read_head(path: "Union[str, os.PathLike[str]]", size: int) -> bytes:
    """The first ``size`` bytes of the regular file at ``path`` (a file's
    kind is decided from them); SourceError as for :func:`read_regular`."""
    handle, info = _open_regular(path, True)
    watch = _WATCH.get()
    try:
        data = read_at_most(handle, size)
    except OSError as error:
        if watch is not None:
            watch.failed(os.fspath(path), True, False)
        raise SourceError(error.strerror or str(error)) from None
    finally:
        os.close(handle)
    if watch is not None:
        watch.read(os.fspath(path), info, data, size)
    return data


def current_stamp(path: PathLike) -> Optional[Stamp]:
    """The stamp of the regular file at ``path`` now, without the racy check
    (it is only compared with a trusted one); None when it is not a regular file."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns)


def presence(path: PathLike) -> Optional[Presence]:
    """Whether ``path`` exists, as what (its type bits and inode, from its own
    status: a folder replaced by a link shows); None when it does not."""
    try:
        info = os.lstat(path)
    except (OSError, ValueError):
        return None
    return (stat.S_IFMT(info.st_mode), info.st_ino)


def names_digest(folder: PathLike) -> str:
    """A digest of the names in ``folder`` (empty when it cannot be listed)."""
    try:
        names = sorted(entry.name for entry in os.scandir(folder))
    except OSError:
        names = []
    return hashlib.sha256("\0".join(names).encode("utf-8", "surrogateescape")).hexdigest()


def digest_of(data: bytes) -> str:
    """The content digest files are keyed by (the same as ``SourceFile.digest``)."""
    return hashlib.sha256(data).hexdigest()


def holds(path: PathLike, stamp: Optional[Stamp], digest: str, head: Optional[int] = None) -> bool:
    """Whether the regular file at ``path`` still has the bytes whose digest
    is ``digest`` (its first ``head`` bytes, for a head): by its stamp when
    that is trusted and unchanged, else by reading it."""
    if stamp is not None and current_stamp(path) == stamp:
        return True
    try:
        data = read_head(path, head) if head is not None else read_regular_with_status(path)[0]
    except SourceError:
        return False
    return digest_of(data) == digest
