"""A finding's identity across commits: what code-scanning services and the
baseline match findings by.

A finding is its file, its code and the whitespace-normalised text of the
line it starts on (in a notebook, of the line in its cell), not its line
number, so edits elsewhere in the file keep it the same finding; identical
findings on identical lines are told apart by their order.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Callable, List, Optional, Sequence, Tuple

from torchlint.model import Diagnostic

Key = Tuple[str, str, str]


def normalised_line(source: Optional[str], line: int) -> str:
    """Line ``line`` (1-based) of ``source`` with its whitespace collapsed ("" if absent)."""
    if source is None:
        return ""
    lines = source.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return " ".join(text.split())


def fingerprints(diagnostics: Sequence[Diagnostic], source_for: Callable[[Diagnostic], Optional[str]]) -> List[str]:
    """One stable hex digest per finding, in the order given."""
    seen: "Counter[Key]" = Counter()
    found: List[str] = []
    for diagnostic in diagnostics:
        key = (diagnostic.path, diagnostic.code, normalised_line(source_for(diagnostic), diagnostic.start.line))
        seen[key] += 1
        text = "\0".join((*key, str(seen[key])))
        found.append(hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest())
    return found
