"""Lint or fix many files: read, run the engine, write; never raise per file."""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from torchlint.analysis.index import EMPTY, ProjectIndex, RecordingIndex
from torchlint.lint.cache import Cache, EntryKey, FileEntry, Variant, facts_digest, run_key
from torchlint.lint.settings import Resolved, Settings, resolve_files
from torchlint.model import Diagnostic, parse_error
from torchlint.source.sourcefile import (
    SourceError, SourceFile, is_regular_file, read_source, write_source,
)
from torchlint.source.stamps import FileRow, RunRecord, Seen, Stamp, read_stamped

# Linting and fixing need libcst and the rules; they are imported by the
# functions that lint, so that a run answered from the cache never loads them.

if TYPE_CHECKING:
    from torchlint.lint.engine import LintConfig
    from torchlint.lint.fixer import FixResult
    from torchlint.lint.pool import Died


def display_path(path: Path) -> str:
    """The path as users should see it: relative to the working directory."""
    try:
        return Path(os.path.relpath(path)).as_posix() if path.is_absolute() else path.as_posix()
    except ValueError:
        return path.as_posix()


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one file."""

    path: str
    diagnostics: Tuple[Diagnostic, ...]
    source: Optional[str] = None
    fixed: "Optional[FixResult]" = None
    original: Optional[SourceFile] = None
    write_error: Optional[str] = None
    digest: Optional[str] = None
    from_cache: bool = False
    cell_sources: Optional[Dict[str, str]] = None
    pending_write: bool = False
    """The fixed text is still to be written (by :func:`commit`)."""
    note: Optional[str] = None
    """Why the file was not linted, for a line on standard error (a shell
    script that is not a job script)."""
    reads: Optional[Tuple[str, ...]] = None
    """Which facts of the run's project index the lint read (None: no index,
    or not recorded); the file's cache entry is keyed by those alone."""
    indexless: bool = False
    """Its lint reads nothing from the project index, whatever the index
    holds (a Slurm job script, or a shell script that is not one): a run
    whose record shows nothing else changed lints it again without one."""

    @property
    def written(self) -> bool:
        """Whether the fixed text was written over the file."""
        return (self.fixed is not None and self.fixed.changed and self.original is not None
                and not self.pending_write and self.write_error is None)


def is_notebook(path: Path) -> bool:
    """Whether a path is a Jupyter notebook."""
    return path.suffix == ".ipynb"


def _internal_error(path: str, error: BaseException) -> Diagnostic:
    return parse_error(path, f"internal error while linting: {type(error).__name__}: {error}")


@dataclass(frozen=True)
class _Opened:
    """One file read and ready for its lint or fix: the prologue both share."""

    shown: str
    source: SourceFile
    job: bool  # a Slurm job script (its findings also depend on the code it launches: never cached)
    recorder: "Optional[RecordingIndex]"
    """A copy of the run's index that records what the file's lint reads (none for a run without an index)."""

    def config(self, path: Path, settings: Settings, project: ProjectIndex) -> "LintConfig":
        return replace(settings.lint_config(path), project=self.recorder or project)

    def reads(self) -> Optional[Tuple[str, ...]]:
        return None if self.recorder is None else tuple(sorted(self.recorder.reads))


def _open(path: Path, project: ProjectIndex) -> "Union[_Opened, FileOutcome]":
    """The file read, or the outcome of one that is not linted: unreadable
    (TL000), or a shell script that is not a job script (a note)."""
    from torchlint.lint.jobscripts import NOT_A_JOB_SCRIPT, is_job_script, is_shell_script

    shown = display_path(path)
    try:
        source = read_source(path)
    except SourceError as error:
        return FileOutcome(shown, (parse_error(shown, str(error)),))
    job = is_job_script(path, source.text)
    if not job and is_shell_script(path, source.text):
        return FileOutcome(shown, (), note=NOT_A_JOB_SCRIPT, indexless=True)
    return _Opened(shown, source, job, None if project is EMPTY else project.recording())


