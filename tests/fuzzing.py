"""Shared by the fuzz tests and bench/fuzz.py: mutate real training code and
check the two promises: no internal error, and a fix never breaks parsing."""

from __future__ import annotations

import io
import random
import tokenize
from pathlib import Path
from typing import List, Optional

from torchlint.engine import LintConfig, lint_source, parse_module
from torchlint.fixer import fix_text
from torchlint.model import Diagnostic
from torchlint.registry import all_rules

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CONFIG = LintConfig(rules=all_rules(), precheck=False)


def seeds() -> List[str]:
    """Real-looking training files with findings of every rule."""
    return [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("TL*/*.py"))]


def _tokens(source: str) -> List[tokenize.TokenInfo]:
    try:
        return list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []


def mutate(source: str, rng: random.Random) -> str:
    """One random edit: delete a token, swap or duplicate lines, truncate."""
    lines = source.splitlines(keepends=True)
    choice = rng.randrange(5)
    if choice == 0 and len(lines) > 1:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return "".join(lines)
    if choice == 1 and lines:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
        return "".join(lines)
    if choice == 2:
        return source[: rng.randrange(len(source) + 1)]
    tokens = [t for t in _tokens(source) if t.string.strip()]
    if not tokens:
        return source[::-1]
    token = rng.choice(tokens)
    row, col = token.start
    offset = sum(len(line) for line in lines[: row - 1]) + col
    if choice == 3:
        return source[:offset] + source[offset + len(token.string):]
    other = rng.choice(tokens).string
    return source[:offset] + other + source[offset:]


def check_once(source: str) -> Optional[str]:
    """None if both promises hold, else what went wrong."""
    try:
        diagnostics = lint_source(source, "fuzz.py", CONFIG)
    except Exception as error:  # the promise is that this never happens
        return f"lint raised {type(error).__name__}: {error}"
    if any(d.code == "TL000" and "internal" in d.message for d in diagnostics):
        return "internal error diagnostic"
    parsed_before = not isinstance(parse_module(source, "fuzz.py"), Diagnostic)
    try:
        result = fix_text(source, "fuzz.py", CONFIG, unsafe=True)
    except Exception as error:
        return f"fix raised {type(error).__name__}: {error}"
    if parsed_before and isinstance(parse_module(result.source, "fuzz.py"), Diagnostic):
        return "a fix made a parsable file unparsable"
    return None
