"""Training facts: grad-mode regions, eval/train, backward and steps, loops, call graph."""

from __future__ import annotations

import textwrap
from typing import Dict, List

import libcst as cst

from torchlint.analysis import Facts
from torchlint.analysis.training import FunctionFacts, GradMode, Training
from torchlint.analysis.values import ValueKind

SOURCE = '''
import torch
from torch import nn, optim
from torch.utils.data import DataLoader

class Net(nn.Module):
    pass

def step(model, opt, x):
    loss = model(x).sum()
    loss.backward()
    opt.step()

class Trainer:
    def __init__(self):
        self.model = Net()
        self.opt = optim.SGD(self.model.parameters(), lr=0.1)
        self.scaler = torch.cuda.amp.GradScaler()

    def fit(self, loader: DataLoader):
        for epoch in range(3):
            for x in loader:
                self.opt.zero_grad()
                self.scaler.scale(self.model(x).sum()).backward()
                self.scaler.step(self.opt)
                self.opt.step()

    @torch.no_grad()
    def evaluate(self, x):
        self.model.eval()
        return self.model(x)

    def check(self, x):
        self.model.train(False)
        y = self.model(x)
        self.model.train()
        return y

def grads(model, x):
    return torch.autograd.grad(model(x).sum(), list(model.parameters()))

def inspect(p):
    return p.grad

def main():
    loader = DataLoader([1, 2])
    model = Net()
    opt = optim.Adam(model.parameters())
    for epoch in range(2):
        for x in loader:
            step(model, opt, x)
    with torch.no_grad():
        check_all(model)
    with torch.set_grad_enabled(False):
        pass
    with torch.set_grad_enabled(flag):
        pass
    check_all(model)

def check_all(model):
    return model

def scored():
    with torch.inference_mode():
        evaluate_only()

def evaluate_only():
    pass
'''


def training(source: str = SOURCE) -> Training:
    return Facts.of_module(cst.parse_module(textwrap.dedent(source))).training


def by_name(found: Training) -> Dict[str, FunctionFacts]:
    return {f.node.name.value: f for f in found.functions.values() if isinstance(f.node, cst.FunctionDef)}


def test_backward_steps_and_autograd_grad() -> None:
    functions = by_name(training())
    assert len(functions["step"].backward) == 1
    assert functions["step"].optimizer_steps == []  # `opt` is a bare parameter: unknown
    fit = functions["fit"]
    assert len(fit.backward) == 1 and len(fit.optimizer_steps) == 1 and len(fit.scaler_steps) == 1
    assert len(functions["grads"].autograd_grad) == 1 and functions["grads"].computes_gradients
    assert len(functions["inspect"].grad_reads) == 1
    assert not functions["check_all"].computes_gradients


def test_grad_regions_from_with_and_decorators() -> None:
    found = training()
    functions = by_name(found)
    assert functions["evaluate"].decorated_mode is GradMode.DISABLED
    main = functions["main"]
    modes = [region.mode for region in main.regions]
    assert modes == [GradMode.DISABLED, GradMode.DISABLED]  # set_grad_enabled(flag) is not known
    disabled = [call for call in main.calls if found.grad_disabled(call.call)]
    assert len(disabled) == 1  # check_all(model) inside `with torch.no_grad()`


def test_eval_and_train_calls_with_their_receiver() -> None:
    functions = by_name(training())
    evaluate = functions["evaluate"].mode_calls
    assert [c.train for c in evaluate] == [False]
    assert evaluate[0].value is not None and evaluate[0].value.kind is ValueKind.MODEL
    assert [c.train for c in functions["check"].mode_calls] == [False, True]


def test_training_and_epoch_loops() -> None:
    found = training()
    functions = by_name(found)
    outer, inner = functions["fit"].loops
    assert inner.over_dataloader and not outer.over_dataloader
    assert found.is_training_loop(inner) and found.is_training_loop(outer)
    assert found.is_epoch_loop(outer) and not found.is_epoch_loop(inner)
    main_outer, main_inner = functions["main"].loops
    assert found.is_training_loop(main_inner)  # through step(), a function of the file
    assert found.is_epoch_loop(main_outer)


