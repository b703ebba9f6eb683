"""The rule catalog: every ``Rule`` subclass found in ``torchlint.rules``.

Adding a rule means adding a module to ``rules/``; nothing here changes.
Lookups by selector, name or alias answer from the rules' metadata
(:mod:`torchlint.ruleapi.catalog`) and import no rule; :func:`all_rules` and
:func:`rule_class` import them, for the steps that run rules.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from torchlint.ruleapi.meta import RuleInfo, Severity
from torchlint.ruleapi.catalog import all_rules as all_rules, rule_infos, rules_by_code
from torchlint.model import PARSE_ERROR_CODE as PARSE_ERROR_CODE, PARSE_ERROR_NAME as PARSE_ERROR_NAME

if TYPE_CHECKING:
    from torchlint.ruleapi.rule import RuleClass


_UNDERSCORE_AS_DASH = str.maketrans("_", "-")


def _as_name(key: str) -> str:
    """Rule names as users type them: ``data_parallel`` means ``data-parallel``."""
    return key.strip().lower().translate(_UNDERSCORE_AS_DASH)


def rule_class(code: str) -> "RuleClass":
    """The class of the rule with this code (imports the rules)."""
    return rules_by_code()[code]


def info_by_code_or_name(key: str) -> Optional[RuleInfo]:
    """Look a rule up by its code (case-insensitive) or its name; an alias
    finds the first rule that declares it."""
    for rule in rule_infos():
        if key.upper() == rule.code or _as_name(key) == rule.name:
            return rule
    carrying = by_alias(key)
    return carrying[0] if carrying else None


def by_code_or_name(key: str) -> "Optional[RuleClass]":
    """The class of the rule :func:`info_by_code_or_name` finds."""
    info = info_by_code_or_name(key)
    return rule_class(info.code) if info is not None else None


def by_alias(alias: str) -> Tuple[RuleInfo, ...]:
    """The rules that declare ``alias`` (another tool's code), by code."""
    upper = alias.strip().upper()
    return tuple(rule for rule in rule_infos() if upper in rule.aliases)


# An alias prefix is letters and at least one digit (``TOR1``), so a
# selector such as a rule name never matches an alias by accident.
_ALIAS_PREFIX = re.compile(r"^[A-Z]+[0-9]+$")


def suggest(selector: str) -> Optional[str]:
    """The rule code or name closest to a selector that matched nothing."""
    key = selector.strip()
    codes = [rule.code for rule in rule_infos()] + sorted({a for rule in rule_infos() for a in rule.aliases})
    names = [rule.name for rule in rule_infos()]
    import difflib  # only here: not on every run's import path
    close = difflib.get_close_matches(key.upper(), codes, n=1, cutoff=0.6) or difflib.get_close_matches(
        _as_name(key), names, n=1, cutoff=0.6
    )
    return close[0] if close else None


def expand_selector(selector: str) -> Optional[List[RuleInfo]]:
    """Rules matched by ``ALL``, a code prefix (``TL3``), a name, an alias
    (``TOR102``) or an alias prefix (``TOR1``); None if nothing."""
    selector = selector.strip()
    if selector.upper() == "ALL":
        return list(rule_infos())
    named = [rule for rule in rule_infos() if rule.name == _as_name(selector)]
    if named:
        return named
    upper = selector.upper()
    aliased = list(by_alias(upper))
    if aliased:
        return aliased
    if _ALIAS_PREFIX.match(upper) and not upper.startswith("TL"):
        return [rule for rule in rule_infos() if any(a.startswith(upper) for a in rule.aliases)] or None
    if not upper.startswith("TL") or upper == "TL":
        return None
    matched = [rule for rule in rule_infos() if rule.code.startswith(upper)]
    return matched or None


def known_codes() -> Sequence[str]:
    """Every code, including the parse-error pseudo-rule."""
    return [PARSE_ERROR_CODE, *(rule.code for rule in rule_infos())]


def severity_of(code: str) -> Severity:
    """The severity of a code's findings; parse errors and unknown codes are errors."""
    rule = info_by_code_or_name(code) if code != PARSE_ERROR_CODE else None
    return rule.severity if rule is not None else Severity.ERROR


def specificity(selector: str) -> int:
    """How specific a selector is, for Ruff's rule that the most specific
    one wins: ``ALL`` least, a whole code or name most, a prefix by its length."""
    if selector.upper() == "ALL":
        return 0
    if info_by_code_or_name(selector) is not None:
        return 100
    return len(selector)
