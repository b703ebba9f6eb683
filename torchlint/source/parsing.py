"""Turning text into a libcst module without ever dying on the text.

libcst's native parser overflows its stack (a segfault, not an exception) on
deeply nested code, takes time quadratic in the nesting depth, and needs
about 4 KB of memory per token.  So before any text reaches it:

* a cheap token scan (:func:`measure`) bounds the nesting depth of every kind
  (unary operators, operator chains, lambdas, conditional expressions,
  attribute/call/subscript chains, adjacent strings, brackets, indentation
  and ``elif`` chains) and the token count; text beyond :data:`LIMITS` gets a
  TL000 naming the limit instead of a parse;
* parsing (and linting, which recurses over the tree) runs in a thread with
  a large stack and a raised recursion limit (:func:`on_deep_stack`), so all
  code within the limits lints;
* text that is within the limits but unusual (:attr:`Shape.suspicious`) is
  first parsed in a forked, memory-limited child; if the child dies, the
  file gets a TL000 and the caller lives.  Pool workers are sacrificial
  already (:func:`run_as_sacrificial_process`) and skip the child; a run
  of one job hands such files to a worker (:func:`handing_over`) rather
  than parse them twice.

Syntax errors are reported with CPython's message and position where CPython
agrees that the text is broken.
"""

from __future__ import annotations

import ast
import contextvars
import keyword
import os
import queue
import re
import signal
import sys
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Callable, Dict, Iterator, List, Optional, Tuple, TypeVar

import libcst as cst

from torchlint.model import Diagnostic, parse_error as parse_error
from torchlint.source.sourcefile import MAX_FILE_BYTES

T = TypeVar("T")


@dataclass(frozen=True)
class Limits:
    """What torchlint promises to parse; beyond these a file gets a TL000."""

    depth: int = 1000
    """Nesting depth of one statement: indentation levels and ``elif``
    chains plus expression nesting, each operator, keyword operator
    (``not and or lambda if else await``), attribute dot, bracket and string
    literal in a chain counting one level.  libcst needs about a second at
    this depth and time quadratic in it beyond."""
    brackets: int = 200
    """Brackets open at once: CPython's own limit."""
    adjacent_strings: int = 1000
    """String literals in a row (implicit concatenation); libcst gives a
    false syntax error somewhere past 3,000."""
    tokens: int = 250_000
    """Tokens in one file: libcst needs up to ~4 KB per token (dense
    literals), so about 1 GB at this limit."""
    memory_bytes: int = 3 * 1024 ** 3
    """Address space a sacrificial parse may add (where the OS allows)."""


LIMITS = Limits()

_DEEP_STACK_BYTES = 512 * 1024 * 1024
_DEEP_RECURSION_LIMIT = 50_000


def size_error(path: str, text: str) -> Optional[Diagnostic]:
    """The TL000 for text over the file size limit, for text that does not
    come from a file (an editor's buffer): files are checked when read."""
    if len(text) <= MAX_FILE_BYTES // 4:
        return None
    size = len(text.encode("utf-8", "surrogatepass"))
    if size <= MAX_FILE_BYTES:
        return None
    return parse_error(path, f"file is {size / 1e6:.1f} MB, over the {MAX_FILE_BYTES / 1e6:.0f} MB limit; skipped")


# -- the token scan ---------------------------------------------------------

_STRING = (
    r"(?P<prefix>[rRbBuUfFtT]{1,3})?"
    r"(?P<string>'''(?:[^'\\]|\\.|'(?!''))*(?:'''|\Z)"
    r'|"""(?:[^"\\]|\\.|"(?!""))*(?:"""|\Z)'
    r"|'(?:[^'\\\r\n]|\\.)*'?"
    r'|"(?:[^"\\\r\n]|\\.)*"?)'
)
_TOKEN = re.compile(
    r"[ \t\f]*(?:"
    r"(?P<newline>\r\n?|\n)"
    r"|(?P<skip>\#[^\r\n]*|\\(?:\r\n?|\n))"
    rf"|{_STRING}"
    r"|(?P<number>\.?\d(?:[eE][-+]|[\w.])*)"
    r"|(?P<name>\w+)"
    r"|(?P<op>\*\*=?|//=?|>>=?|<<=?|->|:=|\.\.\.|[-+*/%@&|^<>=!]=|[^\s\w])"
    r")",
    re.DOTALL,
)
_OPEN = frozenset("([{")
_CLOSE = frozenset(")]}")
_ENDS_EXPRESSION = frozenset([",", ";", "=", "->", "+=", "-=", "*=", "/=", "//=", "%=", "@=", "**=",
                              "<<=", ">>=", "&=", "|=", "^="])
