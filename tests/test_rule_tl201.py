"""TL201 dataloader-without-workers: what is reported, what is not, and the fix."""

from __future__ import annotations

from typing import List

import pytest

import torchlint
from torchlint.model import Applicability
from torchlint.ruleapi.registry import by_code_or_name
from torchlint.lint.settings import Settings

SETTINGS = Settings(select=("TL201",))
GUARD = 'if __name__ == "__main__":\n    main()\n'
"""A script's main guard: with one (and no loop over the loader when the
file is imported), workers can start under the spawn start method and the
fix is offered."""


def lines(source: str, settings: Settings = SETTINGS) -> List[int]:
    return [d.start.line for d in torchlint.check_source(source, "x.py", settings) if d.code == "TL201"]


def fixed(source: str, settings: Settings = SETTINGS) -> str:
    return torchlint.fix_source(source, "x.py", settings, unsafe=True).source


@pytest.mark.parametrize(
    "imports, call",
    [
        ("from torch.utils.data import DataLoader", "DataLoader"),
        ("import torch", "torch.utils.data.DataLoader"),
        ("import torch.utils.data as tud", "tud.DataLoader"),
        ("from torch.utils import data", "data.DataLoader"),
        ("from torch.utils.data.dataloader import DataLoader", "DataLoader"),
        ("from torch.utils.data import DataLoader as DL", "DL"),
        ("from torch.utils.data import *", "DataLoader"),
    ],
)
def test_every_import_spelling_is_resolved(imports: str, call: str) -> None:
    source = f"{imports}\nloader = {call}(ds, batch_size=32)\n{GUARD}"
    assert lines(source) == [2]
    assert f"{call}(ds, batch_size=32, num_workers=4)\n" in fixed(source)


@pytest.mark.parametrize(
    "args",
    [
        "ds",
        "ds, batch_size=8, shuffle=True",
        "dataset=ds",
        "ds, num_workers=0",
        "ds, num_workers=(0)",
        "ds, 8, True, None, None, 0",
        "ds, 8, True",
        "*args, num_workers=0",
        "ds, num_workers=0, **extra",
    ],
)
def test_missing_or_zero_workers_are_reported(args: str) -> None:
    source = f"from torch.utils.data import DataLoader\nloader = DataLoader({args})\n"
    assert lines(source) == [2]


@pytest.mark.parametrize(
    "args",
    [
        "ds, num_workers=4",
        "ds, num_workers=1",
        "ds, num_workers=args.workers",
        "ds, num_workers=0 if debug else 8",
        "ds, num_workers=os.cpu_count()",
        "ds, 8, True, None, None, workers",
        "ds, 8, True, None, None, 2",
        "ds, **loader_kwargs",
        "ds, batch_size=8, **cfg.loader",
        "*loader_args",
        "ds, *rest",
    ],
)
def test_nonzero_unknown_or_forwarded_workers_are_quiet(args: str) -> None:
    source = f"from torch.utils.data import DataLoader\nloader = DataLoader({args})\n"
    assert lines(source) == []


def test_lookalikes_are_quiet() -> None:
    source = (
        "from torch_geometric.loader import DataLoader\n"
        "from torch.utils.data import DataLoader as TorchLoader\n"
        "a = DataLoader(graphs)\n"
        "def build(TorchLoader):\n"
        "    return TorchLoader(ds)\n"
        "b = functools.partial(TorchLoader, batch_size=4)\n"
        "c = 'DataLoader(ds)'\n"
        "class MyLoader(TorchLoader):\n"
        "    pass\n"
    )
    assert lines(source) == []


def test_a_file_without_torch_imports_is_quiet() -> None:
    assert lines("loader = DataLoader(ds)\n") == []


def test_message_names_the_problem() -> None:
    source = "from torch.utils.data import DataLoader\na = DataLoader(ds)\nb = DataLoader(ds, num_workers=0)\n" + GUARD
    first, second = torchlint.check_source(source, "x.py", SETTINGS)
    assert "without `num_workers`" in first.message
    assert "`num_workers=0`" in second.message
    assert first.fix is not None and first.fix.applicability is Applicability.UNSAFE


