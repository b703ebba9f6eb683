"""Every rule's VALID and INVALID examples (its ``valid``/``invalid`` attributes), as tests.

A rule author adds examples to the rule's class; nothing here changes.
"""

from __future__ import annotations

import textwrap
from typing import List, Tuple

import pytest

import torchlint
from torchlint.registry import all_rules
from torchlint.rule import Example, FixAvailability, RuleClass
from torchlint.settings import Settings


def _text(source: str) -> str:
    return textwrap.dedent(source).lstrip("\n")


def _settings(rule: RuleClass, example: Example) -> Settings:
    options = {rule.code: dict(example.options)} if example.options else {}
    return Settings(select=(rule.code,), torch_version=example.torch or None, rule_options=options)


VALID: List[Tuple[RuleClass, str]] = [(rule, source) for rule in all_rules() for source in rule.valid]
INVALID: List[Tuple[RuleClass, Example]] = [(rule, example) for rule in all_rules() for example in rule.invalid]


def _id(case: Tuple[RuleClass, object]) -> str:
    return case[0].code


@pytest.mark.parametrize("case", VALID, ids=_id)
def test_valid_example_is_not_reported(case: Tuple[RuleClass, str]) -> None:
    rule, source = case
    found = torchlint.check_source(_text(source), "example.py", Settings(select=(rule.code,)))
    assert [d.message for d in found] == []


@pytest.mark.parametrize("case", INVALID, ids=_id)
def test_invalid_example_is_reported_and_fixed(case: Tuple[RuleClass, Example]) -> None:
    rule, example = case
    source, settings = _text(example.source), _settings(rule, example)
    found = torchlint.check_source(source, "example.py", settings)
    assert [d.code for d in found] == [rule.code] * example.findings
    result = torchlint.fix_source(source, "example.py", settings, unsafe=True)
    if example.fixed is None:
        assert result.source == source
    else:
        assert result.source == _text(example.fixed)


def test_every_rule_has_examples_that_match_its_fix_availability() -> None:
    for rule in all_rules():
        assert rule.valid and rule.invalid, f"{rule.code} has no VALID or INVALID example"
        reported = [example for example in rule.invalid if example.findings]
        assert reported, f"{rule.code}: no INVALID example is reported"
        with_fix = [example for example in rule.invalid if example.fixed is not None]
        if rule.fix_availability is FixAvailability.NONE:
            assert not with_fix, f"{rule.code} has no fix, so no example can have a fixed text"
        else:
            assert with_fix, f"{rule.code} has a fix but no example shows it"
