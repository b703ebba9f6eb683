"""How fast is torchlint, next to TorchFix, Ruff and a bare libcst parse?

    .venv/bin/python bench/speed.py --quick          # torch/nn, torch/optim, torch/utils/data
    .venv/bin/python bench/speed.py                  # every .py file of the torch 2.13.0 wheel
    .venv/bin/python bench/speed.py --runs 5 --jobs 1,2,4 --skip-torchfix --json out.json

Run it with the Python that has torchlint installed (the project's .venv).  It

* unzips the Python files of the torch wheel into bench/_corpus/torch (with
  bench/realcode.py's fetch(); pip finds the wheel on PyPI or a local index),
* makes a separate venv, bench/_venvs/tools, with TorchFix 0.7.0 and Ruff
  (never the project's venv),
* times, one after the other on the same machine: torchlint cold (no cache),
  warm (nothing changed since the last run) and after 1% of the files changed;
  TorchFix (on a sample: it needs more than 15 minutes for the whole corpus);
  Ruff with every rule; a bare libcst parse of every file in one process,
* checks that torchlint's time grows linearly with the corpus, and compares the
  peak memory of a whole torchlint run with a bare parse of the largest file,

and prints everything side by side with the machine and the exact commands.
Progress goes to stderr, the report to stdout.  Peak memory is measured by
polling /proc every 50 ms for the whole process tree (RSS summed over the
processes, PSS summed too, and the largest single process).
"""

from __future__ import annotations

import argparse
import atexit
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from realcode import TORCH_WHEEL, fetch  # noqa: E402

TORCHFIX_REQUIREMENT = "torchfix==0.7.0"
VENV = HERE / "_venvs" / "tools"
QUICK_TARGETS = ("torch/nn", "torch/optim", "torch/utils/data")
SAMPLE_PERIOD = 0.05  # seconds between two looks at the process tree

FLOOR_SCRIPT = r"""
import sys
import libcst
with open(sys.argv[1], encoding="utf-8") as listing:
    paths = listing.read().splitlines()
failed = 0
for path in paths:
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        module = libcst.parse_module(data)
    except libcst.ParserSyntaxError:
        failed += 1
    module = None
print(f"parsed {len(paths) - failed} files, {failed} failed")
"""


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- measuring


