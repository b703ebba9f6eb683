"""The closing lines of the text formats: counts and how to apply fixes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

from torchlint.ruleapi.meta import Severity
from torchlint.model import Applicability, Diagnostic
from torchlint.report.context import ReportContext
from torchlint.report.style import BOLD, GREEN, Style


@dataclass(frozen=True)
class FixCounts:
    """How many findings the next ``--fix`` run would repair, and how many it would skip."""

    applicable: int
    hidden_unsafe: int
    applicable_unsafe: int

    @classmethod
    def of(cls, diagnostics: Sequence[Diagnostic], unsafe_fixes: bool) -> "FixCounts":
        """Count the fixes in ``diagnostics`` under the given safety level."""
        fixes = [d.fix for d in diagnostics if d.fix is not None]
        unsafe = sum(1 for fix in fixes if fix.applicability is Applicability.UNSAFE)
        if unsafe_fixes:
            return cls(len(fixes), 0, unsafe)
        return cls(len(fixes) - unsafe, unsafe, 0)


def _plural(count: int, word: str, suffix: str = "s") -> str:
    return f"{count} {word}{'' if count == 1 else suffix}"


def counted(diagnostics: Sequence[Diagnostic]) -> str:
    """``2 errors and 1 warning``: findings counted by their rule's severity
    (suggestions and advisory rules are warnings, as in the github and SARIF
    formats), so a run of suggestions does not read as errors."""
    from torchlint.ruleapi.registry import severity_of

    warnings = sum(1 for d in diagnostics if severity_of(d.code) is Severity.WARNING)
    errors = len(diagnostics) - warnings
    parts = [_plural(errors, "error")] if errors else []
    parts += [_plural(warnings, "warning")] if warnings else []
    return " and ".join(parts) or "0 errors"


def found_line(diagnostics: Sequence[Diagnostic], context: ReportContext, style: Style) -> str:
    """``Found 2 errors and 1 warning.``, with fixed/remaining after
    ``--fix``, or ``All checks passed!``."""
    remaining = len(diagnostics)
    if context.fixed:
        total = context.fixed + remaining
        left = counted(diagnostics) if remaining else "0"
        return f"Found {_plural(total, 'finding')} ({context.fixed} fixed, {left} remaining)."
    if remaining:
        return f"Found {counted(diagnostics)}."
    return style.paint("All checks passed!", BOLD, GREEN)


def fix_hint_lines(counts: FixCounts, context: ReportContext, style: Style) -> List[str]:
    """The ``[*] N fixable with ...`` hint, naming the exact command; empty if no fixes."""
    unsafe_command = f"`{context.unsafe_fix_command}`"
    hidden = f"{_plural(counts.hidden_unsafe, 'unsafe fix', 'es')} available with {unsafe_command}"
    if counts.applicable:
        command = unsafe_command if counts.applicable_unsafe else f"`{context.fix_command}`"
        line = f"{style.fix_marker(True)} {counts.applicable} fixable with {command}"
        return [f"{line} ({hidden})." if counts.hidden_unsafe else f"{line}."]
    if counts.hidden_unsafe:
        return [f"No safe fixes available ({hidden})."]
    return []


def summary_lines(diagnostics: Sequence[Diagnostic], context: ReportContext, style: Style) -> List[str]:
    """Every closing line, or none when ``context.show_summary`` is off."""
    if not context.show_summary:
        return []
    counts = FixCounts.of(diagnostics, context.unsafe_fixes)
    return [found_line(diagnostics, context, style), *fix_hint_lines(counts, context, style)]


def join_lines(lines: Sequence[str]) -> str:
    """Lines joined with newlines, ending in one; empty for no lines."""
    return "".join(f"{line}\n" for line in lines)


def fixes_text(fixed: Sequence[Tuple[str, Sequence[Diagnostic]]]) -> str:
    """``--show-fixes``: what was fixed (``fixed``: each file's path and the
    findings its written fixes repaired), per file and rule, as Ruff lists it."""
    fixed = [(path, applied) for path, applied in fixed if applied]
    total = sum(len(applied) for _, applied in fixed)
    if not total:
        return "No findings were fixed.\n\n"
    lines = [f"Fixed {total} finding{'s' if total != 1 else ''}:"]
    for path, applied in fixed:
        lines.append(f"- {path}:")
        counts: Dict[Tuple[str, str], int] = {}
        for diagnostic in applied:
            counts[(diagnostic.code, diagnostic.name)] = counts.get((diagnostic.code, diagnostic.name), 0) + 1
        lines += [f"    {count} \u00d7 {code} ({name})" for (code, name), count in sorted(counts.items())]
    return "\n".join(lines) + "\n\n"
