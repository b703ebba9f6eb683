"""What the run needs to know about rules before any file is parsed.

Selecting rules, validating their options, keying the cache and grading
findings only need each rule's metadata.  Importing the rules costs an import
of libcst and of every rule module; a cache hit or a file the pre-check rules
out should not pay that, so the metadata is kept as data
(:func:`rule_infos`), rebuilt from the rule classes whenever torchlint's own
files change.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import os
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Generic, Iterator, Mapping, Optional, Sequence, Tuple, TypeVar

from torchlint.ruleapi.meta import Option, RuleInfo, Severity

if TYPE_CHECKING:
    from torchlint.ruleapi.rule import RuleClass


def info_of(rule: "RuleClass") -> RuleInfo:
    """The metadata of one rule class."""
    return RuleInfo(rule.code, rule.name, tuple(rule.aliases), rule.default_enabled, rule.severity,
                    dict(rule.options), tuple(rule.project_queries))


RuleSet = Optional[Tuple["RuleClass", ...]]
"""The rule classes :func:`rules_replaced` put in place of ``torchlint.rules``;
None for the real ones."""

_REPLACED: "ContextVar[RuleSet]" = ContextVar("torchlint_rules_replaced", default=None)
"""The rule set of the code running now: a context variable, so that no
module-level state changes and a replacement is seen only by the code run
inside :func:`rules_replaced` (and by worker processes forked there)."""

_T = TypeVar("_T")


class _PerRuleSet(Generic[_T]):
    """A value derived from the rule set in use, computed once per rule set
    (``cache_clear`` forgets them, as ``functools.lru_cache`` does)."""

    def __init__(self, compute: Callable[[RuleSet], _T], on_clear: Callable[[], object] = lambda: None) -> None:
        self._compute = compute
        self._on_clear = on_clear
        self._known: Dict[RuleSet, _T] = {}
        functools.update_wrapper(self, compute)

    def __call__(self) -> _T:
        rules = _REPLACED.get()
        if rules not in self._known:
            self._known[rules] = self._compute(rules)
        return self._known[rules]

    def cache_clear(self) -> None:
        self._known.clear()
        self._on_clear()


def _code_fingerprint(forget: bool = False) -> str:
    from torchlint.version import code_fingerprint

    return code_fingerprint(forget)


@functools.partial(_PerRuleSet, on_clear=lambda: _code_fingerprint(forget=True))
def tool_fingerprint(replaced: RuleSet) -> str:
    """torchlint's code fingerprint (:func:`torchlint.version.code_fingerprint`:
    its version plus the size and mtime of its sources and data), and the rule
    set when :func:`rules_replaced` put another in place: cached results of
    the real rules do not apply to it."""
    found = _code_fingerprint()  # computed again by cache_clear (a test that edits a file)
    if replaced is None:
        return found
    names = " ".join(f"{rule.__module__}.{rule.__qualname__}" for rule in replaced)
    return hashlib.sha256(f"{found} {names}".encode()).hexdigest()[:16]


@contextmanager
def rules_replaced(rules: "Sequence[RuleClass]") -> Iterator[None]:
    """Run with exactly these rule classes instead of the ones in ``rules/``.

    Tests of the machinery (the command line, reports, the cache,
    suppressions, the editor) use small rules of their own through this, so
    that a real rule's wording or behaviour is tested only by that rule's
    unit.  The previous rule set is back on exit, and every answer derived
    from the rule set (metadata, selections, the tool fingerprint that keys
    the cache) is recomputed on each change.  Worker processes forked while
    it is active see the same rules.
    """
    codes = [rule.code for rule in rules]
    if len(set(codes)) != len(codes):
        raise ValueError(f"two rules share a code: {sorted(codes)}")
    token = _REPLACED.set(tuple(sorted(rules, key=lambda rule: rule.code)))
    _forget()
    try:
        yield
    finally:
        _REPLACED.reset(token)
        _forget()


def _forget() -> None:
    """Drop what was computed from the previous rule set."""
    for cached in (rule_infos, rules_by_code, tool_fingerprint):
        cached.cache_clear()


def all_rules() -> Tuple["RuleClass", ...]:
    """Every rule, sorted by code."""
    replaced = _REPLACED.get()
    return replaced if replaced is not None else _rule_modules()


@_PerRuleSet
def rules_by_code(replaced: RuleSet) -> Mapping[str, "RuleClass"]:
    """Every rule by its code (imports them): each file's lint looks up its
    rules here, one lookup a rule rather than a search of the rule set."""
    return {rule.code: rule for rule in (replaced if replaced is not None else _rule_modules())}


@lru_cache(maxsize=1)
def _rule_modules() -> Tuple["RuleClass", ...]:
    """The rules of ``torchlint.rules``, sorted by code (imported once)."""
    import torchlint.rules as package
    from torchlint.ruleapi.rule import Rule

    import pkgutil  # only here: not on every run's import path

    found: Dict[str, RuleClass] = {}
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and value is not Rule
                and value.__module__ == module.__name__
                and hasattr(value, "code")
            ):
                if value.code in found and found[value.code] is not value:
                    raise RuntimeError(f"two rules share the code {value.code}")
                found[value.code] = value
    return tuple(found[code] for code in sorted(found))


_STORE_ENV = "TORCHLINT_CATALOG_DIR"


def store_directory() -> Optional[Path]:
    """Where the metadata is kept between runs: ``$TORCHLINT_CATALOG_DIR``,
    else ``torchlint/`` in the user's cache folder (``$XDG_CACHE_HOME`` or
    ``~/.cache``); None when there is no home to put it in."""
    chosen = os.environ.get(_STORE_ENV)
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME")
    if base:
        return Path(base) / "torchlint"
    home = os.environ.get("HOME")
    return Path(home) / ".cache" / "torchlint" if home else None


def _option_to_json(option: Option) -> Dict[str, Any]:
    default = list(option.default) if isinstance(option.default, tuple) else option.default
    return {"default": default, "list": isinstance(option.default, tuple), "description": option.description,
            "minimum": option.minimum, "words": list(option.words)}


def _option_from_json(data: Any) -> Option:
    default = data["default"]
    if data["list"]:
        if not isinstance(default, list) or not all(isinstance(item, str) for item in default):
            raise ValueError("list option")
        default = tuple(default)
    elif not isinstance(default, (str, int, float, bool)):
        raise ValueError("option default")
    minimum = data["minimum"]
    if minimum is not None and not isinstance(minimum, int):
        raise ValueError("option minimum")
    return Option(default, str(data["description"]), minimum, tuple(str(word) for word in data["words"]))


def _to_json(infos: Tuple[RuleInfo, ...], fingerprint: str) -> str:
    rules = []
    for info in infos:
        queries = [[query.kind, list(query.words), list(query.more)] for query in info.queries]
        rules.append({
            "code": info.code, "name": info.name, "aliases": list(info.aliases),
            "default_enabled": info.default_enabled, "severity": info.severity.value,
            "options": {key: _option_to_json(option) for key, option in info.options.items()},
            "queries": queries,
        })
    return json.dumps({"fingerprint": fingerprint, "rules": rules}, sort_keys=True)


def _strings(value: Any) -> Tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError("expected a list of strings")
    return tuple(value)


def _from_json(text: str, fingerprint: str) -> Tuple[RuleInfo, ...]:
    """The stored metadata; ValueError/KeyError/TypeError for anything not
    exactly what :func:`_to_json` writes for this ``fingerprint``."""
    data = json.loads(text)
    if data["fingerprint"] != fingerprint:
        raise ValueError("stale")
    infos = []
    from torchlint.analysis.asks import KINDS, Query

    for rule in data["rules"]:
        queries = []
        for kind, words, more in rule["queries"]:
            if kind not in KINDS:
                raise ValueError("query kind")
            queries.append(Query(kind, _strings(words), _strings(more)))
        infos.append(RuleInfo(
            code=str(rule["code"]), name=str(rule["name"]), aliases=_strings(rule["aliases"]),
            default_enabled=bool(rule["default_enabled"]), severity=Severity(rule["severity"]),
            options={str(key): _option_from_json(value) for key, value in rule["options"].items()},
            queries=tuple(queries),
        ))
    return tuple(infos)


@_PerRuleSet
def rule_infos(replaced: RuleSet) -> Tuple[RuleInfo, ...]:
    """Every rule's metadata, sorted by code: read from the store when it was
    written by these very files (:func:`tool_fingerprint`), else taken from
    the rule classes (importing them) and stored for the next run.  A store
    that cannot be read or written is only a slower start."""
    from torchlint.source.sourcefile import SourceError, read_regular

    if replaced is not None:  # not stored: the classes are at hand, and a store is per build
        return tuple(info_of(rule) for rule in replaced)
    fingerprint = tool_fingerprint()
    folder = store_directory()
    entry = folder / f"rules-{fingerprint}.json" if folder is not None else None
    if entry is not None:
        from torchlint.source.reads import unwatched, watched

        token = watched(None)  # torchlint's own metadata, keyed by its code: not an input of the run
        try:
            return _from_json(read_regular(entry, _MAX_STORE_BYTES).decode("utf-8"), fingerprint)
        except (SourceError, OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            pass
        finally:
            unwatched(token)
    infos = tuple(info_of(rule) for rule in all_rules())
    if entry is not None:
        _store(entry, _to_json(infos, fingerprint))
    return infos


_MAX_STORE_BYTES = 16 * 1024 * 1024
_STALE_SECONDS = 24 * 3600
"""Another build's metadata unwritten for this long is dropped.  Not at once:
several installs (a pre-commit environment and a project's venv) may share
the folder, and each would keep rebuilding what the other removed."""


def _store(entry: Path, text: str) -> None:
    """Write the metadata atomically and drop what old builds left."""
    import time

    from torchlint.source.sourcefile import SourceError, write_atomically

    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(entry, text.encode("utf-8"), durable=False)
        now = time.time()
        for old in entry.parent.glob("rules-*.json"):
            if old != entry and now - old.stat().st_mtime > _STALE_SECONDS:
                old.unlink()
    except (OSError, SourceError):
        pass
