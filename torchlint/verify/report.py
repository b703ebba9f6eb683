"""Render a VerifyReport: a text table, JSON, or Markdown for a PR comment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

from torchlint.ruleapi.registry import by_code_or_name
from torchlint.ruleapi.verification import Measured, write_measured
from torchlint.version import __version__
from torchlint.verify.contracts import contract_for
from torchlint.verify.results import (
    EQUIVALENT,
    ERROR,
    FAIL,
    INCONCLUSIVE,
    INTENDED_CHANGE,
    NOT_EQUIVALENT,
    RANDOM_STREAM,
    NOTE,
    INTENDED,
    UNALIGNED,
    WARN,
    CaseResult,
    Memory,
    VerifyReport,
)
from torchlint.verify.timing import TimingSummary, format_seconds

if TYPE_CHECKING:
    from torchlint.verify.plan import Case

HEADERS = ("Rule", "Target", "Equivalence", "Original", "Fixed", "Speedup [95% CI]", "Timing", "Peak memory")
# Original and Fixed: median over the label's timing processes of each one's median time per call;
# Speedup: Original / Fixed of exactly those numbers, with its bootstrap interval.


def _mib(value: Optional[int]) -> str:
    return "-" if value is None else f"{value / 2**20:.1f} MiB"


def memory_text(memory: Optional[Memory]) -> str:
    """``+12.3 MiB -> +0.4 MiB`` (RSS growth) or ``310 MiB -> 120 MiB`` (CUDA peak)."""
    if memory is None:
        return "-"
    if memory.kind == "rss":
        before, after = memory.original_growth, memory.fixed_growth
        if before is None or after is None:
            return "-"
        return f"+{_mib(before)} -> +{_mib(after)}"
    return f"{_mib(memory.original_peak)} -> {_mib(memory.fixed_peak)} allocated"


def speedup_text(timing: Optional[TimingSummary]) -> str:
    if timing is None:
        return "-"
    low, high = timing.speedup_interval
    return f"{timing.speedup:.2f}x [{low:.2f}, {high:.2f}]"


def _row(case: CaseResult) -> List[str]:
    timing = case.timing
    return [
        case.rule,
        case.target,
        case.status,
        format_seconds(timing.original_median) if timing else "-",
        format_seconds(timing.fixed_median) if timing else "-",
        speedup_text(timing),
        timing.verdict if timing else ("error" if case.timing_error else "-"),
        memory_text(case.memory),
    ]


def measured_cells(case: CaseResult) -> List[str]:
    """The row `--record` keeps for a rule's docs: the table's cells after Rule and Target."""
    return _row(case)[2:]


def _summary_line(report: VerifyReport) -> str:
    counts = report.counts()
    optional = "".join(f"{counts[status]} {status}, " for status in (INTENDED_CHANGE, RANDOM_STREAM, INCONCLUSIVE)
                       if counts[status])
    return (
        f"{counts[EQUIVALENT]} equivalent, {counts[NOT_EQUIVALENT]} not equivalent, {optional}"
        f"{counts[ERROR]} error(s)."
    )


def _timing_note(case: CaseResult) -> List[str]:
    timing = case.timing
    if timing is None:
        return [f"  error: {case.timing_error}"] if case.timing_error else []
    unit = "run of the whole script" if timing.whole_script else "call of torchlint_step()"
    counts = timing.per_process_counts()
    spread = ", ".join(f"{label} {value:.1%}" for label, value in timing.between_process.items())
    position = ", ".join(f"{effect:.3f}" for effect in timing.position_effect)
    lines = [
        f"  timing: {timing.verdict}: {timing.reason}",
        f"    per {unit}: median of per-process medians original {format_seconds(timing.original_median)} "
        f"(IQR {format_seconds(timing.original_iqr)}), original again {format_seconds(timing.again_median)}, "
        f"fixed {format_seconds(timing.fixed_median)} (IQR {format_seconds(timing.fixed_iqr)}); "
        f"{timing.rounds} round(s) of separate processes in seeded slot orders "
        f"({counts['original']} + {counts['original again']} + {counts['fixed']}), blocks of "
        f"{timing.number} call(s); {timing.threads} thread(s)",
        f"    between-process spread (max-min)/median: {spread}; time by slot relative to its label: {position}",
    ]
    usage = [p.gpu_usage for p in timing.processes if p.gpu_usage]
    if usage:
        mean = sum(float(u["utilization_mean_pct"]) for u in usage) / len(usage)
        peak = max(int(u["memory_used_max"]) for u in usage)
        lines.append(f"    GPU (NVML) over the timed blocks: utilisation {mean:.0f}% on average, "
                     f"memory used up to {_mib(peak)}")
    return lines


def _lint_text(case: CaseResult) -> str:
    if case.fixes == 0 and case.found == 0:
        return "fixed source given"
    return f"{case.found} finding(s), {case.fixes} fix(es) applied by torchlint"


def render_table(report: VerifyReport) -> str:
    """The report for a terminal: a table, then each case's findings."""
    rows = [list(HEADERS)] + [_row(case) for case in report.cases]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADERS))]
    lines = [f"torchlint verify: {report.environment.line()}", ""]
    for index, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    for case in report.cases:
        lines.append("")
        lines.append(f"{case.rule} {case.name} ({case.target}): {case.status}")
        lines.append(f"  {_lint_text(case)}; contract: {case.level}")
        for finding in case.findings:
            text = finding.message.replace("\n", "\n      ")
            lines.append(f"  {finding.severity}: {text}")
        lines.extend(_timing_note(case))
    for note in report.notes:
        lines.append("")
        lines.append(note)
    lines.append("")
    if report.quick:
        lines.append("Quick mode: small sizes and short timing budgets; run without --quick for real numbers.")
    lines.append(_summary_line(report))
    return "\n".join(lines) + "\n"


