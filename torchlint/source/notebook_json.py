"""Where each cell's ``source`` sits in a notebook's JSON text, and how to
replace it there without touching any other byte.

Notebooks are written back by splicing: the new ``source`` value is encoded
in the style of the old one (a list of lines or one string; the same item
layout, indentation and line breaks; ``\\u`` escapes only where the file
uses them) and put in place of the old value's characters.  The rest of the
file (outputs, metadata, key order, indentation, CRLF line endings) is never
re-serialised, so it stays byte for byte as it was.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, Iterator, List, Mapping, Optional, Tuple

from torchlint.source.notebook_magics import split_lines

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_LINE_INDENT = re.compile(r"[ \t]*")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Span:
    """``text[start:end]``: one JSON value in the file's text."""

    start: int
    end: int


def _skip(text: str, index: int) -> int:
    match = _WHITESPACE.match(text, index)
    assert match is not None
    return match.end()


def _value_end(text: str, index: int) -> int:
    _, end = _DECODER.raw_decode(text, index)
    return int(end)


def _members(text: str, index: int) -> Iterator[Tuple[str, Span]]:
    """Each ``key: value`` of the object at ``index`` (valid JSON assumed)."""
    index = _skip(text, index + 1)
    while text[index] != "}":
        key, index = _DECODER.raw_decode(text, index)
        index = _skip(text, _skip(text, index) + 1)  # past the ':'
        end = _value_end(text, index)
        yield str(key), Span(index, end)
        index = _skip(text, end)
        if text[index] == ",":
            index = _skip(text, index + 1)


def _items(text: str, index: int) -> Iterator[Span]:
    """Each item of the array at ``index`` (valid JSON assumed)."""
    index = _skip(text, index + 1)
    while text[index] != "]":
        end = _value_end(text, index)
        yield Span(index, end)
        index = _skip(text, end)
        if text[index] == ",":
            index = _skip(text, index + 1)


def source_spans(text: str) -> Dict[int, Span]:
    """Cell index (0-based) -> where that cell's ``source`` value is, for
    text that ``json.loads`` accepted (the last of repeated keys wins, as
    there)."""
    start = _skip(text, 0)
    spans: Dict[int, Span] = {}
    if text[start : start + 1] != "{":
        return spans
    for key, value in _members(text, start):
        if key != "cells" or text[value.start] != "[":
            continue
        spans = {}
        for index, item in enumerate(_items(text, value.start)):
            if text[item.start] != "{":
                continue
            for cell_key, cell_value in _members(text, item.start):
                if cell_key == "source":
                    spans[index] = cell_value
    return spans


def encode_source(text: str, span: Span, source: str) -> str:
    """``source`` as a JSON value in the style of the one at ``span``."""
    ascii_only = text.isascii()
    old = text[span.start : span.end]
    if not old.startswith("["):
        return json.dumps(source, ensure_ascii=ascii_only)
    items = list(_items(text, span.start))
    # Unchanged lines keep their exact old spelling (escapes included).
    spelled: Dict[str, str] = {}
    for item in items:
        spelled.setdefault(str(json.loads(text[item.start : item.end])), text[item.start : item.end])
    lines = [spelled.get(line) or json.dumps(line, ensure_ascii=ascii_only) for line in split_lines(source)]
    if not lines:
        return "[]"
    lead, separator, trail = _layout(text, span, items)
    return "[" + lead + separator.join(lines) + trail + "]"


def _layout(text: str, span: Span, items: List[Span]) -> Tuple[str, str, str]:
    """The whitespace after ``[``, between items (with the comma) and before
    ``]`` of the list at ``span``, or what the file's layout implies."""
    if items:
        lead = text[span.start + 1 : items[0].start]
        trail = text[items[-1].end : span.end - 1]
        separator = text[items[0].end : items[1].start] if len(items) > 1 else "," + (lead or " ")
        return lead, separator, trail
    line_start = max(text.rfind("\n", 0, span.start), text.rfind("\r", 0, span.start)) + 1
    if line_start == 0:  # the whole file on one line
        return "", ", ", ""
    newline = "\r\n" if text[line_start - 2 : line_start] == "\r\n" else text[line_start - 1]
    indent_match = _LINE_INDENT.match(text, line_start)
    assert indent_match is not None
    indent = indent_match.group()
    lead = newline + indent + _indent_unit(text)
    return lead, "," + lead, newline + indent


