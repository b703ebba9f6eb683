"""API facts as data: torch's signatures and deprecations, and what library
wrappers do in a training step, read from ``torchlint/data/*.toml``.

Rules need to know where ``device`` sits in ``nn.Conv2d(...)`` or since which
release ``torch.amp.GradScaler`` exists; writing those facts into each rule
spreads them and lets them drift.  The files are validated when first read
(unknown keys, wrong types, bad versions and duplicate entries are errors that
name the file and the entry) into frozen dataclasses, and read once per
process.  Nothing here imports torch.
"""

from __future__ import annotations

import enum
import functools
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, NoReturn, Optional, Set, Tuple, TypeVar

from torchlint.model import Applicability
from torchlint.versions import TorchVersion

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10
    import tomli as tomllib

DATA_DIR = Path(__file__).resolve().parent / "data"
SIGNATURES_FILE = DATA_DIR / "signatures.toml"
DEPRECATIONS_FILE = DATA_DIR / "deprecations.toml"
WRAPPERS_FILE = DATA_DIR / "wrappers.toml"


class DataError(ValueError):
    """A data file that does not follow its schema; the message names the
    file and the entry."""


class CheckMethod(str, enum.Enum):
    """How the consistency test reads a signature from an installed torch."""

    SIGNATURE = "signature"  # inspect.signature
    OVERLOAD = "overload"  # the first typing overload of __init__ (RNN, LSTM, GRU)
    DOCSTRING = "docstring"  # the header line of a builtin's docstring
    NONE = "none"  # not comparable


class FixKind(str, enum.Enum):
    """What a fix for a deprecated symbol does."""

    RENAME = "rename"  # the replacement is a drop-in: rename the reference
    CUSTOM = "custom"  # the replacement takes different arguments
    NONE = "none"  # no automatic fix


@dataclass(frozen=True)
class Parameter:
    """One named parameter of a callable.

    ``added`` is the torch release the parameter appeared in (None: as old as
    the callable, or older than anything a rule targets).
    ``keyword_only_since`` is the release from which a parameter listed among
    the positional ones can only be passed by keyword.
    """

    name: str
    positional: bool
    added: Optional[TorchVersion] = None
    keyword_only_since: Optional[TorchVersion] = None

    def exists_in(self, version: TorchVersion) -> bool:
        """Whether the parameter exists in ``version``."""
        return self.added is None or not version < self.added

    def positional_in(self, version: TorchVersion) -> bool:
        """Whether ``version`` accepts the parameter by position."""
        if not (self.positional and self.exists_in(version)):
            return False
        return self.keyword_only_since is None or version < self.keyword_only_since


@dataclass(frozen=True)
class Signature:
    """The parameters of one torch callable (``self`` left out of methods)."""

    name: str
    parameters: Tuple[Parameter, ...]
    var_positional: Optional[str]
    var_keyword: Optional[str]
    since: Optional[TorchVersion]
    check: CheckMethod
    reference: str
    note: str

    def parameter(self, name: str) -> Optional[Parameter]:
        """The parameter called ``name``, if the callable has one."""
        for parameter in self.parameters:
            if parameter.name == name:
                return parameter
        return None

    def positional_names(self, version: TorchVersion) -> Tuple[str, ...]:
        """The parameters ``version`` fills by position, in order."""
        return tuple(p.name for p in self.parameters if p.positional_in(version))

    def keyword_names(self, version: TorchVersion) -> Tuple[str, ...]:
        """Every parameter ``version`` accepts by keyword."""
        return tuple(p.name for p in self.parameters if p.exists_in(version))

    def versions_from(self, oldest: TorchVersion) -> Tuple[TorchVersion, ...]:
        """``oldest`` and every later release in which the signature changed:
        the versions whose signatures together cover ``oldest`` and newer."""
        changes = {oldest}
        for parameter in self.parameters:
            for version in (parameter.added, parameter.keyword_only_since):
                if version is not None and oldest < version:
                    changes.add(version)
        return tuple(sorted(changes))


@dataclass(frozen=True)
class Deprecation:
    """A deprecated or removed torch symbol and what replaces it."""

    symbol: str
    deprecated_in: Optional[TorchVersion]
    removed_in: Optional[TorchVersion]
    replacement: Optional[str]
    fix: FixKind
    safety: Applicability
    documentation_only: bool
    reference: str
    note: str

    def applies_to(self, version: TorchVersion) -> bool:
        """Whether code targeting ``version`` should hear about the symbol."""
        return self.deprecated_in is None or not version < self.deprecated_in

    def removed(self, version: TorchVersion) -> bool:
        """Whether the symbol no longer works in ``version``."""
        return self.removed_in is not None and not version < self.removed_in


# -- validation ----------------------------------------------------------------

_T = TypeVar("_T")