# Binding strength of what nests an expression one level deeper, weakest
# first: a chain of operators at one level nests once per operator, and an
# operator ends the chains of the stronger levels before it.
_LAMBDA, _OR, _AND, _NOT, _COMPARE, _BITOR, _XOR, _BITAND, _SHIFT, _SUM, _TERM, _UNARY, _POWER, _AWAIT, \
    _TRAILER = range(15)
_BINARY = {
    "|": _BITOR, "^": _XOR, "&": _BITAND, "<<": _SHIFT, ">>": _SHIFT, "+": _SUM, "-": _SUM,
    "*": _TERM, "/": _TERM, "//": _TERM, "%": _TERM, "@": _TERM, "**": _POWER, ".": _TRAILER,
    "<": _COMPARE, ">": _COMPARE, "<=": _COMPARE, ">=": _COMPARE, "==": _COMPARE, "!=": _COMPARE,
    ":=": _LAMBDA,
}
_PREFIX = {"-": _UNARY, "+": _UNARY, "~": _UNARY, "*": _UNARY, "**": _UNARY}
_WORDS = {
    "lambda": _LAMBDA, "if": _LAMBDA, "for": _LAMBDA, "or": _OR, "and": _AND, "not": _NOT,
    "in": _COMPARE, "is": _COMPARE, "await": _AWAIT,
}
_FLAT = frozenset([_COMPARE])  # a comparison chain is one node
_NOT_OPERANDS = frozenset(keyword.kwlist) - {"True", "False", "None"}
_F_STRING = re.compile(r"[fFtT]")


@dataclass(frozen=True)
class Shape:
    """What the token scan measured: the largest value of each limited
    quantity, and where it occurs (where it first passes the limit)."""

    tokens: int = 0
    depth: int = 0
    depth_at: int = 0
    brackets: int = 0
    brackets_at: int = 0
    adjacent_strings: int = 0
    strings_at: int = 0
    longest_statement: int = 0
    """Tokens in the longest logical line."""

    @property
    def suspicious(self) -> bool:
        """Within the limits, but unusual enough to parse in a sacrificial
        process first (something the scan does not model may hide here)."""
        return (
            self.depth > LIMITS.depth // 4
            or self.longest_statement > 5_000
            or self.tokens > LIMITS.tokens // 2
        )


def measure(source: str) -> Shape:
    """Scan the text once (comments and string contents skipped) and
    measure nesting depth, brackets, adjacent strings and tokens."""
    best = dict.fromkeys((f.name for f in fields(Shape)), 0)
    _scan(source, best, 0, 0)
    return Shape(**best)


class _Chains:
    """The operator chains open in one bracket: parallel stacks of binding
    strength (strictly increasing) and operator count; ``total`` is the
    depth they add."""

    __slots__ = ("levels", "counts", "total", "lambdas")

    def __init__(self) -> None:
        self.levels: List[int] = []
        self.counts: List[int] = []
        self.total = 0
        self.lambdas = 0  # lambdas whose parameters are being read: commas there separate nothing

    def add(self, level: int) -> None:
        """An operator of strength ``level``: it ends stronger chains."""
        levels, counts = self.levels, self.counts
        while levels and levels[-1] > level:
            levels.pop()
            self.total -= counts.pop()
        if levels and levels[-1] == level:
            if level not in _FLAT:
                counts[-1] += 1
                self.total += 1
        else:
            levels.append(level)
            counts.append(1)
            self.total += 1