def test_call_graph_and_no_grad_callers() -> None:
    found = training()
    functions = by_name(found)
    check_all = functions["check_all"].node
    evaluate_only = functions["evaluate_only"].node
    assert isinstance(check_all, cst.FunctionDef) and isinstance(evaluate_only, cst.FunctionDef)
    assert len(found.callers(check_all)) == 2
    assert found.called_under_no_grad(check_all) and not found.called_only_under_no_grad(check_all)
    assert found.called_only_under_no_grad(evaluate_only)
    step = functions["step"].node
    assert isinstance(step, cst.FunctionDef) and found.reaches_backward(step)
    assert found.reaches_backward(functions["main"].node)
    assert not found.reaches_backward(check_all)


def test_self_method_calls_are_edges() -> None:
    found = training('''
    class T:
        def a(self):
            self.b()
        def b(self):
            pass
        def c(other):
            other.b()
    ''')
    functions = by_name(found)
    b = functions["b"].node
    assert isinstance(b, cst.FunctionDef)
    assert [edge.caller for edge in found.callers(b)] == [functions["a"].node, functions["c"].node]


def test_lookalike_grad_contexts_do_not_count() -> None:
    found = training('''
    import mylib as torch
    def no_grad():
        pass
    def f(model):
        with torch.no_grad():
            model.eval()
        with no_grad():
            pass
        model.backward_hook()
    ''')
    f = by_name(found)["f"]
    assert f.regions == [] and f.backward == []


def test_calls_in_the_same_step_as_backward() -> None:
    source = """
    import torch

    def helper(x):
        return x

    def train(loader, model):
        for x in loader:
            helper(x)
            model(x).sum().backward()

    def epochs(loader, model):
        for epoch in range(3):
            for x in loader:
                model(x).sum().backward()
            helper(epoch)

    def one_step(model, x):
        out = helper(x)
        out.sum().backward()

    def plain(x):
        return helper(x)
    """
    found = training(source)
    helper = by_name(found)["helper"].node
    assert isinstance(helper, cst.FunctionDef)
    steps = {edge.caller.name.value: found.in_training_step(edge.call)
             for edge in found.callers(helper) if isinstance(edge.caller, cst.FunctionDef)}
    # The epoch loop trains only in its inner loop: `helper(epoch)` is not in that step.
    assert steps == {"train": True, "epochs": False, "one_step": True, "plain": False}


LOADER_PARAMETERS = '''
import torch
import dgl
from torch.utils.data import DataLoader
from torch_geometric.loader import NeighborLoader

def evaluate(model, loader):
    for batch in loader:
        model(batch)

def evaluate_graphs(model, loader):
    for batch in enumerate(loader):
        model(batch)

def mixed(model, items):
    for batch in items:
        model(batch)

def never_called(model, loader):
    for batch in loader:
        model(batch)

def main(model, dataset, graph):
    evaluate(model, DataLoader(dataset))
    evaluate(model, loader=DataLoader(dataset, batch_size=2))
    graph_loader = dgl.dataloading.DataLoader(graph, [0], None)
    evaluate_graphs(model, graph_loader)
    evaluate_graphs(model, NeighborLoader(graph))
    mixed(model, DataLoader(dataset))
    mixed(model, [1, 2, 3])
'''


def test_loops_over_a_parameter_every_caller_fills_with_a_loader() -> None:
    functions = by_name(training(LOADER_PARAMETERS))
    assert functions["evaluate"].loops[0].over_dataloader
    assert functions["evaluate_graphs"].loops[0].over_dataloader  # dgl's and PyG's loaders
    assert not functions["mixed"].loops[0].over_dataloader  # one caller passes a list
    assert not functions["never_called"].loops[0].over_dataloader


SETUP = '''
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from project import make_optimizer

def experiment(model_fn, batch):
    model = DDP(model_fn())
    opt = make_optimizer(model)
    model(batch).sum().backward()
    opt.step()

def sgd_run(model, batch):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model(batch).sum().backward()
    opt.step()

def step(model, opt, batch):
    model(batch).sum().backward()
    opt.step()

def aliased(trainer, batch):
    opt = trainer.opt
    opt.step()
'''


def test_setup_calls_build_or_wrap_what_the_function_trains() -> None:
    functions = by_name(training(SETUP))
    names = {f: [cst.Module([]).code_for_node(c.call.func) for c in functions[f].setup_calls] for f in functions}
    assert sorted(names["experiment"]) == ["DDP", "make_optimizer"]
    assert names["sgd_run"] == ["torch.optim.SGD"]
    assert names["step"] == []  # the optimizer comes in as a parameter
    assert names["aliased"] == []  # bound from an attribute, not built here


