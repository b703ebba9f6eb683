"""The edits rules make, in one place: read an argument by the callee's
signature, add / replace / remove a keyword, spell a qualified name the way
the file imports it, rename a call, add a decorator, insert a statement.

Every function returns new libcst nodes (or a :class:`Replacement`); the
engine turns them into text edits, and imports a fix needs are returned as
module names for :class:`FixRequest.imports`, which the fixer adds once per
file.

Layout policy for arguments (one policy for every rule, close to Ruff's):

- The text between two arguments (comma, spaces, line break, comments) is a
  *gap*.  A comment at the end of a line belongs to the argument it follows
  on that line; a comment on a line of its own stays where it is.
- An added keyword goes after the last argument.  It takes over that
  argument's trailing comma (present or not) and the call's line layout:
  the separator the call already uses between arguments, without comments
  (a new line with the same indentation when arguments sit one per line,
  otherwise ``", "``).  A comment after the last argument stays on that
  argument's line; the new keyword starts the next line.
- A removed argument takes its own end-of-line comment with it only when it
  had its line to itself; a comment on a line it shares with another
  argument stays, now after that argument.  Own-line comments around it
  stay.  When the removed argument was the last one, the call keeps or
  leaves out its trailing comma as before.
- A keyword's ``=`` is spaced like the call's other keywords (``a=1`` or
  ``a = 1``).
- An inserted statement goes directly above the anchor statement's first
  line (below the comments that lead into it) or directly below the
  anchor; the block's indentation is libcst's.
- A decorator is added innermost (right above ``def``), below the existing
  ones and the comments that precede them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple, Union

import libcst as cst

from torchlint.data.apidata import Signature
from torchlint.source.arguments import BoundArguments, Splats, bind_positions
from torchlint.analysis.names import ImportTable
from torchlint.source.edits import Replacement
from torchlint.ruleapi.rule import TorchVersion

Gap = cst.BaseParenthesizableWhitespace
Block = Union[cst.Module, cst.IndentedBlock]

_NO_SPACE = cst.SimpleWhitespace("")
_ONE_SPACE = cst.SimpleWhitespace(" ")
_EXTRA_INDENT = "    "


# -- reading arguments -----------------------------------------------------------


def bind(call: cst.Call, signature: Signature, oldest: Optional[TorchVersion] = None,
         splats: "Optional[Splats]" = None,
         ) -> BoundArguments:
    """Match ``call``'s arguments to ``signature``'s parameters.

    With ``oldest``, a positional argument counts as certain only when it
    means the same parameter in every release from ``oldest`` on (the data
    records when parameters appeared); without, the newest signature is used.
    With ``splats`` (``facts.values.splatted``), a ``**`` of a dict whose keys
    are known passes those keys (``BoundArguments.splatted``).
    """
    versions: Sequence[Optional[TorchVersion]] = (
        signature.versions_from(oldest) if oldest is not None else (None,)
    )
    orders = [_positional_names(signature, version) for version in versions]
    return bind_positions(call, orders, [p.name for p in signature.parameters], splats)


def _positional_names(signature: Signature, version: Optional[TorchVersion]) -> Tuple[str, ...]:
    if version is None:
        return tuple(p.name for p in signature.parameters if p.positional and p.keyword_only_since is None)
    return signature.positional_names(version)


def bound_argument(
    call: cst.Call, signature: Signature, name: str, oldest: Optional[TorchVersion] = None
) -> Optional[cst.Arg]:
    """The argument ``call`` certainly passes for parameter ``name``."""
    return bind(call, signature, oldest).argument(name)


def keyword_argument(call: cst.Call, name: str) -> Optional[cst.Arg]:
    """The argument passed as ``name=...``, if any."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def comments(node: cst.CSTNode) -> Counter[str]:
    """The comments inside ``node``, counted; compare before and after an
    edit to refuse fixes that would drop one."""
    found: Counter[str] = Counter()

    class _Collect(cst.CSTVisitor):
        def visit_Comment(self, comment: cst.Comment) -> None:
            found[comment.value] += 1

    node.visit(_Collect())
    return found


