"""The rule set can be replaced for a test (tests/rule_doubles.py), and is
whole again afterwards: metadata, selection, the cache's key and forked
workers follow the replacement."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

from conftest import run_in_process
from rule_doubles import DOUBLES, CallsBoom
from test_rule_examples import check_invalid, check_valid

from torchlint.ruleapi import catalog
from torchlint.ruleapi.registry import all_rules, info_by_code_or_name

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "import torch\n\nboom()\nzap()\nbang\nx = torch.zeros(3).cuda()\n"


def findings(output: str) -> List[str]:
    """The finding lines of concise output (the summary left out)."""
    return [line for line in output.splitlines() if line.startswith("a.py:")]


def test_the_doubles_keep_their_own_examples() -> None:
    for rule in DOUBLES:
        for source in rule.valid:
            check_valid(rule, source)
        for example in rule.invalid:
            check_invalid(rule, example)


def test_inside_only_the_doubles_run_and_after_it_the_real_rules_are_back(tmp_path: Path) -> None:
    real = all_rules()
    (tmp_path / "a.py").write_text(SOURCE, encoding="utf-8")
    with catalog.rules_replaced(DOUBLES):
        assert [rule.code for rule in all_rules()] == ["TL991", "TL992", "TL993"]
        assert info_by_code_or_name("TL101") is None and info_by_code_or_name("test-boom") is not None
        result = run_in_process(["check", ".", "--output-format", "concise", "--extend-select", "TL993",
                                 "-j", "2"], tmp_path)
        assert findings(result.stdout) == [
            "a.py:3:1: TL991 [*] test message: `boom()` is called",
            "a.py:4:1: TL992 test message: `zap()` is called",
            "a.py:5:1: TL993 test message: `bang` is used",
        ], result.stderr
    assert all_rules() == real and info_by_code_or_name("TL991") is None
    after = run_in_process(["check", ".", "--output-format", "concise"], tmp_path)
    assert [line.split()[1] for line in findings(after.stdout)] == ["TL101"], after.stdout


def test_the_lint_workers_run_the_doubles_too(tmp_path: Path) -> None:
    """Enough files for a pool: each worker lints on its deep stack, which
    runs in the context the worker was forked with."""
    for name in ("a", "b", "c", "d", "e"):
        (tmp_path / f"{name}.py").write_text(SOURCE, encoding="utf-8")
    with catalog.rules_replaced(DOUBLES):
        result = run_in_process(["check", ".", "--output-format", "concise", "--no-cache", "-j", "2"], tmp_path)
    codes = sorted({line.split()[1] for line in result.stdout.splitlines() if ".py:" in line})
    assert codes == ["TL991", "TL992"], result.stdout + result.stderr


def test_the_cache_keeps_the_results_of_each_rule_set_apart(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(SOURCE, encoding="utf-8")
    args = ["check", ".", "--output-format", "json", "--cache-dir", str(tmp_path / ".cache")]
    real_key = catalog.tool_fingerprint()
    with catalog.rules_replaced(DOUBLES):
        assert catalog.tool_fingerprint() != real_key
        first = json.loads(run_in_process(args, tmp_path).stdout)
    assert catalog.tool_fingerprint() == real_key
    second = json.loads(run_in_process(args, tmp_path).stdout)
    with catalog.rules_replaced(DOUBLES):
        third = json.loads(run_in_process(args, tmp_path).stdout)
    assert [d["code"] for d in first] == [d["code"] for d in third] == ["TL991", "TL992"]
    assert [d["code"] for d in second] == ["TL101"]


def test_two_rules_with_one_code_are_refused() -> None:
    twin = type("Twin", (CallsBoom,), {"name": "twin"})
    with pytest.raises(ValueError, match="share a code"):
        with catalog.rules_replaced((CallsBoom, twin)):
            pass


def test_the_fixture_replaces_the_rules_for_one_test(rule_doubles: Tuple[type, ...]) -> None:
    assert all_rules() == rule_doubles


def test_a_child_process_runs_with_the_doubles(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(SOURCE, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "rule_doubles.py"), "-m", "torchlint", "check", "a.py",
         "--no-cache", "--output-format", "concise"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert [line.split()[1] for line in findings(result.stdout)] == ["TL991", "TL992"]
