"""Parsing never dies on the text: depth, size and token limits with a clear
TL000 beyond them, code within them linted, CPython's own syntax errors.

Every case that could crash the interpreter runs in a subprocess, so that a
segfault fails the test instead of the test run."""

from __future__ import annotations

import contextlib
import json
import select
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any, Callable, Dict, Iterator, List, Optional

import pytest

from conftest import run_in_process
from torchlint.model import Diagnostic
from torchlint.source.parsing import LIMITS, measure, parse_module

FINDING = "import torch.nn as nn\nm = nn.DataParallel(n)\n"  # TL501, so linting really runs

LINTER = """
import json, sys
from torchlint.lint.engine import LintConfig, lint_source
from torchlint.ruleapi.registry import all_rules
for line in sys.stdin:
    source = open(line.rstrip("\\n"), encoding="utf-8", newline="").read()
    found = lint_source(source, "case.py", LintConfig(rules=all_rules(), precheck=False))
    print(json.dumps([[d.code, d.start.line, d.start.column, d.message] for d in found]), flush=True)
"""


class Linter:
    """A child process that lints case after case (one path a line on its
    stdin, one JSON line of findings back): starting a Python that imports
    libcst and the rules costs more than most cases.  A case that kills it
    fails its own test with the exit status; the next case gets a new child."""

    def __init__(self) -> None:
        self.process: Optional["subprocess.Popen[str]"] = None
        self.stderr: IO[bytes] = tempfile.TemporaryFile()

    def lint(self, path: Path) -> List[List[Any]]:
        if self.process is None:
            self.stderr = tempfile.TemporaryFile()
            self.process = subprocess.Popen([sys.executable, "-c", LINTER], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=self.stderr, text=True)
        process = self.process
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(f"{path}\n")
            process.stdin.flush()
        except BrokenPipeError:
            pass  # it died: the answer below is empty
        ready, _, _ = select.select([process.stdout], [], [], 600)
        answer = process.stdout.readline() if ready else ""
        if not answer:
            self.process = None
            if not ready:
                process.kill()
            with contextlib.suppress(BrokenPipeError):
                process.stdin.close()
            status = process.wait()
            self.stderr.seek(0)
            stderr = self.stderr.read().decode("utf-8", "replace")
            pytest.fail(f"the linting process died: {status}\n{stderr[-2000:]}")
        found: List[List[Any]] = json.loads(answer)
        return found

    def close(self) -> None:
        if self.process is not None:
            self.process.communicate(timeout=60)  # closes its stdin: it ends
            self.process = None
        self.stderr.close()


@pytest.fixture(scope="module")
def linter() -> Iterator[Linter]:
    child = Linter()
    try:
        yield child
    finally:
        child.close()


LintCase = Callable[[Path, str], List[List[Any]]]


@pytest.fixture
def lint_in_subprocess(linter: Linter) -> LintCase:
    """lint_source's findings as [code, line, column, message], from a child
    process; a crash fails with its exit status."""

    def lint(tmp_path: Path, source: str) -> List[List[Any]]:
        path = tmp_path / "case.py"
        path.write_bytes(source.encode("utf-8"))
        return linter.lint(path)

    return lint


# Nesting of every kind, far beyond the limit: 10 KB files that used to kill
# the process (libcst's native parser overflows its stack).
TOO_DEEP: Dict[str, str] = {
    "unary-minus": "y = " + "-" * 10_000 + "1\n",
    "not": "y = " + "not " * 10_000 + "1\n",
    "elif-chain": "if x:\n    pass\n" + "elif x:\n    pass\n" * 10_000,
    "lambda-chain": "f = " + "lambda: " * 5_000 + "1\n",
    "lambda-chain-with-parameters": "f = " + "lambda a, b=1: " * 5_000 + "1\n",
    "attribute-chain": "x = a" + ".b" * 10_000 + "\n",
    "call-chain": "x = a" + "()" * 10_000 + "\n",
    "plus-chain": "x = " + "1+" * 10_000 + "1\n",
    "and-chain": "x = " + "a and " * 10_000 + "1\n",
    "power-chain": "x = " + "2**" * 10_000 + "1\n",
    "f-string": "x = f'{" + "-" * 10_000 + "1}'\n",
}


