"""Plan and run the cases of one `torchlint verify` invocation (needs torch).

A case is one rule's fix of one program: a verification program shipped in
the rule's package (its verification spec names it) or a user's script.  The fixed source comes from
torchlint's own fixer, or, with ``verify ORIGINAL --against CHANGED``
(``plan_pair``), from the user: a change made by hand or by another tool,
which is also how the tests prove that the checks can fail.
"""

from __future__ import annotations

import difflib
import json
import os
import platform
import shutil
import tempfile
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple

import torch

from torchlint.lint.engine import lint_source
from torchlint.lint.fixer import fix_text
from torchlint.ruleapi.registry import all_rules, by_code_or_name
from torchlint.ruleapi.rule import FixAvailability, RuleClass
from torchlint.lint.settings import Settings
from torchlint.ruleapi.verification import VerificationSpec, program_paths, rule_directory, usable_cpus
from torchlint.verify.compare import Checker, CheckResult, Context, check_for, rng_shift
from torchlint.verify.capture import difference
from torchlint.verify.contracts import NO_RULE, SAME_OUTPUTS, contract_for
from torchlint.verify.progress import Progress
from torchlint.verify.results import (
    EQUIVALENT,
    ERROR,
    FAIL,
    INCONCLUSIVE,
    INTENDED,
    INTENDED_CHANGE,
    NOT_EQUIVALENT,
    NOTE,
    RANDOM_STREAM,
    UNALIGNED,
    WARN,
    CaseResult,
    Environment,
    Finding,
    Memory,
    RunData,
)
from torchlint.verify.runner import Exit, Runner, child_environment, make_runner, tail
from torchlint.verify.scratch import Mirror
from torchlint.verify.timing import FIXED, Budget, ProcessTiming, TimingSummary, analyse, slot_orders

@dataclass(frozen=True)
class VerifyOptions:
    """How to run: device, threads, seed, per-run timeout, sizes, timing."""

    device: str = "cpu"  # "cpu", "cuda" or "cuda:N"
    threads: int = 1
    seed: int = 0
    timeout: float = 120.0
    quick: bool = False
    timing: bool = True
    memory_limit: int = -1  # bytes each process of a run may grow by; 0: no bound; -1: the default

    @property
    def memory_bytes(self) -> int:
        """The bound each process of a run gets (``default_memory_limit`` unless given)."""
        return default_memory_limit() if self.memory_limit < 0 else self.memory_limit

    @property
    def device_type(self) -> str:
        """``cpu`` or ``cuda`` (what scripts and comparisons are told)."""
        return self.device.partition(":")[0]


def default_memory_limit() -> int:
    """Half of the machine's physical memory (8 GiB where it cannot be read)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")) // 2
    except (AttributeError, ValueError, OSError):
        return 8 * 2**30


def device_environment(device: str, inherited: Mapping[str, str]) -> Dict[str, str]:
    """What the runs' environment says about devices.

    CPU runs see no GPU at all (``CUDA_VISIBLE_DEVICES=""``), so a script
    cannot initialise CUDA behind ``--device cpu``.  ``cuda:N`` shows the
    runs only GPU N (counted in PCI bus order, as ``nvidia-smi`` does, and
    among the GPUs already visible), so a script's ``"cuda"`` lands on it;
    NVML is told the same GPU.
    """
    kind, _, index = device.partition(":")
    if kind != "cuda":
        return {"TORCHLINT_VERIFY_DEVICE": "cpu", "CUDA_VISIBLE_DEVICES": ""}
    env = {"TORCHLINT_VERIFY_DEVICE": "cuda", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    visible = [part.strip() for part in inherited.get("CUDA_VISIBLE_DEVICES", "").split(",") if part.strip()]
    chosen = (visible[int(index)] if int(index) < len(visible) else index) if index else (visible or ["0"])[0]
    if index:
        env["CUDA_VISIBLE_DEVICES"] = chosen
    env["TORCHLINT_VERIFY_NVML_INDEX"] = chosen if chosen.isdigit() else "0"
    return env


@dataclass(frozen=True)
class Case:
    """One rule's fix of one program, ready to run."""

    rule: str
    name: str
    target: str  # what the report calls it
    original: str
    fixed: str
    fixes: int  # fixes torchlint applied
    found: int = 0  # findings of the rule in the original
    script: Optional[Path] = None  # a user's script; None for a shipped program
    error: str = ""  # why the case cannot run, if it cannot


