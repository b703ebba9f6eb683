"""TL402 manual-attention."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from torchlint.analysis.flow import Flow
from torchlint.analysis.scopes import Binding, BindingKind
from torchlint.ruleapi.precheck import PrecheckFacts
from torchlint.ruleapi.rule import Example, FileContext, OptionValue, Rule, Severity, TorchRange, TorchVersion
from torchlint.source.tree import walk_body

_SOFTMAX_FUNCTIONS: FrozenSet[str] = frozenset({
    "torch.softmax", "torch.nn.functional.softmax", "torch.special.softmax",
})
_SOFTMAX_MODULE = "torch.nn.Softmax"
_DROPOUT_FUNCTIONS: FrozenSet[str] = frozenset({"torch.nn.functional.dropout", "torch.dropout"})
_PASS_MODULES: FrozenSet[str] = frozenset({"torch.nn.Dropout", "torch.nn.Identity"})
_SEQUENTIAL = "torch.nn.Sequential"
_PRODUCTS: FrozenSet[str] = frozenset({"torch.matmul", "torch.bmm"})
_EINSUMS: FrozenSet[str] = frozenset({"torch.einsum", "torch.functional.einsum"})
_EINOPS_EINSUM = "einops.einsum"
_SDPA = "torch.nn.functional.scaled_dot_product_attention"
_TRANSPOSING_METHODS: FrozenSet[str] = frozenset({"transpose", "permute", "t", "swapaxes", "swapdims"})
_TRANSPOSED_ATTRIBUTES: FrozenSet[str] = frozenset({"mT", "T", "mH", "H"})
_TRANSPOSE_FUNCTIONS: FrozenSet[str] = frozenset({"torch.transpose", "torch.swapaxes", "torch.swapdims"})
# Element-wise steps between the scores and the softmax: masking, casts, clamping.
_SCORE_METHODS: FrozenSet[str] = frozenset({
    "masked_fill", "masked_fill_", "float", "to", "type", "type_as", "clamp", "clamp_", "contiguous",
    "view", "reshape",
})
_SCORE_FUNCTIONS: FrozenSet[str] = frozenset({"torch.where", "torch.masked_fill", "torch.clamp"})
# Casts of the probabilities back to the values' dtype before the product.
_CASTS: FrozenSet[str] = frozenset({"to", "type", "type_as", "half", "float", "bfloat16"})
_SCORE_OPERATORS = (cst.Multiply, cst.Divide, cst.Add, cst.Subtract)
_AUGMENTED_SCORE_OPERATORS = (cst.MultiplyAssign, cst.DivideAssign, cst.AddAssign, cst.SubtractAssign)
_MAX_DEPTH = 24  # steps back through assignments and element-wise operations


@dataclass(frozen=True)
class _Product:
    """The probabilities multiplied with the values."""

    node: cst.CSTNode


_Use = Union["_Product", List[cst.BaseExpression]]
"""What a use of the probabilities is: the product with the values, or the
expressions that carry them on (an assignment's later uses, a dropout, a cast)."""


class _Body:
    """One function's body (nested functions and classes left out): its nodes
    in source order, their parents, and the file's flow fact, which says
    which assignments reach each read of a name and which reads each
    assignment reaches."""

    def __init__(self, root: cst.CSTNode, flow: Flow, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> None:
        self.nodes: List[cst.CSTNode] = list(walk_body(root))
        self.parent = parents
        self._flow = flow

    def reaching(self, name: cst.Name) -> Optional[Tuple[Binding, ...]]:
        """The bindings whose value reaches this read of ``name``; None when
        none does or the flow cannot say."""
        found = self._flow.reaching_bindings(name)
        return found or None

    def later_uses(self, assign: cst.Assign) -> List[cst.Name]:
        """The reads of the name ``assign`` binds that its value reaches."""
        target = assign.targets[0].target
        assert isinstance(target, cst.Name)
        return list(self._flow.reads_reached(target) or ())


def _assigned(binding: Binding) -> Optional[Tuple[cst.CSTNode, cst.BaseExpression]]:
    """The statement of a plain ``name = value`` binding and the expression
    the name then holds: ``value``, or for ``name += value`` (and the other
    element-wise operators) the name as it was read there, the step between
    being element-wise; None for any other binding."""
    node = binding.node
    if (
        binding.kind is BindingKind.ASSIGN and isinstance(node, cst.Assign) and len(node.targets) == 1
        and isinstance(node.targets[0].target, cst.Name)
    ):
        return node, node.value
    if (
        binding.kind is BindingKind.AUG_ASSIGN and isinstance(node, cst.AugAssign)
        and isinstance(node.operator, _AUGMENTED_SCORE_OPERATORS) and isinstance(node.target, cst.Name)
    ):
        return node, node.target
    return None


def _einsum_parts(equation: cst.BaseExpression) -> Optional[Tuple[List[str], str]]:
    """The operands' and the output's index letters of a literal equation."""
    if not isinstance(equation, cst.SimpleString):
        return None
    text = equation.evaluated_value
    if not isinstance(text, str) or "->" not in text:
        return None
    text = text.replace(" ", "").replace("...", "")
    left, _, out = text.partition("->")
    operands = left.split(",")
    if len(operands) != 2 or not all(operands) or not out:
        return None
    return operands, out


class ManualAttention(Rule):
    """## What it does
    Reports scaled dot-product attention written out by hand: a softmax
    (`torch.softmax`, `F.softmax`, the tensor method, an `nn.Softmax`
    module, or an `nn.Sequential` that starts with one over the last
    dimension and then only drops out) over scores that come from a product of a query with a
    transposed key (`q @ k.transpose(-2, -1)`, `torch.matmul`, `torch.bmm`,
    `k.mT`, or an `einsum` that contracts both operands' last index),
    optionally scaled, masked (`masked_fill`, `torch.where`, an added bias)
    or cast, whose result (after an optional dropout or cast) is multiplied
    with a value tensor (`@`, `matmul`, `bmm`, or an `einsum` contracting
    the probabilities' last index).  The steps may be spread over several
    assignments of one function (`attn += bias` included; where several
    assignments can reach a step, from both sides of an `if` or through a
    loop, each of them must be one), and the scores may pass through a
    function or method of the same file that returns them with a bias
    added, a mask applied or a cast (`dots = self.apply_pos_bias(dots)`).

    Not reported: a function that also calls
    `F.scaled_dot_product_attention` (the hand-written path is its
    fallback), a function that returns or stores the attention
    probabilities, or passes them to anything but dropout, a cast or the
    product (attention maps kept for visualisation or a loss need them),
    a softmax over another dimension than the last, and a classifier's
    softmax (its input is no product with a transposed key).

    ## Why is this bad?
    Written out, attention materialises the full `(L, S)` score and
    probability matrices per head in GPU memory and runs five or six
    kernels that each read and write them.
    `torch.nn.functional.scaled_dot_product_attention` computes the same
    function in one fused kernel (FlashAttention, memory-efficient
    attention or cuDNN, picked for the inputs), never storing the matrix:
    memory linear instead of quadratic in the sequence length, and usually
    several times faster, for training and inference.

    ## Example
    ```python
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    att = att.masked_fill(mask == 0, float("-inf"))
    att = F.softmax(att, dim=-1)
    att = self.attn_dropout(att)
    y = att @ v
    ```

    Use instead:
    ```python
    y = F.scaled_dot_product_attention(
        q, k, v,
        attn_mask=mask != 0,  # True where attention is allowed
        dropout_p=self.dropout if self.training else 0.0,
    )
    ```

    The default scale is `1 / sqrt(q.size(-1))`; pass `scale=` (torch 2.1)
    for another.  A causal mask is `is_causal=True`; an additive bias (a
    relative position bias) is a float `attn_mask`.

    ## Fix safety
    No automatic fix: the mask's convention (boolean "keep" against a
    `masked_fill` "drop" mask, or an additive float), the scale and the
    dropout's training switch must be carried over by hand.

    ## Source guide
    *DGX cluster guidelines* (a GPU cluster's user guide, "No brainer code
    tweaks") recommends replacing a manual implementation of attention
    with `torch.nn.functional.scaled_dot_product_attention`, which computes
    the same thing more efficiently.
    """

    code = "TL402"
    name = "manual-attention"
    summary = "attention written out by hand (softmax(q @ kᵀ) @ v); use `F.scaled_dot_product_attention`"
    fix_summary = "none: the docs show the rewrite"
    torch_range = TorchRange(min=TorchVersion(2, 0), note="`scaled_dot_product_attention` exists since 2.0")
    severity = Severity.WARNING  # the code computes the right thing, only slower and in more memory

    @classmethod
    def could_match(cls, facts: PrecheckFacts, options: Mapping[str, OptionValue]) -> bool:
        """A softmax and a product in a file that imports torch."""
        return (
            facts.imports_torch
            and facts.mentions(("softmax", "Softmax"))
            and ("@" in facts.source or facts.mentions(("matmul", "bmm", "einsum")))
        )

    valid = (
        """
        import torch.nn.functional as F
        def classify(x, w, v):
            probs = F.softmax(x @ w, dim=-1)
            return probs @ v
        """,
        """
        import torch
        def attention(q, k, v):
            attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
            return attn @ v, attn
        """,
        """
        import torch
        import torch.nn.functional as F
        def attention(self, q, k, v):
            if self.flash:
                return F.scaled_dot_product_attention(q, k, v)
            att = F.softmax(q @ k.transpose(-2, -1), dim=-1)
            return att @ v
        """,
        """
        import torch
        def attention(q, k, v):
            attn = torch.softmax(q @ k.transpose(-2, -1), dim=-2)
            return attn @ v
        """,
    )
    invalid = (
        Example(
            """
            import math
            import torch.nn as nn
            import torch.nn.functional as F
            class Attention(nn.Module):
                def __init__(self, p):
                    super().__init__()
                    self.attn_dropout = nn.Dropout(p)

                def forward(self, q, k, v, mask):
                    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                    att = att.masked_fill(mask == 0, float("-inf"))
                    att = F.softmax(att, dim=-1)
                    att = self.attn_dropout(att)
                    return att @ v
            """
        ),
        Example(
            """
            import torch
            def attention(q, k, v, scale):
                dots = torch.einsum("bhid,bhjd->bhij", q, k) * scale
                attn = dots.softmax(dim=-1)
                return torch.einsum("bhij,bhjd->bhid", attn, v)
            """
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._functions: List[cst.FunctionDef] = []
        self._score_assignments: Set[cst.CSTNode] = set()
        self._holding: Dict[Tuple[int, cst.CSTNode, str], bool] = {}
        """Answers of :meth:`_holds` for the softmax being checked."""
        self._given: Optional[Tuple[_Body, str]] = None
        """While a helper is checked: its body and the parameter that holds the scores."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)

    def leave_Module(self, original_node: cst.Module) -> None:
        lines: Optional[Mapping[cst.CSTNode, object]] = None
        for function in self._functions:
            body = _Body(function.body, self.facts.flow, self.facts.parents)
            if any(
                isinstance(node, cst.Call) and self.names.call_name(node) == _SDPA for node in body.nodes
            ):
                continue
            for node in body.nodes:
                if not isinstance(node, cst.Call):
                    continue
                scores = self._softmax_input(node)
                self._score_assignments = set()
                self._holding = {}
                if scores is None or not self._is_scores(scores, body, 0):
                    continue
                if _returns_any(body, self._score_assignments):
                    continue  # the scores are handed back (reused by a later layer)
                product = self._attended(node, body)
                if product is None:
                    continue
                if lines is None:
                    lines = self.facts.positions
                position = lines[product]
                start_line = getattr(getattr(position, "start", None), "line", None)
                line = self.cite_line(start_line) if isinstance(start_line, int) else "line ?"
                self.report(
                    node,
                    f"attention written out by hand: softmax of query-key scores, multiplied with the values "
                    f"on {line}; `torch.nn.functional.scaled_dot_product_attention` computes it in one "
                    "fused kernel without storing the attention matrix",
                    statement=_statement_of(node, body),
                )

    # -- the softmax ------------------------------------------------------------------

    def _softmax_input(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """The scores a softmax call normalises over the last dimension, or None."""
        qualified = self.names.call_name(call)
        func = call.func
        if qualified in _SOFTMAX_FUNCTIONS:
            positional = [arg for arg in call.args if arg.keyword is None]
            source = _keyword_value(call, "input") or (positional[0].value if positional else None)
            dim = _keyword_value(call, "dim") or (positional[1].value if len(positional) > 1 else None)
            return source if source is not None and _last_dim(dim) else None
        if qualified is not None:
            return None
        if len(call.args) == 1 and call.args[0].keyword is None:
            callee = self.facts.values.of(func)
            if callee is not None and callee.qualified == _SOFTMAX_MODULE:
                return call.args[0].value
            if callee is not None and callee.qualified == _SEQUENTIAL and self._softmax_first(func):
                return call.args[0].value
            if isinstance(func, cst.Call) and self.names.call_name(func) == _SOFTMAX_MODULE:
                return call.args[0].value
        if isinstance(func, cst.Attribute) and func.attr.value == "softmax":
            positional = [arg for arg in call.args if arg.keyword is None]
            dim = _keyword_value(call, "dim") or (positional[0].value if positional else None)
            return func.value if _last_dim(dim) else None
        return None

    def _softmax_first(self, module: cst.BaseExpression) -> bool:
        """``nn.Sequential(nn.Softmax(dim=-1), nn.Dropout(p))``: a softmax over
        the last dimension followed only by modules that pass values on."""
        built = self.facts.instances.construction(module)
        if built is None or not built.args or any(arg.keyword is not None or arg.star for arg in built.args):
            return False
        steps = [arg.value for arg in built.args]
        first = steps[0]
        if not (isinstance(first, cst.Call) and self.names.call_name(first) == _SOFTMAX_MODULE):
            return False
        positional = [arg for arg in first.args if arg.keyword is None]
        if not _last_dim(_keyword_value(first, "dim") or (positional[0].value if positional else None)):
            return False
        return all(isinstance(step, cst.Call) and self.names.call_name(step) in _PASS_MODULES for step in steps[1:])

    # -- the scores ---------------------------------------------------------------------

    def _is_scores(self, expr: cst.BaseExpression, body: _Body, depth: int) -> bool:
        """A product of a query with a transposed key, perhaps scaled, masked or cast."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.MatrixMultiply):
                return self._either_transposed(expr.left, expr.right, body, depth)
            if isinstance(expr.operator, _SCORE_OPERATORS):
                return self._is_scores(expr.left, body, depth + 1) or self._is_scores(expr.right, body, depth + 1)
            return False
        if isinstance(expr, cst.Name):
            bindings = body.reaching(expr)
            if bindings is None:
                return False
            assignments: List[cst.CSTNode] = []
            for binding in bindings:
                if binding.kind is BindingKind.PARAMETER and self._given == (body, binding.name):
                    continue  # the helper's parameter that receives the scores
                assigned = _assigned(binding)
                if assigned is None or not self._holds(assigned, body, depth, self._is_scores):
                    return False
                assignments.append(assigned[0])
            self._score_assignments.update(assignments)
            return True
        if not isinstance(expr, cst.Call):
            return False
        qualified = self.names.call_name(expr)
        positional = [arg.value for arg in expr.args if arg.keyword is None]
        if qualified in _PRODUCTS:
            return len(positional) == 2 and self._either_transposed(positional[0], positional[1], body, depth)
        if qualified in _EINSUMS or qualified == _EINOPS_EINSUM:
            return self._einsum_scores(expr, qualified)
        if qualified in _SCORE_FUNCTIONS:
            return any(self._is_scores(value, body, depth + 1) for value in positional)
        func = expr.func
        if qualified is None and isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in ("matmul", "bmm"):
                return len(positional) == 1 and self._either_transposed(func.value, positional[0], body, depth)
            if method in _SCORE_METHODS:
                return self._is_scores(func.value, body, depth + 1)
        if qualified is None and len(positional) == 1 and self._passes_through(func):
            return self._is_scores(positional[0], body, depth + 1)
        if qualified is None and not any(arg.keyword is not None or arg.star for arg in expr.args):
            return self._through_helper(func, positional, body, depth)
        return False

    def _holds(self, assigned: Tuple[cst.CSTNode, cst.BaseExpression], body: _Body, depth: int,
               test: Callable[[cst.BaseExpression, _Body, int], bool]) -> bool:
        """``test`` of the value an assignment binds, once per assignment and
        test for each softmax: several assignments can reach one read (both
        sides of an ``if``, a loop's next pass), and a loop's assignment that
        reaches itself counts as what the others make of it."""
        key = (id(body), assigned[0], test.__name__)
        known = self._holding.get(key)
        if known is not None:
            return known
        start = len(self._holding)
        self._holding[key] = True  # while it is being answered: a loop back to it adds nothing
        found = self._holding[key] = test(assigned[1], body, depth + 1)
        if not found:  # answers that took it for true no longer hold
            for later in list(self._holding)[start + 1:]:
                if self._holding[later]:
                    del self._holding[later]
        return found

    def _through_helper(self, func: cst.BaseExpression, arguments: List[cst.BaseExpression],
                        body: _Body, depth: int) -> bool:
        """A function or method of this file that is handed the scores and
        returns them with a bias added, a mask applied or a cast
        (``dots = self.apply_pos_bias(dots)``): every ``return`` of it is scores
        when its parameter is."""
        callee = self.facts.values.local_callee(func)
        if callee is None or callee[0].decorators or self._given is not None:
            return False
        helper, skipped = callee
        params = [*helper.params.posonly_params, *helper.params.params][skipped:]
        if len(params) < len(arguments) or isinstance(helper.params.star_arg, cst.Param):
            return False
        for param, argument in zip(params, arguments):
            if not self._is_scores(argument, body, depth + 1):
                continue
            inner = _Body(helper.body, self.facts.flow, self.facts.parents)
            returns = [n for n in inner.nodes if isinstance(n, cst.Return)]
            self._given = (inner, param.name.value)
            try:
                return bool(returns) and all(
                    r.value is not None and self._is_scores(r.value, inner, depth + 1) for r in returns
                )
            finally:
                self._given = None
        return False

    def _either_transposed(
        self, left: cst.BaseExpression, right: cst.BaseExpression, body: _Body, depth: int
    ) -> bool:
        """``q @ k.transpose(-2, -1)``, or the same product with the query
        stored transposed (``q.transpose(-2, -1) @ k``, channels-first layouts)."""
        return self._is_transposed(right, body, depth + 1) or self._is_transposed(left, body, depth + 1)

    def _passes_through(self, func: cst.BaseExpression) -> bool:
        """A call of an ``nn.Dropout`` or ``nn.Identity`` module."""
        callee = self.facts.values.of(func)
        return callee is not None and callee.qualified in _PASS_MODULES

    def _is_transposed(self, expr: cst.BaseExpression, body: _Body, depth: int) -> bool:
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.Attribute):
            return expr.attr.value in _TRANSPOSED_ATTRIBUTES and self.names.qualified_name(expr) is None
        if isinstance(expr, cst.Name):
            assignments = [_assigned(binding) for binding in body.reaching(expr) or ()]
            return bool(assignments) and all(
                assigned is not None and self._holds(assigned, body, depth, self._is_transposed)
                for assigned in assignments
            )
        if isinstance(expr, cst.Call):
            qualified = self.names.call_name(expr)
            if qualified in _TRANSPOSE_FUNCTIONS:
                return True
            func = expr.func
            return qualified is None and isinstance(func, cst.Attribute) and func.attr.value in _TRANSPOSING_METHODS
        return False

    def _einsum_scores(self, call: cst.Call, qualified: Optional[str]) -> bool:
        """``einsum("bhid,bhjd->bhij", q, k)``: both operands' last index summed away,
        the output ending with the query's and the key's positions."""
        parts = self._einsum_equation(call, qualified)
        if parts is None:
            return False
        (first, second), out = parts
        shared = first[-1]
        return (
            len(first) >= 2 and len(second) >= 2 and len(out) >= 2
            and second[-1] == shared and shared not in out
            and out[-2] == first[-2] and out[-1] == second[-2]
        )

    @staticmethod
    def _einsum_equation(call: cst.Call, qualified: Optional[str]) -> Optional[Tuple[List[str], str]]:
        if not call.args:
            return None
        equation = call.args[-1].value if qualified == _EINOPS_EINSUM else call.args[0].value
        return _einsum_parts(equation)

    # -- after the softmax ----------------------------------------------------------------

    def _attended(self, softmax: cst.Call, body: _Body) -> Optional[cst.CSTNode]:
        """The product of the probabilities with the values, when the
        probabilities go nowhere else; None otherwise."""
        products: List[cst.CSTNode] = []
        pending: List[cst.BaseExpression] = [softmax]
        seen: Set[cst.CSTNode] = set()
        while pending:
            expr = pending.pop()
            if expr in seen:
                continue
            seen.add(expr)
            parent = body.parent.get(expr)
            if isinstance(parent, cst.Arg):
                parent = body.parent.get(parent)
            verdict = self._use(expr, parent, body)
            if verdict is None:
                return None  # returned, stored, or passed elsewhere
            if isinstance(verdict, _Product):
                products.append(verdict.node)
            else:
                pending.extend(verdict)
        return products[0] if products else None

    def _use(
        self, expr: cst.BaseExpression, parent: Optional[cst.CSTNode], body: _Body
    ) -> Optional[_Use]:
        """What happens to the probabilities held by ``expr``: a product with
        the values, the expressions that carry them on, or None (they escape)."""
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.MatrixMultiply):
            return _Product(parent) if parent.left is expr else None
        if isinstance(parent, cst.Assign):
            target = parent.targets[0].target if len(parent.targets) == 1 else None
            if not isinstance(target, cst.Name):
                return None  # stored in an attribute, a subscript or a tuple
            return [use for use in body.later_uses(parent)]
        if isinstance(parent, cst.Attribute) and parent.value is expr:
            call = body.parent.get(parent)
            if isinstance(call, cst.Call) and call.func is parent:
                method = parent.attr.value
                if method in _CASTS:
                    return [call]
                if method in ("matmul", "bmm"):
                    return _Product(call)
                if method in ("transpose", "permute"):
                    return self._right_of_product(call, body)
            if parent.attr.value in ("mT", "T"):
                return self._right_of_product(parent, body)
            return None
        if isinstance(parent, cst.Call):
            return self._call_use(expr, parent)
        return None

    @staticmethod
    def _right_of_product(transposed: cst.BaseExpression, body: _Body) -> Optional[_Use]:
        """``v @ attn.transpose(-2, -1)``: the transposed probabilities on the
        right of the product (channels-first layouts)."""
        parent = body.parent.get(transposed)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.MatrixMultiply):
            return _Product(parent) if parent.right is transposed else None
        return None

    def _call_use(self, expr: cst.BaseExpression, call: cst.Call) -> Optional[_Use]:
        qualified = self.names.call_name(call)
        positional = [arg.value for arg in call.args if arg.keyword is None]
        if qualified in _PRODUCTS:
            return _Product(call) if positional[:1] == [expr] else None
        if qualified in _EINSUMS or qualified == _EINOPS_EINSUM:
            operands = positional[:-1] if qualified == _EINOPS_EINSUM else positional[1:]
            parts = self._einsum_equation(call, qualified)
            if parts is None or expr not in operands or len(operands) != 2:
                return None
            own = parts[0][operands.index(expr)]
            return _Product(call) if own[-1] not in parts[1] else None
        if qualified in _DROPOUT_FUNCTIONS:
            return [call] if positional[:1] == [expr] else None
        if qualified is None and positional == [expr] and self._passes_through(call.func):
            return [call]
        return None




def _keyword_value(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def _last_dim(dim: Optional[cst.BaseExpression]) -> bool:
    """``dim`` is -1, or a literal index of 2 or more (the last of a 3-D or 4-D tensor)."""
    if isinstance(dim, cst.UnaryOperation) and isinstance(dim.operator, cst.Minus):
        return isinstance(dim.expression, cst.Integer) and dim.expression.value == "1"
    return isinstance(dim, cst.Integer) and dim.value in ("2", "3")


def _returns_any(body: _Body, assignments: Set[cst.CSTNode]) -> bool:
    """Some ``return`` of the function hands back a value one of ``assignments`` bound."""
    return any(
        isinstance(node, cst.Return) and node.value is not None
        and any(
            isinstance(inner, cst.Name)
            and any(binding.node in assignments for binding in body.reaching(inner) or ())
            for inner in walk_body(node.value)
        )
        for node in body.nodes
    )


def _statement_of(node: cst.CSTNode, body: _Body) -> Optional[cst.CSTNode]:
    current: Optional[cst.CSTNode] = node
    while current is not None and not isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        current = body.parent.get(current)
    return current


__all__: Sequence[str] = ("ManualAttention",)
