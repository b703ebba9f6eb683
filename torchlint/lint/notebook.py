"""Jupyter notebooks: lint the code cells as one module, fix them in place.

The code cells are joined, in order, into one virtual module, so that an
import in the first cell resolves in the last.  Where each cell lies in that
module is kept as a table built from the notebook's structure (never found
again from the text, which user code could imitate), and every fix's edits
move the table's entries along; the fixed module is cut back into cells at
those places.  IPython lines (``%time``, ``!pip``, ``x = !ls``, ``obj?``) are
masked by :mod:`torchlint.source.notebook_magics` with texts of the same length, and
put back at the places the edits moved them to.  Cells that start with a cell
magic (``%%bash``) are left out, and so is a cell that does not parse on its
own (IPython compiles each cell alone): it gets its own syntax error.

Only the fixed cells' ``source`` values are written back, spliced into the
original JSON text by :mod:`torchlint.source.notebook_json`: every other byte of the
file stays as it was.  Reporters are given each cell's real text.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass, replace
from typing import AbstractSet, Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from torchlint.lint.engine import LintConfig, lint_source, parse_error, parse_module
from torchlint.lint.fixer import MAX_PASSES, FixResult, apply_edits, fix_text
from torchlint.model import Diagnostic, Edit, Fix, Position
from torchlint.source.notebook_json import Span, encode_source, source_spans, splice
from torchlint.source.notebook_magics import Mask, apply_masks, count_lines, mask_magics
from torchlint.ruleapi.registry import PARSE_ERROR_CODE


class NotebookError(Exception):
    """A notebook file that is not valid notebook JSON."""


@dataclass(frozen=True)
class Cell:
    """One code cell: its 1-based number among all cells, its text, the text
    the parser sees, and the newline added (if any) so that the next cell
    starts on a line of its own."""

    number: int
    source: str
    masked: str
    masks: Tuple[Mask, ...]
    separator: str
    span: Span

    @property
    def body(self) -> str:
        """The cell's part of the virtual module."""
        return self.masked + self.separator

    @property
    def shown(self) -> str:
        """The real text that the body's offsets and positions refer to."""
        return self.source + self.separator


@dataclass(frozen=True)
class Part:
    """A cell's place in one version of the virtual module: its current
    (masked) text and where each of its masks now starts in that text."""

    cell: Cell
    body: str
    mask_starts: Tuple[int, ...]

    @property
    def shown(self) -> str:
        """The body with the cell's real IPython lines back."""
        return apply_masks(self.body, self.cell.masks, masked=False, at=self.mask_starts)

    @property
    def source(self) -> str:
        """The cell's new ``source``: the shown text without the added newline."""
        text = self.shown
        separator = self.cell.separator
        return text[: -len(separator)] if separator and text.endswith(separator) else text


_NO_FINDINGS: Mapping[Edit, AbstractSet[int]] = {}


