"""Engine and fixer behaviour, with small rules defined here."""

from __future__ import annotations

import libcst as cst

from torchlint.lint.engine import LintConfig, lint_source
from torchlint.lint.fixer import apply_edits, fix_text
from torchlint.model import Applicability, Edit
from torchlint.ruleapi.rule import FixAvailability, Rule


class RenameFoo(Rule):
    """Renames calls of ``foo`` to ``bar``; nested calls overlap."""

    code = "TL901"
    name = "rename-foo"
    summary = "test rule"
    fix_availability = FixAvailability.ALWAYS

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "foo":
            new = node.with_changes(func=cst.Name("bar"), args=[a for a in node.args])
            self.report(node, "foo", fix=self.replace(node, new, Applicability.SAFE, "rename"))


class BreakIt(Rule):
    """A buggy fix that leaves the file unparsable."""

    code = "TL902"
    name = "break-it"
    summary = "test rule"
    fix_availability = FixAvailability.ALWAYS

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "broken":
            new = node.with_changes(func=cst.Name("def"))
            self.report(node, "broken", fix=self.replace(node, new, Applicability.SAFE, "break"))


class NeedsTorch(Rule):
    """Decorates functions named ``run`` with ``@torch.no_grad()``."""

    code = "TL903"
    name = "needs-torch"
    summary = "test rule"
    fix_availability = FixAvailability.ALWAYS

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value == "run" and not node.decorators:
            decorator = cst.Decorator(cst.parse_expression("torch.no_grad()"))
            new = node.with_changes(decorators=[decorator])
            self.report(node.name, "run", fix=self.replace(node, new, Applicability.UNSAFE, "decorate", imports=("torch",)))


class Explodes(Rule):
    code = "TL904"
    name = "explodes"
    summary = "test rule"

    def visit_Call(self, node: cst.Call) -> None:
        raise ValueError("boom")


def config(*rules: type) -> LintConfig:
    return LintConfig(rules=tuple(rules), precheck=False)  # type: ignore[arg-type]


def test_nested_fixes_converge_over_passes() -> None:
    result = fix_text("x = foo(foo(foo(1)))\n", "a.py", config(RenameFoo))
    assert result.source == "x = bar(bar(bar(1)))\n"
    assert len(result.applied) == 3 and result.converged and not result.remaining


def test_fix_edits_are_minimal() -> None:
    [diagnostic] = lint_source("value = foo(1, 2)\n", "a.py", config(RenameFoo))
    assert diagnostic.fix is not None
    assert diagnostic.fix.edits == (Edit(8, 11, "bar"),)
    assert (diagnostic.start.line, diagnostic.start.column, diagnostic.end.column) == (1, 9, 18)


def test_fix_that_breaks_parsing_is_dropped_and_others_applied() -> None:
    result = fix_text("a = broken(1)\nb = foo(2)\n", "a.py", config(RenameFoo, BreakIt))
    assert result.source == "a = broken(1)\nb = bar(2)\n"
    assert [d.code for d in result.dropped] == ["TL902"]
    assert [d.code for d in result.remaining] == ["TL902"]


def test_unsafe_fixes_need_opt_in_and_imports_are_added_after_docstring() -> None:
    source = '"""Doc."""\nfrom __future__ import annotations\n\nimport os\n\n\ndef run():\n    pass\n'
    assert fix_text(source, "a.py", config(NeedsTorch)).source == source
    fixed = fix_text(source, "a.py", config(NeedsTorch), unsafe=True).source
    assert fixed == (
        '"""Doc."""\nfrom __future__ import annotations\n\nimport torch\nimport os\n\n\n'
        "@torch.no_grad()\ndef run():\n    pass\n"
    )


def test_fix_in_indented_method_keeps_indentation() -> None:
    source = "class A:\n    def run(self):\n        return 1\n"
    fixed = fix_text(source, "a.py", config(NeedsTorch), unsafe=True).source
    assert fixed == "import torch\nclass A:\n    @torch.no_grad()\n    def run(self):\n        return 1\n"


def test_crlf_is_kept_by_fixes() -> None:
    fixed = fix_text("x = foo(1)\r\ny = 2\r\n", "a.py", config(RenameFoo)).source
    assert fixed == "x = bar(1)\r\ny = 2\r\n"


def test_syntax_error_is_a_tl000_diagnostic() -> None:
    [diagnostic] = lint_source("def f(:\n    pass\n", "bad.py", config(RenameFoo))
    assert diagnostic.code == "TL000" and diagnostic.path == "bad.py"
    assert (diagnostic.start.line, diagnostic.start.column) == (1, 7)  # where CPython puts it
    assert "\n" not in diagnostic.message
    assert diagnostic.message.startswith("SyntaxError:")


