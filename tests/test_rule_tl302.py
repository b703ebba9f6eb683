"""TL302 zero-grad-not-set-to-none: explicit False always, bare calls before torch 2.0."""

from __future__ import annotations

from typing import List, Optional

import pytest

import torchlint
from torchlint.model import Applicability
from torchlint.ruleapi.registry import by_code_or_name
from torchlint.lint.settings import Settings

CURRENT = Settings(select=("TL302",))
TORCH_113 = Settings(select=("TL302",), torch_version="1.13")
TORCH_20 = Settings(select=("TL302",), torch_version="2.0")
TORCH_16 = Settings(select=("TL302",), torch_version="1.6")


def lines(source: str, settings: Settings = CURRENT) -> List[int]:
    return [d.start.line for d in torchlint.check_source(source, "x.py", settings) if d.code == "TL302"]


def fixed(source: str, settings: Settings = CURRENT) -> str:
    return torchlint.fix_source(source, "x.py", settings, unsafe=True).source


@pytest.mark.parametrize(
    "call",
    [
        "optimizer.zero_grad(set_to_none=False)",
        "optimizer.zero_grad(False)",
        "self.optimizer.zero_grad(set_to_none=False)",
        "model.zero_grad(set_to_none = False)",
        "self.zero_grad(False)",
        "trainer.optimizers[0].zero_grad(set_to_none=False)",
        "get_optimizer().zero_grad(False)",
    ],
)
@pytest.mark.parametrize("settings", [CURRENT, TORCH_20, TORCH_113])
def test_explicit_false_is_reported_on_every_version(call: str, settings: Settings) -> None:
    assert lines(f"{call}\n", settings) == [1]


@pytest.mark.parametrize(
    "call",
    ["optimizer.zero_grad()", "self.model.zero_grad()", "opts[i].zero_grad()", "super().zero_grad()"],
)
def test_bare_call_is_reported_only_before_torch_2(call: str) -> None:
    assert lines(f"{call}\n", TORCH_113) == [1]
    assert lines(f"{call}\n", TORCH_20) == []
    assert lines(f"{call}\n", CURRENT) == []


@pytest.mark.parametrize(
    "source",
    [
        "optimizer.zero_grad(set_to_none=True)\n",
        "optimizer.zero_grad(True)\n",
        "optimizer.zero_grad(set_to_none=flag)\n",
        "optimizer.zero_grad(not keep_grads)\n",
        "optimizer.zero_grad(set_to_none=None)\n",
        "engine.zero_grad(set_grads_to_None=False)\n",
        "opt.zero_grad(False, model)\n",
        "opt.zero_grad(*args)\n",
        "opt.zero_grad(**kwargs)\n",
        "zero_grad(False)\n",
        "zero_grad()\n",
        "p.grad.zero_()\n",
        "p.grad = None\n",
        "x.grad.data.zero_()\n",
        "model.zero_grad_(False)\n",
        "f = opt.zero_grad\n",
    ],
)
@pytest.mark.parametrize("settings", [CURRENT, TORCH_113])
def test_quiet_cases(source: str, settings: Settings) -> None:
    assert lines(source, settings) == []


def test_nothing_before_torch_1_7() -> None:
    source = "optimizer.zero_grad()\noptimizer.zero_grad(set_to_none=False)\n"
    assert lines(source, TORCH_16) == []


def test_messages() -> None:
    source = "opt.zero_grad(False)\nopt.zero_grad(set_to_none=False)\nopt.zero_grad()\n"
    a, b, c = torchlint.check_source(source, "x.py", TORCH_113)
    assert "`zero_grad(False)`" in a.message
    assert "`zero_grad(set_to_none=False)`" in b.message
    assert "before torch 2.0" in c.message and "1.13" in c.message
    assert all(d.fix is not None and d.fix.applicability is Applicability.UNSAFE for d in (a, b, c))


@pytest.mark.parametrize(
    "source, expected, settings",
    [
        ("opt.zero_grad(set_to_none=False)\n", "opt.zero_grad(set_to_none=True)\n", CURRENT),
        ("opt.zero_grad(False)\n", "opt.zero_grad(set_to_none=True)\n", CURRENT),
        ("opt.zero_grad(set_to_none = False)\n", "opt.zero_grad(set_to_none = True)\n", CURRENT),
        ("opt.zero_grad()\n", "opt.zero_grad(set_to_none=True)\n", TORCH_113),
        ("opt.zero_grad()\n", "opt.zero_grad()\n", CURRENT),
        (
            "opt.zero_grad(\n    set_to_none=False,  # why\n)\n",
            "opt.zero_grad(\n    set_to_none=True,  # why\n)\n",
            CURRENT,
        ),
    ],
)
def test_fix(source: str, expected: str, settings: Settings) -> None:
    assert fixed(source, settings) == expected


def test_the_fix_is_unsafe_only() -> None:
    source = "opt.zero_grad(set_to_none=False)\n"
    result = torchlint.fix_source(source, "x.py", CURRENT, unsafe=False)
    assert not result.changed and result.source == source


def test_noqa_silences() -> None:
    assert lines("opt.zero_grad(set_to_none=False)  # noqa: TL302\n") == []


def test_trigger_word_skips_files_without_zero_grad() -> None:
    assert lines("opt.step()\n", TORCH_113) == []


def test_metadata_and_docs() -> None:
    rule: Optional[type] = by_code_or_name("zero-grad-not-set-to-none")
    assert rule is not None
    found = by_code_or_name("TL302")
    assert found is rule
    assert found.trigger_words == ("zero_grad",)
    assert "2.0" in found.torch_versions and "1.7" in found.torch_versions
    doc = found.documentation()
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Fix safety",
                    "## Source guide"):
        assert heading in doc
