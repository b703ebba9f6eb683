"""``[tool.torchlint]`` settings: discovery, validation, rule selection.

Like Ruff, the closest configuration file above a linted file wins, with no
merging; command-line overrides apply on top of whichever file was found.
"""

from __future__ import annotations

import errno
import fnmatch
import json
import os
import re
import stat
import sys
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from torchlint.ruleapi.meta import OptionValue, RuleInfo
from torchlint.ruleapi.catalog import rule_infos
from torchlint.source.sourcefile import ceiling_directories
from torchlint.ruleapi.registry import expand_selector, info_by_code_or_name, rule_class, specificity, suggest
from torchlint.data.versions import (
    CURRENT_TORCH, DEFAULT_TARGET, FrameworkReleases, PythonVersion, Release, TorchVersion, lowest_python,
)

if TYPE_CHECKING:
    from torchlint.analysis.asks import Query
    from torchlint.lint.engine import LintConfig
    from torchlint.ruleapi.rule import RuleClass

CONFIG_FILENAMES = (".torchlint.toml", "torchlint.toml", "pyproject.toml")
MAX_CONFIG_BYTES = 1024 * 1024
"""Configuration and requirements files larger than this are not read."""

DEFAULT_EXCLUDES: Tuple[str, ...] = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints",
    ".mypy_cache", ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype",
    ".ruff_cache", ".svn", ".tox", ".venv", ".vscode", ".torchlint_cache",
    "__pycache__", "__pypackages__", "_build", "buck-out", "build", "dist",
    "node_modules", "site-packages", "venv",
)

_TOP_LEVEL_KEYS = (
    "extend", "select", "extend-select", "ignore", "per-file-ignores", "exclude",
    "extend-exclude", "torch-version", "respect-gitignore", "target-version",
    "lightning-version", "transformers-version", "accelerate-version",
    "fixable", "extend-fixable", "unfixable", "extend-safe-fixes", "extend-unsafe-fixes", "verify",
)
"""Every key a configuration table may hold besides per-rule tables."""
FRAMEWORK_OPTIONS: Tuple[Tuple[str, str], ...] = (
    ("lightning", "lightning-version"), ("transformers", "transformers-version"), ("accelerate", "accelerate-version"),
)
"""Each framework whose arguments rules read, and the setting that pins its release."""
_SELECTOR_LISTS = ("select", "extend-select", "ignore", "fixable", "extend-fixable", "unfixable",
                   "extend-safe-fixes", "extend-unsafe-fixes")
_MAX_EXTEND_DEPTH = 16


class ConfigError(Exception):
    """A configuration problem, reported with exit code 2."""


class UnreadableConfig(ConfigError):
    """A configuration file that exists but cannot be read (permissions, I/O).

    Fatal for ``--config``; found by the search, the file is skipped with a
    diagnostic instead, as if it were absent.
    """

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: cannot read: {reason}")
        self.reason = reason


