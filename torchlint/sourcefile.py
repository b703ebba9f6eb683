"""Reading source files faithfully and writing fixed ones atomically."""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Union

MAX_FILE_BYTES = 10 * 1024 * 1024


class SourceError(Exception):
    """A file that cannot be read or decoded; the message names why."""


@dataclass(frozen=True)
class SourceFile:
    """A file's decoded text and how to write it back byte-for-byte alike."""

    path: Path
    text: str
    encoding: str
    bom: bool
    digest: str

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


def read_source(path: Path, max_bytes: int = MAX_FILE_BYTES) -> SourceFile:
    """Read and decode one file; raises SourceError with a one-line reason."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise SourceError("not a regular file")
        if info.st_size > max_bytes:
            raise SourceError(
                f"file is {info.st_size / 1e6:.1f} MB, over the {max_bytes / 1e6:.0f} MB limit; skipped"
            )
        data = path.read_bytes()
    except SourceError:
        raise
    except OSError as error:
        raise SourceError(error.strerror or str(error)) from None
    text, encoding, bom = decode(data, str(path))
    return SourceFile(path, text, encoding, bom, hashlib.sha256(data).hexdigest())


class ChangedOnDisk(SourceError):
    """The file changed between reading and writing; it was left alone."""


def write_source(original: SourceFile, text: str) -> None:
    """Write ``text`` over ``original.path`` atomically, keeping encoding,
    BOM and permissions; refuse if the file changed since it was read."""
    path = original.path
    data = original.encode(text)
    try:
        current = path.read_bytes()
    except OSError as error:
        raise SourceError(error.strerror or str(error)) from None
    if hashlib.sha256(current).hexdigest() != original.digest:
        raise ChangedOnDisk("file changed on disk while it was being fixed; not written")
    target = Path(os.path.realpath(path))
    mode = stat.S_IMODE(target.stat().st_mode)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".torchlint", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        _remove(temporary)
        raise


def _remove(path: Union[str, Path]) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
