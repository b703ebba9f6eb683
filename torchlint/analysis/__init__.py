"""Facts about one file that rules share, computed lazily and once.

A rule reads ``self.context.facts.values`` (or ``.scopes``, ``.training``,
``.loaders``, ``.project``); each analysis is built on first access and kept for the rest
of the file, so a file whose rules ask nothing pays nothing.  A rule declares
in ``project_queries`` what it asks across files, so that the runner builds
the cross-file :class:`~torchlint.analysis.index.ProjectIndex` only for
what selected rules ask; the index is passed in, never looked up.

This package's ``__init__`` imports its submodules lazily: ``torchlint.analysis.names``
is built on :mod:`torchlint.analysis.scopes` and :mod:`torchlint.analysis.imports`,
and the per-file analyses use ``torchlint.analysis.names``.  Within the package the
imports go one way (``tests/test_architecture.py`` checks there is no circle).
"""

from __future__ import annotations

import enum
from functools import cached_property
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple, Type, TypeVar, cast

if TYPE_CHECKING:
    import ast

    import libcst as cst
    from libcst.metadata import CodeRange
    from torchlint.analysis.callables import Callables
    from torchlint.analysis.composition import Composition
    from torchlint.analysis.flow import Flow
    from torchlint.analysis.frameworks import FrameworkFacts
    from torchlint.analysis.callees import Callees
    from torchlint.analysis.instances import Instances
    from torchlint.source.edits import Located
    from torchlint.analysis.loaders import Loaders
    from torchlint.analysis.index import ProjectIndex
    from torchlint.analysis.scopes import Scopes
    from torchlint.analysis.summaries import FileSummary
    from torchlint.analysis.training import Training
    from torchlint.analysis.values import Values
    from torchlint.analysis.workload import Workload
    from torchlint.analysis.names import ImportTable


N = TypeVar("N")


class Analysis(enum.Enum):
    """The analyses a rule may declare in ``Rule.requires``."""

    SCOPES = "scopes"
    VALUES = "values"
    TRAINING = "training"
    PROJECT = "project"


