"""Parse a file once, run every enabled rule in one traversal, return diagnostics."""

from __future__ import annotations

import ast
import hashlib
import sys
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

import libcst as cst

from torchlint.analysis.index import EMPTY, ProjectIndex
from torchlint.source.edits import Located
from torchlint.model import Applicability, Diagnostic, Fix
from torchlint.analysis.names import ImportTable
# parse_module and parse_error moved to torchlint.source.parsing; re-exported here.
from torchlint.source.parsing import cpython_syntax_error, on_deep_stack
from torchlint.ruleapi.precheck import PrecheckFacts, facts_from, facts_of
from torchlint.source.parsing import parse_error as parse_error, parse_module as parse_module
from torchlint.ruleapi.rule import (
    CURRENT_TORCH,
    FileContext,
    OptionValue,
    Report,
    Rule,
    RuleClass,
    TorchVersion,
)
from torchlint.ruleapi.directives import Suppressions, Use
from torchlint.lint.suppress import parse_suppressions
from torchlint.data.versions import DEFAULT_TARGET
from torchlint.source.target import PythonVersion
from torchlint.source.tree import children, collected_once
from torchlint.data.versions import FrameworkReleases

Handler = Callable[[cst.CSTNode], None]
# Nodes that open a scope (exact types: isinstance on libcst's ABCs is slow).
_SCOPE_NODES = frozenset({
    cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
})


@dataclass(frozen=True)
class LintConfig:
    """Everything the engine needs to lint one file."""

    rules: Tuple[RuleClass, ...]
    torch_version: TorchVersion = CURRENT_TORCH
    options: Mapping[str, Mapping[str, OptionValue]] = field(default_factory=dict)
    precheck: bool = True
    # The oldest Python the code must parse on: fixes are checked against it.
    target_version: PythonVersion = DEFAULT_TARGET
    # The framework releases the code targets (none pinned: the newest).
    frameworks: FrameworkReleases = FrameworkReleases()
    # A notebook's cells in the joined module: (first line, cell number), so
    # that messages cite other lines as "cell N, line L".
    cell_starts: Tuple[Tuple[int, int], ...] = ()
    # (code, "none" | "safe" | "unsafe"): fixes dropped or re-rated by the
    # `unfixable` / `extend-safe-fixes` / `extend-unsafe-fixes` settings.
    fix_policy: Tuple[Tuple[str, str], ...] = ()
    project: ProjectIndex = EMPTY
    """The run's cross-file index (the empty one for a text on its own)."""


_HANDLERS: Dict[RuleClass, Tuple[Tuple[str, str], ...]] = {}


def _handler_names(rule: RuleClass) -> Tuple[Tuple[str, str], ...]:
    """(``visit``/``leave``, node type name) for each visitor method of a rule."""
    cached = _HANDLERS.get(rule)
    if cached is not None:
        return cached
    pairs = []
    for attribute in dir(rule):
        for prefix in ("visit_", "leave_"):
            if attribute.startswith(prefix) and callable(getattr(rule, attribute)):
                pairs.append((prefix[:-1], attribute[len(prefix):]))
    _HANDLERS[rule] = tuple(sorted(pairs))
    return _HANDLERS[rule]


