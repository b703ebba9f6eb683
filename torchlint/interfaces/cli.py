"""The ``torchlint`` command: wires settings, discovery, runner and reporters."""

from __future__ import annotations

import importlib
import json
import os
import select
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar

import click

from torchlint.version import __version__
from torchlint.lint.discovery import discover
from torchlint.lint.replay import active_recording
from torchlint.model import Diagnostic, parse_error
from torchlint.ruleapi.registry import PARSE_ERROR_CODE, all_rules, by_code_or_name
from torchlint.lint.cache import CACHE_DIR_NAME, SHARED_VARIABLE, Cache, CacheDirError, Cleaned, check_directory, clean
from torchlint.lint.runner import (
    FileOutcome, Interrupted, cached_run, default_jobs, display_path, fix_file, is_notebook, lint_file, run_resolved,
)
from torchlint.lint.settings import FRAMEWORK_OPTIONS, ConfigError, Overrides, Settings, SettingsResolver, resolve_files
from torchlint.report.diff import unified_diff
from torchlint.report.summary import fixes_text
from torchlint.source.sourcefile import MAX_FILE_BYTES, SourceError, SourceFile, decode, write_atomically

if TYPE_CHECKING:  # linting and fixing (libcst, the rules) are imported where a file is linted
    from torchlint.lint.engine import LintConfig
    from torchlint.lint.fixer import FixResult

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

F = TypeVar("F", bound=Callable[..., Any])


