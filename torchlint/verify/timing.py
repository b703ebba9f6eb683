"""Timing: measurement in the child, statistics in the parent.

This module imports only the standard library, so the harness can load it by
path.

Method.  Each timing process loads exactly one program (the original, the
original again, or the fixed version), so a process holds one copy of the
model: on a GPU, three copies in one process would triple its memory.  A
*round* is three processes, one per label, in a slot order drawn per round
from a seeded generator; over the rounds the six slot arrangements are used
in turn, so the original-vs-original (A/A) comparison is measured in every
arrangement and absorbs position effects.  Each process warms up, then times
blocks of ``number`` calls (the first process of a case picks ``number`` from
``block_seconds``; later ones reuse it).

The statistic shown everywhere is the median over a label's processes of each
process's median block time.  The speedup is original / fixed of exactly
those two numbers, so the table's columns cannot contradict each other.  Its
95% interval comes from a two-level bootstrap (processes, then blocks inside
each), so it includes between-process variance.  The same is done for the
original against itself; that interval's spread sets the threshold a real
difference has to clear, and the decision uses the interval's near end.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

# A difference smaller than this is not worth calling a speedup.
PRACTICAL = 0.03
# A measurement whose IQR (or between-process spread) is this large a share of its median is too noisy.
NOISY = 0.25
# A process with fewer timed blocks than this has no meaningful IQR of its own.
MIN_IQR_BLOCKS = 5
# Blocks every process times, whatever the budget.
MIN_BLOCKS = 3
# Warm-up calls stop after this long (one call always happens).
WARMUP_SECONDS = 1.0
RESAMPLES = 1000

ORIGINAL = "original"
AGAIN = "original again"
FIXED = "fixed"
LABELS: Tuple[str, str, str] = (ORIGINAL, AGAIN, FIXED)

FASTER = "faster"
SLOWER = "slower"
NO_DIFFERENCE = "no measurable difference"
TOO_NOISY = "too noisy to decide"  # the interval is not to be trusted: an IQR or between-process spread too wide


@dataclass(frozen=True)
class Budget:
    """How long to spend measuring one case."""

    rounds: int  # rounds of three processes (original, original again, fixed)
    blocks: int  # timed blocks per process, at most
    block_seconds: float  # the target duration of one timed block
    budget: float  # seconds of timed blocks per process, after which it stops (after MIN_BLOCKS)
    warmup: int  # untimed calls first (at most; see WARMUP_SECONDS)

    @classmethod
    def quick(cls) -> "Budget":
        return cls(rounds=2, blocks=8, block_seconds=0.005, budget=0.5, warmup=1)

    @classmethod
    def full(cls) -> "Budget":
        return cls(rounds=6, blocks=30, block_seconds=0.05, budget=3.0, warmup=3)

    def child(self) -> Dict[str, Any]:
        """What a timing process needs."""
        return {"blocks": self.blocks, "block_seconds": self.block_seconds, "budget": self.budget,
                "warmup": self.warmup}


def slot_orders(rounds: int, seed: int) -> List[Tuple[str, ...]]:
    """The label order of each round: the six arrangements in a seeded order, repeated."""
    arrangements = list(itertools.permutations(LABELS))
    random.Random(seed).shuffle(arrangements)
    return [arrangements[index % len(arrangements)] for index in range(max(rounds, 1))]


# -- measurement (child side) -------------------------------------------------------


def measure(
    step: Callable[[], object],
    *,
    clock: Callable[[], float],
    number: Optional[int],
    blocks: int,
    block_seconds: float,
    budget: float,
    warmup: int,
) -> Dict[str, Any]:
    """Warm ``step`` up, then time blocks of ``number`` calls; per-call seconds out.

    ``clock`` must synchronise the device when one is in use, so that a
    block's kernels are counted in it.
    """
    begin = clock()
    calls = 0
    while True:
        step()
        calls += 1
        if calls >= max(warmup, 1) or clock() - begin > WARMUP_SECONDS:
            break
    if number is None:
        begin = clock()
        step()
        single = clock() - begin
        number = max(1, math.ceil(block_seconds / max(single, 1e-9)))
    times: List[float] = []
    started = clock()
    while len(times) < max(blocks, MIN_BLOCKS) and (len(times) < MIN_BLOCKS or clock() - started < budget):
        begin = clock()
        for _ in range(number):
            step()
        times.append((clock() - begin) / number)
    return {"number": number, "blocks": times, "warmup_calls": calls}


# -- statistics (parent side) ---------------------------------------------------------


@dataclass(frozen=True)
class ProcessTiming:
    """One timing process: its label, where it ran, and its block times."""

    label: str
    round: int
    slot: int  # position in the round, 0-based
    number: int  # calls per block
    blocks: Tuple[float, ...]  # seconds per call, one per block
    gpu_usage: Optional[Mapping[str, Any]] = None  # NVML utilisation and memory over the blocks
    device_memory: Tuple[Mapping[str, Any], ...] = ()  # per CUDA device: peak allocated and reserved

    @property
    def median(self) -> float:
        return statistics.median(self.blocks)

    @property
    def iqr(self) -> float:
        return _quantile(self.blocks, 0.75) - _quantile(self.blocks, 0.25)

    def as_dict(self) -> Dict[str, Any]:
        return {"label": self.label, "round": self.round, "slot": self.slot, "calls_per_block": self.number,
                "block_seconds_per_call": list(self.blocks), "gpu_usage": self.gpu_usage,
                "device_memory": [dict(device) for device in self.device_memory]}


@dataclass(frozen=True)
class Interval:
    """A point estimate with its 95% bootstrap confidence interval."""

    value: float
    low: float
    high: float

    def excludes(self, point: float) -> bool:
        return not self.low <= point <= self.high


@dataclass(frozen=True)
class TimingSummary:
    """What the timing of one case found."""

    original_median: float  # seconds per call: median over the original's processes of their medians
    fixed_median: float
    again_median: float  # the same for the second copy of the original (A/A)
    original_iqr: float  # median over the label's processes of their IQRs
    fixed_iqr: float
    ratio: Interval  # fixed_median / original_median
    noise: Interval  # again_median / original_median (A/A)
    threshold: float  # the smallest |ratio - 1| taken as real
    between_process: Mapping[str, float]  # label -> (max - min) / median of its process medians
    position_effect: Tuple[float, ...]  # per slot: median time relative to the label's median
    processes: Tuple[ProcessTiming, ...]
    slot_seed: int
    number: int  # calls per timed block
    threads: int
    verdict: str  # FASTER, SLOWER, NO_DIFFERENCE or TOO_NOISY
    reason: str
    whole_script: bool  # timed by re-running the whole script

    @property
    def rounds(self) -> int:
        return len({process.round for process in self.processes})

    @property
    def speedup(self) -> float:
        """Original time / fixed time, of the medians the table shows (above 1: faster)."""
        return self.original_median / self.fixed_median if self.fixed_median > 0 else math.inf

    @property
    def speedup_interval(self) -> Tuple[float, float]:
        return _inverse(self.ratio.high), _inverse(self.ratio.low)

    def per_process_counts(self) -> Dict[str, int]:
        return {label: sum(1 for p in self.processes if p.label == label) for label in LABELS}


def _inverse(value: float) -> float:
    return 1.0 / value if value > 0 else math.inf


def _quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile (what torch.quantile and NumPy use by default)."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def bootstrap_median(values: Sequence[float], *, resamples: int = 2000, seed: int = 0) -> Interval:
    """The median and a 95% percentile-bootstrap interval for it."""
    rng = random.Random(seed)
    medians = sorted(
        statistics.median(rng.choices(values, k=len(values))) for _ in range(resamples)
    )
    return _interval(statistics.median(values), medians)


def _interval(point: float, draws: Sequence[float]) -> Interval:
    """Percentile interval of sorted ``draws``, widened to contain ``point``."""
    low = draws[int(0.025 * (len(draws) - 1))]
    high = draws[int(math.ceil(0.975 * (len(draws) - 1)))]
    return Interval(point, min(low, point), max(high, point))


def _label_median(processes: Sequence[ProcessTiming]) -> float:
    return statistics.median(process.median for process in processes)


def _resampled_median(processes: Sequence[ProcessTiming], rng: random.Random) -> float:
    """One bootstrap draw: processes with replacement, blocks with replacement inside each."""
    medians = []
    for process in rng.choices(processes, k=len(processes)):
        medians.append(statistics.median(rng.choices(process.blocks, k=len(process.blocks))))
    return statistics.median(medians)


def _spread(processes: Sequence[ProcessTiming]) -> float:
    medians = [process.median for process in processes]
    middle = statistics.median(medians)
    return (max(medians) - min(medians)) / middle if middle > 0 else 0.0


def _position_effect(processes: Sequence[ProcessTiming], by_label: Mapping[str, float]) -> Tuple[float, ...]:
    slots = sorted({process.slot for process in processes})
    effect = []
    for slot in slots:
        relative = [p.median / by_label[p.label] for p in processes if p.slot == slot and by_label[p.label] > 0]
        effect.append(statistics.median(relative) if relative else 1.0)
    return tuple(effect)


def _noise_level(groups: Mapping[str, Sequence[ProcessTiming]]) -> float:
    """The largest relative spread seen: any process's IQR / median (with enough blocks),
    any label's between-process spread (the original pooled with its second copy)."""
    shares = [p.iqr / p.median for group in groups.values() for p in group
              if len(p.blocks) >= MIN_IQR_BLOCKS and p.median > 0]
    pooled = list(groups[ORIGINAL]) + list(groups[AGAIN])
    for pool in (pooled, list(groups[FIXED])):
        if len(pool) >= 2:
            shares.append(_spread(pool))
    return max(shares, default=0.0)


