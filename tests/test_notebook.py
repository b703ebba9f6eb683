"""Notebooks: findings name the cell; fixes rewrite cell sources only."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List

import nbformat

NOTEBOOK = Path(__file__).resolve().parent.parent / "fixtures" / "notebooks" / "finetune.ipynb"


def cli(args: List[str], cwd: Path) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "torchlint", *args, "--no-cache"], cwd=cwd,
                          capture_output=True, text=True)


def test_findings_name_cell_and_line(tmp_path: Path) -> None:
    shutil.copy(NOTEBOOK, tmp_path / "nb.ipynb")
    result = cli(["check", "nb.ipynb", "--output-format", "concise"], tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    located = [line.split(": ")[0] + ": " + line.split(": ")[1].split()[0] for line in lines[:5]]
    assert located == [
        "nb.ipynb:cell 3:2:5: TL101",
        "nb.ipynb:cell 3:3:5: TL101",
        "nb.ipynb:cell 3:4:10: TL201",
        "nb.ipynb:cell 5:2:9: TL501",
        "nb.ipynb:cell 6:1:5: TL301",
    ]
    data = json.loads(cli(["check", "nb.ipynb", "--output-format", "json"], tmp_path).stdout)
    assert [item["cell"] for item in data] == [3, 3, 3, 5, 6]


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
    assert after.cells[4].source == before.cells[4].source  # only TL501, which has no fix
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
    assert sum(1 for line in new_lines if line not in old_lines) == 4
    again = cli(["fix", "nb.ipynb", "--unsafe-fixes"], tmp_path)
    assert again.returncode == 0 and again.stdout == ""


def test_broken_notebook_is_a_diagnostic(tmp_path: Path) -> None:
    (tmp_path / "bad.ipynb").write_text("{not json")
    (tmp_path / "zz.py").write_text("import torch.nn as nn\nm = nn.DataParallel(x)\n")
    result = cli(["check", ".", "--output-format", "concise"], tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert any(line.startswith("bad.ipynb:1:1: TL000") for line in result.stdout.splitlines())
    assert any(line.startswith("zz.py:2:5: TL501") for line in result.stdout.splitlines())
