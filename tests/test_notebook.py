"""Notebooks: findings name the cell; fixes rewrite cell sources only."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import warnings
from functools import partial
from pathlib import Path
from typing import Any, List, Set

import nbformat
import pytest

from conftest import run_in_process
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from torchlint.lint.engine import LintConfig, lint_source
from torchlint.lint.fixer import fix_text
from torchlint.model import Edit
from torchlint.lint.notebook import fix_notebook, lint_notebook, load
from torchlint.source.notebook_magics import apply_masks, mask_magics
from torchlint.ruleapi.registry import all_rules

hypothesmith = pytest.importorskip("hypothesmith")

NOTEBOOK = Path(__file__).resolve().parent.parent / "fixtures" / "notebooks" / "finetune.ipynb"


def cli(args: List[str], cwd: Path) -> "subprocess.CompletedProcess[str]":
    return run_in_process([*args, "--no-cache"], cwd)


def test_findings_name_cell_and_line(tmp_path: Path) -> None:
    shutil.copy(NOTEBOOK, tmp_path / "nb.ipynb")
    result = cli(["check", "nb.ipynb", "--output-format", "concise"], tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    located = [line.split(": ")[0] + ": " + line.split(": ")[1].split()[0] for line in lines[:6]]
    assert located == [
        "nb.ipynb:cell 3, line 2, column 5: TL101",
        "nb.ipynb:cell 3, line 3, column 5: TL101",
        "nb.ipynb:cell 3, line 4, column 10: TL201",
        "nb.ipynb:cell 5, line 1, column 9: TL101",  # an nn.Sequential of layers moved (TL101's scope since issue 26)
        "nb.ipynb:cell 5, line 2, column 9: TL501",
        "nb.ipynb:cell 6, line 1, column 5: TL301",
    ]
    data = json.loads(cli(["check", "nb.ipynb", "--output-format", "json"], tmp_path).stdout)
    assert [item["cell"] for item in data] == [3, 3, 3, 5, 5, 6]


def test_fix_rewrites_cells_and_keeps_everything_else(tmp_path: Path) -> None:
    target = tmp_path / "nb.ipynb"
    shutil.copy(NOTEBOOK, target)
    result = cli(["fix", "nb.ipynb", "--apply", "--unsafe-fixes"], tmp_path)
    assert result.returncode == 0, result.stderr
    before = nbformat.read(str(NOTEBOOK), as_version=4)
    after = nbformat.read(str(target), as_version=4)
    nbformat.validate(after)
    assert after.metadata == before.metadata
    assert [c.get("outputs") for c in after.cells] == [c.get("outputs") for c in before.cells]
    assert [c.cell_type for c in after.cells] == [c.cell_type for c in before.cells]
    # Magic and shell lines, and the %%bash cell, are untouched.
    assert after.cells[1].source == before.cells[1].source
    assert after.cells[3].source == before.cells[3].source
    assert after.cells[4].source == before.cells[4].source.replace(  # TL101's fix; TL501 has none
        "nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)",
        "nn.Sequential(nn.Linear(16, 32, device=device), nn.ReLU(), nn.Linear(32, 2, device=device))")
    assert after.cells[2].source == (
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "x = torch.randn(512, 16, device=device)\n"
        "y = torch.randint(0, 2, (512,), device=device)\n"
        "loader = DataLoader(TensorDataset(x, y), batch_size=64, num_workers=4)"
    )
    assert after.cells[5].source.startswith("@torch.no_grad()\ndef evaluate(model, loader):\n")
    # Only the changed source lines differ in the file's text.
    old_lines = NOTEBOOK.read_text().splitlines()
    new_lines = target.read_text().splitlines()
    assert len(new_lines) == len(old_lines) + 1
    assert sum(1 for line in new_lines if line not in old_lines) == 5  # 4 lines, and the layers of cell 5
    again = cli(["fix", "nb.ipynb", "--unsafe-fixes"], tmp_path)
    assert again.returncode == 0 and again.stdout == ""


def test_broken_notebook_is_a_diagnostic(tmp_path: Path) -> None:
    (tmp_path / "bad.ipynb").write_text("{not json")
    (tmp_path / "zz.py").write_text("import torch.nn as nn\nm = nn.DataParallel(x)\n")
    result = cli(["check", ".", "--output-format", "concise"], tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert any(line.startswith("bad.ipynb:1:1: TL000") for line in result.stdout.splitlines())
    assert any(line.startswith("zz.py:2:5: TL501") for line in result.stdout.splitlines())


# --- Cells are found by structure; fixes change only the fixed cells' source. ---

IMPORTS = "import torch\nfrom torch.utils.data import DataLoader"
LOADER = "loader = DataLoader(ds, batch_size=4)"
FIXED_LOADER = "loader = DataLoader(ds, batch_size=4, num_workers=4)"


def notebook(*sources: object, indent: object = 1) -> str:
    """Notebook JSON text whose code cells have the given sources (a string
    is stored as a list of lines, a one-item tuple as one string)."""
    cells = []
    for source in sources:
        value = source[0] if isinstance(source, tuple) else str(source).splitlines(keepends=True)
        cells.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": value})
    data = {"cells": cells, "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"  # type: ignore[arg-type]


def sources_of(path: Path) -> List[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in data["cells"]]


def fix_apply(tmp_path: Path, text: str) -> Path:
    target = tmp_path / "nb.ipynb"
    target.write_bytes(text.encode("utf-8"))
    result = cli(["fix", "nb.ipynb", "--apply", "--unsafe-fixes"], tmp_path)
    assert "Traceback" not in result.stderr and result.returncode == 0, result.stderr
    return target


def test_a_cell_marker_in_user_code_loses_nothing(tmp_path: Path) -> None:
    cell = "# torchlint: notebook cell 3\nx = 1\n" + LOADER + "\ny = 2"
    target = fix_apply(tmp_path, notebook(IMPORTS, cell, "# torchlint: notebook cell 1\nz = 3"))
    assert sources_of(target) == [
        IMPORTS,
        "# torchlint: notebook cell 3\nx = 1\n" + FIXED_LOADER + "\ny = 2",
        "# torchlint: notebook cell 1\nz = 3",
    ]


def test_fix_keeps_every_byte_outside_the_fixed_source(tmp_path: Path) -> None:
    # Tab-indented JSON with CRLF line breaks, non-ASCII text, an output and
    # a cell stored as one string.
    text = notebook(IMPORTS + "\n# café ☕", "print('é')", "x = 1\n" + LOADER + "\ny = 2", ("z = 1\n",),
                    indent="\t").replace("\n", "\r\n")
    data = json.loads(text)
    data["cells"][1]["outputs"] = [{"name": "stdout", "output_type": "stream", "text": ["é\n"]}]
    text = json.dumps(data, indent="\t", ensure_ascii=False).replace("\n", "\r\n") + "\r\n"
    start = text.rindex('"source": [', 0, text.index("x = 1")) + len('"source": ')
    end = text.index("]", start) + 1
    target = fix_apply(tmp_path, text)
    after = target.read_bytes().decode("utf-8")
    assert after.startswith(text[:start]) and after.endswith(text[end:])
    middle = after[start : len(after) - len(text) + end]
    assert middle == '[\r\n\t\t\t\t"x = 1\\n",\r\n\t\t\t\t"' + FIXED_LOADER + '\\n",\r\n\t\t\t\t"y = 2"\r\n\t\t\t]'


def test_line_separator_in_a_string_survives(tmp_path: Path) -> None:
    cell = 's = "a\u2028b"\n%time f()\n' + LOADER
    target = fix_apply(tmp_path, notebook(IMPORTS, cell))
    data = json.loads(target.read_text(encoding="utf-8"))
    assert data["cells"][1]["source"] == ['s = "a\u2028b"\n', "%time f()\n", FIXED_LOADER]


def test_comment_and_magic_of_the_same_text_keep_their_order(tmp_path: Path) -> None:
    cell = "#timeit x = 1\n%timeit x = 1\n" + LOADER
    target = fix_apply(tmp_path, notebook(IMPORTS, cell, "%timeit x = 1\n#timeit x = 1\n" + LOADER))
    assert sources_of(target)[1:] == [
        "#timeit x = 1\n%timeit x = 1\n" + FIXED_LOADER,
        "%timeit x = 1\n#timeit x = 1\n" + FIXED_LOADER,
    ]


def test_import_and_decorator_fixes_around_magics(tmp_path: Path) -> None:
    # TL301 inserts `import torch` before the first statement (here a masked
    # magic) and decorates a function that holds a magic line.
    first = "%matplotlib inline\nfrom torch import nn"
    second = "def evaluate(model, loader):\n    model.eval()\n    %time warm()\n    for x in loader:\n        model(x)"
    target = fix_apply(tmp_path, notebook(first, second))
    assert sources_of(target) == ["import torch\n" + first, "@torch.no_grad()\n" + second]


def test_an_edit_rewriting_a_magic_line_carries_it_or_is_refused() -> None:
    layout = load(notebook("for i in r:\n    %time f(i)\n    g(i)")).layout()
    assert layout.text == "for i in r:\n    0#ime f(i)\n    g(i)\n"
    rewritten = "with ctx:\n    for i in r:\n        0#ime f(i)\n        g(i)\n"
    moved = layout.after([Edit(0, len(layout.text), rewritten)], rewritten)
    assert moved is not None
    assert moved.parts[0].source == "with ctx:\n    for i in r:\n        %time f(i)\n        g(i)"
    cut = layout.text.index("ime")
    assert layout.after([Edit(cut, cut + 3, "x")], layout.text.replace("ime", "x")) is None
    twice = rewritten + "0#ime f(i)\n"
    assert layout.after([Edit(0, len(layout.text), twice)], twice) is None
    two = load(notebook("%aa\n%bb")).layout()
    swapped = "0#b\n0#a\n"  # masks may move with an edit, but never past each other
    assert two.after([Edit(0, len(two.text), swapped)], swapped) is None


def test_an_edit_crossing_cells_is_refused() -> None:
    layout = load(notebook("x = 1", "y = 2")).layout()
    assert layout.text == "x = 1\ny = 2\n"
    assert layout.after([Edit(4, 8, "")], "x = = 2\n") is None
    inserted = layout.after([Edit(6, 6, "z = 3\n")], "x = 1\nz = 3\ny = 2\n")
    assert inserted is not None and [p.source for p in inserted.parts] == ["x = 1", "z = 3\ny = 2"]


@pytest.mark.parametrize("source", [
    "%time f()\n  !ls -la \\\n   --color\nx = 1\r?obj\rs = \"a?\"",
    "files = !ls\nmodel??\nif ready:  # are we?\n    pass",
    "doc = \"\"\"Is it?\n%not a magic\n\"\"\"\nx = (1\n% 2)\nd[k] = %env A",
    "torch.nn.Linear?\r\nprint('x')??\r\n",
])
def test_masks_are_exactly_reversible(source: str) -> None:
    masked, masks = mask_magics(source)
    assert len(masked) == len(source)
    assert [m.start() for m in re.finditer("\r\n|\r|\n", masked)] == \
        [m.start() for m in re.finditer("\r\n|\r|\n", source)]
    assert apply_masks(masked, masks, masked=False) == source
    assert masks


def test_masks_never_hit_strings_or_comments() -> None:
    source = 'doc = """Is it?\n%not a magic\n!nor this\n"""\nx = (1\n% 2)\ny = 1  # is it?\n#%comment\nz = "q?"'
    assert mask_magics(source) == (source, ())
    masked, _ = mask_magics("x = 1\n%time f()\n!ls\nobj?\nfiles = !ls\n  ?obj")
    assert masked == "x = 1\n0#ime f()\n0#s\n0#j?\n0#les = !ls\n  0#bj"


@pytest.mark.slow  # over 4 s on 2 busy cores; `pytest -m slow` (run by .ci/run) keeps it
@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_python_without_ipython_syntax_is_never_masked(source: str) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, "<cell>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        assume(False)
    assert mask_magics(source) == (source, ())


@settings(max_examples=100, deadline=None)  # long run: bench/fuzz.py
@given(st.text(alphabet="%!?;/,=#'\"\\()[] \tx1\n\r\u2028", max_size=60))
def test_masking_keeps_every_offset_and_undoes_exactly(source: str) -> None:
    masked, masks = mask_magics(source)
    assert len(masked) == len(source)
    assert apply_masks(masked, masks, masked=False) == source
    for mask in masks:
        assert source[mask.start : mask.start + len(mask.original)] == mask.original
        assert "\n" not in mask.masked and "\r" not in mask.masked


def _cell_cases() -> List[Any]:
    """Every rule fixture (its ``*.fixed.py`` expected output adds no notebook
    case: fewer findings through the same cell layer).  The default run takes
    one per rule folder, the first with a fix to compare if there is one (four
    lints and fixes of each cost about 0.15 s of CPU); ``pytest -m slow``
    (run by .ci/run) takes the others."""
    cases: List[Any] = []
    seen: Set[str] = set()
    fixtures = sorted(p for p in NOTEBOOK.parent.parent.glob("TL*/*.py") if not p.name.endswith(".fixed.py"))
    fixed = [p for p in fixtures if p.with_name(p.stem + ".fixed.py").exists()]
    for fixture in fixed + [p for p in fixtures if p not in fixed]:
        marks = [pytest.mark.slow] if fixture.parent.name in seen else []
        seen.add(fixture.parent.name)
        cases.append(pytest.param(fixture, marks=marks, id=fixture.name))
    return sorted(cases, key=lambda case: case.values[0])


@pytest.mark.parametrize("fixture", _cell_cases())
def test_a_cell_is_linted_and_fixed_like_the_same_python_file(fixture: Path) -> None:
    source = fixture.read_text(encoding="utf-8")
    config = LintConfig(rules=all_rules())
    text = notebook((source,))
    found, _ = lint_notebook(text, "nb.ipynb", config)
    expected = lint_source(source, "nb.ipynb", config)
    # A message that cites another line names it in the cell: "cell 1, line 12".
    assert [(d.code, d.start, d.end, d.message) for d in found] == \
        [(d.code, d.start, d.end, re.sub(r"\bline (\d+)", r"cell 1, line \1", d.message)) for d in expected]
    assert all(d.cell == 1 for d in found)
    output, result, _ = fix_notebook(text, "nb.ipynb", config, unsafe=True)
    assert json.loads(output)["cells"][0]["source"] == fix_text(source, "nb.ipynb", config, unsafe=True).source


def concise(tmp_path: Path, text: str, *extra: str) -> List[str]:
    (tmp_path / "nb.ipynb").write_text(text, encoding="utf-8")
    result = cli(["check", "nb.ipynb", "--output-format", "concise", *extra], tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    return [line.split(" `")[0] for line in result.stdout.splitlines() if line.startswith("nb.ipynb")]


def test_question_mark_in_a_comment_or_string_is_not_help(tmp_path: Path) -> None:
    text = notebook(IMPORTS, "if ready:  # are we?\n    " + LOADER,
                    'doc = """Is it ready?\n' + LOADER + '\n"""', "model?\n?model\n" + LOADER)
    assert concise(tmp_path, text) == [
        "nb.ipynb:cell 2, line 2, column 14: TL201",
        "nb.ipynb:cell 4, line 3, column 10: TL201",
    ]
    target = fix_apply(tmp_path, text)
    assert sources_of(target)[2] == 'doc = """Is it ready?\n' + LOADER + '\n"""'


def test_magic_alone_in_a_block_parses(tmp_path: Path) -> None:
    text = notebook(IMPORTS, "for i in range(3):\n    !echo {i}\nfiles = !ls\n" + LOADER)
    assert concise(tmp_path, text) == ["nb.ipynb:cell 2, line 4, column 10: TL201"]


def test_cr_only_cells_get_right_lines(tmp_path: Path) -> None:
    text = notebook((IMPORTS.replace("\n", "\r") + "\r",), ("x = 1\r" + LOADER,), "y = 2\n" + LOADER)
    assert concise(tmp_path, text) == ["nb.ipynb:cell 2, line 2, column 10: TL201", "nb.ipynb:cell 3, line 2, column 10: TL201"]
    target = fix_apply(tmp_path, text)
    assert sources_of(target) == [IMPORTS.replace("\n", "\r") + "\r", "x = 1\r" + FIXED_LOADER,
                                  "y = 2\n" + FIXED_LOADER]


def test_syntax_error_names_its_cell_and_the_other_cells_are_linted(tmp_path: Path) -> None:
    broken = ["x = (1,", "y = 2\ndef f(:\n    pass"]
    text = notebook(IMPORTS, broken[0], LOADER, broken[1])
    # Each broken cell's error is the one its text alone gets (IPython
    # compiles every cell alone), and the cells that parse are still linted.
    for number, cell in enumerate(broken):
        (tmp_path / f"cell{number}.py").write_text(cell + "\n", encoding="utf-8")
    alone = cli(["check", "cell0.py", "cell1.py", "--output-format", "concise"], tmp_path).stdout.splitlines()
    (tmp_path / "nb.ipynb").write_text(text, encoding="utf-8")
    found = cli(["check", "nb.ipynb", "--output-format", "concise"], tmp_path).stdout.splitlines()
    def in_cell(line: str, name: str, cell: int) -> str:
        return re.sub(rf"^{re.escape(name)}:(\d+):(\d+):", rf"nb.ipynb:cell {cell}, line \1, column \2:", line)

    assert found[:3] == [in_cell(alone[0], "cell0.py", 2), found[1], in_cell(alone[1], "cell1.py", 4)]
    assert found[1].startswith("nb.ipynb:cell 3, line 1, column 10: TL201") and " TL000 " in found[0]
    # The broken cells are left alone and make `fix` exit 1; the others are fixed.
    result = cli(["fix", "nb.ipynb", "--apply", "--unsafe-fixes"], tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert sources_of(tmp_path / "nb.ipynb") == [IMPORTS, broken[0], FIXED_LOADER, broken[1]]


def test_code_frames_show_the_real_cell_text(tmp_path: Path) -> None:
    text = notebook(IMPORTS, "!pip install x\nfiles = !ls\n" + LOADER)
    (tmp_path / "nb.ipynb").write_text(text, encoding="utf-8")
    result = cli(["check", "nb.ipynb", "--output-format", "full"], tmp_path)
    assert "1 | !pip install x" in result.stdout and "2 | files = !ls" in result.stdout
    assert "#ip" not in result.stdout and "#iles" not in result.stdout and "0#" not in result.stdout


def test_machine_formats_name_the_cell(tmp_path: Path) -> None:
    (tmp_path / "nb.ipynb").write_text(notebook(IMPORTS, "x = 1\n" + LOADER), encoding="utf-8")

    def output(fmt: str) -> str:
        return cli(["check", "nb.ipynb", "--output-format", fmt], tmp_path).stdout

    [item] = json.loads(output("json"))
    assert item["cell"] == 2 and item["location"] == {"row": 2, "column": 10}
    assert "nb.ipynb:cell 2, line 2, column 10: TL201" in output("github")
    [sarif] = json.loads(output("sarif"))["runs"][0]["results"]
    assert sarif["properties"]["cell"] == 2 and sarif["properties"]["cellLine"] == 2
    assert sarif["message"]["text"].startswith("cell 2, line 2: ")
    assert "fixes" not in sarif  # its edits are cell offsets, not offsets in the .ipynb file


@pytest.mark.parametrize("indent", [1, None])
@pytest.mark.parametrize("stored", ["lines", "one string"])
def test_sarif_and_github_point_at_the_ipynb_line_that_holds_the_finding(
        tmp_path: Path, indent: object, stored: str) -> None:
    # Cells stored as a list of lines (Jupyter's way) or as one string, in an
    # indented file or all on one line; a non-ASCII character and an escaped
    # quote before the finding shift the JSON columns.
    before = 'note = "résumé \\"quoted\\""  # é\n'
    cells = [IMPORTS, "x = 1\n" + before + "y = 2; " + LOADER]
    text = notebook(*[(c,) if stored == "one string" else c for c in cells], indent=indent)
    (tmp_path / "nb.ipynb").write_text(text, encoding="utf-8")
    file_lines = text.splitlines()

    [sarif] = json.loads(cli(["check", "nb.ipynb", "--output-format", "sarif"], tmp_path).stdout)["runs"][0]["results"]
    region = sarif["locations"][0]["physicalLocation"]["region"]
    assert sarif["properties"] == {"cell": 2, "cellLine": 3, "cellColumn": 17}
    json_line = file_lines[region["startLine"] - 1]
    # The region starts at the call in the JSON text and ends where it does.
    assert json_line[region["startColumn"] - 1:].startswith("DataLoader(ds, batch_size=4)")
    assert json_line[region["startColumn"] - 1:region["endColumn"] - 1] == "DataLoader(ds, batch_size=4)"
    assert region["startLine"] == region["endLine"]
    if stored == "lines" and indent is not None:
        assert json_line.strip().startswith('"y = 2; loader = ')

    github = cli(["check", "nb.ipynb", "--output-format", "github"], tmp_path).stdout
    assert f"line={region['startLine']},col={region['startColumn']}," in github
    assert "title=torchlint (TL201) at cell 2%2C line 3," in github


def test_stdin_notebook_is_linted_and_fixed_as_a_notebook(tmp_path: Path) -> None:
    text = notebook(IMPORTS, "%time f()\n" + LOADER)
    run = partial(run_in_process, cwd=tmp_path, stdin=text)
    checked = run(["check", "-", "--stdin-filename", "nb.ipynb", "--output-format", "concise"])
    assert checked.stdout.splitlines()[0].startswith("nb.ipynb:cell 2, line 2, column 10: TL201"), checked.stdout
    fixed = run(["fix", "-", "--stdin-filename", "nb.ipynb", "--unsafe-fixes"])
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout == text.replace(LOADER, FIXED_LOADER)


def test_baseline_survives_reformatted_json(tmp_path: Path) -> None:
    cells = [IMPORTS, "x = 1\n" + LOADER]
    (tmp_path / "nb.ipynb").write_text(notebook(*cells), encoding="utf-8")
    written = cli(["check", "nb.ipynb", "--write-baseline", "base.json"], tmp_path)
    assert written.returncode == 0, written.stderr
    entry = json.loads((tmp_path / "base.json").read_text())["findings"][0]
    assert entry["line"] == LOADER
    # The same cells, written with another indentation and as one string each.
    (tmp_path / "nb.ipynb").write_text(notebook(*[(c,) for c in cells], indent=4), encoding="utf-8")
    again = cli(["check", "nb.ipynb", "--baseline", "base.json"], tmp_path)
    assert again.returncode == 0, again.stdout


def test_a_message_citing_another_line_names_its_cell_and_line(tmp_path: Path) -> None:
    loader = "loader = DataLoader(ds, batch_size=4, num_workers=2)"
    copy = "for x, y in loader:\n    x = x.cuda()\n    loss = model(x)"
    text = notebook(IMPORTS, "# data\n" + loader, "model = Net()\n" + copy)
    (tmp_path / "nb.ipynb").write_text(text, encoding="utf-8")
    [item] = json.loads(cli(["check", "nb.ipynb", "--output-format", "json", "--select", "TL202"], tmp_path).stdout)
    assert item["cell"] == 2 and item["location"]["row"] == 2
    # The copy is on line 4 of the joined cells; the person reads cell 3, line 3.
    assert "copied to the GPU on cell 3, line 3:" in item["message"], item["message"]


CPU_THEN_CUDA = [
    "import torch\nfrom torch import nn\nmodel = nn.Linear(8, 1)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)",
    # A CPU training loop...
    "for x, y in loader:\n    loss = nn.functional.mse_loss(model(x), y)\n    loss.backward()\n"
    "    optimizer.step()\n    total = loss.item()",
    # ...and, in a later cell, the same loop on the GPU.
    "model = model.cuda()\nfor x, y in loader:\n    loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())\n"
    "    loss.backward()\n    optimizer.step()\n    total = loss.item()",
]


def test_device_facts_follow_the_order_cells_run_in(tmp_path: Path) -> None:
    (tmp_path / "nb.ipynb").write_text(notebook(*CPU_THEN_CUDA), encoding="utf-8")
    found = json.loads(cli(["check", "nb.ipynb", "--output-format", "json", "--select", "TL103,TL602"],
                           tmp_path).stdout)
    # The loop of cell 2 runs before anything uses CUDA: no host sync waits
    # for a GPU there, and the suggestion is about cell 3's loop.
    assert sorted((item["code"], item["cell"], item["location"]["row"]) for item in found) == [
        ("TL103", 3, 6), ("TL602", 3, 2),
    ]
    # The same code as one script is one program: both loops are CUDA loops.
    (tmp_path / "script.py").write_text("\n".join(CPU_THEN_CUDA) + "\n", encoding="utf-8")
    script = json.loads(cli(["check", "script.py", "--output-format", "json", "--select", "TL103,TL602"],
                            tmp_path).stdout)
    assert sorted((item["code"], item["location"]["row"]) for item in script) == [
        ("TL103", 9), ("TL103", 15), ("TL602", 5),
    ]
    # A cell that only defines the training function, called after the move: a CUDA loop.
    defined_first = [CPU_THEN_CUDA[0], "def train():\n" + "\n".join("    " + line for line in
                                                                     CPU_THEN_CUDA[1].splitlines()),
                     "model = model.cuda()\ntrain()"]
    (tmp_path / "nb.ipynb").write_text(notebook(*defined_first), encoding="utf-8")
    found = json.loads(cli(["check", "nb.ipynb", "--output-format", "json", "--select", "TL103"], tmp_path).stdout)
    assert [(item["code"], item["cell"]) for item in found] == [("TL103", 2)]