# -- planning (no child processes) -------------------------------------------------------


def fixable(rule: RuleClass) -> bool:
    return rule.fix_availability is not FixAvailability.NONE


def verifiable_rules() -> List[RuleClass]:
    """Rules with a fix and a verification program."""
    return [rule for rule in all_rules() if fixable(rule) and program_paths(rule)]


def rule_settings(rule: RuleClass, base: Settings, program: bool) -> Settings:
    """``base`` with only ``rule`` selected and the rule's options as its
    verification spec adapts them to this machine (``program_options``), for
    shipped programs and users' scripts alike: verify runs the fix here; for
    shipped programs also the target torch version (``program_torch_version``)."""
    options = {key: dict(value) for key, value in base.rule_options.items()}
    spec = rule.verification
    if spec is not None and spec.program_options is not None:
        configured = {key: option.default for key, option in rule.options.items()}
        configured.update(options.get(rule.code, {}))
        options[rule.code] = dict(spec.program_options(configured))
    torch_version = base.torch_version
    if program and spec is not None and spec.program_torch_version:
        torch_version = spec.program_torch_version
    return replace(
        base, select=(rule.code,), extend_select=(), ignore=(), per_file_ignores=(), rule_options=options,
        torch_version=torch_version,
    )


def fix_with_torchlint(source: str, path: str, settings: Settings) -> Tuple[str, int, int]:
    """Lint and fix with torchlint's own fixer: (fixed source, fixes applied, findings)."""
    config = settings.lint_config(Path(path))
    found = len(lint_source(source, path, config))
    result = fix_text(source, path, config, unsafe=True)
    return result.source, len(result.applied), found


def plan_programs(rule: RuleClass, base: Settings) -> List[Case]:
    """One case per verification program the rule ships."""
    paths = program_paths(rule)
    if not paths:
        return [Case(rule.code, rule.name, rule.name, "", "", 0, error=f"{rule.code} has no verification program")]
    return [plan_program(rule, base, path) for path in paths]


def plan_program(rule: RuleClass, base: Settings, path: Path) -> Case:
    """The case for one of a rule's shipped verification programs."""
    target = f"{rule_directory(rule).name}/{path.name}"
    source = path.read_text(encoding="utf-8")
    fixed, fixes, found = fix_with_torchlint(source, path.name, rule_settings(rule, base, program=True))
    error = ""
    if fixes == 0 or fixed == source:
        error = (f"torchlint's fixer did not change {target} ({found} finding(s)); the program no longer "
                 "exercises the rule")
    return Case(rule.code, rule.name, target, source, fixed, fixes, found, error=error)


def plan_script(path: Path, rules: Sequence[RuleClass], settings: Settings) -> List[Case]:
    """One case per rule whose fixer changes the script."""
    source = path.read_text(encoding="utf-8")
    cases = []
    for rule in rules:
        settings_for_rule = rule_settings(rule, settings, program=False)
        fixed, fixes, found = fix_with_torchlint(source, str(path), settings_for_rule)
        if fixes and fixed != source:
            cases.append(
                Case(rule.code, rule.name, str(path), source, fixed, fixes, found, script=path.resolve())
            )
    return cases


def plan_pair(original: Path, changed: Path, rules: Sequence[RuleClass]) -> List[Case]:
    """``verify ORIGINAL --against CHANGED``: a change made by hand or another tool,
    judged by each rule's contract, or by the strict "same outputs" one without rules."""
    before = original.read_text(encoding="utf-8")
    after = changed.read_text(encoding="utf-8")
    script = original.resolve()
    if not rules:
        return [Case(NO_RULE, SAME_OUTPUTS, str(original), before, after, 0, script=script)]
    return [Case(rule.code, rule.name, str(original), before, after, 0, script=script) for rule in rules]