@dataclass(frozen=True)
class Settings:
    """The effective settings for the files under one configuration."""

    select: Optional[Tuple[str, ...]] = None
    extend_select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    exclude: Tuple[str, ...] = DEFAULT_EXCLUDES
    extend_exclude: Tuple[str, ...] = ()
    torch_version: Optional[str] = None
    respect_gitignore: bool = True
    target_version: Optional[str] = None
    rule_options: Mapping[str, Mapping[str, OptionValue]] = field(default_factory=dict)
    root: Path = field(default_factory=Path.cwd)
    config_file: Optional[Path] = None
    sbatch_args: Tuple[str, ...] = ()
    """``[tool.torchlint.verify] sbatch-args``: directives for `verify --slurm`."""
    framework_versions: Tuple[Tuple[str, str], ...] = ()
    """``lightning-version`` and the like, by framework name (``("lightning", "1.9")``)."""
    fixable: Optional[Tuple[str, ...]] = None
    """Rules whose fixes may be applied (None: all), as in Ruff's ``lint.fixable``."""
    extend_fixable: Tuple[str, ...] = ()
    unfixable: Tuple[str, ...] = ()
    """Rules whose findings are kept but never fixed (``--fix``, the fix hook, the editor)."""
    extend_safe_fixes: Tuple[str, ...] = ()
    """Rules whose unsafe fixes are applied as safe ones."""
    extend_unsafe_fixes: Tuple[str, ...] = ()
    """Rules whose safe fixes are applied only with ``--unsafe-fixes``."""
    origins: Mapping[str, str] = field(default_factory=dict, compare=False)
    """Where each setting that is not a default came from (a file, or the
    command line), for ``--show-settings``."""

    def __post_init__(self) -> None:
        for key, selectors in (("select", self.select or ()), ("extend-select", self.extend_select),
                               ("ignore", self.ignore), ("fixable", self.fixable or ()),
                               ("extend-fixable", self.extend_fixable), ("unfixable", self.unfixable),
                               ("extend-safe-fixes", self.extend_safe_fixes),
                               ("extend-unsafe-fixes", self.extend_unsafe_fixes)):
            for selector in selectors:
                _check_selector(selector, key, self.origins.get(key, self.config_file))
        for _, codes in self.per_file_ignores:
            for selector in codes:
                _check_selector(selector, "per-file-ignores", self.config_file)
        _check_versions(self.torch_version, self.target_version,
                        lambda key: _where(self.origins.get(key, self.config_file), key))
        for framework, text in self.framework_versions:
            key = f"{framework}-version"
            try:
                Release.parse(text)
            except ValueError as error:
                raise ConfigError(f"{_where(self.origins.get(key, self.config_file), key)}: {error}") from None

    # -- derived values ---------------------------------------------------

    @property
    def excludes(self) -> Tuple[str, ...]:
        """Every exclusion pattern."""
        return (*self.exclude, *self.extend_exclude)

    def target_torch(self) -> TorchVersion:
        """The torch version the linted code targets."""
        if self.torch_version is not None:
            return TorchVersion.parse(self.torch_version)
        return detect_torch_version(self.root) or CURRENT_TORCH

    def target_frameworks(self) -> FrameworkReleases:
        """The framework releases the linted code targets: each framework's
        setting, else the oldest release its requirement admits; frameworks
        with neither are taken at their newest release."""
        detected = dict(detect_framework_versions(self.root).pinned)
        detected.update((framework, Release.parse(text)) for framework, text in self.framework_versions)
        return FrameworkReleases(tuple(sorted(detected.items())))

    def target_python(self) -> PythonVersion:
        """The oldest Python the code must run on: ``target-version``, else
        the lower bound of the project's ``requires-python``, else py39."""
        if self.target_version is not None:
            return PythonVersion.parse(self.target_version)
        return detect_python_version(self.root) or DEFAULT_TARGET

    def enabled_rules(self, path: Optional[Path] = None) -> "Tuple[RuleClass, ...]":
        """The rules that run on ``path`` after select/ignore/per-file-ignores
        (imports them; :meth:`enabled_infos` does not)."""
        return tuple(rule_class(info.code) for info in self.enabled_infos(path))

    def enabled_infos(self, path: Optional[Path] = None) -> Tuple[RuleInfo, ...]:
        """The metadata of the rules that run on ``path``."""
        ignores: List[str] = list(self.ignore)
        if path is not None:
            relative = self.relative(path)
            for pattern, codes in self.per_file_ignores:
                if path_matches(relative, pattern):
                    ignores.extend(codes)
        return _resolve_selection(
            rule_infos(), self.select, self.extend_select, tuple(ignores)
        )

    def relative(self, path: Path) -> str:
        """``path`` relative to this configuration's root, posix style."""
        if os.sep == "/":  # plain string work: a Path of a deep folder costs its depth to build
            absolute, root = os.path.abspath(path), os.path.abspath(self.root)
            if absolute == root:
                return "."
            if absolute.startswith(root.rstrip("/") + "/"):
                return absolute[len(root.rstrip("/")) + 1 :]
            return path.as_posix()
        try:
            return Path(os.path.abspath(path)).relative_to(os.path.abspath(self.root)).as_posix()
        except ValueError:
            return path.as_posix()

    def is_excluded(self, path: Path, *, parents_checked: bool = False) -> bool:
        """Whether ``exclude``/``extend-exclude`` match ``path`` or a parent folder.

        ``parents_checked`` says the caller (a folder walk) already found every
        parent folder not excluded under these settings; then only the last
        name and the whole path are tested, which keeps a deep walk linear.
        """
        relative = self.relative(path)
        return any(path_matches(relative, pattern, parents_checked) for pattern in self.excludes)

    def cache_fingerprint(self, path: Optional[Path] = None) -> str:
        """The part of a file's cache key that its configuration decides
        (what :meth:`lint_config` holds, without importing a rule)."""
        infos = self.enabled_infos(path)
        codes = [info.code for info in infos]
        policy = self.fix_policy(tuple(infos))
        fingerprint = config_fingerprint(codes, self.target_torch(), self.rule_options,
                                         frameworks=self.target_frameworks())
        return f"{fingerprint}|fixes={policy}" if policy else fingerprint

    def fix_policy(self, infos: Tuple[RuleInfo, ...]) -> Tuple[Tuple[str, str], ...]:
        """(code, ``none``/``safe``/``unsafe``) for each of these rules whose
        fixes ``fixable``/``unfixable``/``extend-safe-fixes``/
        ``extend-unsafe-fixes`` change; Ruff's rule: the most specific
        selector wins (ties: unfixable, and unsafe)."""
        if self.fixable is None and not (self.extend_fixable or self.unfixable or self.extend_safe_fixes
                                         or self.extend_unsafe_fixes):
            return ()  # the defaults: every fix as its rule rates it
        return _fix_policy(infos, self.fixable, self.extend_fixable, self.unfixable,
                           self.extend_safe_fixes, self.extend_unsafe_fixes)

    def lint_config(self, path: Optional[Path] = None, *, precheck: bool = True) -> "LintConfig":
        """What the engine needs to lint one file."""
        from torchlint.lint.engine import LintConfig

        infos = self.enabled_infos(path)
        return LintConfig(
            rules=tuple(rule_class(info.code) for info in infos),
            torch_version=self.target_torch(),
            options=self.rule_options,
            precheck=precheck,
            frameworks=self.target_frameworks(),
            target_version=self.target_python(),
            fix_policy=self.fix_policy(infos),
        )

    def for_verification(self, rule: "RuleClass", *, program: bool) -> "Settings":
        """These settings with only ``rule`` selected and the rule's options as
        its verification spec adapts them to this machine (``program_options``),
        for ``torchlint verify``: shipped programs and users' scripts alike run
        the fix here; for shipped programs also the target torch version
        (``program_torch_version``)."""
        options = {key: dict(value) for key, value in self.rule_options.items()}
        spec = rule.verification
        if spec is not None and spec.program_options is not None:
            configured = {key: option.default for key, option in rule.options.items()}
            configured.update(options.get(rule.code, {}))
            options[rule.code] = dict(spec.program_options(configured))
        torch_version = self.torch_version
        if program and spec is not None and spec.program_torch_version:
            torch_version = spec.program_torch_version
        return replace(
            self, select=(rule.code,), extend_select=(), ignore=(), per_file_ignores=(), rule_options=options,
            torch_version=torch_version,
        )

    def with_overrides(self, overrides: "Overrides") -> "Settings":
        """Apply command-line options on top of file settings."""
        changes: Dict[str, Any] = {}
        if overrides.select is not None:
            changes["select"] = overrides.select
        if overrides.extend_select:
            changes["extend_select"] = self.extend_select + overrides.extend_select
        if overrides.ignore:
            changes["ignore"] = self.ignore + overrides.ignore
        if overrides.exclude is not None:
            changes["exclude"] = overrides.exclude
        if overrides.extend_exclude:
            changes["extend_exclude"] = self.extend_exclude + overrides.extend_exclude
        if overrides.torch_version is not None:
            changes["torch_version"] = overrides.torch_version
        if overrides.respect_gitignore is not None:
            changes["respect_gitignore"] = overrides.respect_gitignore
        if overrides.target_version is not None:
            changes["target_version"] = overrides.target_version
        if overrides.fixable is not None:
            changes["fixable"] = overrides.fixable
        if overrides.extend_fixable:
            changes["extend_fixable"] = self.extend_fixable + overrides.extend_fixable
        if overrides.unfixable:
            changes["unfixable"] = self.unfixable + overrides.unfixable
        if overrides.framework_versions:
            changes["framework_versions"] = tuple(sorted({**dict(self.framework_versions),
                                                          **dict(overrides.framework_versions)}.items()))
        if not changes:
            return self
        origins = dict(self.origins)
        for name in changes:
            if name != "framework_versions":
                origins[name.replace("_", "-")] = "command line"
        for framework, _ in overrides.framework_versions:
            origins[f"{framework}-version"] = "command line"
        return replace(self, **changes, origins=origins)


