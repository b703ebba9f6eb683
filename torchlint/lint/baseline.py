"""Baselines: record today's findings, then fail only on new ones.

A finding is matched by its file, its code and the whitespace-normalised text
of the line it starts on, not by its line number, so edits elsewhere in the
file do not turn old findings into new ones.  Identical lines are counted.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from torchlint.model import Diagnostic
from torchlint.lint.notebook import cell_key
from torchlint.report.fingerprint import normalised_line
from torchlint.source.sourcefile import SourceError, read_regular, write_atomically

Fingerprint = Tuple[str, str, str]
_VERSION = 1
MAX_BASELINE_BYTES = 64 * 1024 * 1024
"""A baseline file larger than this is refused (about 300,000 findings fit)."""


class BaselineError(Exception):
    """A baseline file that cannot be read or written; the message names it."""


def _relative(path: str, base: Path) -> str:
    return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(base))).as_posix()


def fingerprint(diagnostic: Diagnostic, sources: Mapping[str, str], base: Path) -> Fingerprint:
    """(file relative to the baseline, code, normalised source line).

    In a notebook the line is read from the cell's own text, not from the
    file's JSON, so that re-indenting or re-wrapping the JSON (or moving the
    cell) keeps the finding known."""
    key = diagnostic.path if diagnostic.cell is None else cell_key(diagnostic.path, diagnostic.cell)
    text = normalised_line(sources.get(key), diagnostic.start.line)
    return (_relative(diagnostic.path, base), diagnostic.code, text)


def load_baseline(path: Path) -> "Counter[Fingerprint]":
    """The recorded findings, counted; BaselineError names what is wrong."""
    try:
        data = json.loads(read_regular(path, MAX_BASELINE_BYTES).decode("utf-8"))
    except SourceError as error:
        raise BaselineError(f"{path}: cannot read baseline: {error}") from None
    except (ValueError, RecursionError) as error:
        raise BaselineError(f"{path}: not a torchlint baseline (not JSON: {error})") from None
    if not isinstance(data, dict):
        raise BaselineError(f"{path}: not a torchlint baseline (expected a JSON object)")
    if data.get("version") != _VERSION or isinstance(data.get("version"), bool):
        raise BaselineError(f"{path}: unsupported baseline version {_short(data.get('version'))}")
    findings = data.get("findings")
    if not isinstance(findings, list):
        raise BaselineError(f"{path}: not a torchlint baseline (`findings` is not a list)")
    counts: "Counter[Fingerprint]" = Counter()
    for index, entry in enumerate(findings):
        problem = _entry_problem(entry)
        if problem:
            raise BaselineError(f"{path}: not a torchlint baseline (finding {index + 1}: {problem})")
        counts[(entry["path"], entry["code"], entry["line"])] += entry["count"]
    return counts


def _entry_problem(entry: Any) -> str:
    """What is wrong with one recorded finding, or "" if nothing."""
    if not isinstance(entry, dict):
        return "not an object"
    for key in ("path", "code", "line"):
        if not isinstance(entry.get(key), str):
            return f"`{key}` is not a string"
    count = entry.get("count")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        return f"`count` is {_short(count)}, not a whole number >= 0"
    return ""


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True)
class Settled:
    """What a baseline did to a run's findings: ``written`` findings
    recorded (the run then reports nothing), or the ``fresh`` ones the
    baseline does not cover (``known`` of them it did)."""

    fresh: Tuple[Diagnostic, ...]
    known: int
    written: Optional[int] = None


def settle(diagnostics: Sequence[Diagnostic], sources: Mapping[str, str], *, write: Optional[Path] = None,
           read: Optional[Path] = None) -> Settled:
    """Record the findings in ``write`` (atomically: a failed write keeps the
    old baseline), or else keep those the baseline at ``read`` does not
    cover.  Each finding is fingerprinted once, relative to the baseline's
    folder; BaselineError names what is wrong."""
    path = write if write is not None else read
    if path is None:
        return Settled(tuple(diagnostics), 0)
    keys = [fingerprint(d, sources, path.parent) for d in diagnostics]
    if write is not None:
        entries = [{"path": p, "code": c, "line": t, "count": n} for (p, c, t), n in sorted(Counter(keys).items())]
        payload = {"version": _VERSION, "tool": "torchlint", "findings": entries}
        try:
            write_atomically(write, (json.dumps(payload, indent=2) + "\n").encode("utf-8"))
        except SourceError as error:
            raise BaselineError(f"{write}: cannot write baseline: {error}") from None
        return Settled((), 0, len(keys))
    remaining: Dict[Fingerprint, int] = dict(load_baseline(path))
    fresh = []
    for diagnostic, key in zip(diagnostics, keys):
        if remaining.get(key, 0) > 0:
            remaining[key] -= 1
        else:
            fresh.append(diagnostic)
    return Settled(tuple(fresh), len(keys) - len(fresh))
