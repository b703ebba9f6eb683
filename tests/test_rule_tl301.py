"""TL301 eval-without-no-grad: focused cases beyond the fixtures."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, List, Tuple

import pytest

import torchlint
from torchlint.ruleapi.registry import by_code_or_name
from torchlint.lint.settings import Settings

if TYPE_CHECKING:
    from torchlint.lint.cache import Cache

SETTINGS = Settings(select=("TL301",))

EVALUATE = """
import torch

def evaluate(model, loader):
    model.eval()
    return [model(x).argmax(1) for x in loader]
"""


def lines(source: str, path: str = "train.py", settings: Settings = SETTINGS) -> List[int]:
    return [d.start.line for d in torchlint.check_source(textwrap.dedent(source), path, settings)]


def fixed(source: str, path: str = "train.py", settings: Settings = SETTINGS) -> str:
    return torchlint.fix_source(textwrap.dedent(source), path, settings, unsafe=True).source


def test_metadata_and_doc() -> None:
    rule = by_code_or_name("TL301")
    assert rule is not None and rule.name == "eval-without-no-grad"
    assert "function-pattern" in rule.options
    doc = rule.documentation()
    for heading in ("## What it does", "## Why is this bad?", "## Fix safety", "## Source guide"):
        assert heading in doc
    assert "requires" in doc or "require grad" in doc


NAME_PATTERN = Settings(select=("TL301",), rule_options={"TL301": {"function-pattern": "^(?:predict|validate)"}})


def test_names_decide_nothing_by_default() -> None:
    """A loop named like evaluation over a model the facts know, with no
    ``.eval()``, no loaded weights and no evaluation caller: not reported
    unless the user opts in to a name pattern."""
    rule = by_code_or_name("TL301")
    assert rule is not None and rule.options["function-pattern"].default == ""
    source = """
    import torch
    from torch import nn

    def validate(model: nn.Module, loader):
        return [model(x).argmax(1).item() for x in loader]
    """
    assert lines(source) == []
    assert lines(source, settings=NAME_PATTERN) == [5]


def test_reports_the_def_line_with_message_and_fix() -> None:
    source = """
    import functools, torch

    @functools.lru_cache(maxsize=None)
    def evaluate(model, loader):
        model.eval()
        return [model(x).argmax(1) for x in loader]
    """
    diagnostics = torchlint.check_source(textwrap.dedent(source), "train.py", SETTINGS)
    assert [(d.start.line, d.start.column) for d in diagnostics] == [(5, 5)]
    d = diagnostics[0]
    assert d.message.startswith("`evaluate` runs the model in eval mode without `torch.no_grad()`")
    assert d.hint and "no_grad" in d.hint
    assert d.fix is not None and d.fix.applicability.value == "unsafe"
    assert "@functools.lru_cache(maxsize=None)\n@torch.no_grad()\ndef evaluate" in fixed(source)


def test_a_decorator_of_unknown_origin_keeps_it_quiet() -> None:
    # Nothing the file names: it may switch gradients off itself.
    source = """
    import torch

    @some.decorator
    def evaluate(model, loader):
        model.eval()
        return [model(x).argmax(1) for x in loader]
    """
    assert lines(source) == []


def test_own_line_suppression_above_the_def() -> None:
    source = """
    import torch

    # torchlint: ignore[TL301]
    def evaluate(model, loader):
        model.eval()
        return [model(x).argmax(1) for x in loader]
    """
    assert lines(source) == []


def test_fix_uses_the_file_spelling_of_torch() -> None:
    assert "@th.no_grad()\ndef evaluate" in fixed(EVALUATE.replace("import torch", "import torch as th"))
    out = fixed(EVALUATE.replace("import torch", "from torch import nn"))
    assert out.startswith("\nimport torch\nfrom torch import nn")
    assert "@torch.no_grad()\ndef evaluate" in out
    out = fixed(EVALUATE.replace("import torch", "from torch import no_grad as ng"))
    assert "@ng()\ndef evaluate" in out


def test_fix_is_idempotent_and_silences_the_rule() -> None:
    once = fixed(EVALUATE)
    assert fixed(once) == once
    assert lines(once) == []


@pytest.mark.parametrize(
    "guard",
    [
        "@torch.no_grad()",
        "@torch.no_grad",
        "@torch.inference_mode()",
        "@torch.set_grad_enabled(False)",
        "@torch.autograd.no_grad()",
    ],
)
def test_decorated_functions_are_quiet(guard: str) -> None:
    assert lines(EVALUATE.replace("def evaluate", f"{guard}\ndef evaluate")) == []


@pytest.mark.parametrize(
    "body",
    [
        "    with torch.no_grad():\n        return [model(x) for x in loader]",
        "    with torch.inference_mode():\n        return [model(x) for x in loader]",
        "    with torch.no_grad(), torch.autocast('cuda'):\n        return [model(x) for x in loader]",
        "    torch.set_grad_enabled(False)\n    return [model(x) for x in loader]",
        "    with torch.enable_grad():\n        return [model(x) for x in loader]",
        "    out = [model(x) for x in loader]\n    out[0].sum().backward()\n    return out",
        "    out = [model(x.requires_grad_()) for x in loader]\n    return out",
        "    return [model(pgd_attack(model, x)) for x in loader]",
        "    return [model(x) for x in loader], torch.autograd.grad(model(x).sum(), x)",
        "    with eval_mode(model):\n        return [model(x) for x in loader]",
    ],
)
def test_functions_that_manage_or_need_gradients_are_quiet(body: str) -> None:
    source = f"import torch\n\ndef evaluate(model, loader):\n    model.eval()\n{body}\n"
    assert lines(source) == []


def test_callers_under_no_grad_cover_the_function() -> None:
    source = """
    import torch

    def _eval(model, loader):
        model.eval()
        return [model(x) for x in loader]

    def benchmark(model, loader):
        return _eval(model, loader)

    def main(model, loader):
        with torch.no_grad():
            benchmark(model, loader)
            _eval(model, loader)
    """
    assert lines(source) == []
    # One unguarded call is enough to report.
    assert lines(textwrap.dedent(source) + "\n_eval(None, [])\n") == [4]


def test_lightning_and_test_code_are_quiet() -> None:
    source = """
    import torch
    from pytorch_lightning import LightningModule
    from project.base import BaseLit

    class Lit(LightningModule):
        def evaluate(self, batch):
            self.model.eval()
            return self.model(batch)

    class Other(BaseLit):
        def training_step(self, batch, i):
            return self.model(batch).sum()

        def _shared_eval(self, batch):
            self.model.eval()
            return self.model(batch)

    class MyLit(SomethingLightningModule):
        def validation_step(self, batch, i):
            return self.net(batch).mean().item()
    """
    assert lines(source) == []
    pytest_file = """
    import torch

    def test_eval(model=None):
        model.eval()
        return [model(x) for x in range(3)]
    """
    assert lines(pytest_file, path="tests/test_model.py") == []
    assert lines(pytest_file, path="scripts/test.py") == [4]


def test_files_of_other_frameworks_are_quiet() -> None:
    source = """
    import tensorflow as tf

    def evaluate(model, data):
        model.eval()
        return [model(x) for x in data]
    """
    assert lines(source) == []


def test_forward_and_model_helpers_are_quiet() -> None:
    source = """
    import torch
    from torch import nn

    class Net(nn.Module):
        def forward(self, x):
            self.eval()
            return self.body(x)

        def inference(self, x):
            return self.body(x).argmax(1).cpu()

    def predict(x):
        return build_model(x)

    def evaluate(model, loader):
        model.eval()
        torch.onnx.export(model, next(iter(loader)), "m.onnx")
    """
    assert lines(source) == []


def test_name_only_helpers_need_a_loop_or_plain_values() -> None:
    source = """
    import torch
    from torch import nn

    def predict(model: nn.Module, x):
        return model(x)

    def predict_label(model: nn.Module, x):
        return model(x).argmax(1).item()
    """
    assert lines(source) == []
    assert lines(source, settings=NAME_PATTERN) == [8]


def test_without_eval_only_facts_make_a_model() -> None:
    """No ``.eval()``: the callee must be a model by the value facts, never by its name."""
    source = """
    import torch
    from torch import nn

    class Net(nn.Module):
        def forward(self, x):
            return x

    def predict_label(net, x):
        return net(x).argmax(1).item()

    def predict_scores(xs):
        net = {"w": 2}
        return [model(x) * net["w"] for x in xs]

    def model(x):
        return 3
    """
    # An untyped parameter and a dict named ``net`` are not models by facts.
    assert lines(source, settings=NAME_PATTERN) == []
    # A caller that passes a model makes the parameter one.
    called = textwrap.dedent(source) + "\npredict_label(Net(), torch.zeros(1))\n"
    assert lines(called, settings=NAME_PATTERN) == [9]
    assert lines(called) == []  # the name alone: off by default


def test_module_level_script() -> None:
    source = """
    import torch
    model = torch.load("m.pt")
    model.eval()
    print(model(torch.randn(1, 3)))
    """
    diagnostics = torchlint.check_source(textwrap.dedent(source), "predict.py", SETTINGS)
    assert [d.start.line for d in diagnostics] == [4]
    assert diagnostics[0].fix is None
    assert "`model` is put in eval mode" in diagnostics[0].message


def test_module_level_training_after_eval_is_quiet() -> None:
    source = """
    import torch
    model.eval()
    out = model(x)
    out.sum().backward()
    """
    assert lines(source) == []


def test_missing_final_newline_is_fixed_too() -> None:
    source = "import torch\ndef evaluate(model, loader):\n    model.eval()\n    return [model(x) for x in loader]"
    diagnostics = torchlint.check_source(source, "e.py", SETTINGS)
    assert [d.start.line for d in diagnostics] == [2]
    fixed = torchlint.fix_source(source, "e.py", SETTINGS, unsafe=True).source
    assert fixed == source.replace("def evaluate", "@torch.no_grad()\ndef evaluate")


def test_custom_pattern_option() -> None:
    source = """
    import torch

    from torch import nn

    def score_all(model: nn.Module, items):
        return [model(x).item() for x in items]
    """
    assert lines(source) == []
    custom = Settings(select=("TL301",), rule_options={"TL301": {"function-pattern": "^score"}})
    # A custom pattern turns the engine's quick text check off for this rule.
    assert lines(source, settings=custom) == [6]


def test_high_level_predictors_need_an_eval_call() -> None:
    source = """
    from ultralytics import YOLO

    def run_inference(frames):
        model = YOLO("yolov8n.pt")
        return [model(frame)[0].boxes.cpu() for frame in frames]
    """
    assert lines(source) == []


def _run(files: "List[Path]", cache: "Cache") -> "List[Tuple[str, int, bool]]":
    from torchlint.lint.runner import cached_run, lint_file

    outcomes = cached_run(files, lambda _: SETTINGS, lint_file, cache=cache)
    return [(Path(o.path).name, d.start.line, o.from_cache) for o in outcomes for d in o.diagnostics]


def test_callers_in_other_modules_decide_and_their_edits_reach_the_cache(tmp_path: Path) -> None:
    from torchlint.lint.cache import Cache

    engine = tmp_path / "engine.py"
    engine.write_text("import torch\n\ndef score(model, loader):\n    model.eval()\n"
                      "    return [model(x).item() for x in loader]\n")
    main = tmp_path / "main.py"
    main.write_text("import torch\nfrom engine import score\n\ndef run(m, l):\n    return score(m, l)\n")
    files = [engine, main]
    cache = Cache(tmp_path / "cache")
    assert _run(files, cache) == [("engine.py", 3, False)]
    assert _run(files, cache) == [("engine.py", 3, True)]
    # Only the caller changes: the callee's cached findings must not be reused.
    main.write_text("import torch\nfrom engine import score\n\ndef run(m, l):\n"
                    "    with torch.no_grad():\n        return score(m, l)\n")
    assert _run(files, cache) == []
    # A caller in a training step: it cannot be known, quiet.
    main.write_text("from engine import score\n\ndef run(m, loader, loss):\n    for x in loader:\n"
                    "        score(m, [x])\n        loss.backward()\n")
    assert _run(files, cache) == []


def test_in_file_helper_given_an_evaled_model_between_epochs_is_reported() -> None:
    """The caller trains too, but not in the call's step: the helper is evaluation code."""
    source = """
    import torch

    def accuracy(model, loader):
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)

    def fit(model, loader, val_loader, optimizer):
        for epoch in range(3):
            model.train()
            for x, y in loader:
                loss = torch.nn.functional.cross_entropy(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            model.eval()
            print(epoch, accuracy(model, val_loader))
    """
    assert lines(source) == [4]
    # Called in the step that runs backward: its outputs may feed it.
    in_step = source.replace("            print(epoch, accuracy(model, val_loader))\n", "") \
        .replace("                optimizer.step()\n",
                 "                optimizer.step()\n                model.eval()\n"
                 "                print(accuracy(model, val_loader))\n")
    assert lines(in_step) == []
    # Switched back to training mode before the call: not evaluation.
    retrained = source.replace("print(epoch, accuracy(", "model.train()\n            print(epoch, accuracy(")
    assert lines(retrained) == []


