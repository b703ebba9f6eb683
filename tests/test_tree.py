"""Tree helpers shared by the rules."""

from __future__ import annotations

import libcst as cst

from torchlint.source.tree import walk_body


def test_walk_body_stays_out_of_nested_functions_classes_and_lambdas() -> None:
    module = cst.parse_module(
        "a(1)\n"
        "def f():\n    b()\n"
        "class C:\n    c()\n"
        "g = lambda: d()\n"
        "for x in y:\n    e(x)\n"
    )
    called = [n.func.value for n in walk_body(module) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)]
    assert called == ["a", "e"]  # in source order; b, c and d run elsewhere
    function = module.body[1]
    assert isinstance(function, cst.FunctionDef)
    inside = [n.func.value for n in walk_body(function.body) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)]
    assert inside == ["b"]
