"""Summaries of the project's callables, across files, and the table of
library wrappers they fall back on."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import libcst as cst
import pytest

from torchlint.analysis import Facts
from torchlint.analysis.queries import build, index_of_sources, summaries
from torchlint.analysis.summaries import (
    _from_json, _to_json, link, summarize_file, summarize_sources, summarize_tree,
)
from torchlint.data.apidata import DataError, read_wrappers, star_exports, wrappers

PROJECT = {
    "utils": '''
import torch
from torch.utils.data import DistributedSampler, RandomSampler


class MetricLogger:
    def log_every(self, iterable, print_freq, header=None):
        for i, obj in enumerate(iterable):
            yield obj


def make_sampler(ds, distributed=False):
    if distributed:
        return DistributedSampler(ds)
    return RandomSampler(ds)


def forever(loader):
    while True:
        for batch in loader:
            yield batch


class Scaler:
    def __init__(self):
        self._scaler = torch.cuda.amp.GradScaler()

    def __call__(self, loss, optimizer):
        self._scaler.scale(loss).backward()
        self._scaler.step(optimizer)
''',
    "engine": '''
import utils
from tqdm import tqdm


def train_one_epoch(model, loader, optimizer, loss_scaler):
    logger = utils.MetricLogger()
    for x, y in logger.log_every(loader, 10):
        loss_scaler(model(x).mean(), optimizer)


def step(model, batch):
    model(batch).mean().backward()


def epoch(model, loader):
    for i, batch in enumerate(tqdm(loader)):
        step(model, batch)


def evaluate(model, loader):
    return [model(x) for x in loader]
''',
    "main": '''
from engine import train_one_epoch
from timm.utils import NativeScaler


def main(model, loader, opt):
    scaler = NativeScaler()
    for e in range(3):
        train_one_epoch(model, loader, opt, scaler)
''',
}


def _linked():  # type: ignore[no-untyped-def]
    return summarize_sources([(module, text, False) for module, text in PROJECT.items()])


def test_what_functions_do_to_their_parameters() -> None:
    found = _linked()
    log_every = found.of("utils.MetricLogger.log_every")
    assert log_every is not None and log_every.yields_from == {"iterable"} and log_every.iterates == {"iterable"}
    assert found.of("utils.forever").repeats == {"loader"}  # iterated again and again
    step = found.of("engine.step")
    assert step is not None and step.runs == {"backward"} and not step.loop_runs  # one training step
    epoch = found.of("engine.epoch")
    assert epoch is not None and epoch.loop_runs == {"backward"} and epoch.iterates == {"loader"}  # a training loop
    evaluate = found.of("engine.evaluate")
    assert evaluate is not None and evaluate.iterates == {"loader"} and not evaluate.runs and not evaluate.loop_runs
    scaler = found.of("utils.Scaler.__call__")
    assert scaler is not None and scaler.runs == {"backward"}


def test_a_parameter_called_is_what_every_project_call_passes() -> None:
    found = _linked()
    assert found.maker_of("engine.train_one_epoch", "loss_scaler") == "timm.utils.NativeScaler"
    trains = found.of("engine.train_one_epoch")
    assert trains is not None and trains.loop_runs == {"backward", "step"}  # timm's scaler, from the table
    assert trains.iterates == {"loader"}  # through the logger's generator


def test_callers_that_disagree_leave_a_called_parameter_unknown() -> None:
    sources = dict(PROJECT)
    sources["other"] = "from engine import train_one_epoch\ntrain_one_epoch(m, l, o, print)\n"
    found = summarize_sources([(module, text, False) for module, text in sources.items()])
    assert found.maker_of("engine.train_one_epoch", "loss_scaler") is None
    trains = found.of("engine.train_one_epoch")
    assert trains is not None and not trains.loop_runs


def test_what_a_factory_builds_depends_on_the_literal_it_is_given() -> None:
    sampler = _linked().of("utils.make_sampler")
    assert sampler is not None
    assert sampler.builds({"distributed": True}) == "torch.utils.data.DistributedSampler"
    assert sampler.builds({"distributed": False}) == "torch.utils.data.RandomSampler"
    assert sampler.builds({}) is None  # a run-time choice


def test_methods_are_found_through_project_bases() -> None:
    found = summarize_sources([
        ("base", "class Trainer:\n    def fit(self, loader):\n        for b in loader:\n            b.backward()\n", False),
        ("mine", "from base import Trainer\nclass Mine(Trainer):\n    pass\n", False),
    ])
    fit = found.of("mine.Mine.fit")
    assert fit is not None and fit.loop_runs == {"backward"}


def test_calls_in_a_file_resolve_to_summaries_and_wrappers(tmp_path: Path) -> None:
    index = index_of_sources(dict((f"{module}.py", text) for module, text in PROJECT.items()), [summaries()])
    source = '''
import utils
from engine import train_one_epoch
from tqdm import tqdm
from accelerate import Accelerator
from timm.utils import NativeScaler

def run(model, loader, opt, flag):
    logger = utils.MetricLogger()
    for batch in logger.log_every(tqdm(loader), 5):
        pass
    sampler = utils.make_sampler(ds, distributed=True)
    maybe = utils.make_sampler(ds, distributed=flag)
    scaler = NativeScaler()
    scaler(loss, opt)
    train_one_epoch(model, loader, opt, scaler)
'''
    module = cst.parse_module(source)
    facts = Facts.of_module(module, index, path=str(tmp_path / "run.py"), source=source)
    calls = {facts.located.line(call): call for call in reversed(facts.nodes_of(cst.Call))}  # the outermost per line
    callees = facts.callees
    yielded = callees.yielded(calls[10])
    assert [module.code_for_node(v) for v in yielded] == ["tqdm(loader)"]
    assert [module.code_for_node(v) for v in callees.yielded(yielded[0])] == ["loader"]  # type: ignore[arg-type]
    assert callees.builds(calls[12]) == "torch.utils.data.DistributedSampler"
    assert callees.builds(calls[13]) is None
    assert facts.values.kind(calls[12]).value == "sampler"  # type: ignore[union-attr]
    assert callees.runs(calls[15]) == (frozenset({"backward", "step"}), frozenset(), True)  # a library step
    assert callees.runs(calls[16])[1] == {"backward", "step"}  # a whole training loop
    assert [module.code_for_node(v) for v in callees.iterated(calls[16])] == ["loader"]
    loops = facts.training.function(next(iter(f for f in facts.training.functions if isinstance(f, cst.FunctionDef))))
    assert loops.backward and loops.training_calls


def test_summaries_are_stored_per_file_and_a_damaged_entry_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = []
    for module, text in PROJECT.items():
        (tmp_path / f"{module}.py").write_text(text)
        files.append(tmp_path / f"{module}.py")

    class Store(dict):  # type: ignore[type-arg]
        def get_facts(self, key: str) -> object:
            return self.get(key)

        def put_facts(self, key: str, value: object) -> None:
            self[key] = value

    store = Store()
    cold = build(files, [summaries()], store)
    assert cold.summaries is not None and len(store) >= 3
    from torchlint.analysis import summaries as module

    parsed: List[str] = []
    real = module.summarize_tree
    monkeypatch.setattr(module, "summarize_tree", lambda tree, name, package, *rest: parsed.append(name) or real(tree, name, package, *rest))
    warm = build(files, [summaries()], store)
    assert parsed == [] and warm.summaries == cold.summaries and warm.fingerprint == cold.fingerprint
    for key in list(store):
        if isinstance(store[key], dict) and "functions" in store[key]:
            store[key] = {**store[key], "functions": [["x", [1], [], False, [], [], [], [], [], [], [], []]]}
    again = build(files, [summaries()], store)
    assert again.summaries == cold.summaries and sorted(parsed) == ["engine", "main", "utils"]


def test_a_summary_round_trips_through_json() -> None:
    import ast

    for module, text in PROJECT.items():
        summary = summarize_tree(ast.parse(text), module, False)
        assert _from_json(_to_json(summary)) == summary
    assert _from_json({"module": "m", "bases": [], "functions": "no"}) is None


def test_an_edit_that_changes_what_a_helper_does_changes_the_fingerprint(tmp_path: Path) -> None:
    for module, text in PROJECT.items():
        (tmp_path / f"{module}.py").write_text(text)
    files = sorted(tmp_path.glob("*.py"))
    before = build(files, [summaries()])
    (tmp_path / "engine.py").write_text(PROJECT["engine"].replace("    model(batch).mean().backward()\n", "    pass\n"))
    after = build(files, [summaries()])
    assert before.digest_of(["summaries"]) != after.digest_of(["summaries"])
    (tmp_path / "engine.py").write_text(PROJECT["engine"] + "\n# a comment\n")
    assert build(files, [summaries()]).summaries == before.summaries  # nothing any function does changed


def test_scripts_that_import_nothing_of_the_project_are_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from torchlint.analysis import summaries as module

    (tmp_path / "alone.py").write_text("import torch\ndef f(loader):\n    for x in loader:\n        x.backward()\n")
    (tmp_path / "lib.py").write_text("def g():\n    pass\n")
    (tmp_path / "user.py").write_text("from lib import g\ng()\n")
    read: List[str] = []
    real = module.summary_of_tree  # every summary of a file is made from its tree here
    monkeypatch.setattr(module, "summary_of_tree", lambda path, *a: read.append(path.name) or real(path, *a))
    build(sorted(tmp_path.glob("*.py")), [summaries()])
    assert sorted(read) == ["lib.py", "user.py"]


def test_linking_is_linear_in_the_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chain of functions, each calling the next: the fixed point visits
    each function a bounded number of times (not once per path).  Counted,
    not timed: the number of times a function's facts are re-derived."""
    def chain(count: int) -> List[str]:
        lines = [f"def f{i}(loader):\n    f{i + 1}(loader)\n" for i in range(count)]
        lines.append(f"def f{count}(loader):\n    for b in loader:\n        b.backward()\n")
        return lines

    import ast

    import torchlint.analysis.summaries as module

    applied = [0]
    real = module._apply

    def counted(*args: Any, **kwargs: Any) -> Any:
        applied[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "_apply", counted)
    visits: Dict[int, int] = {}
    for count in (300, 3000):
        summary = summarize_tree(ast.parse("".join(chain(count))), "m", False)
        applied[0] = 0
        found = link([summary])
        visits[count] = applied[0]
        first = found.of("m.f0")
        assert first is not None and first.iterates == {"loader"} and first.loop_runs == {"backward"}
    # Each function is re-derived a bounded number of times: ten times the chain, ten times the work.
    assert visits[3000] <= 3 * 3001 and visits[3000] <= 11 * visits[300], visits


