"""API facts as data: torch signatures and deprecations, the framework
arguments (Lightning, Transformers, Accelerate) rules read, and what library
wrappers do in a training step, from ``torchlint/data/*.toml``.

Rules need to know where ``device`` sits in ``nn.Conv2d(...)`` or since which
release ``torch.amp.GradScaler`` exists; writing those facts into each rule
spreads them and lets them drift.  The files are validated when first read
(unknown keys, wrong types, bad versions and duplicate entries are errors that
name the file and the entry) into frozen dataclasses, and read once per
process.  Nothing here imports torch.
"""

from __future__ import annotations

import ast
import enum
import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, NoReturn, Optional, Set, Tuple, TypeVar

from torchlint.model import Applicability
from torchlint.data.versions import TorchVersion
from torchlint.data.versions import Release, ReleaseRange

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10
    import tomli as tomllib

DATA_DIR = Path(__file__).resolve().parent
SIGNATURES_FILE = DATA_DIR / "signatures.toml"
DEPRECATIONS_FILE = DATA_DIR / "deprecations.toml"
FRAMEWORKS_FILE = DATA_DIR / "frameworks.toml"
WRAPPERS_FILE = DATA_DIR / "wrappers.toml"
LOADERS_FILE = DATA_DIR / "loaders.toml"
AUTOGRAD_FILE = DATA_DIR / "autograd.toml"


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
    return _sections(path, (key,))[key]


