"""What a rule is: metadata, options, and visitor methods that report findings.

A rule is one small class in ``rules/``.  It declares its code, name and
message, the options it reads, and ``visit_<Node>``/``leave_<Node>`` methods
named after libcst node types.  The engine runs every enabled rule in one
traversal; a rule calls :meth:`Rule.report` and never prints or touches files.
"""

from __future__ import annotations

import ast
import bisect
import inspect
import re
import textwrap
from pathlib import PurePath
from dataclasses import dataclass, field
from functools import cached_property
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Dict,
    FrozenSet,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    Union,
)

import libcst as cst
from libcst.helpers import get_full_name_for_node as _full_name

from torchlint.analysis import Analysis, Facts
from torchlint.analysis.import_time import is_main_guard
from torchlint.analysis.index import EMPTY, ProjectIndex

if TYPE_CHECKING:
    from torchlint.analysis.asks import Query
    from torchlint.ruleapi.directives import Use
from torchlint.source.edits import Replacement as Replacement
from torchlint.model import Applicability, Edit, Fix
from torchlint.analysis.names import ImportTable
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.verification import MEASURED_COLUMNS, VerificationSpec, contract_of, read_measured
from torchlint.ruleapi.meta import FixAvailability as FixAvailability, Option as Option, OptionValue as OptionValue, Severity as Severity
from torchlint.data.versions import CURRENT_TORCH as CURRENT_TORCH, TorchRange as TorchRange, TorchVersion as TorchVersion
from torchlint.data.versions import FrameworkReleases, Release



@dataclass(frozen=True)
class Example:
    """A short source the rule reports, for its docs and its automatic tests.

    ``tests/test_rule_examples.py`` checks that the rule reports it
    ``findings`` times under ``options`` and target torch ``torch`` (default:
    the current release), and, when ``fixed`` is given, that
    ``fix --unsafe-fixes`` turns it into exactly ``fixed``.  Sources are
    dedented, so they can be written as indented triple-quoted strings.
    """

    source: str
    fixed: Optional[str] = None
    findings: int = 1
    options: Mapping[str, OptionValue] = field(default_factory=dict)
    torch: str = ""
    files: Mapping[str, str] = field(default_factory=dict)
    """Other files beside the example, by relative path (for a job-script
    rule: the Python code the script launches)."""
    frameworks: Mapping[str, str] = field(default_factory=dict)
    """Framework releases the example targets, by framework (``{"lightning": "1.9"}``;
    others: their newest)."""


@dataclass(frozen=True)
class FixRequest:
    """What a rule asks the engine to change; turned into text edits later."""

    replacements: Tuple[Replacement, ...]
    applicability: Applicability
    description: str
    imports: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Report:
    """A finding as a rule made it, before positions are known."""

    code: str
    name: str
    node: Optional[cst.CSTNode]
    message: str
    statement: Optional[cst.CSTNode]
    fix: Optional[FixRequest]
    hint: Optional[str]
    span: Optional[Tuple[int, int]] = None
    """Character offsets, for a finding on text that is no node (a comment)."""
    text_fix: Optional[Fix] = None
    """A fix given as text edits (for a finding with a ``span``)."""


_NEXT_REMOVED = TorchVersion(1, 13)
"""The release whose loader iterators lost their ``.next()`` method."""
_TEST_FILE = re.compile(r"^(?:test_.*|.*_test|conftest)\.py$")


