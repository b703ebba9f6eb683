"""The records `torchlint verify` produces (no torch needed to read them)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, Mapping, Optional, Sequence, Tuple

from torchlint.verify.timing import SLOWER, TimingSummary

EQUIVALENT = "equivalent"
NOT_EQUIVALENT = "not equivalent"
INCONCLUSIVE = "inconclusive"  # the outputs could not be aligned; the finding names why
INTENDED_CHANGE = "intended change"  # the rule's fix changes behaviour on purpose, and only as promised
RANDOM_STREAM = "random stream changed"  # equivalent only once the random streams are aligned
ERROR = "error"
STATUSES = (EQUIVALENT, INTENDED_CHANGE, RANDOM_STREAM, NOT_EQUIVALENT, INCONCLUSIVE, ERROR)

FAIL = "fail"  # breaks the contract
WARN = "warn"  # a difference the contract allows but the user should know
NOTE = "note"  # context: what was checked, known differences
UNALIGNED = "inconclusive"  # outputs differ for a reason the contract cannot judge (named in the message)
INTENDED = "intended"  # the difference the rule's fix promises, checked and found

EXIT_OK, EXIT_NOT_EQUIVALENT, EXIT_ERROR = 0, 1, 2

# The verdict on one output (OutputResult.verdict): FAIL and UNALIGNED as above, or
PASSED = "pass"  # within the contract
NOT_COMPARED = "not compared"  # the rule's contract does not compare it (the detail says why)


@dataclass(frozen=True)
class Finding:
    """One line of a case's verdict."""

    severity: str
    message: str


@dataclass(frozen=True)
class OutputResult:
    """How one output compared: what it is, the check it got, and what was measured
    against what was allowed (``difference`` and ``allowed`` are in ``measure``'s units;
    None where nothing could be measured, e.g. a shape that changed)."""

    name: str  # the flattened key, or "printed text"
    kind: str  # "tensor float32[4, 16]", "float", "str", "printed text (12 numbers)"
    check: str  # the level it was compared at: identical, close, distribution; "" if not compared
    verdict: str  # PASSED, FAIL, UNALIGNED or NOT_COMPARED
    difference: Optional[float] = None
    allowed: Optional[float] = None
    measure: str = ""  # what ``difference`` and ``allowed`` measure
    detail: str = ""

    def as_dict(self) -> Dict[str, Any]:
        def number(value: Optional[float]) -> Optional[float]:
            return value if value is not None and math.isfinite(value) else None

        return {"name": self.name, "kind": self.kind, "check": self.check, "verdict": self.verdict,
                "difference": number(self.difference), "allowed": number(self.allowed),
                "measure": self.measure, "detail": self.detail}


@dataclass(frozen=True)
class RunData:
    """What one run of one program left behind (loaded from the child's file)."""

    status: str  # "ok", "raised", "oom", "timeout", "crashed", "ended"
    error: str = ""
    values: Mapping[str, Any] = field(default_factory=dict)
    meta: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    batchnorms: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    noise: Mapping[str, float] = field(default_factory=dict)
    seed_dependent: FrozenSet[str] = frozenset()
    rng: Mapping[str, Any] = field(default_factory=dict)
    memory: Mapping[str, Any] = field(default_factory=dict)
    probes: Mapping[str, Any] = field(default_factory=dict)  # probe name -> what it recorded
    env: Mapping[str, Any] = field(default_factory=dict)
    skipped: Sequence[str] = ()
    origin: str = ""
    seconds: float = 0.0
    math: Mapping[str, Any] = field(default_factory=dict)  # float32 precision, TF32, autocast, optimizer steps
    printed: str = ""  # what the program wrote to stdout
    printed_repeat: Optional[str] = None  # the same, in the original's second run
    printed_repeats: Tuple[str, ...] = ()  # the same, in its further runs
    printed_other_seed: Optional[str] = None  # the same, in the run with another seed
    aliases: Mapping[str, str] = field(default_factory=dict)  # a name -> the output its object was compared as
    refused: Tuple[str, ...] = ()  # the user's files the run tried to write (and was refused)
    left: int = 0  # processes the run left running, ended after it
    protection: Mapping[str, Any] = field(default_factory=dict)  # how the run was bounded (memory, files)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def describe_failure(self) -> str:
        """One paragraph about why the run did not finish."""
        kinds = {
            "raised": "raised an exception",
            "oom": "ran out of memory",
            "timeout": "did not finish in time",
            "crashed": "crashed",
            "ended": "ended before its outputs could be collected",
        }
        text = kinds.get(self.status, self.status)
        if self.error:
            text += ":\n" + self.error.rstrip()
        return text