def _sections(path: Path, keys: Tuple[str, ...]) -> Dict[str, List[_Entry]]:
    """The ``[[key]]`` tables of a file for each of ``keys``; any other
    top-level key is an error."""
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except OSError as error:
        raise DataError(f"{path.name}: cannot read: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise DataError(f"{path.name}: not valid TOML: {error}") from None
    extra = sorted(set(data) - set(keys))
    if extra:
        expected = ", ".join(f"[[{key}]]" for key in keys)
        raise DataError(f"{path.name}: unknown top-level key {extra[0]!r} (expected {expected} tables)")
    found: Dict[str, List[_Entry]] = {}
    for key in keys:
        tables = data.get(key, [])
        if not isinstance(tables, list):
            raise DataError(f"{path.name}: `{key}` must be an array of tables ([[{key}]])")
        entries = []
        for number, table in enumerate(tables, 1):
            name = table.get("name", table.get("symbol")) if isinstance(table, dict) else None
            label = f"entry {number}" + (f" ({name})" if isinstance(name, str) else "")
            if len(keys) > 1:
                label = f"[[{key}]] {label}"
            entries.append(_Entry(path, label, table))
        found[key] = entries
    return found


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
    enters = entry.text("enters") or None
    if enters not in (None, "self"):
        entry.fail(f"`enters` is {enters!r}; the only value is \"self\"")
    name = entry.text("name", required=True)
    if "." not in name:
        entry.fail("`name` must be dotted (`builtins.zip`, `tqdm.std.tqdm`, `<class>.<method>`)")
    paired = entry.flag("paired")
    if paired and yields is None:
        entry.fail("`paired` needs `yields`")
    star_from = tuple(entry.names("star-from"))
    for module in star_from:
        if f"{module}.{name.rsplit('.', 1)[-1]}" not in (name, *entry.names("aliases")):
            entry.fail(f"`star-from` names {module!r}, but `{module}.{name.rsplit('.', 1)[-1]}` is not a listed name")
    wrapper = Wrapper(name, tuple(entry.names("aliases")), tuple(parameters), yields, returns, frozenset(runs),
                      entry.text("note", required=True), enters_itself=enters == "self", paired=paired,
                      star_from=star_from)
    entry.finish()
    return wrapper


@dataclass(frozen=True)
class LoaderClass:
    """A library's ``torch.utils.data.DataLoader`` subclass (``torchlint/data/loaders.toml``)."""

    name: str
    aliases: Tuple[str, ...]
    parameters: Tuple[str, ...]
    """Its own parameters in order, before the ``**kwargs`` it passes on."""
    forwards: bool
    """Every other keyword goes to torch's ``DataLoader`` unchanged."""
    note: str


def _loader(entry: _Entry) -> LoaderClass:
    parameters = entry.names("parameters")
    if len(set(parameters)) != len(parameters):
        entry.fail("a parameter is listed twice")
    name = entry.text("name", required=True)
    if "." not in name:
        entry.fail("`name` must be dotted")
    loader = LoaderClass(name, tuple(entry.names("aliases")), tuple(parameters), entry.flag("forwards"),
                         entry.text("note", required=True))
    entry.finish()
    return loader


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
    enters_itself: bool = False
    """``with call as x`` binds x to the call's value (``enters = "self"``)."""
    paired: bool = False
    """A loop over the call draws tuples that hold the items beside other
    values (``enumerate``, ``zip``: ``paired = true``), not the items themselves."""
    star_from: Tuple[str, ...] = ()
    """Modules whose star import binds the callable under its last name
    (``from tqdm import *`` binds ``tqdm``: the name is in the module's
    ``__all__``)."""

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


def read_loaders(path: Path) -> Mapping[str, LoaderClass]:
    """Every loader class in one file, by each of its names; raises DataError."""
    table: Dict[str, LoaderClass] = {}
    for loader in (_loader(e) for e in _entries(path, "loader")):
        for name in (loader.name, *loader.aliases):
            if name in table:
                raise DataError(f"{path.name}: {name}: listed twice")
            table[name] = loader
    return table


@dataclass(frozen=True)
class GradientLibrary:
    """A library whose calls differentiate through the model they are given
    (``torchlint/data/autograd.toml``)."""

    prefix: str
    note: str


def _gradient_library(entry: _Entry) -> GradientLibrary:
    prefix = entry.text("prefix", required=True)
    if not all(part.isidentifier() for part in prefix.split(".")):
        entry.fail(f"`prefix` must be a dotted module name, not {prefix!r}")
    library = GradientLibrary(prefix, entry.text("note", required=True))
    entry.finish()
    return library


_AUTOGRAD_SECTIONS = ("library", "grad_mode", "grad_free", "compiler", "weights", "trainer")


def read_gradient_libraries(path: Path) -> Tuple[GradientLibrary, ...]:
    """Every library in one file; raises DataError."""
    return read_autograd(path).libraries


class GradUse(str, enum.Enum):
    """What a library callable does to autograd for the code it runs."""

    DISABLED = "disabled"  # the code inside runs with gradients off
    ENABLED = "enabled"  # the code inside runs with gradients on


@dataclass(frozen=True)
class GradModeCallable:
    """A library context manager or decorator that sets autograd's mode for
    the code it runs, as torch's ``no_grad`` does (MONAI's ``eval_mode``):
    the one grad-mode fact reads it beside torch's own."""

    name: str
    aliases: Tuple[str, ...]
    mode: GradUse
    note: str


@dataclass(frozen=True)
class CallableKind:
    """Library callables that do one thing a rule cares about (compile a
    function, give a model trained weights, train a model): a call's
    qualified name equal to ``prefix`` or under it, whose last part is
    ``method`` when one is given, and that passes a literal ``True`` for
    ``when_true`` when one is given."""

    prefix: str
    method: Optional[str]
    when_true: Optional[str]
    note: str

    def matches(self, qualified: str) -> bool:
        """Whether a call of ``qualified`` is one (``when_true`` is the caller's to check)."""
        if self.method is not None:
            owner, _, last = qualified.rpartition(".")
            return last == self.method and (owner == self.prefix or owner.startswith(self.prefix + "."))
        return qualified == self.prefix or qualified.startswith(self.prefix + ".")


@dataclass(frozen=True)
class AutogradData:
    """Everything ``autograd.toml`` records (see its header)."""

    libraries: Tuple[GradientLibrary, ...] = ()
    grad_modes: Tuple[GradModeCallable, ...] = ()
    grad_free: Tuple[GradientLibrary, ...] = ()
    """Libraries whose decorators and context managers leave autograd's mode
    alone (``[[grad_free]]``: they do not touch torch's grad mode)."""
    compilers: Tuple[CallableKind, ...] = ()
    weights: Tuple[CallableKind, ...] = ()
    trainers: Tuple[CallableKind, ...] = ()


def _dotted(entry: _Entry, key: str, text: str) -> str:
    if not text or not all(part.isidentifier() for part in text.split(".")):
        entry.fail(f"`{key}` must be a dotted name, not {text!r}")
    return text


def _grad_mode_callable(entry: _Entry) -> GradModeCallable:
    name = _dotted(entry, "name", entry.text("name", required=True))
    if "." not in name:
        entry.fail("`name` must be a module's callable (`monai.networks.utils.eval_mode`)")
    aliases = tuple(_dotted(entry, "aliases", alias) for alias in entry.names("aliases"))
    found = GradModeCallable(name, aliases, entry.choice("mode", GradUse), entry.text("note", required=True))
    entry.finish()
    return found


def _callable_kind(entry: _Entry) -> CallableKind:
    prefix = _dotted(entry, "prefix", entry.text("prefix", required=True))
    method = entry.text("method") or None
    if method is not None and not method.isidentifier():
        entry.fail(f"`method` must be a name, not {method!r}")
    when_true = entry.text("when_true") or None
    if when_true is not None and not when_true.isidentifier():
        entry.fail(f"`when_true` must be a keyword's name, not {when_true!r}")
    found = CallableKind(prefix, method, when_true, entry.text("note", required=True))
    entry.finish()
    return found


def _kind_label(pair: Tuple[str, CallableKind]) -> str:
    key, kind = pair
    return f"[[{key}]] {kind.prefix}" + (f" {kind.method}" if kind.method else "")


def read_autograd(path: Path) -> AutogradData:
    """The autograd facts of one file; raises DataError (unknown keys, names
    that are not dotted identifiers, an unknown mode, an entry listed twice)."""
    sections = _sections(path, _AUTOGRAD_SECTIONS)
    libraries = tuple(_gradient_library(e) for e in sections["library"])
    prefixes = [library.prefix for library in libraries]
    if len(set(prefixes)) != len(prefixes):
        raise DataError(f"{path.name}: a prefix is listed twice")
    grad_modes = tuple(_grad_mode_callable(e) for e in sections["grad_mode"])
    grad_free = tuple(_gradient_library(e) for e in sections["grad_free"])
    _unique(path, list(grad_free), lambda library: f"[[grad_free]] {library.prefix}")
    _unique(path, [(found, name) for found in grad_modes for name in (found.name, *found.aliases)],
            lambda pair: f"[[grad_mode]] {pair[1]}")
    kinds: Dict[str, Tuple[CallableKind, ...]] = {}
    for key in ("compiler", "weights", "trainer"):
        kinds[key] = tuple(_callable_kind(e) for e in sections[key])
        _unique(path, [(key, kind) for kind in kinds[key]], _kind_label)
    return AutogradData(libraries, grad_modes, grad_free, kinds["compiler"], kinds["weights"], kinds["trainer"])


@functools.lru_cache(maxsize=None)
def autograd() -> AutogradData:
    """The shipped autograd facts (read once)."""
    return read_autograd(AUTOGRAD_FILE)


@functools.lru_cache(maxsize=None)
def library_grad_modes() -> Mapping[str, GradUse]:
    """The library context managers and decorators that set the grad mode,
    by every name of each (:class:`GradModeCallable`)."""
    return {name: found.mode for found in autograd().grad_modes for name in (found.name, *found.aliases)}


def _kind_of(kinds: Tuple[CallableKind, ...], qualified: Optional[str],
             passes_true: Callable[[str], bool]) -> bool:
    return qualified is not None and any(
        kind.matches(qualified) and (kind.when_true is None or passes_true(kind.when_true)) for kind in kinds)


def leaves_grad_mode(qualified: Optional[str]) -> bool:
    """``qualified`` is in, or under, a ``[[grad_free]]`` module: used as a
    decorator or a context manager, it leaves autograd's mode as it is
    (``tqdm.trange``, ``click.command``)."""
    if qualified is None:
        return False
    prefixes = {library.prefix for library in autograd().grad_free}
    parts = qualified.split(".")
    return any(".".join(parts[:end]) in prefixes for end in range(1, len(parts) + 1))


def compiles(qualified: Optional[str]) -> bool:
    """``qualified`` compiles, scripts, traces or exports the function it is
    given (``torch.jit.script``, ``torch.compile``): ``[[compiler]]``."""
    return _kind_of(autograd().compilers, qualified, lambda keyword: True)


def loads_weights(qualified: Optional[str], passes_true: Callable[[str], bool]) -> bool:
    """A call of ``qualified`` gives back trained weights or a trained model
    (``torch.jit.load``, a Transformers class's ``from_pretrained``):
    ``[[weights]]``; ``passes_true(keyword)`` says whether the call passes a
    literal ``True`` for a keyword an entry needs (``pretrained=True``)."""
    return _kind_of(autograd().weights, qualified, passes_true)


def trains(qualified: Optional[str]) -> bool:
    """A call of ``qualified`` trains the model it is given (Lightning's
    ``Trainer.fit``): ``[[trainer]]``, the class's name and the method."""
    return _kind_of(autograd().trainers, qualified, lambda keyword: True)


@functools.lru_cache(maxsize=None)
def trainer_methods() -> FrozenSet[str]:
    """The methods ``[[trainer]]`` lists (``fit``, ``train``): a call of any
    other method is no listed trainer's, whatever built its receiver."""
    return frozenset(kind.method for kind in autograd().trainers if kind.method is not None)


@functools.lru_cache(maxsize=None)
def gradient_prefixes() -> FrozenSet[str]:
    """The shipped modules whose calls take gradients (read once)."""
    return frozenset(library.prefix for library in autograd().libraries)


def takes_gradients(qualified: str) -> bool:
    """A call of ``qualified`` differentiates through what it is given: it is
    in, or under, a module of :func:`gradient_prefixes`."""
    prefixes = gradient_prefixes()
    parts = qualified.split(".")
    return any(".".join(parts[:end]) in prefixes for end in range(1, len(parts) + 1))


DATALOADER = "torch.utils.data.DataLoader"


@functools.lru_cache(maxsize=None)
def loader_classes() -> Mapping[str, LoaderClass]:
    """The shipped table of libraries' DataLoader subclasses, by every name (read once)."""
    return read_loaders(LOADERS_FILE)


@functools.lru_cache(maxsize=None)
def loader_words() -> Tuple[str, ...]:
    """The class names a file must mention to build a DataLoader whose
    keywords the DataLoader rules read (torch's, or a forwarding subclass)."""
    names = {DATALOADER.rsplit(".", 1)[-1]}
    names.update(name.rsplit(".", 1)[-1] for name, loader in loader_classes().items() if loader.forwards)
    return tuple(sorted(names))


@functools.lru_cache(maxsize=None)
def loader_signature(name: str) -> Optional[Signature]:
    """The signature to bind a loader construction with: torch's own
    ``DataLoader``, or a subclass that passes its other keywords on to it
    (its own parameters, then torch's by keyword); None for anything else."""
    base = signature(DATALOADER)
    if name == DATALOADER:
        return base
    loader = loader_classes().get(name)
    if loader is None or not loader.forwards:
        return None
    own = tuple(Parameter(p, True) for p in loader.parameters)
    passed = tuple(Parameter(p.name, False, p.added) for p in base.parameters if p.name not in loader.parameters)
    return Signature(loader.name, own + passed, None, "kwargs", None, base.check, base.reference, loader.note)


@functools.lru_cache(maxsize=None)
def wrappers() -> Mapping[str, Wrapper]:
    """The shipped wrapper table, by every name of each callable (read once)."""
    return read_wrappers(WRAPPERS_FILE)


@functools.lru_cache(maxsize=None)
def star_exports() -> Mapping[Tuple[str, str], str]:
    """(module, name) -> the listed callable a ``from module import *`` binds
    to ``name`` (the wrapper table's ``star-from``)."""
    found: Dict[Tuple[str, str], str] = {}
    for wrapper in wrappers().values():
        last = wrapper.name.rsplit(".", 1)[-1]
        for module in wrapper.star_from:
            found[(module, last)] = f"{module}.{last}"
    return found


VARIABLE_WRAPPERS: FrozenSet[str] = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})
"""``Variable(t)``: since 0.4 a tensor sharing ``t``'s data, on ``t``'s device."""


