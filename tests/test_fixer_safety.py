"""Fixes never lose a byte, never write code the target Python cannot parse,
and cost one check per pass however many fixes it holds."""

from __future__ import annotations

import ast
import math
import subprocess
from pathlib import Path
from typing import Any, List, Optional

import libcst as cst
import pytest

from conftest import run_in_process

import torchlint.lint.fixer as fixer
from torchlint.lint.engine import LintConfig, lint_source
from torchlint.lint.fixer import DropReason, apply_edits, fix_text, unchanged_outside
from torchlint.model import Applicability, Edit
from torchlint.ruleapi.rule import FixAvailability, Rule
from torchlint.lint.settings import ConfigError, Overrides, Settings, SettingsResolver
from torchlint.source.target import PythonVersion, fstring_violations, lowest_python
from tests.test_engine import BreakIt, RenameFoo

TL101 = Settings(select=("TL101",)).lint_config(Path("a.py"))
TL301_CONFIG = Settings(select=("TL301",)).lint_config(Path("a.py"))
CALL, FIXED_CALL = "torch.zeros(3).cuda()", 'torch.zeros(3, device="cuda")'


def with_target(config: LintConfig, target: str) -> LintConfig:
    return LintConfig(config.rules, config.torch_version, config.options, config.precheck,
                      PythonVersion.parse(target))


# -- form feeds ------------------------------------------------------------------

FORM_FEEDS = (
    "import torch\n"
    "\f\n"
    "\fdef helper():\n"
    "    a = 1\n"
    "\f    return a\n"
    "\f\n"
    f"\fy = {CALL}\n"
    "\fz = 2\n"
)


def test_form_feeds_far_from_a_fix_are_kept() -> None:
    result = fix_text(FORM_FEEDS, "a.py", TL101)
    assert result.source == FORM_FEEDS.replace(CALL, FIXED_CALL)
    assert result.source.count("\f") == FORM_FEEDS.count("\f") == 6


def test_column_after_a_form_feed_counts_it_like_cpython() -> None:
    [finding] = lint_source(FORM_FEEDS, "a.py", TL101)
    call = next(n for n in ast.walk(ast.parse(FORM_FEEDS)) if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute) and n.func.attr == "cuda")
    assert (finding.start.line, finding.start.column) == (call.lineno, call.col_offset + 1) == (7, 6)
    assert finding.end.column == call.end_col_offset + 1  # type: ignore[operator]


class Decorate(Rule):
    """Decorates functions named ``run``: a fix whose node spans many lines."""

    code = "TL905"
    name = "decorate"
    summary = "test rule"
    fix_availability = FixAvailability.ALWAYS

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value == "run" and not node.decorators:
            decorator = cst.Decorator(cst.parse_expression("torch.no_grad()"))
            body = node.body.with_changes(body=[*node.body.body[:-1], cst.parse_statement("return 2\n")])
            new = node.with_changes(decorators=[decorator], body=body)
            self.report(node.name, "run", fix=self.replace(node, new, Applicability.SAFE, "decorate"))


def test_form_feeds_inside_a_replaced_node_are_kept() -> None:
    source = "class A:\n    x = 0\n\f    def run(self):\n        a = 1\n\f        b = 2\n        return 1\n"
    result = fix_text(source, "a.py", LintConfig(rules=(Decorate,), precheck=False))  # type: ignore[arg-type]
    assert result.source == (
        "class A:\n    x = 0\n\f    @torch.no_grad()\n    def run(self):\n        a = 1\n"
        "\f        b = 2\n        return 2\n"
    )


def test_own_line_suppression_after_a_form_feed_covers_its_statement() -> None:
    source = f"import torch\n\f\n# torchlint: ignore[TL101]\n\fy = {CALL}\nz = {CALL}\n"
    assert [d.start.line for d in lint_source(source, "a.py", TL101)] == [5]


