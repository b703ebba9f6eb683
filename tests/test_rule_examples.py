"""Every rule's VALID and INVALID examples (its ``valid``/``invalid`` attributes), as tests.

A rule author adds examples to the rule's class; nothing here changes.
"""

from __future__ import annotations

import tempfile
import textwrap
from pathlib import Path
from typing import List, Tuple, Union

import pytest

from torchlint.lint.engine import LintConfig, lint_source
from torchlint.lint.fixer import FixResult, fix_text
from torchlint.lint.jobscripts import fix_job_script, is_job_script, lint_job_script
from torchlint.model import Diagnostic
from torchlint.ruleapi.registry import all_rules
from torchlint.ruleapi.rule import CURRENT_TORCH, Example, FixAvailability, RuleClass, TorchVersion
from torchlint.data.versions import FrameworkReleases, Release


def example_text(source: str) -> str:
    """Examples are written as indented triple-quoted strings."""
    return textwrap.dedent(source).lstrip("\n")


def example_config(rule: RuleClass, example: Example = Example("")) -> LintConfig:
    """Only ``rule``, with the example's options and target torch version."""
    torch = TorchVersion.parse(example.torch) if example.torch else CURRENT_TORCH
    frameworks = FrameworkReleases(tuple(sorted((name, Release.parse(text)) for name, text in example.frameworks.items())))
    return LintConfig(rules=(rule,), torch_version=torch, options={rule.code: dict(example.options)},
                      frameworks=frameworks)


def run_example(rule: RuleClass, example: Example) -> Tuple[List[Diagnostic], FixResult]:
    """Lint and fix (unsafe) the example as a file named ``rule.example_name``
    with its other files beside it; a batch script goes to the job-script
    linter, anything else to the Python engine, as in ``torchlint check``."""
    config = example_config(rule, example)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for name, text in example.files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(example_text(text), encoding="utf-8")
        path, source = root / rule.example_name, example_text(example.source)
        if is_job_script(path, source):
            return (lint_job_script(source, str(path), config, path),
                    fix_job_script(source, str(path), config, unsafe=True, file=path))
        return lint_source(source, str(path), config), fix_text(source, str(path), config, unsafe=True)


def check_valid(rule: RuleClass, source: Union[str, Example]) -> None:
    example = source if isinstance(source, Example) else Example(source, findings=0)
    found, _ = run_example(rule, example)
    assert [d.message for d in found] == [], f"{rule.code} reports a VALID example"


def check_invalid(rule: RuleClass, example: Example) -> None:
    found, fixed = run_example(rule, example)
    assert [d.code for d in found] == [rule.code] * example.findings, f"{rule.code}: {[d.message for d in found]}"
    expected = example_text(example.source if example.fixed is None else example.fixed)
    assert fixed.source == expected


def check_example_coverage(rule: RuleClass) -> None:
    assert rule.valid and rule.invalid, f"{rule.code} has no VALID or INVALID example"
    assert any(example.findings for example in rule.invalid), f"{rule.code}: no INVALID example is reported"
    with_fix = [example for example in rule.invalid if example.fixed is not None]
    if rule.fix_availability is FixAvailability.NONE:
        assert not with_fix, f"{rule.code} has no fix, so no example can have a fixed text"
    else:
        assert with_fix, f"{rule.code} has a fix but no example shows it"


VALID: List[Tuple[RuleClass, Union[str, Example]]] = [(rule, source) for rule in all_rules() for source in rule.valid]
INVALID: List[Tuple[RuleClass, Example]] = [(rule, example) for rule in all_rules() for example in rule.invalid]


def _id(case: Tuple[RuleClass, object]) -> str:
    return case[0].code


@pytest.mark.parametrize("case", VALID, ids=_id)
def test_valid_example_is_not_reported(case: Tuple[RuleClass, Union[str, Example]]) -> None:
    check_valid(*case)


@pytest.mark.parametrize("case", INVALID, ids=_id)
def test_invalid_example_is_reported_and_fixed(case: Tuple[RuleClass, Example]) -> None:
    check_invalid(*case)


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_every_rule_has_examples_that_match_its_fix_availability(rule: RuleClass) -> None:
    check_example_coverage(rule)