def test_the_fix_is_unsafe_only() -> None:
    source = "from torch.utils.data import DataLoader\nloader = DataLoader(ds)\n"
    result = torchlint.fix_source(source, "x.py", SETTINGS, unsafe=False)
    assert not result.changed and result.source == source


def test_fix_replaces_a_literal_zero_in_place() -> None:
    source = (
        "from torch.utils.data import DataLoader\n"
        "a = DataLoader(ds, num_workers=0, pin_memory=True)\n"
        "b = DataLoader(ds, 8, True, None, None, 0, collate)\n"
    ) + GUARD
    assert fixed(source) == (
        "from torch.utils.data import DataLoader\n"
        "a = DataLoader(ds, num_workers=4, pin_memory=True)\n"
        "b = DataLoader(ds, 8, True, None, None, 4, collate)\n"
    ) + GUARD


def test_fix_follows_one_argument_per_line_layout() -> None:
    source = (
        "from torch.utils.data import DataLoader\n"
        "def build(ds):\n"
        "    return DataLoader(\n"
        "        ds,  # the training split\n"
        "        batch_size=64  # fits in 16 GB\n"
        "    )\n"
        "loader = DataLoader(\n"
        "    ds,\n"
        "    shuffle=True,\n"
        ")\n"
    ) + GUARD
    assert fixed(source) == (
        "from torch.utils.data import DataLoader\n"
        "def build(ds):\n"
        "    return DataLoader(\n"
        "        ds,  # the training split\n"
        "        batch_size=64,  # fits in 16 GB\n"
        "        num_workers=4\n"
        "    )\n"
        "loader = DataLoader(\n"
        "    ds,\n"
        "    shuffle=True,\n"
        "    num_workers=4,\n"
        ")\n"
    ) + GUARD


def test_fix_follows_aligned_and_spaced_layouts() -> None:
    source = (
        "from torch.utils.data import DataLoader\n"
        "a = DataLoader(ds,\n"
        "               batch_size = 8)\n"
        "b = DataLoader(\n"
        "    ds\n"
        ")\n"
    ) + GUARD
    assert fixed(source) == (
        "from torch.utils.data import DataLoader\n"
        "a = DataLoader(ds,\n"
        "               batch_size = 8,\n"
        "               num_workers = 4)\n"
        "b = DataLoader(\n"
        "    ds,\n"
        "    num_workers=4\n"
        ")\n"
    ) + GUARD


def test_num_workers_option_sets_the_fixed_value() -> None:
    settings = Settings(select=("TL201",), rule_options={"TL201": {"num-workers": 12}})
    source = "from torch.utils.data import DataLoader\na = DataLoader(ds)\nb = DataLoader(ds, num_workers=0)\n" + GUARD
    assert fixed(source, settings) == (
        "from torch.utils.data import DataLoader\n"
        "a = DataLoader(ds, num_workers=12)\n"
        "b = DataLoader(ds, num_workers=12)\n"
    ) + GUARD


def test_a_non_positive_option_reports_without_a_fix() -> None:
    settings = Settings(select=("TL201",), rule_options={"TL201": {"num-workers": 0}})
    (diagnostic,) = torchlint.check_source(
        "from torch.utils.data import DataLoader\na = DataLoader(ds)\n", "x.py", settings
    )
    assert diagnostic.fix is None


def test_hint_suggests_only_the_missing_options() -> None:
    source = (
        "from torch.utils.data import DataLoader\n"
        "a = DataLoader(ds)\n"
        "b = DataLoader(ds, pin_memory=True)\n"
        "c = DataLoader(ds, pin_memory=True, persistent_workers=False)\n"
    )
    a, b, c = (d.hint or "" for d in torchlint.check_source(source, "x.py", SETTINGS))
    assert "`pin_memory=True`" in a and "`persistent_workers=True`" in a
    assert "pin_memory" not in b and "`persistent_workers=True`" in b
    assert "pin_memory" not in c and "persistent_workers" not in c


