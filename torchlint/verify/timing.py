"""Timing: measurement in the child, statistics in the parent.

This module imports only the standard library at the top, so the harness can
load it by path; ``measure`` imports torch when it runs.

Method.  Every variant (the original, the original again, the fixed version)
is loaded in one process and warmed up.  ``torch.utils.benchmark``'s
``blocked_autorange`` gives each a median and interquartile range.  Then the
variants are timed in interleaved rounds with the same block size, the
original's two copies swapping places each round, so slow drift hits all of
them alike.  The per-round ratios fixed/original and original/original give a
median with a bootstrap confidence interval; the second one is the noise
floor a real difference has to clear.
"""

from __future__ import annotations

import math
import random
import statistics
import timeit
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

# A difference smaller than this is not worth calling a speedup.
PRACTICAL = 0.03
# A measurement whose IQR is this large a share of its median is too noisy.
NOISY = 0.25
# Warm-up calls stop after this long (one call always happens).
WARMUP_SECONDS = 1.0


@dataclass(frozen=True)
class Budget:
    """How long to spend measuring one case."""

    min_run_time: float  # per variant, for blocked_autorange
    block_seconds: float  # the target duration of one timed block in a round
    rounds: int  # interleaved rounds (at least 3 are always run)
    budget: float  # seconds for the rounds, after which they stop early
    warmup: int  # untimed calls of each variant first (at most; see WARMUP_SECONDS)

    @classmethod
    def quick(cls) -> "Budget":
        return cls(min_run_time=0.05, block_seconds=0.005, rounds=8, budget=2.0, warmup=1)

    @classmethod
    def full(cls) -> "Budget":
        return cls(min_run_time=0.5, block_seconds=0.05, rounds=30, budget=20.0, warmup=3)

    def as_dict(self) -> Dict[str, Any]:
        return {
            "min_run_time": self.min_run_time,
            "block_seconds": self.block_seconds,
            "rounds": self.rounds,
            "budget": self.budget,
            "warmup": self.warmup,
        }


# -- measurement (child side) -------------------------------------------------------


def measure(
    steps: Sequence[Tuple[str, Callable[[], object]]],
    *,
    cuda: bool,
    threads: int,
    min_run_time: float,
    block_seconds: float,
    rounds: int,
    budget: float,
    warmup: int,
) -> Dict[str, Any]:
    """Time ``steps`` = [original, original again, fixed]; raw numbers out."""
    import torch
    from torch.utils import benchmark

    def clock() -> float:
        # Timer reads the clock at block boundaries; syncing there counts
        # every kernel a block launched.
        if cuda:
            torch.cuda.synchronize()
        return timeit.default_timer()

    for _, step in steps:
        # At least one call; more (up to `warmup`) while they are cheap.
        begin = clock()
        for _ in range(max(warmup, 1)):
            step()
            if clock() - begin > WARMUP_SECONDS:
                break
    clock()
    summaries: List[Dict[str, Any]] = []
    for label, step in steps:
        timer = benchmark.Timer(
            stmt="step()",
            globals={"step": step},
            label="torchlint verify",
            description=label,
            num_threads=threads,
            timer=clock,
        )
        measurement = timer.blocked_autorange(min_run_time=min_run_time)
        summaries.append(
            {
                "label": label,
                "median": measurement.median,
                "iqr": measurement.iqr,
                "runs": len(measurement.times),
                "number_per_run": measurement.number_per_run,
            }
        )
    number = max(1, math.ceil(block_seconds / max(summaries[0]["median"], 1e-9)))
    original, again, fixed = (step for _, step in steps)
    times: List[List[float]] = []  # per round: [original, original again, fixed]
    started = clock()
    while len(times) < rounds and (len(times) < 3 or clock() - started < budget):
        order = [(0, original), (2, fixed), (1, again)]
        if len(times) % 2:
            order = [(1, again), (2, fixed), (0, original)]
        row = [0.0, 0.0, 0.0]
        for slot, step in order:
            begin = clock()
            for _ in range(number):
                step()
            row[slot] = (clock() - begin) / number
        times.append(row)
    return {"summaries": summaries, "number": number, "rounds": times, "threads": threads}


# -- statistics (parent side) ---------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """A median with its 95% bootstrap confidence interval."""

    value: float
    low: float
    high: float

    def excludes(self, point: float) -> bool:
        return not self.low <= point <= self.high


