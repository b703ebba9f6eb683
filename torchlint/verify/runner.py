"""Child processes: start a run, enforce its timeout, kill its process group.

Two ways to get a fresh process per run:

- ``ForkServer`` (Linux): one helper process imports torch once and forks a
  child per run, which saves the seconds ``import torch`` takes each time;
- ``FreshProcesses`` (elsewhere, or with ``TORCHLINT_VERIFY_FORK=0``): a new
  interpreter per run.

Either way each run leads its own process group, so on timeout the whole
group (the run and any DataLoader workers it started) gets SIGTERM, then
SIGKILL; and a subreaper (the helper, or the ``--run`` process) adopts what
left the group (``os.fork()``, ``start_new_session``) and ends every
descendant when the run ends, however it ended (see sandbox.py).
"""

from __future__ import annotations

import functools
import json
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Dict, Mapping, Optional, Protocol

HARNESS = Path(__file__).resolve().with_name("harness.py")
GRACE_SECONDS = 2.0
CLOSE_SECONDS = 3.0  # what a helper gets to end its runs' leftovers before it is killed
SERVER_START_SECONDS = 300.0


class RunnerError(Exception):
    """The machinery failed (not the program under test)."""


@dataclass(frozen=True)
class Exit:
    """How a run ended."""

    timed_out: bool
    code: Optional[int]  # exit status; negative: killed by that signal
    seconds: float
    left: int = 0  # processes the run left running, which the helper ended

    def describe(self) -> str:
        if self.timed_out:
            return f"killed after the {self.seconds:.0f} s timeout"
        if self.code is not None and self.code < 0:
            try:
                name = signal.Signals(-self.code).name
            except ValueError:
                name = f"signal {-self.code}"
            return f"killed by {name}"
        return f"exited with status {self.code}"