def test_hint_recognises_an_in_memory_tensor_dataset() -> None:
    source = (
        "from torch.utils.data import DataLoader, TensorDataset\n"
        "ds = TensorDataset(x, y)\n"
        "a = DataLoader(ds, batch_size=8)\n"
        "b = DataLoader(TensorDataset(x, y))\n"
        "c = DataLoader(other)\n"
    )
    a, b, c = (d.hint or "" for d in torchlint.check_source(source, "x.py", SETTINGS))
    assert "TensorDataset" in a and "TensorDataset" in b
    assert "TensorDataset" not in c


def test_noqa_silences() -> None:
    source = "from torch.utils.data import DataLoader\na = DataLoader(ds)  # noqa: TL201\n"
    assert lines(source) == []


def test_metadata_and_docs() -> None:
    rule = by_code_or_name("dataloader-without-workers")
    assert rule is not None and rule.code == "TL201"
    assert rule.options["num-workers"].default == 4
    assert rule.trigger_words == ()  # a call of a project function that builds a loader need not name `DataLoader`
    doc = rule.documentation()
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Fix safety",
                    "## Options", "## Source guide"):
        assert heading in doc
    assert "if __name__ == \"__main__\":" in doc


# -- where workers cannot start under the spawn start method: no fix, and why ----------

SPAWN = "spawn start method (macOS, Windows, Python 3.14 on Linux)"


def only(source: str, path: str = "x.py", settings: Settings = SETTINGS) -> "torchlint.Diagnostic":
    [found] = [d for d in torchlint.check_source(source, path, settings) if d.code == "TL201"]
    return found


def test_an_unguarded_script_gets_no_fix_and_the_message_says_why() -> None:
    source = "from torch.utils.data import DataLoader\nloader = DataLoader(ds)\nfor x in loader:\n    step(x)\n"
    found = only(source)
    assert found.fix is None
    assert "no fix is offered: the loader is built when the file is imported" in found.message
    assert SPAWN in found.message and 'not under `if __name__ == "__main__":`' in found.message
    assert fixed(source) == source
    # The same loop in a function the module calls at import time: no fix either.
    called = ("from torch.utils.data import DataLoader\ndef main():\n    for x in DataLoader(ds):\n"
              "        step(x)\nmain()\n")
    assert only(called).fix is None
    # Called only from the main guard: the fix is offered.
    guarded = called.replace("main()\n", 'if __name__ == "__main__":\n    main()\n')
    assert guarded.count("main()") == 2 and only(guarded).fix is not None


def test_a_guarded_script_that_iterates_the_loader_at_import_gets_no_fix() -> None:
    source = ("from torch.utils.data import DataLoader\nloader = DataLoader(ds)\nfirst = [x for x in loader]\n"
              "for x in loader:\n    step(x)\n" + GUARD)
    found = only(source)
    assert found.fix is None and "the loader is iterated when the file is imported" in found.message


def test_dataset_class_defined_in_a_notebook_gets_no_fix() -> None:
    import json

    def notebook(*cells: str) -> str:
        return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                      "source": cell} for cell in cells], "metadata": {}, "nbformat": 4,
                           "nbformat_minor": 5})

    from torchlint.lint.engine import LintConfig
    from torchlint.lint.notebook import lint_notebook
    from torchlint.ruleapi.registry import all_rules

    config = LintConfig(rules=tuple(r for r in all_rules() if r.code == "TL201"))
    own = notebook("from torch.utils.data import DataLoader, Dataset\n"
                   "class Squares(Dataset):\n    def __len__(self):\n        return 8\n"
                   "    def __getitem__(self, i):\n        return i * i\n",
                   "loader = DataLoader(Squares(), batch_size=4)\nfor x in loader:\n    print(x)\n")
    [found], _ = lint_notebook(own, "nb.ipynb", config)
    assert found.fix is None
    assert "the dataset class `Squares` is defined in this notebook" in found.message and SPAWN in found.message
    # A dataset from a library is imported by the workers: the fix is offered,
    # in a notebook even at the top level (workers do not run the notebook again).
    library = notebook("from torch.utils.data import DataLoader\nfrom torchvision.datasets import MNIST\n",
                       "loader = DataLoader(MNIST('.'), batch_size=4)\nfor x in loader:\n    print(x)\n")
    [found], _ = lint_notebook(library, "nb.ipynb", config)
    assert found.fix is not None