def _noisy(groups: Mapping[str, Sequence[ProcessTiming]]) -> List[str]:
    """Why the measurement is too noisy to decide, if it is.

    A process with enough blocks is judged by its own IQR; one with too few
    (a slow step) has no meaningful IQR, so its label's between-process
    spread is judged instead (the original pooled with its second copy).
    """
    reasons = []
    pooled_original = list(groups[ORIGINAL]) + list(groups[AGAIN])
    for label, processes in groups.items():
        few = [p for p in processes if len(p.blocks) < MIN_IQR_BLOCKS]
        if few:
            pool = processes if label == FIXED else pooled_original
            if len(pool) < 2:
                reasons.append(f"{label}: too few blocks and a single process, no spread to judge")
            elif _spread(pool) >= NOISY:
                reasons.append(f"{label}: the processes' medians spread over {_spread(pool):.0%} of their median")
        for process in processes:
            if len(process.blocks) >= MIN_IQR_BLOCKS and process.median > 0 and process.iqr / process.median >= NOISY:
                reasons.append(f"{label} (round {process.round + 1}): the IQR is over {NOISY:.0%} of the median")
                break
    return reasons


def analyse(
    processes: Sequence[ProcessTiming], *, threads: int, whole_script: bool = False, seed: int = 0,
) -> TimingSummary:
    """Decide whether the fixed version is faster, slower or no different.

    Faster means the interval's upper end of fixed/original lies below
    ``1 - threshold``; slower, its lower end above ``1 + threshold``;
    ``threshold`` is the larger of 3% and twice the original-vs-original
    spread.  A noisy measurement (an IQR or a between-process spread of 25% or
    more) decides only what lies far beyond its noise: slower when the
    interval lies above the original-vs-original interval and its lower end
    above ``1 + margin``, faster when it lies below that interval and its
    upper end below ``1 / (1 + margin)``, ``margin`` the larger of 3% and the
    largest relative spread measured (an IQR, a between-process spread);
    anything else is TOO_NOISY, so the
    report's Timing column never reads "no measurable difference" beside an
    interval far from 1.
    """
    groups = {label: [p for p in processes if p.label == label] for label in LABELS}
    missing = [label for label, group in groups.items() if not group]
    if missing:
        raise ValueError(f"no timing process for {', '.join(missing)}")
    medians = {label: _label_median(group) for label, group in groups.items()}
    original, again, fixed = medians[ORIGINAL], medians[AGAIN], medians[FIXED]
    rng = random.Random(seed)
    ratios, noises = [], []
    for _ in range(RESAMPLES):
        o = _resampled_median(groups[ORIGINAL], rng)
        ratios.append(_resampled_median(groups[FIXED], rng) / o if o > 0 else math.inf)
        noises.append(_resampled_median(groups[AGAIN], rng) / o if o > 0 else math.inf)
    ratio = _interval(fixed / original if original > 0 else math.inf, sorted(ratios))
    noise = _interval(again / original if original > 0 else math.inf, sorted(noises))
    spread = max(abs(noise.value - 1.0), (noise.high - noise.low) / 2)
    threshold = max(PRACTICAL, 2 * spread)
    noisy = _noisy(groups)
    described = (f"fixed/original {ratio.value:.3f} [{ratio.low:.3f}, {ratio.high:.3f}], "
                 f"original/original {noise.value:.3f} [{noise.low:.3f}, {noise.high:.3f}], "
                 f"threshold {threshold:.1%}")
    margin = max(PRACTICAL, _noise_level(groups))
    if noisy and ratio.low > max(noise.high, 1.0 + margin):
        verdict, reason = SLOWER, (f"{described}; noisy ({'; '.join(noisy)}), but the whole interval lies above "
                                   f"the original-vs-original one and beyond 1 + {margin:.0%}, the largest spread "
                                   "measured")
    elif noisy and ratio.high < min(noise.low, 1.0 / (1.0 + margin)):
        verdict, reason = FASTER, (f"{described}; noisy ({'; '.join(noisy)}), but the whole interval lies below "
                                   f"the original-vs-original one and beyond 1 / (1 + {margin:.0%}), the largest "
                                   "spread measured")
    elif noisy:
        verdict, reason = TOO_NOISY, f"{described}; too noisy: " + "; ".join(noisy)
    elif ratio.high < 1.0 - threshold:
        verdict, reason = FASTER, described
    elif ratio.low > 1.0 + threshold:
        verdict, reason = SLOWER, described
    else:
        verdict = NO_DIFFERENCE
        reason = (f"{described}: the interval does not lie beyond the threshold (the larger of "
                  f"{PRACTICAL:.0%} and twice the original-vs-original spread)")
    return TimingSummary(
        original_median=original,
        fixed_median=fixed,
        again_median=again,
        original_iqr=statistics.median(p.iqr for p in groups[ORIGINAL]),
        fixed_iqr=statistics.median(p.iqr for p in groups[FIXED]),
        ratio=ratio,
        noise=noise,
        threshold=threshold,
        between_process={label: _spread(group) for label, group in groups.items()},
        position_effect=_position_effect(processes, medians),
        processes=tuple(processes),
        slot_seed=seed,
        number=processes[0].number,
        threads=threads,
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
