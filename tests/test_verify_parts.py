"""Parts of `torchlint verify` that need no torch: the missing-torch path,
torch-free check/fix, contracts, timing statistics, reports, progress."""

from __future__ import annotations

import ast
import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from click.testing import CliRunner

from torchlint.cli import main
from torchlint.jobscript.rule import JobScriptRule
from torchlint.verify import command
from torchlint.registry import all_rules, by_code_or_name
from torchlint.verification import GENERIC_CONTRACT, program_paths
from torchlint.verify.contracts import contract_for
from torchlint.verify.progress import Progress
from torchlint.verify.report import render_markdown, render_table, to_json
from torchlint.verify.results import (
    EQUIVALENT,
    ERROR,
    FAIL,
    NOT_EQUIVALENT,
    NOTE,
    CaseResult,
    Environment,
    Finding,
    Memory,
    VerifyReport,
)
from torchlint.verify.timing import analyse, bootstrap_median

REPO = Path(__file__).resolve().parent.parent


def test_verify_without_torch_explains_how_to_install(monkeypatch):
    real = command.importlib.util.find_spec
    monkeypatch.setattr(
        command.importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a)
    )
    result = CliRunner().invoke(main, ["verify"])
    assert result.exit_code == 2
    assert "pip install 'torchlint[verify]'" in result.output