def lint_file(path: Path, settings: Settings, project: ProjectIndex = EMPTY) -> FileOutcome:
    """Read and lint one file (in the run whose index is ``project``); every
    failure becomes a TL000 diagnostic."""
    from torchlint.lint.engine import lint_source
    from torchlint.lint.jobscripts import lint_job_script
    from torchlint.lint.notebook import cell_sources, lint_notebook

    opened = _open(path, project)
    if isinstance(opened, FileOutcome):
        return opened
    shown, text = opened.shown, opened.source.text
    cells: Optional[Dict[str, str]] = None
    try:
        config = opened.config(path, settings, project)
        if is_notebook(path):
            diagnostics, notebook = lint_notebook(text, shown, config)
            cells = cell_sources(notebook, shown) if notebook and diagnostics else None
        elif opened.job:
            diagnostics = lint_job_script(text, shown, config, path)
        else:
            diagnostics = lint_source(text, shown, config)
    except Exception as error:  # a rule bug must not stop the run
        diagnostics = [_internal_error(shown, error)]
    # The text travels back (to the reporters) only when there is something to show.
    return FileOutcome(shown, tuple(diagnostics), text if diagnostics else None,
                       digest=None if opened.job else opened.source.digest, cell_sources=cells,
                       reads=opened.reads(), indexless=opened.job and not is_notebook(path))


def fix_file(path: Path, settings: Settings, project: ProjectIndex = EMPTY, *, unsafe: bool,
             write: bool) -> FileOutcome:
    """Fix one file in memory (in the run whose index is ``project``), and
    write it when ``write`` is set."""
    from torchlint.lint.fixer import fix_text
    from torchlint.lint.jobscripts import fix_job_script
    from torchlint.lint.notebook import cell_sources, fix_notebook

    opened = _open(path, project)
    if isinstance(opened, FileOutcome):
        return opened
    shown, source = opened.shown, opened.source
    cells: Optional[Dict[str, str]] = None
    try:
        config = opened.config(path, settings, project)
        if is_notebook(path):
            _, result, notebook = fix_notebook(source.text, shown, config, unsafe=unsafe)
            if notebook is not None and result.remaining:
                cells = cell_sources(notebook, shown)
        elif opened.job:
            result = fix_job_script(source.text, shown, config, unsafe=unsafe, file=path)
        else:
            result = fix_text(source.text, shown, config, unsafe=unsafe)
    except Exception as error:
        return FileOutcome(shown, (_internal_error(shown, error),), source.text, original=source)
    outcome = FileOutcome(shown, result.remaining, source.text, result, source, None,
                          None if opened.job else source.digest, cell_sources=cells,
                          pending_write=write and result.changed, reads=opened.reads(),
                          indexless=opened.job and not is_notebook(path))
    return outcome if _deferred_writes else commit(outcome)


_deferred_writes = False
"""Set while :func:`run_files` runs (and in its workers): the fixed text is
written by the parent, one file at a time, so that an interrupted run knows
exactly what it wrote and never leaves a file half done."""


def _defer_writes() -> None:
    """In a worker started without fork: leave writing to the parent."""
    global _deferred_writes
    _deferred_writes = True


def commit(outcome: FileOutcome) -> FileOutcome:
    """Write a fixed file atomically, if its outcome says it is due."""
    if not outcome.pending_write:
        return outcome
    assert outcome.original is not None and outcome.fixed is not None
    try:
        write_source(outcome.original, outcome.fixed.source)
    except (SourceError, OSError) as error:
        return replace(outcome, pending_write=False, write_error=str(error))
    return replace(outcome, pending_write=False)


BIG_FILE_BYTES = 512 * 1024
"""Files this large are linted one at a time in a fresh process after the
other workers have exited, so that a huge syntax tree is never in memory
beside others, whatever the job count."""


class Interrupted(KeyboardInterrupt):
    """The run was stopped by SIGINT or SIGTERM; the workers are gone and
    ``written`` lists the files fixed on disk before it stopped."""

    def __init__(self, signal_number: int, written: Tuple[str, ...]) -> None:
        super().__init__(signal_number, written)
        self.signal_number = signal_number
        self.written = written


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that the same clean-up runs."""


def _raise_terminated(signal_number: int, frame: Optional[FrameType]) -> None:
    raise _Terminated()


@contextmanager
def _writes_deferred() -> Iterator[None]:
    """Workers only compute; the parent writes (see ``_deferred_writes``);
    SIGTERM stops the run the way Ctrl-C does."""
    global _deferred_writes
    previous_deferred = _deferred_writes
    in_main = threading.current_thread() is threading.main_thread()
    previous_handler = signal.signal(signal.SIGTERM, _raise_terminated) if in_main else None
    _deferred_writes = True
    try:
        yield
    finally:
        _deferred_writes = previous_deferred
        if in_main:
            signal.signal(signal.SIGTERM, previous_handler)


@contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while a file is written and recorded as
    written, then deliver any that came meanwhile: a signal landing between
    the rename and the record would make the report miss a file on disk."""
    held = (signal.SIGINT, signal.SIGTERM)
    if threading.current_thread() is not threading.main_thread() or None in map(signal.getsignal, held):
        yield  # handlers Python cannot put back (set outside it) stay as they are
        return
    arrived: List[int] = []

    def hold(signal_number: int, frame: Optional[FrameType]) -> None:
        arrived.append(signal_number)

    previous = {number: signal.signal(number, hold) for number in held}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    for came in dict.fromkeys(arrived):
        signal.raise_signal(came)  # the restored handler raises it here


