"""``github``: GitHub Actions workflow commands that annotate the pull request."""

from __future__ import annotations

from typing import Mapping, Sequence

from torchlint.model import Diagnostic
from torchlint.ruleapi.registry import severity_of
from torchlint.report.context import ReportContext
from torchlint.report.source import cell_position, file_range, location_label


def escape_data(text: str) -> str:
    """Escape a workflow command's message (GitHub toolkit's ``escapeData``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command property value (``escapeProperty``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(diagnostic: Diagnostic, sources: Mapping[str, str] = {}) -> str:
    """One ``::error ...::message`` line (``::warning`` for an advisory rule's
    finding).  A notebook finding annotates the line of the ``.ipynb`` file
    that holds it, and its title names the cell and the line in the cell."""
    start, end = file_range(diagnostic, sources)
    title = f"torchlint ({diagnostic.code})"
    if diagnostic.cell is not None:
        title += f" at {cell_position(diagnostic, column=False)}"
    properties = {
        "title": title,
        "file": diagnostic.path,
        "line": str(start.line),
        "col": str(start.column),
        "endLine": str(end.line),
        "endColumn": str(end.column),
    }
    joined = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
    message = f"{location_label(diagnostic)}: {diagnostic.code} {diagnostic.message}"
    if diagnostic.hint:
        message += f"\n  help: {diagnostic.hint}"
    return f"::{severity_of(diagnostic.code).value} {joined}::{escape_data(message)}"


def render(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """One workflow command per finding; no summary."""
    return "".join(f"{command(d, context.sources)}\n" for d in diagnostics)
