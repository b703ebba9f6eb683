"""``gitlab``: a GitLab Code Quality report, shown in merge-request widgets.

A JSON array of issues, each with ``description``, ``check_name``,
``fingerprint`` (stable across commits, see :mod:`torchlint.report.fingerprint`),
``severity`` and ``location`` (``path`` and ``lines.begin``/``end``).
"""

from __future__ import annotations

from typing import List, Sequence

from torchlint.ruleapi.meta import Severity
from torchlint.model import Diagnostic
from torchlint.ruleapi.registry import severity_of
from torchlint.report.context import ReportContext
from torchlint.report.fingerprint import fingerprints
from torchlint.report.json import JsonObject, dumps
from torchlint.report.source import cell_position, file_range

_SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor"}
"""Code Quality's scale is info, minor, major, critical, blocker."""


def render(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """The Code Quality JSON array (``[]`` when there is nothing)."""
    issues: List[JsonObject] = []
    for diagnostic, fingerprint in zip(diagnostics, fingerprints(diagnostics, context.source_for)):
        start, end = file_range(diagnostic, context.sources)
        description = f"{diagnostic.code} {diagnostic.message}"
        if diagnostic.cell is not None:
            description = f"{cell_position(diagnostic, column=False)}: {description}"
        issues.append({
            "description": description,
            "check_name": f"{diagnostic.code} ({diagnostic.name})",
            "fingerprint": fingerprint,
            "severity": _SEVERITY[severity_of(diagnostic.code)],
            "location": {"path": diagnostic.path, "lines": {"begin": start.line, "end": end.line}},
        })
    return dumps(issues)