@dataclass(frozen=True)
class Overrides:
    """Settings given on the command line."""

    select: Optional[Tuple[str, ...]] = None
    extend_select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    exclude: Optional[Tuple[str, ...]] = None
    extend_exclude: Tuple[str, ...] = ()
    torch_version: Optional[str] = None
    respect_gitignore: Optional[bool] = None
    target_version: Optional[str] = None
    fixable: Optional[Tuple[str, ...]] = None
    extend_fixable: Tuple[str, ...] = ()
    unfixable: Tuple[str, ...] = ()
    framework_versions: Tuple[Tuple[str, str], ...] = ()
    """``--lightning-version`` and the like, by framework name (``("lightning", "1.9")``)."""

    def __post_init__(self) -> None:
        # Checked here so that an error names the flag, not a config file.
        for flag, selectors in (("--select", self.select or ()), ("--extend-select", self.extend_select),
                                ("--ignore", self.ignore), ("--fixable", self.fixable or ()),
                                ("--extend-fixable", self.extend_fixable), ("--unfixable", self.unfixable)):
            for selector in selectors:
                _check_selector(selector, flag, None)
        _check_versions(self.torch_version, self.target_version, lambda key: f"--{key}")
        known = {framework for framework, _ in FRAMEWORK_OPTIONS}
        for framework, text in self.framework_versions:
            if framework not in known:
                raise ConfigError(f"unknown framework `{framework}`")
            try:
                Release.parse(text)
            except ValueError as error:
                raise ConfigError(f"--{framework}-version: {error}") from None


def _check_versions(torch: Optional[str], target: Optional[str], where: "Callable[[str], str]") -> None:
    """Refuse a torch or Python version that does not parse; ``where(key)``
    names the setting as the user gave it (a file's key, or a flag)."""
    for key, value, parse in (("torch-version", torch, TorchVersion.parse),
                              ("target-version", target, PythonVersion.parse)):
        if value is not None:
            try:
                parse(value)
            except ValueError as error:
                raise ConfigError(f"{where(key)}: {error}") from None


def _where(config_file: "Optional[Path | str]", message: str) -> str:
    if config_file == "command line":
        return message
    return f"{config_file}: {message}" if config_file else message


def _did_you_mean(key: str, known: Sequence[str]) -> str:
    """`` (did you mean `x`?)`` for the closest known key, or nothing."""
    import difflib

    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


def _check_selector(selector: str, key: str, config_file: "Optional[Path | str]") -> None:
    """Refuse a selector that matches no rule, naming the option and the nearest rule."""
    if expand_selector(selector) is None:
        close = suggest(selector)
        hint = f" (did you mean `{close}`?)" if close else ""
        raise ConfigError(_where(config_file, f"{key}: unknown rule selector `{selector}`{hint}"))


@lru_cache(maxsize=256)
def _fix_policy(infos: Tuple[RuleInfo, ...], fixable: Optional[Tuple[str, ...]], extend_fixable: Tuple[str, ...],
                unfixable: Tuple[str, ...], safe: Tuple[str, ...], unsafe: Tuple[str, ...]
                ) -> Tuple[Tuple[str, str], ...]:
    def best(selectors: Sequence[str], rule: RuleInfo) -> int:
        return max((specificity(s) for s in selectors if rule in (expand_selector(s) or ())), default=-1)

    policy: List[Tuple[str, str]] = []
    for rule in infos:
        on = max(best((*(fixable if fixable is not None else ("ALL",)), *extend_fixable), rule), -1)
        if best(unfixable, rule) >= on:
            policy.append((rule.code, "none"))
            continue
        to_safe, to_unsafe = best(safe, rule), best(unsafe, rule)
        if to_unsafe >= 0 and to_unsafe >= to_safe:
            policy.append((rule.code, "unsafe"))
        elif to_safe >= 0:
            policy.append((rule.code, "safe"))
    return tuple(policy)


@lru_cache(maxsize=256)
def _resolve_selection(
    infos: Tuple[RuleInfo, ...], select: Optional[Tuple[str, ...]], extend_select: Tuple[str, ...],
    ignore: Tuple[str, ...]
) -> Tuple[RuleInfo, ...]:
    """Ruff's rule: the most specific matching selector wins; ties go to ignore.
    ``infos`` (every rule) is an argument so that the answer is cached per rule set."""
    chosen = []
    for rule in infos:
        best_on = -1
        if select is None:
            best_on = 0 if rule.default_enabled else -1
        for selector in (*(select or ()), *extend_select):
            if rule in (expand_selector(selector) or ()):
                best_on = max(best_on, specificity(selector))
        best_off = max(
            (specificity(s) for s in ignore if rule in (expand_selector(s) or ())), default=-1
        )
        if best_on >= 0 and best_on > best_off:
            chosen.append(rule)
    return tuple(chosen)


def path_matches(relative: str, pattern: str, parents_checked: bool = False) -> bool:
    """Whether a glob matches a root-relative posix path or one of its folders.

    A pattern without ``/`` matches any single path component (``build``,
    ``*_pb2.py``); one with ``/`` is anchored at the root (``docs/``,
    ``src/*/gen``) and also covers everything below what it matches.  With
    ``parents_checked`` the folders are known not to match: only the last
    component and the whole path are tested.
    """
    pattern = pattern.rstrip("/")
    if "/" not in pattern:
        if parents_checked:
            return fnmatch.fnmatchcase(relative.rsplit("/", 1)[-1], pattern)
        return any(fnmatch.fnmatchcase(part, pattern) for part in relative.split("/"))
    pattern = pattern[2:] if pattern.startswith("./") else pattern.lstrip("/")
    if parents_checked:
        return fnmatch.fnmatchcase(relative, pattern) or PurePosixPath(relative).match(pattern)
    parts = relative.split("/")
    for depth in range(1, len(parts) + 1):
        prefix = "/".join(parts[:depth])
        if fnmatch.fnmatchcase(prefix, pattern) or PurePosixPath(prefix).match(pattern):
            return True
    return False