def _scan(source: str, best: Dict[str, int], base: int, origin: int) -> None:
    """Scan ``source`` (a file, or the inside of an f-string at ``origin``
    nested ``base`` levels deep), raising the :class:`Shape` values in ``best``.

    The depth at a token is the statement's nesting, plus one per open
    bracket and the operator chains open in each bracket (:class:`_Chains`).
    """
    stack: List[Tuple[_Chains, int]] = []
    chains = _Chains()
    outer = strings = statement_tokens = tokens = 0
    operand = False  # whether the previous token ends an operand
    indents: List[int] = []
    elifs: Dict[int, int] = {}
    statement = base
    line_start = True
    for match in _TOKEN.finditer(source):
        kind = match.lastgroup
        if kind == "skip" or kind is None:
            continue
        if kind == "newline":
            if not stack:
                chains = _Chains()
                operand = False
                line_start = True
                best["longest_statement"] = max(best["longest_statement"], statement_tokens)
                statement_tokens = 0
            continue
        tokens += 1
        statement_tokens += 1
        start = match.start("prefix") if match.group("prefix") else match.start(kind)
        text = match.group(kind)
        if line_start and not stack:
            line_start = False
            statement = base + _statement_depth(source, start, text, indents, elifs)
        if kind == "string":
            strings += 1
            if strings > best["adjacent_strings"]:
                best["adjacent_strings"] = strings
                if strings <= LIMITS.adjacent_strings + 1:
                    best["strings_at"] = origin + start
            if strings > 1:  # adjacent strings nest one level each
                chains.add(_TRAILER)
            prefix = match.group("prefix")
            if prefix and _F_STRING.search(prefix):
                _scan_f_string(text, best, statement + outer + chains.total + 1, origin + match.start("string"))
            operand = True
        else:
            strings = 0
            if kind == "op":
                if text in _OPEN:
                    if operand:  # a call or subscript
                        chains.add(_TRAILER)
                    stack.append((chains, outer))
                    outer += chains.total + 1
                    chains = _Chains()
                    operand = False
                    if len(stack) > best["brackets"]:
                        best["brackets"] = len(stack)
                        if len(stack) <= LIMITS.brackets + 1:
                            best["brackets_at"] = origin + start
                elif text in _CLOSE:
                    if stack:
                        chains, outer = stack.pop()
                    operand = True
                elif text in _ENDS_EXPRESSION and not chains.lambdas:
                    chains = _Chains()
                    operand = False
                elif text == ":" and chains.lambdas:
                    chains.lambdas -= 1
                    operand = False
                else:
                    level = _BINARY.get(text) if operand else _PREFIX.get(text)
                    if level is not None:
                        chains.add(level)
                    operand = text == "..."
            elif kind == "name" and text in _NOT_OPERANDS:
                level = _WORDS.get(text)
                if level is not None:
                    chains.add(level)
                chains.lambdas += text == "lambda"
                operand = False
            else:
                operand = True
        depth = statement + outer + chains.total
        if depth > best["depth"]:
            best["depth"] = depth
            if depth <= LIMITS.depth + 1:
                best["depth_at"] = origin + start
    best["longest_statement"] = max(best["longest_statement"], statement_tokens)
    best["tokens"] += tokens


def _statement_depth(source: str, start: int, first: str, indents: List[int], elifs: Dict[int, int]) -> int:
    """Levels a logical line starting at ``start`` with token ``first`` is
    nested in: indentation plus the ``elif`` chains it continues."""
    column = start - max(source.rfind("\n", 0, start), source.rfind("\r", 0, start)) - 1
    while indents and indents[-1] > column:
        indents.pop()
    if column > (indents[-1] if indents else 0):
        indents.append(column)
    for deeper in [c for c in elifs if c > column]:
        del elifs[deeper]
    if first == "elif":
        elifs[column] = elifs.get(column, 0) + 1
    elif first != "else":
        elifs.pop(column, None)
    return len(indents) + sum(elifs.values())


def _scan_f_string(body: str, best: Dict[str, int], base: int, origin: int) -> None:
    """Scan the replacement fields of an f-string (their code is parsed too)."""
    body = body.replace("{{", "  ").replace("}}", "  ")
    first, last = body.find("{"), body.rfind("}")
    if first == -1 or last <= first:
        return
    _scan(body[first + 1 : last], best, base + 1, origin + first + 1)


def _line_column(source: str, offset: int) -> Tuple[int, int]:
    line = source.count("\n", 0, offset) + 1
    return line, offset - max(source.rfind("\n", 0, offset), -1)


def limit_error(source: str, path: str, shape: Optional[Shape] = None) -> Optional[Diagnostic]:
    """The TL000 for text beyond :data:`LIMITS`, or None."""
    shape = shape or measure(source)
    problems = [
        (shape.tokens > LIMITS.tokens, 0,
         f"file too large to lint: {shape.tokens:,} tokens, limit {LIMITS.tokens:,}"),
        (shape.brackets > LIMITS.brackets, shape.brackets_at,
         f"too many nested brackets: {shape.brackets} deep, limit {LIMITS.brackets}"),
        (shape.adjacent_strings > LIMITS.adjacent_strings, shape.strings_at,
         f"too many adjacent string literals: {shape.adjacent_strings}, limit {LIMITS.adjacent_strings}"),
        (shape.depth > LIMITS.depth, shape.depth_at,
         f"code nested too deeply to lint: depth {shape.depth}, limit {LIMITS.depth}"),
    ]
    for over, offset, message in problems:
        if over:
            line, column = _line_column(source, offset) if offset else (1, 1)
            return parse_error(path, message, line, column)
    return None