def test_lsp_quick_fix_keeps_form_feeds(tmp_path: Path) -> None:
    pytest.importorskip("pygls")
    from tests.test_lsp import Client, apply, code_actions, open_document

    # The server runs with the rules of tests/rule_doubles.py: TL991 fixes `boom()` into `calm()`.
    source = FORM_FEEDS.replace(CALL, "boom(3)")
    client = Client(tmp_path)
    try:
        client.initialize(tmp_path, {"workspace": {"workspaceEdit": {"documentChanges": True}}})
        uri = open_document(client, tmp_path / "train.py", source)
        [found] = [d for d in client.diagnostics(uri) if d["code"] == "TL991"]
        assert found["range"]["start"] == {"line": 6, "character": 5}
        [action] = [a for a in code_actions(client, uri, found["range"]["start"], found["range"]["end"],
                                            only=["quickfix"]) if "Suppress" not in a["title"]]
        edits = action["edit"]["documentChanges"][0]["edits"]
        assert apply(source, edits) == source.replace("boom(3)", "calm(3)")
        assert client.stop() == 0
    finally:
        if client.process.poll() is None:
            client.process.kill()
            client.process.wait()


def test_overlapping_edits_fail_the_byte_invariant() -> None:
    source = "abcdefgh"
    good = [Edit(1, 3, "X"), Edit(5, 5, "Y")]
    assert unchanged_outside(source, apply_edits(source, good), good)
    assert not unchanged_outside(source, "aXdeYfgh!", good)  # a byte appended outside
    overlapping = [Edit(1, 4, "X"), Edit(3, 6, "Y")]
    assert not unchanged_outside(source, apply_edits(source, overlapping), overlapping)


def test_two_insertions_at_one_place_are_checked_in_the_order_they_land() -> None:
    """A decorator and the import it needs, both inserted before a `def` on
    the first line: the check reads the texts as `apply_edits` lays them
    down, whatever order a set would give (it used to depend on the hash
    seed, and refused the fix about half the time)."""
    source = "def f(m, x):\n    return m(x)\n"
    for edits in ([Edit(0, 0, "@torch.no_grad()\n"), Edit(0, 0, "import torch\n")],
                  [Edit(0, 0, "import torch\n"), Edit(0, 0, "@torch.no_grad()\n")]):
        fixed = apply_edits(source, edits)
        assert unchanged_outside(source, fixed, edits)
        swapped = edits[1].text + edits[0].text + source
        assert swapped == fixed or not unchanged_outside(source, swapped, edits)
    result = fix_text("def check(model, x):\n    model.eval()\n    return model(x).argmax(1).tolist()\n", "a.py",
                      TL301_CONFIG, unsafe=True)
    assert result.source.startswith("import torch\n@torch.no_grad()\ndef check(") and not result.dropped


# -- f-strings and the target Python ------------------------------------------------------


def test_fix_inside_an_fstring_picks_the_other_quote() -> None:
    source = f'import torch\nx = f"{{{CALL}}}"\ny = {CALL}\n'
    result = fix_text(source, "a.py", TL101)
    assert result.source == f"import torch\nx = f\"{{torch.zeros(3, device='cuda')}}\"\ny = {FIXED_CALL}\n"
    assert not result.drops


NESTED = f"import torch\nx = f'{{f\"{{{CALL}}}\"}}'\n"


def test_fix_that_needs_pep_701_is_dropped_for_an_old_target_only() -> None:
    old = fix_text(NESTED, "a.py", TL101)  # default target: py39; no quote is free inside
    assert old.source == NESTED and not old.applied
    [drop] = old.drops
    assert drop.reason is DropReason.TARGET_SYNTAX and "py39" in drop.note
    new = fix_text(NESTED, "a.py", with_target(TL101, "py312"))
    assert new.source == NESTED.replace(CALL, FIXED_CALL) and not new.drops


PYTHON_39 = Path.home() / ".pyenv/versions/3.9.18/bin/python3"
# (f-string, whether Python 3.9 parses it): before PEP 701 an f-string is read
# as a plain string first.
SNIPPETS = [
    ("f\"{'a'}\"", True), ('f"{"a"}"', False), ("f'{\"a\"}'", True), ('f"""{"a"}"""', True),
    ("f\"{'\\n'.join(x)}\"", False), ("f'{x!r:>{w}}'", True), ("f'{x:{\"a\"}}'", True),
    ("f\"{x:{\"a\"}}\"", False), ("f\"{(x,\n y)}\"", False), ('f"""{(x,\n y)}"""', True),
    ("f'{f\"{x}\"}'", True), ("f'{f\"{'a'}\"}'", False), ("f\"{'#'}\"", True),
    ("f'{x}' f\"{y}\"", True), ("f" + "'" * 3 + "{'a'}" + "'" * 3, True),
]


