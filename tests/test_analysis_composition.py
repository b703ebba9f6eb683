"""The composition fact: what a call builds as a layer, what a module class's
containers hold in order, and how its methods use them."""

from __future__ import annotations

import textwrap
from typing import Mapping

import libcst as cst

from torchlint.analysis import Facts
from torchlint.analysis.composition import Member, UseKind


def _members(source: str, class_name: str) -> Mapping[str, Member]:
    module = cst.parse_module(textwrap.dedent(source))
    facts = Facts.of_module(module)
    node = next(n for n in facts.nodes_of(cst.ClassDef) if n.name.value == class_name)
    return facts.composition.members(node)


MLP = """
    import torch
    from torch import nn

    class MLP(nn.Module):
        def __init__(self, n, a, h, b):
            super().__init__()
            self.linears = torch.nn.ModuleList()
            self.norms = nn.ModuleList([nn.BatchNorm1d(h) for _ in range(n - 1)])
            self.linears.append(nn.Linear(a, h))
            for _ in range(n - 2):
                self.linears.append(nn.Linear(h, h))
            self.linears.append(nn.Linear(h, b))

        def forward(self, x):
            for i in range(len(self.norms)):
                x = self.norms[i](self.linears[i](x))
            for lin, norm in zip(self.linears, self.norms):
                x = norm(lin(x))
            return self.linears[-1](x)
"""


def test_a_list_filled_by_append_holds_its_layers_in_order_and_knows_its_last() -> None:
    members = _members(MLP, "MLP")
    linears = members["linears"].elements
    assert linears is not None
    assert [element.layer.qualified if element.layer else None for element in linears] == ["torch.nn.Linear"] * 3
    assert [element.last for element in linears] == [False, False, True]
    norms = members["norms"].elements
    assert norms is not None and len(norms) == 1 and norms[0].layer is not None
    assert norms[0].layer.qualified == "torch.nn.BatchNorm1d" and not norms[0].last


def test_how_methods_use_a_container() -> None:
    uses = _members(MLP, "MLP")["linears"].uses
    kinds = [use.kind for use in uses]
    assert kinds.count(UseKind.APPEND) == 3
    assert [use.index for use in uses if use.kind is UseKind.INDEXED_CALL] == ["i", "-1"]
    zipped = [use for use in uses if use.kind is UseKind.ZIP]
    assert len(zipped) == 1 and zipped[0].variable == "lin" and zipped[0].partners == (("norms", "norm"),)
    assert [use.kind for use in _members(MLP, "MLP")["norms"].uses] == [
        UseKind.LEN, UseKind.INDEXED_CALL, UseKind.ZIP]


def test_the_last_append_in_a_branch_of_its_own_is_not_known_to_be_last() -> None:
    source = """
        from torch import nn

        class Net(nn.Module):
            def __init__(self, dims, head):
                super().__init__()
                self.fcs = nn.ModuleList()
                for a, b in zip(dims, dims[1:]):
                    self.fcs.append(nn.Linear(a, b))
                if head:
                    self.fcs.append(nn.Linear(dims[-1], 1))
    """
    elements = _members(source, "Net")["fcs"].elements
    assert elements is not None and not any(element.last for element in elements)


def test_module_dict_keys_and_wrapped_layers() -> None:
    source = """
        from torch import nn

        class ConvNorm(nn.Module):
            def __init__(self, cin, cout, bias=True):
                super().__init__()
                self.conv = nn.Conv1d(cin, cout, 3, bias=bias)

            def forward(self, x):
                return self.conv(x)

        class Net(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.layers = nn.ModuleDict({"conv": ConvNorm(c, c), "bn": nn.BatchNorm1d(c), "act": nn.ReLU()})
                self.other = nn.ModuleList(layers)
    """
    members = _members(source, "Net")
    elements = members["layers"].elements
    assert elements is not None
    assert [element.key for element in elements] == ["conv", "bn", "act"]
    wrapper = elements[0].layer
    assert wrapper is not None and wrapper.wrapped is not None
    assert wrapper.layer == "torch.nn.Conv1d" and wrapper.short == "ConvNorm"
    assert wrapper.flows_into("bias") == "bias" and wrapper.default_of("bias") is True
    assert wrapper.flows_into("out_channels") == "cout"
    signature = wrapper.signature()
    assert signature is not None and [p.name for p in signature.parameters] == ["cin", "cout", "bias"]
    assert members["other"].elements is None  # a list of unknown layers: not known


def test_an_enumerate_loop_names_the_items_and_their_positions() -> None:
    source = """
        from torch import nn

        class Net(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.blocks = nn.ModuleList([nn.Conv1d(c, c, 3) for _ in range(3)])

            def forward(self, x):
                for i, block in enumerate(self.blocks):
                    x = block(x) * i
                for block in self.blocks:
                    x = block(x)
                return x
    """
    uses = _members(source, "Net")["blocks"].uses
    assert [(use.kind, use.variable, use.index) for use in uses] == [
        (UseKind.ENUMERATE, "block", "i"), (UseKind.OTHER, None, None)]


NESTED = """
    from torch import nn

    class Stages(nn.Module):
        def __init__(self, stages, depth, c, kind):
            super().__init__()
            self.blocks = nn.ModuleList()
            for _ in range(stages):
                self.blocks.append(nn.ModuleList([nn.Conv2d(c, c, 3) for _ in range(depth)]))
            self.norms = nn.ModuleList([nn.ModuleList([nn.BatchNorm2d(c) for _ in range(depth)]) for _ in range(stages)])
            if kind:
                self.stem = nn.Conv2d(3, c, 3)
            else:
                self.stem = nn.Conv2d(3, c, 5)

        def forward(self, x):
            for i in range(len(self.blocks)):
                for j in range(len(self.blocks[i])):
                    norm = self.norms[i][j]
                    x = norm(self.blocks[i][j](x))
            return x
"""


def test_containers_of_containers_read_two_indices_deep() -> None:
    members = _members(NESTED, "Stages")
    blocks = members["blocks"]
    assert blocks.elements is not None and len(blocks.elements) == 1
    inner = blocks.elements[0].inner
    assert inner is not None and inner[0].layer is not None and inner[0].layer.qualified == "torch.nn.Conv2d"
    norms = members["norms"].elements
    assert norms is not None and norms[0].inner is not None
    assert norms[0].inner[0].layer is not None and norms[0].inner[0].layer.qualified == "torch.nn.BatchNorm2d"
    calls = [(use.index, use.depth) for use in blocks.uses if use.kind is UseKind.INDEXED_CALL]
    assert calls == [("i][j", 2)]
    assert [(use.index, use.depth) for use in blocks.uses if use.kind is UseKind.LEN] == [(None, 1), ("i", 1)]


def test_an_entry_given_a_local_name_is_an_alias_use() -> None:
    uses = _members(NESTED, "Stages")["norms"].uses
    aliases = [use for use in uses if use.kind is UseKind.INDEXED_ALIAS]
    assert [(use.variable, use.index, use.depth) for use in aliases] == [("norm", "i][j", 2)]


def test_every_assignment_of_an_attribute_is_kept_in_order() -> None:
    stem = _members(NESTED, "Stages")["stem"]
    assert stem.value is None
    assert [cst.Module([]).code_for_node(value) for value, _ in stem.entries if value is not None] == [
        "nn.Conv2d(3, c, 3)", "nn.Conv2d(3, c, 5)"]