def listed_name(name: str) -> str:
    """The name the wrapper or loader table lists ``name`` under (``tqdm.auto.tqdm``
    -> ``tqdm.std.tqdm``), else ``name`` itself: two imports of aliases of one
    entry bind the same callable."""
    wrapper = wrappers().get(name)
    if wrapper is not None:
        return wrapper.name
    loader = loader_classes().get(name)
    return loader.name if loader is not None else name


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


# -- framework arguments ------------------------------------------------------------------


class Framework(str, enum.Enum):
    """A training framework whose arguments rules read."""

    LIGHTNING = "lightning"
    TRANSFORMERS = "transformers"
    ACCELERATE = "accelerate"

    @property
    def option(self) -> str:
        """The setting that pins its release (``lightning-version``)."""
        return f"{self.value}-version"

    @property
    def display_name(self) -> str:
        return {"lightning": "Lightning", "transformers": "Transformers", "accelerate": "Accelerate"}[self.value]


class Missing(enum.Enum):
    """No such value (an argument with no default in a release)."""

    MISSING = "missing"


MISSING = Missing.MISSING
Literal = Any
"""A Python literal as ``ast.literal_eval`` gives it: None, bool, int, float, str, tuples and lists."""


def literal_key(value: Literal) -> Tuple[str, str]:
    """A key that tells ``True`` from ``1`` and ``32`` from ``"32"``."""
    return type(value).__name__, repr(value)


