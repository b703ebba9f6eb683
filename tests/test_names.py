"""The import table resolves names through imports, never by text."""

from __future__ import annotations

from typing import Optional

import libcst as cst
import pytest

from torchlint.analysis.names import ImportTable


def resolve(source: str, expression: str) -> Optional[str]:
    table = ImportTable.from_module(cst.parse_module(source))
    return table.qualified_name(cst.parse_expression(expression))


@pytest.mark.parametrize(
    "source, expression, expected",
    [
        ("import torch", "torch.nn.DataParallel", "torch.nn.DataParallel"),
        ("import torch as th", "th.randn", "torch.randn"),
        ("import torch.nn as nn", "nn.Linear", "torch.nn.Linear"),
        ("from torch import nn", "nn.Conv2d", "torch.nn.Conv2d"),
        ("from torch.nn import DataParallel as DP", "DP", "torch.nn.DataParallel"),
        ("import torch.utils.data as tud", "tud.DataLoader", "torch.utils.data.DataLoader"),
        ("from torch.utils.data.dataloader import DataLoader", "DataLoader", "torch.utils.data.DataLoader"),
        ("from torch.nn.modules.conv import Conv2d", "Conv2d", "torch.nn.Conv2d"),
        ("from torch.nn.parallel import DataParallel", "DataParallel", "torch.nn.DataParallel"),
        ("import torch.nn", "torch.nn.Linear", "torch.nn.Linear"),
        # The optional-import idiom: the name is the module or None, so a use of it is the module's.
        ("try:\n    import torch\nexcept ImportError:\n    torch = None\n", "torch.zeros", "torch.zeros"),
        ("try:\n    from apex import amp\nexcept (ImportError, OSError):\n    amp = None\n", "amp.scale_loss",
         "apex.amp.scale_loss"),
        ("try:\n    import torch\nexcept ModuleNotFoundError:\n    torch = Fake()\n", "torch.zeros", None),
        ("try:\n    import torch\nexcept Exception:\n    torch = None\n", "torch.zeros", None),
        ("import torch\ntorch = None\n", "torch.zeros", None),
        ("if True:\n    from torch import nn\n", "nn.Linear", "torch.nn.Linear"),
        ("from torch.nn import *", "Linear", "torch.nn.Linear"),
        ("import numpy as np", "np.zeros", "numpy.zeros"),
        ("", "torch.zeros", None),
        ("from torch import nn\nclass nn: pass\n", "nn.Linear", None),
        ("from mylib import DataParallel", "DataParallel", "mylib.DataParallel"),
        ("from . import torch", "torch.zeros", None),
    ],
)
def test_qualified_name(source: str, expression: str, expected: Optional[str]) -> None:
    assert resolve(source, expression) == expected


def test_rebinding_to_two_modules_is_ambiguous() -> None:
    source = "import torch as t\nimport tensorflow as t\n"
    assert resolve(source, "t.zeros") is None


def test_local_name_for_module() -> None:
    table = ImportTable.from_module(cst.parse_module("import torch as th\n"))
    assert table.local_name_for("torch") == "th"
    assert table.local_name_for("numpy") is None


def test_function_parameters_hide_imports() -> None:
    table = ImportTable.from_module(cst.parse_module("from torch import nn\n"))
    func = cst.parse_statement("def f(nn): pass")
    assert isinstance(func, cst.FunctionDef)
    table.push_scope(func.params)
    assert table.qualified_name(cst.parse_expression("nn.Linear")) is None
    table.pop_scope()
    assert table.qualified_name(cst.parse_expression("nn.Linear")) == "torch.nn.Linear"
