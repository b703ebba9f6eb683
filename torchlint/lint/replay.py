"""The replay of an unchanged command-line run, as a build system replays a
step whose inputs did not change.

A ``check`` run that can be replayed (no fix, no file written, no baseline,
not standard input, with the cache) is recorded in the cache folder
(:data:`~torchlint.lint.sealed.REPLAYS`), sealed like every entry, under a
key made of everything its output depends on that is not a file
(:func:`replay_key`: the arguments, the working folder, the environment
variables torchlint and its terminal handling read, what standard output and
error are, the Python and torchlint's own code).  The record holds the exact
bytes written to standard output and error, in order, the exit code, and
the state of every file-system input the run depended on:

- each linted file (stamp and digest, from the run's
  :class:`~torchlint.source.stamps.RunRecord`) and what the project index
  read, probed and listed besides;
- every file the run read (configuration, ``extend`` chains, ``.gitignore``
  files, requirements, job scripts' heads: the read watch of
  :mod:`torchlint.source.reads` sees each), and each it looked for and did
  not find;
- each folder discovery walked and each configuration root (whose names
  requirements are looked up in): its stamp, or when it changed too recently
  for a stamp to be trusted, its names, kinds and inodes;
- in every folder above those, whether each name the configuration and
  repository searches look for is there, and as what;
- the values ``extend = "$VAR/..."`` expanded to.

The next run with the same key (:mod:`torchlint.interfaces.quick`) checks
these and, when every one holds, writes the recorded bytes and exits with
the recorded code without importing the linter; any doubt is a miss, and
the full run goes on exactly as without a record.

Standard library only, and no dataclass, for the reading side.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import sys
import time
from contextvars import ContextVar

from torchlint.lint.sealed import _FORMAT, REPLAYS, SealedStore
from torchlint.source.reads import Watch, digest_of, holds, names_digest, presence

TYPE_CHECKING = False  # typing is not imported on a replay's path (mypy reads this name as typing's)
if TYPE_CHECKING:
    from typing import Any, BinaryIO, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

    from torchlint.lint.sealed import PathLike

REPLAY_FORMAT = 1
"""The version of a replay record's contents (part of its key)."""

VARIABLES = ("NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TERM", "COLUMNS",
             "GIT_CEILING_DIRECTORIES")
"""Environment variables a run's output may depend on besides every ``TORCHLINT_*``
(``NO_COLOR`` and the terminal's; git's ceiling folders for the ignore files)."""

MAX_OUTPUT_BYTES = 8 * 1024 * 1024
"""Output beyond this (as JSON text, at worst six characters a byte) is not recorded."""

TICK_NS = 100_000_000
"""A folder changed less than this before a run started may have changed
while it ran, in the same tick of the file system's clock: not recorded."""

COARSE_NS = 2_000_000_000
"""The same, for a file system whose times have no sub-second part."""

TRUSTED_NS = 2_000_000_000
"""A folder unchanged for this long before the run started is recorded by
its stamp; a younger one by its entries (names, kinds and inodes)."""


def fingerprint() -> str:
    """The code the cache's entries belong to: the catalog's
    (``tool_fingerprint``, which knows a replaced rule set) when it is
    loaded, else torchlint's code fingerprint, which it builds on."""
    catalog = sys.modules.get("torchlint.ruleapi.catalog")
    if catalog is not None:
        return str(catalog.tool_fingerprint())
    from torchlint.version import code_fingerprint

    return code_fingerprint()


def streams() -> List[Any]:
    """What standard output and error are: a terminal or not, and the encoding written in."""
    found: List[Any] = []
    for stream in (sys.stdout, sys.stderr):
        try:
            found.append([stream.isatty(), stream.encoding, stream.errors])
        except (AttributeError, ValueError, OSError):
            found.append(None)
    return found


