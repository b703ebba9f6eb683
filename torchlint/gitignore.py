"""A small, faithful reader of ``.gitignore`` files (no third-party package)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import List, Optional, Tuple


@dataclass(frozen=True)
class IgnoreRule:
    """One line of a ``.gitignore``, compiled."""

    regex: "re.Pattern[str]"
    negated: bool
    dir_only: bool
    anchored: bool


def _translate(glob: str) -> str:
    """Gitignore glob to a regex body (``/`` separated, no anchors)."""
    out: List[str] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            end = glob.find("]", i + 2)
            if end == -1:
                out.append(re.escape(char))
                i += 1
            else:
                body = glob[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        elif char == "\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


def parse_line(line: str) -> Optional[IgnoreRule]:
    """Compile one ``.gitignore`` line, or None for blanks and comments."""
    line = line.rstrip("\n").rstrip("\r")
    if not line.strip() or line.startswith("#"):
        return None
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "
    negated = stripped.startswith("!")
    if negated:
        stripped = stripped[1:]
    elif stripped.startswith("\\!") or stripped.startswith("\\#"):
        stripped = stripped[1:]
    dir_only = stripped.endswith("/")
    stripped = stripped.rstrip("/")
    if not stripped:
        return None
    anchored = "/" in stripped
    stripped = stripped.lstrip("/")
    regex = re.compile(f"^{_translate(stripped)}$")
    return IgnoreRule(regex, negated, dir_only, anchored)


@lru_cache(maxsize=4096)
def load(directory: Path) -> Tuple[IgnoreRule, ...]:
    """The rules of ``directory/.gitignore`` (and ``.git/info/exclude`` at a repo root)."""
    rules: List[IgnoreRule] = []
    for candidate in (directory / ".git" / "info" / "exclude", directory / ".gitignore"):
        try:
            text = candidate.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        rules.extend(r for r in map(parse_line, text.splitlines()) if r is not None)
    return tuple(rules)


def verdict(rules: Tuple[IgnoreRule, ...], relative: str, is_dir: bool) -> Optional[bool]:
    """True (ignored), False (re-included) or None (no rule matched)."""
    result: Optional[bool] = None
    name = relative.rsplit("/", 1)[-1]
    for rule in rules:
        if rule.dir_only and not is_dir:
            continue
        subject = relative if rule.anchored else name
        if rule.regex.match(subject):
            result = not rule.negated
    return result


@lru_cache(maxsize=4096)
def repo_root(start: Path) -> Optional[Path]:
    """The nearest ancestor holding a ``.git`` entry."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


class GitIgnore:
    """Answers "is this path ignored?" using every applicable ``.gitignore``."""

    def is_ignored(self, path: Path, is_dir: bool) -> bool:
        """Check ``path`` against the ``.gitignore`` files of its ancestors."""
        path = path.absolute()
        root = repo_root(path.parent)
        ancestors = [path.parent, *path.parent.parents]
        if root is not None:
            ancestors = ancestors[: ancestors.index(root) + 1]
        else:
            ancestors = ancestors[:1]
        # Nearest .gitignore has the last word: evaluate from the top down.
        ignored: Optional[bool] = None
        for directory in reversed(ancestors):
            rules = load(directory)
            if not rules:
                continue
            relative = path.relative_to(directory).as_posix()
            answer = verdict(rules, relative, is_dir)
            if answer is not None:
                ignored = answer
        return bool(ignored)
