"""Two torchlint builds side by side: CPU time of `check` on one corpus.

    .venv/bin/python bench/compare_builds.py /work/main/.venv/bin/torchlint .venv/bin/torchlint CORPUS
    .venv/bin/python bench/compare_builds.py OLD NEW CORPUS --runs 5 --warm
    .venv/bin/python bench/compare_builds.py OLD NEW CORPUS --warm --select TL101,TL201,TL301,TL302,TL401,TL501
    .venv/bin/python bench/compare_builds.py OLD NEW @files.txt --jobs 2 --select ALL --isolated

CORPUS is a folder, or ``@LIST``: a file naming one path a line (run from the
current folder).

Runs the two executables alternately (so that load on a shared machine hits
both alike), cold (`--no-cache`, `-j 1`) or warm (a cache filled by a first
run), and prints the median user+system CPU time of each and their ratio.
CPU time, not wall time: on a busy machine wall time measures the neighbours.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from typing import List


def _cpu_seconds(command: List[str], env: "dict[str, str]") -> float:
    before = os.times()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("corpus")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warm", action="store_true", help="time runs that find every file in the cache")
    parser.add_argument("--jobs", type=int, default=1, help="-j for both builds (default 1)")
    parser.add_argument("--isolated", action="store_true", help="pass --isolated (no configuration files)")
    parser.add_argument("--select", help="rules to run in both builds (e.g. the six both have: "
                        "TL101,TL201,TL301,TL302,TL401,TL501); default: each build's defaults")
    args = parser.parse_args()
    times = {"old": [], "new": []}  # type: dict[str, List[float]]
    if args.corpus.startswith("@"):
        with open(args.corpus[1:], encoding="utf-8") as listing:
            corpus = [line.strip() for line in listing if line.strip()]
    else:
        corpus = [args.corpus]
    with tempfile.TemporaryDirectory() as caches:
        for run in range(args.runs):
            for label in ("old", "new"):
                executable = getattr(args, label)
                env = dict(os.environ)
                command = [executable, "check", "-j", str(args.jobs), "--exit-zero"] + corpus
                if args.isolated:
                    command.append("--isolated")
                if args.select:
                    command += ["--select", args.select]
                if args.warm:
                    env["TORCHLINT_CACHE_DIR"] = os.path.join(caches, label)
                    if run == 0:
                        _cpu_seconds(command, env)  # fill the cache
                else:
                    command.insert(2, "--no-cache")
                times[label].append(_cpu_seconds(command, env))
                print(f"run {run + 1} {label}: {times[label][-1]:.2f} s", file=sys.stderr)
    old = statistics.median(times["old"])
    new = statistics.median(times["new"])
    mode = "warm" if args.warm else "cold"
    print(f"{mode} -j {args.jobs}: old {old:.2f} s ({min(times['old']):.2f}-{max(times['old']):.2f}), "
          f"new {new:.2f} s ({min(times['new']):.2f}-{max(times['new']):.2f}) CPU (median of {args.runs}, "
          f"min-max); new/old = {new / old:.3f}; load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