def environment(environ: Mapping[str, str]) -> List[List[str]]:
    """The variables of :data:`VARIABLES` and every ``TORCHLINT_*`` that are set, sorted."""
    return sorted([name, value] for name, value in environ.items()
                  if name.startswith("TORCHLINT_") or name in VARIABLES)


def replay_key(argv: Sequence[str], cwd: str, environ: Mapping[str, str], code: str) -> str:
    """The name of the record of a run: its arguments, working folder,
    environment (:func:`environment`), standard streams, Python, user and
    torchlint's code (``code``: :func:`fingerprint`)."""
    euid = os.geteuid() if hasattr(os, "geteuid") else -1
    facts = [REPLAY_FORMAT, list(argv), cwd, environment(environ), streams(), sys.executable, sys.version, euid, code]
    return hashlib.sha256(json.dumps(facts).encode("utf-8", "surrogateescape")).hexdigest()


def entries_digest(folder: str) -> Optional[str]:
    """A digest of the entries of ``folder``: each name, its kind and inode
    (None when it cannot be listed)."""
    try:
        with os.scandir(folder) as scan:
            names = sorted(f"{e.name}\0{int(e.is_dir(follow_symlinks=False))}{int(e.is_symlink())}\0{e.inode()}"
                           for e in scan)
    except OSError:
        return None
    return hashlib.sha256("\n".join(names).encode("utf-8", "surrogateescape")).hexdigest()


def folder_stamp(folder: str) -> Optional[List[int]]:
    """(mtime, inode, ctime) of a folder, following links; None if it is none."""
    try:
        info = os.stat(folder)
    except (OSError, ValueError):
        return None
    if not stat.S_ISDIR(info.st_mode):
        return None
    return [info.st_mtime_ns, info.st_ino, info.st_ctime_ns]


def looked_up(path: str) -> List[Optional[List[int]]]:
    """What a search for ``path`` finds: its own kind and inode, and those of
    what it leads to (``os.stat`` follows a link; None where nothing is)."""
    own = presence(path)
    try:
        info = os.stat(path)
        target: Optional[List[int]] = [stat.S_IFMT(info.st_mode), info.st_ino]
    except (OSError, ValueError):
        target = None
    return [None if own is None else list(own), target]


# -- checking a record ------------------------------------------------------------


def _stamp(value: Any) -> Optional[Tuple[int, int, int, int]]:
    return None if value is None else (value[0], value[1], value[2], value[3])


def holds_still(record: Mapping[str, Any]) -> bool:
    """Whether every file-system input a record names is as it was (any
    value of the wrong shape is a miss)."""
    try:
        for path, stamp, digest in record["files"]:
            if not holds(path, _stamp(stamp), digest):
                return False
        for path, stamp, digest, head in record["reads"]:
            if not holds(path, _stamp(stamp), digest, head):
                return False
        for path, follow in record["absent"]:
            try:
                os.stat(path) if follow else os.lstat(path)
                return False
            except (FileNotFoundError, NotADirectoryError):
                pass
            except OSError:
                return False
        for path, found in record["probes"]:
            now = presence(path)
            if (None if now is None else list(now)) != found:
                return False
        for folder, digest in record["listings"]:
            if names_digest(folder) != digest:
                return False
        for folder, stamp, entries in record["folders"]:
            if stamp is not None and folder_stamp(folder) != stamp:
                return False
            if stamp is None and (entries is None or entries_digest(folder) != entries):
                return False
        for path, found in record["lookups"]:
            if looked_up(path) != found:
                return False
        for raw, expanded in record["expansions"]:
            if os.path.expandvars(os.path.expanduser(raw)) != expanded:
                return False
    except (KeyError, TypeError, ValueError, IndexError, OSError):
        return False
    return True


