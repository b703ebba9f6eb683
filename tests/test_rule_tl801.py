"""TL801 unsafe-torch-load where the project saves whole objects: said, and no fix."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Dict, List

import pytest

import torchlint
from conftest import run_in_process
from torchlint.analysis.saves import whole_object_saves
from torchlint.lint.settings import Settings

LOAD = "import torch\nstate = torch.load('checkpoint.pt')\n"
OLD_TORCH = Settings(select=("TL801",), torch_version="2.5")


def saves(source: str) -> List[int]:
    tree = ast.parse(source)
    imports = {"torch": "torch", "nn": "torch.nn", "models": "torchvision.models", "data": "data"}
    return whole_object_saves(tree, imports, lambda name: name == "data.Corpus")


@pytest.mark.parametrize(("source", "lines"), [
    ("class Net(nn.Module):\n    pass\nmodel = Net()\ntorch.save(model, 'm.pt')\n", [4]),
    ("model = models.resnet18()\ncriterion = nn.CrossEntropyLoss()\n"
     "torch.save((model.state_dict(), criterion), 'm.pt')\n", [3]),
    ("optimizer = torch.optim.SGD(params, lr=0.1)\ntorch.save({'opt': optimizer, 'epoch': 3}, 'c.pt')\n", [2]),
    ("corpus = data.Corpus('wiki')\ntorch.save(corpus, 'c.pt')\n", [2]),
    ("class Trainer:\n    def save(self):\n        torch.save(self, 't.pt')\n", [3]),
    ("class Trainer:\n    def __init__(self):\n        self.model = nn.Linear(2, 2).cuda()\n"
     "    def save(self):\n        torch.save(self.model, 't.pt')\n", [5]),
    # Not whole objects, or not known to be:
    ("model = nn.Linear(2, 2)\ntorch.save(model.state_dict(), 'm.pt')\n", []),
    ("torch.save({'state_dict': model.state_dict(), 'epoch': 3}, 'c.pt')\n", []),
    ("torch.save(torch.zeros(3), 't.pt')\n", []),
    ("x = data.load_everything()\ntorch.save(x, 'x.pt')\n", []),  # a function, not a class
    ("def save(model):\n    torch.save(model, 'm.pt')\n", []),  # a parameter: not known here
    ("import pickle\nmodel = nn.Linear(2, 2)\npickle.dump(model, f)\n", []),
])
def test_whole_object_saves_are_found_from_facts(source: str, lines: List[int]) -> None:
    assert saves(source) == lines


def project(tmp_path: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


TRAIN = (
    "import torch\nfrom torch import nn\nimport data\n\n\nclass Net(nn.Module):\n    pass\n\n\n"
    "corpus = data.Corpus('wiki')\nmodel = Net()\ncriterion = nn.CrossEntropyLoss()\n"
    "torch.save((model, criterion), 'all.pt')\ntorch.save(model.state_dict(), 'weights.pt')\n"
    "torch.save(corpus, 'corpus.pt')\n"
)


def test_a_project_that_saves_whole_objects_gets_the_finding_without_a_fix(tmp_path: Path) -> None:
    project(tmp_path, {"train.py": TRAIN, "data.py": "class Corpus:\n    pass\n", "evaluate.py": LOAD})
    result = run_in_process(["check", ".", "--select", "TL801", "--torch-version", "2.5", "--output-format",
                             "json", "--no-cache"], tmp_path)
    [finding] = json.loads(result.stdout)
    assert finding["filename"] == "evaluate.py" and finding["fix"] is None
    assert "the project saves whole objects with `torch.save` (train.py, line 13 and 1 more)" in finding["message"]
    assert "no fix is offered" in finding["message"]
    # Once the project saves state dicts only, the fix is back.
    project(tmp_path, {"train.py": TRAIN.replace("(model, criterion)", "model.state_dict()")
                       .replace("torch.save(corpus, 'corpus.pt')\n", "")})
    result = run_in_process(["check", ".", "--select", "TL801", "--torch-version", "2.5", "--output-format",
                             "json", "--no-cache"], tmp_path)
    [finding] = json.loads(result.stdout)
    assert finding["fix"] is not None and "whole objects" not in finding["message"]


def test_a_file_linted_alone_reads_its_own_saves() -> None:
    source = "import torch\nfrom torch import nn\nmodel = nn.Linear(2, 2)\ntorch.save(model, 'm.pt')\n" + LOAD
    [finding] = torchlint.check_source(source, "one.py", OLD_TORCH)
    assert finding.fix is None and "(one.py, line 4)" in finding.message
    [plain] = torchlint.check_source(LOAD, "two.py", OLD_TORCH)
    assert plain.fix is not None


def test_the_page_says_what_to_do_first() -> None:
    from torchlint.ruleapi.registry import by_code_or_name

    rule = by_code_or_name("TL801")
    assert rule is not None
    page = rule.documentation()
    assert "saves whole objects" in page and "add_safe_globals" in page and "state_dict()" in page
