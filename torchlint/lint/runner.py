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
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple, Union

from torchlint.lint.cache import Cache, EntryKey, FileEntry, Lint, run_key
from torchlint.lint.settings import Resolved, Settings, resolve_files
from torchlint.model import Diagnostic, parse_error
from torchlint.source.sourcefile import (
    SourceError, SourceFile, is_regular_file, read_source, source_of, write_source,
)
from torchlint.source.stamps import FileRow, RunRecord, Seen, Stamp, read_stamped

# Linting and fixing need libcst and the rules; they are imported by the
# functions that lint, so that a run answered from the cache never loads them.

if TYPE_CHECKING:
    from torchlint.analysis.index import ProjectIndex, RecordingIndex
    import ast

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

    def config(self, path: Path, settings: Settings, project: "Optional[ProjectIndex]") -> "LintConfig":
        config = settings.lint_config(path)
        chosen = self.recorder or project
        return config if chosen is None else replace(config, project=chosen)

    def reads(self) -> Optional[Tuple[str, ...]]:
        return None if self.recorder is None else tuple(sorted(self.recorder.reads))


def _open(path: Path, project: "Optional[ProjectIndex]") -> "Union[_Opened, FileOutcome]":
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
    return _Opened(shown, source, job, None if project is None or project.is_empty else project.recording())


def lint_file(path: Path, settings: Settings, project: "Optional[ProjectIndex]" = None) -> FileOutcome:
    """Read and lint one file (in the run whose index is ``project``; None:
    the empty index); every failure becomes a TL000 diagnostic."""
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


def fix_file(path: Path, settings: Settings, project: "Optional[ProjectIndex]" = None, *, unsafe: bool,
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
                    cache: Optional[Cache] = None, per_tree: "Optional[Callable[[ast.Module], Any]]" = None
                    ) -> "ProjectIndex":
    """The cross-file index of a run over ``files``, built once before linting
    for what the enabled rules ask (their ``project_queries``); ``cache``
    keeps each file's part; ``per_tree``: as for ``queries.build_from`` (the
    pre-check summaries of a cold run).  The caller passes it to every file's lint."""
    from torchlint.analysis.queries import build

    return build(files, resolve_files(files, settings_for, keyed=False).queries, cache, per_tree=per_tree)


def prepare_one_file(path: Optional[Path], settings_for: Callable[[Path], Settings]) -> "ProjectIndex":
    """The index a run over just this file builds (the project modules it
    imports are read from disk): for the editor and flake8, which lint one
    file at a time and should agree with ``torchlint check``.  Text with no
    file behind it gets the empty index."""
    if path is None or not is_regular_file(path):  # an editor's buffer may have any name
        from torchlint.analysis.index import EMPTY

        return EMPTY
    return prepare_project([path], settings_for)