# -- loading ----------------------------------------------------------------


def _read_toml(path: Path) -> Dict[str, Any]:
    from torchlint.source.sourcefile import SourceError, read_regular

    if sys.version_info >= (3, 11):  # imported only when a configuration file is read
        import tomllib
    else:  # pragma: no cover - exercised on Python < 3.11
        import tomli as tomllib

    try:
        raw = read_regular(path, MAX_CONFIG_BYTES)
    except SourceError as error:
        raise UnreadableConfig(path, str(error)) from None
    try:
        data: Dict[str, Any] = tomllib.loads(raw.decode("utf-8"))
        return data
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"{path}: invalid TOML: not UTF-8 (byte 0x{error.object[error.start]:02x} at offset {error.start})"
        ) from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None


def _table(path: Path) -> Optional[Dict[str, Any]]:
    """The torchlint table of a config file, or None if it has none."""
    data = _read_toml(path)
    if path.name != "pyproject.toml":
        return data
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: `tool` must be a table")
    table = tool.get("torchlint")
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: `tool.torchlint` must be a table, not {type(table).__name__}")
    return table


def _string_list(value: Any, key: str, path: Path) -> Tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: `{key}` must be a list of strings")
    return tuple(value)


def _unknown_setting(key: str, path: Path, table: bool) -> ConfigError:
    """The error for a key that is neither a setting nor a rule's table,
    with the closest name and, for a ``[tool]`` table in a file that takes
    top-level keys, what that file wants instead."""
    if key == "tool" and path.name != "pyproject.toml":
        return ConfigError(f"{path}: unknown setting `tool`: {path.name} takes the settings as top-level keys "
                           "(`select = [...]`, `[dataloader-without-workers]`); "
                           "a `[tool.torchlint]` table belongs in pyproject.toml")
    names = [*_TOP_LEVEL_KEYS, *(info.name for info in rule_infos()), *(info.code for info in rule_infos())]
    hint = _did_you_mean(key, names)
    if not hint and table:
        close = suggest(key)
        hint = f" (did you mean `{close}`?)" if close else ""
    kind = "rule table" if table else "setting"
    return ConfigError(f"{path}: unknown {kind} `{key}`{hint}")


def _rule_options(key: str, value: Any, path: Path) -> Tuple[str, Dict[str, OptionValue]]:
    rule = info_by_code_or_name(key)
    if rule is None:
        raise _unknown_setting(key, path, table=True)
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: `{key}` must be a table of options")
    options: Dict[str, OptionValue] = {}
    for option_key, option_value in value.items():
        option = rule.options.get(option_key)
        if option is None:
            known = ", ".join(sorted(rule.options)) or "none"
            raise ConfigError(
                f"{path}: unknown option `{option_key}` for {rule.code} ({rule.name})"
                f"{_did_you_mean(option_key, sorted(rule.options))}; known: {known}"
            )
        if option.words and isinstance(option_value, str):
            if option_value not in option.words:
                kinds = {int: "an integer", float: "a number", bool: "a boolean"}
                allowed = [kinds.get(option.kind, "a value"), *(f'"{word}"' for word in option.words)]
                raise ConfigError(f"{path}: `{key}.{option_key}` must be {' or '.join(allowed)}; got {option_value!r}")
            options[option_key] = option_value
        elif option.kind is tuple:
            options[option_key] = _string_list(option_value, f"{key}.{option_key}", path)
        elif option.kind is bool and not isinstance(option_value, bool):
            raise ConfigError(f"{path}: `{key}.{option_key}` must be a boolean")
        elif option.kind is int and (isinstance(option_value, bool) or not isinstance(option_value, int)):
            raise ConfigError(f"{path}: `{key}.{option_key}` must be an integer")
        elif option.kind is str and not isinstance(option_value, str):
            raise ConfigError(f"{path}: `{key}.{option_key}` must be a string")
        else:
            options[option_key] = option_value
        if option.minimum is not None and isinstance(option_value, (int, float)) and option_value < option.minimum:
            raise ConfigError(f"{path}: `{key}.{option_key}` must be at least {option.minimum} "
                              f"for {rule.code} ({rule.name}); got {option_value}")
        if option.kind is str and option_key.endswith("pattern"):
            try:
                re.compile(str(option_value))
            except re.error as error:
                raise ConfigError(f"{path}: `{key}.{option_key}` is not a valid regex: {error}") from None
    return rule.code, options


def settings_from_table(table: Mapping[str, Any], path: Path, _seen: Tuple[Path, ...] = ()) -> Settings:
    """Validate one ``[tool.torchlint]`` table; with ``extend = "other.toml"``,
    on top of the settings of that file (a path relative to this one), as
    in Ruff: this table's keys replace the other's, and rule tables merge
    option by option."""
    base: Optional[Settings] = None
    if "extend" in table:
        base = _extended(table["extend"], path, _seen)
    values: Dict[str, Any] = {"root": path.parent, "config_file": path}
    origins: Dict[str, str] = {}
    rule_options: Dict[str, Dict[str, OptionValue]] = {}
    if base is not None:
        origins.update(base.origins)
        values.update({name: getattr(base, name) for name in _INHERITED})
        rule_options = {code: dict(options) for code, options in base.rule_options.items()}
    for key, value in table.items():
        if key == "extend":
            continue
        origins[key] = str(path)
        if key in ("select", "extend-select", "ignore", "exclude", "extend-exclude", "fixable",
                   "extend-fixable", "unfixable", "extend-safe-fixes", "extend-unsafe-fixes"):
            values[key.replace("-", "_")] = _string_list(value, key, path)
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{path}: `per-file-ignores` must be a table of glob = [codes]")
            values["per_file_ignores"] = tuple(
                (glob, _string_list(codes, f"per-file-ignores.{glob}", path))
                for glob, codes in sorted(value.items())
            )
        elif key == "torch-version":
            if not isinstance(value, str):
                raise ConfigError(f"{path}: `torch-version` must be a string such as \"1.13\"")
            values["torch_version"] = value
        elif key == "target-version":
            if not isinstance(value, str):
                raise ConfigError(f"{path}: `target-version` must be a string such as \"py39\"")
            values["target_version"] = value
        elif key in dict(FRAMEWORK_OPTIONS).values():
            if not isinstance(value, str):
                raise ConfigError(f"{path}: `{key}` must be a string such as \"2.1\" or \"1.6.4\"")
            framework = key[: -len("-version")]
            values["framework_versions"] = tuple(sorted({**dict(values.get("framework_versions", ())),
                                                          framework: value}.items()))
        elif key == "respect-gitignore":
            if not isinstance(value, bool):
                raise ConfigError(f"{path}: `respect-gitignore` must be a boolean")
            values["respect_gitignore"] = value
        elif key == "verify":
            values["sbatch_args"] = _verify_table(value, path)
        elif isinstance(value, dict):
            code, options = _rule_options(key, value, path)
            rule_options[code] = {**rule_options.get(code, {}), **options}
            origins.pop(key)
            for option in options:
                origins[f"{code}.{option}"] = str(path)
        else:
            raise _unknown_setting(key, path, table=False)
    values["rule_options"] = rule_options
    values["origins"] = origins
    return Settings(**values)


