"""Torch and Python versions: the releases a rule's advice applies to, the
torch a project targets, the oldest Python its code must run on.

Imports nothing heavy: settings and the cache key need these before any
file is parsed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple


@dataclass(frozen=True)
class TorchVersion:
    """A ``major.minor`` torch release, comparable."""

    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> "TorchVersion":
        """Parse ``"1.13"`` or ``"2.1.0"``; raises ValueError otherwise."""
        pieces = text.strip().split(".")
        if len(pieces) < 2 and not (len(pieces) == 1 and pieces[0].isdigit()):
            raise ValueError(f"not a torch version: {text!r}")
        try:
            major = int(pieces[0])
            minor = int(pieces[1]) if len(pieces) > 1 else 0
        except ValueError:
            raise ValueError(f"not a torch version: {text!r}") from None
        return cls(major, minor)

    def __lt__(self, other: "TorchVersion") -> bool:
        return (self.major, self.minor) < (other.major, other.minor)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


CURRENT_TORCH = TorchVersion(2, 9)


@dataclass(frozen=True)
class TorchRange:
    """The torch releases a rule applies to, both ends included; ``None`` is open.

    The engine runs a rule only when the target torch version (the
    project's, see ``torch-version`` in the settings) is in its range.
    ``note`` says what the bounds come from, for the docs.
    """

    min: Optional[TorchVersion] = None
    max: Optional[TorchVersion] = None
    note: str = ""

    def contains(self, version: TorchVersion) -> bool:
        if self.min is not None and version < self.min:
            return False
        return self.max is None or not self.max < version

    def bounds(self) -> str:
        """``all``, ``>= 1.7``, ``<= 2.3`` or ``1.7 to 2.3``."""
        if self.min is None and self.max is None:
            return "all"
        if self.max is None:
            return f">= {self.min}"
        if self.min is None:
            return f"<= {self.max}"
        return f"{self.min} to {self.max}"

    def __str__(self) -> str:
        text = "all versions" if self.min is None and self.max is None else self.bounds()
        return f"{text} ({self.note})" if self.note else text


@dataclass(frozen=True, order=True)
class Release:
    """A ``major.minor.patch`` release of a library torchlint reads the
    arguments of (Lightning, Transformers, Accelerate), comparable.

    Framework facts change at patch releases (Lightning's ``benchmark``
    default at 1.6.4), which :class:`TorchVersion` cannot express.
    """

    major: int
    minor: int = 0
    patch: int = 0

    @classmethod
    def parse(cls, text: str) -> "Release":
        """Parse ``"2"``, ``"1.9"`` or ``"1.6.4"`` (a missing part is 0); raises
        ValueError otherwise."""
        match = re.fullmatch(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", text.strip())
        if not match:
            raise ValueError(f"not a release such as \"1.9\" or \"1.6.4\": {text!r}")
        major, minor, patch = (int(part) if part else 0 for part in match.groups())
        return cls(major, minor, patch)

    def before(self) -> "Release":
        """The newest release that sorts before this one (``<2.0`` admits
        1.x, whatever its last release was numbered)."""
        if self.patch:
            return Release(self.major, self.minor, self.patch - 1)
        if self.minor:
            return Release(self.major, self.minor - 1, _ANY)
        return Release(max(self.major - 1, 0), _ANY, _ANY)

    def __str__(self) -> str:
        """``2.0``, ``1.6.4``: a zero patch is left out."""
        parts = (self.major, self.minor) if self.patch == 0 else (self.major, self.minor, self.patch)
        return ".".join(str(part) for part in parts if part != _ANY)


_ANY = 9999
"""A part past any real release number (the newest minor or patch of a line)."""


@dataclass(frozen=True)
class ReleaseRange:
    """The releases ``[since, until)`` of one framework a fact holds for;
    ``None`` is open."""

    since: Optional[Release] = None
    until: Optional[Release] = None

    def contains(self, release: Release) -> bool:
        if self.since is not None and release < self.since:
            return False
        return self.until is None or release < self.until

    def __str__(self) -> str:
        if self.since is None and self.until is None:
            return "all releases"
        if self.until is None:
            return f">= {self.since}"
        if self.since is None:
            return f"< {self.until}"
        return f">= {self.since}, < {self.until}"


@dataclass(frozen=True)
class FrameworkReleases:
    """The framework releases a project pins (``lightning-version``, or its
    requirements), by framework name; a framework not listed is taken at
    its newest release (``torchlint/data/frameworks.toml``)."""

    pinned: Tuple[Tuple[str, Release], ...] = ()

    def get(self, framework: str) -> Optional[Release]:
        for name, release in self.pinned:
            if name == framework:
                return release
        return None

    def __str__(self) -> str:
        return ", ".join(f"{name} {release}" for name, release in self.pinned) or "newest"


@dataclass(frozen=True, order=True)
class PythonVersion:
    """A Python minor release, e.g. 3.9."""

    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> "PythonVersion":
        """Read Ruff's spelling, ``py39`` ... ``py314``."""
        match = re.fullmatch(r"py3(\d{1,2})", text.strip())
        if not match:
            raise ValueError(f'expected a version such as "py39", got "{text}"')
        version = cls(3, int(match.group(1)))
        if not OLDEST_TARGET <= version <= NEWEST_TARGET:
            raise ValueError(f'"{text}" is not between "{OLDEST_TARGET}" and "{NEWEST_TARGET}"')
        return version

    def __str__(self) -> str:
        return f"py{self.major}{self.minor}"

    @property
    def dotted(self) -> str:
        """``3.9``."""
        return f"{self.major}.{self.minor}"


OLDEST_TARGET = PythonVersion(3, 7)
NEWEST_TARGET = PythonVersion(3, 14)
DEFAULT_TARGET = PythonVersion(3, 9)
_CLAUSE = re.compile(r"(?P<op>~=|===|==|>=|<=|!=|>|<)\s*(?P<version>\d+(?:\.\d+)*(?:\.\*)?)")


def lowest_python(requires_python: str) -> Optional[PythonVersion]:
    """The oldest minor release a ``requires-python`` specifier admits, if it
    sets a lower bound (``>=3.9,<4`` -> 3.9; ``~=3.10`` -> 3.10)."""
    lowest: Optional[PythonVersion] = None
    for clause in _CLAUSE.finditer(requires_python):
        if clause.group("op") not in ("~=", "==", "===", ">=", ">"):
            continue
        numbers = clause.group("version").rstrip(".*").split(".")
        if len(numbers) < 2 or numbers[0] != "3":
            continue
        version = PythonVersion(3, int(numbers[1]))
        lowest = version if lowest is None or version < lowest else lowest
    return lowest
