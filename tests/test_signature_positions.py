"""Rules read argument positions from torchlint/data/signatures.toml, per
target torch version: cases the hard-coded positions got wrong."""

from __future__ import annotations

from typing import List

import torchlint
from torchlint.ruleapi.rule import TorchVersion
from torchlint.lint.settings import Settings


def _codes(source: str, version: str, code: str) -> List[str]:
    settings = Settings(select=(code,), torch_version=version)
    return [d.code for d in torchlint.check_source(source, "x.py", settings)]


def _fixed(source: str, version: str, code: str) -> str:
    settings = Settings(select=(code,), torch_version=version)
    return torchlint.fix_source(source, "x.py", settings, unsafe=True).source


# In torch 1.9 the 8th positional parameter of TransformerEncoderLayer is
# `device`; `norm_first` was inserted before it in 1.10.  The old fix added a
# second `device=` there (a TypeError on 1.9).
ENCODER = "import torch.nn as nn\nlayer = nn.TransformerEncoderLayer(512, 8, 2048, 0.1, 'relu', 1e-5, True, x).cuda()\n"


def test_position_that_was_device_in_the_target_release_is_left_alone() -> None:
    assert _codes(ENCODER, "1.9", "TL101") == []


def test_position_that_is_norm_first_in_every_target_release_is_fixed() -> None:
    assert _fixed(ENCODER, "2.1", "TL101").endswith("True, x, device=\"cuda\")\n")


# LayerNorm's 4th positional parameter is `device` in 1.9-2.0 and `bias` from
# 2.1 on; the old fixed limit of 3 never reported the 2.1 form.
LAYER_NORM = "import torch.nn as nn\nnorm = nn.LayerNorm(512, 1e-5, True, False).cuda()\n"


def test_layer_norm_bias_by_position_is_reported_from_2_1() -> None:
    assert _codes(LAYER_NORM, "2.1", "TL101") == ["TL101"]
    assert _fixed(LAYER_NORM, "2.1", "TL101").endswith("nn.LayerNorm(512, 1e-5, True, False, device=\"cuda\")\n")


def test_layer_norm_fourth_argument_is_unknown_when_targeting_2_0() -> None:
    assert _codes(LAYER_NORM, "2.0", "TL101") == []


def test_unpacked_positional_arguments_may_carry_device() -> None:
    source = "import torch.nn as nn\nlayer = nn.Linear(*dims).cuda()\n"
    assert _codes(source, "2.4", "TL101") == []
    # A factory's `*size` never reaches its keyword-only `device`.
    factory = "import torch\nx = torch.randn(3, *shape).cuda()\n"
    assert _fixed(factory, "2.4", "TL101") == "import torch\nx = torch.randn(3, *shape, device=\"cuda\")\n"


def test_explicit_bias_next_to_kwargs_is_reported() -> None:
    source = "import torch.nn as nn\nblock = nn.Sequential(nn.Conv2d(3, 8, 3, bias=True, **kw), nn.BatchNorm2d(8))\n"
    assert _fixed(source, "2.4", "TL401") == source.replace("bias=True", "bias=False")


def test_dataloader_num_workers_by_position_and_hidden_by_unpacking() -> None:
    positional = "from torch.utils.data import DataLoader\ndef f(ds):\n    DataLoader(ds, 32, True, None, None, 0)\n"
    assert _fixed(positional, "2.4", "TL201").endswith("DataLoader(ds, 32, True, None, None, 4)\n")
    assert _codes("from torch.utils.data import DataLoader\nDataLoader(ds, 32, *rest)\n", "2.4", "TL201") == []


def test_every_callable_the_rules_bind_has_a_signature_entry() -> None:
    import sys

    from torchlint.data import apidata
    from torchlint.ruleapi.registry import by_code_or_name

    def module_of(code: str) -> object:
        rule = by_code_or_name(code)
        assert rule is not None
        return sys.modules[rule.__module__]

    tl101 = module_of("TL101")
    tl401 = module_of("TL401")
    wanted = set(getattr(tl101, "_FACTORIES")) | {f"torch.nn.{name}" for name in getattr(tl101, "_MODULES")}
    for table in ("_PRODUCERS", "_TRANSPOSED", "_NORMS"):
        wanted |= set(getattr(tl401, table))
    wanted |= {"torch.utils.data.DataLoader", "torch.optim.Optimizer.zero_grad"}
    missing = sorted(name for name in wanted if name not in apidata.signatures())
    assert not missing
    for name in wanted:
        if name.startswith("torch.nn.") and name != "torch.nn.RMSNorm":
            device = apidata.signature(name).parameter("device")
            assert device is not None and device.added == TorchVersion(1, 9), name


def test_zero_grad_version_gate_matches_the_data() -> None:
    import sys

    from torchlint.data import apidata
    from torchlint.ruleapi.registry import by_code_or_name

    rule = by_code_or_name("TL302")
    assert rule is not None
    parameter = apidata.signature("torch.optim.Optimizer.zero_grad").parameter("set_to_none")
    assert parameter is not None
    assert getattr(sys.modules[rule.__module__], "_ARGUMENT_ADDED") == parameter.added
