"""The settings every reporter reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from torchlint.model import Diagnostic


@dataclass(frozen=True)
class ReportContext:
    """What a reporter needs besides the diagnostics.

    ``sources`` maps a path (as the diagnostics spell it) to the text the
    diagnostics' positions and fix offsets refer to; a missing path means no
    snippet, no diff and (in JSON) raw offsets.  ``fixed`` is how many
    findings ``--fix`` already repaired, for the ``Found`` line.
    """

    sources: Mapping[str, str]
    unsafe_fixes: bool
    color: bool
    fix_command: str = "torchlint check --fix"
    show_summary: bool = True
    fixed: int = 0

    def source_for(self, diagnostic: Diagnostic) -> Optional[str]:
        """The text a diagnostic's positions refer to (a notebook cell's own)."""
        if diagnostic.cell is not None:
            return self.sources.get(f"{diagnostic.path}#cell{diagnostic.cell}")
        return self.sources.get(diagnostic.path)

    @property
    def unsafe_fix_command(self) -> str:
        """The command that also applies unsafe fixes."""
        if "--unsafe-fixes" in self.fix_command.split():
            return self.fix_command
        return f"{self.fix_command} --unsafe-fixes"
