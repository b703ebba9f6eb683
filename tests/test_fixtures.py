"""Every rule fixture: exact findings, exact fixed text, idempotent fixes."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from torchlint.ruleapi.registry import all_rules
from torchlint.ruleapi.verification import read_measured

from fixture_support import Fixture, all_fixtures, fix_fixture, lint_fixture

FIXTURES = all_fixtures()


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f"{f.code}/{f.name}")
def test_findings_match_expect_comments(fixture: Fixture) -> None:
    diagnostics = lint_fixture(fixture, fixture.source)
    found = Counter((d.start.line, d.code) for d in diagnostics)
    assert found == fixture.expected()


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f"{f.code}/{f.name}")
def test_fixed_output_is_exact_and_stable(fixture: Fixture) -> None:
    result = fix_fixture(fixture, fixture.source)
    expected = fixture.expected_fixed()
    if expected is None:
        assert not result.changed, "a fixture whose findings get fixes needs a .fixed.py"
        return
    assert result.source == expected
    assert result.converged and not result.dropped
    again = fix_fixture(fixture, result.source)
    assert again.source == result.source
    # Nothing that was fixed is still reported.
    assert not any(d.fixable(True) for d in again.remaining)


def test_every_rule_has_positive_and_fixed_fixtures() -> None:
    by_code = {}
    for fixture in FIXTURES:
        by_code.setdefault(fixture.code, []).append(fixture)
    for rule in all_rules():
        fixtures = by_code.get(rule.code, [])
        assert any(f.expected() for f in fixtures), f"{rule.code} has no positive fixture"
        assert any(not f.expected() or len(f.expected()) < len(f.source.splitlines()) for f in fixtures)
        if rule.fix_availability.value != "none":
            assert any(f.expected_fixed() is not None for f in fixtures), f"{rule.code}: no .fixed.py"


# The five guides, by title and publisher, as rule docs cite them.
GUIDE_TITLES = (
    "GPU Computing Guide",  # Ohio Supercomputer Center
    "Chapter 16: GPU Acceleration & Distributed Training",  # an online PyTorch training book
    "DGX cluster guidelines",  # a GPU cluster's user guide
    "Single-GPU Training",  # Princeton Research Computing
    "Using GPUs with Python",  # HPC2N/UPPMAX/LUNARC/NSC course
)


def test_every_rule_doc_has_ruff_sections() -> None:
    for rule in all_rules():
        sections = rule.doc_sections()
        for heading in ("What it does", "Why is this bad?", "Example", "Fix safety"):
            assert heading in sections and sections[heading], f"{rule.code} lacks '{heading}'"
        assert "Use instead" in sections["Example"], f"{rule.code}: Example lacks 'Use instead'"
        # A rule the GPU guides discuss cites them ("Source guide"); a rule
        # they do not discuss cites PyTorch's (or torchvision's) documentation
        # or release notes ("Source").
        assert ("Source guide" in sections) != ("Source" in sections), f"{rule.code}: one source section"
        if "Source" in sections:
            source = " ".join(sections["Source"].split())
            assert "PyTorch" in source or "torchvision" in source, f"{rule.code}: 'Source' cites no documentation"
            assert not re.search(r"\d{3}_[0-9a-f]{16}\.txt", source), f"{rule.code} cites a guide by file name"
            continue
        guide = " ".join(sections["Source guide"].split())
        assert any(title in guide for title in GUIDE_TITLES), f"{rule.code} cites no guide by title"
        assert not re.search(r"\d{3}_[0-9a-f]{16}\.txt", guide), f"{rule.code} cites a guide by file name"


def test_fixable_rule_docs_show_their_contract_and_any_recorded_row() -> None:
    for rule in all_rules():
        page = rule.documentation()
        if rule.fix_availability.value == "none":
            assert "## Verification" not in page
            continue
        assert "## Verification" in page, rule.code
        assert rule.verification is not None and rule.verification.contract.promise in page
        assert ("Measured (" in page) == (read_measured(rule) is not None), rule.code