class _Dispatcher:
    """One traversal that calls each rule's handlers and keeps the parent stack.

    It walks the dataclass fields directly instead of using libcst's
    ``visit``, which rebuilds every node on the way back up.
    """

    def walk(self, node: cst.CSTNode) -> None:
        """Visit ``node`` and its subtree, depth first in source order."""
        self.on_visit(node)
        for child in children(node):
            self.walk(child)
        self.on_leave(node)

    def __init__(self, rules: Sequence[Rule], context: FileContext) -> None:
        self._context = context
        self._visit: Dict[str, List[Handler]] = {}
        self._leave: Dict[str, List[Handler]] = {}
        for rule in rules:
            for kind, node_type in _handler_names(type(rule)):
                table = self._visit if kind == "visit" else self._leave
                table.setdefault(node_type, []).append(getattr(rule, f"{kind}_{node_type}"))

    def on_visit(self, node: cst.CSTNode) -> None:
        handlers = self._visit.get(type(node).__name__)
        if handlers:
            for handler in handlers:
                handler(node)
        if type(node) in _SCOPE_NODES:
            self._context.names.enter(node)
        self._context.parents.append(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self._context.parents.pop()
        if type(original_node) in _SCOPE_NODES:
            self._context.names.leave(original_node)
        handlers = self._leave.get(type(original_node).__name__)
        if handlers:
            for handler in handlers:
                handler(original_node)


def might_match(
    source: str,
    rules: Sequence[RuleClass],
    options: Mapping[str, Mapping[str, OptionValue]] = {},
) -> bool:
    """Cheap test: can any rule fire on this text at all?"""
    for rule in rules:
        words = rule.triggers(options.get(rule.code, {}))
        if not words or any(word in source for word in words):
            return True
    return False


def lint_source(source: str, path: str, config: LintConfig) -> List[Diagnostic]:
    """All kept diagnostics of one file's text, sorted."""
    if not config.rules:
        return []
    with collected_once():
        return on_deep_stack(_lint_source, source, path, config)


def could_match(
    facts: PrecheckFacts,
    rules: Sequence[RuleClass],
    options: Mapping[str, Mapping[str, OptionValue]] = {},
) -> bool:
    """Whether any rule might report on a file with these pre-check facts."""
    return any(rule.could_match(facts, options.get(rule.code, {})) for rule in rules)


def _lint_source(source: str, path: str, config: LintConfig) -> List[Diagnostic]:
    enabled = frozenset(rule.code for rule in config.rules)
    can_match = True
    facts: Optional[PrecheckFacts] = None
    if config.precheck:
        facts = _summary_from_index(source, config.project) or facts_of(source)
        if facts is not None:
            # CPython's parser (far cheaper than libcst) read the file: the
            # rules decide from its summary whether libcst needs to, and
            # only those that might report run.
            config = _kept(facts, config, path)
            if not config.rules:
                return []
        else:  # a syntax error, or syntax newer than this Python: libcst has the last word
            # (the project's classes can widen what a rule matches: it may report)
            can_match = might_match(source, config.rules, config.options) or bool(config.project.classes)
    parsed = parse_module(source, path)
    if isinstance(parsed, Diagnostic):
        return [parsed]
    if facts is None:  # CPython has not read it yet, or could not
        newer = _newer_than_target(source, path, config.target_version)
        if newer is not None:
            return [newer]
    if not can_match:
        return []
    return _run_rules(parsed, source, path, config, facts.tree if facts is not None else None, enabled)


def _summary_from_index(source: str, project: ProjectIndex) -> Optional[PrecheckFacts]:
    """The pre-check summary the index made of this text when it parsed the
    file (:attr:`ProjectIndex.prechecks`, by the digest of the file's bytes):
    one ``ast`` parse a file serves both.  None: parse it here."""
    if not project.prechecks:
        return None
    digest = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
    return facts_from(project.prechecks.get(digest), source)


def _kept(facts: PrecheckFacts, config: LintConfig, path: str) -> LintConfig:
    """``config`` with only the rules that might report on a file with these
    pre-check facts."""
    if config.project is not EMPTY:
        facts = replace(facts, project=config.project, path=path)
    rules = tuple(rule for rule in config.rules if rule.could_match(facts, config.options.get(rule.code, {})))
    return replace(config, rules=rules)


def _newer_than_target(source: str, path: str, target: PythonVersion) -> Optional[Diagnostic]:
    """libcst reads syntax of every Python release; CPython only its own.  When
    this Python is at least as new as the project's oldest, what it rejects the
    project's Python rejects too: a syntax error there, not a file to fix."""
    if (target.major, target.minor) > sys.version_info[:2]:
        return None  # this Python is older than the target: it cannot judge
    error = cpython_syntax_error(source, path)
    if error is None:
        return None
    return replace(error, message=f"{error.message} (target Python {target.dotted})")


def lint_module(module: cst.Module, source: str, path: str, config: LintConfig) -> List[Diagnostic]:
    """Run the rules over an already parsed module (the fixer's later passes):
    with the pre-check on, it still picks which rules run."""
    with collected_once():
        return _lint_module(module, source, path, config)


def _lint_module(module: cst.Module, source: str, path: str, config: LintConfig) -> List[Diagnostic]:
    enabled = frozenset(rule.code for rule in config.rules)
    python_tree: Optional[ast.AST] = None
    if config.precheck:
        facts = facts_of(source)
        if facts is not None:
            config, python_tree = _kept(facts, config, path), facts.tree
    return _run_rules(module, source, path, config, python_tree, enabled) if config.rules else []


def _run_rules(module: cst.Module, source: str, path: str, config: LintConfig,
               python_tree: Optional[ast.AST], enabled: FrozenSet[str] = frozenset()) -> List[Diagnostic]:
    """The rules of ``config`` over a parsed module (``python_tree``: CPython's
    tree of the same text, when one was made; ``enabled``: the codes selected
    for the file, before the pre-check left some out)."""
    context = FileContext(
        path=path,
        source=source,
        module=module,
        names=ImportTable.from_module(module, path, config.project),
        torch_version=config.torch_version,
        options=config.options,
        python_tree=python_tree,
        frameworks=config.frameworks,
        enabled_codes=enabled or frozenset(rule.code for rule in config.rules),
        cell_starts=config.cell_starts,
        project=config.project,
    )
    rules = [rule(context) for rule in config.rules if rule.torch_range.contains(config.torch_version)]
    try:
        _Dispatcher(rules, context).walk(module)
    except RecursionError:
        return [parse_error(path, "the file is nested too deeply to lint")]
    suppression_readers = [rule for rule in rules if type(rule).reads_suppressions]
    if not context.reports and not suppression_readers:
        return []
    use = Use(parse_suppressions(source))
    diagnostics = _to_diagnostics(context.reports, context.facts.located, path, use)
    if suppression_readers:
        # Rules about the suppression comments themselves run once every
        # other finding has been matched against them.
        context.reports.clear()
        for rule in suppression_readers:
            rule.after_suppressions(use)
        diagnostics += _to_diagnostics(context.reports, context.facts.located, path, Use(use.suppressions.naming()))
    if config.fix_policy:
        diagnostics = _with_fix_policy(diagnostics, dict(config.fix_policy))
    return sorted(diagnostics, key=lambda d: d.sort_key)


def _with_fix_policy(diagnostics: Sequence[Diagnostic], policy: Mapping[str, str]) -> List[Diagnostic]:
    """The findings with the fixes of unfixable rules removed (the finding
    stays) and the configured safety applied to the others."""
    changed: List[Diagnostic] = []
    for diagnostic in diagnostics:
        wanted = policy.get(diagnostic.code)
        fix = diagnostic.fix
        if wanted is None or fix is None:
            changed.append(diagnostic)
        elif wanted == "none":
            changed.append(replace(diagnostic, fix=None))
        else:
            changed.append(replace(diagnostic, fix=replace(fix, applicability=Applicability(wanted))))
    return changed


def _to_diagnostics(
    reports: Sequence[Report],
    located: Located,
    path: str,
    use: Use,
) -> List[Diagnostic]:
    diagnostics: List[Diagnostic] = []
    seen = set()
    suppressions: Suppressions = use.suppressions
    for report in reports:
        if report.node is not None:
            start, end = located.range(report.node)
        else:
            assert report.span is not None
            start, end = located.index.position(report.span[0]), located.index.position(report.span[1])
        statement_line = located.line(report.statement) if report.statement else None
        lines = (start.line,) if start.line == end.line else (start.line, end.line)
        silenced = suppressions.match(report.code, report.name, lines, statement_line)
        if silenced is not None:
            use.record(silenced)
            continue
        fix: Optional[Fix] = report.text_fix
        if report.fix is not None:
            edits = located.edits(report.fix.replacements, report.fix.imports)
            if edits:
                fix = Fix(edits, report.fix.applicability, report.fix.description)
        key = (report.code, start, end, report.message)
        if key in seen:
            continue
        seen.add(key)
        diagnostics.append(
            Diagnostic(path, start, end, report.code, report.name, report.message, fix, report.hint)
        )
    return diagnostics