def test_the_wrapper_table_is_validated(tmp_path: Path) -> None:
    table = wrappers()
    assert table["tqdm.tqdm"] is table["tqdm.std.tqdm"] and table["builtins.zip"].yields == "*"
    assert table["tqdm.tqdm"].enters_itself and not table["builtins.enumerate"].enters_itself
    cases = {
        'name = "a.b"\nenters = "value"\nnote = "n"\n': "`enters` is 'value'",
        'name = "a.b"\nparameters = ["x"]\nyields = "y"\nnote = "n"\n': "`yields` names 'y'",
        'name = "a.b"\nruns = ["fly"]\nnote = "n"\n': "unknown effect 'fly'",
        'name = "a.b"\nnote = "n"\ncolour = 1\n': "unknown key 'colour'",
        'name = "ab"\nnote = "n"\n': "must be dotted",
        'name = "a.b"\n': "missing `note`",
        'name = "a.b"\nstar-from = ["c"]\nnote = "n"\n': "`c.b` is not a listed name",
    }
    for body, message in cases.items():
        path = tmp_path / "wrappers.toml"
        path.write_text("[[callable]]\n" + body)
        with pytest.raises(DataError, match=message.replace("(", r"\(").replace("`", ".")):
            read_wrappers(path)
    path.write_text('[[callable]]\nname = "a.b"\nnote = "n"\n[[callable]]\nname = "c.d"\naliases = ["a.b"]\nnote = "n"\n')
    with pytest.raises(DataError, match="listed twice"):
        read_wrappers(path)
    assert star_exports()[("tqdm", "tqdm")] == "tqdm.tqdm" and ("tqdm", "trange") not in star_exports()


