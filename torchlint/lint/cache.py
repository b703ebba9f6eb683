"""Content-keyed lint results in ``.torchlint_cache/``.

Two kinds of lint results, both sealed JSON files written atomically:

- **One entry a file** (:class:`FileEntry`), named by :class:`EntryKey`
  from the file's display path, the digest of its bytes and the digest of
  its configuration (rules, options, torch version), in a folder named by
  torchlint's own code.  It holds the file's lints (:class:`Variant`,
  newest first, at most :data:`MAX_VARIANTS`): the project-index facts
  each read, the digest of those facts (:func:`facts_digest`) and the
  findings.  A run reads each file's entry once and takes the lint whose
  facts digest the run's index reproduces (:meth:`FileEntry.answer`), so
  an entry can never be stale: anything that could change the findings
  changes the name or the facts digest.  Lints are stored, and the facts
  digests made, in one place, :meth:`Cache.store`.
- **One record a run** (under ``runs/``, named by :func:`run_key` from the
  working folder, the files and their configurations): each file's stat
  stamp and digest, what the index read besides
  (:class:`~torchlint.source.stamps.RunRecord`) and each file's findings.
  A run where nothing it depends on changed reads this record and the
  files' stat data, and nothing else.

Concurrent runs (pre-commit starts several) at worst compute the same entry
twice; an entry or a record that cannot be read or is not exactly the shape
torchlint writes is a miss, recomputed and rewritten.

The cache folder is torchlint's alone: it carries a CACHEDIR.TAG whose second
line names torchlint, :func:`check_directory` refuses a folder that is (or
contains) the working folder or that already holds other files, and
:func:`clean` removes only the entries torchlint writes, only from a folder
with torchlint's tag.

Trust (everything in the folder is treated as written by someone else until
shown otherwise):

- No link is followed anywhere in it: every folder and entry is opened
  relative to its parent's descriptor with ``O_NOFOLLOW``; a link where an
  entry should be is a miss, and writing replaces the link itself (a rename
  in the folder), never its target.  Anything but a regular file is a miss.
- :func:`check_directory` refuses (exit 2, one line) a cache folder that is a
  link, holds links among its folders, or whose folders belong to another
  user or are writable by other users.
- Each entry is bound to what it describes: it records its path and the
  digest of the source, checked on read, and each lint in it the digest of
  the facts it read, checked against the run's index; it is sealed
  with an HMAC under the cache's key (``v2/key``, a random secret readable
  only by its owner), itself bound to that key file's inode and change time:
  an entry forged, edited, committed to a repository or copied from another
  machine's cache is a miss.  An entry another user wrote is a miss.
- A cache shared on purpose by a group (``--cache-shared`` or
  ``TORCHLINT_CACHE_SHARED=1``, never a configuration file, which a cloned
  repository can write) may be writable by its group and holds entries of
  any member; its key is readable by the group.  It may not be writable by
  every user.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import json
import os
import stat
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Type, TypeVar, cast

from torchlint.ruleapi.catalog import tool_fingerprint as tool_fingerprint
from torchlint.model import Applicability, Diagnostic, Edit, Fix, Position
from torchlint.source.sourcefile import read_at_most
from torchlint.source.stamps import RECORD_FORMAT, RunRecord

if TYPE_CHECKING:  # a run answered from the record builds no index: the module is imported by whoever builds one
    from torchlint.analysis.index import ProjectIndex

CACHE_DIR_NAME = ".torchlint_cache"
SHARED_VARIABLE = "TORCHLINT_CACHE_SHARED"
_FORMATS = ("v1", "v2")
"""Every versioned folder torchlint has written (the last is current); `clean`
removes these and nothing else besides the tag and the .gitignore."""
_FORMAT = _FORMATS[-1]
ENTRY_FORMAT = 3
"""The version of an entry's contents (see :class:`EntryKey` and :meth:`Cache.get`)."""
_KEY_NAME = "key"
_FACTS, _RUNS = "facts", "runs"
"""The folders, beside the lint results, of the project index's per-file
facts and of run records."""
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