@pytest.mark.parametrize("snippet, accepted", SNIPPETS)
def test_fstring_check_matches_the_grammar_before_312(snippet: str, accepted: bool) -> None:
    source = f"x = {snippet}\n"
    assert (not fstring_violations(cst.parse_module(source), source, PythonVersion(3, 9))) is accepted
    assert not fstring_violations(cst.parse_module(source), source, PythonVersion(3, 12))
    if PYTHON_39.exists():  # the expectation itself, confirmed by a real 3.9 where there is one
        compiled = subprocess.run([str(PYTHON_39), "-c", "import ast, sys; ast.parse(sys.stdin.read())"],
                                  input=source, capture_output=True, text=True)
        assert (compiled.returncode == 0) is accepted, compiled.stderr


@pytest.mark.parametrize("spec, expected", [
    (">=3.10", "py310"), (">=3.9,<4", "py39"), ("~=3.11", "py311"), ("==3.12.*", "py312"),
    ("<4, >3.8", "py38"), ("<=3.12", None), ("!=3.9", None),
])
def test_requires_python_lower_bound(spec: str, expected: Optional[str]) -> None:
    found = lowest_python(spec)
    assert (str(found) if found else None) == expected


def test_target_version_from_config_flag_and_requires_python(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "p"\nrequires-python = ">=3.12"\n[tool.torchlint]\nselect = ["TL101"]\n',
        encoding="utf-8",
    )
    settings = SettingsResolver().for_path(project / "a.py")
    assert settings.lint_config(project / "a.py").target_version == PythonVersion(3, 12)
    flagged = SettingsResolver(Overrides(target_version="py310")).for_path(project / "a.py")
    assert flagged.lint_config().target_version == PythonVersion(3, 10)
    configured = tmp_path / "q"
    configured.mkdir()
    (configured / ".torchlint.toml").write_text('target-version = "py311"\n', encoding="utf-8")
    assert SettingsResolver().for_path(configured / "a.py").target_python() == PythonVersion(3, 11)
    assert Settings(root=tmp_path).target_python() == PythonVersion(3, 9)
    with pytest.raises(ConfigError, match="target-version"):
        Settings(target_version="3.9")


def test_cli_fix_follows_requires_python(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(NESTED, encoding="utf-8")
    command = ["fix", "a.py", "--apply", "--no-cache"]
    refused = run_in_process(command, tmp_path)
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == NESTED
    assert "would not parse on the target Python (target-version py39" in refused.stderr
    (tmp_path / "pyproject.toml").write_text('[project]\nrequires-python = ">=3.12"\n', encoding="utf-8")
    applied = run_in_process(command, tmp_path)
    assert applied.returncode == 0, applied.stderr
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == NESTED.replace(CALL, FIXED_CALL)


# -- cost of many fixes ------------------------------------------------------------


@pytest.mark.parametrize("count", [16, 256])
def test_one_bad_fix_among_many_costs_a_few_parses(count: int, monkeypatch: Any) -> None:
    parses: List[str] = []
    real = fixer.parse_module

    def counting(source: str, path: str) -> Any:
        parses.append(path)
        return real(source, path)

    monkeypatch.setattr(fixer, "parse_module", counting)
    # The bad fix comes last: checking fixes one at a time would apply one per pass.
    source = "".join(f"x{i} = foo({i})\n" for i in range(count)) + "y = broken(1)\n"
    result = fix_text(source, "a.py", LintConfig(rules=(RenameFoo, BreakIt), precheck=False))  # type: ignore[arg-type]
    assert result.converged and len(result.applied) == count
    assert [d.code for d in result.dropped] == ["TL902"] and "broken(1)" in result.source
    # Halving: about two parses per level of the search, not one per fix.
    assert len(parses) <= 2 * math.ceil(math.log2(count + 1)) + 3
