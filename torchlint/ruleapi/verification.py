"""What a rule with a fix declares for `torchlint verify`: data only, no torch.

A rule's ``verification`` attribute is a :class:`VerificationSpec`: the
programs that exercise its fix, the equivalence contract the fix promises,
and the names of the rule's own comparison and probes.  The comparison and
the probes need torch, so the spec names them instead of importing them:

- ``comparison`` is ``"module:function"``; a module starting with a dot is
  relative to the rule's package (``".verify_compare:check"``).  Only
  ``torchlint verify`` imports it.
- each :class:`Probe` is a file in the rule's package that verify's child
  process loads by path and runs around the program.

The core reads this module for `explain` and the docs; ``torchlint.verify``
reads it to plan and judge runs.  It imports nothing from either.

The words used for levels of equivalence in contracts:

- **identical**: the same bits (``0.0`` and ``-0.0`` count as equal);
- **close**: equal up to floating-point rounding, with a tolerance derived from
  the dtype, the math mode the runs used (TF32, autocast), the optimizer steps
  taken, what the rule measured about cancellation, and how much the original
  differs from itself (see ``ErrorModel`` in ``torchlint/verify/compare.py``);
- **same distribution**: values drawn from a different random stream: same
  shape, dtype, device and layout, a two-sample Kolmogorov-Smirnov test that
  does not reject "same distribution", and the same values that occur, range,
  mean and spread;
- **inconclusive** (a verdict, not a level): the outputs differ for a reason
  the contract cannot judge, named in the report;
- **changed**: a deliberate, documented difference, reported but not hidden.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Mapping, Optional, Protocol, Tuple

MEASURED_FILE = "measured.json"
"""A rule package's last recorded `torchlint verify` row (``torchlint verify --record``)."""

OptionsHook = Callable[[Mapping[str, Any]], Mapping[str, Any]]


@dataclass(frozen=True)
class Contract:
    """The equivalence a rule's fix promises, and what verify checks."""

    level: str  # one line: the level of equivalence of the common case
    promise: str  # what stays the same, in a sentence or two
    checks: Tuple[str, ...]  # what `torchlint verify` checks, in order
    differences: Tuple[str, ...] = ()  # known differences, always reported
    speed: str = ""  # what the fix is expected to buy


GENERIC_CONTRACT = Contract(
    level="close",
    promise="The fixed program computes the same values up to floating-point rounding.",
    checks=("every output is close, with the same shape, dtype, device and autograd status",),
)
"""What verify checks for a rule with a fix but no contract of its own."""

STRICT_CONTRACT = Contract(
    level="identical (close where the original varies between its own runs)",
    promise="The changed program computes and prints the same values as the original.",
    checks=(
        "every output has the same shape, dtype, device and autograd status",
        "every output is identical; an output that differs between two runs of the original is close "
        "within that measured spread",
        "the printed text is identical, its numbers within the original's own run-to-run spread",
    ),
)
"""What ``torchlint verify ORIGINAL --against CHANGED`` checks when no rule is named."""


@dataclass(frozen=True)
class Probe:
    """Code run in verify's child process around each run of a program.

    ``file`` (in the rule's package) defines ``Probe(tools)``: a context
    manager whose ``result()``, called after the program ran, returns plain
    data (numbers, strings, lists, dicts, tensors) that the comparison finds
    in ``RunData.probes[name]``; an optional ``finished()`` is called when the
    program has ended, before its outputs are read.  ``tools`` offers
    ``seed_everything(seed)``, ``flatten(value) -> {key: value}``,
    ``tensors(value)`` (the tensors in a value and its containers),
    ``difference(a, b) -> float``, ``program`` (the file name the program's
    frames carry) and ``replay``: None, or, in a replay run (see
    ``VerificationSpec.replay``), what this probe recorded in the fixed run.
    """

    name: str
    file: str