class _Entry:
    """One table of a data file, read key by key; complains with the file
    and entry names."""

    def __init__(self, path: Path, label: str, table: Any) -> None:
        self.path = path
        self.label = label
        if not isinstance(table, dict):
            self.fail(f"must be a table, not {type(table).__name__}")
        self.table: Dict[str, Any] = table
        self.read: Set[str] = set()

    def fail(self, problem: str) -> NoReturn:
        raise DataError(f"{self.path.name}: {self.label}: {problem}")

    def get(self, key: str, kind: Callable[[Any], bool], what: str, default: Any = None,
            required: bool = False) -> Any:
        self.read.add(key)
        if key not in self.table:
            if required:
                self.fail(f"missing `{key}`")
            return default
        value = self.table[key]
        if not kind(value):
            self.fail(f"`{key}` must be {what}, not {value!r}")
        return value

    def text(self, key: str, required: bool = False, default: str = "") -> str:
        value: str = self.get(key, lambda v: isinstance(v, str), "a string", default, required)
        return value

    def names(self, key: str) -> List[str]:
        value: List[str] = self.get(
            key, lambda v: isinstance(v, list) and all(isinstance(i, str) and i for i in v),
            "a list of names", [],
        )
        return value

    def version(self, key: str) -> Optional[TorchVersion]:
        text = self.get(key, lambda v: isinstance(v, str), "a version string like \"1.9\"")
        return None if text is None else self.parse_version(key, text)

    def parse_version(self, key: str, text: str) -> TorchVersion:
        pieces = text.split(".")
        if len(pieces) != 2 or not all(piece.isdigit() for piece in pieces):
            self.fail(f"`{key}` must be a version like \"1.9\", not {text!r}")
        return TorchVersion.parse(text)

    def versions(self, key: str) -> Dict[str, TorchVersion]:
        table = self.get(key, lambda v: isinstance(v, dict), "a table of versions", {})
        return {name: self.parse_version(f"{key}.{name}", text) if isinstance(text, str)
                else self.fail(f"`{key}.{name}` must be a version string, not {text!r}")
                for name, text in table.items()}

    def choice(self, key: str, kind: Callable[[str], _T], default: Optional[str] = None) -> _T:
        text = self.text(key, required=default is None, default=default or "")
        try:
            return kind(text)
        except ValueError:
            self.fail(f"`{key}` has an unknown value {text!r}")

    def flag(self, key: str) -> bool:
        value: bool = self.get(key, lambda v: isinstance(v, bool), "true or false", False)
        return value

    def finish(self) -> None:
        unknown = sorted(set(self.table) - self.read)
        if unknown:
            self.fail(f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}")