class Facts:
    """The analyses of one parsed file, each built on first use."""

    def __init__(
        self,
        module: cst.Module,
        names: "ImportTable",
        project: "Optional[ProjectIndex]" = None,
        path: str = "<string>",
        source: Optional[str] = None,
        python_tree: "Optional[ast.AST]" = None,
        method_next: bool = False,
    ) -> None:
        self.module = module
        self.method_next = method_next
        """Loader iterators still have a ``.next()`` method (torch before 1.13,
        the target's release): ``it.next()`` draws a batch."""
        self.names = names
        names.follow_flow(lambda: self.flow)
        self.path = path
        self.source = source
        """The file's text (positions are in it); None: the module's own rendering."""
        self._project = project
        self.python_tree = python_tree
        """CPython's ``ast`` of the same text when the pre-check made one."""

    @classmethod
    def of_module(cls, module: cst.Module, project: "Optional[ProjectIndex]" = None,
                  path: str = "<string>", source: Optional[str] = None) -> "Facts":
        """Facts of a module with its own import table (for tests and tools)."""
        from torchlint.analysis.names import ImportTable

        return cls(module, ImportTable.from_module(module, path, project) if project is not None
                   else ImportTable.from_module(module), project, path, source)

    @cached_property
    def located(self) -> "Located":
        """Node ranges in the real text, shared by the rules that quote a line
        and the engine: code generation of the top-level statements asked
        about, not of the whole module (``Located``'s lazy mode)."""
        from torchlint.source.edits import Located

        if self.source is None:
            return Located(self.module, self.module.code)
        return Located(self.module, self.source, lazy=True)

    @property
    def positions(self) -> "Mapping[cst.CSTNode, CodeRange]":
        """libcst-style ranges (1-based lines, 0-based columns) of
        :attr:`located`, for rules that read ``positions[node].start.line``."""
        from torchlint.source.edits import CodeRanges

        return CodeRanges(lambda: self.located)

    @cached_property
    def _walked(self) -> "Tuple[Dict[cst.CSTNode, cst.CSTNode], Dict[type, List[cst.CSTNode]]]":
        from torchlint.source.tree import walk

        parents: "Dict[cst.CSTNode, cst.CSTNode]" = {}
        by_type: "Dict[type, List[cst.CSTNode]]" = {}
        for node, parent in walk(self.module):
            by_type.setdefault(type(node), []).append(node)
            if parent is not None:
                parents[node] = parent
        return parents, by_type

    @property
    def parents(self) -> "Mapping[cst.CSTNode, cst.CSTNode]":
        """The parent of each node of the module that carries code (one walk,
        shared by rules; whitespace and punctuation nodes are left out, as in
        :func:`torchlint.source.tree.walk`)."""
        return self._walked[0]

    def nodes_of(self, kind: "Type[N]") -> "Sequence[N]":
        """Every node of exactly this type, in source order (from the same walk)."""
        return cast("Sequence[N]", self._walked[1].get(kind, ()))

    @cached_property
    def flow(self) -> "Flow":
        """Which definitions reach each read, the changes on the way, and
        which branches exclude each other (each function walked on first use)."""
        from torchlint.analysis.flow import Flow

        return Flow(self.module, self.scopes, lambda: self.parents, self.module.code_for_node)

    @cached_property
    def callables(self) -> "Callables":
        """The functions methods store on ``self`` attributes and call through them."""
        import libcst

        from torchlint.analysis.callables import Callables

        return Callables(self.names, self.parents, self.nodes_of(libcst.Assign))

    @cached_property
    def callees(self) -> "Callees":
        """What the file's calls run: the project's functions and methods
        (their summaries across files) and known library wrappers."""
        from torchlint.analysis.callees import Callees

        return Callees(self.scopes, self.names, lambda: self.instances, self.project.summaries, self.path,
                       self.source if self.source is not None else self.module.code, lambda: self.own_summary,
                       self.project.note_grad_read)

    @cached_property
    def python_module(self) -> "Optional[ast.Module]":
        """CPython's tree of the same text: the pre-check's when it made one,
        else parsed here once (None where CPython refuses the text)."""
        import ast

        if isinstance(self.python_tree, ast.Module):
            return self.python_tree
        from torchlint.analysis.imports import parse_quietly

        text = self.source if self.source is not None else self.module.code
        return parse_quietly(text.encode("utf-8", "surrogatepass"))

    @cached_property
    def own_summary(self) -> "Optional[FileSummary]":
        """What this file's functions and classes do, summarised from its own
        text (the same summary the project index makes of it): for a script
        the index leaves out, and for the file's own wrapper classes.  Built
        on first use, once for every fact that asks."""
        tree = self.python_module
        if tree is None:
            return None
        import os
        from pathlib import Path

        from torchlint.analysis.imports import module_name
        from torchlint.analysis.summaries import summarize_tree

        summaries = self.project.summaries
        known = summaries.paths.get(os.path.abspath(self.path)) if summaries is not None else None
        module = known if known is not None else module_name(Path(self.path))
        try:
            return summarize_tree(tree, module, Path(self.path).stem == "__init__", cuda=False)
        except RecursionError:
            return None

    @cached_property
    def instances(self) -> "Instances":
        """Which classes built a value (through assignments, ``self``
        attributes and the file's calls of its functions), and what their
        methods accept."""
        from torchlint.analysis.instances import Instances

        return Instances(self.scopes, self.names, self.values, lambda: self.parents, self.path, self.project)

    @cached_property
    def composition(self) -> "Composition":
        """What the file's calls build as layers (a project's wrapper classes
        included, across files), what its containers and module classes hold,
        and how their methods use what they hold."""
        from torchlint.analysis.composition import Composition

        return Composition(self.names, self.scopes, lambda expr: self.instances.absolute_name(expr), self.project,
                           lambda: self.own_summary, lambda: self.flow)

    @cached_property
    def frameworks(self) -> "FrameworkFacts":
        """Which calls build a framework's class (a Lightning ``Trainer``,
        ``TrainingArguments``, ``Accelerator``) and with which arguments,
        which values are their instances, which classes are LightningModules."""
        import libcst

        from torchlint.analysis.frameworks import FrameworkFacts, trainer_names

        def trainers_named() -> bool:  # this file only: a run-wide answer would depend on the files linted
            return not trainer_names().isdisjoint(self.names_mentioned)

        return FrameworkFacts(
            self.module, self.scopes, self.names, lambda expr: self.instances.construction(expr),
            lambda expr: self.instances.absolute_name(expr) if self.project.classes else None,
            lambda qualified: self.project.bases_of(qualified),
            lambda: self.parents, lambda: self.nodes_of(libcst.Call), trainers_named,
        )

    @cached_property
    def names_mentioned(self) -> "FrozenSet[str]":
        """Every dotted name the file refers to, resolved through its imports
        (:func:`torchlint.analysis.mentions.all_names_used`; one ``ast`` pass)."""
        from torchlint.analysis.mentions import all_names_used, names_in_tree

        if self.python_tree is not None:
            return names_in_tree(self.python_tree)
        return all_names_used(self.source if self.source is not None else self.module.code)

    @property
    def scopes(self) -> "Scopes":
        """Scopes and bindings (shared with the import table)."""
        return self.names.scopes

    @cached_property
    def values(self) -> "Values":
        """What expressions hold."""
        from torchlint.analysis.values import Values

        summaries = self.project.summaries is not None
        builds = (lambda call: self.callees.builds(call)) if summaries else None
        passed = (lambda binding: self.callees.passed_classes(binding)) if summaries else None
        return Values(self.module, self.scopes, self.names, builds, lambda: self.parents, lambda: self.flow, passed)

    @cached_property
    def training(self) -> "Training":
        """Grad-mode regions, eval/train, backward/step calls, loops, call graph."""
        from torchlint.analysis.training import Training

        return Training(self.module, self.scopes, self.names, self.values, self.frameworks.is_lightning_module,
                        lambda: self.callees, lambda: self.flow)

    @cached_property
    def workload(self) -> "Workload":
        """The file's step loop, CUDA use, convolutions and entry point."""
        from torchlint.analysis.workload import workload

        return workload(self.module, self.names, self.training)

    @cached_property
    def loaders(self) -> "Loaders":
        """Which loader values come from, the loops over them, the copies of their batches."""
        from torchlint.analysis.loaders import Loaders

        return Loaders(self.module, self.scopes, self.names, self.values, self.training, self.callees, self.flow,
                       method_next=self.method_next)

    @property
    def project(self) -> "ProjectIndex":
        """The run's cross-file index (empty when linting a text on its own)."""
        if self._project is None:
            from torchlint.analysis.index import EMPTY

            self._project = EMPTY
        return self._project


__all__ = ["Analysis", "Facts"]
