"""Generated docs, written from the rule units: the README's rule table and
one page per rule under ``docs/rules/``.

    python -m torchlint.interfaces.docs --check     exit 1 when a generated part is stale
    python -m torchlint.interfaces.docs --write     rewrite what is stale

The table sits between ``<!-- rules-table:start -->`` and
``<!-- rules-table:end -->``; nothing else in the README is touched.  A rule's
page, ``docs/rules/<CODE>.md``, is the Markdown ``torchlint explain CODE
--format markdown`` prints; a page whose rule no longer exists is stale too.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from torchlint.ruleapi.registry import all_rules
from torchlint.ruleapi.rule import FixAvailability, RuleClass

START = "<!-- rules-table:start -->"
END = "<!-- rules-table:end -->"
HEADER = ("code", "name", "what it reports", "fix", "default", "torch versions")
PAGE_NAME = re.compile(r"^TL\d{3}\.md$")
"""The names the generator owns in the pages folder; other files there are left alone."""


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


def rule_pages(rules: Sequence[RuleClass]) -> Dict[str, str]:
    """File name → page, one per rule: the text ``torchlint explain`` prints as Markdown."""
    return {f"{rule.code}.md": rule.documentation() for rule in rules}


@dataclass(frozen=True)
class PageChanges:
    """How the pages folder differs from the rules: pages to write, pages to remove."""

    write: Tuple[Tuple[str, str], ...]
    remove: Tuple[str, ...]


def page_changes(folder: Path, pages: Dict[str, str]) -> PageChanges:
    """Compare the folder with ``pages``; only names :data:`PAGE_NAME` matches are ours."""
    present = {path.name for path in folder.iterdir() if path.is_file()} if folder.is_dir() else set()
    write = []
    for name, text in sorted(pages.items()):
        path = folder / name
        current = path.read_text(encoding="utf-8") if name in present else None
        if current != text:
            write.append((name, text))
    remove = sorted(name for name in present if PAGE_NAME.match(name) and name not in pages)
    return PageChanges(tuple(write), tuple(remove))


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torchlint.interfaces.docs", description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 if a generated part is stale")
    mode.add_argument("--write", action="store_true", help="rewrite what is stale")
    parser.add_argument("--readme", type=Path, default=Path("README.md"), help="default: README.md")
    parser.add_argument("--pages", type=Path, default=Path("docs/rules"),
                        help="the folder of the rule pages (default: docs/rules)")
    args = parser.parse_args(argv)
    rules = all_rules()
    try:
        current = args.readme.read_text(encoding="utf-8")
        wanted = with_table(current, rules_table(rules))
        changes = page_changes(args.pages, rule_pages(rules))
    except (OSError, UnicodeDecodeError, MarkersMissing) as error:
        print(f"{args.readme}: {error}", file=sys.stderr)
        return 2
    stale = ([f"{args.readme}: the rule table"] if wanted != current else []) + [
        f"{args.pages / name}" for name, _ in changes.write
    ] + [f"{args.pages / name} (no such rule)" for name in changes.remove]
    if not stale:
        return 0
    if args.check:
        for item in stale:
            print(f"stale: {item}", file=sys.stderr)
        print("run `python -m torchlint.interfaces.docs --write`", file=sys.stderr)
        return 1
    try:
        if wanted != current:
            args.readme.write_text(wanted, encoding="utf-8")
        args.pages.mkdir(parents=True, exist_ok=True)
        for name, text in changes.write:
            (args.pages / name).write_text(text, encoding="utf-8")
        for name in changes.remove:
            (args.pages / name).unlink()
    except OSError as error:
        print(f"{error}", file=sys.stderr)
        return 2
    for item in stale:
        print(f"rewritten: {item}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