def _indent_unit(text: str) -> str:
    """The file's indentation step: the indentation of its second line."""
    lines = split_lines(text)
    if len(lines) < 2:
        return " "
    match = _LINE_INDENT.match(lines[1])
    assert match is not None
    return match.group() or " "


def splice(text: str, replacements: Mapping[Span, str]) -> str:
    """``text`` with each span's characters replaced; nothing else changes."""
    pieces: List[str] = []
    cursor = 0
    for span in sorted(replacements, key=lambda s: s.start):
        pieces.append(text[cursor : span.start])
        pieces.append(replacements[span])
        cursor = span.end
    pieces.append(text[cursor:])
    return "".join(pieces)


# -- where a cell's text is in the file ------------------------------------------

_ESCAPES = {'"': 1, "\\": 1, "/": 1, "b": 1, "f": 1, "n": 1, "r": 1, "t": 1}


def _raw_offsets(literal: str) -> List[int]:
    """For the JSON string ``literal`` (quotes included): the offset in it
    of each character of its decoded value, plus one for the closing quote."""
    offsets: List[int] = []
    index = 1
    end = len(literal) - 1
    while index < end:
        offsets.append(index)
        if literal[index] != "\\":
            index += 1
        elif literal[index + 1] in _ESCAPES:
            index += 2
        else:  # \uXXXX, and a surrogate pair decodes to one character
            high = int(literal[index + 2 : index + 6], 16)
            index += 6
            if 0xD800 <= high < 0xDC00 and literal[index : index + 2] == "\\u":
                low = int(literal[index + 2 : index + 6], 16)
                if 0xDC00 <= low < 0xE000:
                    index += 6
    offsets.append(end)
    return offsets


class CellText:
    """Where each character of one cell's ``source`` is in the notebook's JSON
    text: a finding in the cell is annotated at that line of the file."""

    def __init__(self, text: str, span: Span) -> None:
        items = list(_items(text, span.start)) if text[span.start] == "[" else [span]
        self._offsets: List[int] = []  # decoded offset -> offset in the file
        for item in items:
            literal = text[item.start : item.end]
            self._offsets.extend(item.start + offset for offset in _raw_offsets(literal)[:-1])
        self._end = items[-1].end - 1 if items else span.start + 1
        self._decoded = "".join(str(json.loads(text[item.start : item.end])) for item in items)
        self._starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", self._decoded)]
        self._file_lines = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]

    def offset(self, line: int, column: int) -> int:
        """The file offset of a 1-based line and column of the cell's text."""
        line = min(max(line, 1), len(self._starts))
        decoded = min(self._starts[line - 1] + max(column, 1) - 1, len(self._decoded))
        return self._offsets[decoded] if decoded < len(self._offsets) else self._end

    def position(self, line: int, column: int) -> Tuple[int, int]:
        """The file's 1-based (line, column) of a cell line and column."""
        offset = self.offset(line, column)
        file_line = bisect.bisect_right(self._file_lines, offset)
        return file_line, offset - self._file_lines[file_line - 1] + 1


@lru_cache(maxsize=64)
def cell_text(text: str, cell_number: int) -> "Optional[CellText]":
    """The map of cell ``cell_number`` (1-based, among all cells) of the
    notebook ``text``, or None when that cell's ``source`` is not found."""
    try:
        span = source_spans(text).get(cell_number - 1)
    except (ValueError, IndexError, RecursionError):
        return None
    if span is None or text[span.start] not in "[\"":
        return None
    return CellText(text, span)
