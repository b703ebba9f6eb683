"""How long does torchlint take to start, next to a bare Python?

    .venv/bin/python bench/startup.py            # 15 runs of each command
    .venv/bin/python bench/startup.py --runs 30 --importtime
    .venv/bin/python bench/startup.py --baseline /path/to/other/venv/bin/python --files 120

Times, in rounds (run 1 of every command, then run 2, ...) so that a change in
the machine's load hits all rows alike: ``python -c pass``, ``torchlint
--version``, a warm ``torchlint check one_file.py`` whose findings come from
the cache (a replay of the unchanged run, where the build has one), and
``torchlint check`` on a file the pre-check rules out (no cache); with
``--files N``, a warm and a cold (``--no-cache``) run over N files of a corpus
(``--corpus DIR``, default: the installed torch package, else the fixtures).
Prints the median wall time and the median CPU time (user + system of the
process and its workers) of each, the one-file hit's ratio to ``python -c
pass`` and warm / cold, both in wall and in CPU time.  ``--baseline PYTHON``
runs the same torchlint rows with another build's Python in the same rounds.
``--importtime`` adds the modules that cost most to import on the cache hit
(``python -X importtime``, cumulative microseconds).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

# A file with a finding (so the cache hit has something to report) ...
WITH_FINDING = "import torch\nfrom torch import nn\n\nmodel = nn.DataParallel(net)\n"
# ... and one that imports torch but that no rule can report on.
RULED_OUT = "import torch\n\n\ndef step(x):\n    return torch.relu(x) * 2\n"


def timed(command: Sequence[str], cwd: Path) -> Tuple[float, float]:
    """(wall seconds, CPU seconds of the child and the processes it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def commands(python: str, folder: Path, label: str = "") -> List[Tuple[str, List[str]]]:
    cli = [python, "-m", "torchlint"]
    tag = f"[{label}] " if label else ""
    return [
        (f"{tag}torchlint --version", [*cli, "--version"]),
        (f"{tag}torchlint check one_file.py (cache hit)",
         [*cli, "check", "train.py", "--cache-dir", str(folder.parent / f"cache{label}")]),
        (f"{tag}torchlint check one_file.py (pre-check rules it out)", [*cli, "check", "clean.py", "--no-cache"]),
    ]


def corpus_files(corpus: Optional[Path], count: int, work: Path) -> Tuple[Path, List[str]]:
    """``count`` .py files spread evenly over the corpus, copied under ``work``
    (the folder the runs start in: never a checkout or a package folder, whose
    modules ``python -m`` would import first), relative to it."""
    if corpus is None:
        spec = importlib.util.find_spec("torch")
        found = Path(spec.origin).parent if spec is not None and spec.origin else None
        corpus = found if found is not None else Path(__file__).resolve().parent.parent / "fixtures"
    files = sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*.py") if p.is_file())
    step = max(1, len(files) // max(count, 1))
    chosen = files[::step][:count]
    for name in chosen:
        target = work / "corpus" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus / name, target)
    return work, [f"corpus/{name}" for name in chosen]


def many_commands(python: str, folder: Path, corpus: Path, files: Sequence[str],
                  label: str = "") -> List[Tuple[str, List[str]]]:
    cli = [python, "-m", "torchlint", "check", "--exit-zero", *files]
    tag = f"[{label}] " if label else ""
    return [
        (f"{tag}torchlint warm, {len(files)} files", [*cli, "--cache-dir", str(folder.parent / f"many-cache{label}")]),
        (f"{tag}torchlint cold, {len(files)} files", [*cli, "--no-cache"]),
    ]


def import_costs(python: str, folder: Path, top: int) -> List[Tuple[int, str]]:
    """(cumulative µs, module) of the costliest top-level imports on the cache hit."""
    result = subprocess.run(
        [python, "-X", "importtime", "-m", "torchlint", "check", "train.py",
         "--cache-dir", str(folder.parent / "cache")],
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
    parser.add_argument("--baseline", help="another build's Python, run in the same rounds")
    parser.add_argument("--files", type=int, default=0, help="also a warm and a cold run over this many files")
    parser.add_argument("--corpus", type=Path, help="where those files come from (default: the torch package)")
    args = parser.parse_args(argv or None)
    python = sys.executable
    builds = [("", python)] + ([("baseline", args.baseline)] if args.baseline else [])
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name) / "project"  # the caches beside it: a new folder in it would change its listing
        folder.mkdir()
        (folder / "train.py").write_text(WITH_FINDING)
        (folder / "clean.py").write_text(RULED_OUT)
        corpus, files = corpus_files(args.corpus, args.files, Path(name)) if args.files else (folder, [])
        time.sleep(0.2)  # a folder changed within a clock tick of a run is not recorded for replay
        rows: List[Tuple[str, List[str], Path]] = [("python -c pass", [python, "-c", "pass"], folder)]
        for label, build in builds:
            rows += [(row, command, folder) for row, command in commands(build, folder, label)]
            if files:
                rows += [(row, command, corpus) for row, command in many_commands(build, folder, corpus, files, label)]
        for _, command, cwd in rows:  # fill the caches (twice: the first run records, the second may replay)
            if "--cache-dir" in command:
                for _ in range(2):
                    subprocess.run(command, cwd=cwd, capture_output=True, check=False)
        times: Dict[str, List[Tuple[float, float]]] = {row: [] for row, _, _ in rows}
        for _ in range(args.runs):
            for row, command, cwd in rows:
                times[row].append(timed(command, cwd))
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"Python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {load}; median of "
              f"{args.runs} runs in rounds{f'; {len(files)} files of {args.corpus or corpus}' if files else ''}")
        wall = {row: statistics.median(t[0] for t in found) for row, found in times.items()}
        cpu = {row: statistics.median(t[1] for t in found) for row, found in times.items()}
        width = max(len(row) for row, _, _ in rows)
        print(f"{'command':<{width}}  {'wall':>9}  {'CPU':>9}  {'wall x python -c pass':>21}  {'CPU x':>6}")
        base = rows[0][0]
        for row, _, _ in rows:
            print(f"{row:<{width}}  {wall[row] * 1000:>7.0f}ms  {cpu[row] * 1000:>7.0f}ms  "
                  f"{wall[row] / wall[base]:>20.1f}x  {cpu[row] / cpu[base]:>5.1f}x")
        if files:
            for label, _ in builds:
                tag = f"[{label}] " if label else ""
                warm, cold = (f"{tag}torchlint {kind}, {len(files)} files" for kind in ("warm", "cold"))
                print(f"{tag}warm / cold, {len(files)} files: wall {wall[warm] / wall[cold]:.3f}, "
                      f"CPU {cpu[warm] / cpu[cold]:.3f}")
        if args.importtime:
            print("\ncostliest top-level imports of the cache hit (cumulative):")
            for micros, module in import_costs(python, folder, 12):
                print(f"  {micros / 1000:>7.1f}ms  {module}")


if __name__ == "__main__":
    main()
