"""Where nodes are in the real text, and the edits that turn a node into its
replacement.

libcst's rendering of a module is not always the file's text: it drops form
feeds at the start of statement lines, a byte order mark and a final lone
``\\r``.  Positions and edits are computed on the rendering and mapped back to
the real text, so columns match the file and no edit ever touches a byte
outside the node it replaces.
"""

from __future__ import annotations

import bisect
import io
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange

from torchlint.model import Edit, Position
from torchlint.source.lines import LineIndex
from torchlint.source.target import requote_inserted_strings
from torchlint.source.tree import children, walk


@dataclass(frozen=True)
class Replacement:
    """Swap one node of the parsed module for another node (what a rule's
    fix request holds; turned into text edits here)."""

    node: cst.CSTNode
    new_node: cst.CSTNode


# Characters libcst may leave out of its rendering; anything else missing
# means the map cannot be trusted for edits.
_DROPPABLE = frozenset("\f\v\r\ufeff \t")


class SourceMap:
    """Maps offsets in libcst's rendering to offsets in the real text.

    The rendering is the text minus a few dropped characters; ``_at`` holds
    the rendering offsets before which dropped characters sit and ``_shift``
    how many were dropped up to there."""

    _BLOCK = 4096

    def __init__(self, rendered: str, source: str) -> None:
        self._at: List[int] = []
        self._shift: List[int] = []
        self.exact = True
        self.rendered = rendered
        if rendered == source:
            return
        i = j = 0
        while j < len(rendered):
            if i >= len(source):
                self.exact = False
                break
            block = min(self._BLOCK, len(rendered) - j)
            if source[i : i + block] == rendered[j : j + block]:
                i += block
                j += block
                continue
            while j < len(rendered) and i < len(source) and source[i] == rendered[j]:
                i += 1
                j += 1
            if j == len(rendered):
                break
            if i >= len(source):
                self.exact = False
                break
            if source[i] not in _DROPPABLE:
                self.exact = False
            if self._at and self._at[-1] == j:
                self._shift[-1] += 1
            else:
                self._at.append(j)
                self._shift.append((self._shift[-1] if self._shift else 0) + 1)
            i += 1
        tail = len(source) - i - (len(rendered) - j)
        if tail > 0:  # dropped at the very end (a final lone "\r")
            if not source[i:].endswith(rendered[j:]) or not set(source[len(source) - tail :]) <= _DROPPABLE:
                self.exact = False
            self._at.append(len(rendered))
            self._shift.append((self._shift[-1] if self._shift else 0) + tail)

    def _dropped_before(self, offset: int, inclusive: bool) -> int:
        """Characters dropped before rendering offset ``offset`` (those right
        at it too when ``inclusive``)."""
        find = bisect.bisect_right if inclusive else bisect.bisect_left
        index = find(self._at, offset) - 1
        return self._shift[index] if index >= 0 else 0

    def start(self, offset: int) -> int:
        """The real offset of the rendered character at ``offset``: after any
        dropped characters in front of it."""
        return offset + self._dropped_before(offset, inclusive=True)

    def end(self, offset: int) -> int:
        """The real end of a range ending at ``offset``: right after its last
        character, before any dropped characters that follow it."""
        return offset + self._dropped_before(offset, inclusive=False)

    def span(self, start: int, end: int) -> Tuple[int, int]:
        """The real range of a rendered range (an empty one stays empty)."""
        real_start = self.start(start)
        return (real_start, real_start) if start == end else (real_start, max(self.end(end), real_start))


@dataclass(frozen=True)
class NodeContext:
    """What rendering a replacement exactly as the module would needs: the
    indentation in force and the quotes of the f-strings around it."""

    indent_tokens: Tuple[str, ...]
    fstring_quotes: Tuple[str, ...]