@pytest.mark.parametrize("source", TOO_DEEP.values(), ids=TOO_DEEP.keys())
def test_nesting_beyond_the_limit_is_a_tl000_naming_it(tmp_path: Path, lint_in_subprocess: LintCase, source: str) -> None:
    found = lint_in_subprocess(tmp_path, FINDING + source)
    assert [f[0] for f in found] == ["TL000"], found
    assert "nested too deeply to lint: depth" in found[0][3] and f"limit {LIMITS.depth}" in found[0][3]
    assert found[0][1] >= 3  # where the deep code is


# Valid code at 90% of the limit, of every kind: linted like any other file.
NEAR = LIMITS.depth * 9 // 10
WITHIN: Dict[str, str] = {
    "unary-minus": "y = " + "-" * NEAR + "1\n",
    "not": "y = " + "not " * NEAR + "1\n",
    "elif-chain": "if x:\n    pass\n" + "elif x:\n    pass\n" * NEAR,
    "lambda-chain": "f = " + "lambda: " * NEAR + "1\n",
    "attribute-chain": "x = a" + ".b" * NEAR + "\n",
    "call-chain": "x = a" + "()" * NEAR + "\n",
    "plus-chain": "x = " + "1+" * NEAR + "1\n",
    "conditional-chain": "x = " + "1 if 1 else " * NEAR + "1\n",
    "power-chain": "x = " + "2**" * NEAR + "1\n",
    "adjacent-strings": "x = (" + "'a' " * NEAR + ")\n",
}


@pytest.mark.parametrize("source", WITHIN.values(), ids=WITHIN.keys())
def test_valid_code_within_the_limits_lints(tmp_path: Path, lint_in_subprocess: LintCase, source: str) -> None:
    found = lint_in_subprocess(tmp_path, FINDING + source)
    assert [f[0] for f in found] == ["TL501"], found


def test_900_unary_minus_signs_lint_without_an_internal_error(tmp_path: Path, lint_in_subprocess: LintCase) -> None:
    found = lint_in_subprocess(tmp_path, FINDING + "y = " + "-" * 900 + "1\n")
    assert [f[0] for f in found] == ["TL501"], found


def test_many_adjacent_strings_get_a_limit_message_not_a_syntax_error(
    tmp_path: Path, lint_in_subprocess: LintCase
) -> None:
    found = lint_in_subprocess(tmp_path, FINDING + "x = (" + "'a' " * 4_000 + ")\n")
    assert [f[0] for f in found] == ["TL000"]
    assert "SyntaxError" not in found[0][3]
    assert found[0][3] == f"too many adjacent string literals: 4000, limit {LIMITS.adjacent_strings}"


