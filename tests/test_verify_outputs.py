"""What `torchlint verify` reports per output and per timing round, and that the
table's columns agree with each other (needs torch; no child processes except
in the command-line test)."""

from __future__ import annotations

import json
import math
import statistics
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

with warnings.catch_warnings():  # torch warns at import when NumPy is missing
    warnings.simplefilter("ignore")
    torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from torchlint.interfaces.cli import main  # noqa: E402
from torchlint.ruleapi.registry import all_rules, by_code_or_name  # noqa: E402
from torchlint.ruleapi.verification import program_paths  # noqa: E402
from torchlint.verify.compare import (  # noqa: E402
    CLOSE,
    PRINTED,
    Context,
    ErrorModel,
    Findings,
    check_for,
    check_generic,
    check_strict,
    close_outcome,
    common_checks,
    metadata_checks,
    value_checks,
)
from torchlint.verify.report import _row, render_table, to_json  # noqa: E402
from torchlint.verify.results import (  # noqa: E402
    EQUIVALENT,
    CaseResult,
    Environment,
    OutputResult,
    RunData,
    VerifyReport,
)
from torchlint.verify.session import fixable  # noqa: E402
from torchlint.verify.timing import FASTER, NO_DIFFERENCE, SLOWER, TOO_NOISY, ProcessTiming, analyse, format_seconds  # noqa: E402

CPU = Context("cpu")


def _run(values, printed="", **fields):
    return RunData("ok", values=values, printed=printed, printed_repeat=printed, **fields)


def _by_name(outputs):
    return {output.name: output for output in outputs}


# -- per-output results ---------------------------------------------------------------


def test_each_output_gets_its_kind_check_verdict_difference_and_allowed_tolerance():
    weights = torch.linspace(-1.0, 1.0, 12).reshape(3, 4)
    original = _run({"weights": weights, "steps": 3, "name": "run", "labels": torch.tensor([0, 1, 2, 3])},
                    printed="loss 0.5 after 3 steps\n")
    changed = weights.clone()
    changed[0, 0] += 1e-3
    fixed = _run({"weights": changed, "steps": 3, "name": "run", "labels": torch.tensor([0, 1, 1, 3])},
                 printed="loss 0.5 after 3 steps\n")
    outputs = _by_name(check_strict(original, fixed, CPU).outputs)
    assert set(outputs) == {"weights", "steps", "name", "labels", PRINTED}
    w = outputs["weights"]
    assert (w.kind, w.check, w.verdict, w.measure) == ("tensor float32[3, 4]", "identical", "fail", "relative L2 error")
    expected = float(torch.linalg.vector_norm((changed - weights).double()) / torch.linalg.vector_norm(weights.double()))
    assert w.difference == pytest.approx(expected) and w.allowed == 0.0
    labels = outputs["labels"]
    assert (labels.verdict, labels.measure, labels.difference) == ("fail", "values that differ", 1.0)
    assert (outputs["steps"].kind, outputs["steps"].verdict, outputs["steps"].difference) == ("int", "pass", 0.0)
    assert (outputs["name"].kind, outputs["name"].verdict) == ("str", "pass")
    assert outputs[PRINTED].verdict == "pass" and outputs[PRINTED].kind == "printed text (2 numbers)"


def test_close_outputs_report_the_error_models_budget_as_the_allowed_tolerance():
    x = torch.linspace(1.0, 2.0, 64)
    original, fixed = _run({"x": x}), _run({"x": x * (1 + 1e-6)})
    (output,) = check_generic(original, fixed, CPU).outputs
    assert output.verdict == "pass" and output.check == CLOSE
    assert output.allowed == pytest.approx(ErrorModel().relative(torch.float32))
    assert 0 < output.difference < output.allowed


def test_a_printed_number_that_changes_is_a_failed_output_with_both_sides_measured():
    original = _run({"x": 1}, printed="accuracy 0.750\n")
    fixed = _run({"x": 1}, printed="accuracy 0.000\n")
    printed = _by_name(check_strict(original, fixed, CPU).outputs)[PRINTED]
    assert printed.verdict == "fail" and printed.difference == pytest.approx(0.75) and printed.allowed == 0.0
    assert "accuracy" in printed.detail


def test_outputs_failed_by_another_check_missing_new_or_not_compared_say_so():
    original = _run({"a": torch.zeros(3), "gone": 1.0, "kept": 2.0}, meta={"a": {"dtype": "torch.float32"}})
    fixed = _run({"a": torch.zeros(3), "new": 1.0, "kept": 2.5}, meta={"a": {"dtype": "torch.float64"}})
    found = Findings()
    keys = common_checks(original, fixed, found)
    metadata_checks(original, fixed, keys, found)
    value_checks(original, fixed, ["a"], lambda key: CLOSE, found)  # "kept" is left to the rule
    outputs = _by_name(found.result().outputs)
    assert outputs["a"].verdict == "fail" and "dtype changed" in outputs["a"].detail  # values equal, metadata not
    assert outputs["gone"].verdict == "fail" and "missing" in outputs["gone"].detail
    assert outputs["new"].verdict == "fail" and "new in the fixed run" in outputs["new"].detail
    kept = outputs["kept"]
    assert kept.verdict == "not compared" and kept.check == "" and kept.difference == pytest.approx(0.25)
    assert kept.allowed is None


