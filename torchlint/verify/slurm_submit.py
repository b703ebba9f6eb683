"""``torchlint verify --slurm``: run the same verification on a compute node.

From a login node: write a batch script into a job folder, submit it with
``sbatch --parsable``, follow the job (its queue state from ``scontrol show
job``, then the progress lines the job writes to its error file), and when
it ends print the report the job wrote.  Ctrl-C cancels the job with
``scancel``.  The job runs ``python -m torchlint.verify.slurm_on_node``, which
records where it ran (``slurm_job_id``, node, GPUs) and runs ``torchlint
verify``.  No ``sacct`` is needed.

Assumes a filesystem shared by the login and compute nodes (the job folder,
the files to verify and, by default, the same Python interpreter path as
the caller's; ``--slurm-setup`` gives a line, e.g. ``source
venv/bin/activate``, that sets up the environment instead).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, TextIO

EXIT_ERROR = 2
_FINISHED = frozenset({"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                       "PREEMPTED", "BOOT_FAIL", "DEADLINE", "REVOKED", "SPECIAL_EXIT"})
_TAIL_LINES = 20


class SlurmError(Exception):
    """Slurm could not be used (no sbatch, a refused submission); the message says why."""


@dataclass(frozen=True)
class SlurmRequest:
    """What to submit: the verify arguments for the node and the job's settings."""

    verify_args: Sequence[str]
    sbatch_args: Sequence[str]
    setup: Optional[str]
    json_file: Optional[Path]
    markdown_file: Optional[Path]


@dataclass(frozen=True)
class JobState:
    """One look at the job in ``scontrol show job``."""

    state: str
    reason: str
    node: str