# sbatch options a configuration file may give: what resources the job asks for.  Options that
# choose files, the environment or the script (--output, --export, --chdir, --wrap ...) come
# from the command line only: a cloned repository's pyproject.toml is not trusted with them.
SBATCH_RESOURCE_OPTIONS = frozenset({
    "--partition", "--gres", "--gpus", "--gpus-per-node", "--gpus-per-task", "--gpus-per-socket", "--time",
    "--time-min", "--account", "--qos", "--constraint", "--cpus-per-task", "--cpus-per-gpu", "--mem",
    "--mem-per-cpu", "--mem-per-gpu", "--nodes", "--ntasks", "--ntasks-per-node",
})
SBATCH_RESOURCE_SHORT = {"-p": "--partition", "-G": "--gpus", "-t": "--time", "-A": "--account", "-q": "--qos",
                         "-C": "--constraint", "-c": "--cpus-per-task", "-N": "--nodes", "-n": "--ntasks"}


def _resource_options(args: Tuple[str, ...], path: Path) -> Tuple[str, ...]:
    """``args`` when every option in it asks for resources; else a ConfigError naming the first
    that does not.  ``--opt=value``, ``--opt value``, ``-p value`` and ``-pvalue`` are read."""
    expecting_value = False
    for arg in args:
        if expecting_value:
            expecting_value = False
            continue
        if arg.startswith("--"):
            name = arg.split("=", 1)[0]
            allowed = name in SBATCH_RESOURCE_OPTIONS
            expecting_value = allowed and "=" not in arg
        elif arg.startswith("-") and len(arg) >= 2:
            name = arg[:2]
            allowed = name in SBATCH_RESOURCE_SHORT
            expecting_value = allowed and len(arg) == 2
        else:
            name, allowed = arg, False
        if not allowed:
            raise ConfigError(
                f"{path}: `verify.sbatch-args`: `{arg}` is not a resource option; a configuration file may only "
                "ask for resources (partition, GPUs, time, account, QoS, constraint, CPUs, memory, nodes, "
                "tasks); options that choose files, the environment or the script are taken from the command "
                "line only (--sbatch-arg)")
    return args


_INHERITED = ("select", "extend_select", "ignore", "per_file_ignores", "exclude", "extend_exclude",
              "torch_version", "respect_gitignore", "target_version", "sbatch_args", "fixable",
              "extend_fixable", "unfixable", "extend_safe_fixes", "extend_unsafe_fixes", "framework_versions")
"""What ``extend`` carries over from the other file (not its folder: paths
and globs stay relative to the file that extends)."""


def _extended(value: Any, path: Path, seen: Tuple[Path, ...]) -> Settings:
    """The settings of the file an ``extend`` key names."""
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{path}: `extend` must be the path of another configuration file")
    from torchlint.source.reads import expansion

    expanded = os.path.expandvars(os.path.expanduser(value))
    expansion(value, expanded)  # the environment (and the home folder) the path depends on
    target = Path(expanded)
    target = (path.parent / target) if not target.is_absolute() else target
    resolved = Path(os.path.abspath(target))
    chain = (*seen, Path(os.path.abspath(path)))
    if resolved in chain:
        raise ConfigError(f"{path}: `extend` makes a cycle: {' -> '.join(map(str, (*chain, resolved)))}")
    if len(chain) > _MAX_EXTEND_DEPTH:
        raise ConfigError(f"{path}: `extend` chains more than {_MAX_EXTEND_DEPTH} files")
    if not resolved.is_file():
        raise ConfigError(f"{path}: `extend`: no such configuration file {value!r} ({resolved})")
    table = _table(resolved)
    return settings_from_table(table or {}, resolved, chain)


def _verify_table(value: Any, path: Path) -> Tuple[str, ...]:
    """``[tool.torchlint.verify]``: only ``sbatch-args`` (a list of strings, resource options only)."""
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: `verify` must be a table")
    for key in value:
        if key != "sbatch-args":
            raise ConfigError(f"{path}: unknown setting `verify.{key}`")
    return _resource_options(_string_list(value.get("sbatch-args", []), "verify.sbatch-args", path), path)


def load_config_file(path: Path) -> Settings:
    """Settings from one file (a pyproject without the table gives defaults)."""
    table = _table(path)
    return settings_from_table(table or {}, path.resolve())


CEILING_VARIABLE = "TORCHLINT_CEILING_DIRECTORIES"
"""Folders (absolute, separated by ``os.pathsep``) the configuration search
does not enter, like git's ``GIT_CEILING_DIRECTORIES``: a search starting
below one stops there, so no configuration file in it or above it is read."""


def _outside_project(folder: str, repository: Optional[str]) -> Optional[str]:
    """Where ``folder`` is, when it is above the project being linted: above
    the repository the search started in, or (outside a repository) above
    the working folder; None inside the project."""
    if repository is not None:
        return f"above the project's repository {repository}"
    try:
        here = os.getcwd()
    except OSError:
        return None
    if here != folder and here.startswith(folder.rstrip(os.sep) + os.sep):
        return f"above the project, in {folder}, not in the working folder {here} or below it"
    return None


