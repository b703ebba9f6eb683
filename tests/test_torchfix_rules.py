"""What the TorchFix-derived rules (TL307, TL607, TL704-TL708) promise beyond
their fixtures: fix safety tiers, version gates, the weights table, aliases."""

from __future__ import annotations

import importlib
import re
from typing import List

import pytest

from torchlint.lint.engine import LintConfig, lint_source
from torchlint.model import Applicability, Diagnostic
from torchlint.ruleapi.registry import by_code_or_name
from torchlint.ruleapi.rule import TorchVersion



def _lint(code: str, source: str, torch: str = "2.9") -> List[Diagnostic]:
    config = LintConfig(rules=(by_code_or_name(code),), torch_version=TorchVersion.parse(torch))
    return lint_source(source, "example.py", config)


@pytest.mark.parametrize(
    ("code", "aliases"),
    [
        ("TL307", ("TOR002",)),
        ("TL607", ("TOR106", "TOR107", "TOR108")),
        ("TL704", ("TOR201",)),
        ("TL705", ("TOR003",)),
        ("TL706", ("TOR202",)),
        ("TL707", ("TOR104", "TOR105")),
        ("TL708", ("TOR203",)),
    ],
)
def test_each_rule_names_the_torchfix_codes_it_replaces(code: str, aliases: tuple) -> None:
    assert getattr(by_code_or_name(code), "aliases") == aliases


def test_imprecise_log_exp_fixes_are_safe_only_where_integer_inputs_promote_alike() -> None:
    source = "import torch\na = torch.log(1 + x)\nb = torch.exp(x) - 1\nc = torch.log(torch.sum(torch.exp(x), 1))\n"
    new = _lint("TL607", source, torch="1.13")
    old = _lint("TL607", source, torch="1.12")
    assert len(new) == len(old) == 3
    assert {d.fix.applicability for d in new if d.fix} == {Applicability.SAFE}
    assert {d.fix.applicability for d in old if d.fix} == {Applicability.UNSAFE}


def test_imprecise_log_exp_leaves_logsumexp_over_all_dimensions_alone() -> None:
    # log(sum(exp(x))) over every element has no dim to give logsumexp.
    assert _lint("TL607", "import torch\ny = torch.log(torch.sum(torch.exp(x)))\n") == []
    assert _lint("TL607", "import torch\ny = torch.log(torch.sum(torch.exp(x), None))\n") == []


def test_checkpoint_fix_is_unsafe_and_a_positional_use_reentrant_counts() -> None:
    (found,) = _lint("TL705", "from torch.utils.checkpoint import checkpoint\ny = checkpoint(f, x)\n")
    assert found.fix is not None and found.fix.applicability is Applicability.UNSAFE
    assert _lint("TL705", "import torch\ny = torch.utils.checkpoint.checkpoint_sequential(fs, 2, x, False)\n") == []


def test_checkpoint_rule_needs_a_torch_with_use_reentrant() -> None:
    source = "from torch.utils.checkpoint import checkpoint\ny = checkpoint(f, x)\n"
    assert _lint("TL705", source, torch="1.10") == []
    assert len(_lint("TL705", source, torch="1.11")) == 1


def test_require_grad_fix_is_unsafe() -> None:
    (found,) = _lint("TL307", "import torch\np.require_grad = False\n")
    assert found.fix is not None and found.fix.applicability is Applicability.UNSAFE


def test_totensor_fix_is_unsafe_and_waits_for_torchvision_0_16() -> None:
    source = "from torchvision.transforms import v2\nt = v2.ToTensor()\n"
    (found,) = _lint("TL706", source, torch="2.1")
    assert found.fix is not None and found.fix.applicability is Applicability.UNSAFE
    assert _lint("TL706", source, torch="2.0") == []


def test_pretrained_fix_for_literals_is_safe_and_names_the_first_published_weights() -> None:
    (found,) = _lint("TL704", "from torchvision import models\nm = models.resnet50(pretrained=True)\n")
    assert found.fix is not None and found.fix.applicability is Applicability.SAFE
    assert "models.ResNet50_Weights.IMAGENET1K_V1" in found.fix.edits[0].text


# The table ships as a module of the rule's package (installed as torchlint.rules).
BUILDERS = importlib.import_module(by_code_or_name("TL704").__module__ + ".weights").BUILDERS
_MEMBER = re.compile(r"^[A-Za-z0-9_]+_Weights\.[A-Z0-9_]+_V\d$|^VGG16_Weights\.IMAGENET1K_FEATURES$")


def test_weights_table_entries_are_enum_members_of_the_right_kind() -> None:
    assert len(BUILDERS) > 100
    for key, entry in BUILDERS.items():
        package = key.split(".")[0] if "." in key else ""
        for member in (entry.pretrained, entry.backbone):
            assert member is None or _MEMBER.match(member), (key, member)
        if entry.backbone is not None:
            # Only detection and segmentation builders have a separate backbone.
            assert package in ("detection", "segmentation"), key
        if package in ("", "quantization") and entry.pretrained is not None:
            assert entry.pretrained.endswith(".IMAGENET1K_V1"), key
        if package == "video" and entry.pretrained is not None:
            assert entry.pretrained.endswith(".KINETICS400_V1"), key