# -- gaps between arguments --------------------------------------------------------


def _breaks(gap: Gap) -> bool:
    return isinstance(gap, cst.ParenthesizedWhitespace)


def _bare(gap: cst.ParenthesizedWhitespace) -> cst.ParenthesizedWhitespace:
    """The same line break and indentation, without any comment."""
    return gap.with_changes(first_line=cst.TrailingWhitespace(newline=gap.first_line.newline), empty_lines=())


def _gap_after(arg: cst.Arg) -> Gap:
    return arg.comma.whitespace_after if isinstance(arg.comma, cst.Comma) else arg.whitespace_after_arg


def _gap_before(call: cst.Call, args: Sequence[cst.Arg], index: int) -> Gap:
    if index == 0:
        return call.whitespace_before_args
    previous = args[index - 1].comma
    assert isinstance(previous, cst.Comma)  # an argument follows it
    return previous.whitespace_after


def _separator(call: cst.Call) -> Gap:
    """What the call puts between two arguments, comments left out: a line
    break when its arguments sit one per line, else the last space used."""
    args = call.args
    between = [_gap_before(call, args, index) for index in range(1, len(args))]
    if not between:
        between = [call.whitespace_before_args]
        if not isinstance(between[0], cst.ParenthesizedWhitespace):
            return _ONE_SPACE
    spaces = [gap for gap in between if not isinstance(gap, cst.ParenthesizedWhitespace)]
    if spaces:
        return spaces[-1]
    last = between[-1]
    assert isinstance(last, cst.ParenthesizedWhitespace)
    return _bare(last)


def _equal(call: cst.Call) -> cst.AssignEqual:
    """The spacing of the call's other keywords' ``=``."""
    for arg in call.args:
        if arg.keyword is not None and isinstance(arg.equal, cst.AssignEqual):
            return arg.equal
    return cst.AssignEqual(whitespace_before=_NO_SPACE, whitespace_after=_NO_SPACE)


def _merged(before: Gap, after: Gap, *, first: bool, closing: bool) -> Gap:
    """The one gap left when the argument between ``before`` and ``after``
    goes (``first``/``closing``: it was the first/last argument)."""
    if not isinstance(after, cst.ParenthesizedWhitespace):
        if not isinstance(before, cst.ParenthesizedWhitespace):
            return after if closing else before
        if not comments(before):
            return after if closing else before  # `f(a,\n  b)` without b is `f(a)`
        # The previous argument's comment keeps its line break; `)` goes
        # to the start of the next line.
        return before.with_changes(last_line=_NO_SPACE) if closing else before
    if not isinstance(before, cst.ParenthesizedWhitespace):
        if first:
            # Alone on its line but for the opening parenthesis: its comment
            # goes; own-line comments after it stay.
            if not after.empty_lines:
                return before
            return _bare(after).with_changes(empty_lines=after.empty_lines)
        # It shared its line with the previous argument: the comment that
        # ended the line stays there.
        return after
    # Alone on its line: the line goes, with the comment that ended it.
    return cst.ParenthesizedWhitespace(
        first_line=before.first_line,
        empty_lines=[*before.empty_lines, *after.empty_lines],
        indent=after.indent,
        last_line=after.last_line,
    )


# -- editing arguments --------------------------------------------------------------