def _timing_json(timing: Optional[TimingSummary]) -> Optional[Dict[str, Any]]:
    if timing is None:
        return None
    low, high = timing.speedup_interval
    return {
        "verdict": timing.verdict,
        "reason": timing.reason,
        "original_median_s": timing.original_median,
        "original_again_median_s": timing.again_median,
        "fixed_median_s": timing.fixed_median,
        "original_iqr_s": timing.original_iqr,
        "fixed_iqr_s": timing.fixed_iqr,
        "speedup": timing.speedup,
        "speedup_ci95": [low, high],
        "fixed_over_original": [timing.ratio.value, timing.ratio.low, timing.ratio.high],
        "original_vs_original": [timing.noise.value, timing.noise.low, timing.noise.high],
        "threshold": timing.threshold,
        "between_process_spread": dict(timing.between_process),
        "position_effect": list(timing.position_effect),
        "slot_order_seed": timing.slot_seed,
        "round_count": timing.rounds,
        "calls_per_block": timing.number,
        "threads": timing.threads,
        "unit": "whole script" if timing.whole_script else "torchlint_step()",
        "rounds": _rounds_json(timing),
        "processes": [process.as_dict() for process in timing.processes],
    }


def _rounds_json(timing: TimingSummary) -> List[Dict[str, Any]]:
    """Each round's slot order and each of its processes' median seconds per call."""
    rounds: List[Dict[str, Any]] = []
    for index in sorted({process.round for process in timing.processes}):
        members = sorted((p for p in timing.processes if p.round == index), key=lambda p: p.slot)
        rounds.append({"round": index, "order": [p.label for p in members],
                       "median_s": {p.label: p.median for p in members}})
    return rounds


def _memory_json(memory: Optional[Memory]) -> Optional[Dict[str, Any]]:
    if memory is None:
        return None
    return {
        "kind": memory.kind,
        "original_peak_bytes": memory.original_peak,
        "fixed_peak_bytes": memory.fixed_peak,
        "original_growth_bytes": memory.original_growth,
        "fixed_growth_bytes": memory.fixed_growth,
        "original_devices": [dict(device) for device in memory.original_devices],
        "fixed_devices": [dict(device) for device in memory.fixed_devices],
    }


