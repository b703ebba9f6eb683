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
import json
import os
import stat
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Type, TypeVar, cast

from torchlint.ruleapi.catalog import tool_fingerprint as tool_fingerprint
from torchlint.model import Applicability, Diagnostic, Edit, Fix, Position
from torchlint.lint.sealed import (
    _FACTS, _FORMATS, _RUNS, _TAG_NAME, CACHE_DIR_NAME as CACHE_DIR_NAME, SHARED_VARIABLE as SHARED_VARIABLE,
    _GITIGNORE, CacheDirError as CacheDirError, SealedStore, _is_ours, check_directory as _check_directory,
)
from torchlint.source.stamps import RECORD_FORMAT, RunRecord

if TYPE_CHECKING:  # a run answered from the record builds no index: the module is imported by whoever builds one
    from torchlint.analysis.index import ProjectIndex

ENTRY_FORMAT = 3
"""The version of an entry's contents (see :class:`EntryKey` and :meth:`Cache.get`)."""
T = TypeVar("T")
Findings = Tuple[Optional[Tuple[Diagnostic, ...]], ...]
"""Each file's findings in a run, in order (None: not cached)."""


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


class Cache(SealedStore):
    """One sealed JSON file per entry, in folders opened without following
    links (see the module's docstring for what is trusted)."""

    def __init__(self, directory: Path, *, shared: bool = False) -> None:
        super().__init__(directory, shared=shared, fingerprint=tool_fingerprint)
        self.recorded: Optional[RunRecord] = None
        """The record of the last run stored (what a replay of the command line checks)."""

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
        self.recorded = record
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



def check_directory(value: str, working: Path, *, contents: bool = True, shared: bool = False) -> Path:
    """:func:`torchlint.lint.sealed.check_directory` for this build's code
    (the tool fingerprint names the folders of the current entries)."""
    return Path(_check_directory(value, working, fingerprint=tool_fingerprint(), contents=contents, shared=shared))


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