@dataclass(frozen=True)
class FrameworkInfo:
    """One framework: how a project names it and which release is assumed."""

    framework: Framework
    distributions: Tuple[str, ...]
    """PyPI names, PEP 503 normalised."""
    newest: Release
    methods: Tuple[str, ...]
    reference: str


@dataclass(frozen=True)
class FrameworkClass:
    """A framework class rules recognise, by the names a file may import it as."""

    framework: Framework
    role: str
    names: FrozenSet[str]
    releases: ReleaseRange
    reference: str
    note: str
    library: str = ""
    """The package that defines a subclass of the role's class outside the framework
    (``trl``), whose releases torchlint does not track; empty for the framework's own."""
    changed_defaults: FrozenSet[str] = frozenset()
    """Arguments of the role whose default the subclass changes in some release: a
    call that leaves one out has a value rules cannot know."""


@dataclass(frozen=True)
class Constructor:
    """A class method that builds a framework class from values found elsewhere
    (Lightning's ``Trainer.from_argparse_args(args, **overrides)``)."""

    framework: Framework
    owner: str
    name: str
    values_from: str
    """Where the arguments the call does not write come from (``command-line``)."""
    releases: ReleaseRange
    reference: str
    note: str


@dataclass(frozen=True)
class FrameworkArgument:
    """One argument of a framework class (or method)."""

    framework: Framework
    owner: str
    name: str
    releases: ReleaseRange
    """From the release that added it (or the oldest one known to have it) to the one that removed it."""
    since_known: bool
    """``releases.since`` is the release that added it, not merely the oldest one checked."""
    deprecated: Optional[Release]
    defaults: Tuple[Tuple[Release, Literal], ...]
    reference: str
    note: str

    def exists_in(self, release: Release) -> bool:
        """Whether ``release`` is known to accept the argument."""
        return self.releases.contains(release)

    def removed_in(self, release: Release) -> bool:
        """Whether ``release`` no longer has the argument."""
        return self.releases.until is not None and not release < self.releases.until

    def default_in(self, release: Release) -> Literal:
        """The default in ``release`` (``MISSING`` outside the argument's releases)."""
        if not self.exists_in(release):
            return MISSING
        found: Literal = MISSING
        for since, value in self.defaults:
            if not release < since:
                found = value
        return found


