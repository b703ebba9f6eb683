"""TL607 imprecise-log-exp."""

from __future__ import annotations

from typing import ClassVar, Mapping, Optional, Tuple

import libcst as cst

from torchlint.ruleapi.fixes import keyword_argument, spell
from torchlint.model import Applicability
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, FixAvailability, OptionValue, Rule, TorchRange, TorchVersion
from torchlint.ruleapi.verification import Contract, VerificationSpec
from torchlint.source.tree import literal_none

# `torch.logsumexp` promotes integer inputs to floating point (as
# `log(sum(exp(x)))` does) since pytorch#77480, released in 1.13; log1p and
# expm1 were checked to promote alike in the torch this project tests with.
# Older targets get the fixes as unsafe.
_SAME_DTYPES_SINCE = TorchVersion(1, 13)


def _is_one(node: cst.BaseExpression) -> bool:
    """A literal `1` or `1.0` (any spelling of the float)."""
    if isinstance(node, cst.Integer):
        return node.evaluated_value == 1
    if isinstance(node, cst.Float):
        return node.evaluated_value == 1.0
    return False


def _only_argument(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The call's single plain positional argument, if that is all it has."""
    if len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star:
        return call.args[0].value
    return None


def _without_parens(node: cst.BaseExpression) -> cst.BaseExpression:
    return node.with_changes(lpar=(), rpar=()) if node.lpar else node


class ImpreciseLogExp(Rule):
    """## What it does
    Reports three spellings that lose precision, each with the function made
    for it:
    - `torch.log(1 + x)` (or `x + 1`, with a literal `1` or `1.0`):
      use `torch.log1p(x)`;
    - `torch.exp(x) - 1`: use `torch.expm1(x)`;
    - `torch.log(torch.sum(torch.exp(x), dim))` with a `dim` that is not
      `None`: use `torch.logsumexp(x, dim)` (a `keepdim` is kept).

    Only the `torch.` functions are matched, through the file's imports;
    method forms (`x.exp().sum(dim).log()`) are not.

    ## Why is this bad?
    For `|x|` much smaller than 1, `1 + x` rounds away most of `x`'s digits
    before the logarithm sees it (in float32, `1 + 1e-8 == 1`, so
    `log(1 + 1e-8)` is 0), and `exp(x) - 1` cancels the leading 1 and keeps
    only rounding error.  `log1p` and `expm1` compute the same functions
    without that cancellation.  `log(sum(exp(x)))` overflows to `inf` as soon
    as an element of `x` exceeds about 88 in float32 (11 in float16), and
    underflows to `-inf` for very negative inputs; `logsumexp` subtracts the
    maximum first and stays finite.

    ## Example
    ```python
    log_prob = torch.log(1 + p)
    growth = torch.exp(rate) - 1
    log_norm = torch.log(torch.sum(torch.exp(logits), dim=-1))
    ```

    Use instead:
    ```python
    log_prob = torch.log1p(p)
    growth = torch.expm1(rate)
    log_norm = torch.logsumexp(logits, dim=-1)
    ```

    ## Fix safety
    The fixed expressions compute the same mathematical values, more
    accurately: results move by rounding, and where the old expression
    overflowed to `inf`, `logsumexp` returns the finite value.  Result
    dtypes agree for floating and integer inputs (both sides promote integer
    tensors to the default float dtype), so the fixes are safe when the
    target torch is 1.13 or newer; for older targets they are marked unsafe,
    because `torch.logsumexp` raised on integer inputs before 1.13 and this
    rule cannot see a tensor's dtype.  No fix is offered when the calls take
    other arguments (`out=`, `dtype=` on the sum).

    ## Options
    None.

    ## Source
    PyTorch documentation, *torch.log1p*, *torch.expm1* and
    *torch.logsumexp* (each documented as the accurate or numerically
    stable form of the expression it replaces).
    """

    code = "TL607"
    name = "imprecise-log-exp"
    summary = "`log(1 + x)`, `exp(x) - 1` or `log(sum(exp(x)))`: use `log1p`, `expm1`, `logsumexp`"
    aliases: ClassVar[Tuple[str, ...]] = ("TOR106", "TOR107", "TOR108")
    fix_availability = FixAvailability.SOMETIMES
    fix_summary = "safe from torch 1.13 (unsafe before): `log1p`, `expm1`, `logsumexp`"
    torch_range = TorchRange(note="`log1p`, `expm1` and `logsumexp` exist in every release")
    trigger_words = ("log", "exp")

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """Every pattern calls `log` or `exp` by name (`torch.log`, `log` from
        `from torch import log`), reached as an attribute or an imported name;
        the words inside `logging` or `expand`, and a local `exp`, do not count."""
        return facts.reaches(cls.trigger_words)
    valid = (
        "import torch\ny = torch.log1p(x)\n",
        "import torch\ny = torch.log(2 + x)\n",
        "import torch\ny = torch.exp(x) - 2\n",
        "import torch\ny = torch.log(torch.sum(torch.exp(x)))\n",
        "import torch\ny = torch.log(torch.sum(torch.exp(x), dim=None))\n",
        "import math\ny = math.log(1 + x)\n",
    )
    invalid = (
        Example("import torch\ny = torch.log(1 + x)\n", fixed="import torch\ny = torch.log1p(x)\n"),
        Example("import torch\ny = torch.exp(x) - 1\n", fixed="import torch\ny = torch.expm1(x)\n"),
        Example(
            "import torch\ny = torch.log(torch.sum(torch.exp(x), dim=1))\n",
            fixed="import torch\ny = torch.logsumexp(x, dim=1)\n",
        ),
        Example(
            "import torch\ny = torch.log(torch.sum(torch.exp(x), 1, dtype=torch.float64))\n",
        ),
    )
    verification = VerificationSpec(
        programs=("verify_program.py",),
        comparison=".verify_compare:check",
        reference="float64",
        contract=Contract(
            level="close, or at least as accurate against float64",
            promise="The fixed expressions give the same values up to rounding where the old ones were "
                    "accurate, and values at least as close to the exact result where they were not "
                    "(near 0, or where `exp` overflowed).",
            checks=(
                "every output is close, with the same shape, dtype, device and autograd status",
                "an output (or printed number) that is not close is judged against the original run in "
                "float64 with the same inputs: each value must be at least as close to that reference as "
                "the original's, up to rounding",
                "configuration (hyperparameters, counts, strings) is compared exactly",
            ),
            differences=("where `log(sum(exp(x)))` overflowed to `inf`, `logsumexp` is finite",),
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.names.call_name(node) != "torch.log":
            return
        argument = _only_argument(node)
        if argument is None:
            return
        if isinstance(argument, cst.BinaryOperation) and isinstance(argument.operator, cst.Add):
            other = (argument.right if _is_one(argument.left)
                     else argument.left if _is_one(argument.right) else None)
            if other is not None:
                self._rewrite(node, node, "torch.log1p", (cst.Arg(_without_parens(other)),),
                              "`torch.log(1 + x)` loses precision for small `x`; use `torch.log1p(x)`")
            return
        if isinstance(argument, cst.Call) and self.names.call_name(argument) == "torch.sum":
            self._logsumexp(node, argument)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not (isinstance(node.operator, cst.Subtract) and _is_one(node.right)):
            return
        call = node.left
        if not (isinstance(call, cst.Call) and not call.lpar and self.names.call_name(call) == "torch.exp"):
            return
        argument = _only_argument(call)
        if argument is None:
            return
        # The call replaces the whole subtraction, parentheses included: a
        # call needs none.
        self._rewrite(node, call, "torch.expm1", (cst.Arg(argument),),
                      "`torch.exp(x) - 1` loses precision for small `x`; use `torch.expm1(x)`")

    def _logsumexp(self, log: cst.Call, total: cst.Call) -> None:
        args = list(total.args)
        if not args or args[0].keyword is not None or args[0].star:
            return
        exp = args[0].value
        if not (isinstance(exp, cst.Call) and self.names.call_name(exp) == "torch.exp"):
            return
        inner = _only_argument(exp)
        if inner is None or any(arg.star for arg in args):
            return
        dim = keyword_argument(total, "dim")
        if dim is None and len(args) > 1 and args[1].keyword is None:
            dim = args[1]
        if dim is None or literal_none(dim.value):
            return
        known = {"dim", "keepdim"}
        positional = [arg for arg in args if arg.keyword is None]
        extra = [arg for arg in args if arg.keyword is not None and arg.keyword.value not in known]
        arguments: Optional[Tuple[cst.Arg, ...]] = None
        if not extra and len(positional) <= 3:
            arguments = (args[0].with_changes(value=inner), *args[1:])
        self._rewrite(log, log, "torch.logsumexp", arguments,
                      "`torch.log(torch.sum(torch.exp(x), dim))` overflows for large `x`; "
                      "use `torch.logsumexp(x, dim)`")

    def _rewrite(self, node: cst.BaseExpression, call: cst.Call, target: str,
                 args: Optional[Tuple[cst.Arg, ...]], message: str) -> None:
        """Report ``node``; the fix puts ``call`` with ``target`` and ``args`` in its place."""
        fix = None
        if args is not None:
            func: Optional[cst.BaseExpression] = None
            imports: Tuple[str, ...] = ()
            if isinstance(call.func, cst.Attribute):
                # `torch.log` / `th.log`: the same module prefix, another function.
                func = call.func.with_changes(attr=cst.Name(target.rsplit(".", 1)[1]))
            else:
                spelled = spell(self.names, target)
                if spelled is not None:
                    func, imports = spelled.expression, spelled.imports
            if func is not None:
                new = call.with_changes(func=func, args=args, lpar=(), rpar=())
                fix = self.replace(node, new, self._applicability(), f"Use `{target}`", imports=imports)
        self.report(node, message, fix=fix)

    def _applicability(self) -> Applicability:
        if self.context.torch_version < _SAME_DTYPES_SINCE:
            return Applicability.UNSAFE
        return Applicability.SAFE
