"""`torchlint verify` end to end, on the CPU, with small sizes (needs torch).

The shipped programs must verify as equivalent, and the checks must be able
to fail: hand-broken "fixed" sources fed to the comparison machinery, and
real torchlint fixes of scripts where the fix does change behaviour, are
reported as not equivalent.
"""

from __future__ import annotations

import dataclasses
import json
import os
import textwrap
import time
import warnings
from pathlib import Path

import pytest

with warnings.catch_warnings():  # torch warns at import when NumPy is missing
    warnings.simplefilter("ignore")
    torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from torchlint.interfaces.cli import main  # noqa: E402
from torchlint.ruleapi.registry import by_code_or_name  # noqa: E402
from torchlint.lint.settings import Settings  # noqa: E402
from torchlint.ruleapi.verification import program_paths  # noqa: E402
from torchlint.verify.results import EQUIVALENT, ERROR, FAIL, NOT_EQUIVALENT, WARN  # noqa: E402
from torchlint.verify.plan import Case, plan_programs, plan_script, verifiable_rules  # noqa: E402
from torchlint.verify.session import Session, VerifyOptions  # noqa: E402

RULES = ("TL101", "TL201", "TL301", "TL302", "TL401")


@pytest.fixture(scope="module")
def session():
    with Session(VerifyOptions(quick=True, timing=False, timeout=60)) as shared:
        yield shared


def _fixed_program(code: str) -> str:
    """The shipped program for ``code`` after torchlint's own fix."""
    return plan_programs(by_code_or_name(code), Settings())[0].fixed


def program_path(code: str) -> Path:
    """The first verification program the rule's spec names."""
    return program_paths(by_code_or_name(code))[0]


def _messages(result, severity=None):
    return "\n".join(f.message for f in result.findings if severity is None or f.severity == severity)


