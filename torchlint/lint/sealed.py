"""The sealed store under the cache folder: folders opened without following
links, the key entries are sealed with, sealed reads and atomic writes, and
the checks that decide whether a cache folder may be used at all.

Standard library only, and no dataclass: :mod:`torchlint.lint.cache` (lint
results, run records, index facts) and the replay of an unchanged run
(:mod:`torchlint.interfaces.quick`, before anything else of torchlint is
imported) use this one implementation.  What is trusted, and why, is in
:mod:`torchlint.lint.cache`'s docstring.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat

TYPE_CHECKING = False  # typing is not imported on a replay's path (mypy reads this name as typing's)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional, Tuple, Union

    PathLike = Union[str, "os.PathLike[str]"]

from torchlint.source.reads import read_at_most

CACHE_DIR_NAME = ".torchlint_cache"
SHARED_VARIABLE = "TORCHLINT_CACHE_SHARED"
_FORMATS = ("v1", "v2")
"""Every versioned folder torchlint has written (the last is current); `clean`
removes these and nothing else besides the tag and the .gitignore."""
_FORMAT = _FORMATS[-1]
_KEY_NAME = "key"
_FACTS, _RUNS, REPLAYS = "facts", "runs", "replays"
"""The folders, beside the lint results, of the project index's per-file
facts, of run records and of the command line's replay records."""
_MAX_ENTRY_BYTES = 16 * 1024 * 1024
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_SUPPORTED = os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW") and hasattr(os, "geteuid")
"""Opening relative to a folder without following links is what keeps the
cache safe; where the system cannot (not Linux, not a BSD), there is no cache."""
_TAG_NAME = "CACHEDIR.TAG"
_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"
_OWNER = "# This file is a cache directory tag created by torchlint."
_TAG = f"{_SIGNATURE}\n{_OWNER}\n# For information about cache directory tags see https://bford.info/cachedir/\n"
_GITIGNORE = "# Created by torchlint.\n*\n"


class CacheDirError(Exception):
    """A folder torchlint must not use or clean as its cache; says why."""


def _euid() -> int:
    return os.geteuid() if hasattr(os, "geteuid") else -1


def _folder_problem(info: os.stat_result, shared: bool) -> Optional[str]:
    """Why a folder of the cache may not be trusted ("is a symbolic link
    ..."), or None: it must be a folder, not a link, this user's own and
    writable by no one else, or, in a shared cache, writable by its group at
    most."""
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link (torchlint follows no link in its cache)"
    if not stat.S_ISDIR(info.st_mode):
        return "is not a folder"
    mode = stat.S_IMODE(info.st_mode)
    if shared:
        if mode & stat.S_IWOTH:
            return f"is writable by every user (mode {mode:o}); a shared cache may be writable by its group only"
        return None
    if info.st_uid != _euid():
        return (f"belongs to another user (uid {info.st_uid}); use a cache folder of your own, "
                "or --cache-shared for a cache shared on purpose")
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (f"is writable by other users (mode {mode:o}); make it private (chmod go-w), "
                "or share it on purpose with --cache-shared")
    return None


def _trusted_file(info: os.stat_result, shared: bool) -> bool:
    """Whether an entry (or the key) may be read: a regular file, written by
    this user (by any member in a shared cache), writable by no one else."""
    if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_ENTRY_BYTES:
        return False
    mode = stat.S_IMODE(info.st_mode)
    if shared:
        return not mode & stat.S_IWOTH
    return info.st_uid == _euid() and not mode & (stat.S_IWGRP | stat.S_IWOTH)


