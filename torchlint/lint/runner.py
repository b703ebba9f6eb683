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

from torchlint.analysis.index import EMPTY, ProjectIndex
from torchlint.lint.cache import Cache, EntryKey
from torchlint.model import Diagnostic, parse_error
from torchlint.lint.settings import Settings
from torchlint.source.sourcefile import SourceError, SourceFile, is_regular_file, read_source, write_source

# Linting and fixing need libcst and the rules; they are imported by the
# functions that lint, so that a run answered from the cache never loads them.

if TYPE_CHECKING:
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


def _read(path: Path) -> "Tuple[str, SourceFile | FileOutcome]":
    """The display path and the file's source, or the TL000 outcome of a file
    that cannot be read."""
    shown = display_path(path)
    try:
        return shown, read_source(path)
    except SourceError as error:
        return shown, FileOutcome(shown, (parse_error(shown, str(error)),))


def lint_file(path: Path, settings: Settings, project: ProjectIndex = EMPTY) -> FileOutcome:
    """Read and lint one file (in the run whose index is ``project``); every
    failure becomes a TL000 diagnostic."""
    from torchlint.lint.engine import lint_source
    from torchlint.lint.jobscripts import NOT_A_JOB_SCRIPT, is_job_script, is_shell_script, lint_job_script
    from torchlint.lint.notebook import cell_sources, lint_notebook

    shown, source = _read(path)
    if isinstance(source, FileOutcome):
        return source
    if not is_job_script(path, source.text) and is_shell_script(path, source.text):
        return FileOutcome(shown, (), note=NOT_A_JOB_SCRIPT)
    cells: Optional[Dict[str, str]] = None
    try:
        config = replace(settings.lint_config(path), project=project)
        if is_notebook(path):
            diagnostics, notebook = lint_notebook(source.text, shown, config)
            cells = cell_sources(notebook, shown) if notebook and diagnostics else None
        elif is_job_script(path, source.text):
            diagnostics = lint_job_script(source.text, shown, config, path)
        else:
            diagnostics = lint_source(source.text, shown, config)
    except Exception as error:  # a rule bug must not stop the run
        diagnostics = [_internal_error(shown, error)]
    # The text travels back (to the reporters) only when there is something to show.
    text = source.text if diagnostics else None
    # A job script's findings also depend on the code it launches: never cached.
    digest = None if is_job_script(path, source.text) else source.digest
    return FileOutcome(shown, tuple(diagnostics), text, digest=digest, cell_sources=cells)


def fix_file(path: Path, settings: Settings, project: ProjectIndex = EMPTY, *, unsafe: bool,
             write: bool) -> FileOutcome:
    """Fix one file in memory (in the run whose index is ``project``), and
    write it when ``write`` is set."""
    from torchlint.lint.fixer import fix_text
    from torchlint.lint.jobscripts import NOT_A_JOB_SCRIPT, fix_job_script, is_job_script, is_shell_script
    from torchlint.lint.notebook import cell_sources, fix_notebook

    shown, source = _read(path)
    if isinstance(source, FileOutcome):
        return source
    if not is_job_script(path, source.text) and is_shell_script(path, source.text):
        return FileOutcome(shown, (), note=NOT_A_JOB_SCRIPT)
    cells: Optional[Dict[str, str]] = None
    try:
        config = replace(settings.lint_config(path), project=project)
        if is_notebook(path):
            _, result, notebook = fix_notebook(source.text, shown, config, unsafe=unsafe)
            if notebook is not None and result.remaining:
                cells = cell_sources(notebook, shown)
        elif is_job_script(path, source.text):
            result = fix_job_script(source.text, shown, config, unsafe=unsafe, file=path)
        else:
            result = fix_text(source.text, shown, config, unsafe=unsafe)
    except Exception as error:
        return FileOutcome(shown, (_internal_error(shown, error),), source.text, original=source)
    # A job script's findings also depend on the code it launches: never cached.
    digest = None if is_job_script(path, source.text) else source.digest
    outcome = FileOutcome(shown, result.remaining, source.text, result, source, None, digest,
                          cell_sources=cells, pending_write=write and result.changed)
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
    """The cross-file index of a run, built once before linting for what the
    enabled rules ask (their ``project_queries``); ``cache`` keeps each
    file's part.  The caller passes it to every file's lint."""
    from torchlint.analysis.queries import build

    distinct = {id(settings): settings for settings in map(settings_for, files)}
    queries = [
        query
        for settings in distinct.values()
        for info in settings.enabled_infos(None)  # per-file ignores can only remove rules
        for query in info.queries
    ]
    return build(files, queries, cache)