def config_fingerprint(codes: Sequence[str], torch_version: TorchVersion,
                       options: Mapping[str, Mapping[str, OptionValue]], precheck: bool = True,
                       frameworks: FrameworkReleases = FrameworkReleases()) -> str:
    """A stable text for everything in a file's configuration that affects
    its findings: the rules that run, the target torch and framework
    releases, rule options, and whether the pre-check may skip it."""
    payload = {
        "rules": list(codes),
        "torch": str(torch_version),
        "frameworks": {name: str(release) for name, release in frameworks.pinned},
        "options": {code: dict(sorted(opts.items())) for code, opts in sorted(options.items())},
        "precheck": precheck,
    }
    return json.dumps(payload, sort_keys=True, default=list)


@dataclass(frozen=True)
class Resolved:
    """A run's files, each with its settings, resolved once (by :func:`resolve_files`):
    what the index build, the cache keys and the lints are given, so that
    nothing downstream asks for a file's settings again."""

    files: Tuple[Path, ...]
    settings: Tuple[Settings, ...]
    digests: Tuple[str, ...]
    """Each file's settings digest (:meth:`Settings.cache_fingerprint`; empty when not keyed)."""
    queries: "Tuple[Query, ...]"
    """What the enabled rules ask of the project index."""
    by_path: Mapping[Path, Settings] = field(compare=False)

    def settings_for(self, path: Path) -> Settings:
        return self.by_path[path]


def resolve_files(files: Sequence[Path], settings_for: Callable[[Path], Settings], *,
                  keyed: bool = True) -> Resolved:
    """Each file's settings (asked once per file), its settings digest when
    ``keyed`` (for the cache), and the index queries of every configuration."""
    settings = tuple(settings_for(path) for path in files)
    digests: List[str] = []
    known: Dict[Tuple[int, Optional[Path]], str] = {}
    for path, found in zip(files, settings) if keyed else ():
        # Per-file ignores are the only way a path changes its configuration.
        scope = (id(found), path if found.per_file_ignores else None)
        if scope not in known:
            known[scope] = found.cache_fingerprint(path)
        digests.append(known[scope])
    distinct = {id(found): found for found in settings}
    queries = tuple(
        query
        for found in distinct.values()
        for info in found.enabled_infos(None)  # per-file ignores can only remove rules
        for query in info.queries
    )
    return Resolved(tuple(files), settings, tuple(digests), queries, dict(zip(files, settings)))


class SettingsResolver:
    """Finds the closest configuration for each directory, memoised."""

    def __init__(self, overrides: Overrides = Overrides(), config_file: Optional[Path] = None,
                 isolated: bool = False) -> None:
        self._overrides = overrides
        self._by_dir: Dict[str, Settings] = {}
        self._problems: Dict[Path, str] = {}
        self._fixed: Optional[Settings] = None
        self._ceilings = ceiling_directories(CEILING_VARIABLE)
        if config_file is not None:
            self._fixed = load_config_file(config_file).with_overrides(overrides)
        elif isolated:
            self._fixed = Settings().with_overrides(overrides)
        self.default = self._fixed or self._find(os.getcwd())

    def for_path(self, path: Path) -> Settings:
        """The settings that apply to a file or directory."""
        if self._fixed is not None:
            return self._fixed
        # abspath, not resolve(): a symlink loop must not raise here.
        absolute = os.path.abspath(path)
        directory = absolute if os.path.isdir(absolute) else os.path.dirname(absolute)
        return self._find(directory)

    @property
    def problems(self) -> Tuple[Tuple[Path, str], ...]:
        """Folders and configuration files the search could not read, with why."""
        return tuple(self._problems.items())

    def _find(self, directory: str) -> Settings:
        """The closest configuration at or above ``directory`` (absolute); one
        probe per folder, no recursion, never into a ceiling folder
        (:data:`CEILING_VARIABLE`)."""
        pending: List[str] = []
        current = directory
        repository: Optional[str] = None  # a repository's top folder the search went above
        found = self._by_dir.get(current)
        while found is None:
            pending.append(current)
            found = self._configured(current, repository)
            if found is not None:
                break
            if repository is None and os.path.lexists(os.path.join(current, ".git")):
                repository = current
            parent = os.path.dirname(current)
            if parent == current or parent in self._ceilings:
                found = Settings(root=Path.cwd()).with_overrides(self._overrides)
                break
            current = parent
            found = self._by_dir.get(current)
        for folder in pending:
            self._by_dir[folder] = found
        return found

    def _configured(self, directory: str, repository: Optional[str] = None) -> Optional[Settings]:
        """The settings of the configuration file in ``directory``, if it has
        one that can be read.  ``repository`` is the top folder of a
        repository the search came up from: an error in a file above the
        project says so, and how to do without it."""
        for name in CONFIG_FILENAMES:
            try:
                is_file = stat.S_ISREG(os.stat(os.path.join(directory, name)).st_mode)
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError as error:
                if error.errno == errno.ELOOP:  # the file is a symlink loop, the folder is fine
                    self._unreadable(Path(directory) / name, error.strerror or str(error))
                    continue
                self._problems.setdefault(Path(directory), f"cannot read folder: {error.strerror or error}; "
                                                           "its configuration files (if any) were not used")
                return None
            if not is_file:
                continue
            candidate = Path(directory) / name
            try:
                table = _table(candidate)
                if table is not None:
                    return settings_from_table(table, candidate).with_overrides(self._overrides)
            except UnreadableConfig as error:
                self._unreadable(candidate, error.reason)
                continue
            except ConfigError as error:
                outside = _outside_project(directory, repository)
                if outside is None:
                    raise
                raise ConfigError(f"{error} (this configuration file was found {outside}: fix it, or run with "
                                  "--isolated to use no configuration file, or --config FILE to name one)") from None
        return None

    def _unreadable(self, config_file: Path, reason: str) -> None:
        self._problems.setdefault(config_file, f"cannot read configuration file: {reason}; it was ignored as if absent")


# -- torch and framework version detection ------------------------------

