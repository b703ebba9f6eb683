"""A flake8 plugin that reports torchlint's findings as ``TL`` codes.

Register it under the ``flake8.extension`` entry-point group with the name
``TL`` (``TL = "torchlint.interfaces.flake8_plugin:TorchlintChecker"``).  flake8 then runs
it on every file, whatever codes are selected, so the plugin first checks
that flake8's select lists can match a ``TL`` code at all, then asks flake8's
own decision engine which ``TL`` codes it would report for the file, and
returns at once when none: without joining lines, loading the rules or
parsing.  Otherwise it runs only the rules whose codes are selected, and
only on files that the same ``ast`` pre-check as ``torchlint check`` (each
rule's ``could_match``, under the file's rule options) lets through: flake8's
own ``ast`` tree is summarised, so nothing is parsed twice.

flake8 does the selection (``--select``, ``--ignore``, ``per-file-ignores``),
with one difference: a rule torchlint keeps off by default (a suggestion)
runs only when its full code is selected, so ``--select TL`` means what
``torchlint check`` reports by default.  Suppression comments are read by
the one implementation both front ends share (:mod:`torchlint.lint.suppress`),
which reads ``# noqa`` the way flake8 does (code prefixes, a comment ending
a multi-line statement), so flake8's own ``# noqa`` handling removes nothing
more.  The closest ``[tool.torchlint]`` table supplies only the target torch
version and the rules' options.
"""

from __future__ import annotations

import argparse
import ast
import importlib
from dataclasses import replace
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Dict,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    Type,
)

from torchlint.version import __version__

if TYPE_CHECKING:  # heavy imports stay out of flake8's start-up
    from torchlint.ruleapi.rule import RuleClass
    from torchlint.lint.settings import SettingsResolver

PREFIX = "TL"
"""The entry-point name: flake8 selects the plugin's codes by this prefix."""

_SELECTION_OPTIONS = (
    "select",
    "extend_select",
    "extended_default_select",
    "ignore",
    "extend_ignore",
    "extended_default_ignore",
    "per_file_ignores",
)

Finding = Tuple[int, int, str, Type[Any]]


def _frozen(value: Any) -> Any:
    """A hashable copy of an option value (lists become tuples)."""
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(item) for item in value)
    return value


def _could_select_prefix(options: argparse.Namespace) -> bool:
    """Whether any entry of flake8's select lists could match a ``TL`` code.

    flake8 reports a code only when one of these entries is a prefix of it,
    so when no entry starts with ``TL`` (or is ``T`` or empty) nothing this
    plugin reports can be shown.  This needs no rule catalogue.
    """
    select = getattr(options, "select", None)
    base = select if select is not None else getattr(options, "extended_default_select", None)
    entries = [*(base or ()), *(getattr(options, "extend_select", None) or ())]
    return any(
        entry.startswith(PREFIX) or PREFIX.startswith(entry)
        for entry in (str(e).strip().upper() for e in entries)
    )


class _Selection:
    """flake8's decisions for torchlint's codes under one set of options."""

    def __init__(self, options: argparse.Namespace) -> None:
        from torchlint.ruleapi.registry import PARSE_ERROR_CODE, all_rules

        self._rules = all_rules()
        self._codes = (PARSE_ERROR_CODE, *(rule.code for rule in self._rules))
        self._guides: Any = None
        try:
            # flake8 ships no type information: it is reached through
            # importlib, so no mypy override is needed.
            self._style_guide: Any = importlib.import_module("flake8.style_guide")
            # The object flake8 itself builds to filter results: it applies
            # --select/--ignore and per-file-ignores.  The formatter plays
            # no part in decisions.
            self._guides = self._style_guide.StyleGuideManager(options, None)
        except Exception:  # an older or newer flake8: report everything
            self._guides = None
        self._by_file: Dict[str, Tuple[Tuple[RuleClass, ...], bool]] = {}
        self._named = frozenset(
            str(entry).strip().upper()
            for name in ("select", "extend_select")
            for entry in (getattr(options, name, None) or ())
        )
        """Codes named in full by ``--select``/``--extend-select``."""

    def for_file(self, filename: str) -> Tuple[Tuple[RuleClass, ...], bool]:
        """The rules to run on ``filename`` and whether TL000 is reported."""
        cached = self._by_file.get(filename)
        if cached is not None:
            return cached
        if self._guides is None:
            result: Tuple[Tuple[RuleClass, ...], bool] = (self._rules, True)
        else:
            try:
                result = self._decide(filename)
            except Exception:
                result = (self._rules, True)
        if len(self._by_file) < 4096:
            self._by_file[filename] = result
        return result

    def _decide(self, filename: str) -> Tuple[Tuple[RuleClass, ...], bool]:
        decision = self._style_guide.Decision
        guide = self._guides.style_guide_for(filename)
        chosen: List[RuleClass] = []
        for rule in self._rules:
            if guide.should_report_error(rule.code) is not decision.Selected:
                continue
            # A rule that torchlint keeps off by default (the suggestions)
            # runs only when its own code is selected: `--select TL` (or
            # `TL1`) means torchlint's defaults, as `torchlint check` does.
            if not rule.default_enabled and rule.code not in self._named:
                continue
            chosen.append(rule)
        parse_errors = guide.should_report_error(self._codes[0]) is decision.Selected
        return tuple(chosen), parse_errors