def test_a_library_star_import_binds_what_the_wrapper_table_lists() -> None:
    """``from tqdm import *`` binds ``tqdm`` (its ``__all__`` names it): a
    project function looping over ``tqdm(loader)`` iterates the loader; a star
    import of a module the table does not list binds nothing known."""
    source = """
from tqdm import *
from rich.progress import *


def fit(loader, model):
    for epoch in range(3):
        for x in tqdm(loader):
            model(x).sum().backward()


def fit_tracked(loader, model):
    for epoch in range(3):
        for x in track(loader):
            model(x).sum().backward()
"""
    linked = summarize_sources([("m", source, False)])
    fit, tracked = linked.of("m.fit"), linked.of("m.fit_tracked")
    assert fit is not None and fit.iterates == {"loader"}
    assert tracked is not None and not tracked.iterates


def test_a_module_class_that_wraps_one_layer() -> None:
    import ast

    source = '''
import torch
from torch import nn

class ConvNorm(nn.Module):
    def __init__(self, cin, cout, kernel_size=1, bias=True, *, gain="linear"):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, kernel_size=kernel_size, bias=bias)
        nn.init.xavier_uniform_(self.conv.weight)

    def forward(self, x):
        y = self.conv(x)
        return y

class Two(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv1d(c, c, 3)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.conv(x))

class Touched(nn.Module):
    def __init__(self, c, bias=True):
        super().__init__()
        self.conv = nn.Conv1d(c, c, 3, bias=bias)

    def forward(self, x):
        return self.conv(x) + self.conv.bias

class Rebound(nn.Module):
    def __init__(self, c, bias=True):
        super().__init__()
        bias = bias and c > 1
        self.conv = nn.Conv1d(c, c, 3, bias=bias)

    def forward(self, x):
        return self.conv(x)
'''
    layers = {w.qualified: w for w in summarize_tree(ast.parse(source), "nets", False).layers}
    wrapped = layers["nets.ConvNorm"]
    assert wrapped.layer == "torch.nn.Conv1d" and wrapped.parameters == ("cin", "cout", "kernel_size", "bias")
    assert dict(wrapped.arguments)["bias"] == "param:bias" and dict(wrapped.defaults) == {"bias": "True"}
    assert wrapped.positional == ("param:cin", "param:cout") and wrapped.keyword_only == ("gain",)
    assert layers["nets.Two"].layer == "torch.nn.ReLU"  # its output is the activation's
    assert "nets.Touched" not in layers  # it reads the layer's bias itself
    assert dict(layers["nets.Rebound"].arguments)["bias"] == "?"  # the parameter is rebound first


_LOADER_BUILDERS = '''
from torch.utils.data import DataLoader

def forwarding(ds, batch_size, **kwargs):
    return DataLoader(ds, batch_size=batch_size, **kwargs)

def defaults(ds, shuffle, workers=0, *, pin=True):
    options = dict(persistent_workers=False, drop_last=True)
    loader = DataLoader(ds, 32, shuffle, num_workers=workers, pin_memory=pin, **options)
    return loader

def changed(ds, **kwargs):
    kwargs.setdefault("num_workers", 4)
    return DataLoader(ds, **kwargs)

def two_ways(ds, big):
    if big:
        return DataLoader(ds, batch_size=256)
    return DataLoader(ds, batch_size=32)

def streams(ds):
    yield DataLoader(ds)

def other(ds):
    return list(ds)

class Data:
    def loader(self, **kwargs):
        return DataLoader(self.ds, batch_size=8, num_workers=2, **kwargs)
'''


def test_functions_that_build_a_loader_record_what_it_gets() -> None:
    from torchlint.analysis.summaries import UNKNOWN, summarize_sources

    found = summarize_sources([("pkg.data", _LOADER_BUILDERS, False)]).loaders
    assert sorted(found) == ["pkg.data.Data.loader", "pkg.data.changed", "pkg.data.defaults", "pkg.data.forwarding",
                             "pkg.data.two_ways"]
    # Two returns that build the loader differently: what both give it is known, the rest is not.
    assert dict(found["pkg.data.two_ways"].arguments) == {"dataset": "param:ds", "batch_size": UNKNOWN}
    forwarding = found["pkg.data.forwarding"]
    assert dict(forwarding.arguments) == {"dataset": "param:ds", "batch_size": "param:batch_size"}
    assert forwarding.forwards == "kwargs" and not forwarding.open_keywords
    defaults = found["pkg.data.defaults"]
    assert dict(defaults.arguments) == {
        "dataset": "param:ds", "batch_size": "lit:32", "shuffle": "param:shuffle", "num_workers": "param:workers",
        "pin_memory": "param:pin", "persistent_workers": "lit:False", "drop_last": "lit:True",
    }
    assert dict(defaults.defaults) == {"workers": "lit:0", "pin": "lit:True"} and defaults.forwards is None
    changed = found["pkg.data.changed"]  # the function changes what it passes on: not known
    assert changed.forwards is None and changed.open_keywords
    method = found["pkg.data.Data.loader"]
    assert dict(method.arguments)["dataset"] == UNKNOWN and dict(method.arguments)["num_workers"] == "lit:2"