def unified_diff(before: str, after: str, name: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{name}", f"b/{name}"
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


# -- running ---------------------------------------------------------------------------------


ORIGINAL_RUNS = 3  # the original runs this often with the same seed: how far it differs from itself


class Session:
    """Owns the temporary directory and the child processes of one invocation."""

    def __init__(self, options: VerifyOptions, progress: Optional[Progress] = None) -> None:
        self.options = options
        self.progress = progress or Progress(0, enabled=False)
        self.workdir = Path(tempfile.mkdtemp(prefix="torchlint-verify-")).resolve()
        self._env = {
            "TORCHLINT_VERIFY_QUICK": "1" if options.quick else "0",
            **device_environment(options.device, os.environ),
        }
        self.runner: Runner = make_runner(child_environment(self._env), self.workdir / "helper.log")
        self._runs = 0
        self.environment: Optional[Environment] = None
        self.linked: Set[str] = set()  # users' files and folders too big to copy, linked read-only instead
        self._mirrors: Dict[Path, Mirror] = {}
        self._aligned: Dict[Tuple[str, str], RunData] = {}  # an original's run with aligned streams
        self._references: Dict[Tuple[str, str], RunData] = {}  # an original's float64 run

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.runner.close()
        shutil.rmtree(self.workdir, ignore_errors=True)

    @staticmethod
    def steps(cases: Sequence[Case], timing: bool) -> int:
        """Progress steps for ``cases``: one per planned run (replays and reruns add their own)."""
        originals = {(case.target, case.original) for case in cases if not case.error}
        per_case = 2 if timing else 1
        return len(originals) + per_case * sum(1 for case in cases if not case.error)

    def run_cases(self, cases: Sequence[Case]) -> List[CaseResult]:
        """Run every case; a script's original runs once for all its rules."""
        originals: Dict[Tuple[str, str], RunData] = {}
        results = []
        for case in cases:
            if case.error:
                results.append(_error_case(case, case.error))
                continue
            key = (case.target, case.original)
            if key not in originals:
                sharing = [c.rule for c in cases if (c.target, c.original) == key]
                seed_probe = any(check_for(by_code_or_name(code)).seed_probe for code in sharing)
                self.progress.step(f"{case.target}: running the original")
                originals[key] = self._run_original(case, seed_probe, _probes(sharing))
            results.append(self._finish(case, originals[key]))
        return results

    def compare_sources(self, rule: str, original: str, fixed: str, target: str = "program.py") -> CaseResult:
        """Run ``original`` and a given ``fixed`` source and check ``rule``'s contract.

        ``--against`` plans the same kind of case from files (``plan_pair``);
        tests call this to show that a broken fix is reported as not equivalent.
        """
        name = next((r.name for r in all_rules() if r.code == rule.upper()), "")
        case = Case(rule.upper(), name, target, original, fixed, fixes=0)
        return self.run_cases([case])[0]

    def _run_original(self, case: Case, seed_probe: bool, probes: Sequence[Dict[str, Any]] = ()) -> RunData:
        """The original ``ORIGINAL_RUNS`` times, each in a separate process (its run-to-run
        noise, as a real rerun sees it: a fresh CUDA context, fresh kernel choices) and,
        for a seed probe, once more with another seed (which outputs depend on the seed)."""
        first = self._run(case, case.original, "original", probes=probes)
        if not first.ok:
            return first
        repeats: List[RunData] = []
        for index in range(1, ORIGINAL_RUNS):
            again = self._run(case, case.original, "original again" if index == 1 else f"original run {index + 1}")
            if not again.ok:
                return replace(again, error=f"(its run {index + 1}) " + again.error)
            repeats.append(again)
        noise = {key: max((difference(value, again.values.get(key)) for again in repeats), default=0.0)
                 for key, value in first.values.items()}
        seed_dependent: FrozenSet[str] = frozenset()
        printed_other_seed: Optional[str] = None
        if seed_probe:
            other = self._run(case, case.original, "original other seed", seed=self.options.seed + 1)
            if not other.ok:
                return replace(other, error="(its run with another seed) " + other.error)
            seed_dependent = frozenset(
                key for key, value in first.values.items() if difference(value, other.values.get(key)) != 0.0
            )
            printed_other_seed = other.printed
        return replace(first, noise=noise, seed_dependent=seed_dependent,
                       printed_repeat=repeats[0].printed if repeats else None,
                       printed_repeats=tuple(again.printed for again in repeats[1:]),
                       printed_other_seed=printed_other_seed,
                       left=max([first.left, *(again.left for again in repeats)]))

    def _finish(self, case: Case, original: RunData) -> CaseResult:
        base = CaseResult(
            rule=case.rule,
            name=case.name,
            target=case.target,
            status=ERROR,
            level=contract_for(case.rule).level,
            fixes=case.fixes,
            found=case.found,
            diff=unified_diff(case.original, case.fixed, Path(case.target).name),
        )
        if not original.ok:
            self.progress.skip(2 if self.options.timing else 1)
            return replace(base, findings=(Finding(FAIL, "the original " + _failure_text(original)),))
        self.progress.step(f"{case.rule} {case.target}: running the fixed version")
        fixed = self._run(case, case.fixed, "fixed", probes=_probes([case.rule]))
        memory = _memory(original, fixed)
        if not fixed.ok:
            self.progress.skip(1 if self.options.timing else 0)
            message = f"the fixed version {_failure_text(fixed)}\n(the original ran without error)"
            # A change that makes the program raise changes what it does; a crash, a timeout, a
            # refused write or running out of memory is an error (exit 2), as for the original.
            status = NOT_EQUIVALENT if fixed.status == "raised" and not fixed.refused else ERROR
            return replace(base, status=status, findings=(Finding(FAIL, message),), memory=memory)
        rule = by_code_or_name(case.rule)
        spec = rule.verification if rule is not None else None
        check = check_for(rule)
        context = Context(self.options.device_type, replay=self._replay(case, fixed, spec),
                          reference=self._reference(case, spec))
        checked = check.run(original, fixed, context)
        findings = list(checked)
        outputs = checked.outputs if isinstance(checked, CheckResult) else ()
        status = verdict(findings)
        expected = False
        if status == NOT_EQUIVALENT and not (spec is not None and spec.replay) and rng_shift(original, fixed):
            explained = self._explain_by_streams(case, original, fixed, check.run, findings, context)
            if explained is not None:
                status, findings = explained
                expected = bool(spec is not None and spec.changes_random_draws)
        findings.extend(_run_notes(original, fixed))
        refused = sorted({path for run in (original, fixed) for path in run.refused})
        if refused:  # the script caught the refusal and went on: still an error, the file named
            findings.insert(0, Finding(FAIL, "a run tried to write " + ", ".join(refused[:3]) + ": a run works in a "
                                             "copy of the script's folder and may not write your files"))
            status = ERROR
        result = replace(base, status=status, findings=tuple(findings), memory=memory, outputs=outputs,
                         compared=sum(1 for key in original.values if key in fixed.values), expected=expected)
        if not self.options.timing:
            return result
        if status not in (EQUIVALENT, INTENDED_CHANGE) and not (status == RANDOM_STREAM and expected):
            self.progress.skip(1)
            return result
        self.progress.step(f"{case.rule} {case.target}: timing")
        timing, error = self._time(case)
        return replace(result, timing=timing, timing_error=error)

    # -- runs that explain a difference -----------------------------------------------------

    def _replay(self, case: Case, fixed: RunData, spec: Optional[VerificationSpec]) -> Optional[RunData]:
        """For a fix that changes behaviour on purpose: the original, with the rule's probe
        making it do what the fixed run was seen to do (see ``VerificationSpec.replay``)."""
        if spec is None or not spec.replay or spec.replay not in fixed.probes:
            return None
        self._runs += 1
        data = self.workdir / f"replay-{self._runs:03d}.pt"
        torch.save(fixed.probes[spec.replay], data)
        probes = [dict(entry, replay=str(data)) if entry["name"] == spec.replay else entry
                  for entry in _probes([case.rule])]
        self.progress.extra(f"{case.rule} {case.target}: replaying the fix in the original")
        try:
            return self._run(case, case.original, "original replaying the fix", probes=probes)
        finally:
            data.unlink(missing_ok=True)

    def _reference(self, case: Case, spec: Optional[VerificationSpec]) -> Optional[RunData]:
        """For a contract judged by accuracy: the original with float64 as its default dtype."""
        if spec is None or spec.reference != "float64":
            return None
        key = (case.target, case.original)
        if key not in self._references:
            self.progress.extra(f"{case.target}: the original in float64 (the reference)")
            self._references[key] = self._run(case, case.original, "original float64", float64=True)
        return self._references[key]

    def _explain_by_streams(
        self, case: Case, original: RunData, fixed: RunData, check: Checker, plain: Sequence[Finding],
        context: Context,
    ) -> Optional[Tuple[str, List[Finding]]]:
        """Run both versions again with aligned random streams; when the contract then holds
        (or cannot be judged), the difference is the random stream's: (status, findings)
        saying so; None when the aligned runs differ too.  Asked only when the two runs
        left a random generator in different states."""
        key = (case.target, case.original)
        if key not in self._aligned:
            self.progress.extra(f"{case.target}: the original with aligned random streams")
            self._aligned[key] = self._run(case, case.original, "original aligned", aligned=True,
                                           probes=_probes([case.rule]))
        aligned_original = self._aligned[key]
        self.progress.extra(f"{case.rule} {case.target}: the fixed version with aligned random streams")
        aligned_fixed = self._run(case, case.fixed, "fixed aligned", aligned=True, probes=_probes([case.rule]))
        if not (aligned_original.ok and aligned_fixed.ok):
            return None
        aligned_original = replace(aligned_original, noise=original.noise,
                                   printed_repeat=aligned_original.printed, printed_repeats=())
        again = check(aligned_original, aligned_fixed, context)
        status = verdict(again)
        if status not in (EQUIVALENT, INTENDED_CHANGE, INCONCLUSIVE):
            return None
        first = next((f.message for f in plain if f.severity == FAIL), "")
        holds = "the contract holds" if status != INCONCLUSIVE else "the outputs cannot all be judged"
        lead = Finding(WARN, "the change alters the random stream: with the program's own random stream the "
                             f"outputs differ ({_short_text(first)}); with each layer's initialisation and each "
                             "loader's shuffling drawn from a stream of its own (seeded by the program's seed), "
                             f"{holds}.  Random numbers drawn after the change come out different from those "
                             "of the original")
        findings = ([lead]
                    + [Finding(NOTE, "with the program's own random stream: " + f.message) for f in plain
                       if f.severity == FAIL]
                    + [Finding(f.severity, "with aligned streams: " + f.message) for f in again
                       if f.severity in (NOTE, WARN, INTENDED, UNALIGNED)])
        return (INCONCLUSIVE if status == INCONCLUSIVE else RANDOM_STREAM), findings

    # -- one child process ------------------------------------------------------------

    def _mirror(self, folder: Path) -> Mirror:
        """The session's copy of a user's folder (made on first use)."""
        folder = folder.resolve()
        mirror = self._mirrors.get(folder)
        if mirror is None:
            mirror = Mirror.build(folder, self.workdir / f"mirror-{len(self._mirrors)}")
            self._mirrors[folder] = mirror
            self.linked.update(str(folder / name) for name in mirror.linked)
        return mirror

    def _spec(self, case: Case, label: str) -> Tuple[Path, Dict[str, Any]]:
        self._runs += 1
        directory = self.workdir / f"{self._runs:03d}-{case.rule.lower()}-{label.replace(' ', '_')}"
        directory.mkdir()
        protect: List[str] = []
        if case.script is not None:
            # The user's folder is copied, not used: whatever the run writes stays in the copy,
            # and the folder itself (with what is linked from it) cannot be written.
            mirror = self._mirror(case.script.parent)
            cwd = path0 = directory / "folder"
            mirror.materialize(cwd)
            workdir = str(self.workdir)
            protect = [path for path in mirror.protected
                       if not (workdir + os.sep).startswith(path.rstrip(os.sep) + os.sep)]
        else:
            cwd = path0 = directory
        spec: Dict[str, Any] = {
            "out": str(directory / "result"),
            "stdout": str(directory / "stdout.txt"),
            "stderr": str(directory / "stderr.txt"),
            "cwd": str(cwd),
            "path0": str(path0),
            "tmp": str(directory / "tmp"),
            "roots": [str(cwd)] if case.script is not None else [],
            "protect": protect,
            "memory": self.options.memory_bytes,
            "device": self.options.device_type,
            "threads": self.options.threads,
            "seed": self.options.seed,
            "rule": case.rule,
            "env": {**self._env, "TORCHLINT_VERIFY_RULE": case.rule},
        }
        return directory, spec

    def _done(self, case: Case, directory: Path) -> None:
        """A run ended: undo what it did to the mirror, delete its scratch folder."""
        if case.script is not None:
            self._mirror(case.script.parent).restore()
        shutil.rmtree(directory, ignore_errors=True)

    def _program_entry(self, case: Case, spec: Dict[str, Any], label: str, source: str) -> Dict[str, str]:
        name = Path(case.target).name
        directory = Path(spec["out"]).parent
        copy = directory / f"{label.replace(' ', '_')}-{name}"
        copy.write_text(source, encoding="utf-8")
        file = Path(spec["cwd"]) / case.script.name if case.script is not None else copy
        return {"source": str(copy), "display": f"{name} [{label}]", "file": str(file), "label": label}

    def _launch(self, directory: Path, spec: Dict[str, Any]) -> Exit:
        spec_path = directory / "spec.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        return self.runner.run(spec_path, Path(spec["stdout"]), Path(spec["stderr"]), self.options.timeout)

    def _run(
        self, case: Case, source: str, label: str, *, probes: Sequence[Dict[str, Any]] = (),
        seed: Optional[int] = None, aligned: bool = False, float64: bool = False,
    ) -> RunData:
        """One comparison run in a fresh process."""
        directory, spec = self._spec(case, label)
        spec.update(
            mode="compare",
            program=self._program_entry(case, spec, label, source),
            probes=list(probes),
            aligned=aligned,
            float64=float64,
        )
        if seed is not None:
            spec["seed"] = seed
        try:
            ended = self._launch(directory, spec)
            run = _load_run(Path(spec["out"]), ended, Path(spec["stderr"]), self.options.timeout)
        finally:
            self._done(case, directory)
        if run.env and self.environment is None:
            self.environment = Environment.from_child(run.env)
        return run

    def _time(self, case: Case) -> Tuple[Optional[TimingSummary], str]:
        """Rounds of three timing processes (original, original again, fixed) in seeded slot orders."""
        budget = Budget.quick() if self.options.quick else Budget.full()
        processes: List[ProcessTiming] = []
        number: Optional[int] = None
        whole_script = False
        for round_index, order in enumerate(slot_orders(budget.rounds, self.options.seed)):
            for slot, label in enumerate(order):
                raw, error = self._time_one(case, label, number, budget)
                if raw is None:
                    return None, error
                number = int(raw["number"])
                whole_script = bool(raw.get("whole_script"))
                processes.append(ProcessTiming(
                    label, round_index, slot, number, tuple(raw["blocks"]),
                    gpu_usage=raw.get("gpu_usage"), device_memory=tuple(raw.get("memory", ())),
                ))
        summary = analyse(processes, threads=self.options.threads, whole_script=whole_script,
                          seed=self.options.seed)
        return summary, ""

    def _time_one(
        self, case: Case, label: str, number: Optional[int], budget: Budget
    ) -> Tuple[Optional[Dict[str, Any]], str]:
        """One timing process: one program, warmed up and timed in blocks."""
        directory, spec = self._spec(case, f"timing-{label}")
        try:
            source = case.fixed if label == FIXED else case.original
            spec.update(mode="time", variant=self._program_entry(case, spec, label, source), number=number,
                        timing=budget.child())
            ended = self._launch(directory, spec)
            out = Path(spec["out"])
            if ended.timed_out:
                return None, f"timing ({label}) {ended.describe()}"
            if not out.is_file():
                return None, f"timing ({label}) {ended.describe()}\n{tail(Path(spec['stderr']))}"
            raw: Dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        finally:
            self._done(case, directory)
        if raw.get("status") != "ok":
            return None, f"timing ({label}) failed: {raw.get('error', '').rstrip()}"
        return raw, ""

    def fallback_environment(self) -> Environment:
        """The environment as seen from here, when no run reported one."""
        return Environment(
            device=self.options.device,
            device_name=platform.processor() or platform.machine(),
            torch=str(torch.__version__),
            cuda=torch.version.cuda if self.options.device_type == "cuda" else None,
            threads=self.options.threads,
            python=platform.python_version(),
            cpus=usable_cpus(),
            platform=platform.platform(terse=True),
            load=os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        )


def verdict(findings: Sequence[Finding]) -> str:
    """Not equivalent on any failure; inconclusive when outputs could not be judged; an
    intended change when the difference the rule promises was checked and found; else
    equivalent."""
    severities = {finding.severity for finding in findings}
    if FAIL in severities:
        return NOT_EQUIVALENT
    if UNALIGNED in severities:
        return INCONCLUSIVE
    if INTENDED in severities:
        return INTENDED_CHANGE
    return EQUIVALENT


def _short_text(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


SELF_CONTAINED = (
    "verify runs a script by itself, as `python script.py` from a copy of its folder: a self-contained "
    "script imports only installed packages (and modules beside it), creates or loads its own data and "
    "finishes in reasonable time.  To check a change to code that needs more, write a small script that "
    "imports and exercises it, and compare two versions with `torchlint verify SCRIPT --against CHANGED`"
)


def _failure_text(run: RunData) -> str:
    """Why a run did not finish, with advice where there is some."""
    text = run.describe_failure()
    if run.refused:
        text += ("\nit tried to write " + ", ".join(run.refused[:3]) + ": a run works in a scratch copy of the "
                 "script's folder and may not write your files (a path that leads out of the copy: an absolute "
                 "path, $PWD, a symbolic link, a file too big to copy); write relative to the script's folder")
    if run.status == "raised" and ("ModuleNotFoundError" in run.error or "No module named" in run.error):
        text += "\n" + SELF_CONTAINED
    if run.status == "oom" and run.protection.get("memory"):
        text += "\n(raise the bound with --memory-limit)"
    return text


def _run_notes(original: RunData, fixed: RunData) -> List[Finding]:
    """What the runs did outside their outputs that the user should hear about."""
    notes = []
    left = max(original.left, fixed.left)
    if left:
        notes.append(Finding(NOTE, f"a run left {left} process(es) running when it ended (loader workers it had "
                                   "not shut down, or processes it started); verify ended them"))
    return notes


def _probes(codes: Sequence[str]) -> List[Dict[str, Any]]:
    """The probes the rules' verification specs register, each once, for the harness."""
    entries: List[Dict[str, Any]] = []
    for code in codes:
        rule = by_code_or_name(code)
        if rule is None or rule.verification is None:
            continue
        for probe in rule.verification.probes:
            entry = {"name": probe.name, "path": str(rule_directory(rule) / probe.file)}
            if entry not in entries:
                entries.append(entry)
    return entries


def _error_case(case: Case, message: str) -> CaseResult:
    return CaseResult(
        rule=case.rule, name=case.name, target=case.target, status=ERROR,
        level=contract_for(case.rule).level, findings=(Finding(FAIL, message),), fixes=case.fixes,
        found=case.found,
    )


def _load_run(out: Path, ended: Exit, stderr: Path, timeout: float) -> RunData:
    if ended.timed_out:
        message = f"killed after {timeout:.0f} s (raise --timeout if it needs longer)"
        return RunData("timeout", f"{message}\n{tail(stderr)}", left=ended.left)
    if not out.is_file():
        if ended.code == 0:
            return RunData("ended", "it ended (status 0) without returning to verify, e.g. through `os._exit(0)`, "
                                    f"so there were no outputs to compare\n{tail(stderr)}", left=ended.left)
        return RunData("crashed", f"{ended.describe()}\n{tail(stderr)}", left=ended.left)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data: Dict[str, Any] = torch.load(out, map_location="cpu", weights_only=True)
    return RunData(
        status=str(data["status"]),
        error=str(data.get("error", "")),
        values=data.get("values", {}),
        meta=data.get("meta", {}),
        batchnorms=data.get("batchnorms", {}),
        noise=data.get("noise", {}),
        seed_dependent=frozenset(data.get("seed_dependent", ())),
        rng=data.get("rng", {}),
        memory=data.get("memory", {}),
        probes=data.get("probes", {}),
        env=data.get("env", {}),
        skipped=tuple(data.get("skipped", ())),
        origin=str(data.get("origin", "")),
        seconds=float(data.get("seconds", 0.0)),
        math=data.get("math", {}),
        printed=str(data.get("printed", "")),
        aliases=data.get("aliases", {}),
        refused=tuple(data.get("refused", ())),
        left=ended.left,
        protection=data.get("protection", {}),
    )


def _memory(original: RunData, fixed: RunData) -> Optional[Memory]:
    if not original.memory or not fixed.memory:
        return None
    return Memory(
        kind=str(original.memory.get("kind")),
        original_peak=original.memory.get("peak"),
        fixed_peak=fixed.memory.get("peak"),
        original_baseline=original.memory.get("baseline"),
        fixed_baseline=fixed.memory.get("baseline"),
        original_devices=tuple(original.memory.get("devices", ())),
        fixed_devices=tuple(fixed.memory.get("devices", ())),
    )
