"""The fix toolkit: argument binding, keyword edits over a matrix of call
layouts (exact text, and the result parses), spelling, renames, decorators
and statement insertion (also through the engine and the fixer)."""

from __future__ import annotations

from typing import Callable, List, Optional

import libcst as cst
import pytest

from torchlint.ruleapi import fixes
from torchlint.data.apidata import CheckMethod, Parameter, Signature
from torchlint.lint.engine import LintConfig
from torchlint.lint.fixer import fix_text
from torchlint.model import Applicability
from torchlint.analysis.names import ImportTable
from torchlint.ruleapi.rule import Rule, TorchVersion


def _first_call(module: cst.Module) -> cst.Call:
    found: List[cst.Call] = []

    class _Find(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if not found:
                found.append(node)

    module.visit(_Find())
    return found[0]


def _edit(source: str, edit: Callable[[cst.Call], cst.Call]) -> str:
    module = cst.parse_module(source)
    call = _first_call(module)
    result = module.deep_replace(call, edit(call))
    assert isinstance(result, cst.Module)
    cst.parse_module(result.code)  # the output re-parses
    compile(result.code, "<fixed>", "exec")
    return result.code


# -- adding a keyword ----------------------------------------------------------------

ADD = [
    ("one line", "f(a, b)\n", "f(a, b, k=v)\n"),
    ("hanging indent", "f(a, b,\n  c)\n", "f(a, b,\n  c, k=v)\n"),
    ("one per line, trailing comma", "f(\n    a,\n    b,\n)\n", "f(\n    a,\n    b,\n    k=v,\n)\n"),
    ("one per line, no trailing comma", "f(\n    a,\n    b\n)\n", "f(\n    a,\n    b,\n    k=v\n)\n"),
    ("comment after the first argument", "f(a,  # note\n  b)\n", "f(a,  # note\n  b,\n  k=v)\n"),
    ("comment after the last argument", "f(a, b  # note\n)\n", "f(a, b,  # note\n    k=v\n)\n"),
    ("a comment on every line", "f(\n    a,  # na\n    b,  # nb\n)\n",
     "f(\n    a,  # na\n    b,  # nb\n    k=v,\n)\n"),
    ("own-line comment before the parenthesis", "f(\n    a,\n    # end\n)\n",
     "f(\n    a,\n    k=v,\n    # end\n)\n"),
    ("*args and **kwargs", "f(*args, **kwargs)\n", "f(*args, **kwargs, k=v)\n"),
    ("keyword arguments spaced", "f(a, b = 1)\n", "f(a, b = 1, k = v)\n"),
    ("keyword arguments only", "f(key=1, other=2)\n", "f(key=1, other=2, k=v)\n"),
    ("empty call", "f()\n", "f(k=v)\n"),
    ("inside an indented block", "def g():\n    f(\n        a,\n    )\n",
     "def g():\n    f(\n        a,\n        k=v,\n    )\n"),
]


@pytest.mark.parametrize("source, expected", [case[1:] for case in ADD], ids=[case[0] for case in ADD])
def test_add_keyword(source: str, expected: str) -> None:
    assert _edit(source, lambda call: fixes.add_keyword(call, "k", cst.Name("v"))) == expected


# -- replacing and removing a keyword ------------------------------------------------

KEYWORD = [
    # (id, source, after replacing k's value with v, after removing k)
    ("one line, last", "f(a, k=1)\n", "f(a, k=v)\n", "f(a)\n"),
    ("one line, middle", "f(a, k=1, b=2)\n", "f(a, k=v, b=2)\n", "f(a, b=2)\n"),
    ("one line, first", "f(k=1, b=2)\n", "f(k=v, b=2)\n", "f(b=2)\n"),
    ("the only argument", "f(k=1)\n", "f(k=v)\n", "f()\n"),
    ("one line, trailing comma", "f(a, k=1,)\n", "f(a, k=v,)\n", "f(a,)\n"),
    ("hanging indent, last", "f(a, b,\n  k=1)\n", "f(a, b,\n  k=v)\n", "f(a, b)\n"),
    ("hanging indent, middle", "f(a,\n  k=1, b=2)\n", "f(a,\n  k=v, b=2)\n", "f(a,\n  b=2)\n"),
    ("one per line, trailing comma", "f(\n    a,\n    k=1,\n)\n", "f(\n    a,\n    k=v,\n)\n",
     "f(\n    a,\n)\n"),
    ("one per line, middle", "f(\n    a,\n    k=1,\n    b=2,\n)\n", "f(\n    a,\n    k=v,\n    b=2,\n)\n",
     "f(\n    a,\n    b=2,\n)\n"),
    ("one per line, no trailing comma", "f(\n    a,\n    k=1\n)\n", "f(\n    a,\n    k=v\n)\n",
     "f(\n    a\n)\n"),
    # The comment ends the previous argument's line: it stays with it.
    ("comment after the first argument", "f(a,  # note\n  k=1)\n", "f(a,  # note\n  k=v)\n",
     "f(a  # note\n)\n"),
    # The comment is on k's line, but so is `a`: the comment stays.
    ("comment after the last argument", "f(a, k=1  # note\n)\n", "f(a, k=v  # note\n)\n",
     "f(a  # note\n)\n"),
    ("shared line with a comment", "f(a, k=1,  # note\n  b=2)\n", "f(a, k=v,  # note\n  b=2)\n",
     "f(a,  # note\n  b=2)\n"),
    # k has its line to itself: its comment goes with it.
    ("own line with a comment", "f(\n    a,\n    k=1,  # about k\n)\n",
     "f(\n    a,\n    k=v,  # about k\n)\n", "f(\n    a,\n)\n"),
    ("first, alone with a comment", "f(k=1,  # about k\n  b=2)\n", "f(k=v,  # about k\n  b=2)\n",
     "f(b=2)\n"),
    # A comment on a line of its own is never removed.
    ("own-line comment above", "f(\n    a,\n    # about k\n    k=1,\n)\n",
     "f(\n    a,\n    # about k\n    k=v,\n)\n", "f(\n    a,\n    # about k\n)\n"),
    ("*args and **kwargs", "f(*args, k=1, **kwargs)\n", "f(*args, k=v, **kwargs)\n", "f(*args, **kwargs)\n"),
    ("spaced equal sign", "f(a, k = 1)\n", "f(a, k = v)\n", "f(a)\n"),
]


@pytest.mark.parametrize("source, replaced", [c[1:3] for c in KEYWORD], ids=[c[0] for c in KEYWORD])
def test_replace_keyword(source: str, replaced: str) -> None:
    assert _edit(source, lambda call: fixes.set_keyword(call, "k", cst.Name("v"))) == replaced


@pytest.mark.parametrize("source, removed", [(c[1], c[3]) for c in KEYWORD], ids=[c[0] for c in KEYWORD])
def test_remove_keyword(source: str, removed: str) -> None:
    assert _edit(source, lambda call: fixes.remove_keyword(call, "k")) == removed


def test_set_keyword_adds_when_absent_and_remove_ignores_absent() -> None:
    assert _edit("f(a)\n", lambda call: fixes.set_keyword(call, "k", cst.Name("v"))) == "f(a, k=v)\n"
    assert _edit("f(a)\n", lambda call: fixes.remove_keyword(call, "k")) == "f(a)\n"


def test_replace_positional_argument_as_keyword() -> None:
    def edit(call: cst.Call) -> cst.Call:
        return fixes.replace_argument(call, call.args[0], cst.Name("True"), keyword="set_to_none")

    assert _edit("opt.zero_grad(False)\n", edit) == "opt.zero_grad(set_to_none=True)\n"
    assert _edit("opt.zero_grad(\n    False,  # why\n)\n", edit) == (
        "opt.zero_grad(\n    set_to_none=True,  # why\n)\n"
    )


def test_comments_counts_every_comment() -> None:
    call = _first_call(cst.parse_module("f(a,  # one\n  b  # two\n)\n"))
    assert fixes.comments(call) == {"# one": 1, "# two": 1}
    # `b` had its line to itself: its comment goes with it, `a`'s stays.
    assert fixes.comments(fixes.remove_argument(call, call.args[1])) == {"# one": 1}


# -- binding arguments to a signature --------------------------------------------------

V19 = TorchVersion(1, 9)
V21 = TorchVersion(2, 1)


def _signature(
    positional: List[str],
    keyword_only: List[str] = [],
    *,
    added: Optional[dict] = None,
    var_positional: Optional[str] = None,
) -> Signature:
    added = added or {}
    return Signature(
        name="f",
        parameters=tuple(
            [Parameter(p, True, added.get(p)) for p in positional]
            + [Parameter(p, False, added.get(p)) for p in keyword_only]
        ),
        var_positional=var_positional,
        var_keyword=None,
        since=None,
        check=CheckMethod.NONE,
        reference="test",
        note="",
    )


LAYER_NORM = _signature(
    ["normalized_shape", "eps", "elementwise_affine", "bias", "device", "dtype"],
    added={"bias": V21, "device": V19, "dtype": V19},
)


def _bind(source: str, signature: Signature, oldest: Optional[TorchVersion] = None) -> fixes.BoundArguments:
    return fixes.bind(_first_call(cst.parse_module(source)), signature, oldest)


def test_bind_by_position_and_keyword() -> None:
    bound = _bind("LayerNorm(8, 1e-5, dtype=d)\n", LAYER_NORM)
    eps = bound.argument("eps")
    assert eps is not None and isinstance(eps.value, cst.Float)
    assert bound.positional("eps") and not bound.positional("dtype")
    assert bound.argument("dtype") is not None
    assert bound.argument("device") is None and not bound.may_be_present("device")


def test_bind_position_whose_meaning_changed_is_unknown() -> None:
    # The 4th argument is `device` in 1.9-2.0 and `bias` from 2.1 on.
    source = "LayerNorm(8, 1e-5, True, x)\n"
    assert _bind(source, LAYER_NORM).argument("bias") is not None  # newest signature
    from_21 = _bind(source, LAYER_NORM, V21)
    assert from_21.argument("bias") is not None and not from_21.may_be_present("device")
    from_19 = _bind(source, LAYER_NORM, V19)
    assert from_19.argument("bias") is None and from_19.argument("device") is None
    assert from_19.may_be_present("bias") and from_19.may_be_present("device")
    assert not from_19.may_be_present("dtype")


def test_bind_unpacking_makes_later_parameters_unknown() -> None:
    bound = _bind("LayerNorm(8, *rest)\n", LAYER_NORM)
    assert bound.argument("normalized_shape") is not None
    assert bound.may_be_present("eps") and bound.may_be_present("device")
    assert bound.argument("device") is None
    kwargs = _bind("LayerNorm(8, **options)\n", LAYER_NORM)
    assert kwargs.may_be_present("device") and kwargs.argument("device") is None


def test_bind_var_positional_never_reaches_keyword_only() -> None:
    zeros = _signature([], ["out", "dtype", "device"], var_positional="size")
    bound = _bind("zeros(2, 3, *shape)\n", zeros)
    assert not bound.may_be_present("device")
    assert fixes.bound_argument(_first_call(cst.parse_module("zeros(2, device=d)\n")), zeros, "device")


def test_set_argument_positional_keyword_and_unknown() -> None:
    linear = _signature(["in_features", "out_features", "bias"])

    def set_bias(source: str) -> Optional[str]:
        module = cst.parse_module(source)
        call = _first_call(module)
        new = fixes.set_argument(call, linear, "bias", cst.Name("False"))
        return None if new is None else module.deep_replace(call, new).code  # type: ignore[union-attr]

    assert set_bias("Linear(3, 4, True)\n") == "Linear(3, 4, False)\n"
    assert set_bias("Linear(3, 4, bias=True)\n") == "Linear(3, 4, bias=False)\n"
    assert set_bias("Linear(3, 4)\n") == "Linear(3, 4, bias=False)\n"
    assert set_bias("Linear(3, *rest)\n") is None


# -- spelling names and renaming calls --------------------------------------------------


def _names(source: str) -> ImportTable:
    return ImportTable.from_module(cst.parse_module(source))


@pytest.mark.parametrize(
    "imports, qualified, text, needed",
    [
        ("import torch\n", "torch.float32", "torch.float32", ()),
        ("import torch as t\n", "torch.float32", "t.float32", ()),
        ("from torch import nn\n", "torch.nn.Conv2d", "nn.Conv2d", ()),
        ("import torch\nfrom torch import nn\n", "torch.nn.Conv2d", "torch.nn.Conv2d", ()),
        ("from torch.nn import Conv2d\n", "torch.nn.Conv2d", "Conv2d", ()),
        ("import numpy as np\n", "torch.amp.autocast", "torch.amp.autocast", ("torch",)),
        ("import torch as th\n", "torch.utils.checkpoint.checkpoint", "th.utils.checkpoint.checkpoint", ()),
    ],
)
def test_spell_uses_the_files_imports(imports: str, qualified: str, text: str, needed: tuple) -> None:
    spelling = fixes.spell(_names(imports), qualified)
    assert spelling is not None
    assert spelling.text == text and spelling.imports == needed
    assert cst.Module(body=[]).code_for_node(spelling.expression) == text


def test_spell_adds_the_module_that_must_be_loaded() -> None:
    spelling = fixes.spell(_names("import torch\n"), "torch.utils.checkpoint.checkpoint",
                           module="torch.utils.checkpoint")
    assert spelling is not None and spelling.imports == ("torch.utils.checkpoint",)


def test_spell_refuses_a_root_bound_to_something_else() -> None:
    assert fixes.spell(_names("torch = load_fake()\n"), "torch.float32") is None
    assert fixes.spell(_names("from mylib import torch\n"), "torch.float32") is None


def test_rename_call_keeps_arguments_and_returns_the_import() -> None:
    module = cst.parse_module("import numpy\nwith torch_cuda_autocast(enabled,  # keep\n    dtype=d):\n    pass\n")
    call = _first_call(module)
    renamed = fixes.rename_call(call, _names("import numpy\n"), "torch.amp.autocast")
    assert renamed is not None and renamed.imports == ("torch",)
    assert module.deep_replace(call, renamed.call).code == (  # type: ignore[union-attr]
        "import numpy\nwith torch.amp.autocast(enabled,  # keep\n    dtype=d):\n    pass\n"
    )


# -- decorators and statements ----------------------------------------------------------

DECORATE = """\
class Trainer:
    # evaluation
    @staticmethod
    # the loop
    def evaluate(model):  # why
        return model(x)
"""

DECORATED = """\
class Trainer:
    # evaluation
    @staticmethod
    @torch.no_grad()
    # the loop
    def evaluate(model):  # why
        return model(x)
"""


def test_add_decorator_innermost_with_indentation_and_comments() -> None:
    module = cst.parse_module(DECORATE)
    klass = module.body[0]
    assert isinstance(klass, cst.ClassDef)
    function = klass.body.body[0]
    assert isinstance(function, cst.FunctionDef)
    decorated = fixes.add_decorator(function, cst.parse_expression("torch.no_grad()"))
    assert module.deep_replace(function, decorated).code == DECORATED  # type: ignore[union-attr]


LOOP = """\
for batch in loader:
    loss = step(batch)
    # keep the norm in check
    clip(model.parameters(), 1.0)
    if done:
        break
"""


def _site(source: str, text: str) -> "tuple[cst.Module, fixes.StatementSite]":
    module = cst.parse_module(source)
    found: List[fixes.StatementSite] = []

    class _Find(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.stack: List[cst.CSTNode] = []

        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, cst.Call) and module.code_for_node(node.func) == text and not found:
                site = fixes.statement_site(self.stack, node)
                assert site is not None
                found.append(site)
            self.stack.append(node)
            return True

        def on_leave(self, original_node: cst.CSTNode) -> None:
            self.stack.pop()

    module.visit(_Find())
    return module, found[0]


def test_insert_statement_before_goes_below_leading_comments() -> None:
    module, site = _site(LOOP, "clip")
    new = fixes.parse_statement("scaler.unscale_(optimizer)\n", module)
    replacement = fixes.insert_statements(site, [new], after=False)
    assert module.deep_replace(replacement.node, replacement.new_node).code == LOOP.replace(  # type: ignore[union-attr]
        "    clip(", "    scaler.unscale_(optimizer)\n    clip("
    )


def test_insert_statement_after_in_a_nested_block() -> None:
    source = "def f():\n    if x:\n        model.eval()\n        run()\n"
    module, site = _site(source, "model.eval")
    new = fixes.parse_statement("model.train()\n", module)
    replacement = fixes.insert_statements(site, [new], after=True)
    assert module.deep_replace(replacement.node, replacement.new_node).code == (  # type: ignore[union-attr]
        "def f():\n    if x:\n        model.eval()\n        model.train()\n        run()\n"
    )


def test_statement_site_is_none_in_a_one_line_suite() -> None:
    module = cst.parse_module("if x: model.eval(); run()\n")
    statement = module.body[0]
    assert isinstance(statement, cst.If)
    suite = statement.body
    assert isinstance(suite, cst.SimpleStatementSuite)
    expr = suite.body[0]
    assert isinstance(expr, cst.Expr)
    assert fixes.statement_site([module, statement, suite, expr], expr.value) is None


class _InsertTrain(Rule):
    """Test rule: after every `model.eval()` statement, insert `model.train()`."""

    code = "TLT01"
    name = "test-insert"
    summary = "test"

    def visit_Call(self, node: cst.Call) -> None:
        if self.context.module.code_for_node(node) != "model.eval()":
            return
        site = fixes.statement_site(self.parents, node)
        if site is None:
            return
        body = list(site.block.body)
        following = body[body.index(site.statement) + 1:]
        if following and self.context.module.code_for_node(following[0]).strip() == "model.train()":
            return
        new = fixes.parse_statement("model.train()\n", self.context.module)
        replacement = fixes.insert_statements(site, [new], after=True)
        fix = self.replace(replacement.node, replacement.new_node, Applicability.SAFE, "insert",
                           imports=("torch",))
        self.report(node, "eval", fix=fix)


def test_inserted_statement_and_import_through_the_engine() -> None:
    source = "class T:\n    def f(self):\n        model.eval()\n        run()\n\n\ndef g():\n    model.eval()\n"
    result = fix_text(source, "x.py", LintConfig(rules=(_InsertTrain,)))
    assert result.source == (
        "import torch\n"
        "class T:\n    def f(self):\n        model.eval()\n        model.train()\n        run()\n\n\n"
        "def g():\n    model.eval()\n    model.train()\n"
    )
