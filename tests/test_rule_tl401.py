"""TL401 conv-bias-before-batchnorm: focused cases beyond the fixtures."""

from __future__ import annotations

import textwrap
from typing import List

import torchlint
from torchlint.ruleapi.registry import by_code_or_name
from torchlint.lint.settings import Settings

SETTINGS = Settings(select=("TL401",))


def lines(source: str, settings: Settings = SETTINGS) -> List[int]:
    return [d.start.line for d in torchlint.check_source(textwrap.dedent(source), "model.py", settings)]


def fixed(source: str, settings: Settings = SETTINGS) -> str:
    result = torchlint.fix_source(textwrap.dedent(source), "model.py", settings, unsafe=True)
    return result.source


def test_metadata_and_doc() -> None:
    rule = by_code_or_name("TL401")
    assert rule is not None and rule.name == "conv-bias-before-batchnorm"
    assert rule.trigger_words == ("BatchNorm",)
    doc = rule.documentation()
    for heading in ("## What it does", "## Why is this bad?", "## Fix safety", "## Source guide"):
        assert heading in doc
    assert "state_dict" in doc and "running_mean" in doc


def test_sequential_report_is_on_the_conv_call() -> None:
    diagnostics = torchlint.check_source(
        "import torch.nn as nn\nm = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8))\n",
        "m.py",
        SETTINGS,
    )
    assert len(diagnostics) == 1
    d = diagnostics[0]
    assert (d.start.line, d.start.column) == (2, 19)
    assert "`Conv2d` feeds `BatchNorm2d`" in d.message and "bias=False" in d.message
    assert d.fix is not None and d.fix.applicability.value == "unsafe"


def test_resolves_imports_and_aliases() -> None:
    source = """
    import torch
    from torch.nn import Conv2d as C, BatchNorm2d as BN
    from torch.nn.modules.conv import Conv1d

    a = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8))
    b = torch.nn.Sequential(C(3, 8, 3), BN(8))
    c = torch.nn.Sequential(Conv1d(3, 8, 3), torch.nn.BatchNorm1d(8))
    """
    assert lines(source) == [6, 7, 8]


def test_unrelated_names_stay_quiet() -> None:
    source = """
    import torch.nn as nn

    def build(nn):
        # a parameter hides the import
        return nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8))
    """
    assert lines(source) == []


def test_positional_and_keyword_bias() -> None:
    source = """
    import torch.nn as nn
    a = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, 1, 1, True), nn.BatchNorm2d(8))
    b = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, 1, 1, False), nn.BatchNorm2d(8))
    c = nn.Sequential(nn.Linear(4, 8, True), nn.BatchNorm1d(8))
    d = nn.Sequential(nn.Linear(4, 8, bias=True), nn.BatchNorm1d(8))
    e = nn.Sequential(nn.Linear(4, 8, use_bias), nn.BatchNorm1d(8))
    """
    assert lines(source) == [3, 5, 6]
    out = fixed(source)
    assert "nn.Conv2d(3, 8, 3, 1, 1, 1, 1, False)" in out
    assert "nn.Linear(4, 8, False)" in out
    assert "nn.Linear(4, 8, bias=False)" in out


def test_lazy_modules() -> None:
    source = """
    import torch.nn as nn
    m = nn.Sequential(nn.LazyConv2d(16, 3), nn.LazyBatchNorm2d(), nn.ReLU())
    n = nn.Sequential(nn.LazyConv2d(16, 3, 1, 0, 1, 1, False), nn.LazyBatchNorm2d())
    """
    assert lines(source) == [3]
    assert "nn.LazyConv2d(16, 3, bias=False)" in fixed(source)


def test_dimensions_and_channels_must_match() -> None:
    source = """
    import torch.nn as nn
    a = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm3d(8))
    b = nn.Sequential(nn.Linear(3, 8), nn.BatchNorm2d(8))
    c = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(num_features=16))
    d = nn.Sequential(nn.Conv2d(3, out_channels=8, kernel_size=3), nn.BatchNorm2d(num_features=8))
    e = nn.Sequential(nn.Conv3d(3, 8, 3), nn.SyncBatchNorm(8))
    """
    assert lines(source) == [6, 7]


def test_transposed_only_with_option() -> None:
    source = """
    import torch.nn as nn
    g = nn.Sequential(nn.ConvTranspose2d(8, 4, 4, 2, 1), nn.BatchNorm2d(4))
    """
    assert lines(source) == []
    with_option = Settings(select=("TL401",), rule_options={"TL401": {"transposed": True}})
    assert lines(source, with_option) == [3]