def run_files(
    files: Sequence[Path],
    settings_for: Callable[[Path], Settings],
    work: Callable[..., FileOutcome],
    *,
    jobs: int = 1,
    project: "Optional[ProjectIndex]" = None,
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
    bound = partial(work, project=project) if project is not None and not project.is_empty else work

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
                from torchlint.source.parsing import HandedOver, handing_over

                handed: List[int] = []  # unusual texts: linted in one worker, which parses them once
                with handing_over():
                    for index, (path, settings) in enumerate(tasks):
                        try:
                            outcome = bound(path, settings)
                        except HandedOver:
                            handed.append(index)
                            continue
                        done(index, outcome)
                run_pool(bound, [tasks[i] for i in handed], 1, lambda i, r: done(handed[i], r), _defer_writes)
            else:
                sizes = [_size(path) for path, _ in tasks]
                big = [i for i, size in enumerate(sizes) if size >= BIG_FILE_BYTES]
                # Largest first, so that no core is left idle on a big file at the end (the
                # results are put back in the order of ``files``).
                small = sorted(set(range(len(tasks))) - set(big), key=lambda i: (-sizes[i], i))
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

    One way, in batch stages: the record of the last run over the same
    files and configuration (``cache.get_record``: each file's stamp, digest
    and findings, and what the index read besides) → the files' stat data
    (``stamps``): when nothing changed, the record answers every file and
    nothing else is read; else every file is read once, the index is built
    once and each file's entry is read once (``cache.get_entries``: its
    lints keyed by the digest of the index facts each read) and answers the
    file when the run's index holds the same facts → the texts of the
    answered files with findings, for the report (the bytes their digest
    names, or the file is linted again) → the rest are linted → their
    lints and the record are stored (``cache.store``).  Without a cache the
    run takes the same way, with nothing to look up or to store.
    """
    return _run(resolved, work, cache, jobs, reusable, from_record=True)


def _run(resolved: Resolved, work: Callable[..., FileOutcome], cache: Optional[Cache], jobs: int,
         reusable: Callable[[Sequence[Diagnostic]], bool], from_record: bool) -> List[FileOutcome]:
    """:func:`run_resolved`'s stages; ``from_record``: the last run's record
    may answer (not when it turned out that a file it answered changed)."""
    files = resolved.files
    configs = resolved.digests
    count = len(files)
    shown = [display_path(path) for path in files]
    key = _record_key(shown, configs) if cache is not None else None
    previous = cache.get_record(key, shown) if cache is not None and key is not None else None
    # The record's rows when no file's bytes and nothing the index read changed (stat data, mostly).
    unchanged = previous[0].unchanged_rows(files) if previous is not None and from_record else None
    rows: List[Optional[FileRow]] = list(unchanged or [None] * count)
    answers: List[Optional[Tuple[Diagnostic, ...]]] = list(previous[1]) if unchanged and previous else [None] * count
    data: Dict[int, bytes] = {}
    read: Dict[int, Tuple[Optional[Stamp], str]] = {}
    project: "Optional[ProjectIndex]" = None  # None: no index (the empty one)
    seen: Optional[Seen] = None
    entries: Dict[int, Optional[FileEntry]] = {}
    if not unchanged or not all(row.indexless if found is None else reusable(found)
                                for row, found in zip(unchanged, answers)):
        rows, answers = [None] * count, [None] * count  # the record answers nothing: the index and entries do
        texts: List[Tuple[Path, bytes]] = []
        for index, path in enumerate(files):  # each file read once here; the .py files feed the index
            try:
                data[index], stamp, digest = read_stamped(path)
            except SourceError:
                continue
            read[index] = (stamp, digest)
            if path.suffix == ".py":
                texts.append((path, data[index]))
        from torchlint.analysis.imports import ModuleNames
        from torchlint.analysis.queries import build_from

        from torchlint.lint.pool import each_in_workers
        from torchlint.ruleapi.precheck import shipped

        seen = Seen()
        # The per-file part of the index is parsed in the workers too (one parse a file; small results back).
        # In a cold run (no record: every file will be linted) that parse also makes each file's pre-check
        # summary, so that the lint does not parse the file with ast again; after a change, most files
        # come from the cache and only those the index needs are parsed.
        project = build_from(texts, resolved.queries, cache, module_of=ModuleNames(seen),
                        each=each_in_workers(jobs, len(texts)), per_tree=shipped if previous is None else None)
        del texts
        looked = sorted(read) if cache is not None else []
        entries = dict(zip(looked, cache.get_entries([EntryKey(shown[i], read[i][1], configs[i]) for i in looked])
                           if cache is not None else []))
        answered = {i: entry.answer(project) for i, entry in entries.items() if entry is not None}
        for index, variant in answered.items():
            if variant is not None and reusable(variant.diagnostics):
                answers[index] = variant.diagnostics
                rows[index] = FileRow(read[index][0], read[index][1])
    # The texts of the answered files with findings, for the report: the bytes of their digest.
    sources: Dict[int, SourceFile] = {}
    stale: Set[int] = set()
    for index, row in enumerate(rows):
        try:
            if answers[index] and row is not None:
                sources[index] = source_of(files[index], data[index]) if index in data else read_source(files[index])
                if sources[index].digest != row.digest:
                    stale.add(index)
        except SourceError:
            stale.add(index)
    if seen is None and stale:
        return _run(resolved, work, cache, jobs, reusable, from_record=False)  # changed since its stamp was taken
    misses = [i for i in range(count) if answers[i] is None or i in stale]
    computed = run_files([files[i] for i in misses], resolved.settings_for, work, jobs=jobs, project=project)
    if seen is None and not all(outcome.indexless for outcome in computed):
        return _run(resolved, work, cache, jobs, reusable, from_record=False)  # no job script any more
    outcomes: Dict[int, FileOutcome] = dict(zip(misses, computed))
    linted: List[Lint] = []
    for index, outcome in outcomes.items():
        cacheable = (cache is not None and outcome.digest is not None
                     and not any(_is_internal(d) for d in outcome.diagnostics)
                     # a fixed file: the findings belong to text that is no longer on disk
                     and not (outcome.fixed is not None and outcome.fixed.changed))
        answers[index] = outcome.diagnostics if cacheable else None
        rows[index] = FileRow(None, None, outcome.indexless)
        if cacheable and outcome.digest is not None:
            linted.append(Lint(EntryKey(outcome.path, outcome.digest, configs[index]), outcome.reads or (),
                               outcome.diagnostics, entries.get(index)))
            stamp = read[index][0] if index in read and read[index][1] == outcome.digest else None
            rows[index] = FileRow(stamp, outcome.digest)
    if cache is not None:
        record_rows = tuple(row for row in rows if row is not None)
        record = (RunRecord(record_rows, *previous[0].dependencies) if seen is None and previous is not None
                  else RunRecord.of(record_rows, seen))
        cache.store(project, linted, key, record, tuple(answers), previous)
    for index, source in sources.items():  # the outcomes of the files answered with findings
        if index in outcomes:
            continue
        cells = None
        if is_notebook(files[index]):
            from torchlint.lint.notebook import NotebookError, cell_sources, load

            try:
                cells = cell_sources(load(source.text), shown[index])
            except NotebookError:
                cells = None
        outcomes[index] = FileOutcome(shown[index], answers[index] or (), source.text, digest=source.digest,
                                      from_cache=True, cell_sources=cells)
    for index, row in enumerate(rows):  # the files answered without findings
        if index not in outcomes and row is not None:
            outcomes[index] = FileOutcome(shown[index], (), None, digest=row.digest, from_cache=True)
    return [outcomes[index] for index in range(count)]


def _record_key(shown: Sequence[str], configs: Sequence[str]) -> Optional[str]:
    """The name of this run's record; None when the working folder is gone
    (relative paths mean nothing to a later run)."""
    try:
        return run_key(os.getcwd(), shown, configs)
    except OSError:
        return None


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