@dataclass(frozen=True)
class Layout:
    """The virtual module of some cells, and where each cell lies in it."""

    parts: Tuple[Part, ...]
    text: str
    offsets: Tuple[int, ...]
    lines: Tuple[int, ...]

    @staticmethod
    def of(parts: Sequence[Part]) -> "Layout":
        """The parts' bodies joined, each starting on a line of its own."""
        offsets: List[int] = []
        lines: List[int] = []
        offset, line = 0, 1
        for part in parts:
            offsets.append(offset)
            lines.append(line)
            offset += len(part.body)
            line += count_lines(part.body)
        return Layout(tuple(parts), "".join(p.body for p in parts), tuple(offsets), tuple(lines))

    def config(self, config: LintConfig) -> LintConfig:
        """``config`` with this layout's cells, so that messages name a line
        of another cell as ``cell N, line L``."""
        return replace(config, cell_starts=tuple((line, part.cell.number) for line, part in zip(self.lines, self.parts)))

    def part_at(self, line: int) -> int:
        """The index of the part that holds a line of the module."""
        return max(0, bisect.bisect_right(self.lines, line) - 1)

    def localise(self, diagnostic: Diagnostic) -> Diagnostic:
        """The diagnostic with cell-local positions and fix offsets; a fix
        that reaches out of its cell or into an IPython line is dropped."""
        if not self.parts:
            return diagnostic
        index = self.part_at(diagnostic.start.line)
        part, shift = self.parts[index], self.lines[index] - 1
        fix = diagnostic.fix
        if fix is not None:
            base = self.offsets[index]
            edits = tuple(Edit(e.start - base, e.end - base, e.text) for e in fix.edits)
            keeps = all(0 <= e.start <= e.end <= len(part.body) for e in edits) and \
                _moved_masks(part, edits) is not None
            fix = Fix(edits, fix.applicability, fix.description) if keeps else None
        body_end = Position(shift + count_lines(part.body) + 1, 1)  # the start of the next cell
        end = min(diagnostic.end, body_end)
        return replace(
            diagnostic,
            start=Position(diagnostic.start.line - shift, diagnostic.start.column),
            end=Position(max(end.line - shift, 1), end.column),
            fix=fix,
            cell=part.cell.number,
        )

    def after(self, edits: Sequence[Edit], fixed: str,
              findings: Mapping[Edit, AbstractSet[int]] = _NO_FINDINGS) -> Optional["Layout"]:
        """The layout of ``fixed``, the module with ``edits`` applied; None
        when an edit crosses from one cell into another or cuts through an
        IPython line (then the cells cannot be told apart again safely).

        An edit belongs to the cell it lies in, except an insertion exactly
        where a cell ends and the next begins: it belongs to the cell of the
        finding it fixes (``findings``: edit -> indexes of the parts holding
        the findings whose fixes make it), so code appended after a block
        that ends a cell stays in that cell."""
        owned: List[List[Edit]] = [[] for _ in self.parts]
        for edit in edits:
            index = max(0, bisect.bisect_right(self.offsets, edit.start) - 1)
            owners = findings.get(edit, frozenset())
            if (edit.start == edit.end == self.offsets[index] and index > 0 and index - 1 in owners
                    and index not in owners):
                index -= 1  # appended to the end of the finding's cell
            base = self.offsets[index]
            end = self.offsets[index + 1] if index + 1 < len(self.parts) else len(self.text)
            if edit.end > end:
                return None
            owned[index].append(Edit(edit.start - base, edit.end - base, edit.text))
        parts: List[Part] = []
        for part, local in zip(self.parts, owned):
            starts = _moved_masks(part, local)
            if starts is None:
                return None
            parts.append(Part(part.cell, apply_edits(part.body, local), starts))
        layout = Layout.of(parts)
        return layout if layout.text == fixed else None

    def shown(self) -> Dict[int, str]:
        """Cell number -> the cell's real text, as positions refer to it."""
        return {part.cell.number: part.shown for part in self.parts}


def edit_owners(layout: Layout, diagnostics: Sequence[Diagnostic]) -> Dict[Edit, AbstractSet[int]]:
    """Each edit of the diagnostics' fixes -> the indexes of the parts that
    hold the findings it fixes (positions are those of ``layout``'s module)."""
    owners: Dict[Edit, Set[int]] = {}
    for diagnostic in diagnostics:
        if diagnostic.fix is not None:
            for edit in diagnostic.fix.edits:
                owners.setdefault(edit, set()).add(layout.part_at(diagnostic.start.line))
    return {edit: frozenset(parts) for edit, parts in owners.items()}


def cell_refusal(layout: Layout, fixed: str, diagnostics: Sequence[Diagnostic], path: str) -> Optional[str]:
    """Why the fixes of ``diagnostics`` (together giving ``fixed``) may not
    be applied to the cells of ``layout``, or None: an edit that cannot be
    kept in one cell, or a changed cell that does not parse on its own
    (IPython compiles each cell alone; the joined module may parse anyway)."""
    moved = layout.after(_edits_of(diagnostics), fixed, edit_owners(layout, diagnostics))
    if moved is None:
        return "an edit would reach into another cell"
    for old, new in zip(layout.parts, moved.parts):
        if new.body != old.body and isinstance(parse_module(new.body, path), Diagnostic):
            return f"cell {new.cell.number} would not parse on its own"
    return None