def _entries(path: Path, key: str) -> List[_Entry]:
    """The ``[[key]]`` tables of a file; any other top-level key is an error."""
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except OSError as error:
        raise DataError(f"{path.name}: cannot read: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise DataError(f"{path.name}: not valid TOML: {error}") from None
    extra = sorted(set(data) - {key})
    if extra:
        raise DataError(f"{path.name}: unknown top-level key {extra[0]!r} (expected [[{key}]] tables)")
    tables = data.get(key, [])
    if not isinstance(tables, list):
        raise DataError(f"{path.name}: `{key}` must be an array of tables ([[{key}]])")
    entries = []
    for number, table in enumerate(tables, 1):
        name = table.get("name", table.get("symbol")) if isinstance(table, dict) else None
        label = f"entry {number}" + (f" ({name})" if isinstance(name, str) else "")
        entries.append(_Entry(path, label, table))
    return entries


def _signature(entry: _Entry) -> Signature:
    name = entry.text("name", required=True)
    positional = entry.names("parameters")
    keyword_only = entry.names("keyword_only")
    every = positional + keyword_only
    duplicates = sorted({p for p in every if every.count(p) > 1})
    if duplicates:
        entry.fail(f"parameter {duplicates[0]!r} is listed twice")
    added = entry.versions("added")
    keyword_only_since = entry.versions("keyword_only_since")
    for key, table in (("added", added), ("keyword_only_since", keyword_only_since)):
        for parameter in table:
            if parameter not in every:
                entry.fail(f"`{key}` names {parameter!r}, which is not a parameter")
    for parameter in keyword_only_since:
        if parameter not in positional:
            entry.fail(f"`keyword_only_since` names {parameter!r}, which is not positional")
    var_positional = entry.text("var_positional") or None
    var_keyword = entry.text("var_keyword") or None
    signature = Signature(
        name=name,
        parameters=tuple(
            Parameter(p, p in positional, added.get(p), keyword_only_since.get(p)) for p in every
        ),
        var_positional=var_positional,
        var_keyword=var_keyword,
        since=entry.version("since"),
        check=entry.choice("check", CheckMethod, default=CheckMethod.SIGNATURE.value),
        reference=entry.text("reference", required=True),
        note=entry.text("note"),
    )
    entry.finish()
    return signature


def _wrapper(entry: _Entry) -> Wrapper:
    parameters = entry.names("parameters")
    if len(set(parameters)) != len(parameters):
        entry.fail("a parameter is listed twice")
    runs: List[Effect] = []
    for text in entry.names("runs"):
        try:
            runs.append(Effect(text))
        except ValueError:
            entry.fail(f"`runs` has an unknown effect {text!r}")
    yields = entry.text("yields") or None
    returns = entry.text("returns") or None
    for key, value in (("yields", yields), ("returns", returns)):
        if value is not None and value not in parameters and not (key == "yields" and value == EVERY_POSITIONAL):
            entry.fail(f"`{key}` names {value!r}, which is not a parameter")
    name = entry.text("name", required=True)
    if "." not in name:
        entry.fail("`name` must be dotted (`builtins.zip`, `tqdm.std.tqdm`, `<class>.<method>`)")
    wrapper = Wrapper(name, tuple(entry.names("aliases")), tuple(parameters), yields, returns, frozenset(runs),
                      entry.text("note", required=True))
    entry.finish()
    return wrapper


def _deprecation(entry: _Entry) -> Deprecation:
    deprecation = Deprecation(
        symbol=entry.text("symbol", required=True),
        deprecated_in=entry.version("deprecated_in"),
        removed_in=entry.version("removed_in"),
        replacement=entry.text("replacement") or None,
        fix=entry.choice("fix", FixKind),
        safety=entry.choice("safety", Applicability),
        documentation_only=entry.flag("documentation_only"),
        reference=entry.text("reference", required=True),
        note=entry.text("note", required=True),
    )
    if deprecation.deprecated_in is None and deprecation.removed_in is None:
        entry.fail("needs `deprecated_in` or `removed_in`")
    if (deprecation.deprecated_in is not None and deprecation.removed_in is not None
            and deprecation.removed_in < deprecation.deprecated_in):
        entry.fail("`removed_in` is older than `deprecated_in`")
    if deprecation.fix is FixKind.RENAME and deprecation.replacement is None:
        entry.fail("a `rename` fix needs a `replacement`")
    entry.finish()
    return deprecation


class Effect(str, enum.Enum):
    """What a call does in a training step."""

    BACKWARD = "backward"
    STEP = "step"
    ZERO_GRAD = "zero-grad"


EVERY_POSITIONAL = "*"
"""``yields = "*"``: every positional argument (``zip``)."""


@dataclass(frozen=True)
class Wrapper:
    """What calling a library callable does, as the training facts ask it
    (``torchlint/data/wrappers.toml``)."""

    name: str
    aliases: Tuple[str, ...]
    parameters: Tuple[str, ...]
    yields: Optional[str]
    """The parameter whose items a loop over the call draws (``*``: every positional one)."""
    returns: Optional[str]
    """The parameter the call's value stands for."""
    runs: FrozenSet[Effect]
    note: str

    def slot(self, position: Optional[int], keyword: Optional[str]) -> Optional[str]:
        """The parameter an argument at ``position`` (or passed as ``keyword``) fills."""
        if keyword is not None:
            return keyword if keyword in self.parameters else None
        if position is not None and self.yields == EVERY_POSITIONAL:
            return EVERY_POSITIONAL
        return self.parameters[position] if position is not None and position < len(self.parameters) else None


def _unique(path: Path, items: List[_T], key: Callable[[_T], str]) -> Dict[str, _T]:
    table: Dict[str, _T] = {}
    for item in items:
        name = key(item)
        if name in table:
            raise DataError(f"{path.name}: {name}: listed twice")
        table[name] = item
    return table


def read_signatures(path: Path) -> Mapping[str, Signature]:
    """Every signature in one file, by qualified name; raises DataError."""
    return _unique(path, [_signature(e) for e in _entries(path, "signature")], lambda s: s.name)


def read_deprecations(path: Path) -> Mapping[str, Deprecation]:
    """Every deprecation in one file, by symbol; raises DataError."""
    return _unique(path, [_deprecation(e) for e in _entries(path, "deprecation")], lambda d: d.symbol)


def read_wrappers(path: Path) -> Mapping[str, Wrapper]:
    """Every wrapper in one file, by each of its names; raises DataError."""
    table: Dict[str, Wrapper] = {}
    for wrapper in (_wrapper(e) for e in _entries(path, "callable")):
        for name in (wrapper.name, *wrapper.aliases):
            if name in table:
                raise DataError(f"{path.name}: {name}: listed twice")
            table[name] = wrapper
    return table


@functools.lru_cache(maxsize=None)
def wrappers() -> Mapping[str, Wrapper]:
    """The shipped wrapper table, by every name of each callable (read once)."""
    return read_wrappers(WRAPPERS_FILE)


@functools.lru_cache(maxsize=None)
def signatures() -> Mapping[str, Signature]:
    """The shipped signatures, by qualified name (read once)."""
    return read_signatures(SIGNATURES_FILE)


@functools.lru_cache(maxsize=None)
def deprecations() -> Mapping[str, Deprecation]:
    """The shipped deprecation table, by symbol (read once)."""
    return read_deprecations(DEPRECATIONS_FILE)


def signature(name: str) -> Signature:
    """The shipped signature of ``name``; a KeyError names a missing entry."""
    found = signatures().get(name)
    if found is None:
        raise KeyError(f"{SIGNATURES_FILE.name} has no signature for {name!r}")
    return found
