"""Positions from code generation: the lazy ``Located`` (only the top-level
statements asked about are rendered) gives the same ranges, contexts and
edits as one pass over the whole module, and falls back to that pass where
the text alone cannot place a statement."""

from __future__ import annotations

import random
from typing import List

import libcst as cst
import pytest

from torchlint.source.edits import Located, Replacement, _statement_nodes

TRICKY = """\
# a header comment

import torch  # trailing


@decorator(  # comment in the call
    1,
)
# between decorator and def
@other
def train(model, loader):
    '''A docstring
    over lines.'''
    for batch in loader:
        x = f"{batch!r:>{width}} {'quoted'}"
        y = model(x) \\
            + 1
        if y:
            pass
        # an indented footer comment
    # a dedented footer comment
    return (
        y
    )

class Net:
    def forward(self, x):
        return x  ;  z = 1


text = '''
import torch
'''
"""


def _under_statements(module: cst.Module) -> List[cst.CSTNode]:
    return [node for _, node in _statement_nodes(module)]


def _same_as_eager(source: str, seed: int = 0) -> bool:
    """Ask the lazy ``Located`` about every node under the statements, in a
    random order, and compare each answer with the eager pass's.  Returns
    whether the lazy one stayed lazy (never rendered the whole module)."""
    module = cst.parse_module(source)
    eager = Located(module, source)
    lazy = Located(module, source, lazy=True)
    nodes = _under_statements(module)
    random.Random(seed).shuffle(nodes)
    for node in nodes:
        assert lazy.span(node) == eager.span(node)
        assert lazy.range(node) == eager.range(node)
        state = lazy._recorded(node)
        assert state.inclusive(node) == eager._state.inclusive(node)
        assert state.context(node) == eager._state.context(node)
    return not lazy._complete


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lazy_positions_are_the_eager_ones(seed: int) -> None:
    assert _same_as_eager(TRICKY, seed)  # and it placed every statement from the text alone


@pytest.mark.parametrize(
    "source",
    [
        TRICKY.replace("\n", "\r\n"),  # libcst may drop a carriage return
        "\ufeff" + TRICKY,  # or a byte order mark
        TRICKY.replace("\nclass Net", "\n\fclass Net"),  # or a form feed
        TRICKY.rstrip("\n"),  # the last statement renders a newline the text lacks
        "x = 1\ny = 2\nx = 1\n",  # the same statement twice: its place is not certain
    ],
)
def test_lazy_falls_back_to_one_pass_where_the_text_cannot_place_a_statement(source: str) -> None:
    assert not _same_as_eager(source)


def test_lazy_renders_only_the_statements_asked_about() -> None:
    source = "import torch\n\ndef f():\n    return torch.zeros(3)\n\n\ndef g():\n    return 2\n"
    module = cst.parse_module(source)
    lazy = Located(module, source, lazy=True)
    line = module.body[1].body.body[0]  # type: ignore[attr-defined]
    call = line.body[0].value
    assert lazy.range(call)[0].line == 4 and lazy.range(call)[0].column == 12
    recorded = set(lazy._state._inclusive)
    assert id(call) in recorded and id(line) in recorded  # the innermost block statement, indented
    assert not {id(module.body[0]), id(module.body[1]), id(module.body[2])} & recorded
    assert not lazy._complete


BLOCKS = """\
def f(x):
    if x:
        y = 1
    elif x > 2:
        y = 1
    else:
        y = 1
    try:
        y = 2
    except ValueError:
        y = 2
    finally:
        y = 2
    match x:
        case 1:
            y = 3
        case _:
            if y:
                y = 3
    while x:
      with open(x) as handle:
              y = 4
    for item in x:  # comment
        # leading
        y = 4
    else:
        y = 5
    class C:
        def g(self): return 6
    return y
"""


@pytest.mark.parametrize("source", [BLOCKS, BLOCKS.replace("    ", "  ")])
@pytest.mark.parametrize("seed", [0, 1])
def test_lazy_positions_in_every_kind_of_block(source: str, seed: int) -> None:
    # elif, else, except, finally, match cases (whose bodies are indented twice)
    # and blocks indented unevenly: each node placed as the one pass places it.
    assert _same_as_eager(source, seed)


def test_lazy_edits_are_the_eager_ones() -> None:
    source = '"""Doc."""\nfrom __future__ import annotations\n\nx = foo(1)\n\n\ndef f():\n    return foo(2)\n'
    module = cst.parse_module(source)
    calls = [node for node in _under_statements(module) if isinstance(node, cst.Call)]
    for call in calls:
        replacement = Replacement(call, call.with_changes(func=cst.Name("bar")))
        eager = Located(module, source).edits([replacement], ["torch"])
        lazy = Located(module, source, lazy=True).edits([replacement], ["torch"])
        assert lazy == eager and len(eager) == 2


def test_the_module_itself_renders_it_whole() -> None:
    source = "x = 1\n"
    module = cst.parse_module(source)
    lazy = Located(module, source, lazy=True)
    assert lazy.span(module) == (0, len(source))
    assert lazy._complete