class TorchlintChecker:
    """The flake8 checker: one instance per file, ``run`` yields findings."""

    name: ClassVar[str] = "torchlint"
    version: ClassVar[str] = __version__

    _options: ClassVar[Optional[argparse.Namespace]] = None
    _selections: ClassVar[Dict[Tuple[Any, ...], _Selection]] = {}
    _resolver: ClassVar[Optional["SettingsResolver"]] = None

    def __init__(self, tree: ast.AST, lines: Sequence[str], filename: str) -> None:
        # ``tree`` (flake8's own ``ast`` parse) feeds the pre-check; findings
        # come from ``lines`` (physical lines, BOM removed).
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        """Keep flake8's options; decisions are made when a file is checked.

        The namespace is kept rather than copied: flake8's legacy API sets
        options on it after this call.
        """
        cls._options = options

    def run(self) -> Iterator[Finding]:
        """Yield ``(line, column, "TLxxx message", type)`` for each finding."""
        options = self._options
        if options is not None and not _could_select_prefix(options):
            return
        rules, parse_errors = self._selected(options)
        if rules:  # TL000 alone needs no run: flake8 reports syntax errors
            yield from self._lint(rules, parse_errors)

    # -- helpers ------------------------------------------------------------

    def _selected(self, options: Optional[argparse.Namespace]) -> Tuple[Tuple[RuleClass, ...], bool]:
        if options is None:  # not run by flake8's application
            from torchlint.ruleapi.registry import all_rules

            return tuple(rule for rule in all_rules() if rule.default_enabled), True
        key = tuple(_frozen(getattr(options, name, None)) for name in _SELECTION_OPTIONS)
        selection = self._selections.get(key)
        if selection is None:
            selection = TorchlintChecker._selections[key] = _Selection(options)
        return selection.for_file(self.filename)

    def _lint(self, rules: Tuple[RuleClass, ...], parse_errors: bool) -> Iterator[Finding]:
        from torchlint.lint.engine import LintConfig, could_match, lint_source
        from torchlint.ruleapi.precheck import summarize
        from torchlint.ruleapi.registry import PARSE_ERROR_CODE
        from torchlint.lint.runner import prepare_one_file
        from torchlint.lint.settings import ConfigError, SettingsResolver

        source = "".join(self.lines)
        try:
            if TorchlintChecker._resolver is None:
                TorchlintChecker._resolver = SettingsResolver()
            settings = TorchlintChecker._resolver.for_path(Path(self.filename))
            config = LintConfig(
                rules=rules,
                torch_version=settings.target_torch(),
                options=settings.rule_options,
                frameworks=settings.target_frameworks(),
            )
        except ConfigError as error:
            if parse_errors:
                yield (1, 0, f"{PARSE_ERROR_CODE} invalid torchlint configuration: {error}", type(self))
            return
        # The cross-file facts `torchlint check <file>` would see (stdin has
        # none); first, since they widen what some rules match (a rule's
        # trigger words may include the project's subclasses of a class).
        resolver = TorchlintChecker._resolver
        project = prepare_one_file(None if self.filename in ("-", "stdin") else Path(self.filename), resolver.for_path)
        config = replace(config, project=project)
        # The rules' options can widen what they match, so the pre-check
        # runs under the file's settings, as in `torchlint check`.
        if not could_match(replace(summarize(self.tree, source), project=project), rules, config.options):
            return  # flake8 has parsed the file already: no syntax check needed
        for diagnostic in lint_source(source, self.filename, config):
            if diagnostic.code == PARSE_ERROR_CODE and not parse_errors:
                continue
            message = " ".join(diagnostic.message.split())
            yield (diagnostic.start.line, diagnostic.start.column - 1, f"{diagnostic.code} {message}", type(self))
