"""The pre-check: a cheap summary of a file, read with CPython's ``ast``.

Parsing with libcst costs about ten times what ``ast.parse`` does, and most
files cannot produce a finding.  Each rule answers
``could_match(facts, options)`` from this summary (which torch names the file
imports, which attributes it calls or assigns, which functions it defines);
libcst parses only the files some rule might report on.  The summary must
only ever over-approximate: a rule that says ``False`` promises it would
report nothing on the file.

This module imports no libcst, so a file ruled out here costs no libcst import.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, FrozenSet, Iterable, Optional, Set

from torchlint.source.tree import python_nodes

if TYPE_CHECKING:
    from torchlint.analysis.index import ProjectIndex


@dataclass(frozen=True)
class PrecheckFacts:
    """What a file contains, as far as rules' pre-checks need to know."""

    source: str
    imports: FrozenSet[str]
    """Dotted names the file imports anywhere: ``torch.nn`` for ``import
    torch.nn``, ``torch.nn.DataParallel`` for ``from torch.nn import
    DataParallel``, ``torch.nn.*`` for a star import.  Relative imports are left
    out, but for star imports (``..utils.*``), which may bring torch in."""
    identifiers: FrozenSet[str]
    """Every name used, attribute named, or bound by an import (the last part
    of an imported name and its ``as`` alias)."""
    called_attributes: FrozenSet[str]
    """``name`` of each ``x.name(...)`` call."""
    assigned_attributes: FrozenSet[str]
    """``name`` of each ``x.name`` written to (assignment targets, tuple targets included)."""
    functions: FrozenSet[str]
    """Names of the functions the file defines (at any depth)."""
    qualifying: FrozenSet[str]
    """The identifiers a dotted name can be reached through: each attribute
    named and each name an import binds or names, not the names that are
    only read or bound otherwise (a bare ``range(...)``)."""
    tree: Optional[ast.AST] = field(default=None, compare=False, repr=False)
    """CPython's tree of the file, kept so that the analyses that read the
    file with ``ast`` (names mentioned) need not parse it again."""
    project: "Optional[ProjectIndex]" = field(default=None, compare=False, repr=False)
    """The run's cross-file index, when there is one (a rule's pre-check may
    widen what it matches with it: the project's subclasses of a class)."""
    path: str = field(default="", compare=False, repr=False)
    """The file's path, given with :attr:`project` (what the index knows of
    the file is asked by it: ``project.module_of(path)``)."""

    @property
    def imports_torch(self) -> bool:
        """Whether any import names ``torch`` or a module under it, or may
        bring it in: a star import of another module (the project index can
        tell that ``from models import *`` binds ``torch``), the only ways a
        rule's qualified ``torch.*`` name can resolve; or a name the index
        says a project module re-exports from torch (``from dataset import
        DataLoader``)."""
        if any(name == "torch" or name.startswith("torch.") or name.endswith(".*") for name in self.imports):
            return True
        project = self.project
        if project is None or not project.star_parts:
            return False
        return any(_is_torch(project.named_export(name)) for name in self.imports)

    def imports_from(self, packages: Iterable[str]) -> bool:
        """Whether any import names one of ``packages`` (top-level names such
        as ``lightning``) or a module under it."""
        roots = set(packages)
        return any(name.split(".", 1)[0] in roots for name in self.imports)

    def may_train(self) -> bool:
        """Whether the file may run a training step: it mentions ``backward``,
        or names or defines something that runs it elsewhere (a library
        wrapper, another module's function, from the project's summaries)."""
        if self.mentions(("backward",)):
            return True
        from torchlint.analysis.summaries import training_words

        words = training_words(self.project.summaries if self.project is not None else None)
        return self.mentions(words) or not self.functions.isdisjoint(words)

    def mentions(self, names: Iterable[str]) -> bool:
        """Whether any of ``names`` is used as a name, an attribute or an imported name."""
        return not self.identifiers.isdisjoint(names)

    def reaches(self, names: Iterable[str]) -> bool:
        """Whether a dotted name whose last part is one of ``names`` may be
        reached here, as the import table resolves names: that part is an
        attribute or an imported name, or a star import or a project
        module's re-export (``from dataset import rng``, which the index says
        is torch's) may bind it.  Stricter than :meth:`mentions` (which it
        implies): the builtin ``range`` never reaches ``torch.range``."""
        wanted = frozenset(names)
        if not self.qualifying.isdisjoint(wanted):
            return True
        if self.identifiers.isdisjoint(wanted):
            return False
        if any(name.endswith(".*") for name in self.imports):
            return True
        project = self.project
        if project is None or not project.star_parts:
            return False
        for name in self.imports:
            found = project.named_export(name)
            if found is not None and found.rsplit(".", 1)[-1] in wanted:
                return True
        return False

    def mentions_part(self, fragment: str) -> bool:
        """Whether some identifier contains ``fragment`` (``BatchNorm`` in ``BatchNorm2d``)."""
        return any(fragment in name for name in self.identifiers)

    def contains_any(self, words: Iterable[str]) -> bool:
        """Whether the text contains one of ``words`` (the trigger-word test)."""
        return any(word in self.source for word in words)


