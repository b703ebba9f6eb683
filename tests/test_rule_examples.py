"""Every rule's VALID and INVALID examples (its ``valid``/``invalid`` attributes), as tests.

A rule author adds examples to the rule's class; nothing here changes.
"""

from __future__ import annotations

import tempfile
import textwrap
from pathlib import Path
from typing import List, Tuple, Union

import pytest

from torchlint.engine import LintConfig
from torchlint.registry import all_rules
from torchlint.rule import CURRENT_TORCH, Example, FixAvailability, RuleClass, TorchVersion
from torchlint.runner import FileOutcome, fix_file, lint_file
from torchlint.settings import Settings


def example_text(source: str) -> str:
    """Examples are written as indented triple-quoted strings."""
    return textwrap.dedent(source).lstrip("\n")


def example_config(rule: RuleClass, example: Example = Example("")) -> LintConfig:
    """Only ``rule``, with the example's options and target torch version."""
    torch = TorchVersion.parse(example.torch) if example.torch else CURRENT_TORCH
    return LintConfig(rules=(rule,), torch_version=torch, options={rule.code: dict(example.options)})


def run_example(rule: RuleClass, example: Example) -> Tuple[FileOutcome, FileOutcome]:
    """Lint and fix (unsafe, not written) the example as a file named
    ``rule.example_name``, with its other files beside it, through the same
    runner as ``torchlint check`` (so every kind of file a rule reads works)."""
    config = example_config(rule, example)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for name, text in {**example.files, rule.example_name: example.source}.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(example_text(text), encoding="utf-8", newline="")
        settings = Settings(select=(rule.code,), torch_version=str(config.torch_version),
                            rule_options={rule.code: dict(example.options)}, root=root)
        path = root / rule.example_name
        return lint_file(path, settings), fix_file(path, settings, unsafe=True, write=False)


def check_valid(rule: RuleClass, source: Union[str, Example]) -> None:
    example = source if isinstance(source, Example) else Example(source, findings=0)
    found, _ = run_example(rule, example)
    assert [d.message for d in found.diagnostics] == [], f"{rule.code} reports a VALID example"


def check_invalid(rule: RuleClass, example: Example) -> None:
    found, fixed = run_example(rule, example)
    codes = [d.code for d in found.diagnostics]
    assert codes == [rule.code] * example.findings, f"{rule.code}: {[d.message for d in found.diagnostics]}"
    assert fixed.fixed is not None
    expected = example_text(example.source if example.fixed is None else example.fixed)
    assert fixed.fixed.source == expected


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
