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

from torchlint.ruleapi.registry import all_rules, by_code_or_name
from torchlint.ruleapi.rule import RuleClass
from torchlint.lint.settings import ConfigError, SettingsResolver
from torchlint.ruleapi.verification import Measured, program_paths, write_measured
from torchlint.verify.progress import Progress
from torchlint.verify.report import measured_cells, render_markdown, render_table, to_json, write_json, write_text
from torchlint.verify.results import EXIT_ERROR, VerifyReport

EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143
from torchlint.verify.runner import RunnerError
from torchlint.verify.session import (
    Case,
    Session,
    VerifyOptions,
    fixable,
    plan_pair,
    plan_programs,
    plan_script,
)


class _Usage(Exception):
    """A problem with the command line; exit 2."""


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


def _select(names: Sequence[str]) -> List[RuleClass]:
    chosen: List[RuleClass] = []
    for name in names:
        rule = by_code_or_name(name)
        if rule is None:
            raise _Usage(f"unknown rule `{name}`")
        if not fixable(rule):
            raise _Usage(f"{rule.code} ({rule.name}) has no autofix, so there is nothing to verify")
        if rule not in chosen:
            chosen.append(rule)
    return chosen


def no_program_note(rule: RuleClass) -> str:
    """Why a fixable rule's shipped programs are not verified: the reason its spec gives."""
    spec = rule.verification
    stated = next((check for check in spec.contract.checks if check.startswith("no program")), "") if spec else ""
    reason = stated.partition(":")[2].strip() if ":" in stated else "none has been written yet"
    return f"{rule.code} ({rule.name}) has a fix but no verification program ({reason}); not verified."


def _programs_of(names: Sequence[str], notes: List[str]) -> List[RuleClass]:
    """The named rules (default: every fixable one) that ship programs; a note for each
    one that does not.  Naming only rules without programs is a usage error."""
    rules = _select(names) if names else [rule for rule in all_rules() if fixable(rule)]
    missing = [rule for rule in rules if not program_paths(rule)]
    if names and len(missing) == len(rules):
        raise _Usage(" ".join(no_program_note(rule) for rule in missing))
    notes.extend(no_program_note(rule) for rule in missing)
    return [rule for rule in rules if program_paths(rule)]


def _device(requested: str) -> str:
    """``cpu``, ``cuda`` or ``cuda:N``; ``auto`` is CUDA when torch sees a GPU, with a warning if not."""
    available = torch.cuda.is_available()
    kind, _, index = requested.partition(":")
    if kind == "cuda" and not available:
        raise _Usage(f"--device {requested} was requested, but torch sees no CUDA device")
    if index and int(index) >= torch.cuda.device_count():
        raise _Usage(f"--device {requested}: torch sees {torch.cuda.device_count()} CUDA device(s)")
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
        resolver = SettingsResolver()
        cases: List[Case] = []
        notes: List[str] = []
        if against is not None:
            if len(paths) != 1:
                raise _Usage("--against compares one ORIGINAL script with one changed version: give one PATH")
            cases = plan_pair(paths[0], against, _select(rule_names))
            paths = []
        elif not paths:
            cases = [case for rule in _programs_of(rule_names, notes) for case in plan_programs(rule, resolver.default)]
        for path in paths:
            settings = resolver.for_path(path)
            rules = (
                _select(rule_names)
                if rule_names
                else [rule for rule in settings.enabled_rules(path) if fixable(rule)]
            )
            found = plan_script(path, rules, settings)
            if not found:
                codes = ", ".join(rule.code for rule in rules) or "no rules"
                notes.append(f"{path}: no fix of {codes} changes this script; nothing to verify.")
            cases.extend(found)
    except (_Usage, ConfigError) as error:
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
        for path in _record(report, cases):
            click.echo(f"recorded {path}")
    return report.exit_code


def linked_note(linked: Sequence[str]) -> List[str]:
    """Say which of the user's files were too big to copy into the runs' scratch folders."""
    if not linked:
        return []
    shown = ", ".join(linked[:5]) + (f" and {len(linked) - 5} more" if len(linked) > 5 else "")
    return [f"Beyond the copy budget (or tool folders), so linked into the runs' scratch folders read-only "
            f"(a run that writes one is an error naming it): {shown}."]


def _record(report: VerifyReport, cases: Sequence[Case]) -> List[Path]:
    """Write each shipped program's row into its rule's package (``--record``)."""
    hardware = report.environment.line() + ("; quick mode" if report.quick else "")
    written = []
    for case, result in zip(cases, report.cases):
        rule = by_code_or_name(case.rule)
        if case.script is not None or case.error or rule is None:
            continue
        written.append(write_measured(rule, Measured(hardware, tuple(measured_cells(result)), case.target)))
    return written
