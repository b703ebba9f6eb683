"""``full`` (the default): each finding with its source, hint and fix diff, as Ruff shows them."""

from __future__ import annotations

from typing import List, Optional, Sequence

from torchlint.model import Applicability, Diagnostic
from torchlint.report.context import ReportContext
from torchlint.report.diff import render_fix_diff
from torchlint.report.header import header
from torchlint.report.snippet import render_snippet
from torchlint.report.source import location_label, printable
from torchlint.report.style import BOLD, CYAN, YELLOW, Style
from torchlint.report.summary import join_lines, summary_lines

UNSAFE_NOTE = "This is an unsafe fix and may change runtime behavior"


def render(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """The whole full report: one block per finding, a blank line after each, the summary."""
    style = Style(context.color)
    lines: List[str] = []
    for diagnostic in diagnostics:
        lines += diagnostic_block(diagnostic, context, style)
        lines.append("")
    return join_lines([*lines, *summary_lines(diagnostics, context, style)])


def diagnostic_block(diagnostic: Diagnostic, context: ReportContext, style: Style) -> List[str]:
    """Header, ``-->`` location, snippet, hint, fix description and diff, unsafe note."""
    source = context.source_for(diagnostic)
    snippet = render_snippet(source, diagnostic, style) if source is not None else None
    width = snippet.width if snippet else 1
    arrow = f"{' ' * width}{style.gutter('-->')} {style.path(location_label(diagnostic))}"
    lines = [header(diagnostic, context, style), arrow, *(snippet.lines if snippet else ())]
    if diagnostic.hint:
        lines.append(labelled("help", diagnostic.hint, style, CYAN))
    return lines + _fix_lines(diagnostic, source, style)


def _fix_lines(diagnostic: Diagnostic, source: Optional[str], style: Style) -> List[str]:
    """The fix's description (unless the hint said it), its diff and the unsafe note."""
    fix = diagnostic.fix
    if fix is None:
        return []
    lines: List[str] = []
    if fix.description and fix.description != diagnostic.hint:
        lines.append(labelled("fix", fix.description, style, CYAN))
    lines += render_fix_diff(source, fix, style) if source is not None else []
    if fix.applicability is Applicability.UNSAFE:
        lines.append(labelled("note", UNSAFE_NOTE, style, YELLOW))
    return lines


def labelled(label: str, text: str, style: Style, colour: str) -> str:
    """``label: text``, continuation lines indented under the text."""
    indent = "\n" + " " * (len(label) + 2)
    body = indent.join(printable(line) for line in text.splitlines())
    return f"{style.paint(label, BOLD, colour)}: {body}"
