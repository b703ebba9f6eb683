"""The deprecated-API rules (TL701, TL703) are driven by the deprecation table."""

from __future__ import annotations

import textwrap
from typing import Dict, List

import pytest

from torchlint.data import apidata
from torchlint.data.apidata import Deprecation, FixKind
from torchlint.lint.engine import LintConfig, lint_source
from torchlint.lint.fixer import fix_text
from torchlint.model import Applicability
from torchlint.ruleapi.registry import by_code_or_name
from torchlint.ruleapi.rule import TorchVersion
from torchlint.rules._deprecated_api import is_amp, replacement_since
from torchlint.rules.deprecated_torch_api.replacers import REPLACERS

TL701 = by_code_or_name("TL701")
TL703 = by_code_or_name("TL703")


def _config(code: str, torch: str = "2.9", **options: object) -> LintConfig:
    rule = by_code_or_name(code)
    assert rule is not None
    return LintConfig(rules=(rule,), torch_version=TorchVersion.parse(torch), options={code: dict(options)})


def _lint(source: str, code: str = "TL703", torch: str = "2.9", **options: object) -> List[str]:
    return [d.message for d in lint_source(textwrap.dedent(source), "a.py", _config(code, torch, **options))]


def _fix(source: str, code: str = "TL703", torch: str = "2.9") -> str:
    return fix_text(textwrap.dedent(source), "a.py", _config(code, torch), unsafe=True).source


def test_a_new_table_entry_is_reported_and_fixed_without_touching_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = Deprecation(
        symbol="torch.old_thing", deprecated_in=TorchVersion(2, 1), removed_in=None,
        replacement="torch.new_thing", fix=FixKind.RENAME, safety=Applicability.SAFE,
        documentation_only=False, reference="test", note="test",
    )
    table: Dict[str, Deprecation] = {**apidata.deprecations(), entry.symbol: entry}
    monkeypatch.setattr(apidata, "deprecations", lambda: table)
    source = "import torch\ny = torch.old_thing(x)\n"
    assert _lint(source) == ["`torch.old_thing` is deprecated since torch 2.1; use `torch.new_thing`"]
    assert _fix(source) == "import torch\ny = torch.new_thing(x)\n"
    assert _lint(source, torch="2.0") == []  # deprecated later than the target


def test_every_custom_fix_in_the_table_has_a_rewrite() -> None:
    for symbol, entry in apidata.deprecations().items():
        if entry.fix is not FixKind.CUSTOM:
            continue
        if is_amp(symbol):
            # TL701 rewrites these through the replacement's signature.
            assert entry.replacement is not None and replacement_since(entry) is not None, symbol
            assert apidata.signatures()[entry.replacement].since == replacement_since(entry)
        else:
            assert symbol in REPLACERS, f"{symbol}: custom fix without a replacer"


def test_removed_functions_are_reported_without_a_fix() -> None:
    source = "import torch\nx = torch.symeig(a)\n"
    assert _lint(source) == ["`torch.symeig` was removed in torch 2.0; use `torch.linalg.eigh`"]
    assert _lint(source, torch="1.13") == [
        "`torch.symeig` is deprecated and removed in torch 2.0; use `torch.linalg.eigh`"
    ]
    assert _fix(source) == textwrap.dedent(source)


def test_documentation_only_deprecations_wait_for_the_option() -> None:
    source = "import torch\ny = torch.norm(x)\nz = torch.ger(u, v)\n"
    assert [m.split("`")[1] for m in _lint(source)] == ["torch.ger"]
    assert [m.split("`")[1] for m in _lint(source, **{"documentation-only": True})] == ["torch.norm", "torch.ger"]


def test_range_fix_refuses_what_would_change_the_element_count() -> None:
    assert _fix("import torch\nx = torch.range(0.5, 4)\n") == "import torch\nx = torch.range(0.5, 4)\n"
    assert _fix("import torch\nx = torch.range(0, n, 0.5)\n") == "import torch\nx = torch.range(0, n, 0.5)\n"
    assert _fix("import torch\nx = torch.range(0, n - 1)\n") == "import torch\nx = torch.arange(0, n)\n"
    assert _fix("import torch\nx = torch.range(5, 0, -1)\n") == "import torch\nx = torch.arange(5, -1, -1)\n"


def test_a_fixed_import_and_its_calls_agree() -> None:
    source = """
        from torch import ger
        from torch import ger as g
        a = ger(u, v)
        b = g(u, v)
    """
    assert _fix(source) == textwrap.dedent("""
        from torch import outer
        from torch import outer as g
        a = outer(u, v)
        b = g(u, v)
    """)


def test_a_partly_deprecated_import_keeps_its_names_and_the_calls_are_spelled_out() -> None:
    source = """
        import torch
        from functorch import make_functional, vmap
        f = vmap(g)
    """
    assert _fix(source) == textwrap.dedent("""
        import torch
        from functorch import make_functional, vmap
        f = torch.func.vmap(g)
    """)


@pytest.mark.parametrize(
    ("call", "fixed"),
    [
        ("torch.cuda.amp.autocast(use_fp16)", 'torch.amp.autocast("cuda", enabled=use_fp16)'),
        ("torch.cuda.amp.autocast(True, torch.bfloat16, False)",
         'torch.amp.autocast("cuda", enabled=True, dtype=torch.bfloat16, cache_enabled=False)'),
        ("torch.cpu.amp.autocast(enabled=flag)", 'torch.amp.autocast("cpu", enabled=flag)'),
        ("torch.cuda.amp.GradScaler(1024.0, 2.0)", 'torch.amp.GradScaler("cuda", init_scale=1024.0, growth_factor=2.0)'),
        ("torch.cuda.amp.custom_fwd(fn)", 'torch.amp.custom_fwd(fn, device_type="cuda")'),
    ],
)
def test_amp_fix_binds_positional_arguments_to_the_old_signature(call: str, fixed: str) -> None:
    assert _fix(f"import torch\nx = {call}\n", code="TL701") == f"import torch\nx = {fixed}\n"


def test_amp_positions_that_differ_between_targeted_releases_are_not_guessed() -> None:
    # dtype became the second parameter of torch.cuda.amp.autocast in 1.10,
    # so any target is fine; an unpacking hides everything.
    source = "import torch\nx = torch.cuda.amp.autocast(*args)\n"
    assert len(_lint(source, code="TL701")) == 1
    assert _fix(source, code="TL701") == source


def test_amp_findings_wait_for_the_replacement_in_the_oldest_targeted_release() -> None:
    source = "import torch\ns = torch.cuda.amp.GradScaler()\nwith torch.cuda.amp.autocast():\n    pass\n"
    assert len(_lint(source, code="TL701", torch="2.3")) == 2
    assert len(_lint(source, code="TL701", torch="2.2")) == 1  # torch.amp.GradScaler is from 2.3


def test_a_shipped_program_is_fixed_for_the_torch_version_its_spec_names() -> None:
    pytest.importorskip("torch")  # planning a program runs torchlint's verify preparation
    from torchlint.lint.settings import Settings
    from torchlint.verify.plan import plan_programs

    tl801 = by_code_or_name("TL801")
    assert tl801 is not None and tl801.verification is not None
    assert Settings().for_verification(tl801, program=True).torch_version == "2.5"
    assert Settings().for_verification(tl801, program=False).torch_version is None
    (case,) = plan_programs(tl801, Settings())
    assert not case.error and "weights_only=True" in case.fixed
