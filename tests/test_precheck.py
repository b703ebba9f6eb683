"""The pre-check that skips parsing files which cannot match loses nothing:
findings with and without it are identical over a large real corpus."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import List

import pytest

from torchlint.engine import LintConfig, lint_source, might_match
from torchlint.registry import all_rules

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def package_dir(name: str) -> List[Path]:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(location) for location in spec.submodule_search_locations]


def corpus() -> List[Path]:
    roots = [FIXTURES, *package_dir("libcst"), *package_dir("_pytest")]
    for torch_root in package_dir("torch"):  # installed in CI's main environment
        roots += [torch_root / sub for sub in ("nn", "optim", "utils/data", "ao/nn", "distributed/fsdp")]
    files = sorted({p for root in roots if root.exists() for p in root.rglob("*.py")})
    return files


def test_precheck_changes_no_finding_over_a_large_corpus() -> None:
    files = corpus()
    if len(files) < 300:
        pytest.skip("corpus too small")
    rules = all_rules()
    skipped = findings = 0
    for path in files:
        source = path.read_text(encoding="utf-8", errors="replace")
        fast = lint_source(source, str(path), LintConfig(rules=rules, precheck=True))
        full = lint_source(source, str(path), LintConfig(rules=rules, precheck=False))
        assert fast == full, path
        findings += len(full)
        skipped += not might_match(source, rules)
    assert findings > 0, "the corpus must contain findings for the comparison to mean anything"
    assert skipped > 0, "the pre-check must skip some files"
