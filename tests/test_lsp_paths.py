"""The language server lints a buffer whatever its name (issue 25, item 14):
a name too long for the file system (one part over 255 bytes, or a whole path
over the system's limit) is linted as text with no file behind it, not
answered with "internal error: OSError"."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

pytest.importorskip("pygls")

from torchlint.interfaces.lsp import TorchlintServer, _Linted  # noqa: E402

SOURCE = "import torch.nn as nn\nmodel = nn.DataParallel(net)\n"


class _Server:
    """Just enough of pygls's server to construct the handlers."""

    def feature(self, method: str, options: Any = None) -> Callable[[Any], Any]:
        return lambda function: function


@pytest.mark.parametrize("name", [
    "a" * 300 + ".py",  # one part longer than NAME_MAX
    "/".join(["b" * 200] * 30) + "/x.py",  # the whole path longer than PATH_MAX
])
def test_a_buffer_whose_name_is_too_long_for_the_file_system_is_linted(tmp_path: Path, name: str) -> None:
    server = TorchlintServer(_Server())
    outcome = server._lint_text(f"file://{tmp_path}/{name}", SOURCE, 1)
    assert isinstance(outcome, _Linted), outcome[:300]
    assert [d.code for d in outcome.diagnostics] == ["TL501"]


def test_an_ordinary_name_still_reads_its_neighbours(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\nignore = ['TL501']\n")
    server = TorchlintServer(_Server())
    outcome = server._lint_text(f"file://{tmp_path}/train.py", SOURCE, 1)
    assert isinstance(outcome, _Linted) and outcome.diagnostics == ()