_REQUIREMENT = re.compile(r"^\s*torch\s*(\[[^\]]*\])?\s*(?P<spec>[<>=!~][^;#]*)?(?:[;#].*)?$", re.IGNORECASE)
_NAMED_REQUIREMENT = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(?P<spec>[<>=!~][^;#]*)?(?:[;#].*)?$"
)
_CLAUSE = re.compile(r"(?P<op>~=|==|>=|<=|!=|>|<)\s*(?P<version>\d+(?:\.\d+)*)")


def version_from_requirement(line: str) -> Optional[TorchVersion]:
    """The oldest torch release a requirement line admits, if it pins one."""
    match = _REQUIREMENT.match(line)
    if not match or not match.group("spec"):
        return None
    lower: Optional[TorchVersion] = None
    upper: Optional[TorchVersion] = None
    for clause in _CLAUSE.finditer(match.group("spec")):
        op, text = clause.group("op"), clause.group("version")
        version = TorchVersion.parse(text if "." in text else text + ".0")
        if op in ("==", "~=", ">=", ">"):
            lower = version if lower is None or version < lower else lower
        elif op == "<=":
            upper = version
        elif op == "<":
            if version.minor > 0:
                upper = TorchVersion(version.major, version.minor - 1)
            elif version.major == 2:
                upper = TorchVersion(1, 13)
            else:
                upper = TorchVersion(max(version.major - 1, 0), 99)
    return lower or upper


def release_from_requirement(line: str, distributions: Sequence[str]) -> Optional[Release]:
    """The oldest release a requirement line admits, if it names one of
    ``distributions`` (PEP 503 normalised: ``PyTorch_Lightning`` is
    ``pytorch-lightning``) and bounds it; ``<2.0`` admits the 1.x line."""
    from torchlint.data.apidata import normalized_distribution

    match = _NAMED_REQUIREMENT.match(line)
    if not match or not match.group("spec") or normalized_distribution(match.group("name")) not in distributions:
        return None
    lower: Optional[Release] = None
    upper: Optional[Release] = None
    for clause in _CLAUSE.finditer(match.group("spec")):
        op, text = clause.group("op"), clause.group("version")
        try:
            release = Release.parse(".".join(text.split(".")[:3]))
        except ValueError:
            continue
        if op in ("==", "~=", ">=", ">"):
            lower = release if lower is None or release < lower else lower
        elif op == "<=":
            upper = release
        elif op == "<":
            upper = release.before()
    return lower or upper


@lru_cache(maxsize=64)
def _requirement_lines(root: Path) -> Tuple[str, ...]:
    """The project's requirements, read from the files at ``root`` where
    projects declare them: ``pyproject.toml`` (``[project]`` dependencies and
    optional groups, Poetry's dependency tables), every ``requirements*.txt``,
    ``setup.py`` (``install_requires`` written as a list, read with ``ast``,
    never run), ``setup.cfg`` (``[options] install_requires``) and a conda
    ``environment.yml``/``environment.yaml`` (its ``pip:`` section and its
    conda packages).  Regular files only, each with a size bound; a file that
    cannot be read or parsed counts as absent."""
    lines: List[str] = []
    pyproject = root / "pyproject.toml"
    if os.path.isfile(pyproject):
        try:
            data = _read_toml(pyproject)
        except ConfigError:
            data = {}
        lines.extend(_pyproject_requirements(data))
    try:
        requirement_files = sorted(root.glob("requirements*.txt"))
    except OSError:
        requirement_files = []
    for requirements in requirement_files:
        lines.extend(_read_text(requirements).splitlines())
    lines.extend(_setup_py_requirements(_read_text(root / "setup.py")))
    lines.extend(_setup_cfg_requirements(_read_text(root / "setup.cfg")))
    for name in ("environment.yml", "environment.yaml"):
        lines.extend(_conda_requirements(_read_text(root / name)))
    return tuple(lines)


def _read_text(path: Path) -> str:
    """A regular file's text within the configuration size bound, else empty."""
    from torchlint.source.sourcefile import SourceError, read_regular

    if not os.path.lexists(path):
        return ""
    try:
        return read_regular(path, MAX_CONFIG_BYTES).decode("utf-8", "replace")
    except SourceError:
        return ""  # not a regular file, unreadable or too large: as if absent


def _pyproject_requirements(data: Mapping[str, Any]) -> List[str]:
    """``[project] dependencies`` and ``optional-dependencies``; Poetry's
    ``[tool.poetry.dependencies]`` and group tables (``name = "^1.9"`` or
    ``{ version = ">=1.9" }``; caret and tilde read as lower bounds)."""
    found: List[str] = []
    project = data.get("project", {})
    if isinstance(project, dict):
        groups = [project.get("dependencies", [])]
        optional = project.get("optional-dependencies", {})
        if isinstance(optional, dict):
            groups.extend(optional.values())
        for group in groups:
            if isinstance(group, list):
                found.extend(d for d in group if isinstance(d, str))
    tool = data.get("tool", {})
    poetry = tool.get("poetry", {}) if isinstance(tool, dict) else {}
    if isinstance(poetry, dict):
        tables = [poetry.get("dependencies", {}), poetry.get("dev-dependencies", {})]
        groups = poetry.get("group", {})
        if isinstance(groups, dict):
            tables.extend(g.get("dependencies", {}) for g in groups.values() if isinstance(g, dict))
        for table in tables:
            if not isinstance(table, dict):
                continue
            for name, spec in table.items():
                version = spec.get("version") if isinstance(spec, dict) else spec
                if isinstance(name, str) and isinstance(version, str):
                    found.append(name + re.sub(r"^\s*[\^~](?!=)", ">=", version))
    return found


def _setup_py_requirements(text: str) -> List[str]:
    """The strings of ``setup(install_requires=[...])`` in a ``setup.py``: a
    list or tuple written in the call, or a module-level name assigned one
    once.  The file is parsed, never run."""
    if "install_requires" not in text:
        return []
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    assigned: Dict[str, List[ast.expr]] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(statement.value)
    found: List[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg != "install_requires":
                continue
            value = keyword.value
            if isinstance(value, ast.Name) and len(assigned.get(value.id, [])) == 1:
                value = assigned[value.id][0]
            if isinstance(value, (ast.List, ast.Tuple)):
                found.extend(e.value for e in value.elts
                             if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return found


def _setup_cfg_requirements(text: str) -> List[str]:
    """``[options] install_requires`` of a ``setup.cfg``, one requirement a line."""
    if "install_requires" not in text:
        return []
    import configparser

    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
        value = parser.get("options", "install_requires", fallback="")
    except (configparser.Error, ValueError):
        return []
    return [line.strip() for line in value.splitlines() if line.strip() and not line.strip().startswith("#")]


_YAML_ITEM = re.compile(r"^(?P<indent>\s*)-\s+(?P<value>.*?)\s*(?:#.*)?$")
_CONDA_PIN = re.compile(r"^(?:[\w.-]+::)?(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*=(?P<version>[0-9][^=\s]*)(?:=\S*)?$")


def _conda_requirements(text: str) -> List[str]:
    """The requirements a conda ``environment.yml`` lists under
    ``dependencies:``: its ``pip:`` section as written, and its conda
    packages with ``name=1.9`` read as ``name==1.9`` (a channel prefix and a
    build string are dropped).  Read line by line: the block style conda
    writes, not all of YAML."""
    if "dependencies" not in text:
        return []
    found: List[str] = []
    block: Optional[int] = None  # the indentation of the `dependencies:` key
    pip: Optional[int] = None  # the indentation of the `- pip:` item
    for raw in text.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if block is None:
            if re.match(r"^dependencies\s*:\s*$", stripped):
                block = indent
            continue
        item = _YAML_ITEM.match(line)
        if item is None:
            if indent <= block:
                break  # the next key of the file
            continue
        if len(item.group("indent")) < block:
            break
        value = item.group("value").strip("'\"")
        if pip is not None and len(item.group("indent")) > pip:
            found.append(value)
            continue
        pip = None
        if re.match(r"^pip\s*:$", value):
            pip = len(item.group("indent"))
            continue
        conda = _CONDA_PIN.match(value.replace(" ", ""))
        found.append(f"{conda.group('name')}=={conda.group('version')}" if conda is not None else value)
    return found


@lru_cache(maxsize=64)
def detect_torch_version(root: Path) -> Optional[TorchVersion]:
    """Read the torch requirement the project at ``root`` declares."""
    versions = [v for v in (version_from_requirement(line) for line in _requirement_lines(root)) if v is not None]
    return min(versions, key=lambda v: (v.major, v.minor)) if versions else None


@lru_cache(maxsize=64)
def detect_framework_versions(root: Path) -> FrameworkReleases:
    """The oldest release of each framework the project at ``root`` admits,
    read like the torch requirement (any of the framework's distributions:
    ``lightning`` or ``pytorch-lightning``)."""
    lines = _requirement_lines(root)
    if not lines:
        return FrameworkReleases()  # nothing to read: the data file is not needed
    from torchlint.data.apidata import frameworks

    found: List[Tuple[str, Release]] = []
    for framework, info in sorted(frameworks().frameworks.items(), key=lambda item: item[0].value):
        releases = [r for r in (release_from_requirement(line, info.distributions) for line in lines) if r is not None]
        if releases:
            found.append((framework.value, min(releases)))
    return FrameworkReleases(tuple(found))


def clear_detection_caches() -> None:
    """Forget what was read from projects' requirements (their files may have changed)."""
    for cached in (_requirement_lines, detect_torch_version, detect_framework_versions, detect_python_version):
        cached.cache_clear()


@lru_cache(maxsize=64)
def detect_python_version(root: Path) -> Optional[PythonVersion]:
    """The lower bound of ``requires-python`` in the project's pyproject.toml."""
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return None
    try:
        project = _read_toml(pyproject).get("project", {})
    except ConfigError:
        return None
    requires = project.get("requires-python") if isinstance(project, dict) else None
    return lowest_python(requires) if isinstance(requires, str) else None


def rule_codes(rules: "Sequence[RuleClass]") -> Tuple[str, ...]:
    """The codes of a rule list."""
    return tuple(rule.code for rule in rules)


def show_settings(settings: Settings, path: Path) -> str:
    """The resolved settings for ``path`` as TOML-like lines, each with
    where it came from (a configuration file, the command line, or the
    default), then the rules that run on it: ``--show-settings``."""
    def shown(value: Any) -> str:
        if isinstance(value, tuple) and value and isinstance(value[0], tuple):  # per-file-ignores
            return "{ " + ", ".join(f"{glob!r} = {list(codes)!r}" for glob, codes in value) + " }"
        if isinstance(value, (tuple, list)):
            return "[" + ", ".join(f'"{item}"' for item in value) + "]"
        if isinstance(value, bool):
            return "true" if value else "false"
        if value is None:
            return "(not set)"
        return f'"{value}"' if isinstance(value, str) else str(value)

    origins = settings.origins
    lines = [f"Settings for: {path}",
             f"Configuration file: {settings.config_file if settings.config_file is not None else '(none)'}",
             f"Project root: {settings.root}", ""]
    for key in ("select", "extend-select", "ignore", "per-file-ignores", "exclude", "extend-exclude",
                "respect-gitignore", "torch-version", "target-version", "fixable", "extend-fixable",
                "unfixable", "extend-safe-fixes", "extend-unsafe-fixes"):
        value = getattr(settings, key.replace("-", "_"))
        if key == "select" and value is None:
            text = "(the rules that are on by default)"
        elif key == "fixable" and value is None:
            text = '["ALL"]'
        else:
            text = shown(value)
        lines.append(f"{key} = {text}  # {origins.get(key, 'default')}")
    torch = settings.target_torch()
    torch_origin = origins.get("torch-version") or ("the project's requirements" if settings.torch_version is None
                                                     and detect_torch_version(settings.root) else "default")
    lines.append(f"# target torch: {torch} ({torch_origin}); target Python: {settings.target_python().dotted}")
    given = dict(settings.framework_versions)
    for framework, key in FRAMEWORK_OPTIONS:
        lines.append(f"{key} = {shown(given.get(framework))}  # {origins.get(key, 'default')}")
    lines.append(f"# target frameworks: {settings.target_frameworks()} (any other at its newest known release)")
    for code in sorted(settings.rule_options):
        for option, value in sorted(settings.rule_options[code].items()):
            lines.append(f"{code}.{option} = {shown(value)}  # {origins.get(f'{code}.{option}', 'default')}")
    if settings.sbatch_args:
        lines.append(f"verify.sbatch-args = {shown(settings.sbatch_args)}  # {origins.get('verify', 'default')}")
    infos = settings.enabled_infos(path)
    policy = dict(settings.fix_policy(infos))
    lines += ["", f"Rules that run on {path} ({len(infos)}):"]
    for info in infos:
        note = {"none": " (fixes not applied: unfixable)", "safe": " (fixes applied as safe)",
                "unsafe": " (fixes applied only with --unsafe-fixes)"}.get(policy.get(info.code, ""), "")
        lines.append(f"  {info.code} {info.name}{note}")
    return "\n".join(lines) + "\n"