def to_json(report: VerifyReport) -> Dict[str, Any]:
    """Everything, for machines."""
    env = report.environment
    return {
        "torchlint": __version__,
        "exit_code": report.exit_code,
        "quick": report.quick,
        "seed": report.seed,
        "timeout_s": report.timeout,
        "environment": {
            "device": env.device,
            "device_name": env.device_name,
            "torch": env.torch,
            "cuda": env.cuda,
            "threads": env.threads,
            "cpus": env.cpus,
            "python": env.python,
            "platform": env.platform,
            "load_average": env.load,
            "gpu": env.gpu,
        },
        "fail_on_slower": report.fail_on_slower,
        "summary": report.counts(),
        "cases": [
            {
                "rule": case.rule,
                "name": case.name,
                "target": case.target,
                "status": case.status,
                "level": case.level,
                "contract": {
                    "promise": contract_for(case.rule).promise,
                    "checks": list(contract_for(case.rule).checks),
                    "differences": list(contract_for(case.rule).differences),
                },
                "findings_in_original": case.found,
                "fixes": case.fixes,
                "outputs_compared": case.compared,
                "findings": [{"severity": f.severity, "message": f.message} for f in case.findings],
                "outputs": [output.as_dict() for output in case.outputs],
                "timing": _timing_json(case.timing),
                "timing_error": case.timing_error or None,
                "memory": _memory_json(case.memory),
                "diff": case.diff,
            }
            for case in report.cases
        ],
        "notes": list(report.notes),
    }


_MARK = {EQUIVALENT: "✅", INTENDED_CHANGE: "✅", RANDOM_STREAM: "🎲", NOT_EQUIVALENT: "❌", INCONCLUSIVE: "❔",
         ERROR: "⚠️"}
_SEVERITY = {FAIL: "❌ **fail**", UNALIGNED: "❔ inconclusive", INTENDED: "✅ intended", WARN: "⚠️ warn",
             NOTE: "note"}


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: VerifyReport) -> str:
    """A comment for a pull request."""
    lines = ["### torchlint verify", "", f"`{report.environment.line()}`", ""]
    lines.append("| " + " | ".join(HEADERS) + " |")
    lines.append("|" + "---|" * len(HEADERS))
    for case in report.cases:
        row = _row(case)
        row[0] = f"{case.rule} `{case.name}`"
        row[1] = f"`{case.target}`"
        row[2] = f"{_MARK.get(case.status, '')} {case.status}"
        lines.append("| " + " | ".join(_md_cell(cell) for cell in row) + " |")
    lines.append("")
    lines.append(_summary_line(report) + (" (quick mode: small sizes, short timing)" if report.quick else ""))
    for case in report.cases:
        contract = contract_for(case.rule)
        lines += ["", f"<details><summary>{case.rule} {case.name}: {case.status}</summary>", ""]
        lines.append(f"{_lint_text(case)}. **Contract:** {contract.promise} Level: {case.level}.")
        lines.append("")
        for finding in case.findings:
            message = finding.message.replace("\n", "\n  ")
            lines.append(f"- {_SEVERITY.get(finding.severity, finding.severity)}: {message}")
        lines += [f"- {line.strip()}" for line in _timing_note(case)]
        if case.diff:
            lines += ["", "```diff", case.diff.rstrip("\n"), "```"]
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def render_contracts(codes: Sequence[str]) -> str:
    """The contracts of ``codes``, as text (for --help style listings)."""
    parts = []
    for code in codes:
        contract = contract_for(code)
        parts.append(f"{code} ({contract.level}): {contract.promise}")
    return "\n".join(parts)


def write_text(path: Path, text: str) -> None:
    """Write a report file, creating its directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def write_json(path: Path, data: object) -> None:
    write_text(path, json.dumps(data, indent=2) + "\n")


def record_measured(report: VerifyReport, cases: Sequence["Case"]) -> List[Path]:
    """``--record``: write each shipped program's row into its rule's package
    (where ``torchlint explain`` reads it); returns the files written."""
    hardware = report.environment.line() + ("; quick mode" if report.quick else "")
    written = []
    for case, result in zip(cases, report.cases):
        rule = by_code_or_name(case.rule)
        if case.script is not None or case.error or rule is None:
            continue
        written.append(write_measured(rule, Measured(hardware, tuple(measured_cells(result)), case.target)))
    return written