def add_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """``call`` with ``name=value`` appended after its last argument."""
    new = cst.Arg(value=value, keyword=cst.Name(name), equal=_equal(call))
    args = list(call.args)
    if not args:
        before = call.whitespace_before_args
        if isinstance(before, cst.ParenthesizedWhitespace) and not comments(before):
            before = _NO_SPACE
        return call.with_changes(args=(new,), whitespace_before_args=before)
    last = args[-1]
    closing = _gap_after(last)
    separator = _separator(call)
    if isinstance(closing, cst.ParenthesizedWhitespace):
        # The last argument ends its line (maybe with a comment): the comment
        # stays there and the new keyword starts the next line.
        if isinstance(separator, cst.ParenthesizedWhitespace):
            indent, last_line = separator.indent, separator.last_line
        else:
            indent = closing.indent
            last_line = cst.SimpleWhitespace(closing.last_line.value + _EXTRA_INDENT)
        after_last: Gap = cst.ParenthesizedWhitespace(
            first_line=closing.first_line, empty_lines=(), indent=indent, last_line=last_line
        )
        end: Gap = closing.with_changes(first_line=cst.TrailingWhitespace(newline=closing.first_line.newline))
    else:
        after_last = separator
        end = closing
    if isinstance(last.comma, cst.Comma):
        args[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=after_last))
        new = new.with_changes(comma=cst.Comma(whitespace_after=end))
    else:
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=after_last), whitespace_after_arg=_NO_SPACE)
        new = new.with_changes(whitespace_after_arg=end)
    args.append(new)
    return call.with_changes(args=args)


def replace_argument(
    call: cst.Call, arg: cst.Arg, value: cst.BaseExpression, *, keyword: Optional[str] = None
) -> cst.Call:
    """``call`` with ``arg``'s value replaced, its comma and comments kept;
    with ``keyword``, the argument is written as ``keyword=value``."""
    new = arg.with_changes(value=value)
    if keyword is not None:
        equal = arg.equal if isinstance(arg.equal, cst.AssignEqual) else _equal(call)
        new = new.with_changes(keyword=cst.Name(keyword), equal=equal, star="", whitespace_after_star=_NO_SPACE)
    return call.with_changes(args=[new if a is arg else a for a in call.args])


def set_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """``call`` with ``name=value``: the value replaced if the keyword is
    there, else the keyword added."""
    existing = keyword_argument(call, name)
    if existing is not None:
        return replace_argument(call, existing, value)
    return add_keyword(call, name, value)


def set_argument(
    call: cst.Call, signature: Signature, name: str, value: cst.BaseExpression,
    oldest: Optional[TorchVersion] = None,
) -> Optional[cst.Call]:
    """``call`` with parameter ``name`` set to ``value`` wherever it is
    passed (by keyword or by position), or added as a keyword; None when an
    unpacking or an uncertain position may pass it already."""
    bound = bind(call, signature, oldest)
    existing = bound.argument(name)
    if existing is not None:
        return replace_argument(call, existing, value)
    if bound.may_be_present(name):
        return None
    return add_keyword(call, name, value)


def remove_argument(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """``call`` without ``arg``, the gaps around it merged by the policy."""
    args = list(call.args)
    index = next(i for i, a in enumerate(args) if a is arg)
    before = _gap_before(call, args, index)
    after = _gap_after(arg)
    is_last = index == len(args) - 1
    merged = _merged(before, after, first=index == 0, closing=is_last)
    del args[index]
    if not args:
        if not comments(merged):
            merged = _NO_SPACE
        return call.with_changes(args=(), whitespace_before_args=merged)
    if index == 0:
        return call.with_changes(args=args, whitespace_before_args=merged)
    previous = args[index - 1]
    if is_last and not isinstance(arg.comma, cst.Comma):
        args[index - 1] = previous.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=merged)
    else:
        assert isinstance(previous.comma, cst.Comma)
        args[index - 1] = previous.with_changes(comma=previous.comma.with_changes(whitespace_after=merged))
    return call.with_changes(args=args)


def remove_keyword(call: cst.Call, name: str) -> cst.Call:
    """``call`` without its ``name=...`` argument (unchanged if absent)."""
    existing = keyword_argument(call, name)
    return call if existing is None else remove_argument(call, existing)


# -- names and imports --------------------------------------------------------------


@dataclass(frozen=True)
class Spelling:
    """How to write a qualified name in a file, and the imports that needs."""

    expression: cst.BaseExpression
    text: str
    imports: Tuple[str, ...]


def dotted_expression(dotted_text: str) -> cst.BaseExpression:
    """``a.b.c`` as a libcst expression."""
    parts = dotted_text.split(".")
    expr: cst.BaseExpression = cst.Name(parts[0])
    for part in parts[1:]:
        expr = cst.Attribute(value=expr, attr=cst.Name(part))
    return expr