def open_record(store: SealedStore, key: str) -> Optional[Dict[str, Any]]:
    """The record stored under ``key``, when it is sealed with the store's
    key, names that key and has the shape :meth:`Recording.payload` writes."""
    data = store._get((_FORMAT, store.fingerprint(), REPLAYS, key[:2]), f"{key}.json")
    if not isinstance(data, dict) or data.get("format") != REPLAY_FORMAT or data.get("key") != key:
        return None
    code = data.get("code")
    output = data.get("output")
    if not isinstance(code, int) or isinstance(code, bool) or not isinstance(output, list):
        return None
    if not all(isinstance(item, list) and len(item) == 2 and item[0] in (1, 2) and isinstance(item[1], str)
               and max(item[1], default=" ") <= "\xff" for item in output):
        return None
    return data


def replay(record: Mapping[str, Any]) -> int:
    """Write a record's output, as the run wrote it, and return its exit code.

    Standard error is flushed after each write and standard output only on a
    terminal, as Python's own streams do; a reader of standard output that
    left (``| head``) ends the replay quietly with exit code 0, as the full run does."""
    out_tty = sys.stdout.isatty()
    for number, text in record["output"]:
        data = text.encode("latin-1")
        try:
            if number == 1:
                sys.stdout.buffer.write(data)
                if out_tty:
                    sys.stdout.buffer.flush()
            else:
                sys.stderr.buffer.write(data)
                sys.stderr.buffer.flush()
        except BrokenPipeError:
            if number != 1:
                continue
            _silence_stdout()
            return 0
    try:
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        _silence_stdout()
        return 0
    return int(record["code"])


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


# -- recording a run ---------------------------------------------------------------


class _Tee(io.RawIOBase):
    """A binary stream that passes every write on to ``target`` and keeps a copy."""

    def __init__(self, target: BinaryIO, number: int, recording: "Recording") -> None:
        super().__init__()
        self._target = target
        self._number = number
        self._recording = recording

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        try:
            self._target.write(chunk)
        except BaseException:
            self._recording.doubt("a write failed")
            raise
        self._recording.output.append((self._number, chunk))
        return len(chunk)

    def flush(self) -> None:
        if getattr(self._target, "closed", False):
            # The stream under us was closed first (a test's captured output, or the
            # interpreter shutting down): nothing can be flushed, and the record is doubted.
            self._recording.doubt("the stream was closed")
            return
        try:
            self._target.flush()
        except BaseException:
            self._recording.doubt("a write failed")
            raise

    def fileno(self) -> int:
        return self._target.fileno()

    def isatty(self) -> bool:
        return self._target.isatty()


_RECORDING: ContextVar[Optional[Recording]] = ContextVar("torchlint_replay_recording", default=None)
"""The recording of the command-line run going on now, if it may be replayed
(set by :mod:`torchlint.interfaces.quick`); a context variable, so that no
module-level state changes."""


def active_recording() -> "Optional[Recording]":
    """The recording the command line gives what it ran on, or None."""
    return _RECORDING.get()


