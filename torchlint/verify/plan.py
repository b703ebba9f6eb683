"""Which cases one `torchlint verify` invocation runs (no child processes, no torch).

A case is one rule's fix of one program: a verification program shipped in the rule's
package (its verification spec names it) or a user's script.  The fixed source comes from
torchlint's own fixer with only that rule selected, or, with ``verify ORIGINAL --against
CHANGED`` (``plan_pair``), from the user: a change made by hand or by another tool, which is
also how the tests prove that the checks can fail.  Settings are resolved here, once per
script; the session then runs the cases and never asks the linter again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from torchlint.lint.fixer import fix_text
from torchlint.lint.settings import Settings, SettingsResolver
from torchlint.ruleapi.registry import all_rules, by_code_or_name
from torchlint.ruleapi.rule import FixAvailability, RuleClass
from torchlint.ruleapi.verification import program_paths, rule_directory
from torchlint.verify.contracts import NO_RULE, SAME_OUTPUTS


class UsageError(Exception):
    """A problem with what was asked (an unknown rule, one without a fix); exit 2."""


@dataclass(frozen=True)
class Case:
    """One rule's fix of one program, ready to run."""

    rule: str
    name: str
    target: str  # what the report calls it
    original: str
    fixed: str
    fixes: int  # fixes torchlint applied
    found: int = 0  # findings of the rule in the original
    script: Optional[Path] = None  # a user's script; None for a shipped program
    error: str = ""  # why the case cannot run, if it cannot


def fixable(rule: RuleClass) -> bool:
    return rule.fix_availability is not FixAvailability.NONE


def verifiable_rules() -> List[RuleClass]:
    """Rules with a fix and a verification program."""
    return [rule for rule in all_rules() if fixable(rule) and program_paths(rule)]


def plan_programs(rule: RuleClass, base: Settings) -> List[Case]:
    """One case per verification program the rule ships."""
    paths = program_paths(rule)
    if not paths:
        return [Case(rule.code, rule.name, rule.name, "", "", 0, error=f"{rule.code} has no verification program")]
    return [plan_program(rule, base, path) for path in paths]


def plan_program(rule: RuleClass, base: Settings, path: Path) -> Case:
    """The case for one of a rule's shipped verification programs."""
    target = f"{rule_directory(rule).name}/{path.name}"
    source = path.read_text(encoding="utf-8")
    result = fix_text(source, path.name, base.for_verification(rule, program=True).lint_config(Path(path.name)),
                      unsafe=True)
    fixed, fixes, found = result.source, len(result.applied), result.first_found
    error = ""
    if fixes == 0 or fixed == source:
        error = (f"torchlint's fixer did not change {target} ({found} finding(s)); the program no longer "
                 "exercises the rule")
    return Case(rule.code, rule.name, target, source, fixed, fixes, found, error=error)


def plan_script(path: Path, rules: Optional[Sequence[RuleClass]], settings: "Settings | SettingsResolver",
                notes: Optional[List[str]] = None) -> List[Case]:
    """One case per rule whose fixer changes the script: ``rules``, or (None)
    every fixable rule the script's settings enable.  ``settings`` are the
    script's, or the resolver that finds them; they are resolved here, once,
    and each rule's fix is made with only that rule selected.  ``notes``
    gets a line when no fix changes the script."""
    if isinstance(settings, SettingsResolver):
        settings = settings.for_path(path)
    source = path.read_text(encoding="utf-8")
    if rules is None:
        rules = [rule for rule in settings.enabled_rules(path) if rule.fix_availability is not FixAvailability.NONE]
    cases = []
    for rule in rules:
        # Fixed with torchlint's own fixer; ``first_found``: the findings before fixing.
        config = settings.for_verification(rule, program=False).lint_config(Path(str(path)))
        result = fix_text(source, str(path), config, unsafe=True)
        if result.applied and result.source != source:
            cases.append(
                Case(rule.code, rule.name, str(path), source, result.source, len(result.applied), result.first_found,
                     script=path.resolve())
            )
    if not cases and notes is not None:
        codes = ", ".join(rule.code for rule in rules) or "no rules"
        notes.append(f"{path}: no fix of {codes} changes this script; nothing to verify.")
    return cases


def plan_pair(original: Path, changed: Path, rules: Sequence[RuleClass]) -> List[Case]:
    """``verify ORIGINAL --against CHANGED``: a change made by hand or another tool,
    judged by each rule's contract, or by the strict "same outputs" one without rules."""
    before = original.read_text(encoding="utf-8")
    after = changed.read_text(encoding="utf-8")
    script = original.resolve()
    if not rules:
        return [Case(NO_RULE, SAME_OUTPUTS, str(original), before, after, 0, script=script)]
    return [Case(rule.code, rule.name, str(original), before, after, 0, script=script) for rule in rules]


def _select(names: Sequence[str]) -> List[RuleClass]:
    chosen: List[RuleClass] = []
    for name in names:
        rule = by_code_or_name(name)
        if rule is None:
            raise UsageError(f"unknown rule `{name}`")
        if not fixable(rule):
            raise UsageError(f"{rule.code} ({rule.name}) has no autofix, so there is nothing to verify")
        if rule not in chosen:
            chosen.append(rule)
    return chosen


def no_program_note(rule: RuleClass) -> str:
    """Why a fixable rule's shipped programs are not verified: the reason its spec gives."""
    spec = rule.verification
    stated = next((check for check in spec.contract.checks if check.startswith("no program")), "") if spec else ""
    reason = stated.partition(":")[2].strip() if ":" in stated else "none has been written yet"
    return f"{rule.code} ({rule.name}) has a fix but no verification program ({reason}); not verified."


def _programs_of(names: Sequence[str], notes: List[str]) -> List[RuleClass]:
    """The named rules (default: every fixable one) that ship programs; a note for each
    one that does not.  Naming only rules without programs is a usage error."""
    rules = _select(names) if names else [rule for rule in all_rules() if fixable(rule)]
    missing = [rule for rule in rules if not program_paths(rule)]
    if names and len(missing) == len(rules):
        raise UsageError(" ".join(no_program_note(rule) for rule in missing))
    notes.extend(no_program_note(rule) for rule in missing)
    return [rule for rule in rules if program_paths(rule)]


def plan(paths: Sequence[Path], rule_names: Sequence[str], against: Optional[Path]) -> Tuple[List[Case], List[str]]:
    """Every case of one invocation, and notes on what was left out and why.  Raises
    :class:`UsageError`, ``ConfigError`` or ``OSError``."""
    notes: List[str] = []
    if against is not None:
        if len(paths) != 1:
            raise UsageError("--against compares one ORIGINAL script with one changed version: give one PATH")
        return plan_pair(paths[0], against, _select(rule_names)), notes
    resolver = SettingsResolver()
    if not paths:
        return [case for rule in _programs_of(rule_names, notes) for case in plan_programs(rule, resolver.default)], notes
    chosen = _select(rule_names) if rule_names else None
    cases: List[Case] = []
    for path in paths:
        cases.extend(plan_script(path, chosen, resolver, notes))
    return cases, notes

