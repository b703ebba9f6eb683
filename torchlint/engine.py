"""Parse a file once, run every enabled rule in one traversal, return diagnostics."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from contextlib import contextmanager
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst._position import CodePosition, CodeRange

from torchlint.model import Diagnostic, Edit, Fix, Position
from torchlint.names import ImportTable
# parse_module and parse_error moved to torchlint.parsing; re-exported here.
from torchlint.parsing import compiles, on_deep_stack
from torchlint.parsing import parse_error as parse_error, parse_module as parse_module
from torchlint.rule import (
    CURRENT_TORCH,
    FileContext,
    OptionValue,
    Report,
    Rule,
    RuleClass,
    TorchVersion,
)
from torchlint.tree import child_fields
from torchlint.suppress import Suppressions, parse_suppressions

Handler = Callable[[cst.CSTNode], None]


@dataclass(frozen=True)
class LintConfig:
    """Everything the engine needs to lint one file."""

    rules: Tuple[RuleClass, ...]
    torch_version: TorchVersion = CURRENT_TORCH
    options: Mapping[str, Mapping[str, OptionValue]] = field(default_factory=dict)
    precheck: bool = True


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
        for name in child_fields(type(node)):
            value = getattr(node, name)
            if isinstance(value, cst.CSTNode):
                self.walk(value)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    if isinstance(item, cst.CSTNode):
                        self.walk(item)
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
        if isinstance(node, (cst.Import, cst.ImportFrom)) and self._context.names.in_function:
            # Imports inside functions count from here on (module-level ones
            # were read before the traversal).
            self._context.names.add(node)
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            self._context.names.push_scope(node.params)
        self._context.parents.append(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self._context.parents.pop()
        if isinstance(original_node, (cst.FunctionDef, cst.Lambda)):
            self._context.names.pop_scope()
        handlers = self._leave.get(type(original_node).__name__)
        if handlers:
            for handler in handlers:
                handler(original_node)


class _LineIndex:
    """Converts between (line, column) and character offsets."""

    _NEWLINE = re.compile(r"\r\n|\r|\n")

    def __init__(self, source: str) -> None:
        self.starts = [0] + [m.end() for m in self._NEWLINE.finditer(source)]
        self.length = len(source)

    def offset(self, line: int, column: int) -> int:
        # libcst may end a range at (last line + 1, 0) when the file has no
        # final newline: that is the end of the text.
        if line - 1 >= len(self.starts):
            return self.length
        return min(self.starts[line - 1] + column, self.length)

    def position(self, offset: int) -> Position:
        line = bisect.bisect_right(self.starts, offset)
        return Position(line, offset - self.starts[line - 1] + 1)


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
    return on_deep_stack(_lint_source, source, path, config)


def _lint_source(source: str, path: str, config: LintConfig) -> List[Diagnostic]:
    can_match = not config.precheck or might_match(source, config.rules, config.options)
    if not can_match and compiles(source):
        # No rule can fire, and CPython's parser (far cheaper than libcst)
        # says the file is fine.
        return []
    parsed = parse_module(source, path)
    if isinstance(parsed, Diagnostic):
        return [parsed]
    if not can_match:  # CPython older than the syntax used; libcst parsed it
        return []
    return lint_module(parsed, source, path, config)


def lint_module(module: cst.Module, source: str, path: str, config: LintConfig) -> List[Diagnostic]:
    """Run the rules over an already parsed module."""
    context = FileContext(
        path=path,
        source=source,
        module=module,
        names=ImportTable.from_module(module),
        torch_version=config.torch_version,
        options=config.options,
    )
    rules = [rule_class(context) for rule_class in config.rules]
    try:
        _Dispatcher(rules, context).walk(module)
    except RecursionError:
        return [parse_error(path, "the file is nested too deeply to lint")]
    if not context.reports:
        return []
    suppressions = parse_suppressions(source)
    return sorted(
        _to_diagnostics(context.reports, module, source, path, suppressions),
        key=lambda d: d.sort_key,
    )


class _PositionState(CodegenState):
    """One code-generation pass that records the syntactic range of every
    node (libcst's PositionProvider) and the whitespace-inclusive range of
    the nodes a fix replaces (WhitespaceInclusivePositionProvider)."""

    _NEWLINE = re.compile(r"\r\n?|\n")

    def __init__(self, module: cst.Module, wanted: Set[cst.CSTNode]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.line = 1
        self.column = 0
        self.syntactic: Dict[cst.CSTNode, CodeRange] = {}
        self.inclusive: Dict[cst.CSTNode, CodeRange] = {}
        self._wanted = wanted
        self._stack: List[CodePosition] = []

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self._advance(token)

    def add_token(self, value: str) -> None:
        self._advance(value)

    def _advance(self, value: str) -> None:
        segments = self._NEWLINE.split(value)
        if len(segments) == 1:
            self.column += len(value)
        else:
            self.line += len(segments) - 1
            self.column = len(segments[-1])

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._stack.append(CodePosition(self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        where = CodeRange(self._stack.pop(), CodePosition(self.line, self.column))
        if node in self._wanted:
            self.inclusive[node] = where
        if node not in self.syntactic:
            self.syntactic[node] = where

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ) -> Iterator[None]:
        start = CodePosition(self.line, self.column)
        try:
            yield
        finally:
            end = CodePosition(self.line, self.column)
            if start_node is not None:
                start = self.syntactic[start_node].start
            if end_node is not None:
                end = self.syntactic[end_node].end
            self.syntactic[node] = CodeRange(start, end)


def _positions(
    module: cst.Module, wanted: Set[cst.CSTNode]
) -> Tuple[Dict[cst.CSTNode, CodeRange], Dict[cst.CSTNode, CodeRange]]:
    """Syntactic ranges of all nodes, inclusive ranges of ``wanted``; one pass."""
    state = _PositionState(module, wanted)
    module._codegen(state)
    return state.syntactic, state.inclusive


def _to_diagnostics(
    reports: Sequence[Report],
    module: cst.Module,
    source: str,
    path: str,
    suppressions: Suppressions,
) -> List[Diagnostic]:
    positions, inclusive = _positions(module, {
        replacement.node for report in reports if report.fix for replacement in report.fix.replacements
    })
    index = _LineIndex(source)
    diagnostics: List[Diagnostic] = []
    seen = set()
    for report in reports:
        where = positions[report.node]
        start = Position(where.start.line, where.start.column + 1)
        end = Position(where.end.line, where.end.column + 1)
        statement_line = positions[report.statement].start.line if report.statement else None
        lines = (start.line,) if start.line == end.line else (start.line, end.line)
        if suppressions.silences(report.code, report.name, lines, statement_line):
            continue
        fix: Optional[Fix] = None
        if report.fix is not None:
            edits = _edits(report, module, source, index, inclusive, positions)
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


def _trimmed_edit(old: str, new: str, base: int) -> Optional[Edit]:
    """The single smallest edit that turns ``old`` into ``new``."""
    if old == new:
        return None
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    return Edit(base + prefix, base + len(old) - suffix, new[prefix : len(new) - suffix])


def _enclosing_indent(source: str, index: _LineIndex, line: int) -> str:
    """The leading whitespace of a 1-based line."""
    begin = index.starts[line - 1]
    end = begin
    while end < len(source) and source[end] in " \t":
        end += 1
    return source[begin:end]


def _find_shift(
    rendered: str, old: str, source: str, index: _LineIndex, line: int
) -> Optional[Tuple[str, bool]]:
    """The block indentation (and whether the first line gets it) that turns
    the node's standalone rendering into its text in the file, if any."""
    if "\n" not in rendered and "\r" not in rendered:
        return None
    indent = _enclosing_indent(source, index, line)
    for size in range(len(indent), 0, -1):
        for first in (False, True):
            if _reindent(rendered, indent[:size], first) == old:
                return indent[:size], first
    return None


def _reindent(text: str, indent: str, first: bool) -> str:
    """Prefix non-blank lines with ``indent``: all of them, or all but the
    first (when the node starts after other code on its line)."""
    lines = text.splitlines(keepends=True)
    return "".join(
        line if (number == 0 and not first) or not line.strip("\r\n") else indent + line
        for number, line in enumerate(lines)
    )


def _edits(
    report: Report,
    module: cst.Module,
    source: str,
    index: _LineIndex,
    inclusive: Mapping[cst.CSTNode, CodeRange],
    positions: Mapping[cst.CSTNode, CodeRange],
) -> Tuple[Edit, ...]:
    assert report.fix is not None
    edits: List[Edit] = []
    for replacement in report.fix.replacements:
        where = inclusive[replacement.node]
        start = index.offset(where.start.line, where.start.column)
        end = index.offset(where.end.line, where.end.column)
        old = source[start:end]
        rendered = module.code_for_node(replacement.node)
        shift = None if rendered == old else _find_shift(rendered, old, source, index, where.start.line)
        if rendered == old:
            edit = _trimmed_edit(old, module.code_for_node(replacement.new_node), start)
        elif shift is not None:
            # A multi-line node inside indented blocks renders at level 0 on
            # its own; shift it back instead of re-rendering the whole module.
            new_text = _reindent(module.code_for_node(replacement.new_node), *shift)
            edit = _trimmed_edit(old, new_text, start)
        else:
            # Multi-line nodes render with different indentation on their own;
            # render the whole module instead and diff that.
            new_module = module.deep_replace(replacement.node, replacement.new_node)
            assert isinstance(new_module, cst.Module)
            edit = _trimmed_edit(source, new_module.code, 0)
        if edit is not None:
            edits.append(edit)
    for name in report.fix.imports:
        edits.append(_import_edit(module, index, positions, name))
    return tuple(sorted(set(edits)))


def _import_edit(
    module: cst.Module,
    index: _LineIndex,
    positions: Mapping[cst.CSTNode, CodeRange],
    name: str,
) -> Edit:
    """Insert ``import name`` before the first statement that is not the
    docstring or a ``__future__`` import."""
    newline = module.default_newline
    for number, statement in enumerate(module.body):
        first = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        is_docstring = number == 0 and isinstance(first, cst.Expr) and isinstance(
            first.value, (cst.SimpleString, cst.ConcatenatedString)
        )
        is_future = (
            isinstance(first, cst.ImportFrom)
            and isinstance(first.module, cst.Name)
            and first.module.value == "__future__"
        )
        if not (is_docstring or is_future):
            offset = index.offset(positions[statement].start.line, 0)
            return Edit(offset, offset, f"import {name}{newline}")
    # Nothing but a docstring and future imports: append at the end.
    text = module.code
    prefix = "" if not text or text.endswith(("\n", "\r")) else newline
    return Edit(len(text), len(text), f"{prefix}import {name}{newline}")