def test_too_many_tokens_is_a_tl000_naming_the_limit(tmp_path: Path, lint_in_subprocess: LintCase) -> None:
    tokens = LIMITS.tokens + 10_000
    literal = "x = [" + "1," * (tokens // 2) + "]\n"
    found = lint_in_subprocess(tmp_path, FINDING + literal)
    assert [f[0] for f in found] == ["TL000"]
    assert found[0][3].startswith("file too large to lint: ")
    assert found[0][3].endswith(f" tokens, limit {LIMITS.tokens:,}")


@pytest.mark.parametrize(
    "source, expected",
    [
        ("x = 1\n; y = 2\n", [2, 1, "SyntaxError: invalid syntax"]),
        ("x = 1\ny = 'abc\n", [2, 5, "SyntaxError: unterminated string literal (detected at line 2)"]),
        ("if x:\n        a = 1\n\tb = 2\n", [3, None, "TabError: inconsistent use of tabs and spaces in indentation"]),
        ("x = 1\ny = 'a\0b'\n", [2, 7, "SyntaxError: source code cannot contain null bytes"]),
    ],
    ids=["stray-semicolon", "unterminated-string", "tab-space-mix", "nul"],
)
def test_syntax_errors_have_cpythons_position_and_message(
    tmp_path: Path, lint_in_subprocess: LintCase, source: str, expected: List[Any]
) -> None:
    if sys.version_info < (3, 10) and "unterminated" in expected[2]:
        pytest.skip("CPython 3.9 words this error differently")
    [[code, line, column, message]] = lint_in_subprocess(tmp_path, source)
    assert code == "TL000"
    assert [line, column if expected[1] is not None else None, message] == expected


def test_the_scan_skips_comments_and_strings() -> None:
    source = "# " + "-" * 5000 + "\nx = '" + "(" * 500 + "-" * 5000 + "'\ny = '''\n" + "not " * 5000 + "'''\n"
    shape = measure(source)
    assert shape.depth <= 2 and shape.brackets == 0 and shape.tokens == 6


def test_the_scan_measures_real_nesting() -> None:
    assert measure("x = " + "-" * 50 + "1\n").depth == 50
    assert measure("x = a" + ".b" * 40 + "\n").depth == 40
    assert measure("x = (" * 30 + "1" + ")" * 30 + "\n").brackets == 30
    # Sums of products nest once per `+` plus the deepest product.
    assert measure("x = " + " + ".join(["a * b * c"] * 100) + "\n").depth < 110


def test_the_language_server_survives_deep_and_huge_documents(tmp_path: Path) -> None:
    pytest.importorskip("pygls")
    from test_lsp import Client, open_document

    finding = "boom()\n"  # TL991 of tests/rule_doubles.py, the rules the server runs with
    client = Client(tmp_path)
    try:
        client.initialize(tmp_path, {})
        deep = open_document(client, tmp_path / "deep.py", finding + TOO_DEEP["unary-minus"])
        [found] = client.diagnostics(deep)
        assert found["code"] == "TL000" and "nested too deeply" in found["message"]
        huge = open_document(client, tmp_path / "huge.py", finding + "# padding padding padding\n" * 450_000)
        [found] = client.diagnostics(huge)
        assert found["code"] == "TL000" and "over the 10 MB limit" in found["message"]
        good = open_document(client, tmp_path / "good.py", finding)
        assert [d["code"] for d in client.diagnostics(good)] == ["TL991"]
        assert client.stop() == 0
    finally:
        if client.process.poll() is None:
            client.process.kill()
            client.process.wait()


def test_syntax_error_position_does_not_depend_on_a_file_at_that_path(tmp_path: Path) -> None:
    """CPython re-reads a named file to place some errors; the text being
    parsed (a notebook cell, a fix pass, stdin) is not that file."""
    other = tmp_path / "nb.ipynb"
    other.write_text("{\n \"cells\": []\n}\n", encoding="utf-8")
    here = parse_module("x = (1,\n", str(other))
    nowhere = parse_module("x = (1,\n", str(tmp_path / "missing.py"))
    assert isinstance(here, Diagnostic) and isinstance(nowhere, Diagnostic)
    # The column differs between Python releases; it must not depend on the file.
    assert (here.start.line, here.start.column) == (nowhere.start.line, nowhere.start.column)
    assert here.start.line == 1


NEWER = 'import torch\nx = torch.zeros(3).cuda()\nname = "a"\nprint(f"{name!r} {"nested"}")\n'  # PEP 701: 3.12


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="this Python reads PEP 701 f-strings: it cannot tell")
def test_syntax_newer_than_the_target_python_is_a_syntax_error_not_a_file_to_fix(tmp_path: Path) -> None:
    """libcst reads every release's syntax; when this Python is at least as
    new as the project's oldest and rejects the file, so does the project."""
    (tmp_path / "a.py").write_text(NEWER, encoding="utf-8")

    def torchlint(*args: str) -> "subprocess.CompletedProcess[str]":
        return run_in_process([*args, "--no-cache"], tmp_path)

    checked = torchlint("check", "a.py", "--output-format", "concise")
    assert checked.returncode == 1
    assert checked.stdout.splitlines()[0].startswith("a.py:4:") and "TL000" in checked.stdout
    assert "(target Python 3.9)" in checked.stdout and "TL101" not in checked.stdout
    fixed = torchlint("fix", "a.py", "--apply", "--unsafe-fixes")
    assert fixed.returncode == 1 and (tmp_path / "a.py").read_text(encoding="utf-8") == NEWER
    # A project that targets 3.12 is linted (this Python cannot judge its syntax).
    targeted = torchlint("check", "a.py", "--output-format", "concise", "--target-version", "py312")
    assert "TL101" in targeted.stdout and "TL000" not in targeted.stdout
