"""Value inference: from constructors, bindings, annotations, __init__ and returns."""

from __future__ import annotations

import re
import textwrap
from typing import Optional

import libcst as cst

from torchlint.analysis import Facts
from torchlint.analysis.values import DeviceKind, Value, ValueKind, Values

SOURCE = '''
import torch
from torch import nn, optim
from torch.utils.data import DataLoader, TensorDataset

class Net(nn.Module):
    pass

class Deeper(Net):
    pass

class NotAModel:
    pass

def make():
    return Deeper()

class Trainer:
    def __init__(self, model: nn.Module, other):
        self.model = Net().cuda()
        self.opt = optim.SGD(self.model.parameters(), lr=0.1)
        self.scaler = torch.cuda.amp.GradScaler()
        self.plain = NotAModel()
        self.wrapped = model

    def fit(self, loader: DataLoader, scale=1.0):
        self.model
        self.opt
        self.scaler
        self.plain
        self.wrapped
        loader
        scale

def main(net, device="cpu"):
    built = make()
    dev = torch.device("cuda")
    t = torch.zeros(3, device=dev, dtype=torch.float16)
    c = torch.ones(2)
    loader = DataLoader(TensorDataset(t))
    opt = torch.optim.Adam(net.parameters())
    loss_fn = nn.CrossEntropyLoss()
    layer = nn.Linear(2, 2).to(device)
    built, dev, t, c, loader, opt, loss_fn, layer, net, device
'''


def facts(source: str = SOURCE) -> Values:
    return Facts.of_module(cst.parse_module(textwrap.dedent(source))).values


def find(values: Values, source: str, spelled: str, index: int = -1) -> Optional[Value]:
    """The value of the ``index``-th expression spelled ``spelled``."""
    module = values._module
    found = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, cst.BaseExpression) and module.code_for_node(node) == spelled:
                found.append(node)
            return True

    module.visit(Collect())
    assert found, spelled
    return values.of(found[index])


def kind(spelled: str, index: int = -1, source: str = SOURCE) -> Optional[ValueKind]:
    value = find(facts(source), source, spelled, index)
    return value.kind if value is not None else None


def test_constructors_by_qualified_name() -> None:
    assert kind("dev") is ValueKind.DEVICE
    assert kind("t") is ValueKind.TENSOR
    assert kind("loader") is ValueKind.DATALOADER
    assert kind("opt") is ValueKind.OPTIMIZER
    assert kind("loss_fn") is ValueKind.LOSS
    assert kind("layer") is ValueKind.MODEL
    assert kind("TensorDataset(t)") is ValueKind.DATASET


def test_file_subclasses_of_module_and_simple_returns() -> None:
    value = find(facts(), SOURCE, "built")
    assert value is not None and value.kind is ValueKind.MODEL and value.local_class == "Deeper"
    assert kind("NotAModel()") is None


def test_init_attributes_seen_from_other_methods() -> None:
    assert kind("self.model") is ValueKind.MODEL
    assert kind("self.opt") is ValueKind.OPTIMIZER
    assert kind("self.scaler") is ValueKind.GRAD_SCALER
    assert kind("self.plain") is None
    model = find(facts(), SOURCE, "self.model")
    assert model is not None and model.device is not None and model.device.kind is DeviceKind.ACCELERATOR


def test_parameters_from_annotations_and_use() -> None:
    assert kind("self.wrapped") is ValueKind.MODEL  # `model: nn.Module` in __init__
    assert kind("loader") is ValueKind.DATALOADER  # the last one, in main
    assert kind("loader", index=-3) is ValueKind.DATALOADER  # fit's annotated parameter
    assert kind("net") is ValueKind.MODEL  # Adam(net.parameters())
    assert kind("scale") is None


def test_tensor_device_and_dtype() -> None:
    value = find(facts(), SOURCE, "t")
    assert value is not None and value.dtype == "float16"
    assert value.device is not None and value.device.kind is DeviceKind.ACCELERATOR
    plain = find(facts(), SOURCE, "c")
    assert plain is not None and plain.device is not None and plain.device.is_cpu


