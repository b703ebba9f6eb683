"""The output formats: exact text for the human formats, structure for the machine ones."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pytest

import torchlint
from torchlint.model import Applicability, Diagnostic, Edit, Fix, Position
from torchlint.ruleapi.registry import PARSE_ERROR_CODE, all_rules
from torchlint.report import FORMATS, ReportContext, render, render_statistics

SOURCE = (
    "import torch\n"
    "\n"
    "\n"
    "def train(model, loader, optimizer):\n"
    "    model = torch.nn.DataParallel(model)\n"
    "    loader = DataLoader(ds, batch_size=8)\n"
    "    optimizer.zero_grad(set_to_none=False)\n"
)
PATH = "train.py"


def at(needle: str, delta: int = 0, source: str = SOURCE) -> int:
    """Character offset of ``needle`` in ``source`` (plus ``delta``)."""
    return source.index(needle) + delta


DP = Diagnostic(
    PATH, Position(5, 13), Position(5, 41), "TL501", "data-parallel",
    "`nn.DataParallel` is used; prefer `DistributedDataParallel`",
    hint="Launch one process per GPU with torchrun",
)
DL = Diagnostic(
    PATH, Position(6, 14), Position(6, 42), "TL201", "dataloader-without-workers",
    "`DataLoader` loads batches in the main process",
    fix=Fix((Edit(at("8)", 1), at("8)", 1), ", num_workers=4"),), Applicability.UNSAFE, "Set `num_workers=4`"),
)
ZG = Diagnostic(
    PATH, Position(7, 5), Position(7, 43), "TL302", "zero-grad-not-set-to-none",
    "`zero_grad()` fills gradients with zeros",
    fix=Fix((Edit(at("False"), at("False", 5), "True"),), Applicability.SAFE, "Pass `set_to_none=True`"),
    hint="Pass `set_to_none=True`",
)
ALL = [DP, DL, ZG]


def context(
    unsafe: bool = False, color: bool = False, sources: Optional[Dict[str, str]] = None, **kwargs: Any
) -> ReportContext:
    return ReportContext({PATH: SOURCE} if sources is None else sources, unsafe, color, **kwargs)


def lines(*text: str) -> str:
    return "".join(f"{line}\n" for line in text)


FULL_DP = (
    "TL501 `nn.DataParallel` is used; prefer `DistributedDataParallel`",
    " --> train.py:5:13",
    "  |",
    "4 | def train(model, loader, optimizer):",
    "5 |     model = torch.nn.DataParallel(model)",
    "  |             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    "6 |     loader = DataLoader(ds, batch_size=8)",
    "7 |     optimizer.zero_grad(set_to_none=False)",
    "  |",
    "help: Launch one process per GPU with torchrun",
    "",
)


def full_dl(marker: str) -> Tuple[str, ...]:
    return (
        f"TL201 {marker}`DataLoader` loads batches in the main process",
        " --> train.py:6:14",
        "  |",
        "4 | def train(model, loader, optimizer):",
        "5 |     model = torch.nn.DataParallel(model)",
        "6 |     loader = DataLoader(ds, batch_size=8)",
        "  |              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "7 |     optimizer.zero_grad(set_to_none=False)",
        "  |",
        "fix: Set `num_workers=4`",
        "  |",
        "5 |     model = torch.nn.DataParallel(model)",
        "  -     loader = DataLoader(ds, batch_size=8)",
        "6 +     loader = DataLoader(ds, batch_size=8, num_workers=4)",
        "7 |     optimizer.zero_grad(set_to_none=False)",
        "  |",
        "note: This is an unsafe fix and may change runtime behavior",
        "",
    )


FULL_ZG = (
    "TL302 [*] `zero_grad()` fills gradients with zeros",
    " --> train.py:7:5",
    "  |",
    "5 |     model = torch.nn.DataParallel(model)",
    "6 |     loader = DataLoader(ds, batch_size=8)",
    "7 |     optimizer.zero_grad(set_to_none=False)",
    "  |     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    "help: Pass `set_to_none=True`",
    "  |",
    "6 |     loader = DataLoader(ds, batch_size=8)",
    "  -     optimizer.zero_grad(set_to_none=False)",
    "7 +     optimizer.zero_grad(set_to_none=True)",
    "  |",
    "",
)


# -- full ---------------------------------------------------------------------


def test_full_exact() -> None:
    assert render("full", ALL, context()) == lines(
        *FULL_DP,
        *full_dl(""),
        *FULL_ZG,
        "Found 3 warnings.",
        "[*] 1 fixable with `torchlint check --fix` "
        "(1 unsafe fix available with `torchlint check --fix --unsafe-fixes`).",
    )


def test_full_with_unsafe_fixes_marks_every_fix_and_names_the_unsafe_command() -> None:
    assert render("full", ALL, context(unsafe=True)) == lines(
        *FULL_DP,
        *full_dl("[*] "),
        *FULL_ZG,
        "Found 3 warnings.",
        "[*] 2 fixable with `torchlint check --fix --unsafe-fixes`.",
    )


def test_full_clean_run() -> None:
    assert render("full", [], context()) == "All checks passed!\n"
    assert render("concise", [], context()) == "All checks passed!\n"
    assert render("full", [], context(show_summary=False)) == ""


def test_full_without_source_prints_no_snippet_or_diff() -> None:
    assert render("full", [ZG, DL], context(sources={}, show_summary=False)) == lines(
        "TL302 [*] `zero_grad()` fills gradients with zeros",
        " --> train.py:7:5",
        "help: Pass `set_to_none=True`",
        "",
        "TL201 `DataLoader` loads batches in the main process",
        " --> train.py:6:14",
        "fix: Set `num_workers=4`",
        "note: This is an unsafe fix and may change runtime behavior",
        "",
    )


def test_full_indents_multiline_hints() -> None:
    diagnostic = Diagnostic("x.py", Position(1, 1), Position(1, 1), "TL999", "demo", "m", hint="one\ntwo")
    assert render("full", [diagnostic], context(sources={}, show_summary=False)) == lines(
        "TL999 m", " --> x.py:1:1", "help: one", "      two", ""
    )


def test_full_underlines_a_multiline_range_to_the_end_of_its_first_line() -> None:
    source = "x = 1\ny = call(\n    a,\n    b,\n)\n"
    diagnostic = Diagnostic("m.py", Position(2, 5), Position(5, 2), "TL999", "demo", "multi-line call")
    assert render("full", [diagnostic], context(sources={"m.py": source}, show_summary=False)) == lines(
        "TL999 multi-line call",
        " --> m.py:2:5",
        "  |",
        "1 | x = 1",
        "2 | y = call(",
        "  |     ^^^^^",
        "3 |     a,",
        "4 |     b,",
        "  |",
        "",
    )


def test_full_aligns_carets_under_tabs_and_wide_characters_and_hides_control_characters() -> None:
    source = "if x:\n\tname = '日本' + \x1b[31m\n"
    start = source.index("+") - source.index("\t")  # 0-based column of "+" on line 2
    diagnostic = Diagnostic("t.py", Position(2, start + 1), Position(2, start + 2), "TL999", "demo", "esc\x1b[0m")
    assert render("full", [diagnostic], context(sources={"t.py": source}, show_summary=False)) == lines(
        "TL999 esc\u241b[0m",
        " --> t.py:2:14",
        "  |",
        "1 | if x:",
        "2 |     name = '日本' + \u241b[31m",
        "  |                   ^",
        "",
    )


def test_full_gutter_widens_for_two_digit_line_numbers_and_keeps_crlf_lines_apart() -> None:
    source = "".join(f"v{n} = {n}\r\n" for n in range(1, 12))
    edit = Edit(at("v10 = 10", 6, source), at("v10 = 10", 8, source), "100")
    diagnostic = Diagnostic(
        "c.py", Position(10, 7), Position(10, 9), "TL999", "demo", "number",
        fix=Fix((edit,), Applicability.SAFE, "Use 100"),
    )
    assert render("full", [diagnostic], context(sources={"c.py": source}, show_summary=False)) == lines(
        "TL999 [*] number",
        "  --> c.py:10:7",
        "   |",
        "8  | v8 = 8",
        "9  | v9 = 9",
        "10 | v10 = 10",
        "   |       ^^",
        "11 | v11 = 11",
        "   |",
        "fix: Use 100",
        "   |",
        "9  | v9 = 9",
        "   - v10 = 10",
        "10 + v10 = 100",
        "11 | v11 = 11",
        "   |",
        "",
    )


def test_full_diff_splits_distant_edits_into_hunks() -> None:
    source = "".join(f"line{n}\n" for n in range(1, 10))
    edits = (Edit(0, 5, "first"), Edit(at("line9", 0, source), at("line9", 5, source), "last"))
    diagnostic = Diagnostic(
        "h.py", Position(1, 1), Position(1, 6), "TL999", "demo", "two places",
        fix=Fix(edits, Applicability.SAFE, "Rename both"),
    )
    text = render("full", [diagnostic], context(sources={"h.py": source}, show_summary=False))
    assert text.split("fix: Rename both\n")[1] == lines(
        "  |",
        "  - line1",
        "1 + first",
        "2 | line2",
        "  ...",
        "8 | line8",
        "  - line9",
        "9 + last",
        "  |",
        "",
    )


def test_full_skips_the_diff_of_a_fix_that_changes_nothing() -> None:
    noop = Fix((Edit(0, 6, "import"),), Applicability.SAFE, "Nothing")
    diagnostic = Diagnostic(PATH, Position(1, 1), Position(1, 7), "TL999", "demo", "noop", fix=noop)
    text = render("full", [diagnostic], context(show_summary=False))
    assert text.endswith("1 | import torch\n  | ^^^^^^\nfix: Nothing\n\n")


# -- concise and the summary -----------------------------------------------------


def test_concise_exact() -> None:
    assert render("concise", ALL, context()) == lines(
        "train.py:5:13: TL501 `nn.DataParallel` is used; prefer `DistributedDataParallel`",
        "train.py:6:14: TL201 `DataLoader` loads batches in the main process",
        "train.py:7:5: TL302 [*] `zero_grad()` fills gradients with zeros",
        "Found 3 warnings.",
        "[*] 1 fixable with `torchlint check --fix` "
        "(1 unsafe fix available with `torchlint check --fix --unsafe-fixes`).",
    )


def test_concise_names_a_notebook_cell() -> None:
    cell = Diagnostic("nb.ipynb", Position(2, 8), Position(2, 10), "TL999", "demo", "in a cell", cell=3)
    assert render("concise", [cell], context(show_summary=False)) == "nb.ipynb:cell 3, line 2, column 8: TL999 in a cell\n"


@pytest.mark.parametrize(
    ("diagnostics", "kwargs", "expected"),
    [
        ([DP], {}, ["Found 1 warning."]),
        ([ZG, ZG], {}, ["Found 2 warnings.", "[*] 2 fixable with `torchlint check --fix`."]),
        (
            [DL, DP],
            {},
            ["Found 2 warnings.", "No safe fixes available "
             "(1 unsafe fix available with `torchlint check --fix --unsafe-fixes`)."],
        ),
        (
            [DL, DL, ZG],
            {"fix_command": "torchlint fix --apply"},
            ["Found 3 warnings.", "[*] 1 fixable with `torchlint fix --apply` "
             "(2 unsafe fixes available with `torchlint fix --apply --unsafe-fixes`)."],
        ),
        ([DL], {"unsafe": True}, ["Found 1 warning.", "[*] 1 fixable with `torchlint check --fix --unsafe-fixes`."]),
        ([ZG], {"unsafe": True}, ["Found 1 warning.", "[*] 1 fixable with `torchlint check --fix`."]),
        ([DP], {"fixed": 2}, ["Found 3 findings (2 fixed, 1 warning remaining)."]),
        ([], {"fixed": 1}, ["Found 1 finding (1 fixed, 0 remaining)."]),
        ([DP, Diagnostic(PATH, Position(1, 1), Position(1, 1), "TL000", "parse-error", "x")], {},
         ["Found 1 error and 1 warning."]),
        ([DP, ZG], {"show_summary": False}, []),
    ],
)
def test_summary_variants(diagnostics: List[Diagnostic], kwargs: Dict[str, Any], expected: List[str]) -> None:
    text = render("concise", diagnostics, context(**kwargs))
    assert text.splitlines()[len(diagnostics):] == expected


# -- colour ---------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_ansi_without_colour(fmt: str) -> None:
    assert "\x1b" not in render(fmt, ALL, context())
    assert "\x1b" not in render_statistics(ALL, context())


@pytest.mark.parametrize("fmt", ["json", "github", "sarif"])
def test_machine_formats_never_colour(fmt: str) -> None:
    assert render(fmt, ALL, context(color=True)) == render(fmt, ALL, context(color=False))


def test_colour_full_and_concise() -> None:
    concise = render("concise", [ZG], context(color=True))
    assert concise.splitlines()[0] == (
        "\x1b[36mtrain.py:7:5\x1b[0m: \x1b[1;31mTL302\x1b[0m [\x1b[36m*\x1b[0m] "
        "\x1b[1m`zero_grad()` fills gradients with zeros\x1b[0m"
    )
    full = render("full", [ZG], context(color=True))
    assert "\x1b[1;34m7 |\x1b[0m     optimizer.zero_grad(set_to_none=False)\n" in full
    assert "\x1b[1;34m  |\x1b[0m     \x1b[1;31m" + "^" * 38 + "\x1b[0m\n" in full
    assert "\x1b[31m  -     optimizer.zero_grad(set_to_none=False)\x1b[0m\n" in full
    assert "\x1b[32m7 +     optimizer.zero_grad(set_to_none=True)\x1b[0m\n" in full
    assert re.sub(r"\x1b\[[0-9;]*m", "", full) == render("full", [ZG], context())
    assert render("full", [], context(color=True)) == "\x1b[1;32mAll checks passed!\x1b[0m\n"


# -- json -------------------------------------------------------------------------


def test_json_structure_and_edit_positions() -> None:
    text = render("json", ALL, context())
    assert text.endswith("]\n") and text.startswith("[\n  {\n    \"code\"")
    items = json.loads(text)
    assert [item["code"] for item in items] == ["TL501", "TL201", "TL302"]
    assert items[0] == {
        "code": "TL501",
        "name": "data-parallel",
        "message": "`nn.DataParallel` is used; prefer `DistributedDataParallel`",
        "filename": "train.py",
        "location": {"row": 5, "column": 13},
        "end_location": {"row": 5, "column": 41},
        "fix": None,
        "url": None,
        "cell": None,
    }
    assert list(items[0]) == ["code", "name", "message", "filename", "location", "end_location", "fix", "url", "cell"]
    assert items[1]["fix"] == {
        "applicability": "unsafe",
        "message": "Set `num_workers=4`",
        "edits": [
            {"content": ", num_workers=4", "location": {"row": 6, "column": 41}, "end_location": {"row": 6, "column": 41}}
        ],
    }
    assert items[2]["fix"]["applicability"] == "safe"
    assert items[2]["fix"]["edits"] == [
        {"content": "True", "location": {"row": 7, "column": 37}, "end_location": {"row": 7, "column": 42}}
    ]


def test_json_edit_spanning_lines_and_missing_source() -> None:
    fix = Fix((Edit(0, 14, ""),), Applicability.SAFE, "Remove the import")
    diagnostic = Diagnostic(PATH, Position(1, 1), Position(1, 13), "TL999", "demo", "x", fix=fix, cell=2)
    # A notebook cell's text is keyed by path and cell number.
    cell_sources = {f"{PATH}#cell2": context().sources[PATH]}
    [item] = json.loads(render("json", [diagnostic], context(sources=cell_sources)))
    assert item["fix"]["edits"] == [
        {"content": "", "location": {"row": 1, "column": 1}, "end_location": {"row": 3, "column": 1}}
    ]
    assert item["cell"] == 2
    [item] = json.loads(render("json", [diagnostic], context(sources={})))
    assert item["fix"]["edits"] == [{"content": "", "start": 0, "end": 14}]


def test_json_empty() -> None:
    assert render("json", [], context()) == "[]\n"


# -- github -----------------------------------------------------------------------


def test_github_exact_and_escaped() -> None:
    odd = Diagnostic(
        "dir,a/b:c.py", Position(1, 2), Position(3, 4), "TL999", "demo",
        "100% sure\r\nsecond line", hint="try: this, then that",
    )
    assert render("github", [DP, ZG, odd], context()) == lines(
        "::warning title=torchlint (TL501),file=train.py,line=5,col=13,endLine=5,endColumn=41::"
        "train.py:5:13: TL501 `nn.DataParallel` is used; prefer `DistributedDataParallel`"
        "%0A  help: Launch one process per GPU with torchrun",
        "::warning title=torchlint (TL302),file=train.py,line=7,col=5,endLine=7,endColumn=43::"
        "train.py:7:5: TL302 `zero_grad()` fills gradients with zeros%0A  help: Pass `set_to_none=True`",
        "::error title=torchlint (TL999),file=dir%2Ca/b%3Ac.py,line=1,col=2,endLine=3,endColumn=4::"
        "dir,a/b:c.py:1:2: TL999 100%25 sure%0D%0Asecond line%0A  help: try: this, then that",
    )
    assert render("github", [], context()) == ""


def test_severity_grades_github_annotations_and_sarif_levels() -> None:
    """Advisory rules annotate as warnings; defects and parse errors as errors."""
    contradiction = Diagnostic("t.py", Position(1, 1), Position(1, 2), "TL605", "benchmark-with-deterministic", "m")
    broken = Diagnostic("t.py", Position(1, 1), Position(1, 2), "TL000", "parse-error", "m")
    text = render("github", [DP, contradiction, broken], context())
    assert [line.split(" ", 1)[0] for line in text.splitlines()] == ["::warning", "::error", "::error"]
    log = sarif([DP, contradiction, broken])
    assert [r["level"] for r in log["runs"][0]["results"]] == ["warning", "error", "error"]
    levels = {d["id"]: d["defaultConfiguration"]["level"] for d in log["runs"][0]["tool"]["driver"]["rules"]}
    assert levels["TL501"] == "warning" and levels["TL605"] == "error" and levels["TL000"] == "error"


def test_rules_off_by_default_are_warnings_unless_they_say_otherwise() -> None:
    from torchlint.ruleapi.rule import Rule, Severity

    class Quiet(Rule):
        code = "TL998"
        name = "quiet"
        summary = "s"
        default_enabled = False

    class Loud(Quiet):
        severity = Severity.ERROR

    assert Quiet.severity is Severity.WARNING and Loud.severity is Severity.ERROR


# -- sarif ------------------------------------------------------------------------


def sarif(diagnostics: Sequence[Diagnostic], ctx: Optional[ReportContext] = None) -> Dict[str, Any]:
    log: Dict[str, Any] = json.loads(render("sarif", diagnostics, ctx or context()))
    return log


def test_sarif_log_driver_and_rules() -> None:
    log = sarif(ALL)
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    [run] = log["runs"]
    assert run["columnKind"] == "unicodeCodePoints"
    driver = run["tool"]["driver"]
    assert driver["name"] == "torchlint"
    assert driver["version"] == torchlint.__version__
    ids = [rule["id"] for rule in driver["rules"]]
    assert ids == [PARSE_ERROR_CODE, *(rule.code for rule in all_rules())]
    for rule in driver["rules"]:
        assert set(rule) >= {"id", "name", "shortDescription", "fullDescription", "help", "defaultConfiguration"}
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["text"] == rule["help"]["markdown"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning")
        assert "torchlint" in rule["properties"]["tags"]
    for rule_class, rule in zip(all_rules(), driver["rules"][1:]):
        assert rule["name"] == rule_class.name
        assert rule["shortDescription"]["text"] == rule_class.summary
        assert rule["help"]["markdown"] == rule_class.documentation()


def test_sarif_results_locations_and_fixes() -> None:
    results = sarif(ALL)["runs"][0]["results"]
    rules = sarif([])["runs"][0]["tool"]["driver"]["rules"]
    assert [r["ruleId"] for r in results] == ["TL501", "TL201", "TL302"]
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] == rules[result["ruleIndex"]]["defaultConfiguration"]["level"]
    assert results[0]["message"] == {"text": DP.message}
    assert results[0]["locations"] == [
        {
            "physicalLocation": {
                "artifactLocation": {"uri": "train.py", "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": 5, "startColumn": 13, "endLine": 5, "endColumn": 41},
            }
        }
    ]
    assert "fixes" not in results[0]
    assert results[2]["fixes"] == [
        {
            "description": {"text": "Pass `set_to_none=True`"},
            "artifactChanges": [
                {
                    "artifactLocation": {"uri": "train.py", "uriBaseId": "%SRCROOT%"},
                    "replacements": [
                        {
                            "deletedRegion": {"startLine": 7, "startColumn": 37, "endLine": 7, "endColumn": 42},
                            "insertedContent": {"text": "True"},
                        }
                    ],
                }
            ],
        }
    ]
    assert all("fixes" not in r for r in sarif(ALL, context(sources={}))["runs"][0]["results"])


def test_sarif_uris_and_unknown_codes() -> None:
    spaced = Diagnostic("src/my model.py", Position(1, 1), Position(1, 2), "TL999", "demo", "x")
    absolute = Diagnostic("/abs/t.py", Position(1, 1), Position(1, 2), "TL999", "demo", "x")
    dotted = Diagnostic("./pkg/t.py", Position(1, 1), Position(1, 2), "TL999", "demo", "x")
    results = sarif([spaced, absolute, dotted])["runs"][0]["results"]
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in results]
    assert locations == [
        {"uri": "src/my%20model.py", "uriBaseId": "%SRCROOT%"},
        {"uri": "file:///abs/t.py"},
        {"uri": "pkg/t.py", "uriBaseId": "%SRCROOT%"},
    ]
    assert all("ruleIndex" not in r for r in results)


def test_sarif_is_deterministic() -> None:
    assert render("sarif", ALL, context()) == render("sarif", ALL, context())


# -- statistics and dispatch ---------------------------------------------------------


def test_statistics_exact() -> None:
    many = [DL] * 10 + [ZG, ZG, DP, DP, Diagnostic(PATH, Position(1, 1), Position(1, 1), "TL000", "parse-error", "x")]
    assert render_statistics(many, context()) == lines(
        "10\tTL201\t[ ] dataloader-without-workers (10 with `--unsafe-fixes`)",
        " 2\tTL302\t[*] zero-grad-not-set-to-none",
        " 2\tTL501\t[ ] data-parallel",
        " 1\tTL000\t[ ] parse-error",
        "Found 1 error and 14 warnings.",
        "[*] 2 fixable with `torchlint check --fix` "
        "(10 unsafe fixes available with `torchlint check --fix --unsafe-fixes`).",
    )


def test_statistics_marks_a_code_fixable_only_when_every_finding_is() -> None:
    unfixable_zg = Diagnostic(PATH, Position(7, 5), Position(7, 43), ZG.code, ZG.name, ZG.message)
    text = render_statistics([ZG, unfixable_zg, DL], context(unsafe=True, show_summary=False))
    assert text == lines(
        "2\tTL302\t[ ] zero-grad-not-set-to-none (1 of 2 fixable)", "1\tTL201\t[*] dataloader-without-workers"
    )


def test_statistics_json_and_empty() -> None:
    assert json.loads(render_statistics([ZG, DP, ZG], context(), fmt="json")) == [
        {"code": "TL302", "name": "zero-grad-not-set-to-none", "count": 2, "fixable": True, "fixable_count": 2,
         "unsafe_fix_count": 0},
        {"code": "TL501", "name": "data-parallel", "count": 1, "fixable": False, "fixable_count": 0,
         "unsafe_fix_count": 0},
    ]
    assert render_statistics([], context()) == ""
    assert render_statistics([], context(), fmt="json") == "[]\n"


def test_statistics_colour() -> None:
    text = render_statistics([ZG], context(color=True, show_summary=False))
    assert text == "\x1b[1m1\x1b[0m\t\x1b[1;31mTL302\x1b[0m\t[\x1b[36m*\x1b[0m] zero-grad-not-set-to-none\n"


def test_every_format_renders_and_unknown_ones_are_refused() -> None:
    for fmt in FORMATS:
        assert render(fmt, ALL, context()).endswith("\n")
    with pytest.raises(ValueError, match="unknown output format 'xml'"):
        render("xml", ALL, context())


def test_sarif_uri_of_a_file_name_that_is_not_utf8() -> None:
    """Surrogate-escaped names (undecodable bytes) become percent-escapes of those bytes."""
    relative = Diagnostic("src/caf\udce9.py", Position(1, 1), Position(1, 2), "TL999", "demo", "x")
    absolute = Diagnostic("/abs/caf\udce9 \u00e9.py", Position(1, 1), Position(1, 2), "TL999", "demo", "x")
    text = render("sarif", [relative, absolute], context())
    text.encode("utf-8")  # the log itself is valid UTF-8
    results = json.loads(text)["runs"][0]["results"]
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in results]
    assert locations == [
        {"uri": "src/caf%E9.py", "uriBaseId": "%SRCROOT%"},
        {"uri": "file:///abs/caf%E9%20%C3%A9.py"},
    ]


def test_a_run_imports_only_the_reporter_it_prints_with(tmp_path: Path) -> None:
    """Reporters load on use: a concise run never imports the SARIF or GitHub ones."""
    (tmp_path / "a.py").write_text("import torch\nfrom torch import nn\nmodel = nn.DataParallel(net)\n")
    script = (
        "import sys\nfrom torchlint.interfaces.cli import main\n"
        "try:\n    main(['check', 'a.py', '--output-format', 'concise', '--no-cache'])\n"
        "except SystemExit:\n    pass\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('torchlint.report.'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True)
    loaded = set(done.stdout.splitlines()[-1].split())
    assert "torchlint.report.concise" in loaded
    assert not loaded & {"torchlint.report.sarif", "torchlint.report.github"}


TORCHVISION = "import torchvision\nm = torchvision.models.resnet18(pretrained=False)\n"


def test_json_and_sarif_fix_edits_are_whole_tokens() -> None:
    # The engine's edit is the smallest one (`pretrained=Fals` -> `weights=Non`,
    # the shared final `e` left out); reports show whole tokens, as Ruff does.
    [found] = torchlint.check_source(TORCHVISION, "m.py")
    assert found.fix is not None and [e.text for e in found.fix.edits] == ["weights=Non"]
    shown = ReportContext({"m.py": TORCHVISION}, False, False)
    [item] = json.loads(render("json", [found], shown))
    assert [(e["content"], e["location"], e["end_location"]) for e in item["fix"]["edits"]] == [
        ("weights=None", {"row": 2, "column": 33}, {"row": 2, "column": 49})
    ]
    assert TORCHVISION.splitlines()[1][32:48] == "pretrained=False"
    [result] = json.loads(render("sarif", [found], shown))["runs"][0]["results"]
    [replacement] = result["fixes"][0]["artifactChanges"][0]["replacements"]
    assert replacement["insertedContent"]["text"] == "weights=None"
    assert replacement["deletedRegion"] == {"startLine": 2, "startColumn": 33, "endLine": 2, "endColumn": 49}


@pytest.mark.parametrize("fixture", sorted((Path(__file__).resolve().parent.parent / "fixtures").glob("TL*/*.py")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_whole_token_edits_make_the_same_fix_and_cut_no_token(fixture: Path) -> None:
    from torchlint.model import apply_edits
    from torchlint.report.source import token_edits

    source = fixture.read_text(encoding="utf-8")
    found = [d for d in torchlint.check_source(source, fixture.name, torchlint.Settings(select=("ALL",)))
             if d.fix is not None]
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", source)]
    for diagnostic in found:
        assert diagnostic.fix is not None
        widened = token_edits(source, diagnostic.fix.edits)
        assert apply_edits(source, widened) == apply_edits(source, diagnostic.fix.edits)
        inside = [e for e in widened
                  if any(low < e.start < high or low < e.end < high for low, high in _tokens(source, starts))]
        assert inside == [], diagnostic


def _tokens(source: str, starts: List[int]) -> List[Tuple[int, int]]:
    import io
    import tokenize

    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            continue
        found.append((starts[token.start[0] - 1] + token.start[1], starts[token.end[0] - 1] + token.end[1]))
    return found