def test_a_difference_the_rule_calls_inconclusive_is_inconclusive_in_its_output():
    # As conv-bias-before-batchnorm does with a derived eval metric it cannot replay.
    original, fixed = _run({"accuracy": 0.75}), _run({"accuracy": 0.5})
    found = Findings()
    common_checks(original, fixed, found)
    outcome = close_outcome(0.75, 0.5)
    found.record("accuracy", CLOSE, 0.75, outcome)
    found.keyed("inconclusive", "differs, and cannot be judged", "accuracy", outcome.detail)
    (output,) = found.result().outputs
    assert not outcome.ok and output.verdict == "inconclusive" and output.difference == pytest.approx(1 / 3)


def test_an_output_the_fix_may_remove_is_not_compared_not_failed():
    original, fixed = _run({"model.bias": torch.ones(2), "w": torch.ones(2)}), _run({"w": torch.ones(2)})
    found = Findings()
    common_checks(original, fixed, found, may_lack=lambda key: key.endswith("bias"))
    output = _by_name(found.result().outputs)["model.bias"]
    assert output.verdict == "not compared" and "as the contract expects" in output.detail


def test_rule_comparisons_record_their_own_checks_per_output():
    # TL401's comparison records the replay, the running means' absorption and the cancelled
    # gradients under their own names; TL101's records every output at its level.
    for code in ("TL101", "TL401"):
        assert check_for(by_code_or_name(code)).run is not check_generic
    a = torch.arange(6.0)
    tl101 = check_for(by_code_or_name("TL101")).run(_run({"t": a}), _run({"t": a + 1}), CPU)
    (output,) = tl101.outputs
    assert output.verdict == "fail" and output.check == "identical" and output.difference > 0


def test_the_json_keeps_each_outputs_result_with_json_numbers_only():
    outputs = (
        OutputResult("w", "tensor float32[2]", "close", "pass", 1e-7, 1e-4, "relative L2 error"),
        OutputResult("s", "tensor float32[2]", "identical", "fail", math.inf, 0.0, "relative L2 error", "x"),
    )
    case = CaseResult("TL302", "zero-grad-not-set-to-none", "p.py", EQUIVALENT, "identical", outputs=outputs)
    env = Environment("cpu", "Some CPU", "2.13.0+cpu", None, 1, "3.11.7", 2, "Linux")
    text = json.dumps(to_json(VerifyReport(env, (case,), quick=True, seed=0, timeout=1.0)), allow_nan=False)
    first, second = json.loads(text)["cases"][0]["outputs"]
    assert first == {"name": "w", "kind": "tensor float32[2]", "check": "close", "verdict": "pass",
                     "difference": 1e-7, "allowed": 1e-4, "measure": "relative L2 error", "detail": ""}
    assert second["difference"] is None and second["verdict"] == "fail"


# -- the table's columns agree with each other and with the raw timings -----------------------


def _timing(blocks_by_label, rounds):
    processes = []
    orders = [("original", "original again", "fixed"), ("fixed", "original", "original again"),
              ("original again", "fixed", "original")]
    for index in range(rounds):
        order = orders[index % 3]
        for label in order:
            processes.append(ProcessTiming(label, index, order.index(label), 1, tuple(blocks_by_label[label][index])))
    return analyse(processes, threads=1)


def _agree(timing):
    """The row's cells against each other and against the raw block times."""
    case = CaseResult("TL302", "zero-grad-not-set-to-none", "p.py", EQUIVALENT, "identical", timing=timing)
    cells = _row(case)
    medians = {label: statistics.median(statistics.median(p.blocks) for p in timing.processes if p.label == label)
               for label in ("original", "fixed")}
    assert cells[3] == format_seconds(medians["original"]) and cells[4] == format_seconds(medians["fixed"])
    speedup, interval = cells[5].split("x [")
    low, high = (float(part) for part in interval.rstrip("]").split(", "))
    assert float(speedup) == round(medians["original"] / medians["fixed"], 2)
    assert low <= float(speedup) <= high
    verdict = cells[6]
    ratio, threshold = timing.ratio, timing.threshold  # fixed / original: the speedup interval inverted
    assert timing.speedup_interval == pytest.approx((1 / ratio.high, 1 / ratio.low))
    if verdict in (FASTER, SLOWER) and "noisy" in timing.reason:  # decided beyond the noise (issue 24, item 11)
        beyond = ratio.high < timing.noise.low if verdict == FASTER else ratio.low > timing.noise.high
        assert beyond and (low > 1.0 if verdict == FASTER else high < 1.0)
    elif verdict == FASTER:
        assert ratio.high < 1 - threshold and low > 1.0
    elif verdict == SLOWER:
        assert ratio.low > 1 + threshold and high < 1.0
    elif verdict == NO_DIFFERENCE:  # never beside an interval that lies beyond the threshold
        assert ratio.high >= 1 - threshold and ratio.low <= 1 + threshold
    else:
        assert verdict == TOO_NOISY and "noisy" in timing.reason


