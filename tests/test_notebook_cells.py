"""A notebook fix stays in the cell of its finding, and every cell it changes
parses on its own (issue 25, item 3): IPython compiles each cell alone, so a
fix the whole virtual module accepts can still break a cell."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import List, Sequence

from conftest import run_in_process

from torchlint.lint.engine import LintConfig
from torchlint.model import Applicability, Diagnostic, Edit, Fix, Position
from torchlint.lint.notebook import cell_refusal, fix_notebook, load
from torchlint.ruleapi.registry import by_code_or_name

TRAINING_CELL = (
    "model.train()\n"
    "for epoch in range(10):\n"
    "    for x in loader:\n"
    "        model(x).sum().backward()\n"
    "        optimizer.step()\n"
    "    model.eval()\n"
    "    print(model(val).mean())"  # a cell's source has no final newline
)


def notebook(*sources: str) -> str:
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
              "source": source.splitlines(keepends=True)} for source in sources]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def sources(text: str) -> List[str]:
    return ["".join(cell["source"]) for cell in json.loads(text)["cells"]]


def parses_alone(source: str) -> bool:
    try:
        ast.parse(source)
    except SyntaxError:
        return False
    return True


def test_an_insertion_after_a_loop_that_ends_a_cell_stays_in_that_cell(tmp_path: Path) -> None:
    """TL306 appends `model.train()` after the loop; it used to land at the
    top of the next cell, indented: an IndentationError there."""
    (tmp_path / "nb.ipynb").write_text(notebook(TRAINING_CELL, "print('done')"), encoding="utf-8")
    result = run_in_process(["fix", "nb.ipynb", "--apply", "--unsafe-fixes", "--no-cache", "--select", "TL306"],
                            tmp_path)
    assert result.returncode == 0 and "Fixed 1 finding" in result.stderr, result.stderr
    first, second = sources((tmp_path / "nb.ipynb").read_text(encoding="utf-8"))
    assert first == TRAINING_CELL + "\n    model.train()"
    assert second == "print('done')"
    assert parses_alone(first) and parses_alone(second)


def test_the_same_insertion_in_the_last_cell(tmp_path: Path) -> None:
    config = LintConfig(rules=(by_code_or_name("TL306"),))
    text, result, _ = fix_notebook(notebook("import torch", TRAINING_CELL), "nb.ipynb", config, unsafe=True)
    assert len(result.applied) == 1
    assert sources(text) == ["import torch", TRAINING_CELL + "\n    model.train()"]


def _diagnostic(line: int, edits: Sequence[Edit]) -> Diagnostic:
    return Diagnostic("nb.ipynb", Position(line, 1), Position(line, 2), "TL999", "test", "m",
                      Fix(tuple(edits), Applicability.SAFE, "d"))


def test_a_fix_leaving_its_cell_unparsable_on_its_own_is_refused() -> None:
    # The module "if ready:\n    run()\n" parses; the second cell alone, indented, does not.
    layout = load(notebook("if ready:", "    run()")).layout()
    assert layout.text == "if ready:\n    run()\n"
    start = layout.text.index("run")
    renamed = _diagnostic(2, [Edit(start, start + 3, "go")])
    trial = layout.text.replace("run", "go")
    assert cell_refusal(layout, trial, [renamed], "nb.ipynb") is not None
    fine = load(notebook("x = 1", "run()")).layout()
    start = fine.text.index("run")
    assert cell_refusal(fine, fine.text.replace("run", "go"), [_diagnostic(2, [Edit(start, start + 3, "go")])],
                        "nb.ipynb") is None


def test_a_fix_reaching_into_another_cell_is_refused() -> None:
    layout = load(notebook("x = 1", "y = 2")).layout()
    across = _diagnostic(1, [Edit(4, 8, "")])
    assert cell_refusal(layout, "x = = 2\n", [across], "nb.ipynb") is not None


def test_an_import_for_a_later_cell_still_goes_to_the_first_cell(tmp_path: Path) -> None:
    """Edits that are not at a cell boundary stay in the cell they lie in (an
    import a fix adds before the first statement)."""
    second = "def evaluate(model, loader):\n    model.eval()\n    for x in loader:\n        model(x)"
    config = LintConfig(rules=(by_code_or_name("TL301"),))
    text, result, _ = fix_notebook(notebook("from torch import nn", second), "nb.ipynb", config, unsafe=True)
    assert sources(text) == ["import torch\nfrom torch import nn", "@torch.no_grad()\n" + second]
    assert all(parses_alone(source) for source in sources(text))