@dataclass(frozen=True)
class Memory:
    """Peak memory of both runs, in bytes."""

    kind: str  # "cuda" (max_memory_allocated) or "rss" (peak resident set size)
    original_peak: Optional[int]
    fixed_peak: Optional[int]
    original_baseline: Optional[int]  # before the program ran (RSS only)
    fixed_baseline: Optional[int]
    # per CUDA device the run used: {"index", "name", "peak_allocated", "peak_reserved"}
    original_devices: Tuple[Mapping[str, Any], ...] = ()
    fixed_devices: Tuple[Mapping[str, Any], ...] = ()

    @staticmethod
    def _growth(peak: Optional[int], baseline: Optional[int]) -> Optional[int]:
        if peak is None or baseline is None:
            return None
        return max(0, peak - baseline)

    @property
    def original_growth(self) -> Optional[int]:
        """What the program added to the process's peak."""
        return self._growth(self.original_peak, self.original_baseline)

    @property
    def fixed_growth(self) -> Optional[int]:
        return self._growth(self.fixed_peak, self.fixed_baseline)


@dataclass(frozen=True)
class CaseResult:
    """The verdict on one fix of one rule in one program or script."""

    rule: str
    name: str  # the rule's name
    target: str  # the program or script
    status: str  # one of STATUSES
    level: str  # the contract's level of equivalence
    findings: Tuple[Finding, ...] = ()
    fixes: int = 0  # fixes the fixer applied
    found: int = 0  # the rule's findings in the original
    diff: str = ""
    compared: int = 0  # outputs compared
    memory: Optional[Memory] = None
    timing: Optional[TimingSummary] = None
    timing_error: str = ""
    outputs: Tuple[OutputResult, ...] = ()  # per compared output, as the rule's comparison recorded it
    expected: bool = False  # RANDOM_STREAM only: the rule's contract says its fix changes the random draws

    @property
    def failed(self) -> bool:
        """Not equivalent, or a random stream the contract does not expect to change."""
        return self.status == NOT_EQUIVALENT or (self.status == RANDOM_STREAM and not self.expected)

    @property
    def slower(self) -> bool:
        """The timing found the fixed version significantly slower."""
        return self.timing is not None and self.timing.verdict == SLOWER

    @property
    def errored(self) -> bool:
        return self.status == ERROR or bool(self.timing_error)


@dataclass(frozen=True)
class Environment:
    """The machine the runs happened on."""

    device: str
    device_name: str
    torch: str
    cuda: Optional[str]
    threads: int
    python: str
    cpus: int
    platform: str
    load: Optional[float] = None  # 1-minute load average when the first run started
    gpu: Optional[Mapping[str, Any]] = None  # NVML: name, driver, clocks, other processes

    @classmethod
    def from_child(cls, env: Mapping[str, Any]) -> "Environment":
        return cls(
            device=str(env.get("device", "?")),
            device_name=str(env.get("device_name", "?")),
            torch=str(env.get("torch", "?")),
            cuda=env.get("cuda"),
            threads=int(env.get("threads", 0)),
            python=str(env.get("python", "?")),
            cpus=int(env.get("cpus", 0)),
            platform=str(env.get("platform", "?")),
            load=float(env["load"]) if env.get("load") is not None else None,
            gpu=env.get("gpu"),
        )

    def line(self) -> str:
        """``device cpu (Intel ...), torch 2.13.0+cpu, 1 thread of 2 CPUs, Python 3.11``."""
        cuda = f", CUDA {self.cuda}" if self.cuda else ""
        threads = f"{self.threads} thread{'s' if self.threads != 1 else ''}"
        load = f", load average {self.load:.1f}" if self.load is not None else ""
        return (
            f"device {self.device} ({self.device_name}), torch {self.torch}{cuda}{self._gpu_text()}, "
            f"{threads} of {self.cpus} CPUs{load}, Python {self.python}, {self.platform}"
        )

    def _gpu_text(self) -> str:
        """``, driver 550.54, SM clock 1410/1980 MHz, 1 other process on the GPU`` (from NVML)."""
        gpu = self.gpu
        if not gpu:
            return ""
        if "error" in gpu:
            return f", {gpu['error']}"
        others = len(gpu.get("other_processes", ()))
        return (
            f", driver {gpu.get('driver', '?')}, SM clock {gpu.get('sm_clock_mhz', '?')}/"
            f"{gpu.get('max_sm_clock_mhz', '?')} MHz, {others} other process{'es' if others != 1 else ''} "
            f"on the GPU"
        )


@dataclass(frozen=True)
class VerifyReport:
    """Everything one `torchlint verify` invocation found."""

    environment: Environment
    cases: Tuple[CaseResult, ...]
    quick: bool
    seed: int
    timeout: float
    notes: Tuple[str, ...] = ()
    fail_on_slower: bool = False  # --fail-on-slower: a significantly slower fix exits 1

    @property
    def exit_code(self) -> int:
        """2 if any case could not be verified, else 1 if any fix is not equivalent
        (or, with ``fail_on_slower``, measurably slower), else 0."""
        if any(case.errored for case in self.cases):
            return EXIT_ERROR
        if any(case.failed for case in self.cases):
            return EXIT_NOT_EQUIVALENT
        if self.fail_on_slower and any(case.slower for case in self.cases):
            return EXIT_NOT_EQUIVALENT
        return EXIT_OK

    def counts(self) -> Dict[str, int]:
        counts = {status: 0 for status in STATUSES}
        for case in self.cases:
            counts[case.status] = counts.get(case.status, 0) + 1
        return counts