class SealedStore:
    """Sealed JSON entries in folders opened without following links (see
    the module's docstring for what is trusted); :class:`~torchlint.lint.cache.Cache`
    adds the lint results, the replay of an unchanged run reads its record
    through it.  ``fingerprint`` names the code the entries belong to (the
    folder under ``v2/``)."""

    def __init__(self, directory: PathLike, *, shared: bool = False, fingerprint: Callable[[], str]) -> None:
        self.directory = directory
        self.shared = shared
        self.fingerprint = fingerprint
        self._folders: Dict[Tuple[str, ...], int] = {}
        self._mac: Optional[bytes] = None
        self._prepared = False
        self._disabled = not _SUPPORTED

    # -- folders ------------------------------------------------------------

    def _folder_mode(self) -> int:
        return 0o2770 if self.shared else 0o700

    def _root(self, create: bool) -> Optional[int]:
        """The cache folder's descriptor (created when ``create``); None when
        it is missing or must not be used."""
        if () in self._folders:
            return self._folders[()]
        if self._disabled:
            return None
        try:
            if create and not os.path.lexists(self.directory):
                os.makedirs(os.path.dirname(os.path.abspath(self.directory)), exist_ok=True)
                try:
                    os.mkdir(self.directory, self._folder_mode())
                    created = True
                except FileExistsError:
                    created = False
            else:
                created = False
            handle = os.open(self.directory, _FOLDER_FLAGS)
        except OSError:
            return None
        return self._adopt((), handle, created)

    def _adopt(self, parts: Tuple[str, ...], handle: int, created: bool) -> Optional[int]:
        """Keep an opened folder's descriptor if the folder may be trusted."""
        try:
            if created:
                os.fchmod(handle, self._folder_mode())  # the umask must not open it to others
            trusted = _folder_problem(os.fstat(handle), self.shared) is None
        except OSError:
            trusted = False
        if not trusted:
            os.close(handle)
            return None
        self._folders[parts] = handle
        return handle

    def _folder(self, parts: Tuple[str, ...], create: bool) -> Optional[int]:
        """The descriptor of the folder ``parts`` below the cache folder,
        each part opened relative to its parent, never through a link."""
        if parts in self._folders:
            return self._folders[parts]
        parent = self._root(create) if len(parts) == 1 else self._folder(parts[:-1], create)
        if parent is None:
            return None
        created = False
        try:
            try:
                handle = os.open(parts[-1], _FOLDER_FLAGS, dir_fd=parent)
            except FileNotFoundError:
                if not create:
                    return None
                try:
                    os.mkdir(parts[-1], self._folder_mode(), dir_fd=parent)
                    created = True
                except FileExistsError:
                    pass
                handle = os.open(parts[-1], _FOLDER_FLAGS, dir_fd=parent)
        except OSError:  # ELOOP: a link; ENOTDIR: a file; both are left alone
            return None
        return self._adopt(parts, handle, created)

    def close(self) -> None:
        """Close the folders' descriptors (also done when the cache is collected)."""
        for handle in self._folders.values():
            try:
                os.close(handle)
            except OSError:
                pass
        self._folders.clear()

    def __del__(self) -> None:
        self.close()

    # -- reading and writing sealed files -------------------------------------------

    def _read_file(self, folder: int, name: str) -> Optional[Tuple[bytes, os.stat_result]]:
        """The bytes of a trusted regular file in ``folder`` (never a link, a
        FIFO or a device; see :func:`_trusted_file`)."""
        try:
            handle = os.open(name, _FILE_FLAGS, dir_fd=folder)
        except OSError:
            return None
        try:
            info = os.fstat(handle)
            if not _trusted_file(info, self.shared):
                return None
            data = read_at_most(handle, _MAX_ENTRY_BYTES + 1)
        except OSError:
            return None
        finally:
            os.close(handle)
        return (data, info) if len(data) <= _MAX_ENTRY_BYTES else None

    def _write_file(self, folder: int, name: str, data: bytes) -> None:
        """Make ``data`` the file ``name`` in ``folder``: written to a new
        temporary file there, then renamed over the name, which replaces a
        link at that name rather than writing through it.  OSError on failure."""
        mode = 0o640 if self.shared else 0o600
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        import secrets  # only where the cache writes: not on a warm run's import path

        while True:
            temporary = f".{name[:100]}.{secrets.token_hex(4)}.torchlint"
            try:
                handle = os.open(temporary, flags, mode, dir_fd=folder)
                break
            except FileExistsError:
                continue
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(handle, view):]
                os.fchmod(handle, mode)
            finally:
                os.close(handle)
            os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            try:
                os.unlink(temporary, dir_fd=folder)
            except OSError:
                pass
            raise

    def _mac_key(self, create: bool) -> Optional[bytes]:
        """The key entries are sealed with: the secret in ``v2/key``, bound to
        that file's inode and change time, so a key file that was copied or
        checked out (and the entries sealed with it) is worth nothing."""
        if self._mac is not None:
            return self._mac
        folder = self._folder((_FORMAT,), create)
        if folder is None:
            return None
        found = self._read_file(folder, _KEY_NAME)
        if found is None or len(found[0]) != 64:
            if not create:
                return None
            found = self._new_key(folder)
            if found is None:
                return None
        secret, info = found
        binding = f"\0{info.st_ino}\0{info.st_ctime_ns}".encode()
        self._mac = hashlib.sha256(b"torchlint-cache\0" + secret + binding).digest()
        return self._mac

    def _new_key(self, folder: int) -> Optional[Tuple[bytes, os.stat_result]]:
        """Create the key file, whole, in one link (replacing one that may not
        be trusted), or read the one a concurrent run created first."""
        try:
            os.stat(_KEY_NAME, dir_fd=folder, follow_symlinks=False)
            os.unlink(_KEY_NAME, dir_fd=folder)  # there, but not usable: another user's, a link, cut short
        except FileNotFoundError:
            pass
        except OSError:
            return None
        import secrets  # only where the cache writes: not on a warm run's import path

        temporary = f".{_KEY_NAME}.{secrets.token_hex(4)}.torchlint"
        try:
            self._write_file(folder, temporary, secrets.token_hex(32).encode())
            try:
                os.link(temporary, _KEY_NAME, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
            except FileExistsError:
                pass  # another run made one first: use it
            finally:
                os.unlink(temporary, dir_fd=folder)
        except OSError:
            return None
        found = self._read_file(folder, _KEY_NAME)
        return found if found is not None and len(found[0]) == 64 else None

    def _seal(self, payload: bytes, create: bool) -> Optional[bytes]:
        mac = self._mac_key(create)
        if mac is None:
            return None
        return hmac.new(mac, payload, hashlib.sha256).hexdigest().encode() + b"\n" + payload

    def _opened(self, data: bytes) -> Optional[Any]:
        """The JSON payload of a sealed entry whose seal holds, else None."""
        mac = self._mac_key(False)
        seal, newline, payload = data.partition(b"\n")
        if mac is None or not newline:
            return None
        if not hmac.compare_digest(seal, hmac.new(mac, payload, hashlib.sha256).hexdigest().encode()):
            return None
        try:
            return json.loads(payload)
        except (ValueError, RecursionError):
            return None

    def _get(self, parts: Tuple[str, ...], name: str) -> Optional[Any]:
        folder = self._folder(parts, create=False)
        found = self._read_file(folder, name) if folder is not None else None
        return None if found is None else self._opened(found[0])

    def _put(self, parts: Tuple[str, ...], name: str, payload: Dict[str, Any]) -> None:
        """Store one sealed entry; failures to write are ignored."""
        try:
            self._prepare()
            sealed = self._seal(json.dumps(payload).encode("utf-8"), create=True)
            folder = self._folder(parts, create=True)
            if sealed is not None and folder is not None:
                self._write_file(folder, name, sealed)
        except OSError:
            pass

    def _shard(self, *kinds: str, key: str) -> Tuple[str, ...]:
        return (_FORMAT, self.fingerprint(), *kinds, key[:2])

    def _prepare(self) -> None:
        """The cache folder, with its tag and .gitignore (written only where
        no entry of that name exists, and never through a link)."""
        root = self._root(create=True)
        if root is None or self._prepared:
            return
        # The tag first, and whole: a concurrent run checking the folder sees it complete or not at all.
        for name, text in ((_TAG_NAME, _TAG), (".gitignore", _GITIGNORE)):
            try:
                os.stat(name, dir_fd=root, follow_symlinks=False)
            except FileNotFoundError:
                self._write_file(root, name, text.encode("utf-8"))
        self._prepared = True


def _is_ours(directory: PathLike) -> bool:
    """Whether ``directory`` carries torchlint's own CACHEDIR.TAG (a regular
    file whose first two lines are the standard signature and torchlint's)."""
    tag = os.path.join(directory, _TAG_NAME)
    try:
        if not stat.S_ISREG(os.lstat(tag).st_mode):
            return False
        with open(tag, "rb") as stream:
            head = stream.read(4096)
    except OSError:
        return False
    return head.decode("utf-8", "replace").splitlines()[:2] == [_SIGNATURE, _OWNER]


def _tag_temporary(name: str) -> bool:
    """The temporary a concurrent run writes its tag through (see _prepare)."""
    return name.startswith(f".{_TAG_NAME}.") and name.endswith(".torchlint")


def check_directory(value: str, working: PathLike, *, fingerprint: str, contents: bool = True,
                    shared: bool = False) -> str:
    """The cache folder ``value`` names; CacheDirError if writing a cache there
    could harm the user's files: an empty name, the working folder or one of
    its parents, or (when ``contents``) an existing folder that is neither
    empty nor tagged as torchlint's, or that may not be trusted (a link, a
    link among its folders, another user's, writable by others; see the
    module's docstring)."""
    if not value.strip():
        raise CacheDirError("is empty; name a folder for the cache (or use --no-cache)")
    directory = value
    real = os.path.realpath(directory)
    here = os.path.realpath(working)
    if real == here or here.startswith(real.rstrip(os.sep) + os.sep):
        raise CacheDirError("is the working folder or contains it; the cache needs a folder of its own")
    if not contents or not os.path.lexists(directory):
        return directory
    if os.path.islink(directory):
        raise CacheDirError("is a symbolic link; name the folder itself (torchlint follows no link in its cache)")
    if not os.path.isdir(directory):
        raise CacheDirError("is not a folder")
    try:
        names = os.listdir(directory)
    except OSError as error:
        raise CacheDirError(f"cannot be read: {error.strerror}") from None
    if _is_ours(directory):
        _check_parts(directory, shared, fingerprint)
        return directory
    # Untagged, it may only be a cache that another run is creating right now:
    # the tag is its first entry, so at most the tag's temporary is there yet.
    if not all(_tag_temporary(name) for name in names):
        raise CacheDirError("already holds files that are not torchlint's cache; name a new or empty folder")
    _check_parts(directory, shared, fingerprint)
    return directory


def _check_parts(directory: str, shared: bool, fingerprint: str) -> None:
    """CacheDirError if the cache folder, or a folder of the current format
    in it, may not be trusted (:func:`_folder_problem`): one status read for
    the folder and each of the few hundred folders the current entries use."""
    problem = _folder_problem(os.lstat(directory), shared)
    if problem is not None:
        raise CacheDirError(problem)
    pending = [(_FORMAT,), (_FORMAT, fingerprint)]
    while pending:
        parts = pending.pop()
        path = os.path.join(directory, *parts)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError as error:
            raise CacheDirError(f"holds {'/'.join(parts)}, which cannot be read: {error.strerror}") from None
        if stat.S_ISREG(info.st_mode):
            continue  # not a folder of the cache: never opened as one
        problem = _folder_problem(info, shared)
        if problem is not None:
            raise CacheDirError(f"holds {'/'.join(parts)}, which {problem}; `torchlint clean` removes "
                                "torchlint's entries")
        if len(parts) >= 2 and parts[-1] in (fingerprint, _FACTS, _RUNS, REPLAYS):
            try:
                children = sorted(entry.name for entry in os.scandir(path) if not entry.name.startswith("."))
            except OSError:
                continue
            pending.extend((*parts, name) for name in children)