def prepare_one_file(path: Optional[Path], settings_for: Callable[[Path], Settings]) -> ProjectIndex:
    """The index a run over just this file builds (the project modules it
    imports are read from disk): for the editor and flake8, which lint one
    file at a time and should agree with ``torchlint check``.  Text with no
    file behind it gets the empty index."""
    if path is None or not is_regular_file(path):  # an editor's buffer may have any name
        return EMPTY
    return prepare_project([path], settings_for)


def entry_key(shown: str, digest: str, settings: Settings, path: Path, project: ProjectIndex) -> EntryKey:
    """The cache key of one file's findings: its bytes, its configuration,
    and the facts of the project index that concern it, when there is one."""
    facts = "" if project is EMPTY else project.fingerprint_for(shown)
    return EntryKey(shown, digest, facts, settings.cache_fingerprint(path))


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
    fixing: only when none of them has an applicable fix).
    """
    project = prepare_project(files, settings_for, cache)
    if cache is None:
        return run_files(files, settings_for, work, jobs=jobs, project=project)
    results: Dict[int, FileOutcome] = {}
    keys: Dict[int, EntryKey] = {}
    misses: List[int] = []
    for index, path in enumerate(files):
        hit = _from_cache(path, settings_for(path), cache, project)
        if hit is not None and reusable(hit[0].diagnostics):
            results[index] = hit[0]
            continue
        if hit is not None:
            keys[index] = hit[1]
        misses.append(index)
    computed = run_files([files[i] for i in misses], settings_for, work, jobs=jobs, project=project)
    for index, outcome in zip(misses, computed):
        results[index] = outcome
        if outcome.digest is None or any(_is_internal(d) for d in outcome.diagnostics):
            continue
        if outcome.fixed is not None and outcome.fixed.changed:
            continue  # the findings belong to text that is no longer on disk
        key = keys.get(index) or entry_key(outcome.path, outcome.digest, settings_for(files[index]), files[index],
                                           project)
        cache.put(key, outcome.diagnostics)
    return [results[index] for index in range(len(files))]


def _is_internal(diagnostic: Diagnostic) -> bool:
    return diagnostic.code == "TL000" and diagnostic.message.startswith("internal error")


def _from_cache(path: Path, settings: Settings, cache: Cache,
                project: ProjectIndex) -> Optional[Tuple[FileOutcome, EntryKey]]:
    try:
        source = read_source(path)
    except SourceError:
        return None
    shown = display_path(path)
    key = entry_key(shown, source.digest, settings, path, project)
    diagnostics = cache.get(key)
    if diagnostics is None:
        return None
    text = source.text if diagnostics else None
    cells = None
    if diagnostics and is_notebook(path):
        from torchlint.lint.notebook import NotebookError, cell_sources, load

        try:
            cells = cell_sources(load(source.text), shown)
        except NotebookError:
            cells = None
    outcome = FileOutcome(shown, tuple(diagnostics), text, digest=source.digest, from_cache=True, cell_sources=cells)
    return outcome, key


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


def sources_of(outcomes: Sequence[FileOutcome]) -> Dict[str, str]:
    """path -> text for reporters' snippets."""
    sources = {o.path: o.source for o in outcomes if o.source is not None}
    for outcome in outcomes:
        sources.update(outcome.cell_sources or {})
    return sources
