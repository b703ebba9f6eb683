"""The body of `torchlint verify`, imported only once torch is known to exist."""

from __future__ import annotations

import contextlib
import signal
import warnings
from pathlib import Path
from typing import Any, Iterator, List, Optional, Sequence

import click

with warnings.catch_warnings():  # torch warns at import when NumPy is missing
    warnings.simplefilter("ignore")
    import torch

from torchlint.lint.settings import ConfigError
from torchlint.verify.plan import UsageError, plan
from torchlint.verify.progress import Progress
from torchlint.verify.report import record_measured, render_markdown, render_table, to_json, write_json, write_text
from torchlint.verify.results import EXIT_ERROR, VerifyReport
from torchlint.verify.runner import RunnerError
from torchlint.verify.session import Session, VerifyOptions

EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143


class _Terminated(Exception):
    """SIGTERM arrived: end every run and clean up, then exit 143."""


@contextlib.contextmanager
def _terminate_cleanly() -> Iterator[None]:
    """SIGTERM raises ``_Terminated`` (SIGINT already raises KeyboardInterrupt), so the
    session ends its runs, its helper and what they started, and deletes its scratch
    copies, before verify exits."""
    def terminated(signum: int, frame: Any) -> None:
        raise _Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, terminated)
    except ValueError:  # not the main thread: nothing to install
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _device(requested: str) -> str:
    """``cpu``, ``cuda`` or ``cuda:N``; ``auto`` is CUDA when torch sees a GPU, with a warning if not."""
    available = torch.cuda.is_available()
    kind, _, index = requested.partition(":")
    if kind == "cuda" and not available:
        raise UsageError(f"--device {requested} was requested, but torch sees no CUDA device")
    if index and int(index) >= torch.cuda.device_count():
        raise UsageError(f"--device {requested}: torch sees {torch.cuda.device_count()} CUDA device(s)")
    if requested == "auto":
        if available:
            return "cuda"
        build = f"built with CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build"
        click.echo(f"torchlint verify: warning: --device auto found no CUDA device (torch {torch.__version__}, "
                   f"{build}); running on the CPU", err=True)
        return "cpu"
    return requested


def run_verify(
    *,
    paths: Sequence[Path],
    rule_names: Sequence[str],
    device: str,
    json_file: Optional[Path],
    markdown_file: Optional[Path],
    timeout: float,
    threads: int,
    seed: int,
    quick: bool,
    timing: bool,
    record: bool = False,
    against: Optional[Path] = None,
    fail_on_slower: bool = False,
    memory_limit: int = -1,
) -> int:
    """Plan, run, report; returns the exit status."""
    try:
        options = VerifyOptions(_device(device), threads, seed, timeout, quick, timing, memory_limit)
        cases, notes = plan(paths, rule_names, against)
    except (UsageError, ConfigError) as error:
        click.echo(f"torchlint verify: error: {error}", err=True)
        return EXIT_ERROR
    except (OSError, UnicodeDecodeError) as error:
        click.echo(f"torchlint verify: error: {error}", err=True)
        return EXIT_ERROR
    if not cases:
        for note in notes:
            click.echo(note)
        return 0
    progress = Progress(Session.steps(cases, timing))
    with _terminate_cleanly(), Session(options, progress) as session:
        try:
            results = session.run_cases(cases)
        except RunnerError as error:
            progress.finish()
            click.echo(f"torchlint verify: error: {error}", err=True)
            return EXIT_ERROR
        except KeyboardInterrupt:
            progress.finish()
            click.echo("torchlint verify: interrupted; every run and what it started was ended", err=True)
            return EXIT_INTERRUPTED
        except _Terminated:
            progress.finish()
            click.echo("torchlint verify: terminated; every run and what it started was ended", err=True)
            return EXIT_TERMINATED
        progress.finish()
        environment = session.environment or session.fallback_environment()
        notes.extend(linked_note(sorted(session.linked)))
    report = VerifyReport(environment, tuple(results), quick, seed, timeout, tuple(notes), fail_on_slower)
    click.echo(render_table(report), nl=False)
    if json_file is not None:
        write_json(json_file, to_json(report))
    if markdown_file is not None:
        write_text(markdown_file, render_markdown(report))
    if record:
        for path in record_measured(report, cases):
            click.echo(f"recorded {path}")
    return report.exit_code


def linked_note(linked: Sequence[str]) -> List[str]:
    """Say which of the user's files were too big to copy into the runs' scratch folders."""
    if not linked:
        return []
    shown = ", ".join(linked[:5]) + (f" and {len(linked) - 5} more" if len(linked) > 5 else "")
    return [f"Beyond the copy budget (or tool folders), so linked into the runs' scratch folders read-only "
            f"(a run that writes one is an error naming it): {shown}."]