def spell(names: ImportTable, qualified: str, *, module: Optional[str] = None) -> Optional[Spelling]:
    """Write ``qualified`` (``torch.nn.Conv2d``) through the file's imports.

    The shortest imported prefix wins (``th.nn.Conv2d`` under
    ``import torch as th``; ``nn.Conv2d`` when only ``from torch import nn``
    is there; ``Conv2d`` when only the class is imported); with no import to
    use, the full name and ``import <root>`` (or ``module``, the module that
    must be loaded for the name to exist).  None when the root name is bound
    to something else in the file.
    """
    parts = qualified.split(".")
    for size in range(1, len(parts) + 1):
        prefix = ".".join(parts[:size])
        local = names.local_name_for(prefix)
        if local is not None and names.binding(local) == prefix:
            text = ".".join([local, *parts[size:]])
            needs_module = module is not None and not (prefix == module or prefix.startswith(module + "."))
            return Spelling(dotted_expression(text), text, (module,) if needs_module and module else ())
    root = parts[0]
    if names.is_bound(root) or names.binding(root) is not None:
        return None
    return Spelling(dotted_expression(qualified), qualified, (module or root,))


@dataclass(frozen=True)
class Renamed:
    """A call with a new callee, and the imports the callee needs."""

    call: cst.Call
    imports: Tuple[str, ...]


def rename_call(
    call: cst.Call, names: ImportTable, qualified: str, *, module: Optional[str] = None
) -> Optional[Renamed]:
    """``call`` invoking ``qualified`` instead, spelled by :func:`spell`."""
    spelling = spell(names, qualified, module=module)
    if spelling is None:
        return None
    return Renamed(call.with_changes(func=spelling.expression), spelling.imports)


# -- decorators and statements -------------------------------------------------------


def add_decorator(function: cst.FunctionDef, decorator: cst.BaseExpression) -> cst.FunctionDef:
    """``function`` with ``@decorator`` added innermost (right above ``def``)."""
    return function.with_changes(decorators=[*function.decorators, cst.Decorator(decorator=decorator)])


@dataclass(frozen=True)
class StatementSite:
    """A statement and the block whose body holds it."""

    block: Block
    statement: cst.BaseStatement


def statement_site(parents: Sequence[cst.CSTNode], node: cst.CSTNode) -> Optional[StatementSite]:
    """The innermost statement around ``node`` that sits in a block's body
    (``parents`` innermost last, as ``Rule.parents``); None inside a
    one-line suite such as ``if x: a; b``."""
    chain = [*parents, node]
    for index in range(len(chain) - 1, 0, -1):
        candidate, parent = chain[index], chain[index - 1]
        if isinstance(parent, cst.SimpleStatementSuite):
            return None
        if isinstance(parent, (cst.Module, cst.IndentedBlock)) and isinstance(candidate, cst.BaseStatement):
            if any(statement is candidate for statement in parent.body):
                return StatementSite(parent, candidate)
    return None


def parse_statement(code: str, module: cst.Module) -> cst.BaseStatement:
    """One statement parsed with the file's newline and indentation."""
    return cst.parse_statement(code, config=module.config_for_parsing)


def insert_statements(
    site: StatementSite, statements: Sequence[cst.BaseStatement], *, after: bool
) -> Replacement:
    """Insert ``statements`` before or after ``site.statement``.

    Before: directly above the statement, below the comments that lead into
    it; after: directly below it, above the next statement's leading lines.
    """
    body = list(site.block.body)
    index = next(i for i, s in enumerate(body) if s is site.statement)
    new = list(statements)
    if after:
        body[index + 1:index + 1] = new
    elif new:
        anchor = body[index]
        assert isinstance(anchor, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
        new[0] = new[0].with_changes(leading_lines=anchor.leading_lines)
        body[index:index + 1] = [*new, anchor.with_changes(leading_lines=())]
    return Replacement(site.block, site.block.with_changes(body=body))
