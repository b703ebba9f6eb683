"""The one-line description of a finding shared by ``full`` and ``concise``."""

from __future__ import annotations

from torchlint.model import Diagnostic
from torchlint.report.context import ReportContext
from torchlint.report.source import printable
from torchlint.report.style import BOLD, Style


def header(diagnostic: Diagnostic, context: ReportContext, style: Style) -> str:
    """``CODE [*] message`` (the marker only when ``--fix`` would apply the fix)."""
    marker = f"{style.fix_marker(True)} " if diagnostic.fixable(context.unsafe_fixes) else ""
    message = style.paint(printable(diagnostic.message), BOLD)
    return f"{style.code(diagnostic.code)} {marker}{message}"
