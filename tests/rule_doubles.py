"""Small rules for the tests of the machinery.

The command line, the reports, the cache, suppressions, the baseline, the
editor and the flake8 plugin are tested with these rules in place of the real
ones (:func:`torchlint.ruleapi.catalog.rules_replaced`), so that changing a
real rule's wording or behaviour breaks only that rule's own tests.

    with rules_replaced(DOUBLES): ...           # in this process
    python tests/rule_doubles.py -m MODULE ARGS   # a child process: MODULE as ``python -m``

Each rule reports one word of the source, resolved without imports:

- TL991 ``boom()``: a call of ``boom``, with a safe fix to ``calm()``;
- TL992 ``zap()``: a call of ``zap``, with an unsafe fix to ``zip()``;
- TL993 ``bang``: the name ``bang`` used anywhere, no fix, off by default.
"""

from __future__ import annotations

import runpy
import sys
from typing import List, Optional, Sequence

import libcst as cst

from torchlint.model import Applicability
from torchlint.ruleapi.catalog import rules_replaced
from torchlint.ruleapi.rule import Example, FixAvailability, Rule, RuleClass


class _RenamedCall(Rule):
    """Reports calls of ``old`` and renames them to ``new``."""

    old = ""
    new = ""
    applicability = Applicability.SAFE

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == self.old:
            self.report(
                node,
                f"test message: `{self.old}()` is called",
                fix=self.replace(node.func, cst.Name(self.new), self.applicability, f"Call `{self.new}()`"),
                hint=f"test hint: call `{self.new}()`",
            )


class CallsBoom(_RenamedCall):
    """## What it does
    Reports `boom()` (a rule of the tests).

    ## Why is this bad?
    It is a test.

    ## Example
    ```python
    boom()
    ```

    Use instead:
    ```python
    calm()
    ```

    ## Fix safety
    Safe.
    """

    code = "TL991"
    name = "test-boom"
    summary = "test rule: `boom()` is called"
    fix_availability = FixAvailability.ALWAYS
    fix_summary = "safe: `calm()`"
    trigger_words = ("boom",)
    old, new = "boom", "calm"
    valid = ("calm()\n", "x.boom()\n")
    invalid = (Example("boom()\n", fixed="calm()\n"),)


class CallsZap(_RenamedCall):
    """## What it does
    Reports `zap()` (a rule of the tests); its fix is unsafe.
    """

    code = "TL992"
    name = "test-zap"
    summary = "test rule: `zap()` is called"
    fix_availability = FixAvailability.ALWAYS
    fix_summary = "unsafe: `zip()`"
    trigger_words = ("zap",)
    old, new, applicability = "zap", "zip", Applicability.UNSAFE
    invalid = (Example("zap()\n", fixed="zip()\n"),)


class UsesBang(Rule):
    """## What it does
    Reports the name `bang` (a rule of the tests); off by default, no fix.
    """

    code = "TL993"
    name = "test-bang"
    summary = "test rule: the name `bang` is used"
    default_enabled = False
    trigger_words = ("bang",)
    invalid = (Example("bang\n"),)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == "bang":
            self.report(node, "test message: `bang` is used")


DOUBLES: Sequence[RuleClass] = (CallsBoom, CallsZap, UsesBang)


def main(argv: Optional[List[str]] = None) -> None:
    """``-m MODULE ARGS``: run MODULE as ``python -m`` would, with :data:`DOUBLES` as the rules."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2 or args[0] != "-m":
        raise SystemExit("usage: rule_doubles.py -m MODULE [ARGS...]")
    sys.argv = [args[1], *args[2:]]
    # The classes of the module `rule_doubles`, not of `__main__` (which
    # run_module replaces): reports find a rule's page through its module.
    from rule_doubles import DOUBLES as doubles

    with rules_replaced(doubles):
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
