"""Shared by the fuzz tests and bench/fuzz.py: mutate real training code and
check the two promises: no internal error, and a fix never breaks parsing."""

from __future__ import annotations

import io
import multiprocessing
import random
import tokenize
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from torchlint.lint.engine import LintConfig, lint_source, parse_module
from torchlint.lint.fixer import fix_text
from torchlint.model import Diagnostic
from torchlint.ruleapi.registry import all_rules

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


# -- hostile inputs: deep, long and dense code of every kind ---------------------

def _chain(prefix: str, unit: str, suffix: str) -> Callable[[int], str]:
    return lambda n: prefix + unit * n + suffix


# Each builds an expression (or, for the statement kinds, lines) nested
# ``n`` levels deep or ``n`` items long.
EXPRESSIONS: Dict[str, Callable[[int], str]] = {
    "unary": _chain("", "-", "1"),
    "mixed-unary": lambda n: "".join("-+~"[i % 3] for i in range(n)) + "x",
    "not": _chain("", "not ", "x"),
    "lambda": _chain("", "lambda: ", "0"),
    "lambda-params": _chain("", "lambda a, b: ", "0"),
    "conditional": _chain("", "a if b else ", "c"),
    "attribute": _chain("a", ".b", ""),
    "call": _chain("f", "()", ""),
    "subscript": _chain("a", "[0]", ""),
    "sum": lambda n: "+".join(["1"] * (n + 1)),
    "sum-of-products": lambda n: " + ".join(["a * b * c"] * (n + 1)),
    "and": lambda n: " and ".join(["a"] * (n + 1)),
    "power": lambda n: "**".join(["2"] * (n + 1)),
    "comparison": lambda n: " < ".join(["a"] * (n + 1)),
    "brackets": lambda n: "(" * n + "1" + ")" * n,
    "lists": lambda n: "[" * n + "]" * n,
    "strings": lambda n: "(" + " ".join(["'s'"] * max(n, 1)) + ")",
    "f-string": lambda n: "f'{" + "-" * n + "1}'",
    "nested-f-string": lambda n: "f'{" * min(n, 2) + "x" + "}'" * min(n, 2),
    "walrus": lambda n: "(" * n + "y := " + "1" + ")" * n,
    "dense-list": lambda n: "[" + "1," * n + "]",
    "dense-dict": lambda n: "{" + "".join(f"{i}: {i}," for i in range(n)) + "}",
}
STATEMENTS: Dict[str, Callable[[int, str], str]] = {
    "elif": lambda n, e: "if x:\n    pass\n" + "elif x:\n    pass\n" * n + f"else:\n    y = {e}\n",
    "indent": lambda n, e: "".join(" " * i + "if x:\n" for i in range(min(n, 120))) + " " * min(n, 120) + f"y = {e}\n",
    "decorators": lambda n, e: "@d\n" * n + f"def f():\n    return {e}\n",
    "with-items": lambda n, e: "with " + ", ".join(["a"] * max(n, 1)) + f":\n    y = {e}\n",
    "statements": lambda n, e: "x = 1\n" * n + f"y = {e}\n",
    "one-line": lambda n, e: "; ".join(["x = 1"] * max(n, 1)) + f"; y = {e}\n",
    "assignment": lambda n, e: "a = " * max(n, 1) + f"{e}\n",
}
PREAMBLE = "import torch\nimport torch.nn as nn\nm = nn.DataParallel(net)\n"


def hostile(rng: random.Random, largest: int) -> str:
    """A file with one or two kinds of deep/long/dense code nested in each
    other, each of a size up to ``largest`` (log-uniform: small and huge alike)."""
    def size() -> int:
        return int(2 ** rng.uniform(0, max(largest, 2).bit_length()))

    kinds = rng.sample(sorted(EXPRESSIONS), rng.randrange(1, 3))
    expression = "x"
    for kind in kinds:  # the inner kind replaces the operand of the outer one
        built = EXPRESSIONS[kind](size())
        expression = built.replace("1", f"({expression})", 1) if expression != "x" and "1" in built else built
    if rng.random() < 0.5:
        return PREAMBLE + STATEMENTS[rng.choice(sorted(STATEMENTS))](size(), expression)
    return PREAMBLE + f"y = {expression}\n"


def check_in_child(source: str, timeout: float = 120.0) -> Optional[str]:
    """:func:`check_once` in a forked process: None if the promises hold,
    else what went wrong, a crash or a hang included."""
    context = multiprocessing.get_context("fork")
    receiving, sending = context.Pipe(duplex=False)
    child = context.Process(target=_check_and_send, args=(source, sending))
    child.start()
    sending.close()
    problem: Optional[str] = "no answer"
    if receiving.poll(timeout):
        try:
            problem = receiving.recv()
        except EOFError:
            pass
    child.join(1 if problem != "no answer" else 0)
    if child.is_alive():
        child.kill()
        child.join()
        return problem if problem != "no answer" else f"no answer in {timeout:.0f} s"
    if child.exitcode:
        return f"the process died ({child.exitcode})"
    return problem


def _check_and_send(source: str, connection: Any) -> None:
    connection.send(check_once(source))
