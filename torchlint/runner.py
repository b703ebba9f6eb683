"""Lint or fix many files: read, run the engine, write; never raise per file."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from torchlint.cache import Cache
from torchlint.engine import lint_source, parse_error
from torchlint.fixer import FixResult, fix_text
from torchlint.jobscript.lint import fix_job_script, is_job_script, lint_job_script
from torchlint.model import Diagnostic
from torchlint.notebook import NotebookError, cell_sources, fix_notebook, lint_notebook, load
from torchlint.settings import Settings
from torchlint.sourcefile import SourceError, SourceFile, read_source, write_source


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
    fixed: Optional[FixResult] = None
    original: Optional[SourceFile] = None
    write_error: Optional[str] = None
    digest: Optional[str] = None
    from_cache: bool = False
    cell_sources: Optional[Dict[str, str]] = None


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


def lint_file(path: Path, settings: Settings) -> FileOutcome:
    """Read and lint one file; every failure becomes a TL000 diagnostic."""
    shown, source = _read(path)
    if isinstance(source, FileOutcome):
        return source
    cells: Optional[Dict[str, str]] = None
    try:
        if is_notebook(path):
            diagnostics, notebook = lint_notebook(source.text, shown, settings.lint_config(path))
            cells = cell_sources(notebook, shown) if notebook and diagnostics else None
        elif is_job_script(path, source.text):
            diagnostics = lint_job_script(source.text, shown, settings.lint_config(path), path)
        else:
            diagnostics = lint_source(source.text, shown, settings.lint_config(path))
    except Exception as error:  # a rule bug must not stop the run
        diagnostics = [_internal_error(shown, error)]
    # The text travels back (to the reporters) only when there is something to show.
    text = source.text if diagnostics else None
    # A job script's findings also depend on the code it launches: never cached.
    digest = None if is_job_script(path, source.text) else source.digest
    return FileOutcome(shown, tuple(diagnostics), text, digest=digest, cell_sources=cells)


def fix_file(path: Path, settings: Settings, *, unsafe: bool, write: bool) -> FileOutcome:
    """Fix one file in memory, and write it when ``write`` is set."""
    shown, source = _read(path)
    if isinstance(source, FileOutcome):
        return source
    cells: Optional[Dict[str, str]] = None
    try:
        if is_notebook(path):
            _, result, notebook = fix_notebook(source.text, shown, settings.lint_config(path), unsafe=unsafe)
            if notebook is not None and result.remaining:
                cells = cell_sources(notebook, shown)
        elif is_job_script(path, source.text):
            result = fix_job_script(source.text, shown, settings.lint_config(path), unsafe=unsafe, file=path)
        else:
            result = fix_text(source.text, shown, settings.lint_config(path), unsafe=unsafe)
    except Exception as error:
        return FileOutcome(shown, (_internal_error(shown, error),), source.text, original=source)
    write_error: Optional[str] = None
    if write and result.changed:
        try:
            write_source(source, result.source)
        except (SourceError, OSError) as error:
            write_error = str(error)
    digest = None if is_job_script(path, source.text) else source.digest
    return FileOutcome(shown, result.remaining, source.text, result, source, write_error, digest,
                       cell_sources=cells)


BIG_FILE_BYTES = 512 * 1024
"""Files this large are linted one at a time in the main process after the
worker processes have exited, so that a huge syntax tree is never in memory
beside others, whatever the job count."""


def _pool(jobs: int) -> "ProcessPoolExecutor":
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    return ProcessPoolExecutor(max_workers=jobs, mp_context=context)


def run_files(
    files: Sequence[Path],
    settings_for: Callable[[Path], Settings],
    work: Callable[[Path, Settings], FileOutcome],
    *,
    jobs: int = 1,
) -> List[FileOutcome]:
    """Apply ``work`` to each file; in ``jobs`` processes when that pays off.

    The result is in the order of ``files`` whatever the job count.
    """
    tasks = [(path, settings_for(path)) for path in files]
    if jobs <= 1 or len(tasks) < 2 * jobs:
        return [work(path, settings) for path, settings in tasks]
    sizes = {path: _size(path) for path, _ in tasks}
    small = [(i, t) for i, t in enumerate(tasks) if sizes[t[0]] < BIG_FILE_BYTES]
    big = [(i, t) for i, t in enumerate(tasks) if sizes[t[0]] >= BIG_FILE_BYTES]
    results: Dict[int, FileOutcome] = {}
    with _pool(jobs) as pool:
        futures = {pool.submit(work, path, settings): index for index, (path, settings) in small}
        for future, index in futures.items():
            try:
                results[index] = future.result()
            except BrokenProcessPool:
                path, settings = tasks[index]
                results[index] = work(path, settings)
    # The workers have exited (and freed what they held) before the big trees are built.
    for index, (path, settings) in big:
        results[index] = work(path, settings)
    return [results[index] for index in range(len(tasks))]


def cached_run(
    files: Sequence[Path],
    settings_for: Callable[[Path], Settings],
    work: Callable[[Path, Settings], FileOutcome],
    *,
    cache: Optional[Cache],
    jobs: int = 1,
    reusable: Callable[[Sequence[Diagnostic]], bool] = lambda _: True,
) -> List[FileOutcome]:
    """Like :func:`run_files`, but answer from ``cache`` where it can.

    ``reusable`` says whether cached findings make the work unnecessary (for
    fixing: only when none of them has an applicable fix).
    """
    if cache is None:
        return run_files(files, settings_for, work, jobs=jobs)
    results: Dict[int, FileOutcome] = {}
    keys: Dict[int, str] = {}
    misses: List[int] = []
    for index, path in enumerate(files):
        hit = _from_cache(path, settings_for(path), cache)
        if hit is not None and reusable(hit[0].diagnostics):
            results[index] = hit[0]
            continue
        if hit is not None:
            keys[index] = hit[1]
        misses.append(index)
    computed = run_files([files[i] for i in misses], settings_for, work, jobs=jobs)
    for index, outcome in zip(misses, computed):
        results[index] = outcome
        if outcome.digest is None or any(_is_internal(d) for d in outcome.diagnostics):
            continue
        if outcome.fixed is not None and outcome.fixed.changed:
            continue  # the findings belong to text that is no longer on disk
        config = settings_for(files[index]).lint_config(files[index])
        cache.put(keys.get(index) or cache.key(outcome.digest, config, outcome.path), outcome.diagnostics)
    return [results[index] for index in range(len(files))]


def _is_internal(diagnostic: Diagnostic) -> bool:
    return diagnostic.code == "TL000" and diagnostic.message.startswith("internal error")


def _from_cache(path: Path, settings: Settings, cache: Cache) -> Optional[Tuple[FileOutcome, str]]:
    try:
        source = read_source(path)
    except SourceError:
        return None
    shown = display_path(path)
    key = cache.key(source.digest, settings.lint_config(path), shown)
    diagnostics = cache.get(key, shown)
    if diagnostics is None:
        return None
    text = source.text if diagnostics else None
    cells = None
    if diagnostics and is_notebook(path):
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