def test_deep_nesting_is_a_diagnostic_not_a_crash() -> None:
    # libcst's native parser overflows its stack on this; CPython refuses it.
    source = "x = " + "(" * 3000 + "1" + ")" * 3000 + "\n"
    [diagnostic] = lint_source(source, "deep.py", config(RenameFoo))
    assert diagnostic.code == "TL000" and "nested" in diagnostic.message
    chain = "x = " + "-" * 5000 + "1\n"
    [diagnostic] = lint_source(chain, "chain.py", config(RenameFoo))
    assert diagnostic.code == "TL000" and "nested too deeply" in diagnostic.message


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    source = "x = '" + "(" * 300 + "'\ny = foo(1)\n"
    assert [d.code for d in lint_source(source, "s.py", config(RenameFoo))] == ["TL901"]


def test_precheck_skips_files_without_trigger_words() -> None:
    class Triggered(RenameFoo):
        trigger_words = ("foo",)

    assert lint_source("x = bar(1)\n", "a.py", LintConfig(rules=(Triggered,))) == []
    assert len(lint_source("x = foo(1)\n", "a.py", LintConfig(rules=(Triggered,)))) == 1


def test_apply_edits_handles_insertions_and_replacements() -> None:
    assert apply_edits("abcdef", [Edit(0, 0, "X"), Edit(2, 4, "Y"), Edit(6, 6, "Z")]) == "XabYefZ"


def test_the_precheck_runs_only_the_rules_that_could_report_on_the_file() -> None:
    """A rule the pre-check rules out for a file is not run on it even when
    another rule makes libcst parse the file (it would report here, so a run
    of it would show)."""

    class ReportsEveryCall(RenameFoo):
        code = "TL905"
        name = "reports-every-call"
        trigger_words = ("never-in-this-file",)

        def visit_Call(self, node: cst.Call) -> None:
            self.report(node, "a call")

    class Triggered(RenameFoo):
        trigger_words = ("foo",)

    source = "x = foo(1)\n"
    both = (Triggered, ReportsEveryCall)
    assert [d.code for d in lint_source(source, "a.py", LintConfig(rules=both))] == ["TL901"]  # type: ignore[arg-type]
    unchecked = lint_source(source, "a.py", LintConfig(rules=both, precheck=False))  # type: ignore[arg-type]
    assert sorted(d.code for d in unchecked) == ["TL901", "TL905"]
    # The fixer's later passes lint the fixed text the same way.
    fixed = fix_text("x = foo(1)\ny = foo(2)\n", "a.py", LintConfig(rules=both))  # type: ignore[arg-type]
    assert fixed.source == "x = bar(1)\ny = bar(2)\n" and fixed.remaining == ()
    fixed = fix_text("x = foo(1)\ny = foo(2)\n", "a.py", LintConfig(rules=both, precheck=False))  # type: ignore[arg-type]
    assert [d.code for d in fixed.remaining] == ["TL905", "TL905"]


def test_positions_are_computed_when_first_read_not_when_taken() -> None:
    """``facts.positions`` costs a rendering of the module; a rule takes it in
    case it reports, so taking it must not render anything."""
    from torchlint.analysis import Facts

    facts = Facts.of_module(cst.parse_module("x = foo(1)\n"))
    positions = facts.positions
    assert "located" not in facts.__dict__
    call = facts.nodes_of(cst.Call)[0]
    assert positions[call].start.line == 1 and positions[call].start.column == 4
    assert "located" in facts.__dict__


def test_names_mentioned_come_from_the_precheck_tree_when_there_is_one() -> None:
    """The pre-check's CPython tree serves the names-mentioned fact (no second
    ``ast.parse``); both ways give the same names."""
    import ast

    from torchlint.analysis import Facts
    from torchlint.analysis.mentions import all_names_used

    source = "import torch\nimport torch.backends.cudnn as cudnn\ncudnn.benchmark = True\ny = torch.compile(m)\n"
    module = cst.parse_module(source)
    with_tree = Facts.of_module(module, source=source)
    with_tree.python_tree = ast.parse(source)
    expected = {"torch", "torch.backends.cudnn", "torch.backends.cudnn.benchmark", "torch.compile"}
    assert with_tree.names_mentioned == all_names_used(source) == expected
    other = ast.parse("import numpy\nnumpy.zeros(3)\n")
    told = Facts.of_module(module, source=source)
    told.python_tree = other  # the tree is what is read when given
    assert told.names_mentioned == {"numpy", "numpy.zeros"}