@settings(max_examples=30, deadline=None)
@given(
    base=st.floats(1e-6, 1.0),
    factors=st.lists(st.lists(st.floats(0.5, 2.0), min_size=1, max_size=8), min_size=6, max_size=6),
    speed=st.floats(0.3, 3.0),
)
def test_the_tables_cells_agree_with_each_other_and_the_raw_timings(base, factors, speed):
    blocks = {
        "original": [[base * f for f in factors[0]], [base * f for f in factors[1]]],
        "original again": [[base * f for f in factors[2]], [base * f for f in factors[3]]],
        "fixed": [[base * speed * f for f in factors[4]], [base * speed * f for f in factors[5]]],
    }
    _agree(_timing(blocks, rounds=2))


def test_a_noisy_measurement_decides_a_clear_interval_and_never_says_no_difference():
    # Issue 24 item 11: an interval far beyond the noise decides even when the blocks are noisy;
    # one within reach of the noise stays "too noisy", never "no measurable difference".
    noisy = [1.0, 1.6, 1.0, 1.6, 1.0, 1.6, 1.0, 1.6]
    blocks = {"original": [noisy, noisy], "original again": [noisy, noisy], "fixed": [[0.5] * 8, [0.5] * 8]}
    timing = _timing(blocks, rounds=2)
    assert timing.verdict == FASTER and timing.speedup_interval[0] > 1.5, timing.reason
    _agree(timing)
    near = {**blocks, "fixed": [[1.05] * 8, [1.05] * 8]}
    timing = _timing(near, rounds=2)
    assert timing.verdict == TOO_NOISY
    _agree(timing)


def test_the_json_keeps_each_rounds_order_and_process_medians():
    blocks = {"original": [[1.0] * 5, [1.1] * 5, [1.0] * 5], "original again": [[1.0] * 5] * 3,
              "fixed": [[0.5] * 5, [0.6] * 5, [0.5] * 5]}
    timing = _timing(blocks, rounds=3)
    case = CaseResult("TL302", "zero-grad-not-set-to-none", "p.py", EQUIVALENT, "identical", timing=timing)
    env = Environment("cpu", "Some CPU", "2.13.0+cpu", None, 1, "3.11.7", 2, "Linux")
    data = json.loads(json.dumps(to_json(VerifyReport(env, (case,), quick=True, seed=0, timeout=1.0))))
    rounds = data["cases"][0]["timing"]["rounds"]
    # The count has its own key: a second "rounds" key once overwrote the per-round list.
    assert data["cases"][0]["timing"]["round_count"] == 3 == len(rounds)
    assert [r["order"] for r in rounds] == [["original", "original again", "fixed"],
                                            ["fixed", "original", "original again"],
                                            ["original again", "fixed", "original"]]
    assert rounds[1]["median_s"] == {"fixed": 0.6, "original": 1.1, "original again": 1.0}
    assert statistics.median(r["median_s"]["original"] for r in rounds) == data["cases"][0]["timing"]["original_median_s"]


# -- every fixable rule from the command line ----------------------------------------------------


def test_rules_without_programs_are_named_with_their_reason_and_the_rest_run(tmp_path):
    without = [rule for rule in all_rules() if fixable(rule) and not program_paths(rule)]
    if not without:
        pytest.skip("every fixable rule ships a program")
    out = tmp_path / "v.json"
    result = CliRunner().invoke(main, ["verify", "--rules", f"{without[0].code},TL302", "--quick", "--no-timing",
                                       "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert f"{without[0].code} ({without[0].name}) has a fix but no verification program (" in result.output
    (case,) = json.loads(out.read_text())["cases"]
    assert case["rule"] == "TL302" and case["status"] == "equivalent"
    outputs = case["outputs"]
    assert len(outputs) >= case["outputs_compared"] and all(o["verdict"] == "pass" for o in outputs)
    alone = CliRunner().invoke(main, ["verify", "--rules", without[0].code, "--quick"])
    assert alone.exit_code == 2 and "no verification program" in alone.output


def test_table_of_a_real_run_agrees_with_its_json(tmp_path):
    out = tmp_path / "v.json"
    result = CliRunner().invoke(main, ["verify", "--rules", "TL301", "--quick", "--json", str(out)])
    assert result.exit_code == 0, result.output
    case = json.loads(out.read_text())["cases"][0]
    processes = [ProcessTiming(p["label"], p["round"], p["slot"], p["calls_per_block"],
                               tuple(p["block_seconds_per_call"])) for p in case["timing"]["processes"]]
    timing = analyse(processes, threads=1)
    row = next(line for line in result.output.splitlines() if line.startswith("TL301 "))
    assert format_seconds(timing.original_median) in row and format_seconds(timing.fixed_median) in row
    assert f"{timing.speedup:.2f}x" in row
    _agree(timing)