class TreeSampler(threading.Thread):
    """Polls /proc for a process and all its descendants; keeps the peaks."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.tree_rss_kb = 0  # largest sum of VmRSS over the tree seen at one moment
        self.tree_pss_kb = 0  # the same with PSS (shared pages split between sharers)
        self.proc_rss_kb = 0  # largest VmHWM (peak RSS) of one process
        self.processes = 0  # most processes seen at once
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            self.sample()
            self._done.wait(SAMPLE_PERIOD)

    def stop(self) -> None:
        self._done.set()
        self.join()

    def _tree(self) -> List[int]:
        children: Dict[int, List[int]] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            fields = data[data.rindex(b")") + 2:].split()
            children.setdefault(int(fields[1]), []).append(int(name))
        found, stack = [self.root], [self.root]
        while stack:
            for child in children.get(stack.pop(), ()):
                found.append(child)
                stack.append(child)
        return found

    def sample(self) -> None:
        rss = pss = 0
        pids = self._tree()
        for pid in pids:
            try:
                with open(f"/proc/{pid}/status", "rb") as handle:
                    status = handle.read()
                with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
                    rollup = handle.read()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith(b"VmRSS:"):
                    rss += int(line.split()[1])
                elif line.startswith(b"VmHWM:"):
                    self.proc_rss_kb = max(self.proc_rss_kb, int(line.split()[1]))
            for line in rollup.splitlines():
                if line.startswith(b"Pss:"):
                    pss += int(line.split()[1])
                    break
        self.tree_rss_kb = max(self.tree_rss_kb, rss)
        self.tree_pss_kb = max(self.tree_pss_kb, pss)
        self.processes = max(self.processes, len(pids))


class Failed(Exception):
    """A measured command did not run or exited with an unexpected status."""


@dataclass
class Run:
    wall: float
    cpu: float
    tree_rss_kb: int
    tree_pss_kb: int
    proc_rss_kb: int
    processes: int
    returncode: int
    output_lines: int


def measure(command: Sequence[str], cwd: Path, ok_codes: Sequence[int] = (0,)) -> Run:
    """Run one command, timing it and sampling the memory of its process tree."""
    env = dict(os.environ, NO_COLOR="1")
    env.pop("TORCHLINT_OUTPUT_FORMAT", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # users' tools run from byte-compiled modules
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(list(command), cwd=cwd, stdout=out, stderr=err, env=env)
        sampler = TreeSampler(process.pid)
        sampler.start()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        sampler.stop()
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        output_lines = sum(1 for _ in out)
        if process.returncode not in ok_codes:
            err.seek(0)
            tail = err.read()[-3000:].decode("utf-8", "replace")
            raise Failed(f"exit status {process.returncode}: {tail.strip()[-500:]}")
    return Run(
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        tree_rss_kb=sampler.tree_rss_kb,
        tree_pss_kb=sampler.tree_pss_kb,
        proc_rss_kb=max(sampler.proc_rss_kb, usage.ru_maxrss),
        processes=sampler.processes,
        returncode=process.returncode,
        output_lines=output_lines,
    )


@dataclass
class Row:
    """One measured command (a row of the report) and its runs."""

    name: str
    command: str  # as shown in the report
    files: int
    lines: int
    argv: List[str] = field(default_factory=list)
    cwd: Path = Path(".")
    want: int = 1  # runs to make
    ok_codes: Tuple[int, ...] = (0,)
    change: Tuple[str, ...] = ()  # files to append a line to before each run (restored after)
    cache: Optional[Path] = None  # a filled cache the runs read; checked for a second fingerprint
    runs: List[Run] = field(default_factory=list)
    note: str = ""

    def _stat(self, values: List[float], how: str) -> float:
        if not values:
            return math.nan  # every run failed: shown as nan, its target as n/a
        return statistics.median(values) if how == "median" else max(values)

    @property
    def wall(self) -> float:
        return self._stat([r.wall for r in self.runs], "median")

    @property
    def cpu(self) -> float:
        return self._stat([r.cpu for r in self.runs], "median")

    @property
    def tree_rss_kb(self) -> float:
        return self._stat([r.tree_rss_kb for r in self.runs], "max")

    @property
    def tree_pss_kb(self) -> float:
        return self._stat([r.tree_pss_kb for r in self.runs], "max")

    @property
    def proc_rss_kb(self) -> float:
        return self._stat([r.proc_rss_kb for r in self.runs], "max")

    @property
    def processes(self) -> float:
        return self._stat([r.processes for r in self.runs], "max")

    @property
    def output_lines(self) -> float:
        return self._stat([r.output_lines for r in self.runs], "max")

    @property
    def files_per_s(self) -> float:
        return self.files / self.wall

    @property
    def lines_per_s(self) -> float:
        return self.lines / self.wall


def shorten(command: Sequence[str], limit: int = 40) -> str:
    parts = [str(p) for p in command]
    if len(parts) <= limit:
        return " ".join(parts)
    return " ".join(parts[:limit]) + f" ... ({len(parts) - limit} more arguments)"


def job(name: str, argv: Sequence[str], cwd: Path, files: int, lines: int, runs: int,
        shown: Optional[str] = None, ok_codes: Tuple[int, ...] = (0,), change: Sequence[str] = (),
        cache: Optional[Path] = None) -> Row:
    return Row(name, shown or shorten(argv), files, lines, list(argv), cwd, runs, ok_codes, tuple(change), cache)


LOADS: List[float] = []
"""The 1-minute load average before each measured run (reported as its spread)."""


def load_spread() -> str:
    if not LOADS:
        return "n/a"
    return f"{min(LOADS):.1f}-{max(LOADS):.1f} (median {statistics.median(LOADS):.1f}, {len(LOADS)} runs)"


def run_once(row: Row) -> None:
    index = len(row.runs)
    LOADS.append(os.getloadavg()[0])
    roots = cache_roots(row.cache) if row.cache else set()
    originals = {f: (row.cwd / f).read_bytes() for f in row.change}
    for path, data in originals.items():
        tail = b"" if data.endswith(b"\n") or not data else b"\n"
        (row.cwd / path).write_bytes(data + tail + f"# changed by bench/speed.py, run {index + 1}\n".encode())
    try:
        run = measure(row.argv, row.cwd, row.ok_codes)
    except (OSError, Failed) as error:
        row.note = f"run {index + 1} failed, no more runs: {error}"
        row.want = index
        log(f"{row.name}: {row.note}")
        return
    finally:
        for path, data in originals.items():
            (row.cwd / path).write_bytes(data)
    if row.cache and not row.change and cache_roots(row.cache) != roots:
        row.note = "torchlint's source changed between filling the cache and this run: numbers invalid"
    log(f"{row.name}: run {index + 1}/{row.want}: {run.wall:.2f} s, CPU {run.cpu:.1f} s, "
        f"tree RSS {run.tree_rss_kb / 1024:,.0f} MiB")
    row.runs.append(run)


def run_rounds(rows: Sequence[Row]) -> None:
    """Round-robin: run 1 of every row, then run 2 of every row, ...  A machine whose
    load changes over time then slows all rows alike, and their ratios hold."""
    for index in range(max(row.want for row in rows)):
        # Every other round runs backwards: what comes first in a round does not
        # always meet the same point of a drifting load.
        for row in (rows if index % 2 == 0 else list(reversed(rows))):
            if index < row.want:
                run_once(row)


# --------------------------------------------------------------------------- corpus


@dataclass
class Corpus:
    base: Path  # commands run here
    targets: List[str]  # what is passed to the linters (relative to base)
    files: List[str]  # every .py file, sorted, relative to base
    lines: Dict[str, int]

    def count(self, files: Sequence[str]) -> int:
        return sum(self.lines[f] for f in files)


def build_corpus(quick: bool) -> Corpus:
    log(f"corpus: fetching {TORCH_WHEEL} (Python files only) into {HERE / '_corpus'}")
    base = fetch(TORCH_WHEEL, HERE / "_corpus")
    targets = list(QUICK_TARGETS) if quick else ["."]
    files = sorted({
        path.relative_to(base).as_posix()
        for target in targets
        for path in (base / target).rglob("*.py")
        if path.is_file()
    })
    lines = {}
    for name in files:  # reading everything once also warms the page cache
        lines[name] = len((base / name).read_bytes().splitlines())
    return Corpus(base, targets, files, lines)


def every(files: Sequence[str], period: int) -> List[str]:
    """A deterministic sample: the 1st, (period+1)th, ... file of the sorted list."""
    return list(files[::period])


# --------------------------------------------------------------------------- tools


def ensure_tools() -> Tuple[Path, Path]:
    torchfix, ruff = VENV / "bin" / "torchfix", VENV / "bin" / "ruff"
    if all(subprocess.run([str(tool), "--version"], capture_output=True, check=False).returncode == 0
           for tool in (torchfix, ruff) if tool.exists()) and torchfix.exists() and ruff.exists():
        return torchfix, ruff
    log(f"tools: creating {VENV} with {TORCHFIX_REQUIREMENT} and ruff")
    VENV.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
    subprocess.run([str(VENV / "bin" / "python"), "-m", "pip", "install", "-q",
                    TORCHFIX_REQUIREMENT, "ruff"], check=True)
    return torchfix, ruff


def torchlint_command() -> List[str]:
    script = Path(sys.executable).parent / "torchlint"
    return [str(script)] if script.exists() else [sys.executable, "-m", "torchlint"]


def output_of(command: Sequence[str], cwd: Optional[Path] = None) -> str:
    try:
        done = subprocess.run(list(command), cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
        return (done.stdout or done.stderr).strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


def venv_version(package: str) -> str:
    code = f"from importlib.metadata import version; print(version({package!r}))"
    return output_of([str(VENV / "bin" / "python"), "-c", code])


def machine(torchlint: Sequence[str]) -> List[str]:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        memory = next(line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                      if line.startswith("MemTotal:"))
        memory = f"{int(memory) / 1024 / 1024:.1f} GiB"
    except (OSError, StopIteration):
        memory = "?"
    commit = output_of(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT)
    dirty = output_of(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT)
    return [
        f"cores: {len(os.sched_getaffinity(0))} usable (os.cpu_count() = {os.cpu_count()}); "
        f"CPU: {model}; memory: {memory}",
        f"OS: {platform.system()} {platform.release()}; load average at start: "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        f"Python: {platform.python_version()} ({sys.executable})",
        f"torchlint {metadata.version('torchlint')} (git {commit}{' + local changes' if dirty else ''}), "
        f"libcst {metadata.version('libcst')}  [{' '.join(torchlint)}]",
        f"TorchFix {venv_version('torchfix')} (with libcst {venv_version('libcst')}), "
        f"{output_of([str(VENV / 'bin' / 'ruff'), '--version'])}  [{VENV}]",
    ]


# --------------------------------------------------------------------------- scenarios


def cache_roots(cache: Path) -> Set[str]:
    """One folder per torchlint code fingerprint; a new one means torchlint's source
    changed between filling the cache and reading it."""
    return {p.name for p in (cache / "v2").glob("*") if p.is_dir()} if (cache / "v2").is_dir() else set()


def launcher(source: Path, folder: Path) -> List[str]:
    """A ``torchlint`` script like the venv's entry point that imports torchlint from
    ``source`` first (ahead of PYTHONPATH), with this Python: another build, started
    the same way."""
    folder.mkdir(parents=True)
    script = folder / "torchlint"
    script.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(source)!r})\n"
                      "from torchlint.interfaces.cli import main\nsys.exit(main())\n", encoding="utf-8")
    script.chmod(0o755)
    return [str(script)]


def snapshot(into: Path, root: Path = ROOT) -> Path:
    """Copy torchlint's source (of the checkout ``root``) as it is now, so edits made
    while the benchmark runs (and they change the cache key) do not reach it."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(root / "torchlint", into / "torchlint", ignore=ignore)
    shutil.copytree(root / "rules", into / "torchlint" / "rules", ignore=ignore)
    return into