def child_environment(extra: Mapping[str, str]) -> Dict[str, str]:
    """The environment runs start from: ours, plus reproducibility settings.

    ``CUBLAS_WORKSPACE_CONFIG`` is not among them: the harness sets it in
    comparison runs only, since it can slow the cuBLAS calls a timing run measures.
    """
    env = dict(os.environ)
    env.update(PYTHONHASHSEED="0", PYTHONUNBUFFERED="1")
    # Ask NVML, not the CUDA driver, whether there is a GPU: a driver
    # initialised in the fork server would be unusable in the forked runs.
    env["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
    # torch warns at import when NumPy is missing; that line is noise in a report.
    env.setdefault("PYTHONWARNINGS", "ignore:Failed to initialize NumPy")
    env.update(extra)
    return env


class Runner(Protocol):
    """Starts runs; both kinds below implement it."""

    def run(self, spec: Path, stdout: Path, stderr: Path, timeout: float) -> Exit:
        """Do the run described by ``spec``; kill it after ``timeout`` seconds."""

    def interrupt(self) -> None:
        """Kill the run in progress, if any (on Ctrl-C)."""

    def close(self) -> None:
        """Stop everything this runner started."""


WaitFor = Callable[[float], bool]  # wait(seconds) -> True once the run has ended


def kill_group(pgid: int, wait: WaitFor) -> None:
    """SIGTERM the group, give it a moment, then SIGKILL what is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        if wait(GRACE_SECONDS):
            return


class FreshProcesses:
    """One new interpreter per run: ``python harness.py --run SPEC``."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = dict(env)
        self._current: "Optional[subprocess.Popen[bytes]]" = None

    def run(self, spec: Path, stdout: Path, stderr: Path, timeout: float) -> Exit:
        started = time.monotonic()
        with stdout.open("wb") as out, stderr.open("wb") as err:
            process = subprocess.Popen(
                [sys.executable, str(HARNESS), "--run", str(spec)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=self._env,
                start_new_session=True,
            )
        self._current = process
        try:
            code = process.wait(timeout)
            return Exit(False, code, time.monotonic() - started)
        except subprocess.TimeoutExpired:
            kill_group(process.pid, functools.partial(_wait_popen, process))
            process.wait()
            return Exit(True, process.returncode, time.monotonic() - started)
        except BaseException:  # Ctrl-C: the run leads its own group, so it must be ended here
            kill_group(process.pid, functools.partial(_wait_popen, process))
            raise
        finally:
            self._current = None

    def interrupt(self) -> None:
        process = self._current
        if process is not None:
            kill_group(process.pid, functools.partial(_wait_popen, process))

    def close(self) -> None:
        self.interrupt()


def _wait_popen(process: "subprocess.Popen[bytes]", seconds: float) -> bool:
    try:
        process.wait(seconds)
        return True
    except subprocess.TimeoutExpired:
        return False


class ForkServer:
    """Runs forked from a helper process that has already imported torch."""

    def __init__(self, env: Mapping[str, str], log: Path) -> None:
        self._env = dict(env)
        self._log = log
        self._process: "Optional[subprocess.Popen[bytes]]" = None
        self._lines: Optional[_LineReader] = None
        self._current: Optional[int] = None

    def _died(self) -> RunnerError:
        self.close()
        return RunnerError(f"the verify helper process died; its log ({self._log}) ends:\n{tail(self._log)}")

    def _start(self) -> "_LineReader":
        if self._process is not None and self._process.poll() is None and self._lines is not None:
            return self._lines
        self.close()
        with self._log.open("ab") as log:
            self._process = subprocess.Popen(
                [sys.executable, str(HARNESS), "--serve"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=self._env,
            )
        assert self._process.stdout is not None
        self._lines = _LineReader(self._process.stdout)
        ready = self._lines.readline(SERVER_START_SECONDS)
        if ready is None or not json.loads(ready).get("ready"):
            raise self._died()
        return self._lines

    def run(self, spec: Path, stdout: Path, stderr: Path, timeout: float) -> Exit:
        del stdout, stderr  # the forked run opens them itself; the spec names them
        lines = self._start()
        assert self._process is not None and self._process.stdin is not None
        try:
            self._process.stdin.write(f"{spec}\n".encode())
            self._process.stdin.flush()
        except BrokenPipeError:
            raise self._died() from None
        started = time.monotonic()
        announced = lines.readline(SERVER_START_SECONDS)
        if announced is None:
            raise self._died()
        pid = int(json.loads(announced)["pid"])
        self._current = pid
        try:
            finished = lines.readline(timeout)
            timed_out = finished is None
            if finished is None:
                waiter = _EndLine(lines)
                kill_group(pid, waiter)
                finished = waiter.line or lines.readline(SERVER_START_SECONDS)
            if finished is None:
                raise self._died()
            ended = json.loads(finished)
            return Exit(timed_out, int(ended["exit"]), time.monotonic() - started, int(ended.get("left", 0)))
        except BaseException:  # Ctrl-C: the run leads its own group, so it must be ended here
            kill_group(pid, _EndLine(lines))
            raise
        finally:
            self._current = None

    def interrupt(self) -> None:
        if self._current is not None and self._lines is not None:
            kill_group(self._current, _EndLine(self._lines))

    def close(self) -> None:
        self.interrupt()
        process, self._process, self._lines = self._process, None, None
        if process is None:
            return
        if process.stdin is not None:
            try:
                process.stdin.close()
            except OSError:
                pass
        # No run is in flight (interrupt() ended it).  At the end of its input the helper
        # ends whatever a run left behind and exits; SIGTERM asks the same of a helper
        # that does not (it ends its runs' processes first); SIGKILL is the last resort.
        for ask in (None, signal.SIGTERM, signal.SIGKILL):
            if ask is not None:
                try:
                    process.send_signal(ask)
                except ProcessLookupError:
                    break
            if _wait_popen(process, CLOSE_SECONDS):
                break
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


class _EndLine:
    """Waits for the server's "run ended" line and keeps it."""

    def __init__(self, lines: "_LineReader") -> None:
        self._lines = lines
        self.line: Optional[str] = None

    def __call__(self, seconds: float) -> bool:
        self.line = self._lines.readline(seconds)
        return self.line is not None


class _LineReader:
    """Reads lines from a pipe with a timeout (no buffering behind select's back)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._fd = stream.fileno()
        self._buffer = b""
        self._eof = False

    def readline(self, timeout: float) -> Optional[str]:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            if self._eof:
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self._fd], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(self._fd, 65536)
            if not chunk:
                self._eof = True
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode()


def tail(path: Path, lines: int = 20) -> str:
    """The last lines of a text file (a run's stderr, the helper's log)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def make_runner(env: Mapping[str, str], log: Path) -> Runner:
    """A fork server where that is safe (Linux), fresh processes elsewhere."""
    fork = os.environ.get("TORCHLINT_VERIFY_FORK", "1") != "0"
    if fork and sys.platform.startswith("linux") and hasattr(os, "fork"):
        return ForkServer(env, log)
    return FreshProcesses(env)
