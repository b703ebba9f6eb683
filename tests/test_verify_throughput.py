"""The verification contracts of TL603 (TF32) and TL604 (cuDNN benchmarking)
catch broken fixes (needs torch): each broken change, fed through
``verify ORIGINAL --against CHANGED --rules CODE``, is not equivalent, and
torchlint's own fix is."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import List

import pytest

with warnings.catch_warnings():  # torch warns at import when NumPy is missing
    warnings.simplefilter("ignore")
    pytest.importorskip("torch")

from torchlint.ruleapi.registry import by_code_or_name  # noqa: E402
from torchlint.lint.settings import Settings  # noqa: E402
from torchlint.ruleapi.verification import program_paths  # noqa: E402
from torchlint.verify.results import EQUIVALENT, NOT_EQUIVALENT, CaseResult  # noqa: E402
from torchlint.verify.session import Session, VerifyOptions, plan_pair, plan_programs  # noqa: E402


@pytest.fixture(scope="module")
def session():
    with Session(VerifyOptions(quick=True, timing=False, timeout=90)) as shared:
        yield shared


def _verify(session: Session, tmp_path: Path, code: str, changes: List[str]) -> List[CaseResult]:
    rule = by_code_or_name(code)
    original = tmp_path / "original.py"
    original.write_text(program_paths(rule)[0].read_text())
    cases = []
    for index, changed in enumerate(changes):
        other = tmp_path / f"changed{index}.py"
        other.write_text(changed)
        cases += plan_pair(original, other, [rule])
    return session.run_cases(cases)


def _fixed(code: str) -> str:
    return plan_programs(by_code_or_name(code), Settings())[0].fixed


def _messages(result: CaseResult) -> str:
    return "\n".join(finding.message for finding in result.findings)


def test_tf32_contract_fails_bfloat16_precision_and_a_fix_that_sets_nothing(session, tmp_path):
    fixed = _fixed("TL603")
    assert 'set_float32_matmul_precision("high")' in fixed
    medium = fixed.replace('set_float32_matmul_precision("high")', 'set_float32_matmul_precision("medium")')
    nothing = fixed.replace('torch.set_float32_matmul_precision("high")', "pass")
    other_lr = fixed.replace("lr=0.01", "lr=0.011")
    results = _verify(session, tmp_path, "TL603", [medium, nothing, other_lr, fixed])
    for name, result in zip(("medium", "nothing", "another learning rate"), results):
        assert result.status == NOT_EQUIVALENT, f"{name}:\n{_messages(result)}"
    assert "`medium`" in _messages(results[0])
    assert "did not allow TF32" in _messages(results[1])
    assert results[3].status == EQUIVALENT, _messages(results[3])


def test_cudnn_benchmark_contract_fails_a_missing_flag_and_a_changed_math_mode(session, tmp_path):
    fixed = _fixed("TL604")
    flag = "torch.backends.cudnn.benchmark = True"
    assert flag in fixed
    missing = fixed.replace(flag, "torch.backends.cudnn.deterministic = True")
    tf32_too = fixed.replace(flag, flag + '\ntorch.set_float32_matmul_precision("high")')
    results = _verify(session, tmp_path, "TL604", [missing, tf32_too, fixed])
    assert results[0].status == NOT_EQUIVALENT and "`cudnn.benchmark` on" in _messages(results[0])
    assert results[1].status == NOT_EQUIVALENT and "another math mode" in _messages(results[1])
    assert results[2].status == EQUIVALENT, _messages(results[2])
