"""Reading source files faithfully, and writing files so that nothing is lost.

Every file torchlint writes (fixed sources, baselines, reports, cache entries)
goes through :func:`write_atomically`: the new bytes go to a temporary file in
the same folder, are flushed to disk, and replace the old file in one rename, so
a crash or a full disk leaves the old bytes or the new ones, never a mix.  The
rewritten file keeps what made it the user's file: its permissions, its owner
and group (where the OS lets us), its extended attributes, and the hard links
to it; a file the user may not write is refused rather than replaced.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import stat
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from torchlint.source.reads import (
    MAX_FILE_BYTES as MAX_FILE_BYTES, MissingFile as MissingFile, SourceError as SourceError,
    read_at_most as read_at_most, read_head as read_head, read_regular as read_regular,
    read_regular_with_status as read_regular_with_status,
)

@dataclass(frozen=True)


class SourceFile:
    """A file's decoded text and how to write it back byte-for-byte alike."""

    path: Path
    text: str
    encoding: str
    bom: bool
    digest: str
    status: Optional[os.stat_result] = None
    """The file's status when it was opened, before it was read (what the
    next run compares to tell whether it must read the file again)."""

    def encode(self, text: str) -> bytes:
        """Encode ``text`` the way the original was encoded."""
        data = text.encode(self.encoding)
        return (b"\xef\xbb\xbf" + data) if self.bom else data