T = TypeVar("T")
Findings = Tuple[Optional[Tuple[Diagnostic, ...]], ...]
"""Each file's findings in a run, in order (None: not cached)."""


class CacheDirError(Exception):
    """A folder torchlint must not use or clean as its cache; says why."""


def _diagnostic_to_json(diagnostic: Diagnostic) -> Dict[str, Any]:
    data = asdict(diagnostic)
    if diagnostic.fix is not None:
        data["fix"]["applicability"] = diagnostic.fix.applicability.value
    return data


class _Malformed(ValueError):
    """A cache entry that is valid JSON but not what torchlint writes."""


def _field(data: Any, key: str, kind: Type[T]) -> T:
    """``data[key]`` if ``data`` is an object and the value has type ``kind``
    (for numbers: a non-negative int, not a bool)."""
    if not isinstance(data, dict):
        raise _Malformed(key)
    value: Any = data.get(key)
    if not isinstance(value, kind) or (isinstance(value, int) and (isinstance(value, bool) or value < 0)):
        raise _Malformed(key)
    return cast(T, value)


def _optional(data: Any, key: str, kind: Type[T]) -> Optional[T]:
    return None if isinstance(data, dict) and data.get(key) is None else _field(data, key, kind)


def _position(data: Any, key: str) -> Position:
    raw = _field(data, key, dict)
    return Position(_field(raw, "line", int), _field(raw, "column", int))


def _fix_from_json(raw: Any) -> Optional[Fix]:
    if raw is None:
        return None
    edits = _field(raw, "edits", list)
    applicability = _field(raw, "applicability", str)
    if not edits or applicability not in {a.value for a in Applicability}:
        raise _Malformed("fix")
    return Fix(
        tuple(Edit(_field(e, "start", int), _field(e, "end", int), _field(e, "text", str)) for e in edits),
        Applicability(applicability),
        _field(raw, "description", str),
    )


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise _Malformed("text")
    return value


def _items(value: Any) -> List[Any]:
    if not isinstance(value, list):
        raise _Malformed("list")
    return value


def _diagnostics(items: List[Any], path: str) -> Tuple[Diagnostic, ...]:
    return tuple(_diagnostic_from_json(item, path) for item in items)


def _diagnostic_from_json(data: Any, path: str) -> Diagnostic:
    """The diagnostic an entry holds; _Malformed unless every field has the
    type torchlint writes (a wrong shape must be a miss, not a crash later)."""
    return Diagnostic(
        path=path,
        start=_position(data, "start"),
        end=_position(data, "end"),
        code=_field(data, "code", str),
        name=_field(data, "name", str),
        message=_field(data, "message", str),
        fix=_fix_from_json(_optional(data, "fix", dict)),
        hint=_optional(data, "hint", str),
        cell=_optional(data, "cell", int),
    )


@dataclass(frozen=True)
class EntryKey:
    """Names one file's entry: its display path, the digest of its bytes
    (``source``) and of its configuration (``config``, the settings' digest,
    :meth:`~torchlint.lint.settings.Settings.cache_fingerprint`).  The facts
    of the project index its findings depend on are not part of the name:
    the entry holds its findings for each set of facts it was linted under
    (:class:`Variant`), so one read answers whatever the index now says."""

    path: str
    source: str
    config: str

    @property
    def key(self) -> str:
        """The entry's name in the cache."""
        text = json.dumps([ENTRY_FORMAT, self.path, self.source, self.config])
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Variant:
    """One lint of a file: the index facts it read (``reads``), their digest
    when it ran (``facts``: :func:`facts_digest`; "" without an index) and
    the findings."""

    facts: str
    reads: Tuple[str, ...]
    diagnostics: Tuple[Diagnostic, ...]


