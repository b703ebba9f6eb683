"""Jupyter notebooks: lint the code cells as one module, fix them in place.

The code cells are joined into one virtual module, each after a marker line,
so that an import in the first cell resolves in the last.  IPython magics and
shell escapes (``%time``, ``!pip``, ``x = !ls``, ``obj?``) are turned into
comments of the same length, which keeps every offset; cells that start with
a cell magic (``%%bash``) are left out.  After fixing, the cells are split
again at the markers, the magics restored, and only changed cells' sources
are written back: outputs, metadata and the file's JSON layout stay as they
were.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Optional, Tuple

from torchlint.engine import LintConfig, lint_source, parse_error
from torchlint.fixer import FixResult, fix_text
from torchlint.model import Diagnostic, Edit, Fix, Position

_MARKER = "# torchlint: notebook cell {}"
_MARKER_RE = re.compile(r"^# torchlint: notebook cell (\d+)$")
_MAGIC_RE = re.compile(r"^\s*[%!?]|^[^#'\"]*=\s*[%!]\w|\?\s*$")


class NotebookError(Exception):
    """A notebook file that is not valid notebook JSON."""


@dataclass(frozen=True)
class Cell:
    """One code cell: its 1-based number among all cells and its texts."""

    number: int
    source: str
    masked: str
    start_line: int
    start_offset: int


@dataclass(frozen=True)
class Notebook:
    """A parsed notebook and the virtual module of its code cells."""

    data: Dict[str, Any]
    cells: Tuple[Cell, ...]
    module: str
    indent: Optional[int]
    trailing_newline: bool


def _mask(source: str) -> str:
    """Comment out magic lines, keeping their length."""
    lines = source.splitlines(keepends=True)
    masked = []
    for line in lines:
        if _MAGIC_RE.search(line.rstrip("\r\n")):
            stripped = len(line) - len(line.lstrip())
            masked.append(line[:stripped] + "#" + line[stripped + 1 :] if line.strip() else line)
        else:
            masked.append(line)
    return "".join(masked)


def _cell_source(cell: Dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def load(text: str) -> Notebook:
    """Parse notebook JSON and build the virtual module."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise NotebookError(f"not valid notebook JSON: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError("not a notebook: no `cells` list")
    pieces: List[str] = []
    cells: List[Cell] = []
    line = 1
    offset = 0
    for number, cell in enumerate(data["cells"], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = _cell_source(cell)
        if source.lstrip().startswith("%%"):
            continue
        marker = _MARKER.format(number) + "\n"
        masked = _mask(source)
        body = masked if masked.endswith("\n") or not masked else masked + "\n"
        cells.append(Cell(number, source, masked, line + 1, offset + len(marker)))
        pieces.append(marker + body)
        line += 1 + body.count("\n")
        offset += len(marker) + len(body)
    indent = _detect_indent(text)
    return Notebook(data, tuple(cells), "".join(pieces), indent, text.endswith("\n"))


def _detect_indent(text: str) -> Optional[int]:
    lines = text.split("\n", 2)
    if len(lines) < 2:
        return None
    second = lines[1]
    return len(second) - len(second.lstrip(" ")) or None


def _cell_at(notebook: Notebook, line: int) -> Optional[Cell]:
    found = None
    for cell in notebook.cells:
        if cell.start_line <= line:
            found = cell
    return found


def _localise(diagnostic: Diagnostic, notebook: Notebook) -> Diagnostic:
    """Positions (and fix offsets) relative to the diagnostic's cell."""
    cell = _cell_at(notebook, diagnostic.start.line)
    if cell is None:
        return diagnostic
    shift = cell.start_line - 1
    fix = diagnostic.fix
    if fix is not None:
        edits = tuple(Edit(e.start - cell.start_offset, e.end - cell.start_offset, e.text) for e in fix.edits)
        inside = all(0 <= e.start <= e.end <= len(cell.masked) + 1 for e in edits)
        fix = Fix(edits, fix.applicability, fix.description) if inside else None
    return replace(
        diagnostic,
        start=Position(diagnostic.start.line - shift, diagnostic.start.column),
        end=Position(max(diagnostic.end.line - shift, 1), diagnostic.end.column),
        fix=fix,
        cell=cell.number,
    )


def cell_key(path: str, cell: int) -> str:
    """The key under which reporters find one cell's text."""
    return f"{path}#cell{cell}"


def cell_sources(notebook: Notebook, path: str) -> Dict[str, str]:
    """Reporters' view of each cell (the masked text that offsets refer to)."""
    return {cell_key(path, cell.number): cell.masked for cell in notebook.cells}


def lint_notebook(text: str, path: str, config: LintConfig) -> Tuple[List[Diagnostic], Optional[Notebook]]:
    """Findings of every code cell, with cell numbers and cell-local lines."""
    try:
        notebook = load(text)
    except NotebookError as error:
        return [parse_error(path, str(error))], None
    diagnostics = lint_source(notebook.module, path, config)
    return [_localise(d, notebook) for d in diagnostics], notebook


def _split(module: str) -> Dict[int, str]:
    cells: Dict[int, List[str]] = {}
    current: Optional[int] = None
    for line in module.splitlines(keepends=True):
        match = _MARKER_RE.match(line.rstrip("\r\n"))
        if match:
            current = int(match.group(1))
            cells[current] = []
        elif current is not None:
            cells[current].append(line)
    return {number: "".join(lines) for number, lines in cells.items()}


def _unmask(original: str, masked_before: str, fixed: str) -> str:
    """Put the magic lines back where the fixer left their comments."""
    originals = original.splitlines(keepends=True)
    masked = masked_before.splitlines(keepends=True)
    replacements = [(m, o) for m, o in zip(masked, originals) if m != o]
    lines = fixed.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if replacements and line.rstrip("\r\n") == replacements[0][0].rstrip("\r\n"):
            lines[index] = replacements.pop(0)[1]
            if not lines[index].endswith("\n") and index < len(lines) - 1:
                lines[index] += "\n"
    return "".join(lines)


def fix_notebook(
    text: str, path: str, config: LintConfig, *, unsafe: bool
) -> Tuple[str, FixResult, Optional[Notebook]]:
    """The notebook text with fixes applied to its cells, the fix result, and
    the cell table of the fixed cells (what the remaining findings refer to)."""
    try:
        notebook = load(text)
    except NotebookError as error:
        empty = FixResult(text, (), (parse_error(path, str(error)),), (), True)
        return text, empty, None
    result = fix_text(notebook.module, path, config, unsafe=unsafe)
    fixed_view = load_fixed(notebook, result.source)
    remaining = tuple(_localise(d, fixed_view) for d in result.remaining)
    if not result.changed:
        return text, replace(result, source=text, remaining=remaining), fixed_view
    fixed_cells = _split(result.source)
    data = notebook.data
    for cell in notebook.cells:
        new = fixed_cells.get(cell.number)
        if new is None:
            continue
        if not cell.masked.endswith("\n") and new.endswith("\n"):
            new = new[:-1]
        new = _unmask(cell.source, cell.masked, new)
        if new == cell.source:
            continue
        raw = data["cells"][cell.number - 1]
        if isinstance(raw.get("source"), list):
            raw["source"] = new.splitlines(keepends=True)
        else:
            raw["source"] = new
    output = json.dumps(data, indent=notebook.indent, ensure_ascii=False)
    if notebook.trailing_newline:
        output += "\n"
    return output, replace(result, source=output, remaining=remaining), fixed_view


def load_fixed(original: Notebook, module: str) -> Notebook:
    """A Notebook whose cell table matches a fixed virtual module."""
    cells: List[Cell] = []
    line = 1
    offset = 0
    texts = _split(module)
    by_number = {cell.number: cell for cell in original.cells}
    for number, body in texts.items():
        marker = _MARKER.format(number) + "\n"
        old = by_number.get(number)
        cells.append(Cell(number, old.source if old else body, body, line + 1, offset + len(marker)))
        line += 1 + body.count("\n")
        offset += len(marker) + len(body)
    return replace(original, cells=tuple(cells), module=module)
