"""One way to count lines (torchlint/source/lines.py): findings, fixes, snippets, diffs,
suppressions, notebooks and the language server agree on where a line ends."""

from __future__ import annotations

import pytest

from torchlint.model import Position
from torchlint.source.lines import LineIndex, count_lines, line_texts, split_lines, strip_newline

TEXTS = ["", "a", "a\n", "a\r\nb", "a\rb\r", "\n\n", "x = 1\x0cy\u2028z\n", "a\r\n\r\nb\n"]


@pytest.mark.parametrize("text", TEXTS)
def test_the_three_views_of_a_text_agree(text: str) -> None:
    kept = split_lines(text)
    assert "".join(kept) == text
    bare = line_texts(text)
    assert [strip_newline(line) for line in kept] == list(bare[: len(kept)])
    assert count_lines(text) == len(bare) - 1
    index = LineIndex(text)
    assert index.line_count == len(bare)
    assert [index.line_text(n) for n in range(1, index.line_count + 1)] == list(bare)


def test_only_python_line_breaks_end_a_line() -> None:
    # str.splitlines would break at the form feed and at U+2028; Python does not.
    assert line_texts("x = 1\x0cy\u2028z\nw") == ("x = 1\x0cy\u2028z", "w")


def test_offsets_and_positions_round_trip() -> None:
    text = "ab\r\ncd\ne"
    index = LineIndex(text)
    for offset in range(len(text) + 1):
        position = index.position(offset)
        assert index.offset(position.line, position.column - 1) == offset
    assert index.position(4) == Position(2, 1)
    assert index.content_end(1) == 2 and index.line_end(1) == 4
    assert index.start_of_line_at(5) == 4 and index.line_start(3) == 7
    assert index.position(-3) == Position(1, 1) and index.position(99) == Position(3, 2)
