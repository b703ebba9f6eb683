"""What a blind held-out run of `torchlint verify` found (132 changes to 15 scripts it had never
seen; docs/measurements-verify.md), each fixed and tested here (needs torch):

- a checkpoint of a model's ``state_dict()`` written beside the script made TL401's correct fix
  "not equivalent": the saved bias was taken for the bias's gradient (matched by its name), and
  the saved running means, which move by the absorbed bias as the model's do, were compared as
  plain values;
- a gradient scaler switched from disabled to enabled passed the strict contract: a disabled
  scaler's ``state_dict()`` is empty, so nothing said it was disabled;
- adding these scripts to the corpus showed a checkpoint the run only *read* counted as one it
  wrote when its modification time fell within a second of the run's start (a file made just
  before, as the corpus's fixtures are): a change that could load it (``add_safe_globals``) got
  outputs the original did not.

Every test here fails on the code before the fix.
"""

from __future__ import annotations

import os
import textwrap
import time
import warnings
from typing import Any, Dict, List, Tuple

import pytest

with warnings.catch_warnings():  # torch warns at import when NumPy is missing
    warnings.simplefilter("ignore")
    torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from torchlint.ruleapi.registry import by_code_or_name  # noqa: E402
from torchlint.verify import capture  # noqa: E402
from torchlint.verify.compare import Context, check_for, check_strict  # noqa: E402
from torchlint.verify.results import EQUIVALENT, FAIL, RunData  # noqa: E402
from torchlint.verify.plan import plan_pair  # noqa: E402
from torchlint.verify.session import Session, VerifyOptions  # noqa: E402


def _run(items: List[Tuple[str, Any]], steps: int = 0) -> RunData:
    """What a run leaving ``items`` would hand the comparison (flattened as the harness does)."""
    flat = capture.flatten(items)
    return RunData("ok", values=flat.values, meta=flat.meta, batchnorms=flat.batchnorms,
                   origin="globals and locals", math={"steps": steps})


def _failures(findings: List[Any]) -> List[str]:
    return [finding.message for finding in findings if finding.severity == FAIL]


def _trained(bias: bool, steps: int = 3) -> Tuple[nn.Module, torch.optim.Optimizer]:
    """A conv + batch norm model trained ``steps`` steps; the same weights and data with or
    without the conv's bias (the bias starts far from zero, so its absorption shows)."""
    generator = torch.Generator().manual_seed(0)
    model = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1, bias=bias), nn.BatchNorm2d(3), nn.ReLU(),
                          nn.Flatten(), nn.Linear(3 * 4 * 4, 2))
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name == "0.bias":
                parameter.copy_(torch.tensor([0.5, -0.3, 0.8]))
            else:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = torch.Generator().manual_seed(1)
    images, targets = torch.randn(8, 2, 4, 4, generator=data), torch.randint(0, 2, (8,), generator=data)
    for _ in range(steps):
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(images), targets).backward()
        optimizer.step()
    return model, optimizer


def test_a_saved_state_dict_is_flattened_as_its_models_state_with_its_batch_norms():
    model, _ = _trained(bias=True, steps=1)
    flat = capture.flatten([("main().model", model),
                            ("file:ck.pt", {"model": model.state_dict(), "epoch": 1})])
    meta = flat.meta["file:ck.pt.model.1.running_mean"]
    assert (meta["source"], meta["owner"], meta["name"]) == ("module", "file:ck.pt.model", "1.running_mean")
    assert flat.batchnorms["file:ck.pt.model.1.running_mean"]["count"] == "file:ck.pt.model.1.num_batches_tracked"
    assert flat.meta["file:ck.pt.epoch"]["source"] == "value"  # what is not a module's state stays a value
    # a dict that only looks like one (other shapes) is not taken for the model's state
    other = {name: torch.zeros(2) for name in model.state_dict()}
    assert capture.flatten([("model", model), ("other", other)]).meta["other.0.weight"]["source"] == "value"


def test_tl401_judges_the_checkpoint_of_the_model_like_the_model_and_still_fails_a_wrong_one():
    check = check_for(by_code_or_name("TL401")).run
    (model, optimizer), (fixed_model, fixed_optimizer) = _trained(bias=True), _trained(bias=False)

    def outputs(net: nn.Module, opt: Any, saved: Dict[str, Any]) -> List[Tuple[str, Any]]:
        return [("main().model", net), ("main().opt", opt), ("file:convbn.pt", saved)]

    original = _run(outputs(model, optimizer, model.state_dict()), steps=3)
    fixed = _run(outputs(fixed_model, fixed_optimizer, fixed_model.state_dict()), steps=3)
    findings = check(original, fixed, Context("cpu"))
    assert _failures(findings) == [], _failures(findings)
    assert any("file:convbn.pt.1.running_mean" in f.message and "absorbed part of the old bias" in f.message
               for f in findings)
    # The checkpoint is judged, not skipped: a running mean saved off by 0.05 fails.
    wrong = fixed_model.state_dict()
    wrong["1.running_mean"] = wrong["1.running_mean"] + 0.05
    findings = check(original, _run(outputs(fixed_model, fixed_optimizer, wrong), steps=3), Context("cpu"))
    assert any("file:convbn.pt.1.running_mean" in message for message in _failures(findings)), findings


