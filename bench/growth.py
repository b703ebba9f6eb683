"""Does a run's cost grow linearly with what it is given? (issue 27, item 3)

    .venv/bin/python bench/growth.py            # n and 4n for each dimension, 3 rounds
    .venv/bin/python bench/growth.py --quick    # small sizes, for CI (well under a minute)

Four dimensions, each measured at a size n and at 4n while the others stay
fixed: the number of files of a project, the size of one file, the size of
the import graph (modules importing each other, which the project index
reads) and the number of rules selected.  Each size is run in alternating
rounds (n, 4n, n, 4n, ...) and the best CPU time of this process
(``time.process_time``) kept, which a loaded machine disturbs less than wall
time.  The growth exponent is log(t(4n) / t(n)) / log(4): 1 is linear, 2
quadratic.  A warm run (every file unchanged, found in the cache) is also
compared with the cold run that filled the cache.

Exit status 1 when an exponent is above ``--max-exponent`` (default 1.3) or
the warm/cold ratio above ``--max-warm`` (default 0.02, issue 27's goal); 0
otherwise.  Everything runs in this process, in a temporary folder.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Sequence, Tuple

from torchlint.lint.cache import Cache
from torchlint.lint.runner import cached_run, lint_file
from torchlint.lint.settings import Settings
from torchlint.ruleapi.catalog import rule_infos

MODULE = '''"""Module {i}: a model, a loader and a training step, as training code has them."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

{imports}


class Net{i}(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3, bias=True)
        self.norm = nn.BatchNorm2d(width)
        self.head = nn.Linear(width, 10)

    def forward(self, x):
        return self.head(self.norm(self.conv(x)).mean((2, 3)))


def helper_{i}(model, batch):
    return model(batch).sum()


def train_{i}(dataset, epochs):
    model = Net{i}(16).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(dataset, batch_size=32)
    for epoch in range(epochs):
        for images, labels in loader:
            images = images.cuda()
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(images), labels.cuda())
            loss.backward()
            optimizer.step()
            print(loss.item(), {calls})
    model.eval()
    scale = torch.zeros(3).cuda()
    return model, scale
'''

STEP = '''

def step_{k}(model, optimizer, images, labels):
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
    loss.backward()
    optimizer.step()
    return loss.item()