@dataclass(frozen=True)
class VerificationSpec:
    """How `torchlint verify` checks a rule's fix."""

    contract: Contract
    programs: Tuple[str, ...] = ()  # files in the rule's package, run by path
    comparison: str = ""  # "module:function"; "" checks that every output is close
    seed_probe: bool = False  # the comparison needs to know which outputs depend on the seed
    probes: Tuple[Probe, ...] = ()
    program_options: Optional[OptionsHook] = None
    """Rewrites the rule's options before `torchlint verify` applies its fix,
    to a shipped program or a user's script (e.g. to suit the machine verify
    runs on); ``None`` keeps them."""
    program_torch_version: str = ""
    """The target torch version a shipped program is linted and fixed for,
    when the rule fires only for older targets; "" keeps the configured one."""
    replay: str = ""
    """For a fix that changes behaviour on purpose: the name of one of the
    rule's probes that records, in the fixed run, what the fix changed (the
    modes modules ran in, a sampler's epochs) and, given that record as
    ``tools.replay``, makes a run of the *original* do the same.  The
    comparison gets that replay (``Context.replay``): when only the promised
    difference separates the two programs, the replay equals the fixed run."""
    reference: str = ""
    """``"float64"``: the contract is judged by accuracy; the comparison gets a
    run of the original with float64 as the default dtype (``Context.reference``)."""
    changes_random_draws: bool = False
    """The fix may change how many random numbers the program draws (a removed
    bias draws none): a difference that aligned random streams explain is
    expected, and exits 0."""


class Verifiable(Protocol):
    """What these functions read of a rule class: its module (where its
    files live) and its spec.  A protocol, so that specs know nothing of the
    rule base that holds them."""

    __module__: str

    @property
    def verification(self) -> Optional[VerificationSpec]: ...


def rule_directory(rule: "Verifiable") -> Path:
    """The folder of the rule's module: its package, where its files live."""
    module = sys.modules[rule.__module__]
    return Path(str(module.__file__)).resolve().parent


def program_paths(rule: "Verifiable") -> Tuple[Path, ...]:
    """The rule's verification programs that exist, in the order declared."""
    spec = rule.verification
    if spec is None:
        return ()
    directory = rule_directory(rule)
    return tuple(directory / name for name in spec.programs if (directory / name).is_file())


def usable_cpus() -> int:
    """CPUs this process may run on (what verify's runs, and their workers, share)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def contract_of(rule: Optional["Verifiable"]) -> Contract:
    """The rule's contract, or the generic "close" contract."""
    if rule is None or rule.verification is None:
        return GENERIC_CONTRACT
    return rule.verification.contract


# -- measured rows ----------------------------------------------------------------------

MEASURED_COLUMNS: Tuple[str, ...] = (
    "Equivalence", "Original", "Fixed", "Speedup [95% CI]", "Timing", "Peak memory",
)


@dataclass(frozen=True)
class Measured:
    """One recorded `torchlint verify` result of a rule's program, for its docs."""

    hardware: str  # the machine and its state, in words
    cells: Tuple[str, ...]  # one per MEASURED_COLUMNS
    target: str = ""

    def to_json(self) -> Dict[str, Any]:
        return {"hardware": self.hardware, "target": self.target,
                "row": dict(zip(MEASURED_COLUMNS, self.cells))}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Measured":
        row = data["row"]
        return cls(str(data["hardware"]), tuple(str(row[column]) for column in MEASURED_COLUMNS),
                   str(data.get("target", "")))


def measured_path(rule: "Verifiable") -> Path:
    return rule_directory(rule) / MEASURED_FILE


def read_measured(rule: "Verifiable") -> Optional[Measured]:
    """The rule's recorded row, or None when there is none (or it is unreadable)."""
    if rule.verification is None:
        return None
    path = measured_path(rule)
    try:
        return Measured.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_measured(rule: "Verifiable", measured: Measured) -> Path:
    """Record a row in the rule's package; returns the file written."""
    path = measured_path(rule)
    path.write_text(json.dumps(measured.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
