"""Suppression comments silence exactly what they name."""

from __future__ import annotations

from typing import List, Tuple

import torchlint
from torchlint.settings import Settings

HEADER = "import torch.nn as nn\n"
SELECT = Settings(select=("TL501",))


def lines(source: str) -> List[Tuple[int, str]]:
    return [(d.start.line, d.code) for d in torchlint.check_source(HEADER + source, "s.py", SELECT)]


def test_unsuppressed_finding_is_reported() -> None:
    assert lines("m = nn.DataParallel(x)\n") == [(2, "TL501")]


def test_blanket_noqa() -> None:
    assert lines("m = nn.DataParallel(x)  # noqa\n") == []


def test_noqa_with_matching_and_other_code() -> None:
    assert lines("m = nn.DataParallel(x)  # noqa: TL501\n") == []
    assert lines("m = nn.DataParallel(x)  # noqa: TL101\n") == [(2, "TL501")]
    assert lines("m = nn.DataParallel(x)  # noqa: TL101, TL501\n") == []


def test_trailing_torchlint_ignore_by_code_and_name() -> None:
    assert lines("m = nn.DataParallel(x)  # torchlint: ignore[TL501]\n") == []
    assert lines("m = nn.DataParallel(x)  # torchlint: ignore[data-parallel]\n") == []
    assert lines("m = nn.DataParallel(x)  # torchlint: ignore[TL101]\n") == [(2, "TL501")]


def test_own_line_ignore_covers_the_next_statement_only() -> None:
    source = (
        "# torchlint: ignore[TL501]\n"
        "m = nn.DataParallel(\n"
        "    x,\n"
        ")\n"
        "n = nn.DataParallel(x)\n"
    )
    assert lines(source) == [(6, "TL501")]


def test_own_line_ignore_covers_a_finding_inside_a_multiline_statement() -> None:
    source = "# torchlint: ignore[TL501]\nmodels = [\n    nn.DataParallel(x),\n]\n"
    assert lines(source) == []


def test_noqa_on_last_line_of_multiline_call() -> None:
    assert lines("m = nn.DataParallel(\n    x,\n)  # noqa: TL501\n") == []


def test_file_level_ignores() -> None:
    body = "m = nn.DataParallel(x)\n"
    assert lines("# torchlint: file-ignore[TL501]\n" + body) == []
    assert lines("# torchlint: file-ignore[TL101]\n" + body) == [(3, "TL501")]
    assert lines("# torchlint: skip-file\n" + body) == []


def test_noqa_inside_a_string_is_not_a_comment() -> None:
    assert lines('m = nn.DataParallel("# noqa")\n') == [(2, "TL501")]
