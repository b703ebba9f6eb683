"""A small, faithful reader of ``.gitignore`` files (no third-party package).

Patterns are matched the way git's ``wildmatch`` does: on bytes, with ``*``,
``?`` and ``[...]`` never matching ``/``, ``**`` special only between
slashes, and a pattern git cannot complete (an unterminated ``[``, a
trailing ``\\``, an unknown ``[:class:]``) matching nothing.  Lookups are
memoised per folder so that a walk costs one read of each ``.gitignore``
and one ``.git`` probe per folder, however deep the tree.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from torchlint.source.sourcefile import MAX_FILE_BYTES, MissingFile, SourceError, ceiling_directories, read_regular

_NEVER = re.compile(b"(?!)")
_WILDCARDS = b"*?[\\"
_CLASSES: Dict[bytes, bytes] = {
    b"alnum": b"a-zA-Z0-9",
    b"alpha": b"a-zA-Z",
    b"blank": b" \\t",
    b"cntrl": b"\\x00-\\x1f\\x7f",
    b"digit": b"0-9",
    b"graph": b"\\x21-\\x7e",
    b"lower": b"a-z",
    b"print": b"\\x20-\\x7e",
    b"punct": b"\\x21-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7e",
    b"space": b" \\t\\n\\r\\x0b\\x0c",
    b"upper": b"A-Z",
    b"xdigit": b"0-9a-fA-F",
}


@dataclass(frozen=True)
class IgnoreRule:
    """One line of a ``.gitignore``, compiled."""

    regex: "re.Pattern[bytes]"
    negated: bool
    dir_only: bool
    anchored: bool


class _Unmatchable(Exception):
    """The pattern is one git's matcher gives up on: it matches nothing."""


def _byte(value: int) -> bytes:
    return re.escape(bytes([value]))


def _bracket(glob: bytes, start: int) -> Tuple[bytes, int]:
    """The regex for the ``[...]`` at ``start`` and the index after it."""
    i = start + 1
    negated = i < len(glob) and glob[i] in b"!^"
    i += negated
    items: List[bytes] = []
    previous: Optional[int] = None
    first = True
    while True:
        if i >= len(glob):
            raise _Unmatchable
        char = glob[i]
        if char == ord("]") and not first:
            break
        first = False
        if char == ord("\\"):
            i += 1
            if i >= len(glob):
                raise _Unmatchable
            items.append(_byte(glob[i]))
            previous = glob[i]
        elif char == ord("-") and previous is not None and i + 1 < len(glob) and glob[i + 1] != ord("]"):
            i += 1
            high = glob[i]
            if high == ord("\\"):
                i += 1
                if i >= len(glob):
                    raise _Unmatchable
                high = glob[i]
            if previous <= high:  # a reversed range matches nothing (its first end still does)
                items.append(_byte(previous) + b"-" + _byte(high))
            previous = None
        elif char == ord("[") and glob[i + 1 : i + 2] == b":":
            close = glob.find(b"]", i + 2)
            if close == -1:
                raise _Unmatchable
            if close - (i + 2) < 1 or glob[close - 1] != ord(":"):
                items.append(_byte(char))  # not a class after all: a literal "["
                previous = char
            else:
                name = glob[i + 2 : close - 1]
                if name not in _CLASSES:
                    raise _Unmatchable
                items.append(_CLASSES[name])
                previous = None
                i = close
        else:
            items.append(_byte(char))
            previous = char
        i += 1
    body = b"".join(items)
    if negated:
        return b"[^/" + body + b"]", i + 1
    return (b"(?!/)[" + body + b"]" if body else b"(?!)"), i + 1


def _translate(glob: bytes) -> bytes:
    """A wildmatch glob (``/`` separated) as a regex body; ``**`` is special at ``glob``'s start."""
    out: List[bytes] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if char == ord("*"):
            end = i
            while end < len(glob) and glob[end] == ord("*"):
                end += 1
            bounded = (i == 0 or glob[i - 1] == ord("/")) and (end == len(glob) or glob[end] == ord("/"))
            if end - i >= 2 and bounded:
                if end == len(glob):
                    out.append(b".*")
                else:
                    out.append(b"(?:.*/)?")
                    end += 1
            else:
                out.append(b"[^/]*")
            i = end
        elif char == ord("?"):
            out.append(b"[^/]")
            i += 1
        elif char == ord("["):
            regex, i = _bracket(glob, i)
            out.append(regex)
        elif char == ord("\\"):
            if i + 1 >= len(glob):
                raise _Unmatchable
            out.append(_byte(glob[i + 1]))
            i += 2
        else:
            out.append(_byte(char))
            i += 1
    return b"".join(out)


def _trim_trailing_spaces(line: bytes) -> bytes:
    """Drop trailing spaces that no backslash protects (git's rule)."""
    last_space: Optional[int] = None
    i = 0
    while i < len(line):
        if line[i] == ord(" "):
            if last_space is None:
                last_space = i
        elif line[i] == ord("\\"):
            i += 1
            if i >= len(line):
                return line
            last_space = None
        else:
            last_space = None
        i += 1
    return line if last_space is None else line[:last_space]


