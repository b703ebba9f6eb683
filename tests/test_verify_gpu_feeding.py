"""The verification programs of TL102, TL202, TL203 and TL505 (needs torch):
the shipped fix verifies, and a deliberately broken one fed through
``verify ORIGINAL --against CHANGED --rules CODE`` does not."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Tuple

import pytest

with warnings.catch_warnings():  # torch warns at import when NumPy is missing
    warnings.simplefilter("ignore")
    torch = pytest.importorskip("torch")

from torchlint.ruleapi.registry import by_code_or_name  # noqa: E402
from torchlint.lint.settings import Settings  # noqa: E402
from torchlint.ruleapi.verification import program_paths  # noqa: E402
from torchlint.verify.results import EQUIVALENT, INTENDED_CHANGE, NOT_EQUIVALENT  # noqa: E402
from torchlint.verify.session import Session, VerifyOptions, plan_pair, plan_programs  # noqa: E402


@pytest.fixture(scope="module")
def session():
    with Session(VerifyOptions(quick=True, timing=False, timeout=90)) as shared:
        yield shared


def _shipped(code: str) -> Tuple[str, str]:
    rule = by_code_or_name(code)
    return program_paths(rule)[0].read_text(), plan_programs(rule, Settings())[0].fixed


BROKEN = {
    # the targets shifted while copying: the model learns something else
    "TL102": ("y = y.to(device, non_blocking=True)", "y = (y.to(device, non_blocking=True) + 1) % 10"),
    # shuffled batches: the per-image sums come in another order
    "TL202": ("shuffle=False, pin_memory=True", "shuffle=True, pin_memory=True"),
    # shuffling switched off on the way: the first epoch is no longer the same
    "TL203": ("shuffle=True", "shuffle=False"),
    # a "fix" that still maps nothing: the checkpoint still cannot be loaded
    "TL505": ('torch.load(PATH, map_location="cpu")', "torch.load(PATH, map_location=None)"),
}


# TL203's program starts worker processes epoch after epoch (about 20 s here): slow run.
@pytest.mark.parametrize(
    "code", [pytest.param(code, marks=pytest.mark.slow) if code == "TL203" else code for code in sorted(BROKEN)]
)
def test_the_fix_verifies_and_a_broken_one_is_caught(session, tmp_path: Path, code: str) -> None:
    original, fixed = _shipped(code)
    before, after = BROKEN[code]
    assert before in fixed, f"{code}: the fixed program changed; update the broken edit"
    (tmp_path / "original.py").write_text(original)
    (tmp_path / "fixed.py").write_text(fixed)
    (tmp_path / "broken.py").write_text(fixed.replace(before, after))
    rule = [by_code_or_name(code)]
    cases = plan_pair(tmp_path / "original.py", tmp_path / "fixed.py", rule)
    cases += plan_pair(tmp_path / "original.py", tmp_path / "broken.py", rule)
    good, broken = session.run_cases(cases)
    messages = "\n".join(f"{f.severity}: {f.message}" for f in (*good.findings, *broken.findings))
    # TL505's program hits the bug itself: its fix is an intended change of what the load gives.
    assert good.status == (INTENDED_CHANGE if code == "TL505" else EQUIVALENT), messages
    assert broken.status == NOT_EQUIVALENT, messages