def changed_files(files: Sequence[str]) -> List[str]:
    count = max(1, round(len(files) / 100))
    return [files[int((k + 0.5) * len(files) / count)] for k in range(count)]


# --------------------------------------------------------------------------- report


def mib(kb: float) -> str:
    return f"{kb / 1024:,.0f}"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> List[str]:
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows)]

    def fmt(cells: Sequence[str]) -> str:
        return "  ".join(str(c).ljust(w) if i < left else str(c).rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths)))

    return [fmt(headers), "  ".join("-" * w for w in widths)] + [fmt(r) for r in rows]


def main_table(rows: Sequence[Row], cold: Row) -> List[str]:
    headers = ["", "files", "lines", "runs", "wall s", "(min-max)", "files/s", "lines/s", "CPU s",
               "tree RSS MiB", "tree PSS MiB", "max proc MiB", "output lines", "time / cold",
               "speed / cold"]
    cells = []
    for row in rows:
        walls = [r.wall for r in row.runs] or [math.nan]
        cells.append([
            row.name, f"{row.files:,}", f"{row.lines:,}", str(len(row.runs)), f"{row.wall:.2f}",
            f"({min(walls):.2f}-{max(walls):.2f})", f"{row.files_per_s:,.1f}", f"{row.lines_per_s:,.0f}",
            f"{row.cpu:.1f}", mib(row.tree_rss_kb), mib(row.tree_pss_kb), mib(row.proc_rss_kb),
            f"{row.output_lines:,.0f}", f"{row.wall / cold.wall:.3f}",
            f"{row.lines_per_s / cold.lines_per_s:.3g}x",
        ])
    return table(headers, cells)


def spread(files: Sequence[str], count: int) -> List[str]:
    """``count`` files spread evenly over the sorted list (all of them when there are fewer)."""
    if len(files) <= count:
        return list(files)
    return [files[int(k * len(files) / count)] for k in range(count)]


def training_files(folder: Path, into: Path) -> List[str]:
    """The training code to compare on, copied into ``into``: every ``.py`` file of
    ``folder`` except the expected outputs of fixes (``*.fixed.py``)."""
    files = []
    for path in sorted(folder.rglob("*.py")):
        if path.name.endswith(".fixed.py"):
            continue
        relative = path.relative_to(folder).as_posix()
        (into / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, into / relative)
        files.append(relative)
    return files


@dataclass
class BuildRows:
    """One torchlint build's rows of issue 27's table."""

    label: str
    version: Row
    hit: Row
    ruled_out: Row
    cold_train: Row
    cold_sample: Row
    cold_j: Dict[int, Row]
    warm: Row
    tree: Optional[Row]

    @property
    def rows(self) -> List[Row]:
        rows = [self.version, self.hit, self.ruled_out, self.cold_train, self.cold_sample, self.cold_j[1],
                self.cold_j[2], self.warm]
        return rows + ([self.tree] if self.tree is not None else [])