def _split(values: Sequence[str]) -> Tuple[str, ...]:
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def _selection_options(function: F) -> F:
    """Options shared by ``check`` and ``fix``."""
    options = [
        click.option("--select", multiple=True, help="Rules to enable (codes, prefixes, names or ALL), replacing the configured ones."),
        click.option("--extend-select", multiple=True, help="Rules to enable in addition to the configured ones."),
        click.option("--ignore", multiple=True, help="Rules to disable."),
        click.option("--fixable", multiple=True, help="Rules whose fixes may be applied (default: ALL), replacing the configured ones."),
        click.option("--extend-fixable", multiple=True, help="Rules whose fixes may be applied, in addition."),
        click.option("--unfixable", multiple=True, help="Rules whose findings are reported but never fixed."),
        click.option("--exclude", multiple=True, help="Path patterns to exclude, replacing the defaults."),
        click.option("--extend-exclude", multiple=True, help="Path patterns to exclude in addition."),
        click.option("--force-exclude", is_flag=True, help="Apply excludes to paths given explicitly too (for pre-commit)."),
        click.option("--respect-gitignore/--no-respect-gitignore", default=None, help="Skip files ignored by .gitignore (default: on)."),
        click.option("--torch-version", help='The torch release the code targets, e.g. "1.13".'),
        click.option("--lightning-version", help='The PyTorch Lightning release the code targets, e.g. "1.9" '
                     "(default: the project's requirement, else the newest known)."),
        click.option("--transformers-version", help='The Hugging Face Transformers release the code targets, '
                     'e.g. "4.40" (default: the project\'s requirement, else the newest known).'),
        click.option("--accelerate-version", help='The Hugging Face Accelerate release the code targets, '
                     'e.g. "0.30" (default: the project\'s requirement, else the newest known).'),
        click.option("--target-version", help='The oldest Python the code must run on, e.g. "py39": '
                     "fixes must parse there (default: requires-python's lower bound, else py39)."),
        click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), help="Use this configuration file only."),
        click.option("--isolated", is_flag=True, help="Ignore all configuration files."),
        click.option("--stdin-filename", help="The name to give standard input (read it with `-`)."),
        click.option("--unsafe-fixes", is_flag=True, help="Include fixes that may change behaviour."),
        click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
                     help="Processes to lint with (default: all cores)."),
        click.option("--no-cache", is_flag=True, help="Neither read nor write the cache."),
        click.option("--cache-dir", type=click.Path(file_okay=False),
                     default=lambda: os.environ.get("TORCHLINT_CACHE_DIR"),
                     help=f"Where to keep the cache (default: ./{CACHE_DIR_NAME})."),
        click.option("--cache-shared", is_flag=True, envvar=SHARED_VARIABLE,
                     help="The cache folder is shared on purpose by a group: it may be writable by the group, "
                          "and entries of its members are used (or TORCHLINT_CACHE_SHARED=1)."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _resolver(kwargs: Any) -> SettingsResolver:
    overrides = Overrides(
        select=_split(kwargs["select"]) or None,
        extend_select=_split(kwargs["extend_select"]),
        ignore=_split(kwargs["ignore"]),
        exclude=_split(kwargs["exclude"]) or None,
        extend_exclude=_split(kwargs["extend_exclude"]),
        torch_version=kwargs["torch_version"],
        respect_gitignore=kwargs["respect_gitignore"],
        target_version=kwargs["target_version"],
        fixable=_split(kwargs["fixable"]) or None,
        extend_fixable=_split(kwargs["extend_fixable"]),
        unfixable=_split(kwargs["unfixable"]),
        framework_versions=tuple((framework, kwargs[f"{framework}_version"]) for framework, _ in FRAMEWORK_OPTIONS
                                 if kwargs[f"{framework}_version"] is not None),
    )
    if kwargs["config_file"] is not None and not kwargs["config_file"].exists():
        raise ConfigError(f"{kwargs['config_file']}: no such configuration file")
    return SettingsResolver(overrides, kwargs["config_file"], kwargs["isolated"])


def _cache(kwargs: Any) -> Optional[Cache]:
    if kwargs["no_cache"]:
        return None
    shared = bool(kwargs["cache_shared"])
    return Cache(_cache_directory(kwargs["cache_dir"], shared=shared), shared=shared)


def _cache_directory(value: Optional[str], contents: bool = True, shared: bool = False) -> Path:
    """The cache folder from --cache-dir, TORCHLINT_CACHE_DIR or the default;
    ConfigError, naming where the value came from, if it is unsafe to use."""
    try:
        return check_directory(CACHE_DIR_NAME if value is None else value, Path.cwd(), contents=contents,
                               shared=shared)
    except CacheDirError as error:
        raise ConfigError(_cache_problem(value, error)) from None


def _cache_problem(value: Optional[str], error: CacheDirError) -> str:
    source = click.get_current_context().get_parameter_source("cache_dir")
    if source is click.core.ParameterSource.COMMANDLINE:
        origin = "--cache-dir"
    elif value is not None:
        origin = "TORCHLINT_CACHE_DIR"
    else:
        origin = "the default cache folder"
    return f"{origin} {CACHE_DIR_NAME if value is None else value!r} {error}"


def _jobs(kwargs: Any) -> int:
    return int(kwargs["jobs"] or default_jobs())


def _nothing_to_fix(unsafe: bool, fixing: bool, diagnostics: Sequence[Diagnostic]) -> bool:
    """Whether cached findings make fixing (or linting) the file unnecessary."""
    return not fixing or not any(d.fixable(unsafe) for d in diagnostics)


def _fail(message: str) -> None:
    click.echo(f"torchlint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _use_color() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _echo_drops(path: str, result: "FixResult") -> None:
    """One stderr line per fix that was left out, saying why."""
    for drop in result.drops:
        click.echo(f"torchlint: {path}:{_line_of(drop.diagnostic)}: {drop.note}", err=True)


def _line_of(diagnostic: Diagnostic) -> str:
    """The line a person looks for: ``12``, or ``cell 3, line 2`` in a notebook."""
    if diagnostic.cell is None:
        return str(diagnostic.start.line)
    return f"cell {diagnostic.cell}, line {diagnostic.start.line}"


def _write_stdout_bytes(data: bytes) -> None:
    """Write bytes as they are (a filter answers in its input's encoding)."""
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
def _collect(paths: Sequence[str], resolver: SettingsResolver,
             force_exclude: bool) -> Tuple[List[Path], List[Diagnostic], Tuple[str, ...]]:
    """The files to lint, a TL000 for each path (or configuration) that could
    not be read, and the folders the walk listed."""
    discovered = discover([Path(p) for p in paths or ["."]], resolver.for_path, force_exclude=force_exclude)
    errors: List[Diagnostic] = []
    named = set()
    for path, message in (*discovered.errors, *resolver.problems):
        shown = display_path(path)
        if shown not in named:  # an unreadable folder is named once, not by both discovery and the settings search
            named.add(shown)
            errors.append(parse_error(shown, message))
    return list(discovered.files), errors, discovered.folders


def _ensure_streams() -> None:
    """Make output safe to write whatever the caller did with our stdout.

    A closed stdout (``>&-``) becomes the null device, so the run's exit code
    still reports the findings, as with Ruff; file names that are not UTF-8
    are written back as the bytes they were read as.
    """
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None and getattr(sys.stdout, "errors", None) == "strict":
        reconfigure(errors="surrogateescape")


def _stdout_reader_gone() -> bool:
    """Whether stdout is a pipe nobody reads any more (so a BrokenPipeError came from it).

    Other broken pipes (a child process that died) stay internal errors.
    When it cannot be told (no poll(), no real file), the error is trusted.
    """
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), 0)  # errors and hang-ups are always reported
        return any(event & (select.POLLERR | select.POLLHUP) for _, event in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return True


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at the null device so nothing fails at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file behind stdout (tests)
        pass


def _cwd_exists() -> bool:
    try:
        os.getcwd()
    except OSError:
        return False
    return True


class _Group(click.Group):
    """Turns an unexpected exception into exit code 2 with a one-line message.

    ``verify`` lives in its own package and is imported only when it is run
    (or listed): every other command starts without it."""

    _LAZY = {"verify": ("torchlint.verify.command", "verify")}

    def list_commands(self, ctx: click.Context) -> List[str]:
        return sorted({*super().list_commands(ctx), *self._LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> Optional[click.Command]:
        if cmd_name in self._LAZY and cmd_name not in self.commands:
            module, attribute = self._LAZY[cmd_name]
            command = getattr(importlib.import_module(module), attribute)
            assert isinstance(command, click.Command)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except BrokenPipeError as error:
            if not _stdout_reader_gone():
                _internal_error(error)
            # The reader left (`| head`): stop quietly; Ruff exits 0 here too.
            _silence_stdout()
            sys.exit(EXIT_CLEAN)
        except KeyboardInterrupt as interrupt:  # Ctrl-C or SIGTERM: 128 + the signal, like a shell
            written = interrupt.written if isinstance(interrupt, Interrupted) else ()
            click.echo(f"torchlint: interrupted; {len(written)} file{'s' if len(written) != 1 else ''} "
                       f"written before it stopped{': ' if written else ''}{', '.join(written)}", err=True)
            sys.exit(128 + (interrupt.signal_number if isinstance(interrupt, Interrupted) else 2))
        except Exception as error:  # pragma: no cover - a bug, reported not raised
            _internal_error(error)


def _internal_error(error: Exception) -> None:
    """Report an unexpected exception in one line and exit 2; a known cause gets a clear message."""
    if not _cwd_exists():
        _fail("the working directory no longer exists (it was deleted or moved)")
    click.echo(f"torchlint: internal error: {type(error).__name__}: {error}", err=True)
    sys.exit(EXIT_ERROR)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="torchlint")
def main() -> None:
    """A linter for PyTorch training code, with autofixes."""
    _ensure_streams()


@main.command()
@click.argument("paths", nargs=-1)
@_selection_options
@click.option("--fix", "apply_fix", is_flag=True, help="Apply fixes (safe ones; unsafe too with --unsafe-fixes).")
@click.option("--output-format", type=click.Choice(["full", "concise", "json", "github", "gitlab", "sarif"]),
              default=lambda: os.environ.get("TORCHLINT_OUTPUT_FORMAT", "full"), show_default="full")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False, path_type=Path), help="Write the report to a file.")