LIGHTNING = '''
import torch
import pytorch_lightning as pl
from lightning.pytorch import LightningModule
from torch import nn

class Lit(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        return self.net(batch).sum()

    def on_test_batch_end(self, outputs, batch, batch_idx):
        self.helper(batch)

    def training_step(self, batch, batch_idx):
        loss = self.net(batch).sum()
        self.manual_backward(loss)

    @torch.enable_grad()
    def predict_step(self, batch, batch_idx):
        return self.net(batch)

class Child(Lit):
    def test_step(self, batch, batch_idx):
        return self.net(batch)

class Direct(LightningModule):
    def validation_step(self, batch, batch_idx):
        return self.net(batch)

class Plain(nn.Module):
    def validation_step(self, batch, batch_idx):
        return self.net(batch)

    def training_step(self, batch):
        self.manual_backward(self.net(batch).sum())
'''


def test_lightning_evaluation_hooks_run_without_grad_and_manual_backward_is_a_backward() -> None:
    facts = Facts.of_module(cst.parse_module(LIGHTNING))
    modes = {}
    for node, found in facts.training.functions.items():
        if isinstance(node, cst.FunctionDef):
            owner = next(c for c in facts.nodes_of(cst.ClassDef) if any(s is node for s in c.body.body))
            modes[(owner.name.value, node.name.value)] = (found.decorated_mode, len(found.backward))
    assert modes[("Lit", "validation_step")] == (GradMode.DISABLED, 0)
    assert modes[("Lit", "on_test_batch_end")] == (GradMode.DISABLED, 0)
    assert modes[("Lit", "training_step")] == (None, 1)
    assert modes[("Lit", "predict_step")] == (GradMode.ENABLED, 0)  # the author's decorator wins
    assert modes[("Child", "test_step")] == (GradMode.DISABLED, 0)  # through a class of the file
    assert modes[("Direct", "validation_step")] == (GradMode.DISABLED, 0)
    # The same names on a plain nn.Module are nothing special.
    assert modes[("Plain", "validation_step")] == (None, 0)
    assert modes[("Plain", "training_step")] == (None, 0)


def test_accelerate_backward_is_a_backward_pass() -> None:
    source = textwrap.dedent('''
    from accelerate import Accelerator

    class Loop:
        def __init__(self):
            self.accelerator = Accelerator()

        def fit(self, loader):
            for batch in loader:
                self.accelerator.backward(self.model(batch).loss)
                self.optimizer.step()

    def main(loader):
        accelerator = Accelerator()
        for batch in loader:
            accelerator.backward(model(batch).loss)
            optimizer.step()
    ''')
    facts = Facts.of_module(cst.parse_module(source))
    trained = sorted(node.name.value for node, found in facts.training.functions.items()
                     if isinstance(node, cst.FunctionDef) and any(facts.training.is_training_loop(l) for l in found.loops))
    assert trained == ["fit", "main"]


def test_simple_statements_know_their_grad_mode() -> None:
    """The grad-mode fact answers for a statement as for a call: the innermost
    grad-mode context around it within its function decides (``with A, B:``
    enters ``B`` last), a decorator counts, a nested function starts afresh."""
    source = textwrap.dedent('''
        import torch

        def f(loss, total):
            total += loss
            with torch.no_grad():
                a = total + loss
                with torch.enable_grad():
                    b = total + loss
            with torch.no_grad(), torch.enable_grad(): c = total + loss
            with torch.enable_grad(), torch.no_grad(): d = total + loss

        @torch.no_grad()
        def g(loss, total):
            e = total + loss

            def inner():
                h = total + loss
    ''')
    module = cst.parse_module(source)
    found = Facts.of_module(module).training
    statements = {cst.ensure_type(s.targets[0].target, cst.Name).value: s for s in _walk_assigns(module)}
    disabled = {name for name, statement in statements.items() if found.grad_disabled(statement)}
    assert disabled == {"a", "d", "e"}


def _walk_assigns(module: cst.Module) -> List[cst.Assign]:
    found: List[cst.Assign] = []

    class Visitor(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if isinstance(node.targets[0].target, cst.Name):
                found.append(node)

    module.visit(Visitor())
    return found