@dataclass
class FileContext:
    """What a rule may know about the file it is visiting."""

    path: str
    source: str
    module: cst.Module
    names: ImportTable
    torch_version: TorchVersion
    options: Mapping[str, Mapping[str, OptionValue]]
    parents: List[cst.CSTNode] = field(default_factory=list)
    reports: List[Report] = field(default_factory=list)
    python_tree: Optional[ast.AST] = None
    """CPython's tree of ``source``, when the pre-check parsed it."""
    frameworks: FrameworkReleases = field(default_factory=FrameworkReleases)
    """The framework releases the project pins (the rest: their newest)."""
    enabled_codes: FrozenSet[str] = frozenset()
    """The codes selected for this file (what a suppression comment may name)."""
    cell_starts: Tuple[Tuple[int, int], ...] = ()
    """For a notebook: (first line in the joined text, cell number) per cell."""
    project: ProjectIndex = EMPTY
    """The run's cross-file index (empty for a text linted on its own)."""
    facts: Facts = field(init=False)
    """The file's shared analyses, each built on first use."""

    def __post_init__(self) -> None:
        self.facts = Facts(self.module, self.names, self.project, path=self.path, source=self.source,
                           method_next=self.torch_version < _NEXT_REMOVED,
                           python_tree=self.python_tree)

    def line_label(self, line: int) -> str:
        """How a message names a line of this file: ``line 12``, or in a
        notebook ``cell 3, line 2`` (the cell's own numbering)."""
        if not self.cell_starts:
            return f"line {line}"
        index = bisect.bisect_right([first for first, _ in self.cell_starts], line) - 1
        if index < 0:
            return f"line {line}"
        first, cell = self.cell_starts[index]
        return f"cell {cell}, line {line - first + 1}"

    @cached_property
    def is_test_file(self) -> bool:
        """Whether the file is a test module: pytest collects it by default
        (``test_*.py``, ``*_test.py``, ``conftest.py``) and it is not a
        script, unless it imports a test framework (pytest, unittest,
        ``torch.testing``) or defines a test pytest can run (a ``test*``
        function every parameter of which has a default, a ``Test*`` class):
        code that exercises, not trains.  An evaluation script named
        ``test_model.py`` that runs under ``if __name__ == "__main__":`` and
        whose ``test(model, loader)`` takes what its caller gives is code like
        any other."""
        name = PurePath(self.path).name
        if not _TEST_FILE.match(name):
            return False
        module = self.module
        return (name == "conftest.py" or not any(is_main_guard(statement) for statement in module.body) or _imports_test_framework(module)
                or _defines_runnable_test(module))


def _imports_test_framework(module: cst.Module) -> bool:
    """A top-level import of a test framework (:data:`_TEST_FRAMEWORKS`, or a module of one)."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                roots = [_full_name(alias.name) or "" for alias in small.names]
            elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                roots = [_full_name(small.module) or ""]
            else:
                continue
            if any(root == framework or root.startswith(framework + ".")
                   for root in roots for framework in _TEST_FRAMEWORKS):
                return True
    return False


_TEST_FRAMEWORKS = frozenset({"pytest", "unittest", "torch.testing", "nose", "hypothesis"})


def _defines_runnable_test(module: cst.Module) -> bool:
    """A module-level ``test*`` function pytest can call (no parameter
    without a default), or a ``Test*`` class."""
    for statement in module.body:
        if isinstance(statement, cst.ClassDef) and statement.name.value.startswith("Test"):
            return True
        if isinstance(statement, cst.FunctionDef) and statement.name.value.startswith("test"):
            params = statement.params
            if all(p.default is not None for p in (*params.posonly_params, *params.params, *params.kwonly_params)):
                return True
    return False


def innermost_statement(parents: Sequence[cst.CSTNode]) -> Optional[cst.CSTNode]:
    """The innermost statement among ``parents`` (innermost last): where an
    own-line suppression comment goes, for a finding reported later."""
    for candidate in reversed(parents):
        if isinstance(candidate, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return candidate
    return None


def _doc_sections(doc: str) -> Dict[str, str]:
    sections: Dict[str, str] = {}
    current = ""
    for line in doc.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            sections[current] = ""
        elif current:
            sections[current] += line + "\n"
    return {k: v.strip() for k, v in sections.items()}


def _verification_section(rule: "RuleClass") -> List[str]:
    """The rule's equivalence contract and its last recorded verify row, if any."""
    if rule.verification is None:
        return []
    contract = contract_of(rule)
    lines = ["", "## Verification", "",
             f"`torchlint verify --rules {rule.code}` checks: {contract.promise}", ""]
    lines += [f"- {check}" for check in contract.checks]
    if contract.differences:
        lines += ["", "Known differences, always reported:", ""]
        lines += [f"- {difference}" for difference in contract.differences]
    measured = read_measured(rule)
    if measured is not None:
        lines += ["", f"Measured ({measured.hardware}):", "", "| " + " | ".join(MEASURED_COLUMNS) + " |",
                  "|" + "---|" * len(MEASURED_COLUMNS), "| " + " | ".join(measured.cells) + " |"]
    return lines