def _moved_masks(part: Part, edits: Sequence[Edit]) -> Optional[Tuple[int, ...]]:
    """Where the part's masks are after ``edits`` (offsets in the part), or
    None when an edit changes a masked line in a way that cannot be followed.

    An edit that replaces whole masked lines along with other code (say, a
    block it re-indents) carries them along: a mask is then found again in
    the edit's new text, if exactly once."""
    starts: List[int] = []
    for mask, start in zip(part.cell.masks, part.mask_starts):
        end = start + len(mask.masked)
        shift = sum(len(e.text) - (e.end - e.start) for e in edits if e.end <= start)
        touching = [e for e in edits if e.start < end and not e.end <= start]
        if not touching:
            starts.append(start + shift)
            continue
        edit = touching[0]
        covers = len(touching) == 1 and edit.start <= start and end <= edit.end
        if not covers or edit.text.count(mask.masked) != 1:
            return None
        starts.append(edit.start + shift + edit.text.index(mask.masked))
    in_order = all(a + len(m.masked) <= b for a, b, m in zip(starts, starts[1:], part.cell.masks))
    return tuple(starts) if in_order else None


@dataclass(frozen=True)
class Notebook:
    """A parsed notebook: its JSON text and data, and its lintable cells."""

    text: str
    data: Dict[str, Any]
    cells: Tuple[Cell, ...]

    def layout(self, left_out: AbstractSet[int] = frozenset()) -> Layout:
        """The virtual module of the cells not in ``left_out``."""
        return Layout.of([Part(c, c.body, tuple(m.start for m in c.masks))
                          for c in self.cells if c.number not in left_out])

    def shown(self) -> Dict[int, str]:
        """Cell number -> the cell's real text, as positions refer to it."""
        return {cell.number: cell.shown for cell in self.cells}


def _cell_source(number: int, cell: Dict[str, Any]) -> str:
    source = cell.get("source", "")
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    raise NotebookError(f"not a notebook: the `source` of cell {number} is not text")


def load(text: str) -> Notebook:
    """Parse notebook JSON and find its lintable code cells."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise NotebookError(f"not valid notebook JSON: {error}") from None
    except RecursionError:
        raise NotebookError("not valid notebook JSON: nested too deeply") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError("not a notebook: no `cells` list")
    spans = source_spans(text)
    cells: List[Cell] = []
    for index, raw in enumerate(data["cells"]):
        if not isinstance(raw, dict) or raw.get("cell_type") != "code" or index not in spans:
            continue
        source = _cell_source(index + 1, raw)
        if not source or source.lstrip().startswith("%%"):
            continue
        masked, masks = mask_magics(source)
        separator = "" if masked.endswith("\n") else "\n"
        cells.append(Cell(index + 1, source, masked, masks, separator, spans[index]))
    return Notebook(text, data, tuple(cells))


def cell_key(path: str, cell: int) -> str:
    """The key under which reporters find one cell's text."""
    return f"{path}#cell{cell}"


def cell_sources(view: "Notebook | Layout", path: str) -> Dict[str, str]:
    """Reporters' view of each cell: its real text (IPython lines as written)."""
    return {cell_key(path, number): text for number, text in view.shown().items()}


def _is_parse_error(diagnostic: Diagnostic) -> bool:
    return diagnostic.code == PARSE_ERROR_CODE and diagnostic.fix is None


def _broken_cells(notebook: Notebook, path: str) -> List[Diagnostic]:
    """The syntax error of each cell that does not parse on its own."""
    found: List[Diagnostic] = []
    for cell in notebook.cells:
        parsed = parse_module(cell.body, path)
        if isinstance(parsed, Diagnostic):
            found.append(replace(parsed, cell=cell.number))
    return found


def _without_broken(notebook: Notebook, path: str) -> Tuple[Layout, List[Diagnostic]]:
    """The layout of the cells that parse, and the other cells' errors."""
    broken = _broken_cells(notebook, path)
    return notebook.layout({d.cell for d in broken if d.cell is not None}), broken


def lint_notebook(text: str, path: str, config: LintConfig) -> Tuple[List[Diagnostic], Optional[Notebook]]:
    """Findings of every code cell, with cell numbers and cell-local lines."""
    try:
        notebook = load(text)
    except NotebookError as error:
        return [parse_error(path, str(error))], None
    layout = notebook.layout()
    diagnostics = lint_source(layout.text, path, layout.config(config))
    broken: List[Diagnostic] = []
    if any(_is_parse_error(d) for d in diagnostics):
        layout, broken = _without_broken(notebook, path)
        if broken:
            diagnostics = lint_source(layout.text, path, layout.config(config))
    found = broken + [layout.localise(d) for d in diagnostics]
    return sorted(found, key=lambda d: d.sort_key), notebook


