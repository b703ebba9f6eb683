import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import os  # noqa: E402
import subprocess  # noqa: E402
from typing import Dict, Optional, Sequence  # noqa: E402

import pytest  # noqa: E402


def run_in_process(
    args: Sequence[str], cwd: Path, *, stdin: str = "", env: Optional[Dict[str, Optional[str]]] = None
) -> "subprocess.CompletedProcess[str]":
    """``python -m torchlint ARGS`` run inside the test process, with the
    same result shape as ``subprocess.run(..., capture_output=True, text=True)``.

    A new interpreter costs about half a second (mostly importing libcst);
    tests of what the command does, not of how it starts, call this instead.
    ``env`` sets (or, with None, removes) variables for the call only; caches
    keyed by a project's path are cleared, as a new process would have them.
    """
    from click.testing import CliRunner

    from torchlint import cli, settings

    settings.detect_torch_version.cache_clear()
    settings.detect_python_version.cache_clear()
    saved = os.getcwd()
    os.chdir(cwd)
    try:
        # click < 8.2 (the newest for Python 3.9) mixes stderr into stdout
        # unless told not to; 8.2 always keeps them apart and dropped the flag.
        try:
            runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
        except TypeError:
            runner = CliRunner()
        result = runner.invoke(cli.main, list(args), input=stdin, env=env, catch_exceptions=True)
    finally:
        os.chdir(saved)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        stderr += "".join(traceback.format_exception(*result.exc_info))  # type: ignore[misc]
    return subprocess.CompletedProcess(
        ["torchlint", *args], result.exit_code, result.stdout, stderr
    )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one test process per core, plus one.  Many tests wait on a
    child process (a Slurm job, a ``verify`` run, a pre-commit hook) and leave
    their core idle meanwhile; the extra process fills it (measured on 2 cores:
    86 s instead of 92 s for the default run)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return cores + 1