class Rule:
    """Base class of every torchlint rule.

    Subclasses set the class attributes below and define visitor methods
    (``visit_Call``, ``leave_FunctionDef``, ...).  The class docstring is the
    rule's documentation page, in Ruff's sections.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    fix_availability: ClassVar[FixAvailability] = FixAvailability.NONE
    fix_summary: ClassVar[str] = ""
    """What the fix writes and how safe it is, in a few words (the README's table)."""
    default_enabled: ClassVar[bool] = True
    severity: ClassVar[Severity] = Severity.ERROR
    """``WARNING`` for advisory rules (suggestions); off-by-default rules are warnings too."""
    torch_range: ClassVar[TorchRange] = TorchRange()
    torch_versions: ClassVar[str] = "all versions"
    """``str(torch_range)``, set for every subclass; kept for reports."""
    options: ClassVar[Mapping[str, Option]] = {}
    valid: ClassVar[Tuple[Union[str, Example], ...]] = ()
    """Short sources the rule must not report (tested automatically); an
    ``Example`` (with ``findings=0``) when it needs options or other files."""
    example_name: ClassVar[str] = "example.py"
    """The file name examples are linted under."""
    invalid: ClassVar[Tuple[Example, ...]] = ()
    """Short sources the rule must report, with their fixed text (tested automatically)."""
    verification: ClassVar[Optional[VerificationSpec]] = None
    """For a rule with a fix: how `torchlint verify` checks it."""
    requires: ClassVar[FrozenSet[Analysis]] = frozenset()
    """The shared analyses the rule reads (``self.facts.values``...), for
    the docs: file analyses are built on first use whatever this says, and
    the cross-file index for what ``project_queries`` ask."""
    project_queries: ClassVar[Tuple["Query", ...]] = ()
    """What the rule asks across the run's files (:mod:`torchlint.analysis.queries`:
    ``subclasses_of(...)``, ``callers_of(...)``, ``name_used(...)``,
    ``keyword_passed(...)``, ``method_shapes(...)``, ``method_called(...)``,
    ``summaries()``, ``whole_saves()``); the runner builds the index for what enabled rules ask,
    and the rule reads the answers from ``self.facts.project``."""
    aliases: ClassVar[Tuple[str, ...]] = ()
    """Other tools' codes for what this rule reports (another linter's code
    may map to several rules); accepted wherever codes are."""
    reads_suppressions: ClassVar[bool] = False
    """The rule judges the suppression comments themselves: the engine calls
    :meth:`after_suppressions` once the other findings were matched to them."""
    trigger_words: ClassVar[Tuple[str, ...]] = ()
    """Substrings of which a file must contain one for the rule to fire.

    The engine skips parsing a file that contains none of the enabled rules'
    trigger words; an empty tuple means the rule can fire anywhere.
    """

    @classmethod
    def triggers(cls, options: Mapping[str, OptionValue]) -> Tuple[str, ...]:
        """The trigger words under these options (this rule's configured
        values); override when an option widens what the rule matches."""
        return cls.trigger_words

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """Whether the rule might report anything on a file with these facts
        (its configured ``options`` given); False is a promise that it would not.

        The default asks for one of the trigger words in the text; a rule
        overrides it with a sharper test over the ``ast`` summary.
        """
        words = cls.triggers(options)
        return not words or facts.contains_any(words)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.torch_versions = str(cls.torch_range)
        if not cls.__dict__.get("default_enabled", True) and "severity" not in cls.__dict__:
            cls.severity = Severity.WARNING

    def __init__(self, context: FileContext) -> None:
        self.context = context

    # -- for rule authors -------------------------------------------------

    @property
    def names(self) -> ImportTable:
        """The file's import table."""
        return self.context.names

    @property
    def facts(self) -> Facts:
        """The file's shared facts: ``self.facts.values.of(expr)``, ..."""
        return self.context.facts

    @property
    def parents(self) -> Sequence[cst.CSTNode]:
        """Ancestors of the node being visited, innermost last."""
        return self.context.parents

    def release(self, framework: str) -> Release:
        """The release of ``framework`` (``"lightning"``) the project targets:
        its ``<framework>-version`` setting or requirement, else the newest
        one ``torchlint/data/frameworks.toml`` knows."""
        pinned = self.context.frameworks.get(framework)
        if pinned is not None:
            return pinned
        from torchlint.data.apidata import Framework, frameworks

        return frameworks().frameworks[Framework(framework)].newest

    def option(self, key: str) -> Any:
        """The configured value of one of this rule's options."""
        configured = self.context.options.get(self.code, {})
        if key in configured:
            return configured[key]
        return self.options[key].default

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        *,
        fix: Optional[FixRequest] = None,
        hint: Optional[str] = None,
        statement: Optional[cst.CSTNode] = None,
    ) -> None:
        """Record a finding at ``node``, optionally with a fix.

        ``statement`` is the statement an own-line suppression comment must
        precede; by default the innermost statement around the node being
        visited (pass it when reporting later, e.g. from ``leave_Module``).
        """
        if statement is None:
            for candidate in [*self.context.parents, node][::-1]:
                if isinstance(candidate, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                    statement = candidate
                    break
        self.context.reports.append(
            Report(self.code, self.name, node, message, statement, fix, hint)
        )

    def cite_line(self, line: int) -> str:
        """``line 12`` for a message that points at another line (``cell 3,
        line 2`` in a notebook, counted in that cell)."""
        return self.context.line_label(line)

    def after_suppressions(self, use: "Use") -> None:
        """For a rule with ``reads_suppressions``: report on the comments."""

    def report_text(
        self, start: int, end: int, message: str, *, edits: Tuple[Edit, ...] = (),
        applicability: Applicability = Applicability.SAFE, description: str = "",
    ) -> None:
        """Record a finding on ``source[start:end]`` (text that is no node, such
        as a comment), optionally fixed by text edits."""
        fix = Fix(edits, applicability, description) if edits else None
        self.context.reports.append(
            Report(self.code, self.name, None, message, None, None, None, (start, end), fix)
        )

    def replace(
        self,
        node: cst.CSTNode,
        new_node: cst.CSTNode,
        applicability: Applicability,
        description: str,
        *,
        imports: Tuple[str, ...] = (),
    ) -> FixRequest:
        """A fix that swaps ``node`` for ``new_node`` (and adds ``imports``)."""
        return FixRequest((Replacement(node, new_node),), applicability, description, imports)

    # -- for the engine and the docs --------------------------------------

    @classmethod
    def documentation(cls) -> str:
        """The rule's doc page, as ``torchlint explain`` prints it."""
        body = textwrap.dedent(inspect.getdoc(cls) or "").strip()
        fix_line = {
            FixAvailability.ALWAYS: "Fix is always available.",
            FixAvailability.SOMETIMES: "Fix is sometimes available.",
            FixAvailability.NONE: "Fix is not available.",
        }[cls.fix_availability]
        default = "on" if cls.default_enabled else "off"
        lines = [
            f"# {cls.name} ({cls.code})",
            "",
            fix_line,
            f"Enabled by default: {default}. Applies to torch {cls.torch_versions}.",
            "",
            body,
        ]
        lines += _verification_section(cls)
        if cls.options and "## Options" not in body:
            lines += ["", "## Options", ""]
            lines += [
                f"- `{key}` (default `{opt.default!r}`): {opt.description}"
                for key, opt in cls.options.items()
            ]
        return "\n".join(lines).rstrip() + "\n"

    @classmethod
    def doc_sections(cls) -> Dict[str, str]:
        """The docstring split by ``## Heading``."""
        return _doc_sections(inspect.getdoc(cls) or "")


RuleClass = Type[Rule]