MAX_VARIANTS = 4
"""Lints kept per entry, newest first: switching between two branches that
differ elsewhere in the project keeps both answers."""


@dataclass(frozen=True)
class FileEntry:
    """What the cache holds for one file's bytes and configuration: its
    lints under different project facts, newest first."""

    key: EntryKey
    variants: Tuple[Variant, ...] = ()

    def answer(self, project: "Optional[ProjectIndex]") -> Optional[Variant]:
        """The lint whose facts are the run's facts (it read the same values
        from ``project``), or None: the file must be linted."""
        for variant in self.variants:
            if facts_digest(project, variant.reads) == variant.facts:
                return variant
        return None

    def with_variant(self, variant: Variant) -> "FileEntry":
        """This entry with ``variant`` first (replacing one with the same facts)."""
        kept = [v for v in self.variants if v.facts != variant.facts][:MAX_VARIANTS - 1]
        return FileEntry(self.key, (variant, *kept))


@dataclass(frozen=True)
class Lint:
    """A file just linted, to be stored: its entry's name, the index facts
    the lint read, its findings and the entry it had (None: none)."""

    key: EntryKey
    reads: Tuple[str, ...]
    diagnostics: Tuple[Diagnostic, ...]
    entry: Optional[FileEntry] = None


def facts_digest(project: "Optional[ProjectIndex]", reads: Sequence[str]) -> str:
    """The digest of the index facts a lint read, as the run's index holds
    them ("" for the empty index, or None: a run without one).  With the
    file's digest and its settings' digest, what a cached finding is keyed by."""
    return "" if project is None or project.is_empty else project.digest_of(reads)