def test_call_sites_record_the_arguments_in_eval_mode(tmp_path: Path) -> None:
    from torchlint.analysis.queries import build, called_from

    (tmp_path / "metrics.py").write_text("def score(model, loader, k=1):\n    return [model(x) for x in loader]\n")
    (tmp_path / "run.py").write_text(
        "import metrics\nfrom metrics import *\n\n"
        "def a(net, other, loader):\n    net.eval()\n    metrics.score(net, loader)\n"
        "    metrics.score(model=other, loader=loader)\n    other.train(False)\n"
        "    score(loader=loader, model=other)\n    other.train()\n    metrics.score(other, loader)\n"
        "    net.train(mode=flag)\n    metrics.score(net, loader)\n"
    )
    index = build(sorted(tmp_path.glob("*.py")), [called_from(".eval(", ".train(False")])
    sites = index.callers_of("metrics.score")
    assert [(site.line, site.evaled) for site in sites] == [
        (6, ("0",)), (7, ()), (9, ("model",)), (11, ()), (13, ()),
    ]
    # Without a file that switches a model to eval mode, nothing is indexed.
    (tmp_path / "run.py").write_text("import metrics\n\ndef a(net, l):\n    metrics.score(net, l)\n")
    assert build(sorted(tmp_path.glob("*.py")), [called_from(".eval(")]).callers_of("metrics.score") == ()


def test_eval_at_the_end_of_a_module_chain_switches_the_module() -> None:
    """``net = net.cuda().eval()``: ``.cuda()`` returns the module, so ``net`` is in eval mode."""
    source = """
    import torch

    def infer(net, images):
        return [net(image).argmax(1).tolist() for image in images]

    def evaluate(net, images):
        net = net.cuda().eval()
        return infer(net, images)
    """
    assert lines(source) == [4]
    assert lines(source.replace("net.cuda().eval()", "net.cuda()")) == []