def _script(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


# -- the shipped programs -----------------------------------------------------------


@pytest.mark.slow  # a full verify run in fresh processes: `pytest -m slow`
def test_every_shipped_program_is_fixed_by_torchlint_and_verifies_equivalent(session):
    assert {rule.code for rule in verifiable_rules()} >= set(RULES)
    cases = [case for code in RULES for case in plan_programs(by_code_or_name(code), Settings())]
    for case in cases:
        assert not case.error and case.fixes > 0 and case.fixed != case.original, case.rule
    results = {result.rule: result for result in session.run_cases(cases)}
    for code in RULES:
        result = results[code]
        assert result.status == EQUIVALENT, f"{code}:\n{_messages(result)}"
        assert result.compared > 0 and result.diff.startswith("--- a/")
        assert result.memory is not None and result.memory.kind == "rss"
    assert "required to be identical" in _messages(results["TL101"])
    assert "no longer require grad" in _messages(results["TL301"])
    assert "every parameter had a gradient" in _messages(results["TL302"])
    tl401 = _messages(results["TL401"])
    assert "1 eval-mode output(s) matched the original model replayed" in tl401
    assert "absorbed part of the old bias" in tl401 and "rounding noise" in tl401
    assert "Unexpected key(s)" in tl401


# -- hand-broken fixes: the comparison must catch them ---------------------------------


@pytest.mark.slow  # over 4 s on 2 busy cores; `pytest -m slow` (run by .ci/run) keeps it
def test_a_fix_that_drops_a_batchnorm_is_not_equivalent(session):
    original = program_path("TL401").read_text()
    fixed = _fixed_program("TL401").replace("            nn.BatchNorm2d(width),\n", "", 1)
    result = session.compare_sources("TL401", original, fixed)
    assert result.status == NOT_EQUIVALENT
    failures = _messages(result, FAIL)
    assert "missing from the fixed run's outputs" in failures
    assert "not close" in failures


def test_a_bias_removed_where_no_batchnorm_cancels_it_is_not_equivalent(session):
    original = program_path("TL401").read_text()
    fixed = _fixed_program("TL401").replace("nn.Linear(width, classes)", "nn.Linear(width, classes, bias=False)")
    result = session.compare_sources("TL401", original, fixed)
    assert result.status == NOT_EQUIVALENT
    failures = _messages(result, FAIL)
    assert "gradient of the removed bias is not negligible" in failures and "`grads.head.bias`" in failures
    assert "values not close: `losses`" in failures


def test_a_fix_that_changes_a_tensor_value_is_not_equivalent(session):
    original = program_path("TL101").read_text()
    fixed = _fixed_program("TL101")
    assert "torch.full((DIM,), 1.0 / math.sqrt(DIM), device=device)" in fixed
    broken = fixed.replace("torch.full((DIM,), 1.0 /", "torch.full((DIM,), 1.01 /")
    result = session.compare_sources("TL101", original, broken)
    assert result.status == NOT_EQUIVALENT
    assert "values not identical: `tensors.scale`" in _messages(result, FAIL)


def test_a_fix_that_changes_a_random_distribution_or_dtype_is_not_equivalent(session):
    original = program_path("TL101").read_text()
    fixed = _fixed_program("TL101")
    broken = fixed.replace("torch.randn(BATCH, SEQ, DIM, device=device)", "torch.rand(BATCH, SEQ, DIM, device=device)")
    broken = broken.replace("torch.rand(BATCH, SEQ, device=device) > 0.1", "torch.rand(BATCH, SEQ, device=device)")
    assert broken.count("torch.rand(") == 2
    result = session.compare_sources("TL101", original, broken)
    assert result.status == NOT_EQUIVALENT
    failures = _messages(result, FAIL)
    assert "values not identical: `tensors.noise`" in failures  # the CPU draws from the same generator
    assert "dtype changed: `tensors.keep` (torch.bool -> torch.float32)" in failures


def test_a_fix_that_changes_training_is_not_equivalent(session):
    original = program_path("TL302").read_text()
    broken = _fixed_program("TL302").replace("lr=0.01", "lr=0.0100001")
    result = session.compare_sources("TL302", original, broken)
    assert result.status == NOT_EQUIVALENT
    assert "values not identical: `sgd_model.0.weight`" in _messages(result, FAIL)


# -- real torchlint fixes that do change behaviour ---------------------------------------


def test_zero_grad_fix_with_an_unused_branch_is_not_equivalent(session, tmp_path):
    script = _script(tmp_path, "two_heads.py", """
        import torch
        from torch import nn


        class TwoHeads(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(8, 8)
                self.head_a = nn.Linear(8, 1)
                self.head_b = nn.Linear(8, 1)

            def forward(self, x, task):
                h = torch.relu(self.body(x))
                return self.head_a(h) if task == "a" else self.head_b(h)


        model = TwoHeads()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x, y = torch.randn(16, 8), torch.randn(16, 1)
        for step in range(4):
            optimizer.zero_grad(set_to_none=False)
            loss = nn.functional.mse_loss(model(x, "ab"[step % 2]), y)
            loss.backward()
            optimizer.step()
    """)
    (case,) = plan_script(script, [by_code_or_name("TL302")], Settings())
    assert "set_to_none=True" in case.fixed
    (result,) = session.run_cases([case])
    assert result.status == NOT_EQUIVALENT
    assert "values not identical" in _messages(result, FAIL)
    assert "had no gradient at an optimizer step" in _messages(result, WARN)


def test_no_grad_fix_breaks_a_caller_that_needs_gradients(session, tmp_path):
    script = _script(tmp_path, "saliency.py", """
        import torch
        from torch import nn

        model = nn.Linear(4, 2)
        x = torch.randn(8, 4)


        def evaluate(model, x):
            model.eval()
            return model(x)


        def explain(out):
            # The backward pass sits in another function: TL301 cannot see it.
            out.pow(2).mean().backward()


        explain(evaluate(model, x))
        saliency = model.weight.grad
    """)
    (case,) = plan_script(script, [by_code_or_name("TL301")], Settings())
    (result,) = session.run_cases([case])
    assert result.status == NOT_EQUIVALENT
    assert "the fixed version raised" in _messages(result, FAIL)
    assert "does not require grad" in _messages(result, FAIL)


def test_workers_change_a_random_getitem_and_the_report_says_why(session, tmp_path):
    script = _script(tmp_path, "noisy_data.py", """
        import torch
        from torch.utils.data import DataLoader, Dataset


        class Noisy(Dataset):
            def __len__(self):
                return 8

            def __getitem__(self, i):
                return torch.full((2,), float(i)) + 0.1 * torch.randn(2)


        if __name__ == "__main__":
            loader = DataLoader(Noisy(), batch_size=4, generator=torch.Generator().manual_seed(0))
            batches = torch.cat(list(loader))
    """)
    (case,) = plan_script(script, [by_code_or_name("TL201")], Settings())
    (result,) = session.run_cases([case])
    assert result.status == NOT_EQUIVALENT
    assert "`Noisy.__getitem__` uses randomness" in _messages(result, WARN)


# -- runs that fail, hang or crash ------------------------------------------------------------


def test_an_original_that_raises_is_an_error_with_its_traceback(session):
    source = "import torch\nx = torch.zeros(2)\nraise ValueError('broken script')\n"
    result = session.compare_sources("TL101", source, source.replace("zeros", "ones"))
    assert result.status == ERROR
    assert "ValueError: broken script" in _messages(result, FAIL)
    assert "program.py [original]" in _messages(result, FAIL)


def test_a_crash_of_the_fixed_version_is_an_error(session):
    # A crash is an error (exit 2), as the README says, not "not equivalent" (issue 24, item 10).
    source = "import os\nimport torch\nx = torch.zeros(2)\n"
    result = session.compare_sources("TL101", source, source + "os._exit(3)\n")
    assert result.status == ERROR
    assert "exited with status 3" in _messages(result, FAIL)


def test_a_run_past_its_timeout_is_killed_with_its_process_group(session, tmp_path):
    marker = tmp_path / "child.pid"
    source = textwrap.dedent(f"""
        import subprocess, sys, time
        helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        open({str(marker)!r}, "w").write(str(helper.pid))
        time.sleep(300)
    """)
    saved = session.options
    session.options = dataclasses.replace(saved, timeout=3)
    try:
        started = time.monotonic()
        result = session.compare_sources("TL101", source, source)
    finally:
        session.options = saved
    assert time.monotonic() - started < 30
    assert result.status == ERROR
    assert "did not finish in time" in _messages(result, FAIL)
    helper = int(marker.read_text())
    for _ in range(50):  # the group got SIGTERM; give the kernel a moment
        try:
            os.kill(helper, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the run's child process survived the timeout")


@pytest.mark.slow  # a full verify run in fresh processes: `pytest -m slow`
def test_fresh_processes_work_without_the_fork_server(monkeypatch):
    monkeypatch.setenv("TORCHLINT_VERIFY_FORK", "0")
    source = "import torch\nx = torch.arange(4)\n"
    with Session(VerifyOptions(quick=True, timing=False, timeout=60)) as fresh:
        assert type(fresh.runner).__name__ == "FreshProcesses"
        case = Case("TL101", "tensor-created-then-moved", "program.py", source, source, 0)
        run = fresh._run_original(case, seed_probe=False)
    assert run.ok, run.error
    assert torch.equal(run.values["x"], torch.arange(4)) and run.noise == {"x": 0.0}


# -- the command line -------------------------------------------------------------------------


@pytest.mark.slow  # a full verify run in fresh processes: `pytest -m slow`
def test_cli_verifies_a_program_with_timing_and_writes_json_and_markdown(tmp_path):
    out_json, out_md = tmp_path / "verify.json", tmp_path / "verify.md"
    result = CliRunner().invoke(
        main, ["verify", "--rules", "TL302", "--quick", "--json", str(out_json), "--markdown", str(out_md)]
    )
    assert result.exit_code == 0, result.output
    assert "torchlint verify: device cpu (" in result.output and "torch 2." in result.output
    assert "TL302  zero_grad_not_set_to_none/verify_program.py  equivalent" in result.output
    data = json.loads(out_json.read_text())
    (case,) = data["cases"]
    assert case["status"] == "equivalent" and case["fixes"] == 1
    timing = case["timing"]
    assert timing["verdict"] in ("faster", "slower", "no measurable difference", "too noisy to decide")
    assert timing["original_median_s"] > 0 and len(timing["speedup_ci95"]) == 2
    assert len(timing["original_vs_original"]) == 3
    assert data["environment"]["threads"] == 1
    assert "| TL302 `zero-grad-not-set-to-none` |" in out_md.read_text()


@pytest.mark.slow  # a full verify run in fresh processes: `pytest -m slow`
def test_cli_on_scripts_reports_each_and_exits_1(tmp_path):
    good = _script(tmp_path, "good.py", """
        import torch
        from torch import nn

        model = nn.Linear(4, 1)
        optimizer = torch.optim.Adam(model.parameters())
        x = torch.randn(8, 4)
        for _ in range(3):
            optimizer.zero_grad(set_to_none=False)
            model(x).sum().backward()
            optimizer.step()


        def torchlint_outputs():
            return {"model": model, "optimizer": optimizer}
    """)
    bad = _script(tmp_path, "bad.py", """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 1))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, weight_decay=0.1)
        x = torch.randn(8, 4)
        for step in range(3):
            optimizer.zero_grad(set_to_none=False)
            out = model[1](x) if step else model(x)
            out.sum().backward()
            optimizer.step()
    """)
    clean = _script(tmp_path, "clean.py", "import torch\nx = torch.zeros(3)\n")
    out_json = tmp_path / "out.json"
    result = CliRunner().invoke(
        main, ["verify", str(good), str(bad), str(clean), "--quick", "--no-timing", "--json", str(out_json)]
    )
    assert result.exit_code == 1, result.output
    statuses = {Path(case["target"]).name: case["status"] for case in json.loads(out_json.read_text())["cases"]}
    assert statuses == {"good.py": "equivalent", "bad.py": "not equivalent"}
    assert "clean.py: no fix of" in result.output


def test_cli_usage_errors_exit_2():
    runner = CliRunner()
    no_fix = runner.invoke(main, ["verify", "--rules", "TL501"])
    assert no_fix.exit_code == 2 and "has no autofix" in no_fix.output
    unknown = runner.invoke(main, ["verify", "--rules", "TL999"])
    assert unknown.exit_code == 2 and "unknown rule" in unknown.output
    if not torch.cuda.is_available():
        cuda = runner.invoke(main, ["verify", "--device", "cuda"])
        assert cuda.exit_code == 2 and "no CUDA device" in cuda.output


def test_record_writes_each_shipped_programs_row_where_explain_reads_it(tmp_path, monkeypatch):
    import torchlint.ruleapi.verification as verification
    from torchlint.verify.report import record_measured
    from torchlint.verify.results import CaseResult, Environment, VerifyReport

    monkeypatch.setattr(verification, "rule_directory", lambda rule: tmp_path / rule.name)
    rule = by_code_or_name("TL302")
    (tmp_path / rule.name).mkdir()
    shipped = Case(rule.code, rule.name, "zero_grad_not_set_to_none/verify_program.py", "a", "b", 1)
    script = dataclasses.replace(shipped, target="mine.py", script=tmp_path / "mine.py")
    results = tuple(CaseResult(case.rule, case.name, case.target, EQUIVALENT, "identical") for case in (shipped, script))
    env = Environment("cpu", "Some CPU", "2.13.0+cpu", None, 1, "3.11.7", 2, "Linux")
    report = VerifyReport(env, results, quick=True, seed=0, timeout=60.0)
    written = record_measured(report, [shipped, script])
    assert written == [tmp_path / rule.name / "measured.json"]
    measured = verification.read_measured(rule)
    assert measured.target == shipped.target and measured.cells[0] == EQUIVALENT
    assert "Some CPU" in measured.hardware and "quick mode" in measured.hardware
    assert "Measured (device cpu (Some CPU)" in rule.documentation()
