"""Scopes and bindings follow Python's rules; names resolve where they are used."""

from __future__ import annotations

import textwrap
from typing import List, Tuple

import libcst as cst

from torchlint.analysis.scopes import Binding, BindingKind, ScopeKind, Scopes
from torchlint.lint.engine import LintConfig, lint_source
from torchlint.ruleapi.registry import by_code_or_name


def build(source: str) -> Tuple[cst.Module, Scopes]:
    module = cst.parse_module(textwrap.dedent(source))
    return module, Scopes(module)


def names_called(module: cst.Module, name: str) -> List[cst.Name]:
    """Every ``Name`` node spelled ``name``, in source order."""
    found: List[cst.Name] = []

    class Collect(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if node.value == name:
                found.append(node)

    module.visit(Collect())
    return found


def kinds(bindings: Tuple[Binding, ...]) -> List[BindingKind]:
    return [b.kind for b in bindings]


def test_import_inside_function_does_not_leak_into_module() -> None:
    module, scopes = build("""
        def setup():
            from torch import nn
            return nn
        x = nn
    """)
    inside, outside = names_called(module, "nn")[1:]
    assert [b.imported for b in scopes.resolve(inside)] == ["torch.nn"]
    assert scopes.resolve(outside) == ()


def test_local_assignment_hides_module_import_in_whole_function() -> None:
    module, scopes = build("""
        import torch
        def f(fake):
            y = torch.zeros(3)
            torch = fake
    """)
    use = names_called(module, "torch")[1]
    assert kinds(scopes.resolve(use)) == [BindingKind.ASSIGN]


def test_class_scope_is_invisible_in_methods() -> None:
    module, scopes = build("""
        import torch
        class A:
            torch = None
            x = torch
            def m(self):
                return torch
    """)
    _, _, in_class, in_method = names_called(module, "torch")
    assert kinds(scopes.resolve(in_class)) == [BindingKind.ASSIGN]
    assert kinds(scopes.resolve(in_method)) == [BindingKind.IMPORT]


def test_every_binding_form_is_recorded_with_its_value() -> None:
    module, scopes = build("""
        import os.path
        from torch import nn as tnn
        a, (b, *c) = 1, (2, 3)
        d: int = 4
        d += 1
        for e, f in pairs: pass
        with open(p) as g: pass
        try: pass
        except OSError as h: pass
        if (i := 5): pass
        del a
        def fn(j: int = 6, *k, l=7, **m): pass
        class K: pass
        lam = lambda n: n
    """)
    top = scopes.module_scope.bindings
    assert top["os"][0].imported == "os"
    assert top["tnn"][0].imported == "torch.nn"
    assert [b.kind for b in top["a"]] == [BindingKind.ASSIGN, BindingKind.DEL]
    value = top["a"][0].value
    assert isinstance(value, cst.Integer) and value.value == "1"
    assert top["b"][0].value is None and top["b"][0].source is not None
    assert top["c"][0].kind is BindingKind.ASSIGN
    assert [b.kind for b in top["d"]] == [BindingKind.ANN_ASSIGN, BindingKind.AUG_ASSIGN]
    assert isinstance(top["d"][0].annotation, cst.Name)
    assert top["e"][0].kind is BindingKind.FOR and isinstance(top["e"][0].source, cst.Name)
    assert top["g"][0].kind is BindingKind.WITH
    assert top["h"][0].kind is BindingKind.EXCEPT
    assert top["i"][0].kind is BindingKind.WALRUS
    assert top["fn"][0].kind is BindingKind.FUNCTION
    assert top["K"][0].kind is BindingKind.CLASS
    fn_scope = scopes.module_scope.children[0]
    assert fn_scope.kind is ScopeKind.FUNCTION
    assert sorted(fn_scope.bindings) == ["j", "k", "l", "m"]
    j = fn_scope.bindings["j"][0]
    assert isinstance(j.annotation, cst.Name) and isinstance(j.value, cst.Integer)
    lam_scope = scopes.module_scope.children[2]
    assert lam_scope.kind is ScopeKind.LAMBDA and list(lam_scope.bindings) == ["n"]


def test_comprehension_variable_stays_inside_but_walrus_escapes() -> None:
    module, scopes = build("""
        ys = [(last := x) for x in xs]
        x
    """)
    top = scopes.module_scope
    assert "x" not in top.bindings
    assert top.bindings["last"][0].kind is BindingKind.WALRUS
    comp = top.children[0]
    assert comp.kind is ScopeKind.COMPREHENSION and "x" in comp.bindings
    assert scopes.resolve(names_called(module, "x")[-1]) == ()


def test_first_comprehension_iterable_is_evaluated_outside() -> None:
    module, scopes = build("""
        def f(xs):
            return [xs for xs in xs]
    """)
    iterable = names_called(module, "xs")[-1]
    assert kinds(scopes.resolve(iterable)) == [BindingKind.PARAMETER]


def test_global_and_nonlocal_send_bindings_to_the_named_scope() -> None:
    module, scopes = build("""
        def outer():
            count = 0
            def inner():
                nonlocal count
                count = 1
            def setter():
                global model
                model = 2
    """)
    outer = scopes.module_scope.children[0]
    assert len(outer.bindings["count"]) == 2
    assert scopes.module_scope.bindings["model"][0].kind is BindingKind.ASSIGN
    setter = outer.children[1]
    assert "model" not in setter.bindings


def test_defaults_and_decorators_resolve_in_the_enclosing_scope() -> None:
    module, scopes = build("""
        import torch
        def f(torch=torch):
            return torch
    """)
    default, body = names_called(module, "torch")[2:]
    assert kinds(scopes.resolve(default)) == [BindingKind.IMPORT]
    assert kinds(scopes.resolve(body)) == [BindingKind.PARAMETER]


def lint(source: str, code: str) -> List[str]:
    """The codes one rule (by code, whatever its module is called) reports."""
    rule = by_code_or_name(code)
    assert rule is not None
    config = LintConfig(rules=(rule,))
    return [d.code for d in lint_source(textwrap.dedent(source), "x.py", config)]


def test_tl501_no_longer_sees_an_import_from_inside_a_function() -> None:
    source = """
        def setup():
            from torch import nn
            return nn

        class nn:
            DataParallel = list

        model = nn.DataParallel([1])
    """
    assert lint(source, "TL501") == []


def test_tl101_local_rebinding_of_torch_hides_torch() -> None:
    source = """
        import torch

        def f(fake):
            torch = fake
            return torch.zeros(3).cuda()

        def g():
            return torch.zeros(3).cuda()
    """
    assert lint(source, "TL101") == ["TL101"]


def test_references_count_reads_that_resolve_to_the_binding() -> None:
    module, scopes = build("""
        conv = make()
        def f():
            conv = other()
            return conv
        def g():
            return conv
        print(conv)
    """)
    top = scopes.module_scope
    reads = scopes.references(top, "conv")
    assert len(reads) == 2  # g's and print's; f reads its own local
    f_scope = top.children[0]
    assert len(scopes.references(f_scope, "conv")) == 1


def test_binding_knows_its_statement() -> None:
    module, scopes = build("""
        x = 1; y = 2
        for z in range(3):
            pass
    """)
    top = scopes.module_scope.bindings
    assert top["x"][0].statement is top["y"][0].statement is module.body[0]
    assert top["z"][0].statement is module.body[1]
