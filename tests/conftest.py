import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import importlib.util  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
from typing import Dict, FrozenSet, Iterator, Mapping, Optional, Sequence, Tuple  # noqa: E402

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

    from torchlint.lint import settings
    from torchlint.interfaces import cli

    settings.clear_detection_caches()
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
        try:
            os.chdir(saved)
        except OSError:  # a forked child running as another user may not enter the caller's folder
            pass
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        stderr += "".join(traceback.format_exception(*result.exc_info))  # type: ignore[misc]
    return subprocess.CompletedProcess(
        ["torchlint", *args], result.exit_code, result.stdout, stderr
    )


@pytest.fixture(scope="session", autouse=True)
def _nothing_above_the_temporary_folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Tests are hermetic: a configuration file, a ``.git`` or a ``.gitignore``
    in a folder above the tests' temporary folders (a stray
    ``~/.torchlint.toml``, a ``TMPDIR`` inside a project) changes nothing.
    Every torchlint run of the tests, in this process or a child, searches
    for configuration and repositories only below the session's temporary
    folder and the system's (``TORCHLINT_CEILING_DIRECTORIES``, and git's
    own ``GIT_CEILING_DIRECTORIES``, which torchlint's ``.gitignore`` reading
    honours as git does).  Tests of the search itself build their folders
    below it.  The variables are replaced, never added to: a test session
    started by a test gets its own."""
    import tempfile

    ceilings = os.pathsep.join(sorted({str(tmp_path_factory.getbasetemp()), tempfile.gettempdir()}))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TORCHLINT_CEILING_DIRECTORIES", ceilings)
        patch.setenv("GIT_CEILING_DIRECTORIES", ceilings)
        yield


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


@pytest.fixture(scope="session", autouse=True)
def _one_verify_helper_per_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Each `torchlint verify` session starts a helper process that imports
    torch and what an optimizer step pulls in (about two seconds of CPU).  A
    user pays that once per invocation; the tests make dozens of sessions, so
    in each test process the sessions share one helper per environment (it
    keeps no state between runs: every run is a fresh fork).  Starting,
    killing and restarting helpers stays tested: the first session of each
    environment starts one, a dead one is restarted, and the Slurm tests run
    `torchlint verify` as a whole process."""
    if importlib.util.find_spec("torch") is None:
        yield
        return
    from torchlint.verify import runner as verify_runner
    from torchlint.verify.runner import Exit, Runner

    original = verify_runner.make_runner
    logs = tmp_path_factory.mktemp("verify-helpers")
    helpers: Dict[FrozenSet[Tuple[str, str]], Runner] = {}

    class Shared:
        def __init__(self, helper: Runner) -> None:
            self._helper = helper
            self._env = getattr(helper, "_env", {})  # read by a test of the runs' environment

        def run(self, spec: Path, stdout: Path, stderr: Path, timeout: float) -> Exit:
            return self._helper.run(spec, stdout, stderr, timeout)

        def interrupt(self) -> None:
            self._helper.interrupt()

        def close(self) -> None:
            self._helper.interrupt()  # the helper itself waits for the next session

    def make_runner(env: Mapping[str, str], log: Path) -> Runner:
        runner = original(env, log)  # starts nothing yet
        if not isinstance(runner, verify_runner.ForkServer):
            return runner  # fresh processes (TORCHLINT_VERIFY_FORK=0): nothing to share
        key = frozenset((k, v) for k, v in env.items() if k != "PYTEST_CURRENT_TEST")
        helper = helpers.get(key)
        if helper is None:
            helper = helpers[key] = original(env, logs / f"helper-{len(helpers)}.log")
        return Shared(helper)

    # Sessions call the name their module imported: patch it there too when
    # that module (which imports torch) is already loaded, else where it comes from.
    users = [verify_runner] + [sys.modules[name] for name in ("torchlint.verify.session",) if name in sys.modules]
    for module in users:
        setattr(module, "make_runner", make_runner)
    try:
        yield
    finally:
        for module in [verify_runner, sys.modules.get("torchlint.verify.session")]:
            if module is not None and getattr(module, "make_runner", None) is make_runner:
                setattr(module, "make_runner", original)
        for helper in helpers.values():
            helper.close()


@pytest.fixture
def rule_doubles() -> Iterator[Tuple[type, ...]]:
    """The test's rules are the small ones of ``tests/rule_doubles.py``, not
    the real ones, until the test ends (forked lint workers see them too)."""
    from rule_doubles import DOUBLES

    from torchlint.ruleapi.catalog import rules_replaced

    with rules_replaced(DOUBLES):
        yield tuple(DOUBLES)
