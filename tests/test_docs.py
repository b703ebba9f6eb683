"""The README's rule table is generated from the rule units and must not be stale."""

from __future__ import annotations

import re
import types
from pathlib import Path

import pytest

from torchlint.interfaces import docs
from torchlint.ruleapi.registry import all_rules
from torchlint.ruleapi.rule import Rule

from test_rule_examples import check_example_coverage, check_invalid, check_valid

README = Path(__file__).resolve().parent.parent / "README.md"


def test_committed_readme_rule_table_is_current() -> None:
    assert docs.main(["--check", "--readme", str(README)]) == 0, "run `python -m torchlint.interfaces.docs --write`"


def test_table_has_one_row_per_rule_from_its_metadata() -> None:
    table = docs.rules_table(all_rules())
    rows = table.splitlines()[2:]
    assert len(rows) == len(all_rules())
    for rule, row in zip(all_rules(), rows):
        cells = [cell.strip() for cell in row.strip("|").split(" | ")]
        assert cells[:3] == [rule.code, rule.name, rule.summary.replace("|", "\\|")]
        assert cells[4] == ("on" if rule.default_enabled else "off")
        assert cells[5] == str(rule.torch_range)


def test_check_fails_on_a_stale_table_and_write_repairs_only_the_table(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{docs.START}\n| old | table |\n{docs.END}\n\nafter\n", encoding="utf-8")
    assert docs.main(["--check", "--readme", str(readme)]) == 1
    assert docs.main(["--write", "--readme", str(readme)]) == 0
    text = readme.read_text(encoding="utf-8")
    assert "| old | table |" not in text and text.startswith("# x\n\n") and text.endswith("\n\nafter\n")
    assert docs.main(["--check", "--readme", str(readme)]) == 0


def test_missing_markers_are_an_error_not_a_rewrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# no table here\n", encoding="utf-8")
    assert docs.main(["--write", "--readme", str(readme)]) == 2
    assert readme.read_text(encoding="utf-8") == "# no table here\n"
    assert "rules-table:start" in capsys.readouterr().err


def test_the_writing_a_rule_example_in_the_readme_is_a_working_rule() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Writing a rule") :]
    match = re.search(r"````python\n(# rules/(\w+)/__init__\.py\n.*?)````", section, re.S)
    assert match, "the README's rule example is missing"
    module = types.ModuleType(f"readme_rule_{match.group(2)}")
    exec(compile(match.group(1), "README.md", "exec"), module.__dict__)
    (rule,) = [value for value in vars(module).values() if isinstance(value, type) and issubclass(value, Rule)
               and value is not Rule]
    assert rule.name.replace("-", "_") == match.group(2)
    for heading in ("What it does", "Why is this bad?", "Example", "Fix safety", "Options", "Source guide"):
        assert rule.doc_sections().get(heading), heading
    assert rule.verification is not None and rule.verification.contract.promise
    check_example_coverage(rule)
    for source in rule.valid:
        check_valid(rule, source)
    for example in rule.invalid:
        check_invalid(rule, example)