def test_callers_uses_of_a_returned_loader_are_joined_by_function_and_position() -> None:
    """The reverse of a summary: what callers in other modules do with what a
    function returns (a tuple element, a module global iterated in a function
    an epoch loop calls, a ``self`` attribute, a local rebuilt every epoch)."""
    factory = (
        "from torch.utils.data import DataLoader\n"
        "def provider(args):\n    loader = DataLoader(args.ds)\n    return args.ds, loader\n"
        "def whole(ds):\n    return DataLoader(ds)\n"
        "def rebuilt(ds):\n    return DataLoader(ds)\n"
        "def kept(ds):\n    return DataLoader(ds)\n"
        "def helper_device():\n    return 'cuda' if x else 'cpu'\n"
    )
    exp = (
        "from factory import provider, rebuilt, kept\n"
        "class Exp:\n"
        "    def __init__(self, args):\n        self.loader = kept(args.ds)\n        self.args = args\n"
        "    def train(self):\n"
        "        _, loader = provider(self.args)\n"
        "        for epoch in range(3):\n"
        "            for x, y in loader:\n                x = x.cuda()\n"
        "            again = rebuilt(self.args.ds)\n"
        "            for x in again:\n                pass\n"
        "            self.epoch()\n"
        "    def epoch(self):\n"
        "        for x in self.loader:\n            pass\n"
        "    def batches(self):\n"
        "        loader = kept(None)\n"
        "        for batch in loader:\n            yield batch\n"
    )
    script = (
        "from factory import whole, helper_device\n"
        "device = helper_device()\n"
        "loader = whole(None)\n"
        "def one_epoch():\n    for x, y in loader:\n        x = x.to(device, non_blocking=True)\n"
        "for epoch in range(3):\n    one_epoch()\n"
    )
    found = summarize_sources([("factory", factory, False), ("exp", exp, False), ("script", script, False)])
    provider = found.returned_use("factory.provider", "1")
    assert provider is not None and provider.iterated and provider.repeated and provider.to_cuda and provider.blocking
    assert found.returned_use("factory.provider", "0") is None
    whole = found.returned_use("factory.whole", "")
    assert whole is not None and whole.repeated and whole.to_cuda and not whole.blocking  # the helper returns CUDA
    rebuilt = found.returned_use("factory.rebuilt", "")
    assert rebuilt is not None and rebuilt.iterated and not rebuilt.repeated  # built anew every epoch
    kept = found.returned_use("factory.kept", "")
    assert kept is not None and kept.repeated and not kept.to_cuda  # self.loader, iterated in a method called per epoch
    train = found.of("exp.Exp.train")
    assert train is not None and not any(name.startswith("@") for name in train.iterates | train.repeats)
    batches = found.of("exp.Exp.batches")  # what the summaries said before: the returned values are kept apart
    assert batches is not None and not batches.yields_from and not batches.iterates


_CHAIN_BASE = """
from torch.utils.data import DataLoader


def build(ds, **kw):
    return DataLoader(ds, **kw)


def build_fixed(ds, workers=0):
    return DataLoader(ds, batch_size=64, num_workers=workers)
"""
_CHAIN_FACTORY = """
from pkg.base import build, build_fixed


def make_loader(ds, workers=0, **kw):
    return build(ds, num_workers=workers, **kw)


def make_eval(ds, **kw):
    return make_loader(ds, batch_size=256, **kw)


def make_default(ds, **kw):
    return build_fixed(ds, **kw)


def make_named(ds, workers=2):
    return build_fixed(ds)


def make_opaque(ds, options):
    return build(ds, **options)


def ping(ds):
    return pong(ds)


def pong(ds):
    return ping(ds)


class Data:
    def loader(self, ds, bs=8, **kw):
        return self.inner(ds, batch_size=bs, **kw)

    def inner(self, ds, batch_size, shuffle=False, **kw):
        return build(ds, batch_size=batch_size, shuffle=shuffle, **kw)
"""


def test_a_loader_is_followed_through_functions_that_return_another_ones() -> None:
    """``make_loader`` returns ``build(...)``, which returns ``DataLoader(...)``:
    what the loader gets is written in ``make_loader``'s (and its callers')
    terms; a cycle builds nothing; a function whose ``**`` reaches a
    parameter of the one it calls offers that parameter under its name."""
    from torchlint.analysis.summaries import UNKNOWN, summarize_sources

    found = summarize_sources([("pkg.base", _CHAIN_BASE, False), ("pkg.factory", _CHAIN_FACTORY, False)]).loaders
    assert "pkg.factory.ping" not in found and "pkg.factory.pong" not in found
    made = found["pkg.factory.make_loader"]
    assert made.loader == "torch.utils.data.DataLoader" and not made.through
    assert dict(made.arguments) == {"dataset": "param:ds", "num_workers": "param:workers"}
    assert dict(made.defaults) == {"workers": "lit:0"} and made.forwards == "kw" and not made.open_keywords
    evaluated = found["pkg.factory.make_eval"]  # three deep: its callers still decide the count, as `workers`
    assert dict(evaluated.arguments) == {"dataset": "param:ds", "num_workers": "param:workers", "batch_size": "lit:256"}
    assert dict(evaluated.defaults) == {"workers": "lit:0"} and evaluated.forwards == "kw"
    default = found["pkg.factory.make_default"]  # `build_fixed` passes nothing on: callers set only `workers`
    assert dict(default.arguments)["num_workers"] == "param:workers" and default.forwards is None
    assert dict(default.defaults) == {"workers": "lit:0"}
    named = found["pkg.factory.make_named"]  # its own `workers` never reaches the loader
    assert dict(named.arguments)["num_workers"] == "lit:0"
    opaque = found["pkg.factory.make_opaque"]
    assert opaque.open_keywords and dict(opaque.arguments) == {"dataset": "param:ds"}
    method = found["pkg.factory.Data.loader"]  # `self.inner(...)`, then `build(...)`
    assert dict(method.arguments) == {"dataset": "param:ds", "batch_size": "param:bs", "shuffle": "param:shuffle"}
    assert dict(method.defaults) == {"bs": "lit:8", "shuffle": "lit:False"}  # `shuffle` reaches `inner` through `**kw`
    assert method.forwards == "kw" and UNKNOWN not in dict(method.arguments).values()


