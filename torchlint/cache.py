"""Content-keyed lint results in ``.torchlint_cache/``.

An entry's key hashes the file's bytes, torchlint's own code, and the
effective configuration of that file (rules, options, torch version), so an
entry can never be stale: anything that could change the findings changes the
key.  Entries are written atomically, one file each, so concurrent runs
(pre-commit starts several) at worst compute the same entry twice; an entry
that cannot be read or is not exactly the shape torchlint writes is a miss,
recomputed and rewritten.

The cache folder is torchlint's alone: it carries a CACHEDIR.TAG whose second
line names torchlint, :func:`check_directory` refuses a folder that is (or
contains) the working folder or that already holds other files, and
:func:`clean` removes only the entries torchlint writes, only from a folder
with torchlint's tag.
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
import shutil
import stat
from dataclasses import asdict
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Type, TypeVar, cast

from torchlint.catalog import OptionValue, tool_fingerprint as tool_fingerprint
from torchlint.model import Applicability, Diagnostic, Edit, Fix, Position
from torchlint.sourcefile import SourceError, write_atomically
from torchlint.versions import FrameworkReleases, TorchVersion

CACHE_DIR_NAME = ".torchlint_cache"
_FORMATS = ("v1",)
"""Every versioned folder torchlint has written (the last is current); `clean`
removes these and nothing else besides the tag and the .gitignore."""
_FORMAT = _FORMATS[-1]
_TAG_NAME = "CACHEDIR.TAG"
_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"
_OWNER = "# This file is a cache directory tag created by torchlint."
_TAG = f"{_SIGNATURE}\n{_OWNER}\n# For information about cache directory tags see https://bford.info/cachedir/\n"
_GITIGNORE = "# Created by torchlint.\n*\n"

T = TypeVar("T")


class CacheDirError(Exception):
    """A folder torchlint must not use or clean as its cache; says why."""


def config_fingerprint(codes: Sequence[str], torch_version: TorchVersion,
                       options: Mapping[str, Mapping[str, OptionValue]], precheck: bool = True,
                       frameworks: FrameworkReleases = FrameworkReleases()) -> str:
    """A stable text for everything in a file's configuration that affects
    its findings: the rules that run, the target torch and framework
    releases, rule options, and whether the pre-check may skip it."""
    payload = {
        "rules": list(codes),
        "torch": str(torch_version),
        "frameworks": {name: str(release) for name, release in frameworks.pinned},
        "options": {code: dict(sorted(opts.items())) for code, opts in sorted(options.items())},
        "precheck": precheck,
    }
    return json.dumps(payload, sort_keys=True, default=list)


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


class Cache:
    """One JSON file per (content, configuration) key."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._root = directory / _FORMAT / tool_fingerprint()
        self._prepared = False

    def key(self, digest: str, config: str, path: str) -> str:
        """The entry key of one file's bytes under one configuration
        (:func:`config_fingerprint`)."""
        text = f"{digest}\0{config}\0{path}"
        return hashlib.sha256(text.encode()).hexdigest()

    def _entry(self, key: str) -> Path:
        return self._root / key[:2] / f"{key}.json"

    def get(self, key: str, path: str) -> Optional[List[Diagnostic]]:
        """The cached diagnostics, or None on a miss or an unreadable entry."""
        try:
            with self._entry(key).open("r", encoding="utf-8") as handle:
                data = json.load(handle)
            if not isinstance(data, dict) or data.get("key") != key:
                return None
            return [_diagnostic_from_json(item, path) for item in _field(data, "diagnostics", list)]
        except (OSError, ValueError, RecursionError):
            return None

    def put(self, key: str, diagnostics: Sequence[Diagnostic]) -> None:
        """Store an entry atomically; failures to write are ignored."""
        try:
            self._prepare()
            entry = self._entry(key)
            entry.parent.mkdir(parents=True, exist_ok=True)
            payload = {"key": key, "diagnostics": [_diagnostic_to_json(d) for d in diagnostics]}
            write_atomically(entry, json.dumps(payload).encode("utf-8"), durable=False)
        except (OSError, SourceError):
            pass

    def _facts_entry(self, key: str) -> Path:
        return self._root / "facts" / key[:2] / f"{key}.json"

    def get_facts(self, key: str) -> Optional[Any]:
        """A file's stored facts (a JSON value) under ``key``, or None on a
        miss or an unreadable entry (the project index's contributions)."""
        try:
            with self._facts_entry(key).open("r", encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(data, dict) or data.get("key") != key:
            return None
        return data.get("facts")

    def put_facts(self, key: str, facts: Any) -> None:
        """Store a file's facts atomically; failures to write are ignored."""
        try:
            self._prepare()
            entry = self._facts_entry(key)
            entry.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(entry, json.dumps({"key": key, "facts": facts}).encode("utf-8"), durable=False)
        except (OSError, SourceError):
            pass

    def _prepare(self) -> None:
        if self._prepared:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        # The tag first, and whole: a concurrent run checking the folder sees it complete or not at all.
        for name, text in ((_TAG_NAME, _TAG), (".gitignore", _GITIGNORE)):
            target = self.directory / name
            if not os.path.lexists(target):
                write_atomically(target, text.encode("utf-8"), durable=False)
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


def check_directory(value: str, working: Path, *, contents: bool = True) -> Path:
    """The cache folder ``value`` names; CacheDirError if writing a cache there
    could harm the user's files: an empty name, the working folder or one of
    its parents, or (when ``contents``) an existing folder that is neither
    empty nor tagged as torchlint's."""
    if not value.strip():
        raise CacheDirError("is empty; name a folder for the cache (or use --no-cache)")
    directory = Path(value)
    real = Path(os.path.realpath(directory))
    here = Path(os.path.realpath(working))
    if real == here or real in here.parents:
        raise CacheDirError("is the working folder or contains it; the cache needs a folder of its own")
    if not contents or not os.path.lexists(directory):
        return directory
    if not directory.is_dir():
        raise CacheDirError("is not a folder")
    try:
        names = os.listdir(directory)
    except OSError as error:
        raise CacheDirError(f"cannot be read: {error.strerror}") from None
    if _is_ours(directory):
        return directory
    # Untagged, it may only be a cache that another run is creating right now:
    # the tag is its first entry, so at most the tag's temporary is there yet.
    if not all(_tag_temporary(name) for name in names):
        raise CacheDirError("already holds files that are not torchlint's cache; name a new or empty folder")
    return directory


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
    if not _is_ours(directory):
        raise CacheDirError("is not a torchlint cache (it has no CACHEDIR.TAG written by torchlint); "
                            "nothing removed")
    complete = True
    for name in os.listdir(directory):
        entry = directory / name
        if name in _FORMATS and entry.is_dir() and not entry.is_symlink():
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
