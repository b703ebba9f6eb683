"""Per-file facts kept between runs: the protocol of the run's cache as the
project index uses it, and how a file's facts are keyed.

A stored fact is a pure function of one file's bytes, path and module name
(and of what was asked), so its key is a digest of exactly those: an edit to
the file is a miss, an edit elsewhere is not.  A stored value is untrusted
(another user's cache, a damaged entry): readers check its exact shape and
treat anything else as a miss.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Optional, Protocol

import re


class Store(Protocol):
    """Where per-file facts are kept between runs (the run's cache)."""

    def get_facts(self, key: str) -> Optional[Any]:
        """The JSON value stored under ``key``, or None."""

    def put_facts(self, key: str, value: Any) -> None:
        """Keep a JSON value under ``key``."""


def store_key(path: Path, data: bytes, module: str, focus: "Optional[re.Pattern[bytes]]", kind: bytes) -> str:
    """The key of one kind of fact (``kind`` names it and its format) about
    one file; ``focus`` is what the fact was limited to, if anything."""
    digest = hashlib.sha256(kind)
    digest.update(f"\0{path}\0{module}\0".encode("utf-8", "surrogateescape"))
    digest.update(b"" if focus is None else focus.pattern)
    digest.update(b"\0")
    digest.update(data)
    return digest.hexdigest()


def all_of(kind: type, *values: Any) -> bool:
    """Every value is a ``kind`` (a stored value's shape check)."""
    return all(isinstance(v, kind) for v in values)


def count(value: Any) -> bool:
    """A non-negative int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
