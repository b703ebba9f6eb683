"""A rule is one unit: its module, its metadata as data, nothing of it in the core."""

from __future__ import annotations

import fnmatch
import re
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

import torchlint.ruleapi.verification as verification
from torchlint.lint.engine import LintConfig, lint_source
from torchlint.ruleapi.registry import all_rules, by_code_or_name
from torchlint.ruleapi.rule import Rule, TorchRange, TorchVersion
from torchlint.ruleapi.verification import Contract, Measured, VerificationSpec, read_measured, write_measured

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
RULE_CODE = re.compile(r"\bTL[1-9][0-9]{2}\b")


def test_the_core_names_no_rule_code() -> None:
    found = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sorted((REPO / "torchlint").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if RULE_CODE.search(line)
    ]
    assert found == []


def test_each_rule_lives_in_a_module_named_after_it() -> None:
    for rule in all_rules():
        module = rule.__module__.rsplit(".", 1)[-1]
        assert module == rule.name.replace("-", "_"), rule.code


def test_rule_module_imports_no_verify_and_no_torch() -> None:
    code = (
        "import sys, torchlint.ruleapi.rule, torchlint.ruleapi.registry\n"
        "torchlint.ruleapi.registry.all_rules()\n"
        "[rule.documentation() for rule in torchlint.ruleapi.registry.all_rules()]\n"
        "print(sorted(m for m in sys.modules if m.startswith('torchlint.verify') or m == 'torch'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


class _NewApiOnly(Rule):
    """Reports every call; applies from torch 2.1 to 2.3 only."""

    code = "TL998"
    name = "test-new-api-only"
    summary = "test rule"
    torch_range = TorchRange(min=TorchVersion(2, 1), max=TorchVersion(2, 3), note="a test")

    def visit_Call(self, node: cst.Call) -> None:
        self.report(node, "a call")


@pytest.mark.parametrize(
    ("target", "reported"),
    [(TorchVersion(2, 0), False), (TorchVersion(2, 1), True), (TorchVersion(2, 3), True), (TorchVersion(2, 4), False)],
)
def test_engine_runs_a_rule_only_inside_its_torch_range(target: TorchVersion, reported: bool) -> None:
    found = lint_source("f()\n", "x.py", LintConfig(rules=(_NewApiOnly,), torch_version=target))
    assert bool(found) is reported


def test_torch_range_text_is_derived_from_the_data() -> None:
    assert _NewApiOnly.torch_versions == "2.1 to 2.3 (a test)"
    assert str(TorchRange()) == "all versions"
    assert str(TorchRange(min=TorchVersion(1, 7))) == ">= 1.7"
    assert by_code_or_name("TL302").torch_range.min == TorchVersion(1, 7)


class _Verified(_NewApiOnly):
    """A rule with a fix; docs only."""

    code = "TL997"
    verification = VerificationSpec(Contract(level="identical", promise="Nothing changes.", checks=("values",)))


def test_explain_shows_a_recorded_row_only_when_there_is_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verification, "rule_directory", lambda rule: tmp_path)
    page = _Verified.documentation()
    assert "## Verification" in page and "Nothing changes." in page and "Measured (" not in page
    row = Measured("a test machine", ("equivalent", "2 ms", "1 ms", "2.00x [1.9, 2.1]", "faster", "-"), "x.py")
    write_measured(_Verified, row)
    assert read_measured(_Verified) == row
    page = _Verified.documentation()
    assert "Measured (a test machine):" in page and "| equivalent | 2 ms | 1 ms | 2.00x [1.9, 2.1] |" in page
    (tmp_path / verification.MEASURED_FILE).write_text("{not json")
    assert read_measured(_Verified) is None and "Measured (" not in _Verified.documentation()


def test_shipped_programs_comparisons_and_probes_are_installed_as_package_data() -> None:
    with open(REPO / "pyproject.toml", "rb") as handle:
        patterns = tomllib.load(handle)["tool"]["setuptools"]["package-data"]["torchlint.rules"]
    for rule in all_rules():
        spec = rule.verification
        if spec is None:
            continue
        directory = verification.rule_directory(rule)
        names = list(spec.programs) + [probe.file for probe in spec.probes]
        if spec.comparison.startswith("."):
            names.append(spec.comparison[1:].split(":")[0] + ".py")
        # Modules travel as parts of the rule's package (setup.py lists every
        # rules/<name>/ package; tests/test_packaging.py builds the wheel), the
        # measured results as package data.
        assert (directory / "__init__.py").is_file(), directory.name
        for name in names + [verification.MEASURED_FILE]:
            relative = f"{directory.name}/{name}"
            if not name.endswith(".py"):
                assert any(fnmatch.fnmatchcase(relative, pattern) for pattern in patterns), relative
            if name != verification.MEASURED_FILE:
                assert (directory / name).is_file(), relative
