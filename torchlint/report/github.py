"""``github``: GitHub Actions workflow commands that annotate the pull request."""

from __future__ import annotations

from typing import Sequence

from torchlint.model import Diagnostic
from torchlint.registry import severity_of
from torchlint.report.context import ReportContext
from torchlint.report.source import location_label


def escape_data(text: str) -> str:
    """Escape a workflow command's message (GitHub toolkit's ``escapeData``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command property value (``escapeProperty``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(diagnostic: Diagnostic) -> str:
    """One ``::error ...::message`` line (``::warning`` for an advisory rule's finding)."""
    properties = {
        "title": f"torchlint ({diagnostic.code})",
        "file": diagnostic.path,
        "line": str(diagnostic.start.line),
        "col": str(diagnostic.start.column),
        "endLine": str(diagnostic.end.line),
        "endColumn": str(diagnostic.end.column),
    }
    joined = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
    message = f"{location_label(diagnostic)}: {diagnostic.code} {diagnostic.message}"
    if diagnostic.hint:
        message += f"\n  help: {diagnostic.hint}"
    return f"::{severity_of(diagnostic.code).value} {joined}::{escape_data(message)}"


def render(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """One workflow command per finding; no summary."""
    return "".join(f"{command(d)}\n" for d in diagnostics)
