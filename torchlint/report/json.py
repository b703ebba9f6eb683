"""``json``: a JSON array of findings, Ruff's shape (1-based rows, columns in characters)."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence

from torchlint.model import Diagnostic, Edit, Fix, Position
from torchlint.report.context import ReportContext
from torchlint.report.source import edit_range, token_edits

JsonObject = Dict[str, Any]


def render(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """The JSON array, indented by two, ending in a newline."""
    items = [diagnostic_object(d, context.source_for(d)) for d in diagnostics]
    return dumps(items)


def dumps(value: Any) -> str:
    """Deterministic, ASCII-safe, indented JSON text plus a newline."""
    return json.dumps(value, indent=2, ensure_ascii=True) + "\n"


def location(position: Position) -> JsonObject:
    """``{"row": line, "column": column}``."""
    return {"row": position.line, "column": position.column}


def diagnostic_object(diagnostic: Diagnostic, source: Optional[str]) -> JsonObject:
    """One finding as a JSON object."""
    return {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "message": diagnostic.message,
        "filename": diagnostic.path,
        "location": location(diagnostic.start),
        "end_location": location(diagnostic.end),
        "fix": fix_object(diagnostic.fix, source) if diagnostic.fix else None,
        "url": None,
        "cell": diagnostic.cell,
    }


def fix_object(fix: Fix, source: Optional[str]) -> JsonObject:
    """A fix: applicability, description and its edits in order."""
    edits: List[JsonObject] = [edit_object(edit, source) for edit in token_edits(source, fix.edits)]
    return {"applicability": fix.applicability.value, "message": fix.description, "edits": edits}


def edit_object(edit: Edit, source: Optional[str]) -> JsonObject:
    """An edit with row/column positions, or raw ``start``/``end`` offsets without the source."""
    where = edit_range(source, edit)
    if where is None:
        return {"content": edit.text, "start": edit.start, "end": edit.end}
    start, end = where
    return {"content": edit.text, "location": location(start), "end_location": location(end)}
