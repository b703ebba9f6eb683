"""Baselines: record today's findings, then fail only on new ones.

A finding is matched by its file, its code and the whitespace-normalised text
of the line it starts on, not by its line number, so edits elsewhere in the
file do not turn old findings into new ones.  Identical lines are counted.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Dict, List, Mapping, Sequence, Tuple

from torchlint.model import Diagnostic
from torchlint.notebook import cell_key

Fingerprint = Tuple[str, str, str]
_VERSION = 1


class BaselineError(Exception):
    """A baseline file that cannot be read."""


def _line(source: str, line: int) -> str:
    lines = source.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return " ".join(text.split())


def _relative(path: str, base: Path) -> str:
    return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(base))).as_posix()


def fingerprint(diagnostic: Diagnostic, sources: Mapping[str, str], base: Path) -> Fingerprint:
    """(file relative to the baseline, code, normalised source line).

    In a notebook the line is read from the cell's own text, not from the
    file's JSON, so that re-indenting or re-wrapping the JSON (or moving the
    cell) keeps the finding known."""
    key = diagnostic.path if diagnostic.cell is None else cell_key(diagnostic.path, diagnostic.cell)
    text = _line(sources.get(key, ""), diagnostic.start.line)
    return (_relative(diagnostic.path, base), diagnostic.code, text)


def write_baseline(path: Path, diagnostics: Sequence[Diagnostic], sources: Mapping[str, str]) -> int:
    """Record every finding; returns how many were written."""
    counts = Counter(fingerprint(d, sources, path.parent) for d in diagnostics)
    entries = [
        {"path": p, "code": c, "line": t, "count": n} for (p, c, t), n in sorted(counts.items())
    ]
    payload = {"version": _VERSION, "tool": "torchlint", "findings": entries}
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return len(diagnostics)


def load_baseline(path: Path) -> "Counter[Fingerprint]":
    """The recorded findings, counted."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != _VERSION:
            raise BaselineError(f"{path}: unsupported baseline version {data.get('version')!r}")
        counts: "Counter[Fingerprint]" = Counter()
        for entry in data["findings"]:
            counts[(str(entry["path"]), str(entry["code"]), str(entry["line"]))] += int(entry["count"])
        return counts
    except OSError as error:
        raise BaselineError(f"{path}: cannot read baseline: {error.strerror}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise BaselineError(f"{path}: not a torchlint baseline ({error})") from None


def new_findings(
    diagnostics: Sequence[Diagnostic], sources: Mapping[str, str], path: Path
) -> List[Diagnostic]:
    """The findings not covered by the baseline at ``path``."""
    remaining: Dict[Fingerprint, int] = dict(load_baseline(path))
    fresh = []
    for diagnostic in diagnostics:
        key = fingerprint(diagnostic, sources, path.parent)
        if remaining.get(key, 0) > 0:
            remaining[key] -= 1
        else:
            fresh.append(diagnostic)
    return fresh