@dataclass(frozen=True)
class ArgumentValue:
    """What one literal value of an argument means in a range of releases."""

    framework: Framework
    owner: str
    argument: str
    value: Literal
    meaning: str
    releases: ReleaseRange
    preferred: bool
    reference: str

    @property
    def spelling(self) -> str:
        """The value as source text (``"16-mixed"`` with its quotes, ``16``)."""
        return '"' + self.value + '"' if isinstance(self.value, str) else repr(self.value)


@dataclass(frozen=True)
class Behaviour:
    """What a framework itself does in a range of releases."""

    framework: Framework
    name: str
    value: str
    releases: ReleaseRange
    reference: str
    note: str


@dataclass(frozen=True)
class Hook:
    """Methods of a framework class that the framework calls in a known grad mode."""

    framework: Framework
    owner: str
    names: FrozenSet[str]
    grad: str
    reference: str


@dataclass(frozen=True)
class FrameworkData:
    """Everything ``frameworks.toml`` holds, with the questions rules ask."""

    frameworks: Mapping[Framework, FrameworkInfo]
    classes: Tuple[FrameworkClass, ...]
    arguments: Mapping[Tuple[Framework, str, str], FrameworkArgument]
    values: Tuple[ArgumentValue, ...]
    behaviours: Tuple[Behaviour, ...]
    hooks: Tuple[Hook, ...]
    constructors: Tuple[Constructor, ...] = ()

    def names(self, framework: Framework, role: str) -> FrozenSet[str]:
        """The qualified names of the framework's class ``role`` and of the known
        subclasses that take its arguments (KeyError if none)."""
        found = [entry.names for entry in self.classes if entry.framework is framework and entry.role == role]
        if not found:
            raise KeyError(f"{FRAMEWORKS_FILE.name} has no {framework.value} class {role!r}")
        return frozenset().union(*found)

    def constructor(self, framework: Framework, owner: str, name: str) -> Optional[Constructor]:
        """The class method ``name`` of class ``owner`` that builds it, if recorded."""
        for entry in self.constructors:
            if (entry.framework, entry.owner, entry.name) == (framework, owner, name):
                return entry
        return None

    def class_of(self, qualified: Optional[str]) -> Optional[FrameworkClass]:
        """The framework class a qualified name is, if any."""
        if qualified is None:
            return None
        for entry in self.classes:
            if qualified in entry.names:
                return entry
        return None

    def argument(self, framework: Framework, owner: str, name: str) -> FrameworkArgument:
        """One argument (KeyError names a missing entry)."""
        found = self.arguments.get((framework, owner, name))
        if found is None:
            raise KeyError(f"{FRAMEWORKS_FILE.name} has no {framework.value} argument {owner}.{name}")
        return found

    def meaning(self, framework: Framework, owner: str, argument: str, value: Literal,
                release: Release) -> Optional[str]:
        """What ``value`` of the argument means in ``release`` (None: nothing recorded)."""
        key = literal_key(value.lower() if isinstance(value, str) and framework is Framework.ACCELERATE else value)
        for entry in self.values:
            if (entry.framework is framework and entry.owner == owner and entry.argument == argument
                    and literal_key(entry.value) == key and entry.releases.contains(release)):
                return entry.meaning
        return None

    def spellings(self, framework: Framework, owner: str, argument: str, meaning: str) -> Tuple[ArgumentValue, ...]:
        """Every value recorded with ``meaning``, in any release."""
        return tuple(e for e in self.values if (e.framework, e.owner, e.argument, e.meaning)
                     == (framework, owner, argument, meaning))

    def preferred(self, framework: Framework, owner: str, argument: str, meaning: str,
                  release: Release) -> Optional[ArgumentValue]:
        """The spelling of ``meaning`` to suggest in ``release``, if any."""
        for entry in self.spellings(framework, owner, argument, meaning):
            if entry.preferred and entry.releases.contains(release):
                return entry
        return None

    def behaviour(self, framework: Framework, name: str, release: Release) -> Optional[str]:
        """What the framework does in ``release`` (None: not recorded there)."""
        for entry in self.behaviours:
            if entry.framework is framework and entry.name == name and entry.releases.contains(release):
                return entry.value
        return None

    def behaviour_entries(self, framework: Framework, name: str) -> Tuple[Behaviour, ...]:
        """Every recorded range of one behaviour, in release order."""
        return tuple(e for e in self.behaviours if e.framework is framework and e.name == name)

    def hook_names(self, framework: Framework, owner: str, grad: str) -> FrozenSet[str]:
        """The hooks of class ``owner`` the framework runs in grad mode ``grad``."""
        found: Set[str] = set()
        for entry in self.hooks:
            if entry.framework is framework and entry.owner == owner and entry.grad == grad:
                found |= entry.names
        return frozenset(found)