def _died(path: Path, died: "Died") -> FileOutcome:
    shown = display_path(path)
    return FileOutcome(shown, (parse_error(shown, f"internal error while linting: the worker process "
                                                  f"{died.reason}; this file was not linted"),))


def prepare_project(files: Sequence[Path], settings_for: Callable[[Path], Settings],
                    cache: Optional[Cache] = None) -> ProjectIndex:
    """The cross-file index of a run over ``files``, built once before linting
    for what the enabled rules ask (their ``project_queries``); ``cache``
    keeps each file's part.  The caller passes it to every file's lint."""
    from torchlint.analysis.queries import build

    return build(files, resolve_files(files, settings_for, keyed=False).queries, cache)


def prepare_one_file(path: Optional[Path], settings_for: Callable[[Path], Settings]) -> ProjectIndex:
    """The index a run over just this file builds (the project modules it
    imports are read from disk): for the editor and flake8, which lint one
    file at a time and should agree with ``torchlint check``.  Text with no
    file behind it gets the empty index."""
    if path is None or not is_regular_file(path):  # an editor's buffer may have any name
        return EMPTY
    return prepare_project([path], settings_for)


def run_files(
    files: Sequence[Path],
    settings_for: Callable[[Path], Settings],
    work: Callable[..., FileOutcome],
    *,
    jobs: int = 1,
    project: ProjectIndex = EMPTY,
) -> List[FileOutcome]:
    """Apply ``work`` to each file (``work(path, settings, project)``); in
    ``jobs`` processes when that pays off.

    The result is in the order of ``files`` whatever the job count.  A worker
    that dies costs a TL000 for the file it was on; the other files are
    still linted.  On Ctrl-C or SIGTERM the workers are stopped at once and
    :class:`Interrupted` says which files were written.
    """
    if not files:
        return []
    tasks = [(path, settings_for(path)) for path in files]
    results: Dict[int, FileOutcome] = {}
    # The index travels with the work (pickled once per worker), not through module state.
    bound = partial(work, project=project) if project is not EMPTY else work

    from torchlint.lint.pool import Died, run_pool  # only runs that lint files need workers

    def done(index: int, result: "Union[FileOutcome, Died]") -> None:
        if isinstance(result, Died):
            results[index] = _died(tasks[index][0], result)
        else:
            with _signals_held():
                results[index] = commit(result)

    try:
        with _writes_deferred():
            if jobs <= 1 or len(tasks) < 2 * jobs:
                for index, (path, settings) in enumerate(tasks):
                    done(index, bound(path, settings))
            else:
                big = [i for i, (path, _) in enumerate(tasks) if _size(path) >= BIG_FILE_BYTES]
                small = sorted(set(range(len(tasks))) - set(big))
                run_pool(bound, [tasks[i] for i in small], jobs, lambda i, r: done(small[i], r), _defer_writes)
                # The pool has exited (and freed what it held) before the big
                # trees are built, one at a time in a fresh process.
                run_pool(bound, [tasks[i] for i in big], 1, lambda i, r: done(big[i], r), _defer_writes)
    except KeyboardInterrupt as interrupt:
        number = signal.SIGTERM if isinstance(interrupt, _Terminated) else signal.SIGINT
        written = tuple(results[i].path for i in sorted(results) if results[i].written)
        raise Interrupted(int(number), written) from None
    return [results[index] for index in range(len(tasks))]


def cached_run(
    files: Sequence[Path],
    settings_for: Callable[[Path], Settings],
    work: Callable[..., FileOutcome],
    *,
    cache: Optional[Cache],
    jobs: int = 1,
    reusable: Callable[[Sequence[Diagnostic]], bool] = lambda _: True,
) -> List[FileOutcome]:
    """Like :func:`run_files`, but answer from ``cache`` where it can.

    ``reusable`` says whether cached findings make the work unnecessary (for
    fixing: only when none of them has an applicable fix).  Each file's
    settings are resolved once (``settings.resolve_files``), then the run
    goes as :func:`run_resolved` says.
    """
    return run_resolved(resolve_files(files, settings_for, keyed=cache is not None), work, cache=cache, jobs=jobs,
                        reusable=reusable)


