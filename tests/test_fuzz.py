"""Fuzzing (fast profile): generated programs and mutated training code.
The long profile is bench/fuzz.py."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzing import check_in_child, check_once, hostile, mutate, seeds
from hostile_files import KINDS, run_case



# Deep, long and dense code of every kind, small (fast to lint) and far past
# the limits (refused before parsing): each in a child process, so that a
# crash or a hang is a failure, not the end of the test run.
@pytest.mark.parametrize("seed, largest", [(seed, 150) for seed in range(12)] + [(seed, 30_000) for seed in range(12, 18)])
def test_hostile_inputs(seed: int, largest: int) -> None:
    source = hostile(random.Random(seed), largest)
    assert check_in_child(source) is None, source[:300]


# Hostile projects (FIFOs and device links where files are read, links in the cache, deep
# package trees, import graphs fanning out, pathological job scripts), small; the long
# profile is bench/fuzz.py --hostile-files.
@pytest.mark.parametrize("kind, seed", [(kind, seed) for kind in sorted(KINDS) for seed in range(2)])
def test_hostile_projects(kind: str, seed: int) -> None:
    assert run_case(kind, seed, fast=True, timeout=90) is None


hypothesmith = pytest.importorskip("hypothesmith")

# Deferred: building hypothesmith's grammar strategy compiles a parser (about
# two seconds), which every test process would otherwise pay while collecting.

@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))  # long run: bench/fuzz.py
@given(st.deferred(lambda: hypothesmith.from_grammar()))
def test_generated_programs(source: str) -> None:
    assert check_once(source) is None


@pytest.mark.slow  # over 4 s on 2 busy cores; `pytest -m slow` (run by .ci/run) keeps it
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))  # long run: bench/fuzz.py
@given(st.deferred(lambda: hypothesmith.from_node()))
def test_generated_syntax_trees(source: str) -> None:
    assert check_once(source) is None


@pytest.mark.parametrize("seed", range(100))  # the long profile: bench/fuzz.py
def test_mutated_training_code(seed: int) -> None:
    rng = random.Random(seed)
    corpus = seeds()
    source = rng.choice(corpus)
    for _ in range(rng.randrange(1, 4)):
        source = mutate(source, rng)
    assert check_once(source) is None, source
