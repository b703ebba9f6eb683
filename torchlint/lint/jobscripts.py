"""Lint and fix batch scripts: parse, run the job-script rules, apply
suppression comments, turn findings into diagnostics."""

from __future__ import annotations

import bisect
import re
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from torchlint.lint.engine import LintConfig
from torchlint.lint.fixer import FixResult, MAX_PASSES, apply_edits, select_fixes
from torchlint.jobscript.model import JobScript
from torchlint.jobscript.parse import SUFFIXES, has_directives, parse_job_script
from torchlint.jobscript.rule import JobFinding, JobScriptRule
from torchlint.model import Diagnostic, Edit, Fix, Position
from torchlint.analysis.names import ImportTable
from torchlint.ruleapi.rule import FileContext
from torchlint.ruleapi.directives import Suppressions
from torchlint.lint.suppress import NextCodeLine, split_lines, suppressions_from

PYTHON_SUFFIXES = (".py", ".pyi", ".ipynb")


def is_job_script(path: Path, text: str) -> bool:
    """Whether a file is linted as a batch script: not a Python file, and it
    has ``#SBATCH`` lines."""
    return not path.name.endswith(PYTHON_SUFFIXES) and has_directives(text)


SHELL_SUFFIXES = (*SUFFIXES, ".bash")
_SHELL_LINE = re.compile(r"#![ \t]*\S*/(?:env[ \t]+)?(?:ba|da|k|z)?sh(?:[ \t]|$)", re.MULTILINE)
NOT_A_JOB_SCRIPT = ("skipped: a shell script without #SBATCH lines is not a Slurm job script "
                    "(torchlint lints Python files, notebooks and job scripts)")


def is_shell_script(path: Path, text: str) -> bool:
    """Whether a file that is not a job script is a shell script all the
    same (by its suffix, or a ``#!`` line naming a shell): it is skipped with
    a note, not linted as Python."""
    if path.name.endswith(PYTHON_SUFFIXES):
        return False
    return path.name.endswith(SHELL_SUFFIXES) or _SHELL_LINE.match(text) is not None


def _comments(lines: Sequence[str]) -> Iterator[Tuple[int, str, bool]]:
    """(line, comment, alone on its line) for the shell's comments; the text
    after ``#SBATCH`` options counts as a trailing comment of that line."""
    for number, line in enumerate(lines, start=1):
        if "#" not in line:
            continue
        stripped = line.lstrip()
        if line.startswith("#SBATCH"):
            match = re.search(r"\s#", line)
            if match:
                yield number, line[match.start() + 1:], False
        elif stripped.startswith("#"):
            yield number, stripped, True
        else:
            start = _comment_start(line)
            if start >= 0:
                yield number, line[start:], False


def _comment_start(line: str) -> int:
    """Where the line's comment starts: a ``#`` that begins a word outside
    quotes; -1 when it has none.  One pass over the line (a regular
    expression blanking quoted text was quadratic on unclosed quotes)."""
    quote = ""
    index = 0
    while index < len(line):
        char = line[index]
        if quote == "'":
            quote = "" if char == "'" else quote
        elif quote:
            if char == "\\":
                index += 1
            elif char == '"':
                quote = ""
        elif char == "\\":
            index += 1
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return index
        index += 1
    return -1


def _is_code(line: str) -> bool:
    """Whether a line of a job script is one an own-line comment above covers."""
    stripped = line.strip()
    return bool(stripped) and (not stripped.startswith("#") or line.startswith("#SBATCH"))


def _suppressions(text: str) -> Suppressions:
    lines = split_lines(text)  # numbered as the findings' positions are
    return suppressions_from(_comments(lines), NextCodeLine(lines, _is_code).after)


class _Positions:
    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]

    def at(self, offset: int) -> Position:
        line = bisect.bisect_right(self.starts, offset)
        return Position(line, offset - self.starts[line - 1] + 1)


def job_rules(config: LintConfig) -> List[type]:
    """The enabled job-script rules that apply to the target torch version."""
    return [rule for rule in config.rules
            if issubclass(rule, JobScriptRule) and rule.torch_range.contains(config.torch_version)]


def lint_job_script(text: str, path: str, config: LintConfig, file: Optional[Path] = None) -> List[Diagnostic]:
    """The kept diagnostics of one batch script, sorted.  ``file`` is where it
    is on disk (launched files are resolved from its folder)."""
    rules = job_rules(config)
    if not rules:
        return []
    job = parse_job_script(text, file if file is not None else Path(path))
    context = FileContext(path=path, source=text, module=cst.Module(body=()), names=ImportTable.from_module(cst.Module(body=())),
                          torch_version=config.torch_version, options=config.options,
                          frameworks=config.frameworks)
    findings: List[JobFinding] = []
    for rule_class in rules:
        rule = rule_class(context)
        assert isinstance(rule, JobScriptRule)
        rule.check(job)
        findings.extend(rule.findings)
    return _diagnostics(findings, text, path)


def _diagnostics(findings: List[JobFinding], text: str, path: str) -> List[Diagnostic]:
    suppressions = _suppressions(text)
    positions = _Positions(text)
    seen: Set[Tuple[str, Position, str]] = set()
    diagnostics: List[Diagnostic] = []
    for finding in findings:
        start, end = positions.at(finding.span.start), positions.at(finding.span.end)
        lines = (start.line,) if start.line == end.line else (start.line, end.line)
        if suppressions.silences(finding.code, finding.name, lines, start.line):
            continue
        key = (finding.code, start, finding.message)
        if key in seen:
            continue
        seen.add(key)
        fix = None
        if finding.fix is not None:
            fix = Fix(tuple(sorted(finding.fix.edits)), finding.fix.applicability, finding.fix.description)
        diagnostics.append(Diagnostic(path, start, end, finding.code, finding.name, finding.message, fix,
                                      finding.hint))
    return sorted(diagnostics, key=lambda d: d.sort_key)


def fix_job_script(text: str, path: str, config: LintConfig, *, unsafe: bool = False,
                   file: Optional[Path] = None) -> FixResult:
    """Apply the job-script rules' fixes in passes until none is left."""
    applied: List[Diagnostic] = []
    diagnostics = lint_job_script(text, path, config, file)
    for _ in range(MAX_PASSES):
        candidates = [d for d in diagnostics if d.fixable(unsafe)]
        if not candidates:
            return FixResult(text, tuple(applied), tuple(diagnostics), (), True)
        chosen = select_fixes(candidates)
        edits: List[Edit] = []
        for diagnostic in chosen:
            assert diagnostic.fix is not None
            edits.extend(e for e in diagnostic.fix.edits if e not in edits)
        text = apply_edits(text, edits)
        applied.extend(chosen)
        diagnostics = lint_job_script(text, path, config, file)
    converged = not any(d.fixable(unsafe) for d in diagnostics)
    return FixResult(text, tuple(applied), tuple(diagnostics), (), converged)


__all__ = ["JobScript", "fix_job_script", "is_job_script", "is_shell_script", "lint_job_script"]