_DISTRIBUTION_SEPARATORS = re.compile(r"[-_.]+")


def normalized_distribution(name: str) -> str:
    """PEP 503: case-insensitive, runs of ``-``, ``_`` and ``.`` are one ``-``."""
    return _DISTRIBUTION_SEPARATORS.sub("-", name).lower()


_RELEASE = re.compile(r"\d+(?:\.\d+){0,2}")
_HOOK_GRADS = ("disabled",)


class _FrameworkEntry(_Entry):
    """An entry of ``frameworks.toml``: releases and literals on top of :class:`_Entry`."""

    def release(self, key: str) -> Optional[Release]:
        text = self.get(key, lambda v: isinstance(v, str), 'a release string like "1.6.4"')
        return None if text is None else self.parse_release(key, text)

    def parse_release(self, key: str, text: str) -> Release:
        if not _RELEASE.fullmatch(text):
            self.fail(f'`{key}` must be a release like "1.6.4", not {text!r}')
        return Release.parse(text)

    def releases(self, since_key: str = "since") -> ReleaseRange:
        since, until = self.release(since_key), self.release("until")
        if since is not None and until is not None and not since < until:
            self.fail(f"`until` ({until}) is not after `{since_key}` ({since})")
        return ReleaseRange(since, until)

    def literal(self, key: str, text: Any) -> Literal:
        if not isinstance(text, str):
            self.fail(f"`{key}` must be a Python literal written as a string, not {text!r}")
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError):
            self.fail(f"`{key}` is not a Python literal: {text!r}")

    def framework(self, known: Mapping[Framework, FrameworkInfo]) -> Framework:
        framework = self.choice("framework", Framework)
        if framework not in known:
            self.fail(f"framework {framework.value!r} has no [[framework]] entry")
        return framework

    def owner(self, known: Mapping[Framework, FrameworkInfo],
              roles: Set[Tuple[Framework, str]]) -> Tuple[Framework, str]:
        """The framework and the ``[[class]]`` role an entry belongs to."""
        framework = self.framework(known)
        owner = self.text("owner", required=True)
        if (framework, owner) not in roles:
            self.fail(f"`owner` {owner!r} is not a [[class]] role of {framework.value}")
        return framework, owner