def test_loader_chains_are_linked_once_each(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chain of 3,000 functions, each returning the next one's call: each
    link is composed once (counted, not timed); chains deeper than the guard
    build nothing rather than recurse."""
    import torchlint.analysis.summaries as module

    composed = [0]
    real = module._composed

    def counted(*args: Any, **kwargs: Any) -> Any:
        composed[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "_composed", counted)
    count = 3000
    lines = ["from torch.utils.data import DataLoader\n"]
    lines += [f"def f{i}(ds, **kw):\n    return f{i + 1}(ds, **kw)\n" for i in range(count)]
    lines.append(f"def f{count}(ds, **kw):\n    return DataLoader(ds, **kw)\n")
    found = module.summarize_sources([("m", "".join(lines), False)]).loaders
    assert composed[0] <= count
    assert f"m.f{count - module._MAX_CHAIN}" in found and "m.f0" not in found


_AGENT_MODELS = """
import torch


class Policy:
    def __init__(self, n):
        self.net = Net(n)
        self.head = Net(n)

    def eval(self):
        self.net.eval()
        self.head.train(False)

    def act(self, obs):
        return self._forward(obs)

    def _forward(self, x):
        return self.net(x)

    def peek(self, x):
        self.head.eval()
        out = self.head(x)
        self.head.train()
        return out


class Node:
    def __init__(self):
        self.child = Node()
        self.net = Net(2)

    def run(self, x):
        return self.child.run(self.net(x))
"""
_AGENT = """
import torch
from pkg.models import Policy


class Agent:
    def __init__(self, n):
        self.policy = Policy(n)

    def eval(self):
        self.policy.eval()

    def act(self, obs):
        return self.policy.act(obs)

    def act_quietly(self, obs):
        with torch.no_grad():
            return self.policy.act(obs)
"""


def test_method_forwards_and_eval_switches_follow_the_instance() -> None:
    """What a method runs with gradients on and what it leaves in eval mode,
    through the instance's other methods and its attributes' project
    classes (in another module), as dotted paths; a call under ``no_grad``
    adds no forward; a switch undone by ``.train()`` is none; a class that
    holds itself stops at the path bound."""
    found = summarize_sources([("pkg.models", _AGENT_MODELS, False), ("pkg.agent", _AGENT, False)])
    act = found.of("pkg.models.Policy.act")
    assert act is not None and act.forwards == {"net"}
    policy_eval = found.of("pkg.models.Policy.eval")
    assert policy_eval is not None and policy_eval.evals == {"net", "head"}
    peek = found.of("pkg.models.Policy.peek")
    assert peek is not None and peek.evals == frozenset() and peek.forwards == {"head"}
    agent_act = found.of("pkg.agent.Agent.act")
    assert agent_act is not None and agent_act.forwards == {"policy.net"}
    quiet = found.of("pkg.agent.Agent.act_quietly")
    assert quiet is not None and quiet.forwards == frozenset()
    agent_eval = found.of("pkg.agent.Agent.eval")
    assert agent_eval is not None and agent_eval.evals == {"policy", "policy.net", "policy.head"}
    run = found.of("pkg.models.Node.run")
    assert run is not None and run.forwards == {"net", "child.net", "child.child.net"}


def test_a_loader_is_followed_through_a_method_of_a_base_class() -> None:
    from torchlint.analysis.summaries import summarize_sources

    base = (
        "from torch.utils.data import DataLoader\n"
        "class Base:\n    def _loader(self, ds, workers=0, **kw):\n        return DataLoader(ds, num_workers=workers, **kw)\n"
    )
    child = (
        "from pkg.base import Base\n"
        "class Data(Base):\n    def train_loader(self, ds):\n        return self._loader(ds, shuffle=True)\n"
        "    def odd(self, ds):\n        return self.factory(ds)\n"
    )
    found = summarize_sources([("pkg.base", base, False), ("pkg.child", child, False)]).loaders
    built = found["pkg.child.Data.train_loader"]
    assert dict(built.arguments) == {"dataset": "param:ds", "num_workers": "lit:0", "shuffle": "lit:True"}
    assert built.forwards is None and "pkg.child.Data.odd" not in found


CONSTRUCTED = {
    "solver": '''
import torch


class Base:
    def __init__(self, args):
        self.args = args
        self.device = self._acquire_device()

    def _acquire_device(self):
        if self.args.use_gpu:
            device = torch.device("cuda:{}".format(self.args.gpu))
        else:
            device = torch.device("cpu")
        return device


class Solver(Base):
    def __init__(self, args, train_loader, val_loader, device):
        super().__init__(args)
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.target = device

    def train_epoch(self):
        for x, y in self.train_loader:
            x = x.to(self.device)
            self.model(x, y).backward()

    def validate(self):
        for x, _ in self.val_loader:
            self.model(x.to(self.target))

    def run(self):
        for epoch in range(self.args.epochs):
            self.train_epoch()
        self.validate()


class OnCpu:
    def __init__(self, loader):
        self.loader = loader
        self.device = torch.device("cpu")

    def fit(self, epochs):
        for _ in range(epochs):
            for x in self.loader:
                self.model(x.to(self.device)).backward()
''',
    "main": '''
from solver import OnCpu, Solver


def main(args, a, b):
    Solver(args, a, b, "cpu").run()
    OnCpu(a).fit(3)
''',
}


def test_building_a_project_class_commits_the_loaders_it_keeps_to_its_methods() -> None:
    """``Solver(args, a, b, dev)``: what the class's methods do to the
    ``__init__`` parameters it keeps on ``self`` (iterated, every epoch,
    batches copied to a device the base class picks, or to the parameter
    kept as ``self.target``); a device set to the CPU is no copy to the GPU."""
    found = summarize_sources([(module, text, False) for module, text in CONSTRUCTED.items()])
    solver = found.of("solver.Solver")
    assert solver is not None and solver.constructs and solver.parameters == ("args", "train_loader", "val_loader", "device")
    assert solver.iterates == {"train_loader", "val_loader"} and solver.repeats == {"train_loader"}
    assert solver.moves_items == {("train_loader", "cuda", False), ("val_loader", "param:device", False)}
    assert solver.epochs == {"train_loader"}  # trained over again and again, and no set_epoch anywhere
    cpu = found.of("solver.OnCpu")
    assert cpu is not None and cpu.repeats == {"loader"} and cpu.moves_items == frozenset()
    # The methods' own summaries keep no trace of the instance's attributes.
    run = found.of("solver.Solver.run")
    assert run is not None and run.iterates == frozenset() and run.moves_items == frozenset()


def test_a_class_whose_module_sets_the_epoch_commits_no_epochs() -> None:
    text = CONSTRUCTED["solver"] + "\n\ndef seed(loader, epoch):\n    loader.sampler.set_epoch(epoch)\n"
    found = summarize_sources([("solver", text, False), ("main", CONSTRUCTED["main"], False)])
    solver = found.of("solver.Solver")
    assert solver is not None and solver.repeats == {"train_loader"} and solver.epochs == frozenset()


def test_a_base_class_device_from_a_helper_makes_returned_loaders_copied_to_cuda() -> None:
    """A method of a subclass copies a returned loader's batches to
    ``self.device``, which its base class (another module) sets from
    ``self._acquire_device()``, some ``return`` of which is CUDA; the
    subclass's module never names CUDA."""
    sources = [
        ("factory", "from torch.utils.data import DataLoader\n\ndef provide(ds):\n"
                    "    return ds, DataLoader(ds, num_workers=2)\n", False),
        ("base", CONSTRUCTED["solver"], False),
        ("exp", "from base import Base\nfrom factory import provide\n\nclass Exp(Base):\n"
                "    def train(self, ds):\n        _, loader = provide(ds)\n        for x in loader:\n"
                "            x.to(self.device)\n", False),
    ]
    found = summarize_sources(sources)
    use = found.returned_use("factory.provide", "1")
    assert use is not None and use.iterated and use.to_cuda


def test_a_summary_with_classes_round_trips_through_json() -> None:
    import ast

    for module, text in CONSTRUCTED.items():
        summary = summarize_tree(ast.parse(text), module, False)
        assert _from_json(_to_json(summary)) == summary
    summary = summarize_tree(ast.parse(CONSTRUCTED["solver"]), "solver", False)
    devices = dict(summary.devices)
    assert devices["solver.Base"] == (("args", "?"), ("device", "call:solver.Base._acquire_device"))
    assert dict(devices["solver.OnCpu"])["device"] == "cpu" and dict(devices["solver.Solver"])["target"] == "?"
    assert summary.accelerators == ("solver.Base._acquire_device",)


def test_a_function_that_returns_what_another_returned_relays_its_callers_uses() -> None:
    sources = [
        ("factory", "from torch.utils.data import DataLoader\n\ndef provide(ds):\n"
                    "    return ds, DataLoader(ds, num_workers=2)\n", False),
        ("exp", "import torch\nfrom factory import provide\n\nclass Exp:\n    def _get(self, ds):\n"
                "        data, loader = provide(ds)\n        return data, loader\n\n"
                "    def train(self, ds, epochs):\n        _, loader = self._get(ds)\n"
                "        for _ in range(epochs):\n            for x in loader:\n                x.cuda()\n", False),
    ]
    found = summarize_sources(sources)
    use = found.returned_use("factory.provide", "1")
    assert use is not None and use.iterated and use.repeated and use.to_cuda and use.callers == ("exp.Exp.train",)
    assert found.returned_use("factory.provide", "0") is None


def test_a_subclass_that_sets_a_device_of_its_own_hides_its_base_ones() -> None:
    text = CONSTRUCTED["solver"] + (
        "\n\nclass Configured(OnCpu):\n    def __init__(self, loader, args):\n        super().__init__(loader)\n"
        "        self.device = torch.device(args.device)\n")
    found = summarize_sources([("solver", text, False)])
    assert found.attribute_device("solver.OnCpu", "device") == "cpu"
    assert found.attribute_device("solver.Configured", "device") is None
    assert found.attribute_device("solver.Solver", "device") == "cuda"  # its base's `_acquire_device()`


_WALKED = '''
import torch
from torch.utils.data import DataLoader


class Net(torch.nn.Module):
    def __init__(self, width, device="cuda"):
        super().__init__()
        self.layer = torch.nn.Linear(width, width)
        self.device = device
        self.width = width

    def forward(self, x):
        return self.layer(x)


def make_loader(dataset, workers=2):
    loader = DataLoader(dataset, num_workers=workers)
    return loader


def train(model, loader):
    for batch in loader:
        out = model(batch.cuda())
        yield out
'''


def test_a_summary_walks_each_body_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan, the single assignments, the loader a function builds and its
    class's attribute writes read one walk of each body (the walk is the cost)."""
    import ast
    from collections import Counter

    import torchlint.analysis.summaries as module

    walked: "Counter[int]" = Counter()
    walk = module._own_nodes

    def counted(statements: Any) -> Any:
        walked[id(statements)] += 1
        return walk(statements)

    tree = ast.parse(_WALKED)
    unpatched = summarize_tree(tree, "pkg.train", False)
    monkeypatch.setattr(module, "_own_nodes", counted)
    summary = summarize_tree(tree, "pkg.train", False)
    assert summary == unpatched  # the same facts
    assert walked and max(walked.values()) == 1, walked


def test_meet_keeps_what_every_candidate_does_parameters_matched_by_position() -> None:
    from torchlint.analysis.summaries import Summary, meet

    vqa = Summary("train_vqa.train", ("model", "train_loader", "device"), iterates=frozenset({"train_loader"}),
                  repeats=frozenset({"train_loader"}), moves_items=frozenset({("train_loader", "param:device", False)}),
                  runs=frozenset({"backward"}))
    captions = Summary("captions.train", ("net", "loader", "dev"), iterates=frozenset({"loader"}),
                       moves_items=frozenset({("loader", "param:dev", False)}), runs=frozenset({"backward"}))
    merged = meet([vqa, captions])
    assert merged is not None
    assert merged.qualified == "captions.train|train_vqa.train"
    assert merged.iterates == {"train_loader"} and merged.repeats == frozenset()
    assert merged.moves_items == {("train_loader", "param:device", False)}
    assert merged.runs == {"backward"}
    # A different number of parameters: nothing is known.
    assert meet([vqa, Summary("other.train", ("model", "loader"))]) is None


def test_names_left_to_a_star_import_are_those_the_file_never_binds() -> None:
    import ast

    from torchlint.analysis.summaries import _unbound_names

    tree = ast.parse(
        "from utils import *\n"
        "import os.path\n"
        "def train(model, loader, to_gpu=None):\n"
        "    for batch in loader:\n"
        "        x = to_gpu(batch) if to_gpu else move(batch)\n"
        "        try:\n            evaluate(model)\n        except ValueError as error:\n            print(error)\n"
        "    return [len(b) for b in loader], os.path\n"
    )
    assert _unbound_names(tree) == {"move", "evaluate"}


_CHOSEN = {
    "models.plain": (
        "import torch\n"
        "class Plain:\n"
        "    def __init__(self, opt):\n        self.device = torch.device('cuda')\n"
        "    def feed(self, data):\n        self.x = data.to(self.device)\n"
        "    def step(self):\n        self.x.sum().backward()\n"
    ),
    "models.gan": (
        "import torch\n"
        "class GAN:\n"
        "    def __init__(self, opt):\n        self.device = torch.device('cuda')\n"
        "    def feed(self, data):\n        self.x = data.to(self.device)\n"
        "    def step(self):\n        pass\n"
    ),
    "models.select": (
        "def define_model(opt):\n"
        "    if opt['model'] == 'plain':\n        from models.plain import Plain as M\n"
        "    elif opt['model'] == 'gan':\n        from models.gan import GAN as M\n"
        "    else:\n        raise NotImplementedError(opt['model'])\n"
        "    m = M(opt)\n    return m\n"
        "def one(opt):\n    from models.plain import Plain\n    return Plain(opt)\n"
        "def relayed(opt):\n    return define_model(opt)\n"
        "def maybe_none(opt):\n    if opt:\n        return define_model(opt)\n    return None\n"
    ),
    "models.registry": (
        "from models.plain import Plain\nfrom models.gan import GAN\n"
        "MODELS = {'plain': Plain, 'gan': GAN}\n"
        "LATER = {'plain': Plain}\nLATER['gan'] = GAN\n"
        "def from_registry(opt):\n    cls = MODELS[opt['model']]\n    return cls(opt)\n"
        "def direct(opt):\n    return MODELS[opt['model']](opt)\n"
        "def from_later(opt):\n    return LATER[opt['model']](opt)\n"
    ),
    "main": (
        "from models.select import define_model\n"
        "def run(opt, loader):\n    model = define_model(opt)\n"
        "    for batch in loader:\n        model.feed(batch)\n        model.step()\n"
    ),
}


def test_factories_build_one_of_several_classes_chosen_by_branch_imports_or_a_registry() -> None:
    found = summarize_sources([(module, text, False) for module, text in _CHOSEN.items()])
    both = {"models.plain.Plain", "models.gan.GAN"}
    assert found.factories["models.select.define_model"] == both  # imports inside the branches
    assert found.factories["models.select.one"] == {"models.plain.Plain"}  # one import inside the function
    assert found.factories["models.select.relayed"] == both  # another factory's result
    assert found.factories["models.registry.from_registry"] == both  # a local bound to the registry's value
    assert found.factories["models.registry.direct"] == both
    assert "models.select.maybe_none" not in found.factories  # one return gives something else
    assert "models.registry.from_later" not in found.factories  # written to after the display: not known whole


def test_a_method_called_on_a_factorys_result_does_what_every_class_does() -> None:
    found = summarize_sources([(module, text, False) for module, text in _CHOSEN.items()])
    feed = found.of("models.select.define_model.feed")
    assert feed is not None and feed.moves == {("data", "attr:device", False)}  # both classes copy it
    step = found.of("models.select.define_model.step")
    assert step is not None and not step.runs  # only one class runs backward: not known
    run = found.of("main.run")
    assert run is not None and run.moves_items == {("loader", "?", False)}  # the instance's device: the caller's to find
    assert run.loop_runs == frozenset()  # `step` runs backward in one class only


def test_factory_returns_round_trip_through_json() -> None:
    import ast

    for module, text in _CHOSEN.items():
        summary = summarize_tree(ast.parse(text), module, False)
        assert _from_json(_to_json(summary)) == summary


_DISPATCH = {
    "base": (
        "class Trainer:\n"
        "    def step(self, batch):\n        raise NotImplementedError\n"
        "    def epoch(self, loader):\n        for batch in loader:\n            self.step(batch)\n"
        "    def fit(self, loader):\n        for _ in range(3):\n            self.epoch(loader)\n"
        "    def log(self, text):\n        print(text)\n"
    ),
    "mine": (
        "import torch\nfrom base import Trainer\n"
        "device = torch.device('cuda:0')\n"
        "class Mine(Trainer):\n"
        "    def step(self, batch):\n        batch.to(device).sum().backward()\n"
        "class Same(Trainer):\n    pass\n"
        "def local_device(x):\n    device = 'cpu'\n    return x.to(device)\n"
        "class Unbuilt(Trainer):\n    def step(self, batch):\n        batch.sum().backward()\n"
        "def go(loader):\n    Mine().fit(loader)\n    Same().fit(loader)\n"
    ),
}


def test_an_inherited_method_runs_the_subclass_methods_it_calls_on_self() -> None:
    found = summarize_sources([(module, text, False) for module, text in _DISPATCH.items()])
    fit = found.of("mine.Mine.fit")  # base's `fit` -> base's `epoch` -> Mine's `step`
    assert fit is not None and fit.loop_runs == {"backward"}
    assert ("loader", "cuda", False) in fit.moves_items
    base_fit = found.of("base.Trainer.fit")
    assert base_fit is not None and not base_fit.loop_runs and not base_fit.moves_items
    assert found.of("mine.Mine.log") is not None and found.of("mine.Mine.log").qualified == "base.Trainer.log"
    same = found.of("mine.Same.fit")  # overrides nothing: the base's own method
    assert same is not None and same.qualified == "base.Trainer.fit"
    unbuilt = found.of("mine.Unbuilt.fit")  # nothing builds one: no copy is made for it
    assert unbuilt is not None and unbuilt.qualified == "base.Trainer.fit"


def test_a_module_level_device_is_known_in_the_functions_that_do_not_rebind_it() -> None:
    found = summarize_sources([(module, text, False) for module, text in _DISPATCH.items()])
    step = found.of("mine.Mine.step")
    assert step is not None and step.moves == {("batch", "cuda", False)}
    local = found.of("mine.local_device")
    assert local is not None and not local.moves  # its own `device` is the CPU


_BRANCHES = {
    "nets": (
        "import torch\n"
        "class A:\n    def feed(self, x):\n        return x.to(torch.device('cuda'))\n"
        "class B:\n    def feed(self, x):\n        return x.to(torch.device('cuda'))\n"
        "class C:\n    def feed(self, x):\n        return x\n"
    ),
    "build": (
        "from nets import A, B, C\n"
        "def build(name):\n"
        "    if name == 'a':\n        model = A()\n    elif name == 'b':\n        model = B()\n"
        "    else:\n        raise ValueError(name)\n    return model\n"
        "def maybe(name):\n    model = None\n    if name == 'a':\n        model = A()\n    return model\n"
        "def run(name, loader):\n"
        "    if name == 'a':\n        model = A()\n    else:\n        model = B()\n"
        "    for x in loader:\n        model.feed(x)\n"
        "def run_any(name, loader):\n"
        "    if name == 'a':\n        model = A()\n    else:\n        model = C()\n"
        "    for x in loader:\n        model.feed(x)\n"
    ),
}


def test_a_local_built_in_branches_is_one_of_the_classes_it_is_built_from() -> None:
    found = summarize_sources([(module, text, False) for module, text in _BRANCHES.items()])
    assert found.factories["build.build"] == {"nets.A", "nets.B"}
    assert "build.maybe" not in found.factories  # may return None
    run = found.of("build.run")
    assert run is not None and run.moves_items == {("loader", "cuda", False)}  # both classes copy the items
    run_any = found.of("build.run_any")
    assert run_any is not None and not run_any.moves_items  # one of them keeps them: not known


def test_a_parameter_rebound_to_a_wrapper_of_itself_is_still_that_parameter() -> None:
    """`loader = tqdm(loader)` once made the summary recurse until Python gave
    up, and the whole file was left out of the project's summaries."""
    text = (
        "from tqdm import tqdm\n\n"
        "def train_one_epoch(model, loader, device):\n"
        "    loader = tqdm(loader)\n"
        "    for step, (x, y) in enumerate(loader):\n"
        "        x = x.to(device)\n"
        "        model(x)\n"
    )
    found = summarize_sources([("engine", text, False)])
    summary = found.of("engine.train_one_epoch")
    assert summary is not None and summary.iterates == {"loader"}
    assert any(source == "loader" for source, _, _ in summary.moves_items)


GRAD_OFF_HELPERS = '''
import contextlib, functools
import torch
from torch import no_grad as ng


def quietly(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        with torch.no_grad():
            return fn(*args, **kwargs)
    return inner


def factory():
    def decorate(fn):
        def inner(*args):
            with torch.inference_mode():
                return fn(*args)
        return inner
    return decorate


def applied(fn):
    return ng()(fn)


def either(newer=True):
    def decorate(fn):
        return (torch.inference_mode if newer else torch.no_grad)()(fn)
    return decorate


def either_way(newer=True):
    def decorate(fn):
        return (torch.inference_mode if newer else torch.enable_grad)()(fn)
    return decorate


def logged(fn):
    def inner(*args):
        print(fn.__name__)
        return fn(*args)
    return inner


def half_quiet(fn):
    def inner(*args):
        with torch.no_grad():
            fn(*args)
        return fn(*args)
    return inner


def later(fn):
    with torch.no_grad():  # the wrapper runs when it is called, not in this block
        def inner(*args):
            return fn(*args)
    return inner


@contextlib.contextmanager
def frozen(net):
    with torch.no_grad():
        yield net


@contextlib.contextmanager
def evaluating(net):
    net.eval()
    yield net
    net.train()


def not_a_context(net):
    with torch.no_grad():
        yield net


class Quiet:
    def __enter__(self):
        torch.set_grad_enabled(False)

    def __exit__(self, *exc):
        torch.set_grad_enabled(True)


class OnAndOff:
    def __enter__(self):
        torch.set_grad_enabled(False)
        torch.set_grad_enabled(True)


class Derived(torch.no_grad):
    pass


def restore(model, path):
    model.load_state_dict(torch.load(path))


def build(path):
    model = make()
    restore(model, path)
    return model


def make():
    return object()
'''


def test_grad_off_and_weight_facts_come_from_the_code() -> None:
    found = summarize_sources([("helpers", GRAD_OFF_HELPERS, False)])
    grad_off = {name.split(".", 1)[1]: set(s.grad_off) for name, s in found.functions.items() if s.grad_off}
    assert grad_off == {
        "quietly": {"wraps"}, "factory": {"wraps"}, "applied": {"wraps"}, "either": {"wraps"}, "frozen": {"yields"},
        "Quiet.__enter__": {"enters"},
    }
    assert found.grad_off_class("helpers.Derived") and not found.grad_off_class("helpers.Quiet")
    loads = sorted(name for name, s in found.functions.items() if s.loads_weights)
    assert loads == ["helpers.build", "helpers.restore"]
    # The facts survive the store.
    tree = summarize_file_text(GRAD_OFF_HELPERS)
    assert _from_json(_to_json(tree)) == tree


def summarize_file_text(text: str):  # type: ignore[no-untyped-def]
    import ast
    return summarize_tree(ast.parse(text), "helpers", False)
