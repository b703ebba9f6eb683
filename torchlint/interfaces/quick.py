"""The ``torchlint`` command's entry point: replays a ``check`` run whose
inputs did not change, importing almost nothing; else runs the command line.

Standard library only until it knows: the arguments and the environment
name the cache folder as the command line does (``--cache-dir``,
``TORCHLINT_CACHE_DIR``, ``--cache-shared``, ``TORCHLINT_CACHE_SHARED``), the
folder passes the command line's own checks (:func:`~torchlint.lint.sealed.check_directory`),
the record under the run's key (:func:`~torchlint.lint.replay.replay_key`)
is sealed with the cache's key, and every input it names holds
(:func:`~torchlint.lint.replay.holds_still`).  Then the recorded output is
written and the run exits with the recorded code.  Anything else, or any
doubt, runs the full command line (:mod:`torchlint.interfaces.cli`)
unchanged, recording it when it may be replayed (:mod:`torchlint.lint.replay`).
"""

from __future__ import annotations

import os
import sys
TYPE_CHECKING = False  # typing is not imported on a replay's path (mypy reads this name as typing's)
if TYPE_CHECKING:
    from typing import List, Optional, Tuple

_TRUE = ("1", "true", "t", "yes", "y", "on")
_FALSE = ("0", "false", "f", "no", "n", "off", "")
"""How the command line reads ``TORCHLINT_CACHE_SHARED`` (click's booleans)."""


def cache_choice(argv: List[str]) -> Optional[Tuple[Optional[str], bool]]:
    """(the --cache-dir value or TORCHLINT_CACHE_DIR, shared) for a ``check``
    run that uses the cache; None for any other command, ``--no-cache``, or
    arguments this cannot read for sure (``--``, standard input, a missing value)."""
    if not argv or argv[0] != "check":
        return None
    value = os.environ.get("TORCHLINT_CACHE_DIR")
    variable = os.environ.get("TORCHLINT_CACHE_SHARED", "").strip().lower()
    if variable not in _TRUE and variable not in _FALSE:
        return None
    shared = variable in _TRUE
    arguments = iter(argv[1:])
    for argument in arguments:
        if argument in ("--no-cache", "--", "-"):
            return None
        if argument == "--cache-shared":
            shared = True
        elif argument == "--cache-dir":
            value = next(arguments, None)
            if value is None:
                return None
        elif argument.startswith("--cache-dir="):
            value = argument[len("--cache-dir="):]
    return value, shared


def _replayed(argv: List[str], choice: Tuple[Optional[str], bool], cwd: str, key: str, code: str) -> Optional[int]:
    """The exit code of the replayed run, or None: no record holds."""
    from torchlint.lint.replay import holds_still, open_record, replay
    from torchlint.lint.sealed import CACHE_DIR_NAME, CacheDirError, SealedStore, check_directory

    value, shared = choice
    try:
        directory = check_directory(CACHE_DIR_NAME if value is None else value, cwd, fingerprint=code,
                                    shared=shared)
    except (CacheDirError, OSError, ValueError):
        return None
    store = SealedStore(directory, shared=shared, fingerprint=lambda: code)
    try:
        record = open_record(store, key)
        if record is None or not holds_still(record):
            return None
    except Exception:  # any doubt: the full run, which reports what is wrong if anything is
        return None
    finally:
        store.close()
    return replay(record)


def _plain(stream: object) -> bool:
    """A standard stream with bytes beneath it (not closed, not replaced by a caller with text only)."""
    return getattr(stream, "buffer", None) is not None


def main() -> None:
    """Replay, or run the command line (recording it when it may be replayed)."""
    argv = sys.argv[1:]
    choice = cache_choice(argv)
    key = None
    if choice is not None and _plain(sys.stdout) and _plain(sys.stderr):
        from torchlint.lint.replay import fingerprint, replay_key

        try:
            cwd = os.getcwd()
        except OSError:
            cwd = None
        if cwd is not None:
            code = fingerprint()
            key = replay_key(argv, cwd, os.environ, code)
            replayed = _replayed(argv, choice, cwd, key, code)
            if replayed is not None:
                sys.exit(replayed)
    from torchlint.interfaces.cli import main as full

    if key is None:
        full()
        return
    from torchlint.lint.replay import recorded

    recorded(full, key)