def test_lookalikes_do_not_resolve() -> None:
    source = '''
    import mylib as torch
    class Module: pass
    class Net(Module): pass
    def f(model, optimizer, loader):
        m = Net()
        t = torch.zeros(3)
        model, optimizer, loader, m, t
    '''
    for name in ("model", "optimizer", "loader", "m", "t"):
        assert kind(name, source=source) is None, name


def test_local_rebinding_hides_the_import() -> None:
    source = '''
    import torch
    def f(fake):
        torch = fake
        x = torch.zeros(3)
        x
    '''
    assert kind("x", source=source) is None


def test_device_inference_follows_assignments() -> None:
    source = '''
    import torch
    cpu_dev = "cpu"
    gpu = "cuda:1"
    maybe = "cuda" if flag else "cpu"
    not_device = torch.float16
    def f(device):
        cpu_dev, gpu, maybe, not_device, device
    '''
    values = facts(source)
    pattern = re.compile(r"device")

    def device(name: str):  # type: ignore[no-untyped-def]
        module = values._module
        names = []

        class Collect(cst.CSTVisitor):
            def visit_Name(self, node: cst.Name) -> None:
                if node.value == name:
                    names.append(node)

        module.visit(Collect())
        return values.device_of(names[-1], pattern)

    assert device("cpu_dev").kind is DeviceKind.CPU
    assert device("gpu").kind is DeviceKind.ACCELERATOR
    assert device("maybe").kind is DeviceKind.VARIABLE
    assert device("not_device") is None
    assert device("device").kind is DeviceKind.VARIABLE  # only through the configured pattern
    assert values.device_of(cst.parse_expression("device")) is None


def test_tl201_hint_follows_the_binding_not_the_spelling() -> None:
    """A parameter named like a module-level TensorDataset is not one."""
    from torchlint.lint.engine import LintConfig, lint_source
    from torchlint.ruleapi.registry import by_code_or_name

    rule = by_code_or_name("TL201")
    assert rule is not None
    source = textwrap.dedent('''
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        ds = TensorDataset(torch.zeros(3))
        loader = DataLoader(ds)
        def f(ds):
            return DataLoader(ds)
    ''')
    found = lint_source(source, "x.py", LintConfig(rules=(rule,)))
    assert [("TensorDataset" in (d.hint or "")) for d in found] == [True, False]


CONDITIONAL = '''
import torch
from torch import nn

def run(amp, flag, given: torch.amp.GradScaler):
    scaler = torch.cuda.amp.GradScaler() if amp else None
    either = nn.Linear(2, 2) if flag else nn.Conv2d(1, 1, 1)
    mixed = nn.Linear(2, 2) if flag else torch.zeros(2)
    nothing = None if flag else None
    scaler, either, mixed, nothing, given
'''


def test_conditional_values_keep_what_the_branches_agree_on() -> None:
    assert kind("scaler", source=CONDITIONAL) is ValueKind.GRAD_SCALER  # the None branch is no other kind
    assert kind("either", source=CONDITIONAL) is ValueKind.MODEL
    assert kind("mixed", source=CONDITIONAL) is None
    assert kind("nothing", source=CONDITIONAL) is None


def test_grad_scaler_annotation() -> None:
    assert kind("given", source=CONDITIONAL) is ValueKind.GRAD_SCALER


def test_self_method_returns() -> None:
    source = '''
import torch
from torch.utils.data import DataLoader

class Featurizer:
    def load(self, files):
        loader = DataLoader(files, batch_size=4)
        return loader

    @staticmethod
    def helper(files):
        return DataLoader(files)

    def run(self, files):
        data = self.load(files)
        other = self.missing(files)
        data, other
'''
    assert kind("data", source=source) is ValueKind.DATALOADER
    assert kind("other", source=source) is None


def test_self_method_of_a_staticmethod_is_not_an_instance() -> None:
    source = '''
from torch.utils.data import DataLoader

class Tools:
    def load(self):
        return DataLoader([])

    @staticmethod
    def run(self):
        data = self.load()
        data
'''
    assert kind("data", source=source) is None