def _is_torch(name: Optional[str]) -> bool:
    return name is not None and (name == "torch" or name.startswith("torch."))


def facts_of(source: str) -> Optional[PrecheckFacts]:
    """The summary of ``source``, or None when CPython cannot parse it (a
    syntax error, or syntax newer than this Python: libcst has the last word)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. SyntaxWarning for "\d" in strings
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return summarize(tree, source)


def shipped(tree: ast.Module) -> PrecheckFacts:
    """The summary of a file made where its tree was made (the project
    index's one parse of each file, maybe in a worker process), small enough
    to send back: no text and no tree (:func:`facts_from` adds the text)."""
    return summarize(tree, "", keep_tree=False)


def facts_from(summary: object, source: str) -> Optional[PrecheckFacts]:
    """A :func:`shipped` summary of ``source``, ready for the rules' pre-checks."""
    if not isinstance(summary, PrecheckFacts):
        return None
    return replace(summary, source=source)


def summarize(tree: ast.AST, source: str, *, keep_tree: bool = True) -> PrecheckFacts:
    """One walk over the tree, collecting every set of :class:`PrecheckFacts`."""
    imports: Set[str] = set()
    identifiers: Set[str] = set()
    called: Set[str] = set()
    assigned: Set[str] = set()
    functions: Set[str] = set()
    qualifying: Set[str] = set()
    for node in python_nodes(tree):
        if isinstance(node, ast.Name):
            identifiers.add(node.id)
        elif isinstance(node, ast.Attribute):
            identifiers.add(node.attr)
            qualifying.add(node.attr)
            if isinstance(node.ctx, ast.Store):
                assigned.add(node.attr)
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute):
                called.add(node.func.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.add(node.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                imports.add(alias.name)
                qualifying.update(alias.name.split("."))
                if alias.asname:
                    qualifying.add(alias.asname)
        elif isinstance(node, ast.ImportFrom):
            if node.level and any(alias.name == "*" for alias in node.names):
                imports.add(f"{'.' * node.level}{node.module or ''}.*")  # may bring torch (the project index knows)
                continue
            if node.level or node.module is None:
                continue
            for alias in node.names:
                imports.add(f"{node.module}.{alias.name}")
                qualifying.add(alias.name)
                if alias.asname:
                    qualifying.add(alias.asname)
    return PrecheckFacts(
        source=source,
        imports=frozenset(imports),
        identifiers=frozenset(identifiers | qualifying),
        called_attributes=frozenset(called),
        assigned_attributes=frozenset(assigned),
        functions=frozenset(functions),
        qualifying=frozenset(qualifying),
        tree=tree if keep_tree else None,
    )
