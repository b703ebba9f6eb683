"""``concise``: one ``path:line:col: CODE [*] message`` line per finding."""

from __future__ import annotations

from typing import Sequence

from torchlint.model import Diagnostic
from torchlint.report.context import ReportContext
from torchlint.report.header import header
from torchlint.report.source import location_label
from torchlint.report.style import Style
from torchlint.report.summary import join_lines, summary_lines


def render(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """The whole concise report, summary included."""
    style = Style(context.color)
    lines = [
        f"{style.path(location_label(d))}: {header(d, context, style)}" for d in diagnostics
    ]
    return join_lines([*lines, *summary_lines(diagnostics, context, style)])
