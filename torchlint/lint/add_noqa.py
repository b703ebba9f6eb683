"""``torchlint check --add-noqa``: suppress every current finding in place.

The way to adopt torchlint on a large codebase besides a baseline, as Ruff's
``--add-noqa``: each line with findings gets ``# noqa: CODE[, CODE]``
(merged into a ``# noqa: ...`` already there), on the line where the
suppression is read (the finding's first line, else its last; never a line
that ends inside a string or with a backslash).  Notebooks get the comment
in the cell's source; job scripts at the end of the ``#SBATCH`` or command
line.  Files are written atomically, keeping encoding and line endings.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from torchlint.model import Diagnostic, Edit, apply_edits
from torchlint.ruleapi.registry import PARSE_ERROR_CODE
from torchlint.source.sourcefile import SourceError, read_source, write_source
from torchlint.lint.suppress import comment_lines, noqa_edits

if TYPE_CHECKING:
    from torchlint.lint.runner import FileOutcome


def target_line(diagnostic: Diagnostic, allowed: Optional[FrozenSet[int]]) -> Optional[int]:
    """The line a trailing ``# noqa`` for ``diagnostic`` goes on, or None
    when neither its first nor its last line can take a comment."""
    for line in (diagnostic.start.line, diagnostic.end.line):
        if allowed is None or line in allowed:
            return line
    return None


def _wanted(diagnostics: Sequence[Diagnostic], allowed: Optional[FrozenSet[int]]) -> Tuple[Dict[int, Set[str]], int]:
    """line -> the codes to suppress there, and how many findings have no such line."""
    wanted: Dict[int, Set[str]] = {}
    skipped = 0
    for diagnostic in diagnostics:
        line = target_line(diagnostic, allowed)
        if line is None:
            skipped += 1
        else:
            wanted.setdefault(line, set()).add(diagnostic.code)
    return wanted, skipped


def python_edits(text: str, diagnostics: Sequence[Diagnostic]) -> Tuple[List[Edit], int]:
    """The edits that suppress ``diagnostics`` in Python text, and how many
    findings could not be suppressed in place."""
    wanted, skipped = _wanted(diagnostics, comment_lines(text))
    return noqa_edits(text, wanted), skipped


def _script_edits(text: str, diagnostics: Sequence[Diagnostic]) -> Tuple[List[Edit], int]:
    """A job script: the comment goes at the end of the finding's line,
    unless that line continues on the next one."""
    lines = text.splitlines()
    allowed = frozenset(number for number, line in enumerate(lines, start=1) if not line.rstrip().endswith("\\"))
    wanted, skipped = _wanted(diagnostics, allowed)
    # Lines of a shell script are not Python: no existing comment is merged.
    starts = [0]
    for line_text in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line_text))
    edits = []
    for line, codes in sorted(wanted.items()):
        body = lines[line - 1].rstrip()
        at = starts[line - 1] + len(body)
        edits.append(Edit(at, starts[line - 1] + len(lines[line - 1]), f"  # noqa: {', '.join(sorted(codes))}"))
    return edits, skipped


def _notebook_text(text: str, diagnostics: Sequence[Diagnostic]) -> Tuple[str, int, int]:
    """The notebook JSON with comments added to the cells' sources; how many
    lines got one, and how many findings could not be suppressed."""
    from torchlint.lint.notebook import load
    from torchlint.source.notebook_json import encode_source, splice

    notebook = load(text)
    by_cell: Dict[int, List[Diagnostic]] = {}
    for diagnostic in diagnostics:
        if diagnostic.cell is not None:
            by_cell.setdefault(diagnostic.cell, []).append(diagnostic)
    replacements = {}
    added = skipped = 0
    for cell in notebook.cells:
        found = by_cell.get(cell.number)
        if not found:
            continue
        # The cell as the parser saw it (IPython lines masked), to find where
        # comments may go; the edits are made to its real text.
        wanted, missed = _wanted(found, comment_lines(cell.masked))
        skipped += missed
        edits = noqa_edits(cell.source, wanted)
        added += len(edits)
        if edits:
            replacements[cell.span] = encode_source(text, cell.span, apply_edits(cell.source, edits))
    return (splice(text, replacements) if replacements else text), added, skipped


def add_noqa(outcomes: "Sequence[FileOutcome]") -> Tuple[int, List[str], List[str]]:
    """Suppress every finding of ``outcomes`` in its file: (comments added
    or extended, notes on findings that could not be suppressed in place,
    files that could not be read or written)."""
    from torchlint.lint.jobscripts import is_job_script

    added = 0
    notes: List[str] = []
    problems: List[str] = []
    for outcome in outcomes:
        found = [d for d in outcome.diagnostics if d.code != PARSE_ERROR_CODE]
        if not found:
            continue
        path = Path(outcome.path)
        try:
            source = read_source(path)
        except SourceError as error:
            problems.append(f"{outcome.path}: {error}")
            continue
        if path.suffix == ".ipynb":
            text, count, missed = _notebook_text(source.text, found)
        else:
            compute = _script_edits if is_job_script(path, source.text) else python_edits
            edits, missed = compute(source.text, found)
            text, count = apply_edits(source.text, edits), len(edits)
        if missed:
            notes.append(f"{outcome.path}: {missed} finding{'s' if missed != 1 else ''} on lines that cannot "
                            "take a comment (inside a string or continued with a backslash); left as they are")
        if text == source.text:
            continue
        try:
            write_source(source, text)
        except (SourceError, OSError) as error:
            problems.append(f"{outcome.path}: {error}")
            continue
        added += count
    return added, notes, problems