'''


def module(i: int, graph: int = 1, fan: int = 1) -> str:
    """Module ``i`` of a project of ``graph`` modules; it imports and calls
    the helpers of the ``fan`` modules before it (wrapping around, so the
    imports make cycles, as real packages' do)."""
    previous = sorted({(i - k) % graph for k in range(1, fan + 1)}) if graph > 1 else [0]
    imports = "\n".join(f"from mod{p} import helper_{p}" for p in previous)
    calls = ", ".join(f"helper_{p}(model, images)" for p in previous)
    return MODULE.format(i=i, imports=imports, calls=calls)


def write_project(folder: Path, files: int, fan: int = 1) -> List[Path]:
    """``files`` modules mod0.py ... in ``folder``, each importing ``fan`` others."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(files):
        path = folder / f"mod{i}.py"
        path.write_text(module(i, files, fan), encoding="utf-8")
        paths.append(path)
    return paths


def cold(files: Sequence[Path], settings: Settings) -> None:
    """A run without cache over ``files`` (index build and lint), in this process."""
    cached_run(files, lambda _: settings, lint_file, cache=None)


@dataclass(frozen=True)
class Dimension:
    name: str
    n: int
    quick: int
    prepare: Callable[[Path, int], Callable[[], None]]
    """Writes what a size needs under a folder; returns the run to time."""


def _files(folder: Path, n: int) -> Callable[[], None]:
    paths = write_project(folder, n)
    settings = Settings(select=("ALL",), root=folder)
    return lambda: cold(paths, settings)


def _file_size(folder: Path, n: int) -> Callable[[], None]:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "big.py"
    path.write_text(module(0) + "".join(STEP.format(k=k) for k in range(n)), encoding="utf-8")
    settings = Settings(select=("ALL",), root=folder)
    return lambda: cold([path], settings)


def _import_graph(folder: Path, n: int) -> Callable[[], None]:
    """Ten modules linted as one project, importing one another through ``n``
    import statements in all (the index links their functions' summaries)."""
    paths = write_project(folder, 10, fan=max(n // 10, 1))
    settings = Settings(select=("ALL",), root=folder)
    return lambda: cold(paths, settings)


def _rules(folder: Path, n: int) -> Callable[[], None]:
    """The same files under the first ``n`` rules (by code) of the catalogue."""
    paths = write_project(folder, 8)
    codes = tuple(info.code for info in rule_infos())[:n]
    settings = Settings(select=codes, root=folder)
    return lambda: cold(paths, settings)


DIMENSIONS = (
    Dimension("files in the project", 40, 8, _files),
    Dimension("functions in one file", 200, 30, _file_size),
    Dimension("imports between 10 modules", 40, 10, _import_graph),
    Dimension("rules selected", 0, 0, _rules),  # n: a quarter of the catalogue
)


def best(run: Callable[[], None]) -> float:
    start = time.process_time()
    run()
    return time.process_time() - start


def growth(dimension: Dimension, n: int, rounds: int, work: Path) -> Tuple[float, float]:
    """Best CPU seconds at n and at 4n, in alternating rounds."""
    here = Path.cwd()
    small_run = dimension.prepare(work / f"{dimension.name}-n", n)
    large_run = dimension.prepare(work / f"{dimension.name}-4n", 4 * n)
    small: List[float] = []
    large: List[float] = []
    try:
        for _ in range(rounds):
            os.chdir(work / f"{dimension.name}-n")
            small.append(best(small_run))
            os.chdir(work / f"{dimension.name}-4n")
            large.append(best(large_run))
    finally:
        os.chdir(here)
    return min(small), min(large)


def warm_ratio(files: int, rounds: int, work: Path) -> Tuple[float, float]:
    """Best CPU seconds of a cold run that fills a cache and of a warm run over it."""
    folder = work / "warm"
    paths = write_project(folder, files)
    settings = Settings(select=("ALL",), root=folder)
    here = Path.cwd()
    os.chdir(folder)
    colds: List[float] = []
    warms: List[float] = []
    try:
        for round_ in range(rounds):
            cache = Cache(work / f"cache-{round_}")
            colds.append(best(lambda: cached_run(paths, lambda _: settings, lint_file, cache=cache)))
            # Stamps of files written less than two seconds ago are not trusted (a
            # racy write); a real warm run comes later than that.
            past = time.time() - 10
            for path in paths:
                os.utime(path, (past, past))
            cached_run(paths, lambda _: settings, lint_file, cache=cache)  # records the new stamps
            warms.append(best(lambda: cached_run(paths, lambda _: settings, lint_file, cache=cache)))
    finally:
        os.chdir(here)
    return min(colds), min(warms)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes (CI)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per size (best time kept; default 3)")
    parser.add_argument("--max-exponent", type=float, default=1.3,
                        help="fail above this growth exponent (1: linear; default 1.3)")
    parser.add_argument("--max-warm", type=float, default=0.02, help="fail above this warm/cold ratio")
    args = parser.parse_args()
    quarter = max(len(rule_infos()) // 4, 1)
    failures = []
    with tempfile.TemporaryDirectory(prefix="torchlint-growth-") as folder:
        work = Path(folder)
        cold([write_project(work / "warm-up", 2)[0]], Settings(select=("ALL",), root=work))  # imports
        print(f"{'dimension':<28} {'n':>5} {'CPU t(n)':>9} {'CPU t(4n)':>10} {'exponent':>9}")
        for dimension in DIMENSIONS:
            n = quarter if dimension.name == "rules selected" else (dimension.quick if args.quick else dimension.n)
            small, large = growth(dimension, n, args.rounds, work)
            exponent = math.log(large / small, 4) if small > 0 and large > 0 else math.nan
            verdict = "" if exponent <= args.max_exponent else "  SUPER-LINEAR"
            if verdict:
                failures.append(f"{dimension.name}: exponent {exponent:.2f}")
            print(f"{dimension.name:<28} {n:>5} {small:>8.2f}s {large:>9.2f}s {exponent:>9.2f}{verdict}", flush=True)
        files = 16 if args.quick else 80
        cold_s, warm_s = warm_ratio(files, args.rounds, work)
        ratio = warm_s / cold_s
        verdict = "" if ratio <= args.max_warm else "  ABOVE THE GOAL"
        if verdict:
            failures.append(f"warm/cold {ratio:.3f}")
        print(f"{'warm / cold, ' + str(files) + ' files':<28} {'':>5} {cold_s:>8.2f}s {warm_s:>9.3f}s "
              f"{ratio:>9.3f}{verdict}")
    print("exponent = log(t(4n) / t(n)) / log 4: 1 is linear, 2 quadratic (CPU time of this process, best of "
          f"{args.rounds} rounds); warm / cold: the same files, every one found in the cache, in this process")
    if failures:
        print("FAILED: " + "; ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