def parse_line(line: "bytes | str") -> Optional[IgnoreRule]:
    """Compile one ``.gitignore`` line, or None for blanks and comments."""
    raw = os.fsencode(line) if isinstance(line, str) else line
    raw = raw.rstrip(b"\n")
    raw = raw[:-1] if raw.endswith(b"\r") else raw
    if not raw or raw.startswith(b"#"):
        return None
    pattern = _trim_trailing_spaces(raw)
    negated = pattern.startswith(b"!")
    if negated:
        pattern = pattern[1:]
    dir_only = pattern.endswith(b"/")
    pattern = pattern[:-1] if dir_only else pattern  # one slash only, as git does
    if not pattern:
        return None
    anchored = b"/" in pattern
    try:
        if anchored:
            # git compares the part before the first wildcard literally and
            # matches the rest on its own, so a ``**`` there counts as leading.
            pattern = pattern[1:] if pattern.startswith(b"/") else pattern
            cut = next((k for k, c in enumerate(pattern) if c in _WILDCARDS), len(pattern))
            regex = re.compile(re.escape(pattern[:cut]) + _translate(pattern[cut:]) + b"\\Z", re.DOTALL)
        else:
            regex = re.compile(_translate(pattern) + b"\\Z", re.DOTALL)
    except _Unmatchable:
        regex = _NEVER
    return IgnoreRule(regex, negated, dir_only, anchored)


def parse(data: bytes) -> Tuple[IgnoreRule, ...]:
    """Every rule of one ignore file's bytes (a UTF-8 byte-order mark is skipped)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    rules = (parse_line(line) for line in data.split(b"\n"))
    return tuple(rule for rule in rules if rule is not None)


def verdict(rules: Tuple[IgnoreRule, ...], relative: "bytes | str", is_dir: bool) -> Optional[bool]:
    """True (ignored), False (re-included) or None (no rule matched)."""
    subject_path = os.fsencode(relative) if isinstance(relative, str) else relative
    name = subject_path.rsplit(b"/", 1)[-1]
    result: Optional[bool] = None
    for rule in rules:
        if rule.dir_only and not is_dir:
            continue
        subject = subject_path if rule.anchored else name
        if rule.regex.match(subject):
            result = not rule.negated
    return result




# One folder's rules, keyed by the folder (absolute, as bytes).
_Chain = Tuple[Tuple[bytes, Tuple[IgnoreRule, ...]], ...]


class GitIgnore:
    """Answers "is this path ignored?" using every applicable ``.gitignore``.

    Inside a repository that is every ``.gitignore`` from the repository root
    down (and ``.git/info/exclude``); outside one, only the folder's own.
    """

    def __init__(self) -> None:
        self._roots: Dict[str, Optional[str]] = {}
        self._chains: Dict[str, _Chain] = {}
        self._problems: Dict[str, str] = {}
        self._ceilings = ceiling_directories("GIT_CEILING_DIRECTORIES")

    @property
    def problems(self) -> Tuple[Tuple[str, str], ...]:
        """Ignore files that exist but could not be read, with why (each was
        used as if absent)."""
        return tuple(self._problems.items())

    def _read(self, path: str, follow: bool) -> bytes:
        """The bytes of an ignore file; b"" when there is none.  Only a
        regular file is read, within the size limit; a ``.gitignore`` that is
        a symbolic link is not followed (git does not follow it either)."""
        try:
            return read_regular(path, MAX_FILE_BYTES, follow=follow)
        except MissingFile:
            return b""
        except SourceError as error:
            self._problems.setdefault(path, f"cannot read ignore file: {error}; it was ignored as if absent")
            return b""

    def repo_root(self, directory: str) -> Optional[str]:
        """The nearest folder at or above ``directory`` holding a ``.git``
        entry; as with git, the search does not enter a folder listed in
        ``GIT_CEILING_DIRECTORIES``."""
        pending: List[str] = []
        current = directory
        while current not in self._roots:
            pending.append(current)
            if os.path.lexists(os.path.join(current, ".git")):
                self._roots[current] = current
                break
            parent = os.path.dirname(current)
            if parent == current or parent in self._ceilings:
                self._roots[current] = None
                break
            current = parent
        root = self._roots[current]
        for folder in pending:
            self._roots[folder] = root
        return root

    def _own_rules(self, directory: str, is_root: bool) -> Tuple[IgnoreRule, ...]:
        data = self._read(os.path.join(directory, ".gitignore"), follow=False)
        rules = parse(data) if data else ()
        if is_root:
            return parse(self._read(os.path.join(directory, ".git", "info", "exclude"), follow=True)) + rules
        return rules

    def chain(self, directory: str) -> _Chain:
        """The non-empty rule sets that apply in ``directory``, outermost first."""
        cached = self._chains.get(directory)
        if cached is not None:
            return cached
        root = self.repo_root(directory)
        if root is None:
            own = self._own_rules(directory, False)
            result: _Chain = ((os.fsencode(directory), own),) if own else ()
            self._chains[directory] = result
            return result
        pending: List[str] = []
        current = directory
        while current not in self._chains:
            pending.append(current)
            if current == root:
                break
            current = os.path.dirname(current)
        inherited = self._chains.get(current, ())
        for folder in reversed(pending):
            own = self._own_rules(folder, folder == root)
            inherited = inherited + (((os.fsencode(folder), own),) if own else ())
            self._chains[folder] = inherited
        return inherited

    def is_ignored(self, path: "os.PathLike[str] | str", is_dir: bool) -> bool:
        """Check ``path`` against the ``.gitignore`` files of its folders."""
        absolute = os.path.abspath(path)
        encoded = os.fsencode(absolute)
        ignored: Optional[bool] = None
        for folder, rules in self.chain(os.path.dirname(absolute)):
            relative = encoded[len(folder) :].lstrip(b"/")
            answer = verdict(rules, relative, is_dir)
            if answer is not None:
                ignored = answer
        return bool(ignored)
