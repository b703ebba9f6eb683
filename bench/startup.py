"""How long does torchlint take to start, next to a bare Python?

    .venv/bin/python bench/startup.py            # 15 runs of each command
    .venv/bin/python bench/startup.py --runs 30 --importtime

Times, in rounds (run 1 of every command, then run 2, ...) so that a change in
the machine's load hits all rows alike: ``python -c pass``, ``torchlint
--version``, a warm ``torchlint check one_file.py`` whose findings come from
the cache, and ``torchlint check`` on a file the pre-check rules out (no
cache).  Prints the median wall time of each and its ratio to ``python -c
pass``.  ``--importtime`` adds the modules that cost most to import on the
cache hit (``python -X importtime``, cumulative microseconds).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

# A file with a finding (so the cache hit has something to report) ...
WITH_FINDING = "import torch\nfrom torch import nn\n\nmodel = nn.DataParallel(net)\n"
# ... and one that imports torch but that no rule can report on.
RULED_OUT = "import torch\n\n\ndef step(x):\n    return torch.relu(x) * 2\n"


def timed(command: Sequence[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def commands(python: str, folder: Path) -> List[Tuple[str, List[str]]]:
    cli = [python, "-m", "torchlint"]
    return [
        ("python -c pass", [python, "-c", "pass"]),
        ("torchlint --version", [*cli, "--version"]),
        ("torchlint check one_file.py (cache hit)", [*cli, "check", "train.py", "--cache-dir", str(folder / "cache")]),
        ("torchlint check one_file.py (pre-check rules it out)", [*cli, "check", "clean.py", "--no-cache"]),
    ]


def import_costs(python: str, folder: Path, top: int) -> List[Tuple[int, str]]:
    """(cumulative µs, module) of the costliest top-level imports on the cache hit."""
    result = subprocess.run(
        [python, "-X", "importtime", "-m", "torchlint", "check", "train.py", "--cache-dir", str(folder / "cache")],
        cwd=folder, capture_output=True, text=True, check=False,
    )
    costs: List[Tuple[int, str]] = []
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line[len("import time:"):].split("|")
        if cumulative.strip().isdigit() and len(name) - len(name.lstrip()) <= 3:  # top-level imports
            costs.append((int(cumulative), name.strip()))
    return sorted(costs, reverse=True)[:top]


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--importtime", action="store_true")
    args = parser.parse_args(argv or None)
    python = sys.executable
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "train.py").write_text(WITH_FINDING)
        (folder / "clean.py").write_text(RULED_OUT)
        rows = commands(python, folder)
        subprocess.run(rows[2][1], cwd=folder, capture_output=True, check=False)  # fill the cache
        times: Dict[str, List[float]] = {label: [] for label, _ in rows}
        for _ in range(args.runs):
            for label, command in rows:
                times[label].append(timed(command, folder))
        base = statistics.median(times[rows[0][0]])
        print(f"Python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
              f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}; median of {args.runs} runs")
        width = max(len(label) for label, _ in rows)
        print(f"{'command':<{width}}  {'median':>9}  {'x python -c pass':>16}")
        for label, _ in rows:
            median = statistics.median(times[label])
            print(f"{label:<{width}}  {median * 1000:>7.0f}ms  {median / base:>15.1f}x")
        if args.importtime:
            print("\ncostliest top-level imports of the cache hit (cumulative):")
            for micros, module in import_costs(python, folder, 12):
                print(f"  {micros / 1000:>7.1f}ms  {module}")


if __name__ == "__main__":
    main()
