"""The pre-check that skips parsing files which cannot match loses nothing:
findings with and without it are identical over a large real corpus, and each
rule's ``could_match`` is honest on its own."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path
from typing import List

import pytest

from torchlint.lint.engine import LintConfig, lint_source, might_match
from torchlint.ruleapi.precheck import facts_of
from torchlint.ruleapi.registry import all_rules, by_code_or_name

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def package_dir(name: str) -> List[Path]:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(location) for location in spec.submodule_search_locations]


def corpus() -> List[Path]:
    roots = [FIXTURES, *package_dir("libcst"), *package_dir("_pytest")]
    for torch_root in package_dir("torch"):  # installed in CI's main environment
        roots += [torch_root / sub for sub in ("nn", "optim", "utils/data", "ao/nn", "distributed/fsdp")]
    files = sorted({p for root in roots if root.exists() for p in root.rglob("*.py")})
    return files


@pytest.mark.parametrize("stride", [
    30,  # the default run: every fourth fixture and every thirtieth file of the rest
    pytest.param(1, marks=pytest.mark.slow),  # the whole corpus (`pytest -m slow`, run by .ci/run)
])
def test_precheck_changes_no_finding_over_a_large_corpus(stride: int) -> None:
    """Every file of the sample (every fixture with ``stride`` 1, else every
    fourth one, and every ``stride``-th file of the rest: ~150 files in the
    default run, all ~1,000 with ``-m slow``; tests/test_fixtures.py lints
    every fixture with the pre-check on and checks its exact findings): the
    pre-check's verdicts, and a file it rules out entirely lints to nothing.
    Every fixture and every other file of the rest (one libcst parse each):
    the rules the pre-check rules out run on their own and must find nothing
    (the engine runs only the others on that file); every eighth file runs
    the whole lint with and without the pre-check, which must agree."""
    files = corpus()
    if len(files) < 300:
        pytest.skip("corpus too small")
    fixtures = [path for path in files if FIXTURES in path.parents][:: min(stride, 4)]
    files = sorted({*fixtures, *(path for number, path in enumerate(files) if number % stride == 0)})
    rules = all_rules()
    skipped = skipped_by_words = findings = 0
    for number, path in enumerate(files):
        source = path.read_text(encoding="utf-8", errors="replace")
        facts = facts_of(source)
        ruled_out = tuple(rule for rule in rules if facts is not None and not rule.could_match(facts, {}))
        skipped += len(ruled_out) == len(rules)
        skipped_by_words += not might_match(source, rules)
        if facts is not None and len(ruled_out) == len(rules):  # the engine skips the file: no parse
            assert lint_source(source, str(path), LintConfig(rules=rules, precheck=True)) == [], path
        if number % 2 and facts is not None and FIXTURES not in path.parents:
            continue
        if facts is None or number % 8 == 0:
            full = lint_source(source, str(path), LintConfig(rules=rules, precheck=False))
            assert lint_source(source, str(path), LintConfig(rules=rules, precheck=True)) == full, path
            findings += len(full)
            codes = Counter(d.code for d in full)
            assert not [rule.code for rule in ruled_out if codes[rule.code]], path
        elif ruled_out:
            assert lint_source(source, str(path), LintConfig(rules=ruled_out, precheck=False)) == [], path
    assert findings > 0, "the corpus must contain findings for the comparison to mean anything"
    assert skipped > 0, "the pre-check must skip some files"
    # The ast pre-check is sharper than the trigger words it replaced.
    assert skipped > skipped_by_words, (skipped, skipped_by_words)


def test_precheck_resolves_imports_not_words() -> None:
    """Trigger words match text; the pre-check needs the torch import the rule resolves through."""
    data_parallel = by_code_or_name("TL501")
    assert data_parallel is not None
    unrelated = facts_of("class DataParallel: pass\nDataParallel()\n")
    aliased = facts_of("from torch.nn import DataParallel as DP\nDP(net)\n")
    assert unrelated is not None and aliased is not None
    assert not data_parallel.could_match(unrelated, {})
    assert data_parallel.could_match(aliased, {})
    assert lint_source("from torch.nn import DataParallel as DP\nDP(net)\n", "a.py",
                       LintConfig(rules=(data_parallel,)))


def test_precheck_reads_a_rules_options() -> None:
    """A configured function pattern widens what TL301 looks at; the pre-check follows it."""
    rule = by_code_or_name("TL301")
    assert rule is not None
    source = "import torch\n\ndef score(model, loader):\n    return [model(x) for x in loader]\n"
    facts = facts_of(source)
    assert facts is not None
    assert not rule.could_match(facts, {})
    assert rule.could_match(facts, {"function-pattern": "^score$"})


def test_files_cpython_cannot_parse_still_reach_libcst() -> None:
    """A syntax error is reported (TL000) whatever the pre-check would say."""
    diagnostics = lint_source("def f(:\n", "bad.py", LintConfig(rules=all_rules()))
    assert [d.code for d in diagnostics] == ["TL000"]


def test_a_dotted_name_is_reached_through_an_attribute_or_an_import_not_a_bare_name() -> None:
    """TL703's table entry ``torch.range`` is reached as an attribute, an
    imported name or through a star import (``reaches`` implies ``mentions``);
    the builtin ``range`` does not reach it, so a file that only loops over
    ``range(...)`` is not parsed for it."""
    rule = by_code_or_name("TL703")
    assert rule is not None
    reached = [
        "import torch\nx = torch.range(0, 3)\n",
        "from torch import range as r\nx = r(0, 3)\n",
        "import torch\nfrom torch import *\nx = range(0, 3)\n",
    ]
    for source in reached:
        facts = facts_of(source)
        assert facts is not None and rule.could_match(facts, {}), source
    builtin = facts_of("import torch\nfor i in range(3):\n    torch.zeros(i)\n")
    assert builtin is not None and builtin.mentions(["range"]) and not builtin.reaches(["range"])
    assert not rule.could_match(builtin, {})
    unnamed = facts_of("import torch\nfrom torch import *\nx = zeros(3)\n")  # a star binds only what is written
    assert unnamed is not None and not unnamed.reaches(["range"])


def test_a_star_import_of_another_module_may_bring_torch() -> None:
    from torchlint.ruleapi.precheck import facts_of

    star = facts_of("from models import *\nstate = torch.load(p)\n")
    assert star is not None and star.imports_torch
    plain = facts_of("import numpy\nstate = torch.load(p)\n")
    assert plain is not None and not plain.imports_torch


def test_python_nodes_are_ast_walks_nodes_in_its_order() -> None:
    import ast

    from torchlint.source.tree import python_nodes

    for path in sorted(FIXTURES.rglob("*.py"))[:40]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert python_nodes(tree) == list(ast.walk(tree)), path