# -- running deep --------------------------------------------------------------

_deep = threading.local()
_deep_lock = threading.Lock()
_deep_users = 0
_saved_recursion_limit = 0


@dataclass(frozen=True)
class _Call:
    """One call handed to the deep thread, and its outcome once ``done``."""

    function: Callable[..., object]
    args: Tuple[object, ...]
    context: contextvars.Context
    """A copy of the caller's context variables (the rules in use, the read
    watch), for the call to run in, as if the caller ran it."""
    done: threading.Event = field(default_factory=threading.Event)
    outcome: List[Tuple[bool, object]] = field(default_factory=list)


class _DeepThread:
    """The thread with a large stack that runs :func:`on_deep_stack`'s calls,
    one at a time: started on first use and kept while the process lives (a
    forked child, which has none of its parent's threads, starts its own).
    A thread started for each file would cost each file the per-thread
    set-up of libcst's native parser, about a millisecond: as much as
    parsing a small file."""

    def __init__(self) -> None:
        self.calls: "queue.SimpleQueue[_Call]" = queue.SimpleQueue()
        self.pid = 0
        """The process the thread runs in (0: none started)."""

    def run(self, call: _Call) -> None:
        """Hand ``call`` to the thread, started if this process has none; its
        outcome is there once ``call.done`` is set."""
        with _deep_lock:
            if self.pid != os.getpid():
                self.calls = queue.SimpleQueue()
                thread = threading.Thread(target=self._serve, args=(self.calls,), name="torchlint-parse",
                                          daemon=True)
                try:
                    previous = threading.stack_size(_DEEP_STACK_BYTES)
                except (ValueError, RuntimeError):  # pragma: no cover - platform refuses
                    previous = None
                try:
                    thread.start()
                finally:
                    if previous is not None:
                        threading.stack_size(previous)
                self.pid = os.getpid()
        self.calls.put(call)

    @staticmethod
    def _serve(calls: "queue.SimpleQueue[_Call]") -> None:
        _deep.active = True
        while True:
            call = calls.get()
            try:
                call.outcome.append((True, call.context.run(call.function, *call.args)))
            except BaseException as error:  # handed to the caller
                call.outcome.append((False, error))
            call.done.set()
            del call  # nothing of it (a tree, a source) stays alive while the thread waits


_deep_thread = _DeepThread()


def on_deep_stack(function: Callable[..., T], *args: object) -> T:
    """``function(*args)`` in a thread with a large stack and a raised
    recursion limit: libcst and the tree walks recurse once per nesting
    level.  It runs in a copy of the caller's context.  Calls nest without
    handing over again."""
    global _deep_users, _saved_recursion_limit
    if getattr(_deep, "active", False):
        return function(*args)
    call = _Call(function, args, contextvars.copy_context())
    with _deep_lock:
        if _deep_users == 0:
            _saved_recursion_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_recursion_limit, _DEEP_RECURSION_LIMIT))
        _deep_users += 1
    try:
        _deep_thread.run(call)
        call.done.wait()
    finally:
        with _deep_lock:
            _deep_users -= 1
            if _deep_users == 0:
                sys.setrecursionlimit(_saved_recursion_limit)
    ok, value = call.outcome[0]
    if not ok:
        assert isinstance(value, BaseException)
        raise value
    return value  # type: ignore[return-value]


# -- sacrificial parsing -------------------------------------------------------

_sacrificial = False


def run_as_sacrificial_process() -> None:
    """Declare this process expendable (a pool worker whose death the parent
    turns into a TL000): parse directly, under a memory limit."""
    global _sacrificial
    _sacrificial = True
    limit_memory()


def limit_memory() -> None:
    """Cap this process's address space at its current size plus
    :attr:`Limits.memory_bytes` and the deep stack, where the OS allows."""
    try:
        import resource

        page = os.sysconf("SC_PAGE_SIZE")
        with open("/proc/self/statm") as statm:
            current = int(statm.read().split()[0]) * page
        wanted = current + LIMITS.memory_bytes + 2 * _DEEP_STACK_BYTES
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            wanted = min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
    except (ImportError, OSError, ValueError, AttributeError):
        pass  # not Linux-like: the token limit is the only bound


