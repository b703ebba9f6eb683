"""Rewrites for the deprecated symbols whose replacement takes other
arguments (``fix = "custom"`` in the deprecation table), one pure function
per symbol in :data:`REPLACERS`.

A replacer gets the call and the replacement's callee, already spelled for
the file, and returns the new expression, or None when the arguments are
not ones it can rewrite with certainty (an unpacking, a value only known at
run time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Optional

import libcst as cst

from torchlint.data import apidata
from torchlint.ruleapi.fixes import bind, remove_argument, replace_argument, set_keyword, spell
from torchlint.analysis.names import ImportTable
from torchlint.ruleapi.rule import TorchVersion
from torchlint.analysis.values import literal_bool

_MH_SINCE = TorchVersion(1, 11)  # Tensor.mH


@dataclass(frozen=True)
class Site:
    """A call of a deprecated symbol and what the rewrite may use."""

    call: cst.Call
    callee: Optional[cst.BaseExpression]  # the replacement spelled for the file, if the entry has one
    version: TorchVersion
    names: ImportTable


Replacer = Callable[[Site], Optional[cst.BaseExpression]]


def _plain(call: cst.Call) -> bool:
    return all(arg.star == "" for arg in call.args)


def _int_value(expr: cst.BaseExpression) -> Optional[int]:
    """The value of an integer literal, signed or not (``2``, ``-2``)."""
    if isinstance(expr, cst.Integer):
        return int(expr.value, 0)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = _int_value(expr.expression)
        return None if inner is None else -inner
    return None


def _int_literal(value: int) -> cst.BaseExpression:
    if value < 0:
        return cst.UnaryOperation(operator=cst.Minus(), expression=cst.Integer(str(-value)))
    return cst.Integer(str(value))


def _renamed(site: Site) -> Optional[cst.Call]:
    if site.callee is None:
        return None
    return site.call.with_changes(func=site.callee)


def chain_matmul(site: Site) -> Optional[cst.BaseExpression]:
    """``chain_matmul(a, b, c)`` is ``linalg.multi_dot([a, b, c])``."""
    call = _renamed(site)
    if call is None or not _plain(call):
        return None
    matrices = [arg for arg in call.args if arg.keyword is None]
    others = [arg for arg in call.args if arg.keyword is not None]
    if not matrices or any(arg.keyword.value != "out" for arg in others if arg.keyword is not None):
        return None
    elements = [cst.Element(value=arg.value, comma=arg.comma) for arg in matrices]
    elements[-1] = elements[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    first = cst.Arg(value=cst.List(elements=elements), comma=matrices[-1].comma if others else cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=[first, *others])


@dataclass(frozen=True)
class _Flag:
    """A call renamed to its replacement without one boolean argument, and
    the literal value that argument had (its default when absent)."""

    call: cst.Call
    value: bool


def _without_flag(site: Site, symbol: str, name: str, default: bool) -> Optional[_Flag]:
    """None when the argument is not a literal or the call cannot be bound."""
    call = _renamed(site)
    if call is None or not _plain(call):
        return None
    arg = bind(call, apidata.signature(symbol)).argument(name)
    if arg is None:
        return _Flag(call, default)
    value = literal_bool(arg.value)
    return None if value is None else _Flag(remove_argument(call, arg), value)


def qr(site: Site) -> Optional[cst.BaseExpression]:
    """``qr(A, some=False)`` is ``linalg.qr(A, mode="complete")``; ``some=True`` is the default mode."""
    flag = _without_flag(site, "torch.qr", "some", True)
    if flag is None:
        return None
    return flag.call if flag.value else set_keyword(flag.call, "mode", cst.SimpleString('"complete"'))


def cholesky(site: Site) -> Optional[cst.BaseExpression]:
    """``cholesky(A, upper=True)`` is ``linalg.cholesky(A).mH``."""
    flag = _without_flag(site, "torch.cholesky", "upper", False)
    if flag is None or (flag.value and site.version < _MH_SINCE):
        return None
    return cst.Attribute(value=flag.call, attr=cst.Name("mH")) if flag.value else flag.call


def _one_past(end: cst.BaseExpression, step: int) -> cst.BaseExpression:
    """``end + step``, folded for literals and for ``x - step``."""
    literal = _int_value(end)
    if literal is not None:
        return _int_literal(literal + step)
    if (
        step > 0
        and isinstance(end, cst.BinaryOperation)
        and isinstance(end.operator, cst.Subtract)
        and _int_value(end.right) == step
    ):
        return end.left
    operator: cst.BaseBinaryOp = cst.Add() if step > 0 else cst.Subtract()
    return cst.BinaryOperation(left=end, operator=operator, right=_int_literal(abs(step)))


def range_(site: Site) -> Optional[cst.BaseExpression]:
    """``range(a, b, s)`` includes ``b``; ``arange(a, b + s, s)`` is the same
    sequence when the start and the step are integer literals and the end
    is an integer (assumed for an expression: why the fix is unsafe)."""
    call = _renamed(site)
    if call is None or not _plain(call):
        return None
    bound = bind(call, apidata.signature("torch.range"))
    end, start = bound.argument("end"), bound.argument("start")
    # Shifting the end by one step is right only on the integer grid: a
    # float start (``range(0.5, 4)``) or end would gain an element.
    if end is None or isinstance(end.value, cst.Float) or (start is not None and _int_value(start.value) is None):
        return None
    step_arg = bound.argument("step")
    step = 1 if step_arg is None else _int_value(step_arg.value)
    if not step:
        return None
    return replace_argument(call, end, _one_past(end.value, step))


_DTYPES = {
    "torch.cuda.FloatTensor": "torch.float32",
    "torch.cuda.DoubleTensor": "torch.float64",
    "torch.cuda.HalfTensor": "torch.float16",
    "torch.cuda.LongTensor": "torch.int64",
    "torch.cuda.IntTensor": "torch.int32",
    "torch.cuda.ByteTensor": "torch.uint8",
    "torch.cuda.BoolTensor": "torch.bool",
}


def _legacy_constructor(symbol: str) -> Replacer:
    """``torch.cuda.FloatTensor(2, 3)`` is ``torch.empty(2, 3, dtype=torch.float32,
    device="cuda")``; ``torch.cuda.FloatTensor([1, 2])`` is ``torch.tensor(...)``."""

    def replace(site: Site) -> Optional[cst.BaseExpression]:
        call = site.call
        if not call.args or not _plain(call) or any(arg.keyword is not None for arg in call.args):
            return None
        if len(call.args) == 1 and isinstance(call.args[0].value, (cst.List, cst.Tuple)):
            factory = "torch.tensor"
        elif all(isinstance(arg.value, cst.Integer) for arg in call.args):
            factory = "torch.empty"
        else:
            return None
        func = spell(site.names, factory)
        dtype = spell(site.names, _DTYPES[symbol])
        if func is None or dtype is None or func.imports or dtype.imports:
            return None
        new = call.with_changes(func=func.expression)
        new = set_keyword(new, "dtype", dtype.expression)
        return set_keyword(new, "device", cst.SimpleString('"cuda"'))

    return replace


def _rename(site: Site) -> Optional[cst.BaseExpression]:
    return _renamed(site)


REPLACERS: Dict[str, Replacer] = {
    "torch.chain_matmul": chain_matmul,
    "torch.qr": qr,
    "torch.cholesky": cholesky,
    "torch.range": range_,
    # assert_close takes the same first arguments; what differs (dtype and
    # device checks, tolerances) is why the table marks it unsafe.
    "torch.testing.assert_allclose": _rename,
    **{symbol: _legacy_constructor(symbol) for symbol in _DTYPES},
}