def versus_section(args: argparse.Namespace, corpus: Corpus, torchfix: Optional[Path], ruff: Optional[Path],
                   builds: Sequence[Tuple[str, List[str]]], common: List[str], work: Path) -> List[str]:
    """Issue 27's table: start-up next to a bare Python; cold runs next to TorchFix on
    training code and on a sample of torch's own source; on ``--sample`` torch files
    (default 400) cold with 1 and 2 jobs, warm, Ruff cold and a bare libcst parse; and a
    warm run over an unchanged ``--tree`` files (default 2,000).  ``builds``: each
    torchlint build's label and ``check`` command (the baseline first, when there is
    one); all of them and the other tools run in the same rounds, as one table, with the
    goals per build."""
    import startup  # bench/startup.py: the one-file sources

    folder = work / "versus"
    folder.mkdir()
    (folder / "train.py").write_text(startup.WITH_FINDING)
    (folder / "clean.py").write_text(startup.RULED_OUT)
    training = work / "training"
    train = training_files(args.training, training)
    train_lines = sum(len((training / f).read_bytes().splitlines()) for f in train)
    sample = spread(corpus.files, args.torch_sample)
    sample_lines = corpus.count(sample)
    many = spread(corpus.files, args.sample)
    size = (len(many), corpus.count(many))
    tree = spread(corpus.files, args.tree) if args.tree else []
    listing = work / "many.txt"
    listing.write_text("\n".join(many) + "\n", encoding="utf-8")
    fast = args.runs

    def rows_of(label: str, check: List[str]) -> BuildRows:
        tag = f"[{label}] " if len(builds) > 1 else ""
        cache = work / f"versus-cache-{label}"
        hit = check + ["train.py", "--cache-dir", str(cache)]
        subprocess.run(hit, cwd=folder, capture_output=True, check=False)  # fill the cache
        many_cache = work / f"many-cache-{label}"
        filled = check + many + common + ["--cache-dir", str(many_cache)]
        log(f"{tag}filling the cache of the {len(many)}-file sample")
        subprocess.run(filled, cwd=corpus.base, capture_output=True, check=False)
        cold_j = {jobs: job(f"{tag}torchlint cold -j {jobs}, {len(many)} files",
                            check + many + ["--no-cache", "-j", str(jobs)] + common, corpus.base, *size, fast,
                            shown=shorten(check + [f"<{len(many)} files>", "--no-cache", "-j", str(jobs)] + common))
                  for jobs in (1, 2)}
        warm = job(f"{tag}torchlint warm, {len(many)} files", filled, corpus.base, *size, fast, cache=many_cache,
                   shown=shorten(check + [f"<{len(many)} files>"] + common + ["--cache-dir", "<filled>"]))
        tree_row = None
        if tree:
            tree_cache = work / f"tree-cache-{label}"
            tree_command = check + tree + common + ["--cache-dir", str(tree_cache)]
            log(f"{tag}filling the cache of the {len(tree)}-file tree")
            subprocess.run(tree_command, cwd=corpus.base, capture_output=True, check=False)
            tree_row = job(f"{tag}torchlint warm, unchanged {len(tree)}-file tree", tree_command, corpus.base,
                           len(tree), corpus.count(tree), fast, cache=tree_cache,
                           shown=shorten(check + [f"<{len(tree)} files>"] + common + ["--cache-dir", "<filled>"]))
        return BuildRows(
            label,
            job(f"{tag}torchlint --version", check[:-1] + ["--version"], folder, 0, 0, fast * 3),
            job(f"{tag}torchlint check one file (cache hit)", hit, folder, 1, 4, fast * 3, ok_codes=(1,)),
            job(f"{tag}torchlint check one file (ruled out by the pre-check)", check + ["clean.py", "--no-cache"],
                folder, 1, 5, fast * 3),
            job(f"{tag}torchlint cold, training code ({len(train)} files)", check + train + ["--no-cache"] + common,
                training, len(train), train_lines, fast),
            job(f"{tag}torchlint cold, torch sample ({len(sample)} files)", check + sample + ["--no-cache"] + common,
                corpus.base, len(sample), sample_lines, fast),
            cold_j, warm, tree_row)

    built = [rows_of(label, check) for label, check in builds]
    python = job("python -c pass", [sys.executable, "-c", "pass"], folder, 0, 0, fast * 3)
    tf_train = tf_sample = ruff_row = None
    if torchfix is not None:
        tf_train = job(f"TorchFix, training code ({len(train)} files)", [str(torchfix), "--select", "ALL"] + train,
                       training, len(train), train_lines, args.slow_runs, ok_codes=(0, 1))
        tf_sample = job(f"TorchFix, torch sample ({len(sample)} files)", [str(torchfix), "--select", "ALL"] + sample,
                        corpus.base, len(sample), sample_lines, args.slow_runs, ok_codes=(0, 1))
    if ruff is not None:
        ruff_row = job(f"ruff --select ALL --no-cache, {len(many)} files",
                       [str(ruff), "check", "--isolated", "--no-respect-gitignore", "--select", "ALL", "--no-cache",
                        "--exit-zero", "--output-format", "concise"] + many, corpus.base, *size, fast,
                       shown=f"{ruff} check --isolated --no-respect-gitignore --select ALL --no-cache --exit-zero "
                             f"--output-format concise <{len(many)} files>")
    floor = job(f"libcst parse, 1 process, {len(many)} files", [sys.executable, "-c", FLOOR_SCRIPT, str(listing)],
                corpus.base, *size, fast, shown=f"{sys.executable} -c <libcst.parse_module(bytes) of each file>")
    others = [row for row in (python, tf_train, tf_sample, ruff_row, floor) if row is not None]
    # Each build's row next to the same row of the other build (not all of one build,
    # then all of the other, minutes apart on a machine whose load drifts).
    everything = others + [row for rows in zip(*(build.rows for build in built)) for row in rows]
    log("issue 27's table: everything side by side, in rounds")
    run_rounds(everything)

    base = python.wall
    cells = []

    def cell(row: Row, note: str = "", ms: bool = False) -> List[str]:
        wall = f"{row.wall * 1000:,.0f} ms" if ms else f"{row.wall:.2f} s"
        return [row.name, f"{row.files:,}", f"{row.lines:,}", wall, spread_of(row, ms=ms), f"{row.cpu:.2f}", note]

    cells.append(cell(python, ms=True))
    for build in built:
        for row in (build.version, build.hit, build.ruled_out):
            cells.append(cell(row, f"{row.wall / base:.1f}x python -c pass", ms=True))
    for theirs, pick in ((tf_train, "cold_train"), (tf_sample, "cold_sample")):
        for build in built:
            ours: Row = getattr(build, pick)
            note = "" if theirs is None else (f"TorchFix {theirs.wall / ours.wall:.1f}x slower "
                                              f"(CPU {theirs.cpu / ours.cpu:.1f}x)")
            cells.append(cell(ours, note))
        if theirs is not None:
            cells.append(cell(theirs))
    for build in built:
        cells.append(cell(build.cold_j[1]))
        cells.append(cell(build.cold_j[2], f"{build.cold_j[1].wall / build.cold_j[2].wall:.2f}x faster than -j 1"))
        cells.append(cell(build.warm, f"{build.warm.wall / build.cold_j[2].wall:.3f} of cold -j 2"))
        if build.tree is not None:
            per_file = 1000 * (build.tree.wall - build.hit.wall) / build.tree.files
            cells.append(cell(build.tree, f"{per_file:.2f} ms a file over the one-file cache hit"))
    for row in (ruff_row, floor):
        if row is not None:
            cells.append(cell(row))
    lines = [f"Issue 27: side by side in rounds (training code: {args.training}, without *.fixed.py; "
             f"torch sample: {len(sample)} files; {len(many)} torch files spread over the corpus; "
             f"wall = median of the runs, (min-max) beside it)"]
    lines += ["  " + line for line in table(["", "files", "lines", "wall", "(min-max)", "CPU s", "ratio"], cells)]

    def goals_of(build: BuildRows) -> List[Tuple[str, str, str, bool]]:
        """(measure, goal, measured, met) of one build."""
        found: List[Tuple[str, str, str, bool]] = []
        for label, ours, theirs, goal in (("cold, training code, vs TorchFix", build.cold_train, tf_train, 12.0),
                                          ("cold, torch sample, vs TorchFix", build.cold_sample, tf_sample, 20.0)):
            if theirs is not None:
                ratio = theirs.wall / ours.wall
                found.append((label, f">= {goal:g}x", f"{ratio:.1f}x (CPU {theirs.cpu / ours.cpu:.1f}x)",
                              ratio >= goal))
        cold = build.cold_j[2]
        ratio = cold.wall / floor.wall
        found.append((f"cold (-j 2) / bare libcst parse, {len(many)} files", "<= 1.2",
                      f"{ratio:.2f} (-j 1: {build.cold_j[1].wall / floor.wall:.2f}; CPU {cold.cpu / floor.cpu:.2f})",
                      ratio <= 1.2))
        ratio = build.warm.wall / cold.wall
        found.append((f"warm / cold, {len(many)} files", "<= 0.02",
                      f"{ratio:.3f} (CPU {build.warm.cpu / cold.cpu:.3f})", ratio <= 0.02))
        if ruff_row is not None:
            ratio = build.warm.wall / ruff_row.wall
            found.append(("warm / Ruff --select ALL --no-cache, same files", "<= 0.3",
                          f"{ratio:.2f} ({build.warm.wall:.2f} s vs {ruff_row.wall:.2f} s)", ratio <= 0.3))
        ratio = build.hit.wall / base
        found.append(("check one.py, warm / python -c pass", "<= 5", f"{ratio:.1f}", ratio <= 5))
        ratio = build.cold_j[1].wall / build.cold_j[2].wall
        found.append((f"-j 2 vs -j 1, {len(many)} files", ">= 1.7x", f"{ratio:.2f}x", ratio >= 1.7))
        if build.tree is not None:
            per_file = 1000 * (build.tree.wall - build.hit.wall) / build.tree.files
            found.append((f"warm, unchanged {build.tree.files:,}-file tree, a file beyond start-up", "<= 1 ms",
                          f"{per_file:.2f} ms", per_file <= 1))
        return found

    per_build = [goals_of(build) for build in built]
    goals = [[measure, goal] + [f"{got[i][2]} {'met' if got[i][3] else 'NOT met'}" for got in per_build]
             for i, (measure, goal, _, _) in enumerate(per_build[0])]
    lines += ["", "  Goals (issue 27)"]
    lines += ["  " + line for line in table(["", "goal"] + [build.label for build in built], goals)]
    for row in everything:
        if row.note:
            lines.append(f"  ! {row.name}: {row.note}")
    return lines