def _framework_info(entry: _FrameworkEntry) -> FrameworkInfo:
    info = FrameworkInfo(
        framework=entry.choice("name", Framework),
        distributions=tuple(normalized_distribution(name) for name in entry.names("distributions")),
        newest=entry.parse_release("newest", entry.text("newest", required=True)),
        methods=tuple(entry.names("methods")),
        reference=entry.text("reference", required=True),
    )
    if not info.distributions:
        entry.fail("needs `distributions`")
    entry.finish()
    return info


def _framework_class(entry: _FrameworkEntry, known: Mapping[Framework, FrameworkInfo]) -> FrameworkClass:
    found = FrameworkClass(
        framework=entry.framework(known),
        role=entry.text("role", required=True),
        names=frozenset(entry.names("names")),
        releases=entry.releases(),
        reference=entry.text("reference", required=True),
        note=entry.text("note"),
        library=entry.text("library"),
        changed_defaults=frozenset(entry.names("changed_defaults")),
    )
    if not found.names:
        entry.fail("needs `names`")
    if found.changed_defaults and not found.library:
        entry.fail("`changed_defaults` belongs to a subclass from another `library`")
    entry.finish()
    return found


def _constructor(entry: _FrameworkEntry, known: Mapping[Framework, FrameworkInfo],
                 roles: Set[Tuple[Framework, str]]) -> Constructor:
    framework, owner = entry.owner(known, roles)
    found = Constructor(
        framework=framework, owner=owner, name=entry.text("name", required=True),
        values_from=entry.text("values_from", required=True), releases=entry.releases(),
        reference=entry.text("reference", required=True), note=entry.text("note"),
    )
    entry.finish()
    return found


def _owner(entry: _FrameworkEntry, framework: Framework, known: Mapping[Framework, FrameworkInfo],
           roles: Set[Tuple[Framework, str]]) -> str:
    owner = entry.text("owner", required=True)
    if (framework, owner) not in roles and owner not in known[framework].methods:
        entry.fail(f"`owner` {owner!r} is neither a [[class]] role nor a method of {framework.value}")
    return owner


def _framework_argument(entry: _FrameworkEntry, known: Mapping[Framework, FrameworkInfo],
                        roles: Set[Tuple[Framework, str]]) -> FrameworkArgument:
    framework = entry.framework(known)
    owner = _owner(entry, framework, known, roles)
    if "since" in entry.table and "known_from" in entry.table:
        entry.fail("give `since` (the release that added it) or `known_from`, not both")
    since_known = "known_from" not in entry.table
    releases = entry.releases("since" if since_known else "known_from")
    deprecated = entry.release("deprecated")
    if deprecated is not None and not releases.contains(deprecated):
        entry.fail(f"`deprecated` ({deprecated}) is outside the argument's releases ({releases})")
    table = entry.get("defaults", lambda v: isinstance(v, dict), "a table of release = literal", {})
    defaults = sorted(
        (entry.parse_release(f"defaults.{since}", since), entry.literal(f"defaults.{since}", text))
        for since, text in table.items()
    ) if all(isinstance(t, str) for t in table.values()) else entry.fail("`defaults` values must be strings")
    argument = FrameworkArgument(
        framework=framework, owner=owner, name=entry.text("name", required=True), releases=releases,
        since_known=since_known, deprecated=deprecated,
        defaults=tuple((release, value) for release, value in defaults),
        reference=entry.text("reference", required=True), note=entry.text("note"),
    )
    entry.finish()
    return argument


def _argument_value(entry: _FrameworkEntry, known: Mapping[Framework, FrameworkInfo],
                    arguments: Mapping[Tuple[Framework, str, str], FrameworkArgument]) -> ArgumentValue:
    framework = entry.framework(known)
    owner = entry.text("owner", required=True)
    argument = entry.text("argument", required=True)
    if (framework, owner, argument) not in arguments:
        entry.fail(f"no [[argument]] {owner}.{argument} for {framework.value}")
    value = ArgumentValue(
        framework=framework, owner=owner, argument=argument,
        value=entry.literal("value", entry.get("value", lambda v: True, "", required=True)),
        meaning=entry.text("meaning", required=True), releases=entry.releases(),
        preferred=entry.flag("preferred"), reference=entry.text("reference", required=True),
    )
    entry.finish()
    return value