def job_folder() -> Path:
    """A new folder for one job's files, on (what is assumed to be) the shared
    filesystem: ``$TORCHLINT_SLURM_DIR`` or ``~/.cache/torchlint/slurm``."""
    base = os.environ.get("TORCHLINT_SLURM_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "torchlint", "slurm")
    folder = Path(base) / f"verify-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=False)
    return folder


def batch_script(request: SlurmRequest, folder: Path, python: str, cwd: Path) -> str:
    """The batch script that runs verify on the node."""
    interpreter = "python" if request.setup else python
    node_args = [interpreter, "-m", "torchlint.verify.slurm_on_node", str(folder), *request.verify_args]
    lines = [
        "#!/bin/bash",
        "#SBATCH --job-name=torchlint-verify",
        f"#SBATCH --output={folder / 'out.txt'}",
        f"#SBATCH --error={folder / 'err.txt'}",
        "# Written by `torchlint verify --slurm`; options from --sbatch-arg and",
        "# [tool.torchlint.verify] sbatch-args are on the sbatch command line.",
        f"cd {shlex.quote(str(cwd))}",
    ]
    if request.setup:
        lines.append(request.setup)
    lines += ["export PYTHONUNBUFFERED=1", " ".join(shlex.quote(arg) for arg in node_args), ""]
    return "\n".join(lines)


def _run(command: List[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise SlurmError(f"`{command[0]}` was not found; --slurm needs the Slurm commands on PATH") from None
    except subprocess.TimeoutExpired:
        raise SlurmError(f"`{command[0]}` did not answer within 60 s") from None


def submit(script: Path, sbatch_args: Sequence[str]) -> str:
    """Submit and return the job id."""
    done = _run(["sbatch", "--parsable", *sbatch_args, str(script)])
    if done.returncode != 0:
        raise SlurmError(f"sbatch refused the job: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout.strip().split(";")[0]


def look(job_id: str) -> Optional[JobState]:
    """The job's state, or None once Slurm has forgotten it."""
    done = _run(["scontrol", "show", "job", "--oneliner", job_id])
    if done.returncode != 0:
        return None
    fields: Dict[str, str] = {}
    for item in done.stdout.split():
        key, _, value = item.partition("=")
        fields.setdefault(key, value)
    return JobState(fields.get("JobState", "UNKNOWN"), fields.get("Reason", "None"), fields.get("NodeList", ""))


def _tail(path: Path, lines: int = _TAIL_LINES) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


class _Follower:
    """Echoes the new complete lines of a growing file."""

    def __init__(self, path: Path, out: TextIO) -> None:
        self.path, self.out, self.offset = path, out, 0

    def poll(self) -> None:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except OSError:
            return
        end = data.rfind(b"\n") + 1
        if end:
            self.out.write(data[:end].decode("utf-8", "replace"))
            self.out.flush()
            self.offset += end


def wait(job_id: str, folder: Path, err: TextIO, interval: float = 1.0,
         look_up: Callable[[str], Optional[JobState]] = look) -> Optional[JobState]:
    """Follow the job until it ends; returns its last known state."""
    follower = _Follower(folder / "err.txt", err)
    shown = ""
    last: Optional[JobState] = None
    while True:
        state = look_up(job_id)
        if state is not None:
            last = state
            summary = f"PENDING ({state.reason})" if state.state == "PENDING" and state.reason != "None" else state.state
            if state.state == "RUNNING" and state.node:
                summary = f"RUNNING on {state.node}"
            if summary != shown:
                err.write(f"torchlint verify --slurm: job {job_id} {summary}\n")
                err.flush()
                shown = summary
        follower.poll()
        if state is None or state.state in _FINISHED:
            return last
        time.sleep(interval)


def cancel(job_id: str) -> None:
    """``scancel`` the job (best effort)."""
    try:
        subprocess.run(["scancel", job_id], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        pass


def _read_json(path: Path) -> Optional[Dict[str, object]]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def finish(job_id: str, folder: Path, last: Optional[JobState], request: SlurmRequest,
           out: TextIO, err: TextIO) -> int:
    """Print the job's report and return verify's exit status (2 when the job
    did not run verify to its end)."""
    code_text = (folder / "exit_code").read_text().strip() if (folder / "exit_code").is_file() else ""
    state = last.state if last is not None else "UNKNOWN"
    where = _read_json(folder / "slurm.json") or {}
    if not code_text.isdigit() or state in ("CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
                                            "BOOT_FAIL", "DEADLINE"):
        err.write(f"torchlint verify --slurm: job {job_id} ended {state} before verify finished\n")
        tail = _tail(folder / "err.txt")
        if tail:
            err.write(f"--- last lines of {folder / 'err.txt'} ---\n{tail}\n")
        return EXIT_ERROR
    out.write(f"Slurm job {where.get('slurm_job_id', job_id)} on node {where.get('node', '?')}"
              f" (GPU: {where.get('gpu') or 'none'})\n")
    out.write((folder / "out.txt").read_text(encoding="utf-8", errors="replace") if (folder / "out.txt").is_file() else "")
    out.flush()
    report = _read_json(folder / "report.json")
    if report is not None:
        environment = report.get("environment")
        if isinstance(environment, dict):
            environment.update({"slurm_job_id": where.get("slurm_job_id", job_id), "node": where.get("node"),
                                "gpu": where.get("gpu")})
        if request.json_file is not None:
            request.json_file.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if request.markdown_file is not None and (folder / "report.md").is_file():
        request.markdown_file.write_text((folder / "report.md").read_text(encoding="utf-8"), encoding="utf-8")
    code = int(code_text)
    if code == EXIT_ERROR:
        tail = _tail(folder / "err.txt")
        if tail:
            err.write(f"--- last lines of {folder / 'err.txt'} ---\n{tail}\n")
    return code


def run_on_slurm(request: SlurmRequest, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Submit, follow, report; returns the exit status."""
    try:
        folder = job_folder()
        script = folder / "job.sh"
        script.write_text(batch_script(request, folder, sys.executable, Path.cwd()), encoding="utf-8")
        job_id = submit(script, request.sbatch_args)
    except (SlurmError, OSError) as error:
        err.write(f"torchlint verify: error: {error}\n")
        return EXIT_ERROR
    err.write(f"torchlint verify --slurm: submitted job {job_id} (files in {folder})\n")
    err.flush()
    try:
        last = wait(job_id, folder, err)
    except KeyboardInterrupt:
        cancel(job_id)
        err.write(f"\ntorchlint verify --slurm: interrupted; job {job_id} cancelled\n")
        return EXIT_ERROR
    except SlurmError as error:
        err.write(f"torchlint verify: error: {error}\n")
        return EXIT_ERROR
    return finish(job_id, folder, last, request, out, err)
