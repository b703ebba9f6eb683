"""The README's rule table is generated from the rule units and must not be stale."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchlint import docs
from torchlint.registry import all_rules

README = Path(__file__).resolve().parent.parent / "README.md"


def test_committed_readme_rule_table_is_current() -> None:
    assert docs.main(["--check", "--readme", str(README)]) == 0, "run `python -m torchlint.docs --write`"


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
