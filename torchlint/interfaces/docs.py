"""Generated docs: the README's rule table, written from the rule units.

    python -m torchlint.interfaces.docs --check     exit 1 when README.md's table is stale
    python -m torchlint.interfaces.docs --write     rewrite it in place

The table sits between ``<!-- rules-table:start -->`` and
``<!-- rules-table:end -->``; nothing else in the file is touched.  Each
rule's full page is ``torchlint explain CODE``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List, Optional, Sequence

from torchlint.ruleapi.registry import all_rules
from torchlint.ruleapi.rule import FixAvailability, RuleClass

START = "<!-- rules-table:start -->"
END = "<!-- rules-table:end -->"
HEADER = ("code", "name", "what it reports", "fix", "default", "torch versions")


class MarkersMissing(ValueError):
    """The file lacks the pair of marker comments around the table."""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def fix_text(rule: RuleClass) -> str:
    """Availability, then what the fix writes and how safe it is."""
    if rule.fix_availability is FixAvailability.NONE:
        return rule.fix_summary or "none"
    availability = "always" if rule.fix_availability is FixAvailability.ALWAYS else "sometimes"
    return f"{availability}; {rule.fix_summary}" if rule.fix_summary else availability


def rules_table(rules: Sequence[RuleClass]) -> str:
    """The Markdown table, one row per rule."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for rule in rules:
        cells = (
            rule.code,
            rule.name,
            rule.summary,
            fix_text(rule),
            "on" if rule.default_enabled else "off",
            str(rule.torch_range),
        )
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def with_table(text: str, table: str) -> str:
    """``text`` with the part between the markers replaced by ``table``."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise MarkersMissing(f"no `{START}` ... `{END}` pair")
    head = text[: start + len(START)]
    return head + "\n" + table + text[end:]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torchlint.interfaces.docs", description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 if the table is stale")
    mode.add_argument("--write", action="store_true", help="rewrite the table in place")
    parser.add_argument("--readme", type=Path, default=Path("README.md"), help="default: README.md")
    args = parser.parse_args(argv)
    try:
        current = args.readme.read_text(encoding="utf-8")
        wanted = with_table(current, rules_table(all_rules()))
    except (OSError, UnicodeDecodeError, MarkersMissing) as error:
        print(f"{args.readme}: {error}", file=sys.stderr)
        return 2
    if wanted == current:
        return 0
    if args.check:
        print(f"{args.readme}: the rule table is stale; run `python -m torchlint.interfaces.docs --write`", file=sys.stderr)
        return 1
    args.readme.write_text(wanted, encoding="utf-8")
    print(f"{args.readme}: rule table rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