def run_key(cwd: str, shown: Sequence[str], configs: Sequence[str]) -> str:
    """The name of the record of a run over these files (display paths, in
    order), each with its configuration, from the working folder ``cwd``."""
    digest = hashlib.sha256(f"run-record-{RECORD_FORMAT}\0{cwd}\0".encode("utf-8", "surrogateescape"))
    config_ids: Dict[str, str] = {}
    for path, config in zip(shown, configs):
        known = config_ids.get(config)
        if known is None:
            known = config_ids[config] = hashlib.sha256(config.encode("utf-8", "surrogateescape")).hexdigest()
        digest.update(f"{path}\0{known}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


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


class Cache:
    """One sealed JSON file per entry, in folders opened without following
    links (see the module's docstring for what is trusted)."""

    def __init__(self, directory: Path, *, shared: bool = False) -> None:
        self.directory = directory
        self.shared = shared
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
                self.directory.parent.mkdir(parents=True, exist_ok=True)
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
        return (_FORMAT, tool_fingerprint(), *kinds, key[:2])

    # -- lint results: one entry a file, and the run records ----------------------------

    def get_entries(self, keys: Sequence[EntryKey]) -> List[Optional[FileEntry]]:
        """Each file's entry (one read a file), or None for a miss or an entry
        that is not exactly what this user's torchlint wrote for that key."""
        return [self._entry(key) for key in keys]

    def _entry(self, entry: EntryKey) -> Optional[FileEntry]:
        key = entry.key
        data = self._get(self._shard(key=key), f"{key}.json")
        if not isinstance(data, dict) or data.get("format") != ENTRY_FORMAT or data.get("key") != key:
            return None
        if data.get("path") != entry.path or data.get("source") != entry.source:
            return None
        try:
            variants = tuple(Variant(_field(raw, "facts", str),
                                     tuple(_text(read) for read in _field(raw, "reads", list)),
                                     _diagnostics(_field(raw, "diagnostics", list), entry.path))
                             for raw in _field(data, "variants", list)[:MAX_VARIANTS])
        except (ValueError, RecursionError):
            return None
        return FileEntry(entry, variants)

    def get_record(self, key: str, shown: Sequence[str]) -> Optional[Tuple[RunRecord, Findings]]:
        """The record of the last run over the same files (``shown``, in
        order) and configuration, with each file's findings (None: not
        cached), or None: no such run, or a record that may not be trusted.
        The cache folder is made first, when missing: the run will write
        there, and a folder that appears after the index listed the working
        folder would change what the next run sees."""
        try:
            self._prepare()
        except OSError:
            pass
        data = self._get(self._shard(_RUNS, key=key), f"{key}.json")
        if not isinstance(data, dict) or data.get("format") != ENTRY_FORMAT or data.get("key") != key:
            return None
        try:
            found = _field(data, "findings", list)
            findings = tuple(None if raw is None else _diagnostics(_items(raw), path)
                             for raw, path in zip(found, shown))
        except (ValueError, RecursionError):
            return None
        record = RunRecord.from_json(data.get("record"), tuple(answer is not None for answer in findings))
        return None if record is None or len(found) != len(shown) else (record, findings)

    def store(self, project: "Optional[ProjectIndex]", linted: Sequence[Lint], key: Optional[str], record: RunRecord,
              findings: Findings, previous: Optional[Tuple[RunRecord, Findings]]) -> None:
        """Store the lints of a run (each in its file's entry, keyed by the
        digest of the facts it read from ``project``), and the run's record
        with its files' findings when it differs from ``previous`` (under
        ``key``; None: no record), each atomically; failures to write are
        ignored."""
        for lint in linted:
            variant = Variant(facts_digest(project, lint.reads), lint.reads, lint.diagnostics)
            entry = (lint.entry if lint.entry is not None and lint.entry.key == lint.key
                     else FileEntry(lint.key)).with_variant(variant)
            name = entry.key.key
            self._put(self._shard(key=name), f"{name}.json", {
                "format": ENTRY_FORMAT, "key": name, "path": entry.key.path, "source": entry.key.source,
                "config": hashlib.sha256(entry.key.config.encode()).hexdigest(),
                "variants": [{"facts": v.facts, "reads": list(v.reads),
                              "diagnostics": [_diagnostic_to_json(d) for d in v.diagnostics]}
                             for v in entry.variants],
            })
        if key is not None and (record, findings) != previous:
            self._put(self._shard(_RUNS, key=key), f"{key}.json", {
                "format": ENTRY_FORMAT, "key": key,
                "findings": [None if found is None else [_diagnostic_to_json(d) for d in found]
                             for found in findings],
                "record": record.to_json(),
            })

    # -- the project index's facts ------------------------------------------------------

    def get_facts(self, key: str) -> Optional[Any]:
        """A file's stored facts (a JSON value) under ``key``, or None on a
        miss or an entry that may not be trusted (the project index's
        contributions; ``key`` covers the file's bytes)."""
        data = self._get(self._shard(_FACTS, key=key), f"{key}.json")
        if not isinstance(data, dict) or data.get("format") != ENTRY_FORMAT or data.get("key") != key:
            return None
        return data.get("facts")

    def put_facts(self, key: str, facts: Any) -> None:
        """Store a file's facts atomically; failures to write are ignored."""
        self._put(self._shard(_FACTS, key=key), f"{key}.json", {"format": ENTRY_FORMAT, "key": key, "facts": facts})

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


def _is_ours(directory: Path) -> bool:
    """Whether ``directory`` carries torchlint's own CACHEDIR.TAG (a regular
    file whose first two lines are the standard signature and torchlint's)."""
    tag = directory / _TAG_NAME
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


def check_directory(value: str, working: Path, *, contents: bool = True, shared: bool = False) -> Path:
    """The cache folder ``value`` names; CacheDirError if writing a cache there
    could harm the user's files: an empty name, the working folder or one of
    its parents, or (when ``contents``) an existing folder that is neither
    empty nor tagged as torchlint's, or that may not be trusted (a link, a
    link among its folders, another user's, writable by others; see the
    module's docstring)."""
    if not value.strip():
        raise CacheDirError("is empty; name a folder for the cache (or use --no-cache)")
    directory = Path(value)
    real = Path(os.path.realpath(directory))
    here = Path(os.path.realpath(working))
    if real == here or real in here.parents:
        raise CacheDirError("is the working folder or contains it; the cache needs a folder of its own")
    if not contents or not os.path.lexists(directory):
        return directory
    if os.path.islink(directory):
        raise CacheDirError("is a symbolic link; name the folder itself (torchlint follows no link in its cache)")
    if not directory.is_dir():
        raise CacheDirError("is not a folder")
    try:
        names = os.listdir(directory)
    except OSError as error:
        raise CacheDirError(f"cannot be read: {error.strerror}") from None
    if _is_ours(directory):
        _check_parts(directory, shared)
        return directory
    # Untagged, it may only be a cache that another run is creating right now:
    # the tag is its first entry, so at most the tag's temporary is there yet.
    if not all(_tag_temporary(name) for name in names):
        raise CacheDirError("already holds files that are not torchlint's cache; name a new or empty folder")
    _check_parts(directory, shared)
    return directory


def _check_parts(directory: Path, shared: bool) -> None:
    """CacheDirError if the cache folder, or a folder of the current format
    in it, may not be trusted (:func:`_folder_problem`): one status read for
    the folder and each of the few hundred folders the current entries use."""
    problem = _folder_problem(os.lstat(directory), shared)
    if problem is not None:
        raise CacheDirError(problem)
    pending = [(_FORMAT,), (_FORMAT, tool_fingerprint())]
    while pending:
        parts = pending.pop()
        path = directory.joinpath(*parts)
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
        if len(parts) >= 2 and parts[-1] in (tool_fingerprint(), _FACTS, _RUNS):
            try:
                children = sorted(entry.name for entry in os.scandir(path) if not entry.name.startswith("."))
            except OSError:
                continue
            pending.extend((*parts, name) for name in children)


class Cleaned(enum.Enum):
    """What :func:`clean` did."""

    NOTHING = "nothing"  # no such folder
    ENTRIES = "entries"  # torchlint's entries removed; the user's files kept the folder
    FOLDER = "folder"  # the folder held only torchlint's entries and is gone


def clean(directory: Path) -> Cleaned:
    """Remove torchlint's entries (its versioned folders, temporaries, its
    .gitignore if unchanged, and last its tag) from a folder carrying
    torchlint's tag, then the folder if that left it empty.  Anything else in
    it is kept.  CacheDirError for a folder without torchlint's tag."""
    if not os.path.lexists(directory):
        return Cleaned.NOTHING
    if os.path.islink(directory):
        raise CacheDirError("is a symbolic link; name the folder itself (torchlint follows no link in its "
                            "cache); nothing removed")
    if not _is_ours(directory):
        raise CacheDirError("is not a torchlint cache (it has no CACHEDIR.TAG written by torchlint); "
                            "nothing removed")
    complete = True
    for name in os.listdir(directory):
        entry = directory / name
        if name in _FORMATS and entry.is_dir() and not entry.is_symlink():
            import shutil  # only when cleaning

            shutil.rmtree(entry, ignore_errors=True)
        elif name.startswith(".") and name.endswith(".torchlint") and entry.is_file() and not entry.is_symlink():
            _unlink(entry)
        elif name == ".gitignore" and _holds(entry, _GITIGNORE):
            _unlink(entry)
        complete = complete and not (name in _FORMATS and os.path.lexists(entry) and not entry.is_symlink())
    if complete:  # keep the tag while anything of ours is left, so `clean` can be run again
        _unlink(directory / _TAG_NAME)
    try:
        directory.rmdir()
    except OSError:
        return Cleaned.ENTRIES
    return Cleaned.FOLDER


def _holds(path: Path, text: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode) and path.read_bytes() == text.encode("utf-8")
    except OSError:
        return False


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