class PositionState(CodegenState):
    """One code-generation pass that records, for every node, its rendered
    offsets (libcst's syntactic position), its whitespace-inclusive range and
    the context a replacement of it is rendered in.  Contexts are shared
    objects, rebuilt only when the indentation or the f-string nesting changes.

    This runs once per linted module over every node, so the records are
    keyed by ``id(node)`` (libcst nodes hash by identity through a Python
    ``__hash__``; the module keeps every node alive while the records live)."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.offset = 0
        self._syntactic: Dict[int, Tuple[int, int]] = {}
        self._inclusive: Dict[int, Tuple[int, int]] = {}
        self._contexts: Dict[int, NodeContext] = {}
        self._order: List[cst.CSTNode] = []  # each node once, as first recorded
        self.popped_newline = ""
        self._stack: List[int] = []
        self._quotes: List[str] = []
        self._context: Optional[NodeContext] = None

    def nodes(self) -> List[cst.CSTNode]:
        """Every node with a range, in the order the ranges were recorded."""
        return list(self._order)

    def syntactic(self, node: cst.CSTNode) -> Tuple[int, int]:
        """The rendered range of a node, without its surrounding whitespace."""
        return self._syntactic[id(node)]

    def inclusive(self, node: cst.CSTNode) -> Tuple[int, int]:
        """The rendered range of everything the node renders."""
        return self._inclusive[id(node)]

    def context(self, node: cst.CSTNode) -> NodeContext:
        """What the node was rendered within."""
        return self._contexts[id(node)]

    def absorb(self, piece: "PositionState", shift: int) -> None:
        """Take the records of ``piece`` (a pass over part of the module that
        started at offset 0) as if that part had been rendered at ``shift``."""
        for key, (start, end) in piece._syntactic.items():
            self._syntactic.setdefault(key, (start + shift, end + shift))
        for key, (start, end) in piece._inclusive.items():
            self._inclusive.setdefault(key, (start + shift, end + shift))
        for key, context in piece._contexts.items():
            self._contexts.setdefault(key, context)
        self._order.extend(piece._order)

    def increase_indent(self, value: str) -> None:
        super().increase_indent(value)
        self._context = None

    def decrease_indent(self) -> None:
        super().decrease_indent()
        self._context = None

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    def pop_trailing_newline(self) -> None:
        # A file without a final newline: the module takes back the last
        # statement's newline after that statement's range was recorded.
        if self.tokens:
            self.popped_newline = self.tokens.pop()
            self.offset -= len(self.popped_newline)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._stack.append(self.offset)
        context = self._context
        if context is None:
            context = self._context = NodeContext(tuple(self.indent_tokens), tuple(self._quotes))
        self._contexts[id(node)] = context
        if type(node) is _FORMATTED_STRING:
            self._quotes.append(node.quote)
            self._context = None

    def after_codegen(self, node: cst.CSTNode) -> None:
        if type(node) is _FORMATTED_STRING:
            self._quotes.pop()
            self._context = None
        where = (self._stack.pop(), self.offset)
        key = id(node)
        self._inclusive[key] = where
        if key not in self._syntactic:
            self._syntactic[key] = where
            self._order.append(node)

    def _record_syntactic(self, node: cst.CSTNode, start: int, end: int) -> None:
        key = id(node)
        if key not in self._syntactic:
            self._order.append(node)
        self._syntactic[key] = (start, end)

    def record_syntactic_position(  # type: ignore[override]  # a lighter context manager than the base's generator
        self,
        node: cst.CSTNode,
        *,
        start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ) -> "_SyntacticRecord":
        return _SyntacticRecord(self, node, start_node, end_node)


_FORMATTED_STRING = cst.FormattedString


class _SyntacticRecord:
    """Records a node's syntactic range around the code libcst renders for
    it (libcst's own is a generator-based context manager, measurably slower
    when entered for most nodes of a module)."""

    __slots__ = ("_state", "_node", "_start_node", "_end_node", "_start")

    def __init__(self, state: PositionState, node: cst.CSTNode,
                 start_node: Optional[cst.CSTNode], end_node: Optional[cst.CSTNode]) -> None:
        self._state = state
        self._node = node
        self._start_node = start_node
        self._end_node = end_node
        self._start = 0

    def __enter__(self) -> None:
        self._start = self._state.offset

    def __exit__(self, *exc_info: object) -> None:
        state = self._state
        start, end = self._start, state.offset
        if self._start_node is not None:
            start = state.syntactic(self._start_node)[0]
        if self._end_node is not None:
            end = state.syntactic(self._end_node)[1]
        state._record_syntactic(self._node, start, end)


class CodeRanges(Mapping[cst.CSTNode, CodeRange]):
    """A :class:`Located`'s ranges in libcst's shape (1-based lines, 0-based
    columns), converted when asked for.  The ranges (one code-generation pass
    over the module) are computed on the first question, not when a rule
    takes the mapping in case it reports."""

    def __init__(self, located: Callable[[], "Located"]) -> None:
        self._located = located

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        start, end = self._located().range(node)
        return CodeRange(CodePosition(start.line, start.column - 1), CodePosition(end.line, end.column - 1))

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._located().nodes())

    def __len__(self) -> int:
        return len(self._located().nodes())


class Located:
    """A module's node positions in the real text, and its fixes as edits.

    Positions come from code generation.  By default one pass over the whole
    module records every node.  A *lazy* ``Located`` renders only the
    innermost statement of a block (with the indentation in force there)
    that holds a node asked about, and finds where that statement sits by
    searching the text for its rendering: a file's findings are usually in a
    few statements, so most of the module is never rendered.  That search is
    only trusted where the rendering is the text itself (no form feed,
    vertical tab, carriage return or byte order mark, which libcst may drop,
    and a final newline) and where the statement's text occurs at one line
    start only; else the statement around it is tried, up to the top-level
    one, and then the whole module is rendered once, as the eager pass does,
    so both give the same positions."""

    def __init__(self, module: cst.Module, source: str, *, lazy: bool = False) -> None:
        self.module = module
        self.source = source
        self.index = LineIndex(source)
        self._state = PositionState(module)
        self._rendered: Optional[str] = None
        self._map: Optional[SourceMap] = None
        self._complete = False
        # Lazy: id(node) -> the innermost block statement holding it, filled by
        # a walk that stops at the node asked about (each statement walked once).
        self._owners: Dict[int, _Statement] = {}
        self._walk: Optional[Iterator[Tuple[_Statement, cst.CSTNode]]] = None
        if not (lazy and _renders_as_is(module, source)):
            self._render_all()

    def _render_all(self) -> None:
        state = PositionState(self.module)
        self.module._codegen(state)
        self._state = state
        self._complete = True
        rendered = "".join(state.tokens)
        state.tokens.clear()
        # Usually the rendering is the text itself and needs no map.
        self._rendered = None if rendered == self.source else rendered
        self._map = None if self._rendered is None else SourceMap(rendered, self.source)

    def _recorded(self, node: cst.CSTNode) -> PositionState:
        """The state holding ``node``'s records (rendering what it takes)."""
        state = self._state
        if self._complete or id(node) in state._inclusive:
            return state
        statement = self._owner(node)
        while statement is not None and not self._render_statement(statement):
            statement = statement.outer
        if statement is None:
            self._render_all()
        return self._state

    def _owner(self, node: cst.CSTNode) -> "Optional[_Statement]":
        """The innermost block statement holding ``node``."""
        key = id(node)
        found = self._owners.get(key)
        if found is not None:
            return found
        if self._walk is None:
            self._walk = _statement_nodes(self.module)
        for statement, each in self._walk:
            self._owners.setdefault(id(each), statement)
            if id(each) == key:
                return statement
        return None  # the module itself, or a node outside its statements

    def _render_statement(self, statement: "_Statement") -> bool:
        """Record one statement's nodes where its text sits; False when that
        place is not certain."""
        piece = PositionState(self.module)
        piece.indent_tokens = list(statement.indent_tokens)
        statement.node._codegen(piece)
        text = "".join(piece.tokens)
        start = _only_line_start(self.source, text)
        if start is None:
            return False
        self._state.absorb(piece, start)
        return True

    def nodes(self) -> Sequence[cst.CSTNode]:
        """Every node with a range."""
        if not self._complete:
            self._render_all()
        return self._state.nodes()

    def span(self, node: cst.CSTNode) -> Tuple[int, int]:
        """The real character range of a node (libcst's syntactic range)."""
        return self._real(*self._recorded(node).syntactic(node))

    def range(self, node: cst.CSTNode) -> Tuple[Position, Position]:
        """The 1-based start and end positions of a node in the real text."""
        start, end = self.span(node)
        return self.index.position(start), self.index.position(end)

    def line(self, node: cst.CSTNode) -> int:
        """The 1-based line a node starts on."""
        return self.index.position(self.span(node)[0]).line

    def edits(self, replacements: Sequence[Replacement], imports: Sequence[str]) -> Tuple[Edit, ...]:
        """The edits of one fix, or none when they cannot be made without
        touching text outside the replaced nodes."""
        if self._map is not None and not self._map.exact:
            return ()
        edits: List[Edit] = []
        bounds: List[Tuple[int, int]] = []
        for replacement in replacements:
            found = self._replacement_edits(replacement)
            if found is None:
                return ()
            edits.extend(found)
            bounds.append(self._real(*self._recorded(replacement.node).inclusive(replacement.node)))
        for name in imports:
            edit = self._import_edit(name)
            edits.append(edit)
            bounds.append((edit.start, edit.end))
        if not all(any(low <= e.start <= e.end <= high for low, high in bounds) for e in edits):
            return ()  # an edit reaching outside its node: never offered
        return tuple(sorted(set(edits)))

    def _real(self, start: int, end: int) -> Tuple[int, int]:
        """Real offsets of a rendered range (ranges of the last statement of
        a file without a final newline end one newline past the text)."""
        limit = len(self._rendered_text())
        start, end = min(start, limit), min(end, limit)
        return self._map.span(start, end) if self._map is not None else (start, end)

    def _rendered_text(self) -> str:
        return self.source if self._rendered is None else self._rendered

    def _replacement_edits(self, replacement: Replacement) -> Optional[List[Edit]]:
        node, new_node = replacement.node, replacement.new_node
        state = self._recorded(node)
        context = state.context(node)
        if context.fstring_quotes:
            new_node = requote_inserted_strings(node, new_node, context.fstring_quotes)
        start, end = state.inclusive(node)
        text = self._rendered_text()
        old = text[start:end]
        # The module itself renders as the text this pass rendered; any other
        # node is rendered alone to check it renders as it sits in the module.
        expected = old if node is self.module else _render(node, self.module, context)
        new = _render(new_node, self.module, context)
        popped = self._state.popped_newline
        if end > len(text) and popped and expected == old + popped and new.endswith(popped):
            expected, new = old, new[: -len(popped)]  # the last statement of a file without a final newline
        if expected != old:
            return None  # the node does not render as it sits in the module
        local = _trimmed_edit(old, new, 0)
        if local is None:
            return []
        return self._mapped(Edit(start + local.start, start + local.end, local.text))

    def _mapped(self, edit: Edit) -> Optional[List[Edit]]:
        """A rendered-text edit as real-text edits, keeping every dropped
        character: split by lines where one falls inside the edit."""
        if self._map is None:
            return [edit]
        real_start, real_end = self._map.span(edit.start, edit.end)
        if real_end - real_start == edit.end - edit.start:
            return [Edit(real_start, real_end, edit.text)]
        rendered = self._rendered_text()
        old_lines = _lines(rendered[edit.start : edit.end])
        new_lines = _lines(edit.text)
        pieces: List[Edit] = []
        line_offsets = [edit.start]
        for line in old_lines:
            line_offsets.append(line_offsets[-1] + len(line))
        import difflib  # only here: not on every run's import path
        matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
        for tag, a0, a1, b0, b1 in matcher.get_opcodes():
            if tag == "equal":
                continue
            piece_start, piece_end = self._map.span(line_offsets[a0], line_offsets[a1])
            if piece_end - piece_start != line_offsets[a1] - line_offsets[a0]:
                return None  # a dropped character inside a changed line
            pieces.append(Edit(piece_start, piece_end, "".join(new_lines[b0:b1])))
        return pieces

    def _import_edit(self, name: str) -> Edit:
        """Insert ``import name`` before the first statement that is not the
        docstring or a ``__future__`` import."""
        module = self.module
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
                offset = self.index.start_of_line_at(self.span(statement)[0])
                return Edit(offset, offset, f"import {name}{newline}")
        # Nothing but a docstring and future imports: append at the end.
        text = self.source
        prefix = "" if not text or text.endswith(("\n", "\r")) else newline
        return Edit(len(text), len(text), f"{prefix}import {name}{newline}")