class Recording(Watch):
    """What a command-line run read and wrote, to be stored as a replay
    record when the command line says the run may be replayed
    (:meth:`accept`) and it ends with exit code 0 or 1."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.started_ns = time.time_ns()
        self.output: List[Tuple[int, bytes]] = []
        self.reads: Dict[str, List[Any]] = {}
        self.absent: Dict[str, bool] = {}
        self.expansions: Dict[str, str] = {}
        self.doubts: List[str] = []
        self.accepted: Optional[Dict[str, Any]] = None
        self.searched: Tuple[str, ...] = ()
        self.early: Dict[str, List[Optional[List[int]]]] = {}
        self._saved: List[Any] = []

    # -- the read watch --

    def read(self, path: str, info: os.stat_result, data: bytes, head: Optional[int]) -> None:
        from torchlint.source.stamps import stamp_of

        absolute = os.path.abspath(path)
        entry = [absolute, stamp_of(info), digest_of(data), head]
        known = self.reads.get(f"{absolute}\0{head}")
        if known is not None and known[2] != entry[2]:
            self.doubt(f"{absolute} changed while the run read it")
        self.reads[f"{absolute}\0{head}"] = entry

    def failed(self, path: str, follow: bool, missing: bool) -> None:
        if missing:
            self.absent[os.path.abspath(path)] = follow
        else:
            self.doubt(f"{path} could not be read")

    def expanded(self, raw: str, value: str) -> None:
        """A configuration value that named a path through the environment or ``~``."""
        self.expansions[raw] = value

    def doubt(self, why: str) -> None:
        """Something the record could not capture: the run is not recorded."""
        self.doubts.append(why)

    # -- the run --

    def start(self) -> None:
        """Watch reads and copy what is written to standard output and error."""
        from torchlint.source.reads import watched

        self._saved = [sys.stdout, sys.stderr, _RECORDING.set(self), watched(self)]
        copies = []
        for number, stream in ((1, sys.stdout), (2, sys.stderr)):
            tee: Any = _Tee(stream.buffer, number, self)
            copies.append(io.TextIOWrapper(tee, encoding=stream.encoding, errors=stream.errors,
                                           line_buffering=bool(stream.line_buffering), write_through=True))
        sys.stdout, sys.stderr = copies

    def stop(self) -> None:
        """Back to the real streams (what was written is flushed through)."""
        from torchlint.source.reads import unwatched

        if not self._saved:
            return
        out, err, token, watch = self._saved
        for copy in (sys.stdout, sys.stderr):
            try:
                copy.flush()
            except (OSError, ValueError):
                self.doubt("a write failed")
        sys.stdout, sys.stderr = out, err
        unwatched(watch)
        _RECORDING.reset(token)
        self._saved = []

    def begin(self, given: Sequence[str], searched: Sequence[str]) -> None:
        """Before the configuration search: ``searched`` are the names the
        searches for configuration and repositories look for in every folder
        above the working folder and the ``given`` paths; what each is now,
        and what each given path is, is kept to compare with the record's
        view of them when the run ends."""
        self.searched = tuple(searched)
        starts = [os.getcwd(), *(os.path.abspath(path) for path in given)]
        for folder in _upwards(starts):
            for name in self.searched:
                path = os.path.join(folder, name)
                self.early[path] = looked_up(path)
        for path in given:
            self.early[os.path.abspath(path)] = looked_up(os.path.abspath(path))

    def accept(self, *, directory: PathLike, shared: bool, files: Sequence[PathLike], run: Any, walked: Sequence[str],
               roots: Sequence[str], given: Sequence[str]) -> None:
        """The command line says this run may be replayed: it used the cache
        folder ``directory``, linted ``files`` with the run record ``run``
        (a :class:`~torchlint.source.stamps.RunRecord`), walked the folders
        ``walked``, took configuration roots ``roots``, was given the paths
        ``given``."""
        self.accepted = {"directory": os.fspath(directory), "shared": shared, "files": [os.fspath(f) for f in files],
                         "run": run, "walked": list(walked), "roots": list(roots), "given": list(given)}

    def payload(self, code: int) -> Optional[Dict[str, Any]]:
        """The record to store for exit code ``code``, or None when the run
        may not be replayed (not accepted, a doubt, a file without a digest,
        a folder that changed while the run went on)."""
        accepted = self.accepted
        if accepted is None or self.doubts or code not in (0, 1):
            return None
        run = accepted["run"]
        if run is None or len(run.files) != len(accepted["files"]) or any(r.digest is None for r in run.files):
            return None
        folders: List[List[Any]] = []
        own: Set[str] = set()
        for folder in sorted({os.path.abspath(f) for f in (*accepted["walked"], *accepted["roots"])}):
            own.add(folder)
            entry = self._folder(folder)
            if entry is None:
                return None
            folders.append(entry)
        above = _upwards([os.getcwd(), *accepted["walked"], *accepted["roots"],
                          *(os.path.dirname(os.path.abspath(f)) for f in (*accepted["files"], *accepted["given"]))])
        # What the searches for configuration and repositories find above: as it is now, and as it
        # was when the run began (a name that appeared after the run looked must not be recorded).
        lookups = []
        for folder in sorted(above):
            for name in self.searched:
                path = os.path.join(folder, name)
                now = looked_up(path)
                if folder not in own and not self._unchanged(path, now, folder):
                    return None
                lookups.append([path, now])
        for given in accepted["given"]:
            path = os.path.abspath(given)
            now = looked_up(path)
            if not self._unchanged(path, now, os.path.dirname(path)):
                return None
            lookups.append([path, now])
        recorded = run.to_json()
        return {
            "format": REPLAY_FORMAT, "key": self.key, "code": code,
            "output": [[number, chunk.decode("latin-1")] for number, chunk in self.output],
            "files": [[os.path.abspath(path), stamp, digest]
                      for path, (stamp, digest, _) in zip(accepted["files"], recorded["files"])],
            "inputs": recorded["inputs"],
            "probes": recorded["probes"],
            "listings": recorded["listings"],
            "reads": sorted(self.reads.values()),
            "absent": sorted([path, follow] for path, follow in self.absent.items()),
            "folders": folders,
            "lookups": lookups,
            "expansions": sorted([raw, value] for raw, value in self.expansions.items()),
        }

    def _unchanged(self, path: str, now: List[Optional[List[int]]], folder: str) -> bool:
        """Whether what a lookup of ``path`` finds now is what it found when
        the run began (:meth:`begin`); for a path not looked up then, whether
        its ``folder`` did not change since."""
        if path in self.early:
            return self.early[path] == now
        return self._settled(folder)

    def _settled(self, folder: str) -> bool:
        """Whether ``folder`` (gone or not) did not change from a tick before the run on."""
        try:
            info = os.stat(folder)
        except OSError:
            return True
        changed = max(info.st_mtime_ns, info.st_ctime_ns)
        return changed < self.started_ns - (COARSE_NS if changed % 1_000_000_000 == 0 else TICK_NS)

    def _folder(self, folder: str) -> Optional[List[Any]]:
        """A folder as a record keeps it: by its stamp when it was unchanged
        long enough before the run; by its entries when it changed shortly
        before the run (not during it); None when it may have changed
        while the run went on."""
        try:
            info = os.stat(folder)
        except OSError:
            return None
        if not self._settled(folder):
            return None
        changed = max(info.st_mtime_ns, info.st_ctime_ns)
        if changed < self.started_ns - TRUSTED_NS:
            return [folder, [info.st_mtime_ns, info.st_ino, info.st_ctime_ns], None]
        return [folder, None, entries_digest(folder)]

    def store(self, code: int) -> None:
        """Store the record of this run, if it may be replayed; failures to write are ignored."""
        payload = self.payload(code)
        accepted = self.accepted
        if payload is None or accepted is None or 6 * sum(len(chunk) for _, chunk in self.output) > MAX_OUTPUT_BYTES:
            return  # (a record over the store's bound would never be read)
        store = SealedStore(accepted["directory"], shared=accepted["shared"], fingerprint=fingerprint)
        try:
            store._put((_FORMAT, fingerprint(), REPLAYS, self.key[:2]), f"{self.key}.json", payload)
        finally:
            store.close()


def _upwards(starts: Sequence[str]) -> Set[str]:
    """Every folder at or above one of ``starts`` (absolute)."""
    found: Set[str] = set()
    for start in starts:
        current = os.path.abspath(start)
        while current not in found:
            found.add(current)
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
    return found


def recorded(run: Callable[[], None], key: str) -> None:
    """Run the full command line (``run``) under a :class:`Recording` with
    ``key``, and store its record when it may be replayed."""
    recording = Recording(key)
    recording.start()
    code: Any = None  # an exception other than an exit: nothing is stored
    try:
        run()
        code = 0
    except SystemExit as exit:
        code = exit.code
        raise
    finally:
        recording.stop()
        if isinstance(code, int) and not isinstance(code, bool):
            recording.store(code)