def test_multiline_call_layouts() -> None:
    trailing_comma = """
    import torch.nn as nn
    m = nn.Sequential(
        nn.Conv2d(
            3,  # in
            64,  # out
        ),
        nn.BatchNorm2d(64),
    )
    """
    assert fixed(trailing_comma) == textwrap.dedent(
        """
        import torch.nn as nn
        m = nn.Sequential(
            nn.Conv2d(
                3,  # in
                64,  # out
                bias=False,
            ),
            nn.BatchNorm2d(64),
        )
        """
    )
    no_comma = """
    import torch.nn as nn
    m = nn.Sequential(
        nn.Conv2d(3, 64,
                  kernel_size=3),
        nn.BatchNorm2d(64),
    )
    """
    assert "kernel_size=3, bias=False)," in fixed(no_comma)


def test_list_builders() -> None:
    source = """
    import torch.nn as nn

    def head(c):
        layers = [nn.Linear(c, c)]
        layers.append(nn.BatchNorm1d(c))
        layers.extend([nn.ReLU(), nn.Conv1d(c, c, 1)])
        layers += [nn.BatchNorm1d(c)]
        return nn.Sequential(*layers)

    def optional(c, bn):
        layers = [nn.Linear(c, c)]
        if bn:
            layers.append(nn.BatchNorm1d(c))
        return layers

    def not_a_sequential(c):
        d = {}
        d.add_module("conv", nn.Conv2d(c, c, 1))
        d.add_module("bn", nn.BatchNorm2d(c))
    """
    # Line 12: the norm follows only when `bn` is true (fixed with `bias=not bn`).
    assert lines(source) == [5, 7, 12]


def test_module_attributes_need_a_direct_flow() -> None:
    source = """
    import torch.nn as nn

    class A(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3)
            self.bn = nn.BatchNorm2d(8)

        def forward(self, x):
            y = self.conv(x)
            z = self.bn(y)
            return z + y  # y is used again unnormalised

    class B(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3)
            self.bn = nn.BatchNorm2d(8)

        def forward(self, x):
            feats = self.conv(x)  # also returned: bias matters
            return self.bn(self.conv(x)), feats

    class C(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3)
            self.bn = nn.BatchNorm2d(8)

        def forward(self, x):
            h = self.conv(x)
            return self.bn(h)
    """
    assert lines(source) == [28]


def test_fix_is_idempotent() -> None:
    source = "import torch.nn as nn\nm = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8))\n"
    once = fixed(source)
    assert once == "import torch.nn as nn\nm = nn.Sequential(nn.Conv2d(3, 8, 3, bias=False), nn.BatchNorm2d(8))\n"
    assert fixed(once) == once
    assert lines(once) == []


def test_class_aliases_assigned_once() -> None:
    source = """
    import torch.nn as nn
    BN = nn.BatchNorm2d

    def block(c):
        Conv = nn.Conv2d
        return nn.Sequential(Conv(c, c, 3), BN(c))

    def configurable(c, norm=nn.BatchNorm2d):
        # a parameter could hold any norm: stay quiet
        return nn.Sequential(nn.Conv2d(c, c, 3), norm(c))
    """
    assert lines(source) == [7]


def test_parametrize_lists_are_not_layer_stacks() -> None:
    source = """
    import pytest
    import torch.nn as nn

    @pytest.mark.parametrize("layer", [nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8)])
    def test_layer(layer):
        assert layer is not None
    """
    assert lines(source) == []


# -- issue 12: layer lists built in loops and behind a condition --------------


def test_conditional_append_fix_is_bias_not_test() -> None:
    source = """
    import torch.nn as nn

    def block(a, b, use_bn):
        layers = [nn.Linear(a, b)]
        if use_bn:
            layers.append(nn.BatchNorm1d(b))
        layers.append(nn.ReLU())
        return nn.Sequential(*layers)
    """
    assert lines(source) == [5]
    assert "layers = [nn.Linear(a, b, bias=not use_bn)]" in fixed(source)


def test_conditional_append_with_attribute_test() -> None:
    source = """
    import torch.nn as nn

    class Head(nn.Module):
        def build(self, c):
            layers = []
            layers.append(nn.Conv2d(c, c, 3))
            if self.cfg.bn:
                layers += [nn.BatchNorm2d(c), nn.ReLU()]
            return nn.Sequential(*layers)
    """
    assert "nn.Conv2d(c, c, 3, bias=not self.cfg.bn)" in fixed(source)