_CHANGED_BY_RENDERING = ("\f", "\v", "\r", "\ufeff")


def _renders_as_is(module: cst.Module, source: str) -> bool:
    """Whether libcst's rendering of ``module`` is ``source`` itself, as far
    as the text shows: none of the characters it may drop, and the final
    newline that the last statement renders."""
    return module.has_trailing_newline and not any(character in source for character in _CHANGED_BY_RENDERING)


def _only_line_start(text: str, piece: str) -> Optional[int]:
    """The one offset at a line start where ``piece`` occurs in ``text``;
    None when there is none or more than one."""
    if not piece:
        return None
    found: Optional[int] = None
    at = text.find(piece)
    while at != -1:
        if at == 0 or text[at - 1] == "\n":
            if found is not None:
                return None
            found = at
        at = text.find(piece, at + 1)
    return found


@dataclass(frozen=True)
class _Statement:
    """A statement of the module's or of an indented block's body: what
    renders as whole lines of the text, given the indentation in force."""

    node: cst.CSTNode
    indent_tokens: Tuple[str, ...]
    outer: "Optional[_Statement]"
    """The block statement around it (None: a top-level statement)."""


def _statement_nodes(module: cst.Module) -> Iterator[Tuple[_Statement, cst.CSTNode]]:
    """(the innermost block statement holding it, node) for every node under
    the module's statements, statement by statement (a block's statements
    after the statement around them), each depth first.  Only an indented
    block changes the indentation in force, and ``match`` (its cases are
    indented too): under a ``match`` every node counts as the ``match``
    statement's own."""
    pending = [_Statement(top, (), None) for top in reversed(module.body)]
    while pending:
        statement = pending.pop()
        inner: List[_Statement] = []
        stack: List[cst.CSTNode] = [statement.node]
        while stack:
            node = stack.pop()
            yield statement, node
            kind = type(node)
            if kind is cst.IndentedBlock:
                assert isinstance(node, cst.IndentedBlock)
                indents = (*statement.indent_tokens, module.default_indent if node.indent is None else node.indent)
                inner.extend(_Statement(child, indents, statement) for child in children(node))
            elif kind is cst.Match:
                yield from ((statement, each) for each, _ in walk(node) if each is not node)
            else:
                stack.extend(reversed(children(node)))
        pending.extend(reversed(inner))


def _lines(text: str) -> List[str]:
    """Lines with their ends, broken at \n, \r\n and \r only (as Python
    counts lines; ``str.splitlines`` also breaks at form feeds)."""
    return io.StringIO(text, newline="").readlines()


class _RenderState(CodegenState):
    """Plain rendering: records no positions (libcst's default still enters
    a generator-based context manager for most nodes)."""

    def record_syntactic_position(  # type: ignore[override]  # same protocol, no generator
        self,
        node: cst.CSTNode,
        *,
        start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ) -> "nullcontext[None]":
        return _NOTHING_RECORDED


_NOTHING_RECORDED: "nullcontext[None]" = nullcontext()


def _render(node: cst.CSTNode, module: cst.Module, context: NodeContext) -> str:
    """A node's text as the module renders it where the node sits."""
    state = _RenderState(default_indent=module.default_indent, default_newline=module.default_newline)
    state.indent_tokens = list(context.indent_tokens)
    node._codegen(state)
    return "".join(state.tokens)


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
