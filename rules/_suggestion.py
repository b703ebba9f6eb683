"""What the throughput suggestions share: when a file is the kind of
training they advise on, and when the project already made their setting.

A suggestion is off by default and is a warning, not a defect: it names a
setting that usually speeds up GPU training (mixed precision, TF32, cuDNN
benchmarking, channels-last, compilation).  A training loop is a loop over
batches whose iterations run a backward pass and a ``step()`` (an
optimizer's or a scaler's), directly or through the file's functions; a
loop that only differentiates (a profiler) trains nothing.  It fires at most once per file,
on the file's step loop, and never when the setting is already present
anywhere in the project (any file of the run refers to one of the names in
``settings``), nor in test files.
"""

from __future__ import annotations

from typing import ClassVar, List, Mapping, Optional, Tuple

import libcst as cst

from torchlint.analysis import Analysis
from torchlint.analysis.frameworks import FrameworkCall, class_words, packages
from torchlint.analysis.imports import is_torch_module
from torchlint.analysis.scopes import BindingKind
from torchlint.analysis.cells import CellOrder
from torchlint.analysis.training import LoopFacts
from torchlint.analysis.workload import Workload
from torchlint.data.apidata import Framework
from torchlint.ruleapi.fixes import StatementSite, insert_statements, parse_statement, spell
from torchlint.model import Applicability
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import FileContext, FixRequest, OptionValue, Rule, Severity



class Suggestion(Rule):
    """Base of the throughput suggestions (no code: not a rule itself)."""

    default_enabled = False
    severity = Severity.WARNING
    requires = frozenset({Analysis.TRAINING, Analysis.PROJECT})
    settings: ClassVar[Tuple[str, ...]] = ()
    """Dotted names whose use anywhere in the project means the setting is made."""
    needs_cuda: ClassVar[bool] = True
    needs_convolution: ClassVar[bool] = False
    needs_entry_point: ClassVar[bool] = False
    framework_roles: ClassVar[Tuple[Tuple[Framework, str], ...]] = ()
    """Framework classes (framework, role in ``frameworks.toml``) whose
    constructions the suggestion reads: :meth:`framework_call` gets each."""

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """A training file: it imports torch and calls ``backward`` and
        ``step``; or it imports a framework and names one of its classes the
        suggestion reads."""
        for framework, role in cls.framework_roles:
            if facts.imports_from(packages(framework)) and facts.mentions(class_words(framework, role)):
                return True
        return facts.imports_torch and {"backward", "step"} <= facts.called_attributes

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._framework_calls: List[FrameworkCall] = []
        self._framework_reported = False
        """A framework call was reported (suggestions that fire once per file)."""

    def visit_Call(self, node: cst.Call) -> None:
        if not self.framework_roles:
            return
        fact = self.facts.frameworks.call(node)
        if fact is not None and (fact.framework, fact.role) in self.framework_roles:
            self._framework_calls.append(fact)

    def framework_call(self, fact: FrameworkCall) -> None:
        """Report on one framework construction, if it is the training this
        suggestion is about (override)."""

    def applies(self, work: Workload) -> bool:
        """Whether the file is the training this suggestion is about: torch
        is imported (or may be, through a star import), as the pre-check
        asks, and a step loop runs."""
        if self.step_loop(work) is None or self.context.is_test_file or not self._imports_torch():
            return False
        if self.needs_convolution and work.convolution is None:
            return False
        return work.entry_point or not self.needs_entry_point

    def _imports_torch(self) -> bool:
        scopes = self.names.scopes
        return scopes.star_imports or any(
            binding.kind is BindingKind.IMPORT and binding.imported is not None and is_torch_module(binding.imported)
            for scope in scopes.all_scopes() for binding in scope.iter_bindings())

    def step_loop(self, work: Workload) -> Optional[LoopFacts]:
        """The loop the suggestion is about: the file's first step loop, or,
        for a CUDA suggestion, the first one that runs once the program uses
        CUDA (in a notebook, a loop in a cell before the one that moves the
        model to the GPU trains on the CPU)."""
        if not self.needs_cuda:
            return work.step_loop
        order = CellOrder(self.facts)
        return next((loop for loop in work.step_loops if order.ran_before(work.cuda, loop.node)), None)

    def setting_present(self) -> bool:
        """The project (or, linting a text alone, this file) already makes the setting."""
        project = self.facts.project
        if any(project.uses(name) for name in self.settings):
            return True
        return not self.facts.names_mentioned.isdisjoint(self.settings)

    def also_declined(self, work: Workload) -> bool:
        """A subclass's further reason to stay quiet (facts of its own)."""
        return False

    def message(self, work: Workload, line: int) -> str:
        raise NotImplementedError

    def fix(self, work: Workload) -> Optional[FixRequest]:
        return None

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self.context.is_test_file:
            for fact in self._framework_calls:
                self.framework_call(fact)
        work = self.facts.workload
        if not self.applies(work) or self.also_declined(work) or self.setting_present():
            return
        step_loop = self.step_loop(work)
        assert step_loop is not None
        loop = step_loop.node
        head = loop.iter if isinstance(loop, cst.For) else loop.test
        lines = self.facts.positions
        self.report(head, self.message(work, lines[loop].start.line), fix=self.fix(work), statement=loop)


def insert_after_imports(rule: Rule, work: Workload, code: str, qualified: str,
                         description: str) -> Optional[FixRequest]:
    """An unsafe fix that puts one statement right after the module's
    imports; ``code`` holds ``{name}`` where ``qualified`` goes, spelled
    through the file's imports.  None when the module has no import block
    before its first definition, or the name cannot be spelled."""
    if work.imports_end is None:
        return None
    spelling = spell(rule.names, qualified)
    if spelling is None:
        return None
    module = rule.context.module
    statement = parse_statement(code.format(name=spelling.text), module)
    replacement = insert_statements(StatementSite(module, work.imports_end), (statement,), after=True)
    return rule.replace(replacement.node, replacement.new_node, Applicability.UNSAFE, description,
                        imports=spelling.imports)


__all__ = ["Suggestion", "insert_after_imports"]
