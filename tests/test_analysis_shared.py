"""The per-file facts every rule shares: positions, parents, nodes by type,
names mentioned.  Each is checked against the slower way it replaced."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from torchlint.analysis import Facts
from torchlint.analysis.mentions import names_used
from torchlint.source.tree import walk

SOURCE = textwrap.dedent('''\
    import torch
    from torch import nn
    import torch.backends.cudnn as cudnn

    cudnn.benchmark = True


    class Net(nn.Module):
        def forward(self, x):
            return f"{x!r:>{10}}" if x else torch.relu(x)


    def train(model, loader):
        for batch in loader:
            loss = model(batch).sum()
            loss.backward()
    ''')


def _facts(source: str) -> Facts:
    return Facts.of_module(cst.parse_module(source), source=source)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_positions_agree_with_libcsts_provider(newline: str) -> None:
    source = SOURCE.replace("\n", newline)
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    facts = Facts.of_module(module, source=source)
    checked = 0
    for node, _ in walk(module):
        assert facts.positions[node] == expected[node], cst.Module([]).code_for_node(node)
        checked += 1
    assert checked > 50


def test_parents_agree_with_libcsts_provider_for_every_node_that_carries_code() -> None:
    module = cst.parse_module(SOURCE)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ParentNodeProvider)
    parents = Facts.of_module(module).parents
    assert len(parents) > 50
    for node, parent in parents.items():
        assert expected[node] is parent


def test_nodes_of_a_type_are_every_such_node_in_source_order() -> None:
    facts = _facts(SOURCE)
    calls = facts.nodes_of(cst.Call)
    assert [facts.module.code_for_node(call.func) for call in calls] == [
        "torch.relu", "model(batch).sum", "model", "loss.backward"]
    assert facts.nodes_of(cst.While) == ()


def test_names_mentioned_resolve_through_the_imports() -> None:
    facts = _facts(SOURCE)
    assert {"torch.backends.cudnn.benchmark", "torch.nn.Module", "torch.relu"} <= facts.names_mentioned
    assert "cudnn.benchmark" not in facts.names_mentioned
    wanted = frozenset({"torch.backends.cudnn.benchmark", "torch.compile"})
    assert facts.names_mentioned & wanted == names_used(SOURCE, wanted) == {"torch.backends.cudnn.benchmark"}


def test_each_fact_is_computed_once_per_file() -> None:
    facts = _facts(SOURCE)
    assert facts.located is facts.located
    assert facts.parents is facts.parents
    assert facts.names_mentioned is facts.names_mentioned


CALLABLES = textwrap.dedent('''\
    import functools
    from torch.utils.checkpoint import checkpoint


    class Block:
        def __init__(self, use):
            self.maybe = checkpoint if use else (lambda f, x: f(x))
            self.always = checkpoint
            self.partial = functools.partial(checkpoint, use_reentrant=False)

        def forward(this, x):
            a = this.maybe(f, x)
            b = this.always(f, x)
            c = this.partial(f, x)
            inner = lambda: this.always(f, x)
            return a, b, c, inner

        @staticmethod
        def helper(self, x):
            return self.always(f, x)


    class Other:
        def forward(self, x):
            return self.always(f, x)
    ''')


def test_callables_stored_on_self_are_known_per_class_and_instance_parameter() -> None:
    facts = _facts(CALLABLES)
    found = [(facts.module.code_for_node(call), facts.callables.of_call(call)) for call in facts.nodes_of(cst.Call)]
    stored = {text: [value for code, value in found if code == text] for text, _ in found}
    maybe, = stored["this.maybe(f, x)"]
    assert maybe is not None and maybe.names == {"torch.utils.checkpoint.checkpoint"} and not maybe.certain
    always, in_lambda = stored["this.always(f, x)"]
    assert always is not None and always.certain
    assert in_lambda is None  # a lambda inside the method is not the method
    # functools.partial may bind arguments already: not taken for the function itself.
    assert stored["this.partial(f, x)"] == [None]
    # A static method's first parameter is not the instance; another class has its own attributes.
    assert stored["self.always(f, x)"] == [None, None]
