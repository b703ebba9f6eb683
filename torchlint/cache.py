"""Content-keyed lint results in ``.torchlint_cache/``.

An entry's key hashes the file's bytes, torchlint's own code, and the
effective configuration of that file (rules, options, torch version), so an
entry can never be stale: anything that could change the findings changes the
key.  Entries are written atomically, one file each, so concurrent runs
(pre-commit starts several) at worst compute the same entry twice; an entry
that cannot be read or is malformed is ignored and rewritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from torchlint.engine import LintConfig
from torchlint.model import Applicability, Diagnostic, Edit, Fix, Position

CACHE_DIR_NAME = ".torchlint_cache"
_FORMAT = "v1"
_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by torchlint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


@lru_cache(maxsize=1)
def tool_fingerprint() -> str:
    """torchlint's version plus the size and mtime of its source files, so an
    edited rule invalidates the cache even without a version bump."""
    import torchlint
    import torchlint.rules

    digest = hashlib.sha256(torchlint.__version__.encode())
    for package in (torchlint, torchlint.rules):
        folder = Path(package.__file__ or "").parent
        for path in sorted(folder.glob("*.py")):
            info = path.stat()
            digest.update(f"{path.name}:{info.st_size}:{info.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def config_fingerprint(config: LintConfig) -> str:
    """A stable text for everything in a LintConfig that affects findings."""
    payload = {
        "rules": [rule.code for rule in config.rules],
        "torch": str(config.torch_version),
        "options": {code: dict(sorted(opts.items())) for code, opts in sorted(config.options.items())},
        "precheck": config.precheck,
    }
    return json.dumps(payload, sort_keys=True, default=list)


def _diagnostic_to_json(diagnostic: Diagnostic) -> Dict[str, Any]:
    data = asdict(diagnostic)
    if diagnostic.fix is not None:
        data["fix"]["applicability"] = diagnostic.fix.applicability.value
    return data


def _diagnostic_from_json(data: Dict[str, Any], path: str) -> Diagnostic:
    fix = None
    if data.get("fix") is not None:
        raw = data["fix"]
        fix = Fix(
            tuple(Edit(int(e["start"]), int(e["end"]), str(e["text"])) for e in raw["edits"]),
            Applicability(raw["applicability"]),
            str(raw["description"]),
        )
    return Diagnostic(
        path=path,
        start=Position(int(data["start"]["line"]), int(data["start"]["column"])),
        end=Position(int(data["end"]["line"]), int(data["end"]["column"])),
        code=str(data["code"]),
        name=str(data["name"]),
        message=str(data["message"]),
        fix=fix,
        hint=data.get("hint"),
        cell=data.get("cell"),
    )


class Cache:
    """One JSON file per (content, configuration) key."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._root = directory / _FORMAT / tool_fingerprint()
        self._prepared = False

    def key(self, digest: str, config: LintConfig, path: str) -> str:
        """The entry key of one file's bytes under one configuration."""
        text = f"{digest}\0{config_fingerprint(config)}\0{path}"
        return hashlib.sha256(text.encode()).hexdigest()

    def _entry(self, key: str) -> Path:
        return self._root / key[:2] / f"{key}.json"

    def get(self, key: str, path: str) -> Optional[List[Diagnostic]]:
        """The cached diagnostics, or None on a miss or an unreadable entry."""
        try:
            with self._entry(key).open("r", encoding="utf-8") as handle:
                data = json.load(handle)
            if not isinstance(data, dict) or data.get("key") != key:
                return None
            return [_diagnostic_from_json(item, path) for item in data["diagnostics"]]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, diagnostics: Sequence[Diagnostic]) -> None:
        """Store an entry atomically; failures to write are ignored."""
        try:
            self._prepare()
            entry = self._entry(key)
            entry.parent.mkdir(parents=True, exist_ok=True)
            payload = {"key": key, "diagnostics": [_diagnostic_to_json(d) for d in diagnostics]}
            handle, temporary = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(payload, stream)
            os.replace(temporary, entry)
        except OSError:
            pass

    def _prepare(self) -> None:
        if self._prepared:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        for name, text in (("CACHEDIR.TAG", _TAG), (".gitignore", "# Created by torchlint.\n*\n")):
            target = self.directory / name
            if not target.exists():
                target.write_text(text, encoding="utf-8")
        self._prepared = True


def clean(directory: Path) -> bool:
    """Remove a cache directory; True if there was one."""
    if not (directory / "CACHEDIR.TAG").is_file() and not (directory / _FORMAT).is_dir():
        return False
    shutil.rmtree(directory, ignore_errors=True)
    return True
