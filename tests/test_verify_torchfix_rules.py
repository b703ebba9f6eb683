"""`torchlint verify` on the programs of TL607, TL705 and TL707 (needs torch):
each verifies as equivalent after torchlint's own fix, and TL607's comparison
catches a fix that loses accuracy or changes values."""

from __future__ import annotations

import warnings

import pytest

with warnings.catch_warnings():  # torch warns at import when NumPy is missing
    warnings.simplefilter("ignore")
    pytest.importorskip("torch")

from torchlint.ruleapi.registry import by_code_or_name  # noqa: E402
from torchlint.lint.settings import Settings  # noqa: E402
from torchlint.ruleapi.verification import program_paths  # noqa: E402
from torchlint.verify.results import EQUIVALENT, FAIL, NOT_EQUIVALENT  # noqa: E402
from torchlint.verify.session import Session, VerifyOptions, plan_programs  # noqa: E402

RULES = ("TL607", "TL705", "TL707")


@pytest.fixture(scope="module")
def session():
    with Session(VerifyOptions(quick=True, timing=False, timeout=60)) as shared:
        yield shared


def _messages(result, severity=None):
    return "\n".join(f.message for f in result.findings if severity is None or f.severity == severity)


def test_the_shipped_programs_verify_equivalent_after_torchlints_fix(session):
    cases = [case for code in RULES for case in plan_programs(by_code_or_name(code), Settings())]
    assert {case.rule for case in cases} == set(RULES)
    for case in cases:
        assert not case.error and case.fixes > 0 and case.fixed != case.original, case.rule
    results = {result.rule: result for result in session.run_cases(cases)}
    for code in RULES:
        assert results[code].status == EQUIVALENT, f"{code}:\n{_messages(results[code])}"
    tl607 = _messages(results["TL607"])
    assert "closer to the float64 reference" in tl607 and "infinite value(s)" in tl607


def _tl607_fixed() -> str:
    return plan_programs(by_code_or_name("TL607"), Settings())[0].fixed


def test_a_log1p_fix_that_loses_accuracy_is_caught(session):
    original = program_paths(by_code_or_name("TL607"))[0].read_text()
    fixed = _tl607_fixed()
    assert "torch.log1p(x)" in fixed
    # The input rounded to half precision on the way: farther from the exact result than the
    # original's log(1 + x), judged against the original run in float64.  (Going back to the
    # cancelling form itself, `torch.log((1 + x).float())`, is the original computation: not worse.)
    broken = fixed.replace("torch.log1p(x)", "torch.log1p(x.half().float())", 1)
    result = session.compare_sources("TL607", original, broken)
    assert result.status == NOT_EQUIVALENT
    assert "less accurate than the original, against a float64 reference" in _messages(result, FAIL)


def test_a_logsumexp_fix_with_the_wrong_dimension_is_caught(session):
    original = program_paths(by_code_or_name("TL607"))[0].read_text()
    fixed = _tl607_fixed()
    assert "torch.logsumexp(x, dim=1)" in fixed
    broken = fixed.replace("torch.logsumexp(x, dim=1)", "torch.logsumexp(x, dim=1) + 1e-3", 1)
    result = session.compare_sources("TL607", original, broken)
    assert result.status == NOT_EQUIVALENT
    assert "less accurate than the original, against a float64 reference: `lse_values`" in _messages(result, FAIL)