def test_conditional_append_look_alikes() -> None:
    source = """
    import torch.nn as nn

    def rebound(a, b, use_bn):
        use_bn = not use_bn
        layers = [nn.Linear(a, b)]
        if use_bn:
            layers.append(nn.BatchNorm1d(b))

    def elif_chain(a, b, norm):
        layers = [nn.Linear(a, b)]
        if norm == "bn":
            layers.append(nn.BatchNorm1d(b))
        elif norm == "ln":
            layers.append(nn.LayerNorm(b))

    def called_test(a, b, cfg):
        layers = [nn.Linear(a, b)]
        if cfg.use_bn():
            layers.append(nn.BatchNorm1d(b))

    def other_list(a, b, use_bn):
        layers = [nn.Linear(a, b)]
        if use_bn:
            norms.append(nn.BatchNorm1d(b))

    def not_first(a, b, use_bn):
        layers = [nn.Linear(a, b)]
        if use_bn:
            layers.append(nn.Dropout())
            layers.append(nn.BatchNorm1d(b))

    def attribute_reassigned(self, a, b):
        self.bn = True
        layers = [nn.Linear(a, b)]
        self.bn = False
        if self.bn:
            layers.append(nn.BatchNorm1d(b))

    def other_size(a, use_bn):
        width = 64
        layers = [nn.Linear(a, 32)]
        if use_bn:
            layers.append(nn.BatchNorm1d(width))
    """
    assert lines(source) == []


def test_conditional_expression_element() -> None:
    source = """
    import torch.nn as nn

    def block(i, o, bn):
        return nn.Sequential(nn.Conv2d(i, o, 3), nn.BatchNorm2d(o) if bn else nn.Identity(), nn.ReLU())

    def both_norms(i, o, bn):
        return nn.Sequential(nn.Conv2d(i, o, 3), nn.BatchNorm2d(o) if bn else nn.SyncBatchNorm(o))

    def unknown_other(i, o, bn, act):
        return nn.Sequential(nn.Conv2d(i, o, 3), nn.BatchNorm2d(o) if bn else act)
    """
    assert lines(source) == [5]
    assert "nn.Conv2d(i, o, 3, bias=not bn)" in fixed(source)


def test_layer_variable_shared_by_branches() -> None:
    source = """
    import torch.nn as nn

    def stem(c, opts):
        conv = nn.Conv2d(3, c, 7, stride=2)
        if opts.bn:
            layers = [conv, nn.BatchNorm2d(c)]
        else:
            layers = [conv, nn.ReLU()]
        return layers

    def always(cfg):
        layers = []
        for v in cfg:
            conv2d = nn.Conv2d(3, v, 3)
            if v > 8:
                layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU()]
            else:
                layers += [conv2d, nn.BatchNorm2d(v)]
        return nn.Sequential(*layers)
    """
    assert lines(source) == [5, 15]
    result = fixed(source)
    assert "nn.Conv2d(3, c, 7, stride=2, bias=not opts.bn)" in result
    assert "nn.Conv2d(3, v, 3, bias=False)" in result


def test_layer_variable_shared_look_alikes() -> None:
    source = """
    import torch.nn as nn

    def read_elsewhere(cfg, batch_norm):
        layers = []
        for v in cfg:
            conv2d = nn.Conv2d(3, v, 3)
            if batch_norm:
                layers += [conv2d, nn.BatchNorm2d(v)]
            else:
                layers += [conv2d, nn.ReLU()]
            init(conv2d)

    def stream_ends(cfg, batch_norm):
        layers = []
        for v in cfg:
            conv2d = nn.Conv2d(3, v, 3)
            if batch_norm:
                layers += [conv2d, nn.BatchNorm2d(v)]
            else:
                layers += [conv2d]

    def branches_swapped_by_nesting(cfg, batch_norm, deep):
        layers = []
        for v in cfg:
            conv2d = nn.Conv2d(3, v, 3)
            if deep:
                layers += [conv2d, nn.BatchNorm2d(v)]
            if batch_norm:
                layers += [conv2d, nn.ReLU()]
    """
    assert lines(source) == []


def test_num_features_known_through_constants() -> None:
    source = """
    import torch.nn as nn

    WIDTH = 64
    OTHER = 32
    same = nn.Sequential(nn.Conv2d(3, WIDTH, 3), nn.BatchNorm2d(64))
    differs = nn.Sequential(nn.Conv2d(3, WIDTH, 3), nn.BatchNorm2d(OTHER))
    """
    assert lines(source) == [6]


def test_negated_test_gives_the_plain_name() -> None:
    source = """
    import torch.nn as nn

    def block(i, o, first_block=False):
        layers = []
        layers.append(nn.Conv2d(i, o, kernel_size=3, padding=1))
        if not first_block:
            layers.append(nn.BatchNorm2d(o))
        layers.append(nn.LeakyReLU(0.2))
        return layers
    """
    assert lines(source) == [6]
    assert "nn.Conv2d(i, o, kernel_size=3, padding=1, bias=first_block)" in fixed(source)
