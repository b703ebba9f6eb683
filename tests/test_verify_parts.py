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

from torchlint.interfaces.cli import main
from torchlint.jobscript.rule import JobScriptRule
from torchlint.verify import command
from torchlint.ruleapi.registry import all_rules, by_code_or_name
from torchlint.ruleapi.verification import GENERIC_CONTRACT, program_paths
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
from torchlint.verify.timing import ProcessTiming, analyse, slot_orders

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
        from torchlint.interfaces.cli import main
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
        assert len(program_paths(rule)) == len(spec.programs), rule.code
        contract = spec.contract
        assert contract.level and contract.promise and contract.checks, rule.code
        # A fix whose runtime equivalence means nothing (an import spelled
        # differently, an intended behaviour change) or cannot be run here
        # (torchvision is not installed) ships no program, and says why.
        assert spec.programs or any(check.startswith("no program: ") for check in contract.checks), rule.code
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
    # The harness seeds loaders and counts optimizer steps for every rule; what one rule
    # asks of datasets and gradients stays in that rule's probe.
    for rule_knowledge in ("IterableDataset", "__getitem__", "most_without_grad", "eval_calls"):
        assert rule_knowledge not in harness, rule_knowledge


def test_verify_main_does_not_import_the_command_module():
    # The command imports main lazily; main importing the command made a cycle.
    tree = ast.parse((REPO / "torchlint" / "verify" / "main.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert "torchlint.verify.command" not in imported


def _processes(original, again, fixed, rounds=2):
    """Timing processes: each label's block times split over ``rounds`` processes."""
    processes = []
    for label, values in (("original", original), ("original again", again), ("fixed", fixed)):
        size = len(values) // rounds
        for index in range(rounds):
            blocks = tuple(values[index * size:(index + 1) * size])
            processes.append(ProcessTiming(label, index, ("original", "original again", "fixed").index(label), 1, blocks))
    return processes


def test_timing_reports_a_clear_speedup():
    original = [1.0 + 0.002 * (i % 5) for i in range(30)]
    again = [1.0 + 0.002 * ((i + 2) % 5) for i in range(30)]
    fixed = [0.8 + 0.002 * ((i + 1) % 5) for i in range(30)]
    summary = analyse(_processes(original, again, fixed), threads=1)
    assert summary.verdict == "faster"
    assert 1.2 < summary.speedup < 1.3
    low, high = summary.speedup_interval
    assert low <= summary.speedup <= high


def test_timing_reports_a_significantly_slower_fix_as_slower():
    original = [1.0 + 0.002 * (i % 5) for i in range(30)]
    again = [1.0 + 0.002 * ((i + 2) % 5) for i in range(30)]
    fixed = [1.4 + 0.002 * ((i + 1) % 5) for i in range(30)]
    summary = analyse(_processes(original, again, fixed), threads=1)
    assert summary.verdict == "slower"
    assert summary.speedup < 1.0 and summary.ratio.low > 1.0 + summary.threshold


def test_timing_decides_from_the_intervals_near_end_not_the_point_estimate():
    # One fixed process is 10% faster, the other no faster: the median says 5% (above the
    # 3% threshold), but between-process variation puts the interval's upper end near 1.
    original = [1.0, 1.001, 0.999, 1.0, 1.0, 1.001, 0.999, 1.0, 1.0, 1.001, 0.999, 1.0]
    fixed = [0.9, 0.901, 0.899, 0.9, 0.9, 0.901, 1.0, 1.001, 0.999, 1.0, 1.0, 1.001]
    summary = analyse(_processes(original, list(original), fixed), threads=1)
    assert abs(summary.ratio.value - 1.0) > summary.threshold  # the point estimate alone would say "faster"
    assert summary.ratio.high > 1.0 - summary.threshold
    assert summary.verdict == "no measurable difference"


def test_timing_does_not_call_noise_a_speedup():
    # Identical code: fixed and original alternate in the same noise.
    pattern = [1.0, 1.05, 0.97, 1.02, 0.99, 1.04, 0.96, 1.01]
    original = [pattern[i % 8] for i in range(24)]
    again = [pattern[(i + 3) % 8] for i in range(24)]
    fixed = [pattern[(i + 5) % 8] for i in range(24)]
    assert analyse(_processes(original, again, fixed), threads=1).verdict == "no measurable difference"


def test_timing_small_or_noisy_differences_are_not_real():
    original = [1.0] * 20
    small = analyse(_processes(original, [1.0] * 20, [0.99] * 20), threads=1)  # 1%: below the threshold
    assert small.verdict == "no measurable difference"
    noisy_blocks = [0.5, 1.5, 0.5, 1.5, 0.5, 1.5, 0.5, 1.5, 0.5, 1.5]
    noisy = analyse(_processes(noisy_blocks * 2, noisy_blocks * 2, [0.25] * 20), threads=1)
    assert noisy.verdict == "too noisy to decide" and "noisy" in noisy.reason


def test_slow_steps_with_one_block_each_are_judged_by_the_spread_between_processes():
    # A slow step: one block per process, so every IQR is 0; the processes disagree by 60%.
    processes = [
        ProcessTiming("original", 0, 0, 1, (1.0,)), ProcessTiming("original", 1, 1, 1, (1.6,)),
        ProcessTiming("original again", 0, 1, 1, (1.3,)), ProcessTiming("original again", 1, 0, 1, (1.0,)),
        ProcessTiming("fixed", 0, 2, 1, (0.9,)), ProcessTiming("fixed", 1, 2, 1, (0.95,)),
    ]
    assert all(process.iqr == 0 for process in processes)
    summary = analyse(processes, threads=1)
    assert summary.verdict == "too noisy to decide"
    assert "spread over" in summary.reason and summary.between_process["original"] > 0.25


def test_a_noisy_measurement_still_decides_a_difference_far_beyond_its_noise():
    # Issue 24 item 11: TL201's fix made a small script 19x slower, and one round's IQR over
    # 25% made it "too noisy to decide".  An interval far beyond every spread measured decides.
    noisy = [1.0, 1.4, 0.9, 1.5, 1.0, 1.3, 0.95, 1.45]
    slower = [value * 19 for value in noisy]
    summary = analyse(_processes(noisy * 2, noisy[::-1] * 2, slower * 2), threads=1)
    assert summary.verdict == "slower" and "noisy" in summary.reason, summary.reason
    low, high = summary.speedup_interval
    assert high < 0.1  # the interval is reported with the verdict
    faster = analyse(_processes(noisy * 2, noisy[::-1] * 2, [value / 19 for value in noisy] * 2), threads=1)
    assert faster.verdict == "faster", faster.reason
    # Beyond the threshold but within the noise: still undecided.
    near = analyse(_processes(noisy * 2, noisy[::-1] * 2, [value * 1.3 for value in noisy] * 2), threads=1)
    assert near.verdict == "too noisy to decide", near.reason


def test_slot_orders_are_seeded_and_use_every_arrangement():
    orders = slot_orders(6, seed=3)
    assert orders == slot_orders(6, seed=3)
    assert len(set(orders)) == 6
    assert all(sorted(order) == ["fixed", "original", "original again"] for order in orders)
    assert slot_orders(6, seed=4) != orders


def test_position_effects_are_measured_per_slot():
    # Whatever runs in the first slot is 20% slower; the others are not.
    processes = []
    for round_index, order in enumerate(slot_orders(6, seed=0)):
        for slot, label in enumerate(order):
            base = 0.5 if label == "fixed" else 1.0
            processes.append(ProcessTiming(label, round_index, slot, 1, (base * (1.2 if slot == 0 else 1.0),) * 5))
    summary = analyse(processes, threads=1)
    assert summary.position_effect[0] > summary.position_effect[1] == summary.position_effect[2]
    assert summary.noise.high > 1.0  # the A/A comparison saw the first slot's cost


def test_the_tables_speedup_is_the_ratio_of_the_medians_it_shows():
    original = [2.0 + 0.001 * (i % 7) for i in range(30)]
    fixed = [1.0 + 0.003 * (i % 5) for i in range(30)]
    summary = analyse(_processes(original, list(reversed(original)), fixed, rounds=3), threads=1)
    row = render_table(_report_with(summary)).splitlines()[4]
    cells = row.split()
    original_shown, fixed_shown = float(cells[3]), float(cells[5])
    speedup_shown = float(cells[7].rstrip("x"))
    assert speedup_shown == round(summary.original_median / summary.fixed_median, 2)
    assert abs(speedup_shown - original_shown / fixed_shown) < 0.01


def _timing_summary(fixed_value):
    return analyse(_processes([1.0] * 10, [1.0] * 10, [fixed_value] * 10), threads=1)


def _report_with(timing, fail_on_slower=False):
    case = CaseResult(rule="TL401", name="conv-bias-before-batchnorm", target="programs/tl401.py",
                      status=EQUIVALENT, level="close", timing=timing)
    env = Environment("cpu", "Some CPU", "2.13.0+cpu", None, 1, "3.11.7", 2, "Linux")
    return VerifyReport(env, (case,), quick=True, seed=0, timeout=120.0, fail_on_slower=fail_on_slower)


def test_a_slower_fix_exits_1_only_with_fail_on_slower():
    slower = _timing_summary(2.0)
    assert slower.verdict == "slower"
    assert _report_with(slower).exit_code == 0
    assert _report_with(slower, fail_on_slower=True).exit_code == 1
    assert _report_with(_timing_summary(0.5), fail_on_slower=True).exit_code == 0
    assert "slower" in render_table(_report_with(slower))


def test_the_json_keeps_every_processs_raw_block_times():
    summary = _timing_summary(0.5)
    data = json.loads(json.dumps(to_json(_report_with(summary))))
    timing = data["cases"][0]["timing"]
    assert len(timing["processes"]) == 6
    assert {p["label"] for p in timing["processes"]} == {"original", "original again", "fixed"}
    assert timing["processes"][0]["block_seconds_per_call"] == [1.0] * 5
    assert set(timing["between_process_spread"]) == {"original", "original again", "fixed"}


def _report(*statuses, timing_error=""):
    timing = _timing_summary(0.5)
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
