"""Run inside a ``torchlint verify --slurm`` job: record where the job runs,
run ``torchlint verify`` with the given arguments, and leave its exit status
in the job folder (``python -m torchlint.verify.slurm_on_node FOLDER ARGS...``)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import List, Optional


def _gpus() -> str:
    """The GPUs Slurm gave the job, by name when ``nvidia-smi`` is there."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30)
        names = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    except (OSError, subprocess.TimeoutExpired):
        names = []
    if names:
        return ", ".join(names)
    return f"CUDA_VISIBLE_DEVICES={visible}" if visible else ""


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    folder, verify_args = Path(args[0]), args[1:]
    where = {"slurm_job_id": os.environ.get("SLURM_JOB_ID", ""), "node": socket.gethostname(), "gpu": _gpus()}
    (folder / "slurm.json").write_text(json.dumps(where) + "\n", encoding="utf-8")
    from torchlint.interfaces.cli import main as torchlint_main

    try:
        torchlint_main(["verify", *verify_args, "--json", str(folder / "report.json"),
                        "--markdown", str(folder / "report.md")], standalone_mode=False)
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 2
    except Exception as error:  # noqa: BLE001 - reported in the job's error file
        print(f"torchlint verify: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        code = 2
    sys.stdout.flush()
    (folder / "exit_code").write_text(f"{code}\n", encoding="utf-8")
    return code


if __name__ == "__main__":
    sys.exit(main())
