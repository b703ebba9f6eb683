"""Long fuzzing profile: python bench/fuzz.py [--programs N] [--seconds S] [--hostile N] [--hostile-files N]

Runs hypothesmith-generated programs and mutated fixture files through lint
and fix --unsafe-fixes, then --hostile deep/long/dense files of every kind
(each in a child process: a crash or a hang counts as a failure), then
--hostile-files hostile projects (tests/hostile_files.py: FIFOs and device
links where configuration, ignore and requirements files, baselines,
imported modules and cache entries are read, links planted in the cache,
deep package trees, import graphs fanning out at every level, pathological
job scripts; each run in a child with a time limit, a file outside the
project watched), and prints how many ran and how many failed."""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fuzzing import check_in_child, check_once, hostile, mutate, seeds  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--programs", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hostile", type=int, default=200, help="deep/long/dense files to try")
    parser.add_argument("--largest", type=int, default=30_000, help="largest depth or length they use")
    parser.add_argument("--hostile-files", type=int, default=60, help="hostile projects to try (all kinds in turn)")
    parser.add_argument("--hostile-timeout", type=float, default=120.0, help="seconds each hostile project may take")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    corpus = seeds()
    generated = []
    try:
        import hypothesmith
        from hypothesis import HealthCheck, given, settings

        @settings(max_examples=max(args.programs // 5, 1), deadline=None,
                  suppress_health_check=list(HealthCheck), database=None)
        @given(hypothesmith.from_grammar())
        def collect(source: str) -> None:
            generated.append(source)

        collect()
    except ImportError:
        print("hypothesmith is not installed; mutations only")
    ran = failed = 0
    started = time.monotonic()
    for source in generated:
        ran += 1
        problem = check_once(source)
        if problem:
            failed += 1
            print(f"FAILED (generated): {problem}\n{source!r}")
    while ran < args.programs and time.monotonic() - started < args.seconds:
        source = rng.choice(corpus)
        for _ in range(rng.randrange(1, 6)):
            source = mutate(source, rng)
        ran += 1
        problem = check_once(source)
        if problem:
            failed += 1
            print(f"FAILED (mutated): {problem}\n{source!r}")
    print(f"{ran} programs ran ({len(generated)} generated, {ran - len(generated)} mutated), {failed} failed")
    hostile_failed = 0
    for number in range(args.hostile):
        source = hostile(rng, args.largest)
        problem = check_in_child(source)
        if problem:
            hostile_failed += 1
            print(f"FAILED (hostile #{number}): {problem}\n{source[:500]!r}")
    print(f"{args.hostile} hostile files ran (deep, long, dense; up to {args.largest:,}), {hostile_failed} failed")
    from hostile_files import KINDS, run_case

    kinds = sorted(KINDS)
    projects_failed = 0
    for number in range(args.hostile_files):
        problem = run_case(kinds[number % len(kinds)], args.seed * 1_000_003 + number, timeout=args.hostile_timeout)
        if problem:
            projects_failed += 1
            print(f"FAILED (hostile project #{number}): {problem}")
    print(f"{args.hostile_files} hostile projects ran ({', '.join(kinds)}), {projects_failed} failed")
    return 1 if failed or hostile_failed or projects_failed else 0


if __name__ == "__main__":
    sys.exit(main())
