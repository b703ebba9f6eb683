"""Which class built a value: through assignments, self attributes and the
file's calls of its functions; and what the class's methods accept."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import List, Optional, Set

import libcst as cst

from torchlint.analysis import Facts
from torchlint.analysis.index import MethodShape, ProjectIndex

SOURCE = '''
import torch
from torch import optim
from .wrappers import Scheduled as Sched
from ..common.amp import Trainer
import pkg.wrappers as wrappers

class Local:
    def zero_grad(self):
        pass

class Child(Local):
    pass

class FromTorch(optim.SGD):
    pass

def inner(optimizer):
    optimizer.zero_grad()

def outer(model, optimizer, flag=False):
    inner(optimizer)

def main(model):
    opt = Sched(optim.Adam(model.parameters()))
    outer(model, opt)
    outer(model, optimizer=Local())
    either = Local() if model else Child()
    maybe = Local() if model else None
    plain = optim.SGD(model.parameters(), lr=0.1)
    module_made = wrappers.Scheduled(plain)
    other = Trainer()
    derived = Child()
    torch_child = FromTorch(model.parameters())
    escaped(opt)

def escaped(optimizer):
    optimizer.zero_grad()

handler = escaped

def defaults(optimizer=Local()):
    optimizer.zero_grad()

defaults()

def starred(optimizer):
    optimizer.zero_grad()

starred(*[Local()])

def build(model):
    if model:
        return Local()
    return Sched(optim.Adam(model.parameters()))

def build_or_nothing(model):
    if model:
        return Local()
    return

built = build(None)
nothing = build_or_nothing(None)

class Holder:
    def __init__(self):
        self.opt = Local()
        self.pair, self.other = Local(), Local()
        self.either = Local()

    def swap(self):
        self.either = optim.SGD([], lr=0.1)

    def use(self):
        self.opt.zero_grad()
        self.pair.zero_grad()
        self.either.zero_grad()
'''


def _facts(tmp_path: Path, project: Optional[ProjectIndex] = None) -> Facts:
    """The source as ``pkg/train/loop.py`` of a real package (relative imports resolve from it)."""
    for folder in (tmp_path / "pkg", tmp_path / "pkg" / "train"):
        folder.mkdir(exist_ok=True)
        (folder / "__init__.py").write_text("")
    path = tmp_path / "pkg" / "train" / "loop.py"
    path.write_text(textwrap.dedent(SOURCE))
    module = cst.parse_module(path.read_text())
    return Facts.of_module(module, project or ProjectIndex(), path=str(path))


def _name(facts: Facts, name: str, occurrence: int = -1) -> cst.Name:
    found: List[cst.Name] = [n for n in facts.nodes_of(cst.Name) if n.value == name]
    return found[occurrence]


def _receiver(facts: Facts, function: str) -> cst.BaseExpression:
    """The receiver of the `zero_grad()` call in ``function`` (a function or method name)."""
    for node in facts.nodes_of(cst.FunctionDef):
        if node.name.value == function:
            for call in [c for c in facts.nodes_of(cst.Call)]:
                if (isinstance(call.func, cst.Attribute) and call.func.attr.value == "zero_grad"
                        and _inside(facts, call, node)):
                    return call.func.value
    raise AssertionError(function)


def _inside(facts: Facts, node: cst.CSTNode, ancestor: cst.CSTNode) -> bool:
    current: Optional[cst.CSTNode] = node
    while current is not None:
        if current is ancestor:
            return True
        current = facts.parents.get(current)
    return False


def _makers(facts: Facts, expr: cst.BaseExpression) -> Optional[Set[str]]:
    found = facts.instances.makers(expr)
    if found is None:
        return None
    return {m.qualified or f"local:{m.local_name}" for m in found}


def test_a_parameter_holds_what_every_call_in_the_file_passes(tmp_path: Path) -> None:
    facts = _facts(tmp_path)
    # inner(optimizer) <- outer(model, optimizer) <- main: Sched(...) and Local()
    assert _makers(facts, _receiver(facts, "inner")) == {"pkg.train.wrappers.Scheduled", "local:Local"}


def test_relative_and_module_imports_give_absolute_names(tmp_path: Path) -> None:
    facts = _facts(tmp_path)
    assert facts.instances.absolute_name(_name(facts, "Sched")) == "pkg.train.wrappers.Scheduled"
    assert facts.instances.absolute_name(_name(facts, "Trainer")) == "pkg.common.amp.Trainer"
    assert _makers(facts, _name(facts, "module_made", 0)) == {"pkg.wrappers.Scheduled"}
    assert _makers(facts, _name(facts, "plain", 0)) == {"torch.optim.SGD"}


def test_branches_and_self_attributes(tmp_path: Path) -> None:
    facts = _facts(tmp_path)
    assert _makers(facts, _name(facts, "either", 0)) == {"local:Local", "local:Child"}
    assert _makers(facts, _name(facts, "maybe", 0)) == {"local:Local"}  # None is not a maker


def test_what_cannot_be_followed_is_unknown(tmp_path: Path) -> None:
    facts = _facts(tmp_path)
    assert _makers(facts, _receiver(facts, "escaped")) is None  # `handler = escaped`: called elsewhere
    assert _makers(facts, _receiver(facts, "starred")) is None  # *args cannot be matched
    assert _makers(facts, _receiver(facts, "defaults")) == {"local:Local"}  # the default


def test_self_attributes_need_every_write_to_be_known(tmp_path: Path) -> None:
    facts = _facts(tmp_path)
    receivers = {}
    for call in facts.nodes_of(cst.Call):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "zero_grad":
            receiver = call.func.value
            if isinstance(receiver, cst.Attribute):
                receivers[receiver.attr.value] = receiver
    assert _makers(facts, receivers["opt"]) == {"local:Local"}
    assert _makers(facts, receivers["pair"]) is None  # written by an unpacking
    assert _makers(facts, receivers["either"]) == {"local:Local", "torch.optim.SGD"}  # every method's writes


def test_methods_of_local_and_project_classes(tmp_path: Path) -> None:
    index = ProjectIndex(methods={"pkg.train.wrappers.Scheduled": {"zero_grad": MethodShape((), 0)}})
    facts = _facts(tmp_path, index)
    shapes = {}
    for maker in facts.instances.makers(_receiver(facts, "inner")) or ():
        shapes[maker.qualified or maker.local_name] = facts.instances.method(maker, "zero_grad")
    assert shapes == {"pkg.train.wrappers.Scheduled": MethodShape((), 0), "Local": MethodShape((), 0)}
    derived = facts.instances.makers(_name(facts, "derived", 0)) or frozenset()
    assert [facts.instances.method(m, "zero_grad") for m in derived] == [MethodShape((), 0)]  # inherited
    torch_child = facts.instances.makers(_name(facts, "torch_child", 0)) or frozenset()
    assert [facts.instances.method(m, "zero_grad") for m in torch_child] == [None]  # torch's: not known here
    plain = facts.instances.makers(_name(facts, "plain", 0)) or frozenset()
    assert [facts.instances.method(m, "zero_grad") for m in plain] == [None]


def test_a_call_of_a_file_function_gives_what_its_returns_give(tmp_path: Path) -> None:
    facts = _facts(tmp_path)
    assert _makers(facts, _name(facts, "built", 0)) == {"local:Local", "pkg.train.wrappers.Scheduled"}
    assert _makers(facts, _name(facts, "nothing", 0)) is None  # a bare return


def test_the_one_call_a_name_or_attribute_was_built_by(tmp_path: Path) -> None:
    facts = _facts(tmp_path)
    attributes = {}
    for call in facts.nodes_of(cst.Call):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "zero_grad":
            receiver = call.func.value
            if isinstance(receiver, cst.Attribute):
                attributes[receiver.attr.value] = receiver
    built = facts.instances.construction(attributes["opt"])
    assert built is not None and cst.Module([]).code_for_node(built) == "Local()"
    assert facts.instances.construction(attributes["either"]) is None  # written by two methods
    assert facts.instances.construction(attributes["pair"]) is None  # an unpacking
    plain = facts.instances.construction(_name(facts, "plain", 0))
    assert plain is not None and cst.Module([]).code_for_node(plain).startswith("optim.SGD(")
    assert facts.instances.construction(_receiver(facts, "inner")) is None  # a parameter
