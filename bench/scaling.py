"""Do suppression comments and fixes cost linear time?

    .venv/bin/python bench/scaling.py            # 5k vs 50k suppressions, 1k vs 10k fixes
    .venv/bin/python bench/scaling.py --quick    # a fifth of those sizes
    .venv/bin/python bench/scaling.py --runs 5

Each case is timed at n and at 10n, in rounds (n, 10n, n, 10n, ...) so that a
change in the machine's load hits both sizes alike; the best time of each size
is kept.  Times are CPU time of this process (time.process_time), which other
processes on a shared machine disturb less than wall time.  A ratio near 10
means linear, near 100 quadratic.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Tuple

from torchlint.lint.engine import lint_source
from torchlint.lint.fixer import fix_text
from torchlint.lint.settings import Settings

CONFIG = Settings(select=("TL101",), root=Path.cwd()).lint_config(Path("bench.py"))


def own_line_suppressions(n: int) -> str:
    """``n`` own-line ignore comments in a row above one finding."""
    return "import torch\n" + "# torchlint: ignore[TL101]\n" * n + "x = torch.zeros(3).cuda()\n"


def suppressed_findings(n: int) -> str:
    """``n`` findings, each under its own own-line ignore comment."""
    return "import torch\n" + "".join(
        f"# torchlint: ignore[TL101]\nx{i} = torch.zeros(3).cuda()\n" for i in range(n)
    )


def many_fixes(n: int) -> str:
    """``n`` safe fixes in one file."""
    return "import torch\n" + "".join(f"x{i} = torch.zeros({i}).cuda()\n" for i in range(n))


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[int], str]
    run: Callable[[str], object]
    n: int


def _lint(source: str) -> object:
    return lint_source(source, "bench.py", CONFIG)


def _fix(source: str) -> object:
    result = fix_text(source, "bench.py", CONFIG)
    assert result.converged and not result.remaining, "every finding must be fixed"
    return result


CASES = (
    Case("own-line suppressions in a row (lint)", own_line_suppressions, _lint, 5000),
    Case("suppressed findings (lint)", suppressed_findings, _lint, 1000),
    Case("fixes in one file (fix)", many_fixes, _fix, 1000),
)


def _time(case: Case, source: str) -> float:
    start = time.process_time()
    case.run(source)
    return time.process_time() - start


def measure(case: Case, n: int, runs: int) -> Tuple[float, float]:
    """Best times at n and 10n, measured in alternating rounds."""
    small, large = case.make(n), case.make(10 * n)
    small_times: List[float] = []
    large_times: List[float] = []
    for _ in range(runs):
        small_times.append(_time(case, small))
        large_times.append(_time(case, large))
    return min(small_times), min(large_times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a fifth of the default sizes")
    parser.add_argument("--runs", type=int, default=2, help="rounds per case (best time kept; default 2)")
    args = parser.parse_args()
    print(f"{'case':<40} {'n':>7} {'t(n)':>9} {'t(10n)':>9} {'ratio':>6}")
    for case in CASES:
        n = max(case.n // 5, 1) if args.quick else case.n
        small, large = measure(case, n, args.runs)
        print(f"{case.name:<40} {n:>7} {small:>8.2f}s {large:>8.2f}s {large / small:>6.1f}", flush=True)
    print("ratio = t(10n) / t(n): about 10 is linear, about 100 quadratic.")


if __name__ == "__main__":
    main()
