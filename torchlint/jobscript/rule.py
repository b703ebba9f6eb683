"""The base class of rules that read batch scripts (``JobScriptRule``).

A job-script rule is a :class:`~torchlint.ruleapi.rule.Rule` (so selection,
options, torch ranges, docs and examples work as for every rule), but
instead of visiting a syntax tree it gets the parsed :class:`JobScript` in
:meth:`JobScriptRule.check` and reports at spans of the script's text.
Facts about the launched Python come from :func:`code_facts`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, List, Optional, Tuple

from torchlint.jobscript.facts import CodeFacts, code_facts
from torchlint.jobscript.model import JobScript, Launch, Span
from torchlint.model import Applicability, Edit
from torchlint.ruleapi.rule import FileContext, Rule


@dataclass(frozen=True)
class JobFix:
    """Text edits of the script that repair one finding."""

    edits: Tuple[Edit, ...]
    applicability: Applicability
    description: str


@dataclass(frozen=True)
class JobFinding:
    """A finding as a job-script rule made it: where, what, and its fix."""

    code: str
    name: str
    span: Span
    message: str
    fix: Optional[JobFix] = None
    hint: Optional[str] = None


class JobScriptRule(Rule):
    """A rule that checks a Slurm batch script against the code it launches.

    Python files never trigger it (it has no visitor methods, and its
    trigger word ``#SBATCH`` keeps the engine from parsing a file for it).
    """

    trigger_words = ("#SBATCH",)
    example_name: ClassVar[str] = "job.sh"

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.findings: List[JobFinding] = []

    def check(self, job: JobScript) -> None:
        """Report what is wrong with ``job`` (override)."""
        raise NotImplementedError

    def code_facts(self, launch: Launch) -> Optional[CodeFacts]:
        """Facts about the file a launch starts; None when it is unknown."""
        return None if launch.target is None else code_facts(launch.target)

    def report_span(self, span: Span, message: str, *, fix: Optional[JobFix] = None,
                    hint: Optional[str] = None) -> None:
        """Record a finding at ``span`` of the script."""
        self.findings.append(JobFinding(self.code, self.name, span, message, fix, hint))