def _two_blocks(first_bias: bool, nudge: float = 0.0) -> Tuple[nn.Module, torch.optim.Optimizer]:
    """Two conv + batch norm blocks, trained 2 steps; the second conv keeps its bias, moved by
    ``nudge`` after training (a broken change)."""
    model = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1, bias=first_bias), nn.BatchNorm2d(3),
                          nn.Conv2d(3, 3, 3, padding=1), nn.BatchNorm2d(3), nn.Flatten(), nn.Linear(48, 2))
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            seed = sum(map(ord, name))  # each parameter from its own stream: the same with or without a bias
            parameter.copy_(torch.randn(parameter.shape, generator=torch.Generator().manual_seed(seed)) * 0.3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = torch.Generator().manual_seed(1)
    images, targets = torch.randn(8, 2, 4, 4, generator=data), torch.randint(0, 2, (8,), generator=data)
    for _ in range(2):
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(images), targets).backward()
        optimizer.step()
    with torch.no_grad():
        model[2].bias.add_(nudge)
    return model, optimizer


def test_another_models_kept_bias_of_the_same_name_excuses_nothing():
    """A second model built alike (a frozen teacher, no gradients) keeps a bias named like the
    student's kept one: the student's bias is still compared, and a changed one fails (before the
    fix the teacher's bias "covered" it by name and it passed as rounding noise, unread)."""
    check = check_for(by_code_or_name("TL401")).run
    model, optimizer = _two_blocks(first_bias=True)
    teacher, _ = _two_blocks(first_bias=True)
    teacher.zero_grad(set_to_none=True)
    original = _run([("student", model), ("optimizer", optimizer), ("teacher", teacher)], steps=2)
    good, good_optimizer = _two_blocks(first_bias=False)
    assert _failures(check(original, _run([("student", good), ("optimizer", good_optimizer),
                                           ("teacher", teacher)], steps=2), Context("cpu"))) == []
    broken, broken_optimizer = _two_blocks(first_bias=False, nudge=0.25)
    failures = _failures(check(original, _run([("student", broken), ("optimizer", broken_optimizer),
                                               ("teacher", teacher)], steps=2), Context("cpu")))
    assert any("student.2.bias" in message for message in failures), failures


def test_a_scaler_switched_from_disabled_to_enabled_is_not_the_same_configuration():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        disabled = torch.amp.GradScaler("cpu", enabled=False)
        enabled = torch.amp.GradScaler("cpu")
    flat = capture.flatten([("trainer_scaler", disabled)])
    assert flat.values["trainer_scaler.enabled"] is False
    assert flat.meta["trainer_scaler.enabled"]["source"] == "config"
    findings = check_strict(_run([("scaler", disabled)]), _run([("scaler", enabled)]), Context("cpu"))
    assert any("scaler.enabled" in message for message in _failures(findings)), findings


def test_only_checkpoints_the_run_writes_are_its_outputs_whatever_their_times(tmp_path):
    """A checkpoint already there, even one whose modification time lies ahead of the run's start,
    is not an output; one the run creates, and one it rewrites in place, are."""
    torch.save({"w": torch.ones(2)}, tmp_path / "read.pt")
    torch.save({"w": torch.ones(2)}, tmp_path / "rewritten.pt")
    ahead = time.time() + 60
    for name in ("read.pt", "rewritten.pt"):
        os.utime(tmp_path / name, (ahead, ahead))
    before = capture.checkpoint_states(str(tmp_path))
    assert dict(capture.written_checkpoints(str(tmp_path), before)) == {}
    torch.save({"w": torch.zeros(2)}, tmp_path / "rewritten.pt")
    torch.save({"w": torch.zeros(3)}, tmp_path / "new.ckpt")
    os.utime(tmp_path / "rewritten.pt", (ahead, ahead))  # same time as before: its size and ctime tell
    assert sorted(dict(capture.written_checkpoints(str(tmp_path), before))) == ["file:new.ckpt", "file:rewritten.pt"]


@pytest.mark.slow  # a verify session in fresh processes
def test_a_checkpoint_the_script_only_reads_is_not_compared_even_when_only_the_change_can_load_it(tmp_path):
    folder = tmp_path / "job"
    folder.mkdir()
    model = nn.Linear(3, 1)
    torch.save({"model": model.state_dict(), "args": __import__("argparse").Namespace(lr=0.1)}, folder / "run.pt")
    ahead = time.time() + 60  # as if made a moment before the run: within the old one-second slack
    os.utime(folder / "run.pt", (ahead, ahead))
    source = textwrap.dedent("""\
        import argparse

        import torch
        from torch import nn


        def main():
            checkpoint = torch.load("run.pt", weights_only=False)
            model = nn.Linear(3, 1)
            model.load_state_dict(checkpoint["model"])
            print(f"resumed at lr {checkpoint['args'].lr}")
            return model


        if __name__ == "__main__":
            main()
    """)
    script = folder / "train.py"
    script.write_text(source)
    changed = tmp_path / "changed.py"
    changed.write_text(source.replace(
        '    checkpoint = torch.load("run.pt", weights_only=False)\n',
        '    torch.serialization.add_safe_globals([argparse.Namespace])\n'
        '    checkpoint = torch.load("run.pt", weights_only=True)\n'))
    with Session(VerifyOptions(quick=True, timing=False, timeout=60)) as session:
        (result,) = session.run_cases(plan_pair(script, changed, []))
    assert result.status == EQUIVALENT, [f.message for f in result.findings]
    assert not any(output.name.startswith("file:") for output in result.outputs)
