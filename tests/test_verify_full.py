"""`torchlint verify` over every fixable rule: quick mode from the command line, and
the shipped programs in full mode (needs torch; minutes, so marked slow)."""

from __future__ import annotations

import json
import warnings

import pytest

with warnings.catch_warnings():  # torch warns at import when NumPy is missing
    warnings.simplefilter("ignore")
    pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from torchlint.interfaces.cli import main  # noqa: E402
from torchlint.ruleapi.registry import all_rules  # noqa: E402
from torchlint.ruleapi.verification import program_paths  # noqa: E402
from torchlint.verify.session import fixable  # noqa: E402

pytestmark = pytest.mark.slow

FIXABLE = [rule for rule in all_rules() if fixable(rule)]
INTENDED = {"TL306", "TL307", "TL502", "TL503", "TL505", "TL601"}  # their fixes change behaviour on purpose


def _verify(tmp_path, *options):
    out = tmp_path / "verify.json"
    codes = ",".join(rule.code for rule in FIXABLE)
    result = CliRunner().invoke(main, ["verify", "--rules", codes, "--no-timing", "--json", str(out), *options])
    return result, json.loads(out.read_text()) if out.is_file() else None


def _check(result, data):
    assert result.exit_code == 0, result.output
    with_programs = {rule.code for rule in FIXABLE if program_paths(rule)}
    cases = data["cases"]
    assert {case["rule"] for case in cases} == with_programs
    for case in cases:
        # Fixes that change behaviour on purpose say so (issue 24, item 3), and exit 0.
        expected = "intended change" if case["rule"] in INTENDED else "equivalent"
        assert case["status"] == expected, f"{case['rule']} {case['target']}:\n{case['findings']}"
        assert case["outputs"] and not [o for o in case["outputs"] if o["verdict"] == "fail"]
    for rule in FIXABLE:
        if not program_paths(rule):
            assert f"{rule.code} ({rule.name}) has a fix but no verification program (" in result.output


def test_every_fixable_rule_verifies_from_the_command_line_in_quick_mode(tmp_path):
    _check(*_verify(tmp_path, "--quick"))


def test_the_shipped_programs_pass_in_full_mode(tmp_path):
    _check(*_verify(tmp_path, "--timeout", "300"))
