"""Fuzzing (fast profile): generated programs and mutated training code.
The long profile is bench/fuzz.py."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings

from fuzzing import check_once, mutate, seeds

hypothesmith = pytest.importorskip("hypothesmith")


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_generated_programs(source: str) -> None:
    assert check_once(source) is None


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node())
def test_generated_syntax_trees(source: str) -> None:
    assert check_once(source) is None


@pytest.mark.parametrize("seed", range(150))
def test_mutated_training_code(seed: int) -> None:
    rng = random.Random(seed)
    corpus = seeds()
    source = rng.choice(corpus)
    for _ in range(rng.randrange(1, 4)):
        source = mutate(source, rng)
    assert check_once(source) is None, source
