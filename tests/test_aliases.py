"""Other tools' codes (TorchFix's TORxxx) are accepted wherever codes are."""

from __future__ import annotations

from pathlib import Path
from typing import Tuple

from click.testing import CliRunner

import torchlint
from torchlint.interfaces.cli import main
from torchlint.ruleapi.registry import all_rules, by_alias, by_code_or_name, expand_selector
from torchlint.lint.settings import Settings, settings_from_table

LOAD = "import torch\nstate = torch.load(path)\n"
TORCHFIX_CODES = (
    "TOR001", "TOR002", "TOR003", "TOR004", "TOR101", "TOR102", "TOR103", "TOR104", "TOR105",
    "TOR106", "TOR107", "TOR108", "TOR201", "TOR202", "TOR203", "TOR401", "TOR402",
)


def codes(settings: Settings, path: str = "a.py") -> Tuple[str, ...]:
    return tuple(rule.code for rule in settings.enabled_rules(Path(path)))


def test_an_alias_selects_every_rule_that_declares_it() -> None:
    assert [rule.code for rule in expand_selector("TOR102") or ()] == ["TL801"]
    assert [rule.code for rule in expand_selector("tor101") or ()] == ["TL701", "TL703"]
    assert by_code_or_name("TOR102") is by_code_or_name("TL801")
    assert by_alias("TOR999") == ()


def test_an_alias_prefix_selects_like_a_code_prefix() -> None:
    selected = {rule.code for rule in expand_selector("TOR4") or ()}
    assert selected == {rule.code for rule in all_rules() if any(a.startswith("TOR4") for a in rule.aliases)}
    assert {"TL201", "TL302"} <= selected
    assert expand_selector("TOR") is None  # letters alone are not a prefix


def test_select_ignore_and_per_file_ignores_take_aliases(tmp_path: Path) -> None:
    assert codes(settings_from_table({"select": ["TOR102"]}, tmp_path / "x.toml")) == ("TL801",)
    ignoring = settings_from_table({"select": ["ALL"], "ignore": ["TOR101"]}, tmp_path / "x.toml")
    assert "TL701" not in codes(ignoring) and "TL703" not in codes(ignoring) and "TL801" in codes(ignoring)
    per_file = settings_from_table(
        {"select": ["ALL"], "per-file-ignores": {"tests/*": ["TOR102"]}}, tmp_path / "x.toml"
    )
    assert "TL801" not in codes(per_file, str(tmp_path / "tests" / "t.py"))
    assert "TL801" in codes(per_file, str(tmp_path / "src" / "t.py"))


def test_noqa_with_an_alias_silences_the_rule(tmp_path: Path) -> None:
    settings = settings_from_table({"select": ["TL801"], "torch-version": "2.5"}, tmp_path / "x.toml")
    assert [d.code for d in torchlint.check_source(LOAD, "a.py", settings)] == ["TL801"]
    silenced = LOAD.replace("(path)\n", "(path)  # noqa: TOR102\n")
    assert torchlint.check_source(silenced, "a.py", settings) == []
    other = LOAD.replace("(path)\n", "(path)  # noqa: TOR101\n")
    assert [d.code for d in torchlint.check_source(other, "a.py", settings)] == ["TL801"]
    directive = LOAD.replace("(path)\n", "(path)  # torchlint: ignore[TOR102]\n")
    assert torchlint.check_source(directive, "a.py", settings) == []


def test_rules_listing_shows_aliases() -> None:
    result = CliRunner().invoke(main, ["rules"])
    line = next(line for line in result.output.splitlines() if line.startswith("TL801"))
    assert "TOR102" in line
    as_json = CliRunner().invoke(main, ["rules", "--json"])
    assert '"TOR102"' in as_json.output


def test_torchfix_codes_map_to_a_rule_once_every_part_is_merged() -> None:
    """Every TorchFix code this checkout has a rule for is declared exactly
    where its behaviour is; the codes of rules built elsewhere are listed."""
    declared = {alias for rule in all_rules() for alias in rule.aliases}
    assert {"TOR001", "TOR004", "TOR101", "TOR102", "TOR103", "TOR401", "TOR402"} <= declared
    assert declared <= set(TORCHFIX_CODES)