def spread_of(row: Row, ms: bool = False) -> str:
    """The runs' min-max, in the unit the table shows the median in (ms or s)."""
    walls = [r.wall for r in row.runs]
    if not walls:
        return ""
    if ms:
        return f"({min(walls) * 1000:.0f}-{max(walls) * 1000:.0f})"
    return f"({min(walls):.2f}-{max(walls):.2f})"


def verdict(ok: bool, *values: float) -> str:
    if any(math.isnan(v) for v in values):
        return "n/a"
    return "PASS" if ok else "MISS"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help=f"lint only {', '.join(QUICK_TARGETS)} of the torch wheel")
    parser.add_argument("--runs", type=int, default=3, help="runs of each fast measurement (median shown)")
    parser.add_argument("--slow-runs", type=int, default=1,
                        help="runs of TorchFix, and on the full corpus of the libcst floor, the linearity "
                             "subsets and the -j memory runs")
    parser.add_argument("--jobs", default="1,2", help="job counts for the memory section (comma-separated)")
    parser.add_argument("--torchfix-every", type=int, default=None,
                        help="TorchFix lints every Nth file (default 20; 5 with --quick)")
    parser.add_argument("--skip-torchfix", action="store_true")
    parser.add_argument("--skip-ruff", action="store_true")
    parser.add_argument("--live", action="store_true",
                        help="run torchlint from the working tree, not from a copy taken at the start")
    parser.add_argument("--json", type=Path, help="also write the raw measurements here")
    parser.add_argument("--training", type=Path, default=ROOT / "fixtures",
                        help="a folder of training code to compare with TorchFix on (default: the project's fixtures)")
    parser.add_argument("--torch-sample", type=int, default=120,
                        help="files of torch's source, spread over the corpus, to compare with TorchFix on")
    parser.add_argument("--tools-venv", type=Path, default=VENV,
                        help=f"the venv with TorchFix and Ruff (made when missing; default: {VENV})")
    parser.add_argument("--versus", "--versus-only", dest="versus_only", action="store_true",
                        help="only issue 27's table: start-up, TorchFix, Ruff, cold/warm/floor on --sample files, "
                             "the --tree warm run (about 15 minutes on 2 cores)")
    parser.add_argument("--sample", type=int, default=400,
                        help="torch files, spread over the corpus, for the cold/warm/floor/Ruff/-j rows (default 400)")
    parser.add_argument("--tree", type=int, default=2000,
                        help="files of the unchanged tree the warm run reads (default 2,000; 0: no such row)")
    parser.add_argument("--source", type=Path, default=ROOT,
                        help="benchmark the torchlint/ and rules/ of this checkout (default: this one), e.g. an "
                             "earlier commit's `git archive`, for a before/after table")
    parser.add_argument("--baseline", type=Path,
                        help="with --versus: also benchmark the torchlint/ and rules/ of this checkout (e.g. "
                             "`git archive main` unpacked), row by row in the same rounds, as the baseline")
    args = parser.parse_args()
    globals()["VENV"] = args.tools_venv  # ensure_tools() and machine() read the module's VENV
    jobs = [int(j) for j in args.jobs.split(",") if j.strip()]
    period = args.torchfix_every or (5 if args.quick else 20)
    started = time.time()

    corpus = build_corpus(args.quick)
    total_lines = sum(corpus.lines.values())
    n_files = len(corpus.files)
    log(f"corpus: {n_files} files, {total_lines:,} lines in {corpus.base} ({' '.join(corpus.targets)})")
    torchfix, ruff = (None, None)
    if not (args.skip_torchfix and args.skip_ruff):
        torchfix, ruff = ensure_tools()
    torchlint = torchlint_command()
    info = machine(torchlint) if VENV.exists() else machine(torchlint)[:-1]
    work = Path(tempfile.mkdtemp(prefix="torchlint-speed-"))
    atexit.register(shutil.rmtree, work, True)
    if not args.live:
        source = snapshot(work / "src", args.source)
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")]))
        info[3] += (f"; benchmarked: a copy of torchlint/ and rules/ of {args.source} taken at the start "
                    f"({source})")

    # Same options everywhere: no configuration files (--isolated) and no .gitignore
    # (bench/_corpus is git-ignored in this repository).
    common = ["--select", "ALL", "--output-format", "concise", "--exit-zero", "--isolated",
              "--no-respect-gitignore"]
    check = torchlint + ["check"]
    cold_command = check + corpus.targets + ["--no-cache"] + common

    shown = check + ["--show-files", "--isolated", "--no-respect-gitignore"] + corpus.targets
    listed = subprocess.run(shown, cwd=corpus.base, capture_output=True, text=True, check=False).stdout.split()
    problems = []
    if len(listed) != n_files:
        problems.append(f"torchlint --show-files lists {len(listed)} files, the corpus has {n_files}")

    # Warm up: byte-compile torchlint and load the tools from disk once.
    measure(check + corpus.files[:2] + ["--no-cache"] + common, corpus.base)
    builds = [("this build", check)]
    if args.baseline is not None:
        base_check = launcher(snapshot(work / "baseline", args.baseline), work / "baseline-bin") + ["check"]
        measure(base_check + corpus.files[:2] + ["--no-cache"] + common, corpus.base)
        builds.insert(0, ("baseline", base_check))
        info[3] += f"; baseline: a copy of torchlint/ and rules/ of {args.baseline}"
    versus = versus_section(args, corpus, None if args.skip_torchfix else torchfix,
                            None if args.skip_ruff else ruff, builds, common, work)
    if args.versus_only:
        print("\n".join(["", *info, f"  load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
                         f"  1-minute load average before each run: {load_spread()}", "", *versus]))
        return 0

    slow = args.runs if args.quick else args.slow_runs  # what takes minutes on the full corpus
    everything = (n_files, total_lines)

    # The cache the warm rows read: filled by one cold run that writes it.
    cache = work / "cache"
    cached = check + corpus.targets + common
    log("filling the cache")
    fill = job("torchlint cold + cache write", cached + ["--cache-dir", str(cache)], corpus.base, *everything, 1,
               shown=shorten(cached + ["--cache-dir", "<a new folder>"]))
    run_once(fill)
    # A copy of the corpus and of that cache (same relative paths, so every file hits),
    # where 1% of the files change before each run.
    scratch = work / "copy"
    for target in corpus.targets:
        shutil.copytree(corpus.base / target, scratch / target, dirs_exist_ok=True)
    shutil.copytree(cache, work / "cache-copy")
    change = changed_files(corpus.files)

    cold = job("torchlint cold", cold_command, corpus.base, *everything, args.runs)
    warm = job("torchlint warm", cached + ["--cache-dir", str(cache)], corpus.base, *everything, args.runs,
               shown=shorten(cached + ["--cache-dir", "<the cache filled by the run above>"]), cache=cache)
    changed = job(f"torchlint, {len(change)} files changed", cached + ["--cache-dir", str(work / "cache-copy")],
                  scratch, *everything, args.runs, change=change,
                  shown=shorten(cached + ["--cache-dir", "<a copy of that cache>"])
                  + f"   (in a copy of the corpus, after appending a comment line to {len(change)} files)")
    rows = [cold, fill, warm, changed]
    if not args.skip_ruff and ruff:
        rows.append(job("ruff, every rule", [str(ruff), "check", "--isolated", "--no-respect-gitignore", "--select",
                                             "ALL", "--no-cache", "--exit-zero", "--output-format", "concise"]
                        + corpus.targets, corpus.base, *everything, args.runs))
    listing = work / "all.txt"
    listing.write_text("\n".join(corpus.files) + "\n", encoding="utf-8")
    floor = job("libcst parse, 1 process", [sys.executable, "-c", FLOOR_SCRIPT, str(listing)], corpus.base,
                *everything, slow, shown=f"{sys.executable} -c <libcst.parse_module(bytes) of every file> all.txt")
    rows.append(floor)

    sample = every(corpus.files, period)
    sample_lines = corpus.count(sample)
    sample_rows: List[Row] = []
    tf_row = tl_sample = None
    if not args.skip_torchfix and torchfix:
        tl_sample = job("torchlint cold, sample", check + sample + ["--no-cache"] + common, corpus.base,
                        len(sample), sample_lines, args.runs,
                        shown=shorten(check + ["<sample>", "--no-cache"] + common))
        tf_row = job("TorchFix, sample", [str(torchfix), "--select", "ALL"] + sample, corpus.base,
                     len(sample), sample_lines, args.slow_runs, ok_codes=(0, 1),
                     shown=f"{torchfix} --select ALL <sample>")
        sample_rows = [tl_sample, tf_row]
    log("main rows" + (f" (TorchFix on every {period}th file: {len(sample)} files)" if tf_row else ""))
    run_rounds([r for r in rows if r is not fill] + sample_rows)
    shutil.rmtree(scratch, ignore_errors=True)

    log("linearity")
    linear: List[Tuple[int, Row]] = []
    for percent, step in ((10, 10), (50, 2), (100, 1)):
        subset = every(corpus.files, step)
        linear.append((percent, job(f"{percent}%", check + subset + ["--no-cache"] + common, corpus.base,
                                    len(subset), corpus.count(subset), slow,
                                    shown=shorten(check + [f"<every {step}th file>", "--no-cache"] + common))))
    run_rounds([row for _, row in linear])

    log("memory")
    largest = max(corpus.files, key=lambda f: (corpus.base / f).stat().st_size)
    single = work / "largest.txt"
    single.write_text(largest + "\n", encoding="utf-8")
    parse_largest = job("libcst parse of the largest file", [sys.executable, "-c", FLOOR_SCRIPT, str(single)],
                        corpus.base, 1, corpus.lines[largest], args.runs,
                        shown=f"{sys.executable} -c <libcst.parse_module(bytes) of the file> {largest}")
    memory_rows = [(count, job(f"torchlint cold -j {count}", cold_command + ["-j", str(count)], corpus.base,
                               *everything, slow)) for count in jobs]
    run_rounds([parse_largest] + [row for _, row in memory_rows])

    # ----------------------------------------------------------------- report
    out: List[str] = []
    say = out.append
    say("")
    say("=" * 100)
    say(f"torchlint speed benchmark{' (--quick)' if args.quick else ''}  "
        f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(started))}, took {(time.time() - started) / 60:.1f} min")
    say("=" * 100)
    for line in info:
        say("  " + line)
    say(f"  load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}  "
        "(a shared machine is noisy: compare the ratios, measured side by side)")
    say(f"  corpus: {n_files:,} files, {total_lines:,} lines: the .py files of {TORCH_WHEEL} "
        f"({', '.join(corpus.targets) if args.quick else 'torch/, torchgen/, functorch/'}) in {corpus.base}")
    for problem in problems:
        say(f"  ! {problem}")
    say("  wall = median of the runs; CPU = user + system of the whole tree; tree RSS/PSS = peak of the sum")
    say("  over the process tree (sampled every 50 ms); max proc = peak RSS of the largest single process.")
    say("")
    out.extend(versus)
    say("")
    say("Main: the whole corpus")
    out.extend("  " + line for line in main_table(rows, cold))
    if tf_row and tl_sample:
        say("")
        say("TorchFix: too slow for the whole corpus (issue 5 measured more than 15 minutes), it ran on a sample: "
            f"every {period}th file of the sorted corpus, {len(sample)} files, {sample_lines:,} lines "
            f"({100 * sample_lines / total_lines:.1f}% of the lines). Throughput is measured on the sample;")
        estimate = tf_row.wall * total_lines / sample_lines
        say(f"  scaled by lines it would take about {estimate:,.0f} s ({estimate / 60:.1f} min) for the whole "
            f"corpus = {estimate / cold.wall:.0f}x torchlint cold. torchlint ran on the same sample for comparison.")
        out.extend("  " + line for line in main_table(sample_rows, cold))
    say("")
    say("Linearity: torchlint cold on nested subsets (every 10th, every 2nd, every file)")
    cells = []
    for percent, row in linear:
        cells.append([f"{percent}%", f"{row.files:,}", f"{row.lines:,}", f"{row.wall:.2f}",
                      f"{1000 * row.wall / row.files:.1f}", f"{1000 * row.wall / (row.lines / 1000):.1f}",
                      f"{row.lines_per_s:,.0f}"])
    out.extend("  " + line for line in table(
        ["subset", "files", "lines", "wall s", "ms/file", "ms/1k lines", "lines/s"], cells))
    (_, r10), (_, r50), (_, r100) = linear
    slope_low = (r50.wall - r10.wall) / (r50.lines - r10.lines) * 1e6
    slope_high = (r100.wall - r50.wall) / (r100.lines - r50.lines) * 1e6
    xs, ys = [r.lines / 1e6 for _, r in linear], [r.wall for _, r in linear]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    fixed = my - slope * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    r2 = 1 - sum((y - fixed - slope * x) ** 2 for x, y in zip(xs, ys)) / ss_tot if ss_tot else math.nan
    say(f"  marginal cost: {slope_low:.1f} s per million lines from 10% to 50%, {slope_high:.1f} from 50% to "
        f"100% (ratio {slope_high / slope_low:.2f}); least-squares line: {fixed:.2f} s + {slope:.1f} s per "
        f"million lines, R^2 = {r2:.4f}")
    say("  (a few huge files, linted one at a time in the main process, fall into some subsets and not others,")
    say("  so the per-line cost of a subset moves with its share of them)")
    say("")
    say("Memory: peak of a whole torchlint cold run vs a bare libcst parse of the largest file")
    say(f"  largest file: {largest} ({(corpus.base / largest).stat().st_size / 1024:,.0f} KiB, "
        f"{corpus.lines[largest]:,} lines); its bare parse (python -c 'libcst.parse_module(...)', one process): "
        f"peak RSS {mib(parse_largest.proc_rss_kb)} MiB, PSS {mib(parse_largest.tree_pss_kb)} MiB, "
        f"{parse_largest.wall:.2f} s")
    cells = []
    for count, row in memory_rows:
        cells.append([f"-j {count}", f"{row.wall:.2f}", f"{row.processes:.0f}",
                      mib(row.tree_rss_kb), mib(row.tree_pss_kb), mib(row.proc_rss_kb),
                      f"{row.tree_rss_kb / parse_largest.proc_rss_kb:.2f}",
                      f"{row.tree_pss_kb / parse_largest.tree_pss_kb:.2f}",
                      f"{row.proc_rss_kb / parse_largest.proc_rss_kb:.2f}"])
    out.extend("  " + line for line in table(
        ["jobs", "wall s", "procs", "tree RSS MiB", "tree PSS MiB", "max proc MiB", "RSS / parse",
         "PSS / parse", "max proc / parse"], cells))
    say("")
    say("Targets (issue 5)")
    targets = []
    if tf_row and tl_sample:
        ratio = tl_sample.lines_per_s / tf_row.lines_per_s
        targets.append(["cold >= 20x TorchFix throughput (same files, same cores; CPU)",
                        f"{ratio:.1f}x; {tf_row.cpu / tl_sample.cpu:.1f}x", verdict(ratio >= 20, ratio)])
    ratio = cold.wall / floor.wall
    single_job = next((r for j, r in memory_rows if j == 1), None)
    alone = f"; -j 1 {single_job.wall / floor.wall:.2f}x" if single_job else ""
    targets.append([f"cold <= 1.5x bare libcst parse in one process (wall{'; -j 1 wall' if alone else ''}; CPU)",
                    f"{ratio:.2f}x{alone}; {cold.cpu / floor.cpu:.2f}x", verdict(ratio <= 1.5, ratio)])
    ratio = cold.wall / warm.wall
    targets.append(["warm >= 20x faster than cold", f"{ratio:.1f}x", verdict(ratio >= 20, ratio)])
    ruff_row = next((r for r in rows if r.name.startswith("ruff")), None)
    if ruff_row:
        targets.append(["warm faster than Ruff cold with every rule",
                        f"{warm.wall:.2f} s vs {ruff_row.wall:.2f} s",
                        verdict(warm.wall < ruff_row.wall, warm.wall, ruff_row.wall)])
    for count, row in memory_rows:
        ratio = row.tree_rss_kb / parse_largest.proc_rss_kb
        pss = row.tree_pss_kb / parse_largest.tree_pss_kb
        targets.append([f"peak memory -j {count} <= 1.3x parse of the largest file (RSS sum; PSS sum)",
                        f"{ratio:.2f}x; {pss:.2f}x", verdict(ratio <= 1.3, ratio)])
    per_line = [r.wall / r.lines for _, r in linear]
    growth = per_line[-1] / min(per_line[:-1])
    targets.append(["linear time (time per line, whole corpus <= 1.2x the cheapest subset's)",
                    f"{growth:.2f}", verdict(growth <= 1.2, growth)])
    out.extend("  " + line for line in table(["target", "measured", ""], targets))
    say("")
    say(f"Commands (run in {corpus.base}; <sample> = every {period}th file of the sorted list)")
    for row in rows + sample_rows + [linear[0][1], parse_largest] + [r for _, r in memory_rows]:
        say(f"  {row.name}: {row.command}")
        if row.note:
            say(f"    ! {row.note}")
    print("\n".join(out))

    if args.json:
        payload = {
            "machine": info, "corpus": {"files": n_files, "lines": total_lines, "targets": corpus.targets},
            "rows": [dict(asdict(r), wall_median=r.wall) for r in rows + sample_rows],
            "linearity": [dict(asdict(r), percent=p) for p, r in linear],
            "largest": dict(asdict(parse_largest), path=largest),
            "memory": [dict(asdict(r), jobs=j) for j, r in memory_rows],
        }
        args.json.write_text(json.dumps(payload, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
