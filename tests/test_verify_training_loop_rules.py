"""`torchlint verify` on the programs of TL306, TL502 and TL503 (needs torch):
each shows its bug and its cure after torchlint's own fix, and each
comparison catches a fix that is wrong in the way such a fix could be."""

from __future__ import annotations

import warnings

import pytest

with warnings.catch_warnings():  # torch warns at import when NumPy is missing
    warnings.simplefilter("ignore")
    pytest.importorskip("torch")

from torchlint.ruleapi.registry import by_code_or_name  # noqa: E402
from torchlint.lint.settings import Settings  # noqa: E402
from torchlint.ruleapi.verification import program_paths  # noqa: E402
from torchlint.verify.results import FAIL, INTENDED, INTENDED_CHANGE, NOT_EQUIVALENT  # noqa: E402
from torchlint.verify.session import Session, VerifyOptions, plan_programs  # noqa: E402

RULES = ("TL306", "TL502", "TL503")


@pytest.fixture(scope="module")
def session():
    with Session(VerifyOptions(quick=True, timing=False, timeout=120)) as shared:
        yield shared


def _messages(result, severity=None):
    return "\n".join(f.message for f in result.findings if severity is None or f.severity == severity)


def _original(code: str) -> str:
    return program_paths(by_code_or_name(code))[0].read_text()


def test_the_shipped_programs_show_the_bug_and_the_cure_after_torchlints_fix(session):
    cases = [case for code in RULES for case in plan_programs(by_code_or_name(code), Settings())]
    assert {case.rule for case in cases} == set(RULES)
    for case in cases:
        assert not case.error and case.fixes > 0 and case.fixed != case.original, case.rule
    results = {result.rule: result for result in session.run_cases(cases)}
    # These fixes change behaviour on purpose: their verdict says so and exits 0 (issue 24, item 3).
    for code in RULES:
        assert results[code].status == INTENDED_CHANGE, f"{code}:\n{_messages(results[code])}"
        assert not results[code].failed
    assert "ran with modules in eval mode before the change and in train mode after it" in _messages(
        results["TL306"], INTENDED)
    assert "after the change each iteration has an epoch of its own" in _messages(results["TL502"], INTENDED)
    assert "`--local-rank=N` (torch >= 2.0's launcher) was rejected before" in _messages(results["TL503"], INTENDED)


def test_train_mode_restored_before_the_evaluation_is_caught(session):
    original = _original("TL306")
    broken = original.replace("    model.eval()\n", "    model.eval()\n    model.train()\n", 1)
    assert broken != original
    result = session.compare_sources("TL306", original, broken)
    assert result.status == NOT_EQUIVALENT
    assert "a module call that no backward pass went through (an evaluation) ran in another mode" in _messages(
        result, FAIL)


def test_a_constant_epoch_is_caught(session):
    original = _original("TL502")
    broken = original.replace("for epoch in range(EPOCHS):\n", "for epoch in range(EPOCHS):\n    sampler.set_epoch(0)\n", 1)
    assert broken != original
    result = session.compare_sources("TL502", original, broken)
    assert result.status == NOT_EQUIVALENT
    assert "still repeats an epoch (epochs [0, 0, 0])" in _messages(result, FAIL)


def test_renaming_the_option_instead_of_adding_an_alias_is_caught(session):
    original = _original("TL503")
    broken = original.replace('"--local_rank", type=int', '"--local-rank", type=int', 1)
    assert broken != original
    result = session.compare_sources("TL503", original, broken)
    assert result.status == NOT_EQUIVALENT
    assert "`--local_rank=N` sets `None` after the change, `local_rank` before" in _messages(result, FAIL)
