"""Lint or fix many files: read, run the engine, write; never raise per file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from torchlint.engine import lint_source, parse_error
from torchlint.fixer import FixResult, fix_text
from torchlint.model import Diagnostic
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


def _internal_error(path: str, error: BaseException) -> Diagnostic:
    return parse_error(path, f"internal error while linting: {type(error).__name__}: {error}")


def lint_file(path: Path, settings: Settings) -> FileOutcome:
    """Read and lint one file; every failure becomes a TL000 diagnostic."""
    shown = display_path(path)
    try:
        source = read_source(path)
    except SourceError as error:
        return FileOutcome(shown, (parse_error(shown, str(error)),))
    try:
        diagnostics = lint_source(source.text, shown, settings.lint_config(path))
    except Exception as error:  # a rule bug must not stop the run
        diagnostics = [_internal_error(shown, error)]
    return FileOutcome(shown, tuple(diagnostics), source.text, original=source)


def fix_file(path: Path, settings: Settings, *, unsafe: bool, write: bool) -> FileOutcome:
    """Fix one file in memory, and write it when ``write`` is set."""
    shown = display_path(path)
    try:
        source = read_source(path)
    except SourceError as error:
        return FileOutcome(shown, (parse_error(shown, str(error)),))
    try:
        result = fix_text(source.text, shown, settings.lint_config(path), unsafe=unsafe)
    except Exception as error:
        return FileOutcome(shown, (_internal_error(shown, error),), source.text, original=source)
    write_error: Optional[str] = None
    if write and result.changed:
        try:
            write_source(source, result.source)
        except (SourceError, OSError) as error:
            write_error = str(error)
    return FileOutcome(shown, result.remaining, source.text, result, source, write_error)


def run_files(
    files: Sequence[Path], settings_for: Callable[[Path], Settings], work: Callable[[Path, Settings], FileOutcome]
) -> List[FileOutcome]:
    """Apply ``work`` to each file in order."""
    return [work(path, settings_for(path)) for path in files]


def sources_of(outcomes: Sequence[FileOutcome]) -> Dict[str, str]:
    """path -> text for reporters' snippets."""
    return {o.path: o.source for o in outcomes if o.source is not None}
