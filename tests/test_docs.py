"""The README's rule table and the pages of docs/rules/ are generated from the
rule units and must not be stale; CONTRIBUTING's example rule works."""

from __future__ import annotations

import re
import types
from pathlib import Path

import pytest

from torchlint.interfaces import docs
from torchlint.ruleapi.registry import all_rules
from torchlint.ruleapi.rule import Rule

from test_rule_examples import check_example_coverage, check_invalid, check_valid

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = ROOT / "docs" / "rules"


def test_committed_readme_rule_table_and_rule_pages_are_current() -> None:
    assert docs.main(["--check", "--readme", str(README), "--pages", str(PAGES)]) == 0, (
        "run `python -m torchlint.interfaces.docs --write`"
    )


def test_each_rule_page_is_what_explain_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """One page per rule, byte for byte the Markdown of `torchlint explain CODE --format markdown`."""
    from torchlint.interfaces import cli

    assert sorted(path.name for path in PAGES.glob("TL*.md")) == sorted(f"{rule.code}.md" for rule in all_rules())
    for code in ("TL101", "TL401", "TL903"):
        with pytest.raises(SystemExit) as stop:
            cli.main(["explain", code, "--format", "markdown"])
        assert stop.value.code == 0
        assert capsys.readouterr().out == (PAGES / f"{code}.md").read_text(encoding="utf-8")


def _copy(tmp_path: Path) -> Path:
    readme = tmp_path / "README.md"
    readme.write_text(README.read_text(encoding="utf-8"), encoding="utf-8")
    return readme


def test_a_stale_page_a_missing_page_and_a_page_without_rule_fail_the_check_and_write_repairs_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    readme, pages = _copy(tmp_path), tmp_path / "rules"
    args = ["--readme", str(readme), "--pages", str(pages)]
    assert docs.main(["--write", *args]) == 0
    assert docs.main(["--check", *args]) == 0
    (pages / "TL101.md").write_text("# old text\n", encoding="utf-8")
    (pages / "TL201.md").unlink()
    (pages / "TL999.md").write_text("# a rule that is gone\n", encoding="utf-8")
    (pages / "notes.md").write_text("not ours\n", encoding="utf-8")
    capsys.readouterr()
    assert docs.main(["--check", *args]) == 1
    err = capsys.readouterr().err
    assert all(name in err for name in ("TL101.md", "TL201.md", "TL999.md (no such rule)")) and "notes.md" not in err
    assert docs.main(["--write", *args]) == 0
    assert docs.main(["--check", *args]) == 0
    assert not (pages / "TL999.md").exists() and (pages / "notes.md").read_text(encoding="utf-8") == "not ours\n"
    assert (pages / "TL101.md").read_text(encoding="utf-8") == docs.rule_pages(all_rules())["TL101.md"]


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
    pages = ["--pages", str(tmp_path / "rules")]
    assert docs.main(["--write", "--readme", str(readme), *pages]) == 0
    readme.write_text(f"# x\n\n{docs.START}\n| old | table |\n{docs.END}\n\nafter\n", encoding="utf-8")
    assert docs.main(["--check", "--readme", str(readme), *pages]) == 1
    assert docs.main(["--write", "--readme", str(readme), *pages]) == 0
    text = readme.read_text(encoding="utf-8")
    assert "| old | table |" not in text and text.startswith("# x\n\n") and text.endswith("\n\nafter\n")
    assert docs.main(["--check", "--readme", str(readme), *pages]) == 0


def test_missing_markers_are_an_error_not_a_rewrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# no table here\n", encoding="utf-8")
    assert docs.main(["--write", "--readme", str(readme)]) == 2
    assert readme.read_text(encoding="utf-8") == "# no table here\n"
    assert "rules-table:start" in capsys.readouterr().err


def test_the_writing_a_rule_example_in_contributing_is_a_working_rule() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text[text.index("## Writing a rule") :]
    match = re.search(r"````python\n(# rules/(\w+)/__init__\.py\n.*?)````", section, re.S)
    assert match, "CONTRIBUTING's rule example is missing"
    module = types.ModuleType(f"contributing_rule_{match.group(2)}")
    exec(compile(match.group(1), "CONTRIBUTING.md", "exec"), module.__dict__)
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