@dataclass(frozen=True)
class TimingSummary:
    """What the timing of one case found."""

    original_median: float  # seconds per call, blocked_autorange
    original_iqr: float
    fixed_median: float
    fixed_iqr: float
    original_rounds: float  # seconds per call, median over the interleaved rounds
    fixed_rounds: float
    original_runs: int  # blocked_autorange's measurements behind each median and IQR
    fixed_runs: int
    ratio: Interval  # fixed time / original time, paired rounds
    noise: Interval  # original time / original time, paired rounds
    threshold: float  # the smallest |ratio - 1| taken as real
    rounds: int
    number: int  # calls per timed block
    threads: int
    verdict: str  # "faster", "slower" or "no measurable difference"
    reason: str
    whole_script: bool  # timed by re-running the whole script

    @property
    def speedup(self) -> float:
        """Original time / fixed time (above 1: the fix is faster)."""
        return 1.0 / self.ratio.value

    @property
    def speedup_interval(self) -> Tuple[float, float]:
        return 1.0 / self.ratio.high, 1.0 / self.ratio.low


def bootstrap_median(values: Sequence[float], *, resamples: int = 2000, seed: int = 0) -> Interval:
    """The median and a 95% percentile-bootstrap interval for it."""
    rng = random.Random(seed)
    medians = sorted(
        statistics.median(rng.choices(values, k=len(values))) for _ in range(resamples)
    )
    low = medians[int(0.025 * (resamples - 1))]
    high = medians[int(math.ceil(0.975 * (resamples - 1)))]
    return Interval(statistics.median(values), low, high)


def analyse(raw: Dict[str, Any], *, whole_script: bool = False, seed: int = 0) -> TimingSummary:
    """Decide whether the fixed version is faster, slower or no different.

    A difference counts only when the paired interval excludes 1, the ratio
    is at least max(3%, twice the original-vs-original spread) away from 1,
    the separate ``blocked_autorange`` medians point the same way, and no
    measurement is noisy (IQR at least a quarter of the median).
    """
    original, _, fixed = raw["summaries"]
    rounds: List[List[float]] = raw["rounds"]
    ratio = bootstrap_median([row[2] / row[0] for row in rounds], seed=seed)
    noise = bootstrap_median([row[1] / row[0] for row in rounds], seed=seed + 1)
    spread = max(abs(noise.value - 1.0), (noise.high - noise.low) / 2)
    threshold = max(PRACTICAL, 2 * spread)
    direct = fixed["median"] / original["median"]
    noisy = [
        summary["label"]
        for summary in raw["summaries"]
        if summary["median"] > 0 and summary["iqr"] / summary["median"] >= NOISY
    ]
    if noisy:
        verdict = "no measurable difference"
        reason = f"too noisy: the IQR is over {NOISY:.0%} of the median for {', '.join(noisy)}"
    elif not ratio.excludes(1.0):
        verdict = "no measurable difference"
        reason = f"the 95% interval of the paired ratio [{ratio.low:.3f}, {ratio.high:.3f}] contains 1"
    elif abs(ratio.value - 1.0) < threshold:
        verdict = "no measurable difference"
        reason = (
            f"the paired ratio {ratio.value:.3f} is within {threshold:.1%} of 1 "
            f"(the larger of {PRACTICAL:.0%} and twice the original-vs-original spread)"
        )
    elif (direct - 1.0) * (ratio.value - 1.0) <= 0:
        verdict = "no measurable difference"
        reason = "the paired rounds and the separate medians disagree on the direction"
    else:
        verdict = "faster" if ratio.value < 1.0 else "slower"
        reason = (
            f"paired ratio {ratio.value:.3f} [{ratio.low:.3f}, {ratio.high:.3f}], "
            f"original-vs-original {noise.value:.3f} [{noise.low:.3f}, {noise.high:.3f}]"
        )
    return TimingSummary(
        original_median=original["median"],
        original_iqr=original["iqr"],
        fixed_median=fixed["median"],
        fixed_iqr=fixed["iqr"],
        original_rounds=statistics.median(row[0] for row in rounds),
        fixed_rounds=statistics.median(row[2] for row in rounds),
        original_runs=int(original["runs"]),
        fixed_runs=int(fixed["runs"]),
        ratio=ratio,
        noise=noise,
        threshold=threshold,
        rounds=len(rounds),
        number=int(raw["number"]),
        threads=int(raw["threads"]),
        verdict=verdict,
        reason=reason,
        whole_script=whole_script,
    )


def format_seconds(seconds: Optional[float]) -> str:
    """``1.23 ms``-style text."""
    if seconds is None or math.isnan(seconds):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"
