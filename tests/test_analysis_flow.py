"""The flow fact (torchlint/analysis/flow.py): reaching definitions in both
directions and branch exclusivity, and the rules that ask it (TL402 follows
assignments through it, TL601 asks which branches exclude each other)."""

from __future__ import annotations

import textwrap
from typing import List, Sequence

import libcst as cst

from torchlint.analysis import Facts
from torchlint.analysis.scopes import BindingKind
from torchlint.lint.engine import LintConfig, lint_source
from torchlint.ruleapi.registry import rule_class


def _facts(source: str) -> Facts:
    return Facts.of_module(cst.parse_module(textwrap.dedent(source)))


def _names(facts: Facts, name: str) -> List[cst.Name]:
    return [node for node in facts.nodes_of(cst.Name) if node.value == name]


def _lines(facts: Facts, nodes: Sequence[cst.CSTNode]) -> List[int]:
    return [facts.positions[node].start.line for node in nodes]


def _reported(code: str, source: str) -> List[int]:
    config = LintConfig(rules=(rule_class(code),), precheck=False)
    return [d.start.line for d in lint_source(textwrap.dedent(source), "case.py", config)]


BRANCHES = """
def f(a, flag):
    x = a
    if flag:
        x = a + 1
    else:
        print(x)
    return x
"""


def test_every_binding_that_reaches_a_read_and_every_read_a_binding_reaches() -> None:
    facts = _facts(BRANCHES)
    flow = facts.flow
    reads = _names(facts, "x")  # x = a (line 3), x = a + 1 (5), print(x) (7), return x (8)
    found = flow.reaching_bindings(reads[3])
    assert found is not None
    assert [b.kind for b in found] == [BindingKind.ASSIGN, BindingKind.ASSIGN]
    assert _lines(facts, [b.node for b in found]) == [3, 5]
    inside = flow.reaching_bindings(reads[2])
    assert inside is not None and _lines(facts, [b.node for b in inside]) == [3]
    # Forward: the first assignment reaches the read in the else and the return, the second only the return.
    assert _lines(facts, flow.reads_reached(reads[0]) or ()) == [7, 8]
    assert _lines(facts, flow.reads_reached(reads[1]) or ()) == [8]


def test_a_read_before_any_write_has_no_reaching_binding_but_bindings_at_falls_back() -> None:
    facts = _facts("""
        def f():
            print(y)
            y = 1
            y = 2
    """)
    read = _names(facts, "y")[0]
    assert facts.flow.reaching_bindings(read) == ()
    assert len(facts.flow.bindings_at(read)) == 2  # every binding, as Scopes.resolve gives them


def test_a_loop_brings_its_own_assignment_back_to_the_reads_before_it() -> None:
    facts = _facts("""
        def f(a, n):
            x = a
            for _ in range(n):
                x = x * 2
            return x
    """)
    flow = facts.flow
    first, target, read, returned = _names(facts, "x")
    loop_read = flow.reaching_bindings(read)
    assert loop_read is not None and _lines(facts, [b.node for b in loop_read]) == [3, 5]
    assert _lines(facts, flow.reads_reached(target) or ()) == [5, 6]


def _ifs(facts: Facts) -> List[cst.If]:
    return list(facts.nodes_of(cst.If))


def _calls(facts: Facts, name: str) -> List[cst.Call]:
    return [c for c in facts.nodes_of(cst.Call) if isinstance(c.func, cst.Name) and c.func.value == name]


def test_tests_written_alike_are_one_condition_unless_a_name_is_rebound_between() -> None:
    facts = _facts("""
        def f(amp, cfg):
            if amp:
                one()
            if amp:
                pass
            else:
                two()
            if cfg["amp"]:
                three()
            if cfg["amp"]:
                pass
            else:
                four()
            amp = not amp
            if amp:
                pass
            else:
                five()
    """)
    flow = facts.flow
    one, two, three, four, five = (_calls(facts, n)[0] for n in ("one", "two", "three", "four", "five"))
    assert flow.exclusive(one, two)
    assert flow.exclusive(three, four)  # an index written alike twice answers alike
    assert not flow.exclusive(one, five)  # `amp` was assigned again in between
    assert not flow.exclusive(one, three)


def test_a_test_that_binds_a_name_is_never_the_same_condition() -> None:
    facts = _facts("""
        def f(x):
            if (y := x):
                one()
            if (y := x):
                pass
            else:
                two()
    """)
    assert not facts.flow.exclusive(_calls(facts, "one")[0], _calls(facts, "two")[0])


CLIP = """
import torch
scaler = torch.amp.GradScaler("cuda")

def step(model, opt, loss, amp):
    if amp:
        scaler.scale(loss).backward()
    else:
        loss.backward()
    amp = not amp
    if amp:
        scaler.step(opt)
    else:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
"""


def test_tl601_sees_a_flag_assigned_again_between_backward_and_clip() -> None:
    # Before the flow fact, TL601 compared the two tests' text only: `if amp:`
    # after `amp = not amp` was taken for the same condition, and the clip
    # that runs right after the scaled backward was missed.
    assert _reported("TL601", CLIP) == [14]
    assert _reported("TL601", CLIP.replace("    amp = not amp\n", "")) == []


def test_tl601_takes_an_index_written_alike_for_one_condition() -> None:
    source = CLIP.replace("    amp = not amp\n", "").replace("if amp:", 'if cfg["amp"]:').replace(", amp)", ", cfg)")
    assert _reported("TL601", source) == []


ATTENTION = """
import torch

def attend(q, k, v, w, flag):
    s = q @ w
    if flag:
        s = q @ k.transpose(-2, -1)
    attn = s.softmax(dim=-1)
    return attn @ v
"""


def test_tl402_asks_every_assignment_that_reaches_the_softmax() -> None:
    # Before, TL402 followed only the last assignment written above the
    # softmax: this function was reported, and the same code with the two
    # assignments swapped was not.  Now both assignments reach it, and only
    # one of them is query-key scores: neither order is reported.
    assert _reported("TL402", ATTENTION) == []
    swapped = ATTENTION.replace("s = q @ w", "s = q @ k.transpose(-2, -1)", 1).replace(
        "        s = q @ k.transpose(-2, -1)", "        s = q @ w")
    assert _reported("TL402", swapped) == []
    both = ATTENTION.replace("s = q @ w", "s = (q @ k.transpose(-2, -1)) * 0.5")
    assert _reported("TL402", both) == [8]


def test_tl402_follows_scores_through_augmented_assignments_and_loops() -> None:
    added = """
        import torch

        def attend(q, k, v, bias, n):
            attn = q @ k.transpose(-2, -1)
            attn += bias
            for _ in range(n):
                attn = attn * 0.5
            attn = attn.softmax(dim=-1)
            return attn @ v
    """
    assert _reported("TL402", added) == [9]


def test_tl402_is_linear_when_many_assignments_reach_a_read() -> None:
    steps = "".join(f"    if c{i % 4}: x = x + 1\n" for i in range(40))
    source = ("import torch\n\ndef attend(q, k, v, c0, c1, c2, c3):\n    x = q @ k.transpose(-2, -1)\n"
              + steps + "    p = x.softmax(dim=-1)\n    return p @ v\n")
    assert _reported("TL402", source) == [45]