def test_check_fix_and_the_verify_command_module_never_import_torch(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import torch\nx = torch.zeros(3).cuda()\n")
    code = textwrap.dedent(
        f"""
        import sys
        from torchlint.cli import main
        import torchlint.verify.command
        for args in (["check", {str(script)!r}], ["check", "--fix", "--unsafe-fixes", {str(script)!r}]):
            try:
                main(args)
            except SystemExit:
                pass
        print("TORCH" if "torch" in sys.modules else "NO TORCH")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False)
    assert out.stdout.strip().endswith("NO TORCH"), out.stdout + out.stderr


def test_every_rule_with_a_fix_declares_its_programs_and_contract_in_its_spec():
    # Job-script rules fix batch scripts, not Python: verify has no program to run for them.
    fixable = [rule for rule in all_rules()
               if rule.fix_availability.value != "none" and not issubclass(rule, JobScriptRule)]
    assert {"TL101", "TL201", "TL301", "TL302", "TL401"} <= {rule.code for rule in fixable}
    for rule in fixable:
        spec = rule.verification
        assert spec is not None, rule.code
        assert program_paths(rule) and len(program_paths(rule)) == len(spec.programs), rule.code
        contract = spec.contract
        assert contract.level and contract.promise and contract.checks, rule.code
        assert contract_for(rule.code.lower()) is contract
    assert contract_for("TL999") is GENERIC_CONTRACT
    assert any("skipped" in text for text in contract_for("TL302").differences)
    assert any("checkpoint" in text for text in contract_for("TL401").differences)


def test_rule_probes_are_files_of_the_rule_not_the_harness():
    for code, name in (("TL201", "datasets"), ("TL302", "optimizer-steps")):
        rule = by_code_or_name(code)
        (probe,) = rule.verification.probes
        assert probe.name == name
        assert (Path(sys.modules[rule.__module__].__file__).parent / probe.file).is_file()
    harness = (REPO / "torchlint" / "verify" / "harness.py").read_text()
    assert "DataLoader" not in harness and "optimizer_step" not in harness


def test_verify_main_does_not_import_the_command_module():
    # The command imports main lazily; main importing the command made a cycle.
    tree = ast.parse((REPO / "torchlint" / "verify" / "main.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert "torchlint.verify.command" not in imported


def _raw(original, again, fixed, iqr=0.01):
    rounds = [[o, a, f] for o, a, f in zip(original, again, fixed)]

    def summary(label, values):
        median = sorted(values)[len(values) // 2]
        return {"label": label, "median": median, "iqr": iqr * median, "runs": 10, "number_per_run": 1}

    return {
        "summaries": [summary("original", original), summary("original again", again), summary("fixed", fixed)],
        "number": 1,
        "rounds": rounds,
        "threads": 1,
    }


def test_timing_reports_a_clear_speedup():
    original = [1.0 + 0.002 * (i % 5) for i in range(30)]
    again = [1.0 + 0.002 * ((i + 2) % 5) for i in range(30)]
    fixed = [0.8 + 0.002 * ((i + 1) % 5) for i in range(30)]
    summary = analyse(_raw(original, again, fixed))
    assert summary.verdict == "faster"
    assert 1.2 < summary.speedup < 1.3
    low, high = summary.speedup_interval
    assert low <= summary.speedup <= high


def test_timing_does_not_call_noise_a_speedup():
    # Identical code: fixed and original alternate in the same noise.
    pattern = [1.0, 1.05, 0.97, 1.02, 0.99, 1.04, 0.96, 1.01]
    original = [pattern[i % 8] for i in range(24)]
    again = [pattern[(i + 3) % 8] for i in range(24)]
    fixed = [pattern[(i + 5) % 8] for i in range(24)]
    assert analyse(_raw(original, again, fixed)).verdict == "no measurable difference"


def test_timing_small_or_noisy_differences_are_not_real():
    original = [1.0] * 20
    small = analyse(_raw(original, [1.0] * 20, [0.99] * 20))  # 1%: below the practical threshold
    assert small.verdict == "no measurable difference"
    noisy = analyse(_raw(original, [1.0] * 20, [0.5] * 20, iqr=0.5))
    assert noisy.verdict == "no measurable difference" and "noisy" in noisy.reason


def test_bootstrap_interval_brackets_the_median():
    interval = bootstrap_median([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    assert interval.low <= interval.value == 4.0 <= interval.high
    assert interval.excludes(10.0) and not interval.excludes(4.0)


def _report(*statuses, timing_error=""):
    timing = analyse(_raw([1.0] * 10, [1.0] * 10, [0.5] * 10))
    cases = tuple(
        CaseResult(
            rule="TL401",
            name="conv-bias-before-batchnorm",
            target="programs/tl401.py",
            status=status,
            level=contract_for("TL401").level,
            findings=(Finding(FAIL if status != EQUIVALENT else NOTE, "something | with a pipe"),),
            fixes=2,
            diff="--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
            memory=Memory("rss", 300 * 2**20, 280 * 2**20, 250 * 2**20, 250 * 2**20),
            timing=timing if status == EQUIVALENT else None,
            timing_error=timing_error,
        )
        for status in statuses
    )
    env = Environment("cpu", "Some CPU", "2.13.0+cpu", None, 1, "3.11.7", 2, "Linux")
    return VerifyReport(env, cases, quick=True, seed=0, timeout=120.0)


def test_exit_codes():
    assert _report(EQUIVALENT, EQUIVALENT).exit_code == 0
    assert _report(EQUIVALENT, NOT_EQUIVALENT).exit_code == 1
    assert _report(NOT_EQUIVALENT, ERROR).exit_code == 2
    assert _report(EQUIVALENT, timing_error="timing crashed").exit_code == 2


def test_report_renderings():
    report = _report(EQUIVALENT, NOT_EQUIVALENT)
    table = render_table(report)
    assert table.startswith("torchlint verify: device cpu (Some CPU), torch 2.13.0+cpu, 1 thread of 2 CPUs")
    assert "Speedup [95% CI]" in table and "2.00x" in table and "faster" in table
    assert "+50.0 MiB -> +30.0 MiB" in table
    assert "1 equivalent, 1 not equivalent, 0 error(s)." in table
    markdown = render_markdown(report)
    assert "| Rule | Target | Equivalence |" in markdown and "```diff" in markdown
    assert "- ❌ **fail**: something | with a pipe" in markdown
    data = json.loads(json.dumps(to_json(report)))
    assert data["exit_code"] == 1 and data["environment"]["device"] == "cpu"
    assert data["cases"][0]["timing"]["verdict"] == "faster"
    assert data["cases"][1]["timing"] is None


def test_progress_prints_plain_lines_when_not_a_terminal():
    stream = io.StringIO()
    progress = Progress(3, stream=stream)
    progress.step("running the original")
    progress.skip(1)
    progress.step("running the fixed version")
    progress.finish()
    assert stream.getvalue().splitlines() == [
        "torchlint verify [1/3] running the original",
        "torchlint verify [2/2] running the fixed version",
    ]