def test_functions_workers_cannot_unpickle_withhold_the_fix() -> None:
    head = "from torch.utils.data import DataLoader\n"
    assert "`collate_fn` is a lambda" in only(head + "def f(ds):\n    return DataLoader(ds, collate_fn=lambda b: b)\n").message
    nested = head + "def f(ds):\n    def init(i):\n        pass\n    return DataLoader(ds, worker_init_fn=init)\n"
    found = only(nested)
    assert found.fix is None and "`worker_init_fn` is `init`, defined inside a function" in found.message
    module_level = head + "def init(i):\n    pass\ndef f(ds):\n    return DataLoader(ds, worker_init_fn=init)\n"
    assert only(module_level).fix is not None


@pytest.mark.parametrize("path", ["test_data.py", "data_test.py", "conftest.py", "tests/helpers.py"])
def test_explicit_zero_in_test_files_is_a_choice(path: str) -> None:
    source = "from torch.utils.data import DataLoader\ndef f(ds):\n    return DataLoader(ds, num_workers=0)\n"
    assert [d for d in torchlint.check_source(source, path, SETTINGS) if d.code == "TL201"] == []
    assert only(source, "src/data.py").code == "TL201"
    reporting = Settings(select=("TL201",), rule_options={"TL201": {"test-files": True}})
    assert only(source, path, reporting).code == "TL201"
    missing = source.replace(", num_workers=0", "")
    assert only(missing, path).code == "TL201"  # a missing num_workers is still reported


def test_a_script_named_like_a_test_file_is_code_like_any_other() -> None:
    """`test_model.py` that runs under `if __name__ == "__main__":` is an
    evaluation script, not a pytest module: its explicit zero is reported;
    one that imports pytest (or has no main block) is a test module."""
    body = "from torch.utils.data import DataLoader\ndef f(ds):\n    return DataLoader(ds, num_workers=0)\n"
    script = body + "if __name__ == '__main__':\n    f([1])\n"
    assert only(script, "test_model.py").code == "TL201"
    assert only(script.replace("'__main__'", '"__main__"'), "eval_test.py").code == "TL201"
    with_pytest = "import pytest\n" + script
    assert [d for d in torchlint.check_source(with_pytest, "test_model.py", SETTINGS) if d.code == "TL201"] == []
    assert [d for d in torchlint.check_source(body, "test_model.py", SETTINGS) if d.code == "TL201"] == []
    assert [d for d in torchlint.check_source(script, "conftest.py", SETTINGS) if d.code == "TL201"] == []


def test_a_test_module_with_a_main_block_stays_a_test_module() -> None:
    """A file pytest collects that also runs itself (`if __name__ ==
    "__main__": test_model()`), or runs torch's test harness, is a test
    module: it imports a test framework or defines a test pytest can call."""
    body = "from torch.utils.data import DataLoader\ndef f(ds):\n    return DataLoader(ds, num_workers=0)\n"
    main = "if __name__ == '__main__':\n    f([1])\n"
    runnable = body + "def test_loader():\n    f([1])\n" + main
    harness = "from torch.testing._internal import common_utils\n" + body + main
    with_class = body + "class TestLoader:\n    pass\n" + main
    for source in (runnable, harness, with_class):
        assert [d for d in torchlint.check_source(source, "test_model.py", SETTINGS) if d.code == "TL201"] == []
    needs_arguments = body + "def test(model, loader):\n    f(loader)\n" + main
    assert only(needs_arguments, "test_model.py").code == "TL201"