def run_resolved(
    resolved: Resolved,
    work: Callable[..., FileOutcome],
    *,
    cache: Optional[Cache],
    jobs: int = 1,
    reusable: Callable[[Sequence[Diagnostic]], bool] = lambda _: True,
) -> List[FileOutcome]:
    """:func:`cached_run` over files whose settings are resolved already (the
    command line resolves them right after discovery).

    One way, in batch stages.  The record of the last run over the same
    files and configuration (``cache.get_record``) holds each file's stamp,
    digest and findings: when no file's stamp (or bytes) and nothing else
    the index read changed (``stamps``), it answers the whole run, and
    nothing but the record and the files' stat data is read.  Otherwise
    every file is read once (``stamps.read_stamped``), the index is built
    once, each file's entry is read once (``cache.get_entries``: its lints
    keyed by the digest of the index facts each read) and answers the file
    when the index's facts are those it was linted under, the rest are
    linted, and the new entries and the record are stored.  Without a cache
    the run takes the same way, with nothing to look up or to store.
    """
    run = _Run(resolved, cache)
    results = run.from_record(reusable, work, jobs)
    if results is None:
        results = run.with_index(reusable, work, jobs)
    run.save(results)
    return [results[index] for index in range(len(resolved.files))]


class _Run:
    """One cached run: its files with their resolved settings, what the last
    run's record says of them, and the rows of the record the next run will
    start from."""

    def __init__(self, resolved: Resolved, cache: Optional[Cache]) -> None:
        self.files = resolved.files
        self.resolved = resolved
        self.cache = cache
        self.shown = [display_path(path) for path in resolved.files]
        self.configs = resolved.digests
        try:
            self.key: Optional[str] = run_key(os.getcwd(), self.shown, self.configs) if cache is not None else None
        except OSError:  # the working folder is gone: relative paths mean nothing to a later run
            self.key = None
        self.previous = cache.get_record(self.key, self.shown) if cache is not None and self.key is not None else None
        # The record's rows when no file's bytes and nothing the index read changed (stat data, mostly).
        self.unchanged = self.previous[0].unchanged_rows(self.files) if self.previous is not None else None
        self.rows: List[Optional[FileRow]] = [None] * len(self.files)
        self.seen: Optional[Seen] = None

    def from_record(self, reusable: Callable[[Sequence[Diagnostic]], bool], work: Callable[..., FileOutcome],
                    jobs: int) -> Optional[Dict[int, FileOutcome]]:
        """Every file's outcome from the record, when it shows that nothing
        changed (None otherwise: the index is needed); files that are never
        cached and read nothing from the index (job scripts) are linted
        again, without it."""
        if self.unchanged is None or self.previous is None:
            return None
        results: Dict[int, FileOutcome] = {}
        again: List[int] = []
        for index, (row, found) in enumerate(zip(self.unchanged, self.previous[1])):
            if row.digest is None or found is None:
                if not row.indexless:
                    return None  # not cached (an unreadable file, an internal error): linted with the index
                again.append(index)
                continue
            outcome = self._cached(index, row.digest, found) if reusable(found) else None
            if outcome is None:
                return None
            results[index] = outcome
            self.rows[index] = row
        if again:
            from torchlint.lint.jobscripts import is_job_script, is_shell_script

            for index in again:  # still a job script (or a shell script that is not one)?
                try:
                    text = read_source(self.files[index]).text
                except SourceError:
                    return None
                if is_notebook(self.files[index]) or not (is_job_script(self.files[index], text)
                                                          or is_shell_script(self.files[index], text)):
                    return None
            linted = run_files([self.files[i] for i in again], self.resolved.settings_for, work, jobs=jobs)
            if not all(outcome.indexless for outcome in linted):
                return None  # it became a file whose lint may read the index
            for index, outcome in zip(again, linted):
                results[index] = outcome
                self.rows[index] = FileRow(None, None, "", True)
        self.seen = None  # nothing the index read changed: the record's dependencies stand
        return results

    def with_index(self, reusable: Callable[[Sequence[Diagnostic]], bool], work: Callable[..., FileOutcome],
                   jobs: int) -> Dict[int, FileOutcome]:
        """The batch stages of a run where something changed: read every file
        once, build the index, read each file's entry once and take the lint
        whose facts hold, lint the rest, store their entries."""
        texts: List[Tuple[Path, bytes]] = []
        read: Dict[int, Tuple[Optional[Stamp], str]] = {}
        for index, path in enumerate(self.files):  # each file read once here; the .py files feed the index
            try:
                data, stamp, digest = read_stamped(path)
            except SourceError:
                continue
            read[index] = (stamp, digest)
            if path.suffix == ".py":
                texts.append((path, data))
        from torchlint.analysis.imports import ModuleNames
        from torchlint.analysis.queries import build

        self.seen = Seen()
        project = build(self.files, self.resolved.queries, self.cache, texts=texts, module_of=ModuleNames(self.seen))
        del texts
        looked = sorted(read) if self.cache is not None else []
        keys = {i: EntryKey(self.shown[i], read[i][1], self.configs[i]) for i in looked}
        entries = dict(zip(looked, self.cache.get_entries([keys[i] for i in looked]))) if self.cache else {}
        results: Dict[int, FileOutcome] = {}
        misses: List[int] = []
        for index in range(len(self.files)):
            entry = entries.get(index)
            variant = entry.answer(project) if entry is not None else None
            outcome = (self._cached(index, read[index][1], variant.diagnostics)
                       if variant is not None and reusable(variant.diagnostics) else None)
            if outcome is None or variant is None:
                misses.append(index)
                continue
            results[index] = outcome
            self.rows[index] = FileRow(read[index][0], read[index][1], variant.facts)
        computed = run_files([self.files[i] for i in misses], self.resolved.settings_for, work, jobs=jobs,
                             project=project)
        stored: List[FileEntry] = []
        for index, outcome in zip(misses, computed):
            results[index] = outcome
            cacheable = (outcome.digest is not None and not any(_is_internal(d) for d in outcome.diagnostics)
                         # a fixed file: the findings belong to text that is no longer on disk
                         and not (outcome.fixed is not None and outcome.fixed.changed))
            if self.cache is None:
                continue  # nothing to store, and no record
            if not cacheable or outcome.digest is None:
                self.rows[index] = FileRow(None, None, "", outcome.indexless)
                continue
            reads = outcome.reads or ()
            variant = Variant(facts_digest(project, reads), reads, outcome.diagnostics)
            entry = entries.get(index)
            key = EntryKey(outcome.path, outcome.digest, self.configs[index])
            stored.append((entry if entry is not None and entry.key == key else FileEntry(key)).with_variant(variant))
            stamp = read[index][0] if index in read and read[index][1] == outcome.digest else None
            self.rows[index] = FileRow(stamp, outcome.digest, variant.facts)
        if self.cache is not None:
            self.cache.put_entries(stored)
        return results

    def _cached(self, index: int, digest: str, diagnostics: Sequence[Diagnostic]) -> Optional[FileOutcome]:
        """The outcome of a file answered from the cache.  Its text is read
        only when there are findings to show (and must still be the bytes
        of ``digest``); None when it is not."""
        path, shown = self.files[index], self.shown[index]
        if not diagnostics:
            return FileOutcome(shown, (), None, digest=digest, from_cache=True)
        try:
            source = read_source(path)
        except SourceError:
            return None
        if source.digest != digest:
            return None  # changed since its stamp was taken
        cells = None
        if is_notebook(path):
            from torchlint.lint.notebook import NotebookError, cell_sources, load

            try:
                cells = cell_sources(load(source.text), shown)
            except NotebookError:
                cells = None
        return FileOutcome(shown, tuple(diagnostics), source.text, digest=digest, from_cache=True,
                           cell_sources=cells)

    def save(self, results: Dict[int, FileOutcome]) -> None:
        """Store the run's record with its files' findings, when it differs
        from the one it started from."""
        if self.key is None or self.cache is None or any(row is None for row in self.rows):
            return
        rows = tuple(row for row in self.rows if row is not None)
        if self.seen is None and self.previous is not None:  # answered from the record
            record = RunRecord(rows, *self.previous[0].dependencies)
        else:
            record = RunRecord.of(rows, self.seen)
        findings = tuple(None if row.digest is None else results[index].diagnostics
                         for index, row in enumerate(rows))
        if self.previous is None or (record, findings) != self.previous:
            self.cache.put_record(self.key, record, findings)


def _is_internal(diagnostic: Diagnostic) -> bool:
    return diagnostic.code == "TL000" and diagnostic.message.startswith("internal error")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def default_jobs() -> int:
    """All cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1
