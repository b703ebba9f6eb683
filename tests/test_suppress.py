"""Suppression comments silence exactly what they name."""

from __future__ import annotations

from typing import List, Tuple

import pytest

import torchlint
from torchlint.lint.settings import Settings

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


def test_noqa_code_prefix_silences_the_codes_it_starts_as_in_flake8() -> None:
    assert lines("m = nn.DataParallel(x)  # noqa: TL5\n") == []
    assert lines("m = nn.DataParallel(x)  # noqa: TL50\n") == []
    assert lines("m = nn.DataParallel(x)  # noqa: TL1\n") == [(2, "TL501")]


def test_trailing_noqa_covers_its_whole_logical_line_as_in_flake8() -> None:
    # flake8 maps a noqa at the end of a multi-line statement to every line
    # of it; a finding on a middle line is silenced by both front ends.
    source = "models = [\n    nn.DataParallel(x),\n    y,\n]  # noqa: TL501\n"
    assert lines(source) == []
    source = "models = [\n    y,  # noqa: TL501\n    nn.DataParallel(x),\n]\n"
    assert lines(source) == []
    assert lines("m = [y]  # noqa: TL501\nn = nn.DataParallel(x)\n") == [(3, "TL501")]


UNUSED = Settings(select=("TL501", "TL001"))


def unused(source: str, settings: Settings = UNUSED) -> List[Tuple[int, int, str]]:
    return [(d.start.line, d.start.column, d.message) for d in torchlint.check_source(HEADER + source, "s.py", settings)
            if d.code == "TL001"]


def test_unused_unknown_and_unselected_suppressions_are_reported() -> None:
    assert unused("m = nn.DataParallel(x)  # noqa: TL501\n") == []
    assert unused("m = 1  # noqa: TL501\n") == [(2, 8, "unused suppression (unused: `TL501`)")]
    assert unused("m = 1  # noqa: TL2O1\n") == [(2, 8, "unused suppression (unknown: `TL2O1`)")]
    assert unused("m = 1  # torchlint: ignore[TL101]\n") == [(2, 8, "unused suppression (not selected: `TL101`)")]
    assert unused("m = 1  # torchlint: ignore\n") == [(2, 8, "unused blanket suppression: it silences nothing here")]


def test_other_tools_codes_and_blanket_noqa_are_not_reported() -> None:
    assert unused("m = 1  # noqa\n") == []
    assert unused("m = 1  # noqa: E501, F401\n") == []
    assert unused("m = 1  # noqa: TL501, TL001\n") == []  # the rule's own code keeps it


def test_unused_suppression_is_off_by_default_and_fixed_safely() -> None:
    assert [d.code for d in torchlint.check_source(HEADER + "m = 1  # noqa: TL501\n", "s.py")] == []
    fixed = torchlint.fix_source(HEADER + "m = nn.DataParallel(x)  # noqa: TL501, TL101, E501\nk = 1  # noqa: TL501\n"
                                 "# torchlint: ignore[TL501]\nj = 2\n", "s.py", settings=UNUSED)
    assert fixed.source == HEADER + "m = nn.DataParallel(x)  # noqa: TL501, E501\nk = 1\nj = 2\n"


def test_comments_below_the_last_directive_are_not_tokenized(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tokenizing is what reading suppressions costs: it stops at the end of
    the logical line holding the last ``noqa``/``torchlint`` comment, and the
    suppressions are those of reading every comment."""
    import tokenize

    from torchlint.lint import suppress
    from torchlint.source.lines import line_texts

    source = "x = f(  # noqa: TL101\n    1,\n)\ny = 2  # a comment\n" + "z = 3  # more\n" * 500
    rows: List[int] = []
    real = tokenize.generate_tokens

    def counted(readline):  # type: ignore[no-untyped-def]
        for token in real(readline):
            rows.append(token.start[0])
            yield token

    monkeypatch.setattr(tokenize, "generate_tokens", counted)
    found = suppress.parse_suppressions(source)
    assert max(rows) <= 4
    monkeypatch.setattr(tokenize, "generate_tokens", real)
    lines = line_texts(source)
    every = suppress._build(suppress._comments(source, lines), suppress.NextCodeLine(lines).after)
    assert found == every
    assert [d.text for row in (1, 2, 3) for d in found.trailing.get(row, ())] == ["# noqa: TL101"] * 3