def _behaviour(entry: _FrameworkEntry, known: Mapping[Framework, FrameworkInfo]) -> Behaviour:
    if "since" in entry.table and "known_from" in entry.table:
        entry.fail("give `since` or `known_from`, not both")
    found = Behaviour(
        framework=entry.framework(known), name=entry.text("name", required=True),
        value=entry.text("value", required=True),
        releases=entry.releases("known_from" if "known_from" in entry.table else "since"),
        reference=entry.text("reference", required=True), note=entry.text("note"),
    )
    entry.finish()
    return found


def _hook(entry: _FrameworkEntry, known: Mapping[Framework, FrameworkInfo],
          roles: Set[Tuple[Framework, str]]) -> Hook:
    framework, owner = entry.owner(known, roles)
    grad = entry.text("grad", required=True)
    if grad not in _HOOK_GRADS:
        entry.fail(f"`grad` must be one of {', '.join(_HOOK_GRADS)}, not {grad!r}")
    found = Hook(framework, owner, frozenset(entry.names("names")), grad, entry.text("reference", required=True))
    entry.finish()
    return found


def _overlapping(path: Path, what: str, items: Iterable[Tuple[Any, ReleaseRange]]) -> None:
    """Refuse two entries for the same thing whose releases overlap."""
    seen: Dict[Any, List[ReleaseRange]] = {}
    for key, releases in items:
        for other in seen.get(key, []):
            if _meet(releases, other):
                raise DataError(f"{path.name}: {what} {key}: two entries cover the same releases "
                                f"({other} and {releases})")
        seen.setdefault(key, []).append(releases)


def _meet(first: ReleaseRange, second: ReleaseRange) -> bool:
    low = max((r for r in (first.since, second.since) if r is not None), default=None)
    highs = [r for r in (first.until, second.until) if r is not None]
    return low is None or not highs or low < min(highs)


def read_frameworks(path: Path) -> FrameworkData:
    """The framework facts of one file; raises DataError."""
    sections = _sections(path, ("framework", "class", "argument", "value", "behaviour", "hook", "constructor"))
    entries = {key: [_FrameworkEntry(e.path, e.label, e.table) for e in found] for key, found in sections.items()}
    infos = [_framework_info(e) for e in entries["framework"]]
    known = _unique(path, infos, lambda info: info.framework.value)
    frameworks = {Framework(name): info for name, info in known.items()}
    classes = [_framework_class(e, frameworks) for e in entries["class"]]
    _unique(path, classes, lambda c: f"{c.framework.value} class {c.role}" + (f" from {c.library}" if c.library else ""))
    _unique(path, [(c, name) for c in classes for name in c.names], lambda pair: f"class name {pair[1]}")
    roles = {(c.framework, c.role) for c in classes}
    arguments = [_framework_argument(e, frameworks, roles) for e in entries["argument"]]
    by_key = _unique(path, arguments, lambda a: f"{a.framework.value} argument {a.owner}.{a.name}")
    table = {(a.framework, a.owner, a.name): a for a in by_key.values()}
    values = [_argument_value(e, frameworks, table) for e in entries["value"]]
    _overlapping(path, "value", (((v.framework.value, v.owner, v.argument, literal_key(v.value)), v.releases)
                                 for v in values))
    _overlapping(path, "preferred spelling", (((v.framework.value, v.owner, v.argument, v.meaning), v.releases)
                                              for v in values if v.preferred))
    behaviours = [_behaviour(e, frameworks) for e in entries["behaviour"]]
    _overlapping(path, "behaviour", (((b.framework.value, b.name), b.releases) for b in behaviours))
    hooks = [_hook(e, frameworks, roles) for e in entries["hook"]]
    for found in classes:
        for name in sorted(found.changed_defaults):
            if (found.framework, found.role, name) not in table:
                raise DataError(f"{path.name}: {found.framework.value} class {found.role} from {found.library}: "
                                f"`changed_defaults` names {name!r}, which is no [[argument]] of {found.role}")
    constructors = [_constructor(e, frameworks, roles) for e in entries["constructor"]]
    _unique(path, constructors, lambda c: f"{c.framework.value} constructor {c.owner}.{c.name}")
    return FrameworkData(frameworks, tuple(classes), table, tuple(values), tuple(behaviours), tuple(hooks),
                         tuple(constructors))


@functools.lru_cache(maxsize=None)
def frameworks() -> FrameworkData:
    """The shipped framework facts (read once)."""
    return read_frameworks(FRAMEWORKS_FILE)