class HandedOver(BaseException):
    """Raised by :func:`parse_module` inside :func:`handing_over` for text
    that needs a trial parse: the caller lints the file in a sacrificial
    process instead, which parses it once.  Not an ``Exception``, so that
    the handlers that turn a rule's failure into a TL000 let it through."""


_handing_over = False


@contextmanager
def handing_over() -> Iterator[None]:
    """Within it, text that would be parsed in a forked child first
    (:attr:`Shape.suspicious`) raises :class:`HandedOver` instead: for a
    caller that can lint the file in a worker process.  The trial parse
    and the real one cost two parses of the largest files (about a sixth
    of a one-job run over torch's source); a worker needs one."""
    global _handing_over
    previous, _handing_over = _handing_over, True
    try:
        yield
    finally:
        _handing_over = previous


def _dies_parsing(source: str) -> Optional[str]:
    """Parse in a forked child; why the child died, or None if it lived
    (or forking is not possible here)."""
    if _sacrificial or not hasattr(os, "fork"):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads (3.12+)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; coverage cannot follow it
        code = 0
        try:
            limit_memory()
            on_deep_stack(cst.parse_module, source)
        except MemoryError:
            code = 3
        except BaseException:
            pass  # a syntax error: the parent reports it properly
        os._exit(code)
    try:
        _, status = os.waitpid(pid, 0)
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    if os.WIFSIGNALED(status):
        return f"libcst's parser crashed on this file ({signal.Signals(os.WTERMSIG(status)).name})"
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 3:
        return f"file too large to lint: parsing needs more than {LIMITS.memory_bytes // 1024 ** 3} GB"
    return None


# -- CPython's judgement -------------------------------------------------------

_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.ASCII)


def _cpython_only_error(source: str, path: str) -> Optional[Diagnostic]:
    """What CPython refuses but libcst accepts: raw NUL characters, and a
    UTF-8 BOM with a coding cookie naming another encoding."""
    nul = source.find("\0")
    if nul != -1:
        line, column = _line_column(source, nul)
        return parse_error(path, "SyntaxError: source code cannot contain null bytes", line, column)
    if source.startswith("\ufeff"):
        for line_number, line_text in enumerate(source[1:].splitlines()[:2], start=1):
            cookie = _COOKIE.match(line_text)
            if cookie:
                name = cookie.group(1).lower().replace("_", "-")
                if name not in ("utf-8", "utf8") and not name.startswith("utf-8-"):
                    return parse_error(path, f"SyntaxError: encoding problem: {cookie.group(1)} with BOM",
                                       line_number, 1)
                break
    return None


def cpython_syntax_error(source: str, path: str) -> Optional[Diagnostic]:
    """CPython's (this Python's) syntax error for the text, if it has one."""
    return _cpython_syntax_error(source, path)


def _cpython_syntax_error(source: str, path: str) -> Optional[Diagnostic]:
    """CPython's own message and position for broken text, if it has one."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # Never the real path: CPython re-reads the named file to place the error.
            compile(source, "<torchlint>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        kind = type(error).__name__
        message = " ".join(str(error.msg).split())
        return parse_error(path, f"{kind}: {message}", error.lineno or 1, error.offset or 1)
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


def compiles(source: str) -> bool:
    """Whether CPython parses the text (False also when this Python is older
    than the syntax used: libcst then has the last word)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. SyntaxWarning for "\d" in strings
        try:
            ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return True


def parse_module(source: str, path: str) -> "cst.Module | Diagnostic":
    """Parse with libcst, or return the TL000 diagnostic saying why not."""
    shape = measure(source)
    refused = limit_error(source, path, shape) or _cpython_only_error(source, path)
    if refused is not None:
        return refused
    if shape.suspicious and not _sacrificial:
        if _handing_over:
            raise HandedOver()
        death = _dies_parsing(source)
        if death is not None:
            return parse_error(path, death)
    try:
        return on_deep_stack(cst.parse_module, source)
    except cst.ParserSyntaxError as error:
        cpython = _cpython_syntax_error(source, path)
        if cpython is not None:
            return cpython
        message = " ".join(str(error.message).split())
        return parse_error(path, f"SyntaxError: {message}", error.raw_line, error.raw_column + 1)
    except RecursionError:
        return parse_error(path, f"code nested too deeply to lint (limit {LIMITS.depth})")
    except MemoryError:
        return parse_error(path, "file too large to lint: out of memory while parsing")
    except Exception as error:  # libcst's native parser raises a few other types
        return parse_error(path, f"cannot parse: {type(error).__name__}: {error}")