def _edits_of(diagnostics: Sequence[Diagnostic]) -> List[Edit]:
    edits: List[Edit] = []
    for diagnostic in diagnostics:
        if diagnostic.fix is not None:
            edits.extend(e for e in diagnostic.fix.edits if e not in edits)
    return edits


def _fix_layout(layout: Layout, path: str, config: LintConfig, unsafe: bool) -> Tuple[Layout, FixResult]:
    """Fix the virtual module one pass at a time, moving the cell table along
    with each pass's edits.  A pass whose edits the table cannot follow is
    not applied, and fixing stops there.  The findings in the result are
    cell-local."""
    applied: List[Diagnostic] = []
    dropped: Dict[Tuple[Optional[int], str, str, Tuple[str, ...]], Diagnostic] = {}
    remaining: Optional[Tuple[Diagnostic, ...]] = None
    converged = False
    first_fixable: Optional[int] = None
    for _ in range(MAX_PASSES):
        current = layout
        result = fix_text(layout.text, path, layout.config(config), unsafe=unsafe, max_passes=1,
                          accept=lambda fixed, chosen: cell_refusal(current, fixed, chosen, path))
        if first_fixable is None:
            first_fixable = result.first_fixable
        for diagnostic in result.dropped:
            shown = layout.localise(diagnostic)
            key = (shown.cell, shown.code, shown.message, tuple(e.text for e in _edits_of([diagnostic])))
            dropped.setdefault(key, shown)
        if not result.applied:
            remaining, converged = result.remaining, result.converged
            break
        moved = layout.after(_edits_of(result.applied), result.source, edit_owners(layout, result.applied))
        if moved is None:
            if remaining is None:
                remaining = tuple(lint_source(layout.text, path, layout.config(config)))
            converged = False
            break
        applied.extend(layout.localise(d) for d in result.applied)
        layout, remaining, converged = moved, result.remaining, result.converged
    assert remaining is not None
    local = tuple(layout.localise(d) for d in remaining)
    return layout, FixResult(layout.text, tuple(applied), local, tuple(dropped.values()), converged,
                             first_fixable=first_fixable or 0)


def fix_notebook(
    text: str, path: str, config: LintConfig, *, unsafe: bool
) -> Tuple[str, FixResult, Optional[Layout]]:
    """The notebook text with fixes applied to its cells, the fix result, and
    the cell table of the fixed cells (what the remaining findings refer to).

    Only the ``source`` values of changed cells differ from ``text``."""
    try:
        notebook = load(text)
    except NotebookError as error:
        empty = FixResult(text, (), (parse_error(path, str(error)),), (), True)
        return text, empty, None
    layout, result = _fix_layout(notebook.layout(), path, config, unsafe)
    broken: List[Diagnostic] = []
    if not result.applied and any(_is_parse_error(d) for d in result.remaining):
        layout, broken = _without_broken(notebook, path)
        if broken:
            layout, result = _fix_layout(layout, path, config, unsafe)
    remaining = tuple(sorted(broken + list(result.remaining), key=lambda d: d.sort_key))
    replacements = {
        part.cell.span: encode_source(text, part.cell.span, part.source)
        for part in layout.parts
        if part.source != part.cell.source
    }
    output = splice(text, replacements) if replacements else text
    shown = _with_cells(layout, notebook, broken)
    return output, replace(result, source=output, remaining=remaining), shown


def _with_cells(layout: Layout, notebook: Notebook, broken: Sequence[Diagnostic]) -> Layout:
    """``layout`` plus the left-out broken cells, for the reporters' view."""
    if not broken:
        return layout
    numbers = {d.cell for d in broken}
    extra = [Part(c, c.body, tuple(m.start for m in c.masks)) for c in notebook.cells if c.number in numbers]
    parts = sorted([*layout.parts, *extra], key=lambda p: p.cell.number)
    return Layout.of(parts)
