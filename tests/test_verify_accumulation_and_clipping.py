"""`torchlint verify` on TL305's and TL601's programs (needs torch): the
shipped program passes after torchlint's own fix, and each comparison fails
a fix that is wrong in the way such a fix could be."""

from __future__ import annotations

import warnings

import pytest

with warnings.catch_warnings():  # torch warns at import when NumPy is missing
    warnings.simplefilter("ignore")
    pytest.importorskip("torch")

from torchlint.ruleapi.registry import by_code_or_name  # noqa: E402
from torchlint.lint.settings import Settings  # noqa: E402
from torchlint.ruleapi.verification import program_paths  # noqa: E402
from torchlint.verify.results import EQUIVALENT, INTENDED_CHANGE, NOT_EQUIVALENT  # noqa: E402
from torchlint.verify.session import Session, VerifyOptions, plan_programs  # noqa: E402

ACCUMULATE = "        total_loss += loss\n"
CLIP = "    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)\n"


@pytest.fixture(scope="module")
def session():
    with Session(VerifyOptions(quick=True, timing=False, timeout=120)) as shared:
        yield shared


def _messages(result):
    return "\n".join(f.message for f in result.findings)


def _original(code: str) -> str:
    return program_paths(by_code_or_name(code))[0].read_text()


def test_the_shipped_programs_pass_after_torchlints_fix(session):
    cases = [case for code in ("TL305", "TL601") for case in plan_programs(by_code_or_name(code), Settings())]
    for case in cases:
        assert not case.error and case.fixes > 0 and case.fixed != case.original, case.rule
    results = {result.rule: result for result in session.run_cases(cases)}
    # Observed, not asked: the programs expose nothing for their rule (issue 24).
    assert results["TL305"].status == EQUIVALENT, _messages(results["TL305"])
    assert "kept a growing autograd graph" in _messages(results["TL305"])
    assert "after it nothing grows" in _messages(results["TL305"])
    # The CPU scaler is enabled: the fix changes training, on purpose and only as promised.
    assert results["TL601"].status == INTENDED_CHANGE, _messages(results["TL601"])
    assert "still multiplied by the loss scale before the change" in _messages(results["TL601"])


def test_a_total_that_still_holds_the_graph_is_caught(session):
    original = _original("TL305")
    assert ACCUMULATE in original
    broken = original.replace(ACCUMULATE, "        total_loss += loss * 1\n", 1)  # a new node, graph kept
    result = session.compare_sources("TL305", original, broken)
    assert result.status == NOT_EQUIVALENT, _messages(result)
    assert "still keeps a graph that grows every step" in _messages(result)


def test_a_total_that_changes_value_is_caught(session):
    original = _original("TL305")
    broken = original.replace(ACCUMULATE, "        total_loss += loss.detach() * 2\n", 1)
    result = session.compare_sources("TL305", original, broken)
    assert result.status == NOT_EQUIVALENT, _messages(result)


def test_unscaling_after_the_clip_is_caught(session):
    original = _original("TL601")
    assert CLIP in original
    broken = original.replace(CLIP, CLIP + "    scaler.unscale_(optimizer)\n", 1)  # too late: clipped while scaled
    result = session.compare_sources("TL601", original, broken)
    assert result.status == NOT_EQUIVALENT, _messages(result)
    assert "still saw gradients multiplied by the loss scale" in _messages(result)