def decode(data: bytes, name: str = "<stdin>") -> "tuple[str, str, bool]":
    """(text, encoding, has BOM) following PEP 263 cookies and BOMs."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        if "unknown encoding" in str(error):
            raise SourceError(str(error)) from None
        encoding = "utf-8"  # the decode below says where the bad byte is
    bom = encoding == "utf-8-sig"
    if bom:
        data = data[3:]
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as error:
        reason = error.reason if isinstance(error, UnicodeDecodeError) else str(error)
        where = f" at byte {error.start}" if isinstance(error, UnicodeDecodeError) else ""
        raise SourceError(f"not valid {encoding}{where}: {reason}") from None
    return text, encoding, bom


def ceiling_directories(variable: str) -> "frozenset[str]":
    """The absolute folders an environment variable lists (separated by
    ``os.pathsep``, as git's ``GIT_CEILING_DIRECTORIES``), each as written and
    resolved: searches upwards for configuration or a repository stop below them."""
    folders = [entry for entry in os.environ.get(variable, "").split(os.pathsep) if os.path.isabs(entry)]
    return frozenset({*map(os.path.abspath, folders), *map(os.path.realpath, folders)})


def is_regular_file(path: Path) -> bool:
    """``path.is_file()``, but False (not an exception) for a name the
    system refuses: a part over its length limit, a whole path over it, a NUL."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def read_source(path: Path, max_bytes: int = MAX_FILE_BYTES) -> SourceFile:
    """Read and decode one file; raises SourceError with a one-line reason."""
    data, info = read_regular_with_status(path, max_bytes)
    return source_of(path, data, info)


def source_of(path: Path, data: bytes, status: Optional[os.stat_result] = None) -> SourceFile:
    """The decoded file whose bytes are ``data``; SourceError as for :func:`read_source`."""
    text, encoding, bom = decode(data, str(path))
    return SourceFile(path, text, encoding, bom, hashlib.sha256(data).hexdigest(), status)


class ChangedOnDisk(SourceError):
    """The file changed between reading and writing; it was left alone."""


class WriteRefused(SourceError):
    """Writing would break something about the file (it is read-only, or its
    encoding does not read back byte for byte); it was left alone."""


def write_source(original: SourceFile, text: str) -> None:
    """Write ``text`` over ``original.path`` atomically, keeping encoding and
    BOM (and all that :func:`write_atomically` keeps); refuse if the file
    changed since it was read or if its encoding does not round-trip."""
    path = original.path
    try:
        data = original.encode(text)
    except UnicodeEncodeError as error:
        raise WriteRefused(f"the fixed text cannot be encoded as {original.encoding}: {error.reason}; "
                           "not written") from None
    try:
        current = path.read_bytes()
    except OSError as error:
        raise SourceError(error.strerror or str(error)) from None
    if hashlib.sha256(current).hexdigest() != original.digest:
        raise ChangedOnDisk("file changed on disk while it was being fixed; not written")
    if not _round_trips(original, current, text, data):
        raise WriteRefused(f"its encoding ({original.encoding}) does not read back byte for byte, so it is "
                           "not fixed (it is still checked); not written")
    write_atomically(path, data)


def _round_trips(original: SourceFile, current: bytes, text: str, data: bytes) -> bool:
    """Whether encoding the decoded text gives back the exact bytes, for the
    old text and the new (codecs like unicode_escape do not)."""
    try:
        if original.encode(original.text) != current:
            return False
        return decode(data)[0] == text
    except (SourceError, UnicodeError):
        return False


def write_atomically(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Make ``data`` the contents of ``path``, all or nothing.

    A new or singly-linked regular file is replaced by a renamed temporary
    copy (flushed to disk first when ``durable``) that carries the old file's
    mode, owner, group and extended attributes where the OS permits.  A
    hard-linked file is rewritten in its own inode, so every name sees the new
    bytes, after a flushed backup copy is made; the backup is removed once the
    new bytes are on disk.  Something that is not a regular file (a pipe,
    ``/dev/stdout``) is written straight through.  A file the user may not
    write, or one with no write permission bit at all, is refused even for
    root.  Raises SourceError with a one-line reason; on failure the old file
    is intact.
    """
    try:
        info: Optional[os.stat_result] = os.stat(path)
    except FileNotFoundError:
        info = None
    except OSError as error:
        raise SourceError(f"not written: {_reason(error)}") from None
    try:
        if info is not None and not stat.S_ISREG(info.st_mode):
            with open(path, "wb") as stream:
                stream.write(data)
            return
        target = Path(os.path.realpath(path))
        if info is None:
            _replace(target, data, None, durable)
            return
        if not info.st_mode & 0o222 or not os.access(target, os.W_OK):
            raise WriteRefused("file is read-only; not written")
        if info.st_nlink > 1:
            _rewrite_in_place(target, data)
        else:
            _replace(target, data, info, durable)
    except OSError as error:
        raise SourceError(f"not written: {_reason(error)}") from None


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (the one place bytes hit a file,
    so tests can make it fail like a full disk)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _temporary(target: Path, mode: int) -> "tuple[int, Path]":
    """A new, exclusively created file beside ``target``; hidden and not
    ending in .py, so no linter picks it up if it is ever left behind."""
    stem = target.name[:100]
    while True:
        import secrets  # only here: not on every run's import path
        candidate = target.with_name(f".{stem}.{secrets.token_hex(4)}.torchlint")
        try:
            return os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), candidate
        except FileExistsError:
            continue


def _replace(target: Path, data: bytes, info: Optional[os.stat_result], durable: bool) -> None:
    # A copy of an existing file starts private; a new file gets the umask's mode.
    handle, temporary = _temporary(target, 0o600 if info is not None else 0o666)
    try:
        try:
            _write_all(handle, data)
            if durable:
                os.fsync(handle)
            if info is not None:
                _copy_metadata(target, handle, info)
        finally:
            os.close(handle)
        os.replace(temporary, target)
    except BaseException:
        _remove(temporary)
        raise
    if durable:
        _sync_folder(target.parent)


def _copy_metadata(source: Path, handle: int, info: os.stat_result) -> None:
    """Owner and group first (a chown clears set-id bits), then mode, then
    extended attributes; each only as far as the OS permits."""
    if hasattr(os, "fchown"):
        for uid, gid in ((info.st_uid, info.st_gid), (-1, info.st_gid)):
            try:
                os.fchown(handle, uid, gid)
                break
            except PermissionError:
                continue
    os.fchmod(handle, stat.S_IMODE(info.st_mode))
    if not hasattr(os, "listxattr"):
        return
    try:
        names = os.listxattr(source)
    except OSError:
        return
    for name in names:
        try:
            os.setxattr(handle, name, os.getxattr(source, name))
        except OSError:
            continue  # not supported here, or not ours to set (security.*, trusted.*)


def _rewrite_in_place(target: Path, data: bytes) -> None:
    """Write into the existing inode (so hard links stay one file), with a
    flushed backup that is restored from if the write fails."""
    old = target.read_bytes()
    handle, backup = _temporary(target, 0o600)
    try:
        try:
            _write_all(handle, old)
            os.fsync(handle)
        finally:
            os.close(handle)
    except BaseException:
        _remove(backup)
        raise
    try:
        handle = os.open(target, os.O_WRONLY)
    except BaseException:
        _remove(backup)
        raise
    whole = False  # whether the file holds all of the new bytes or all of the old
    try:
        try:
            _overwrite(handle, data)
        except OSError as error:
            try:
                _overwrite(handle, old)
            except OSError:
                raise OSError(error.errno, f"{_reason(error)}; the old contents are kept in {backup}") from None
            whole = True
            raise
        whole = True
    finally:
        os.close(handle)
        if whole:
            _remove(backup)


def _overwrite(handle: int, data: bytes) -> None:
    os.lseek(handle, 0, os.SEEK_SET)
    _reserve(handle, len(data))
    _write_all(handle, data)
    os.ftruncate(handle, len(data))
    os.fsync(handle)


def _reserve(handle: int, size: int) -> None:
    """Claim the disk space first, so a full disk fails before any old byte
    is overwritten (where the filesystem supports it)."""
    if not hasattr(os, "posix_fallocate"):
        return
    try:
        os.posix_fallocate(handle, 0, size)
    except OSError as error:
        if error.errno not in (errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL, errno.ENOSYS):
            raise


def _sync_folder(folder: Path) -> None:
    """Flush the rename itself (best effort: not every OS opens folders)."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


def _remove(path: Union[str, Path]) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