@click.option("--statistics", is_flag=True, help="Count findings per rule instead of listing them (JSON with --output-format json).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when a fix was applied, even if nothing remains.")
@click.option("--show-files", is_flag=True, help="List the files that would be linted, and exit.")
@click.option("--show-settings", is_flag=True,
              help="Print the settings that apply to the first path (and which file each came from), and exit.")
@click.option("--show-fixes", is_flag=True, help="With --fix: list the findings that were fixed, per file.")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` to every line with a finding, and exit.")
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path),
              help="Report only findings that are not recorded in this baseline file.")
@click.option("--baseline-create", is_flag=True,
              help="With --baseline: when the file does not exist yet, record the current findings in it and exit 0.")
@click.option("--write-baseline", type=click.Path(dir_okay=False, path_type=Path),
              help="Record the current findings in this file and exit 0.")
@click.option("-q", "--quiet", is_flag=True, help="Print the findings, nothing else (no summary, no notes).")
@click.option("-s", "--silent", is_flag=True, help="Print nothing; the exit code still tells.")
@click.option("-w", "--watch", is_flag=True, help="Lint again whenever a linted file or a configuration file changes.")
def check(paths: Tuple[str, ...], watch: bool, **options: Any) -> None:
    """Lint PATHS (files or folders; default: the current folder)."""
    if watch:
        recording = active_recording()
        if recording is not None:
            recording.doubt("--watch")
        sys.exit(_watch(paths, options))
    sys.exit(_check(paths, **options))


def _check(paths: Tuple[str, ...], apply_fix: bool, output_format: str, output_file: Optional[Path],
           statistics: bool, exit_zero: bool, exit_non_zero_on_fix: bool, show_files: bool, show_settings: bool,
           show_fixes: bool, add_noqa: bool, baseline: Optional[Path], baseline_create: bool,
           write_baseline: Optional[Path], quiet: bool, silent: bool, **kwargs: Any) -> int:
    """One ``check`` run; returns the exit code."""
    from torchlint.report import ReportContext, render, render_statistics

    quiet = quiet or silent
    if baseline_create and baseline is None:
        raise click.UsageError("--baseline-create needs --baseline FILE (the file to create when it is missing)")
    recording = active_recording()
    if recording is not None:  # before the configuration search: what it will look for, as it is now
        from torchlint.lint.settings import CONFIG_FILENAMES

        recording.begin(list(paths or ["."]), (*CONFIG_FILENAMES, ".git"))
    try:
        resolver = _resolver(kwargs)
        if show_settings:
            click.echo(_settings_text(resolver, paths), nl=False)
            return EXIT_CLEAN
        unsafe = bool(kwargs["unsafe_fixes"])
        fixing_stdin = apply_fix and _reads_stdin(paths, kwargs["stdin_filename"])
        if _reads_stdin(paths, kwargs["stdin_filename"]):
            if add_noqa:
                raise ConfigError("--add-noqa writes files; it cannot read standard input")
            errors: List[Diagnostic] = []
            outcomes = [_check_stdin(resolver, kwargs["stdin_filename"], apply_fix, unsafe, kwargs["force_exclude"])]
        else:
            files, errors, walked = _collect(paths, resolver, kwargs["force_exclude"])
            if show_files:
                for path in files:
                    click.echo(path.as_posix())
                return EXIT_CLEAN
            if apply_fix and not add_noqa:
                work: Callable[[Path, Settings], FileOutcome] = partial(fix_file, unsafe=unsafe, write=True)
            else:
                work = lint_file
            cache = _cache(kwargs)
            # Each file's settings, resolved once: the run, its cache keys and the lints are given them.
            resolved = resolve_files(files, resolver.for_path, keyed=cache is not None)
            outcomes = run_resolved(resolved, work, cache=cache, jobs=_jobs(kwargs),
                                    reusable=partial(_nothing_to_fix, unsafe, apply_fix))
    except ConfigError as error:
        _fail(str(error))
        return EXIT_ERROR
    if add_noqa:  # write a suppression for every finding, in place
        from torchlint.lint.add_noqa import add_noqa as write_noqa

        added, notes, problems = write_noqa(outcomes)
        for message in [*(f"{d.path}:{_line_of(d)}:{d.start.column}: {d.code} {d.message}" for d in errors),
                        *notes, *problems]:
            click.echo(f"torchlint: {message}", err=True)
        if not quiet:
            click.echo(f"Added {added} noqa directive{'s' if added != 1 else ''}.", err=True)
        return EXIT_ERROR if problems else EXIT_CLEAN
    outcomes = [_unwritten(o, resolver) if o.write_error else o for o in outcomes]
    diagnostics = sorted(errors + [d for o in outcomes for d in o.diagnostics], key=lambda d: d.sort_key)
    fixed_count = sum(len(o.fixed.applied) for o in outcomes if o.fixed and not o.write_error)
    for outcome in outcomes:
        if outcome.note:
            click.echo(f"torchlint: {outcome.path}: {outcome.note}", err=True)
        if outcome.write_error:
            click.echo(f"torchlint: {outcome.path}: {outcome.write_error}", err=True)
        for drop in outcome.fixed.drops if outcome.fixed else ():  # a fix left out, and why
            click.echo(f"torchlint: {outcome.path}:{_line_of(drop.diagnostic)}: {drop.note}", err=True)
    # path -> text for the reporters' snippets: the fixed text where a fix was written.
    sources = {o.path: o.source for o in outcomes if o.source is not None}
    for outcome in outcomes:
        sources.update(outcome.cell_sources or {})
        if outcome.fixed is not None and not outcome.write_error:
            sources[outcome.path] = outcome.fixed.source
    if baseline is not None and baseline_create and not baseline.exists():
        write_baseline = baseline
    if write_baseline is not None or baseline is not None:
        from torchlint.lint.baseline import BaselineError, settle

        try:
            settled = settle(diagnostics, sources, write=write_baseline, read=baseline)
        except BaselineError as error:
            hint = (" (pass --baseline-create to record it on the first run)"
                    if write_baseline is None and baseline is not None and not baseline.exists() else "")
            _fail(f"{error}{hint}")
            return EXIT_ERROR
        if settled.written is not None:
            if not silent:
                count = settled.written
                click.echo(f"Wrote {count} finding{'s' if count != 1 else ''} to {write_baseline}"
                           f"{'; commit it, and later runs fail only on new findings' if baseline_create else ''}",
                           err=True)
            return EXIT_CLEAN
        if settled.known and not quiet:
            known = settled.known
            click.echo(f"{known} finding{'s' if known != 1 else ''} in the baseline {baseline} not shown.", err=True)
        diagnostics = list(settled.fresh)
    context = ReportContext(sources=sources, unsafe_fixes=unsafe, color=_use_color() and output_file is None,
                            fixed=fixed_count, show_summary=not quiet)
    if statistics:
        text = render_statistics(diagnostics, context, "json" if output_format == "json" else "full")
    else:
        text = render(output_format, diagnostics, context)
    if show_fixes and not silent:
        written = [(o.path, o.fixed.applied) for o in outcomes if o.fixed is not None and not o.write_error]
        text = fixes_text(written) + text
    if output_file is not None:
        try:  # all or nothing: a failed write keeps the previous report
            # A file name that is not UTF-8 keeps its own bytes, as on standard output.
            write_atomically(output_file, text.encode("utf-8", "surrogateescape"))
        except SourceError as error:
            _fail(f"{output_file}: {error}")
            return EXIT_ERROR
    elif text and not silent:
        # Fixing standard input: standard output carries the code alone.
        click.echo(text, nl=False, err=fixing_stdin)
    write_failed = any(o.write_error for o in outcomes)
    if (recording is not None and not _reads_stdin(paths, kwargs["stdin_filename"]) and cache is not None
            and not apply_fix and output_file is None and baseline is None and write_baseline is None
            and not write_failed):
        # A run that wrote nothing but its report: the command line may replay it (interfaces/quick.py).
        recording.accept(directory=cache.directory, shared=cache.shared, files=files, run=cache.recorded,
                         walked=walked, roots=sorted({str(s.root) for s in (resolver.default, *resolved.settings)}),
                         given=list(paths or ["."]))
    if exit_zero and not write_failed:
        return EXIT_CLEAN
    if diagnostics or write_failed or (exit_non_zero_on_fix and fixed_count):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _settings_text(resolver: SettingsResolver, paths: Sequence[str]) -> str:
    """``--show-settings``: the resolved settings for one path, each with where it came from."""
    from torchlint.lint.settings import show_settings

    target = Path(paths[0]) if paths and paths[0] != "-" else Path(".")
    return show_settings(resolver.for_path(target), target)


def _watch(paths: Tuple[str, ...], options: Dict[str, Any]) -> int:
    """``--watch``: lint, then poll the linted files' and the configuration
    files' modification times and lint again after a change, until Ctrl-C
    (or ``TORCHLINT_WATCH_TIMEOUT`` seconds, for scripts and tests)."""
    import time

    interval = float(os.environ.get("TORCHLINT_WATCH_INTERVAL", "0.5"))
    timeout = os.environ.get("TORCHLINT_WATCH_TIMEOUT")
    deadline = time.monotonic() + float(timeout) if timeout else None
    click.echo(f"[{time.strftime('%H:%M:%S')}] Starting linter in watch mode...", err=True)
    code = _check(paths, **options)
    seen = _watched(paths, options)
    try:
        while deadline is None or time.monotonic() < deadline:
            time.sleep(interval)
            now = _watched(paths, options)
            if now == seen:
                continue
            seen = now
            click.echo(f"[{time.strftime('%H:%M:%S')}] File change detected...", err=True)
            code = _check(paths, **options)
            seen = _watched(paths, options)
    except KeyboardInterrupt:
        return code
    return code


def _watched(paths: Sequence[str], options: Mapping[str, Any]) -> Dict[str, Tuple[int, int]]:
    """(modification time, size) of every file a run would lint and of the
    configuration files that apply to them (``extend`` chains included)."""
    try:
        resolver = _resolver(options)
        files, _, _ = _collect(paths, resolver, options["force_exclude"])
    except (ConfigError, click.ClickException):
        files, resolver = [], None
    watched = {str(path) for path in files}
    if resolver is not None:
        for path in files:
            settings = resolver.for_path(path)
            if settings.config_file is not None:
                watched.add(str(settings.config_file))
            watched.update(origin for origin in settings.origins.values() if origin != "command line")
    for name in ("pyproject.toml", "torchlint.toml", ".torchlint.toml"):
        watched.add(os.path.abspath(name))
    state: Dict[str, Tuple[int, int]] = {}
    for name in sorted(watched):
        try:
            found = os.stat(name)
        except OSError:
            continue
        state[name] = (found.st_mtime_ns, found.st_size)
    return state


def _unwritten(outcome: FileOutcome, resolver: SettingsResolver) -> FileOutcome:
    """A file whose fixes could not be written: what is on disk, linted again, plus the failure.

    Its fixed findings are still in the file, so they are reported as such
    and the summary cannot say all checks passed.
    """
    path = Path(outcome.path)
    on_disk = lint_file(path, resolver.for_path(path))
    failure = parse_error(outcome.path, f"fixes not written: {outcome.write_error}")
    return replace(on_disk, diagnostics=(failure, *on_disk.diagnostics), write_error=outcome.write_error)


def _reads_stdin(paths: Sequence[str], stdin_filename: Optional[str]) -> bool:
    return list(paths) == ["-"] or (not paths and stdin_filename is not None)


def _check_stdin(resolver: SettingsResolver, stdin_filename: Optional[str], apply_fix: bool,
                 unsafe: bool, force_exclude: bool) -> FileOutcome:
    """Lint (or, as a filter, fix) standard input.  When fixing, standard
    output always gets the whole file in its own encoding: the input itself
    when it cannot be decoded or nothing was fixed, so an editor that pipes
    its buffer through never loses it."""
    name = stdin_filename or "-"
    data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        if apply_fix:  # a filter never swallows its input: pass it all through
            _write_stdout_bytes(data)
            import shutil  # only here: not on every run's import path
            shutil.copyfileobj(sys.stdin.buffer, sys.stdout.buffer)
            sys.stdout.buffer.flush()
        message = f"standard input is over the {MAX_FILE_BYTES / 1e6:.0f} MB limit; skipped"
        return FileOutcome(name, (parse_error(name, message),))
    try:
        text, encoding, bom = decode(data)
    except SourceError as error:
        if apply_fix:
            _write_stdout_bytes(data)
        return FileOutcome(name, (parse_error(name, str(error)),))
    settings = resolver.for_path(Path(name))
    if force_exclude and stdin_filename and settings.is_excluded(Path(name)):
        if apply_fix:
            _write_stdout_bytes(data)
        return FileOutcome(name, ())
    from torchlint.lint.engine import lint_source
    from torchlint.lint.fixer import fix_text
    from torchlint.lint.jobscripts import (
        NOT_A_JOB_SCRIPT, fix_job_script, is_job_script, is_shell_script, lint_job_script,
    )

    config = settings.lint_config(Path(name))
    if is_notebook(Path(name)):
        return _stdin_notebook(text, name, config, apply_fix, unsafe)
    job_script = stdin_filename is not None and is_job_script(Path(name), text)
    if stdin_filename is not None and not job_script and is_shell_script(Path(name), text):
        if apply_fix:
            _write_stdout_bytes(data)
        return FileOutcome(name, (), note=NOT_A_JOB_SCRIPT)
    if job_script and not apply_fix:
        return FileOutcome(name, tuple(lint_job_script(text, name, config, Path(name))), text)
    if apply_fix:
        if job_script:
            result = fix_job_script(text, name, config, unsafe=unsafe, file=Path(name))
        else:
            result = fix_text(text, name, config, unsafe=unsafe)
        try:
            fixed = SourceFile(Path(name), text, encoding, bom, "").encode(result.source) if result.changed else data
        except UnicodeEncodeError:
            error_text = f"the fixed text cannot be written in {encoding}; input left unchanged"
            _write_stdout_bytes(data)
            return FileOutcome(name, (parse_error(name, error_text),) + result.remaining, text)
        _write_stdout_bytes(fixed)
        return FileOutcome(name, result.remaining, result.source, result)
    return FileOutcome(name, tuple(lint_source(text, name, config)), text)


def _stdin_notebook(text: str, name: str, config: "LintConfig", apply_fix: bool, unsafe: bool) -> FileOutcome:
    from torchlint.lint.notebook import cell_sources, fix_notebook, lint_notebook

    """Standard input named ``*.ipynb``: linted as a notebook; when fixing,
    the fixed notebook JSON is what goes to standard output."""
    if apply_fix:
        output, result, fixed = fix_notebook(text, name, config, unsafe=unsafe)
        sys.stdout.write(output)
        cells = cell_sources(fixed, name) if fixed is not None else None
        return FileOutcome(name, result.remaining, output, result, cell_sources=cells)
    diagnostics, notebook = lint_notebook(text, name, config)
    cells = cell_sources(notebook, name) if notebook is not None else None
    return FileOutcome(name, tuple(diagnostics), text, cell_sources=cells)


@main.command()
@click.argument("paths", nargs=-1)
@_selection_options
@click.option("--apply", "apply_fixes", is_flag=True, help="Write the fixes instead of printing the diff.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="With --apply: exit 1 when a file was changed.")
@click.option("--show-fixes", is_flag=True, help="List the findings that were (or would be) fixed, per file.")
@click.option("-q", "--quiet", is_flag=True, help="Print the diff (or nothing, with --apply), no summary.")
@click.option("-s", "--silent", is_flag=True, help="Print nothing; the exit code still tells.")
def fix(paths: Tuple[str, ...], apply_fixes: bool, exit_non_zero_on_fix: bool, show_fixes: bool,
        quiet: bool, silent: bool, **kwargs: Any) -> None:
    """Show the fixes for PATHS as a diff, or write them with --apply."""
    quiet = quiet or silent
    unsafe = bool(kwargs["unsafe_fixes"])
    try:
        resolver = _resolver(kwargs)
        if _reads_stdin(paths, kwargs["stdin_filename"]):
            outcome = _check_stdin(resolver, kwargs["stdin_filename"], True, unsafe, kwargs["force_exclude"])
            if outcome.note:
                click.echo(f"torchlint: {outcome.path}: {outcome.note}", err=True)
            if outcome.fixed is not None:
                _echo_drops(outcome.path, outcome.fixed)
            problems = [d for d in outcome.diagnostics if d.code == PARSE_ERROR_CODE]
            for problem in problems:
                click.echo(f"{problem.path}:{problem.start.line}:{problem.start.column}: "
                           f"{problem.code} {problem.message}", err=True)
            sys.exit(EXIT_FINDINGS if problems else EXIT_CLEAN)
        files, errors, _ = _collect(paths, resolver, kwargs["force_exclude"])
        outcomes = cached_run(files, resolver.for_path, partial(fix_file, unsafe=unsafe, write=apply_fixes),
                              cache=_cache(kwargs), jobs=_jobs(kwargs),
                              reusable=partial(_nothing_to_fix, unsafe, True))
    except ConfigError as error:
        _fail(str(error))
        return
    problems = list(errors)
    fixed_files = fixed_total = follow_ups = 0
    for outcome in outcomes:
        if outcome.note:
            click.echo(f"torchlint: {outcome.path}: {outcome.note}", err=True)
        problems.extend(d for d in outcome.diagnostics if d.code == "TL000")
        result = outcome.fixed
        if outcome.write_error:
            click.echo(f"torchlint: {outcome.path}: {outcome.write_error}", err=True)
            problems.append(parse_error(outcome.path, outcome.write_error))
            continue
        if result is not None:
            _echo_drops(outcome.path, result)
        if result is None or not result.changed or outcome.source is None:
            continue
        fixed_files += 1
        fixed_total += len(result.applied)
        follow_ups += max(0, len(result.applied) - result.first_fixable)
        if not apply_fixes and not silent:
            click.echo(unified_diff(outcome.source, result.source, outcome.path), nl=False)
    if show_fixes and not silent:
        written = [(o.path, o.fixed.applied) for o in outcomes if o.fixed is not None and not o.write_error]
        click.echo(fixes_text(written), nl=False, err=True)
    for problem in problems:
        click.echo(f"{problem.path}:{_line_of(problem)}:{problem.start.column}: {problem.code} {problem.message}", err=True)
    hidden = 0 if unsafe else sum(
        1 for o in outcomes for d in o.diagnostics if d.fix is not None and not d.fixable(False)
    )
    verb = "Fixed" if apply_fixes else "Would fix"
    plural = "s" if fixed_total != 1 else ""
    summary = f"{verb} {fixed_total} finding{plural} in {fixed_files} file{'s' if fixed_files != 1 else ''}"
    if follow_ups:
        # `check` counted what was fixable before any fix; fixes can bring about new findings.
        summary += (f" ({follow_ups} of them found after earlier fixes: "
                    f"{'they' if follow_ups != 1 else 'it'} did not exist before the fixes were applied)")
    summary += "."
    unwritten = sum(1 for o in outcomes if o.write_error)
    if not fixed_total:
        summary = "No fixes applied." if unwritten else "No fixes available."
    if unwritten:
        summary += f" Could not write {unwritten} file{'s' if unwritten != 1 else ''} (see above)."
    if hidden:
        summary += f" ({hidden} more fix{'es' if hidden != 1 else ''} available with `--unsafe-fixes`.)"
    if not quiet:
        click.echo(summary, err=True)
    if problems:
        sys.exit(EXIT_FINDINGS)
    if not apply_fixes and fixed_total:
        sys.exit(EXIT_FINDINGS)
    if apply_fixes and exit_non_zero_on_fix and fixed_total:
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_CLEAN)


@main.command(name="rules")
@click.option("--json", "as_json", is_flag=True, help="Print the catalog as JSON.")
def rules_command(as_json: bool) -> None:
    """List every rule: code, name, fix, default, summary."""
    catalog = [
        {
            "code": rule.code,
            "name": rule.name,
            "fix": rule.fix_availability.value,
            "default": rule.default_enabled,
            "torch_versions": rule.torch_versions,
            "summary": rule.summary,
            "aliases": list(rule.aliases),
            "options": {key: option.default for key, option in rule.options.items()},
        }
        for rule in all_rules()
    ]
    if as_json:
        click.echo(json.dumps(catalog, indent=2, default=list))
        return
    width = max(len(entry["name"]) for entry in catalog)  # type: ignore[arg-type]
    click.echo(f"{'code':<6} {'name':<{width}} {'fix':<9} {'default':<7} summary")
    for entry in catalog:
        default = "on" if entry["default"] else "off"
        aliases = entry["aliases"]
        also = f" (also {', '.join(aliases)})" if aliases else ""  # type: ignore[arg-type]
        click.echo(f"{entry['code']:<6} {entry['name']:<{width}} {entry['fix']:<9} {default:<7} {entry['summary']}{also}")


@main.command(name="clean")
@click.option("--cache-dir", type=click.Path(file_okay=False),
              default=lambda: os.environ.get("TORCHLINT_CACHE_DIR"))
def clean_command(cache_dir: Optional[str]) -> None:
    """Remove the cache: only what torchlint wrote, only from a folder with its tag."""
    try:
        target = _cache_directory(cache_dir, contents=False)  # clean() itself looks for torchlint's tag
        cleaned = clean(target)
    except ConfigError as error:
        _fail(str(error))
        return
    except CacheDirError as error:
        _fail(_cache_problem(cache_dir, error))
        return
    if cleaned is Cleaned.FOLDER:
        click.echo(f"Removed {target}", err=True)
    elif cleaned is Cleaned.ENTRIES:
        click.echo(f"Removed torchlint's cache entries from {target}; the other files in it were kept", err=True)


@main.command()
@click.argument("rule")
@click.option("--format", "page_format", type=click.Choice(["terminal", "markdown"]), default="terminal",
              show_default=True, help="Render the page for a terminal, or print its raw Markdown.")
def explain(rule: str, page_format: str) -> None:
    """Print the documentation page of RULE (a code or a name)."""
    found = by_code_or_name(rule)
    if found is None:
        from torchlint.ruleapi.registry import suggest

        close = suggest(rule)
        hint = f" (did you mean `{close}`?)" if close else ""
        _fail(f"unknown rule `{rule}`{hint}; `torchlint rules` lists them")
        return
    page = found.documentation()
    if page_format == "terminal":
        from torchlint.interfaces.terminal_markdown import render_markdown

        page = render_markdown(page, _use_color())
    click.echo(page, nl=False)


@main.command(name="lsp")
def lsp_command() -> None:
    """Run the language server on stdin/stdout (needs the `lsp` extra)."""
    try:
        from torchlint.interfaces.lsp import main as serve
    except ImportError as error:
        _fail(f"`torchlint lsp` needs pygls: pip install 'torchlint[lsp]' ({error})")
        return
    serve()



if __name__ == "__main__":  # pragma: no cover
    main()
