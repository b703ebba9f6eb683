"""How much of TorchFix's own test expectations torchlint meets.

TorchFix (https://github.com/pytorch-labs/torchfix, archived) keeps golden
tests in its repository, not in its PyPI package: ``tests/fixtures/<group>/
checker/<name>.py`` with the expected findings in ``<name>.txt``
(``line:col CODE message``), and ``codemod/<name>.in.py`` with the fixed
text in ``<name>.out.py``.  This script runs torchlint over a checkout of
that repository and reports, for every expected finding, whether torchlint
reports a rule that declares the TorchFix code as an alias on that line,
with the target torch version at which TorchFix's finding applies; and for
every codemod, whether torchlint's fixes (unsafe ones included) give the
same text.  Nothing of TorchFix is copied into this repository:

    git clone https://github.com/pytorch-labs/torchfix /tmp/torchfix
    python bench/torchfix_conformance.py /tmp/torchfix

Exit status: 0 when the share of expected findings met is at least
``--target`` (default 0.95) of those whose code maps to a rule in this
checkout, 1 below it, 2 when the path holds no fixtures.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Set, Tuple

import torchlint
from torchlint.ruleapi.registry import all_rules, by_alias
from torchlint.lint.settings import Settings, settings_from_table

_EXPECTED = re.compile(r"^(?P<line>\d+):(?P<col>\d+) (?P<code>TOR\d{3}) (?P<message>.*)$")

# The target torch version at which a TorchFix code's findings apply, where
# torchlint gates the rule by version and TorchFix does not: TOR102 fires on
# every bare `torch.load`, which is only unsafe before torch 2.6.
TORCH_VERSION: Mapping[str, str] = {"TOR102": "2.5"}

# Rule options that make torchlint report what TorchFix reports: TorchFix
# flags documentation-only deprecations (torch.norm, nn.UpsamplingNearest2d),
# which torchlint keeps behind an option.
RULE_OPTIONS: Mapping[str, Mapping[str, object]] = {"deprecated-torch-api": {"documentation-only": True}}


@dataclass(frozen=True)
class Expected:
    path: Path
    line: int
    code: str
    message: str


@dataclass
class Tally:
    met: List[Expected] = field(default_factory=list)
    missed: List[Tuple[Expected, str]] = field(default_factory=list)
    unmapped: List[Expected] = field(default_factory=list)
    extra: List[str] = field(default_factory=list)


def _settings(selectors: Sequence[str], torch_version: Optional[str], root: Path) -> Settings:
    table: Dict[str, object] = {"select": list(selectors), **{k: dict(v) for k, v in RULE_OPTIONS.items()}}
    if torch_version is not None:
        table["torch-version"] = torch_version
    return settings_from_table(table, root / "torchlint.toml")


def read_expected(txt: Path, source: Path) -> List[Expected]:
    found = []
    for line in txt.read_text(encoding="utf-8").splitlines():
        match = _EXPECTED.match(line.strip())
        if match:
            found.append(Expected(source, int(match["line"]), match["code"], match["message"]))
    return found


def check_file(source: Path, expected: Sequence[Expected], root: Path, tally: Tally) -> None:
    text = source.read_text(encoding="utf-8")
    reported: Set[Tuple[int, str]] = set()
    for code in sorted({e.code for e in expected}):
        if not by_alias(code):
            continue
        settings = _settings([code], TORCH_VERSION.get(code), root)
        for diagnostic in torchlint.check_source(text, str(source), settings):
            reported.add((diagnostic.start.line, diagnostic.code))
    wanted: Counter[Tuple[int, str]] = Counter()
    for item in expected:
        rules = by_alias(item.code)
        if not rules:
            tally.unmapped.append(item)
            continue
        codes = {rule.code for rule in rules}
        wanted.update((item.line, code) for code in codes)
        if any((item.line, code) in reported for code in codes):
            tally.met.append(item)
        else:
            lines = sorted(line for line, code in reported if code in codes)
            tally.missed.append((item, f"{'/'.join(sorted(codes))} reports lines {lines}" if lines
                                 else f"{'/'.join(sorted(codes))} reports nothing here"))
    for line, code in sorted(reported - set(wanted)):
        tally.extra.append(f"{source.name}:{line} {code}")


def check_codemod(source: Path, root: Path, selectors: Sequence[str]) -> Optional[str]:
    """None when torchlint's fixes give the expected text, else a short diff."""
    out = source.with_name(source.name[: -len(".in.py")] + ".out.py")
    if not out.exists():
        return None
    text = source.read_text(encoding="utf-8")
    result = torchlint.fix_source(text, str(source), _settings(selectors, None, root), unsafe=True)
    expected = out.read_text(encoding="utf-8")
    if result.source == expected:
        return None
    diff = difflib.unified_diff(expected.splitlines(), result.source.splitlines(), "torchfix", "torchlint",
                                lineterm="", n=0)
    return "\n".join(f"      {line}" for line in list(diff)[2:14])


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("torchfix", type=Path, help="a checkout of github.com/pytorch-labs/torchfix")
    parser.add_argument("--target", type=float, default=0.95)
    args = parser.parse_args(argv)
    fixtures = args.torchfix / "tests" / "fixtures"
    checkers = sorted(fixtures.glob("*/checker/*.py"))
    if not checkers:
        print(f"{fixtures}: no TorchFix checker fixtures here (clone github.com/pytorch-labs/torchfix)",
              file=sys.stderr)
        return 2
    tally = Tally()
    for source in checkers:
        txt = source.with_suffix(".txt")
        if txt.exists():
            check_file(source, read_expected(txt, source), fixtures, tally)

    aliases = sorted({alias for rule in all_rules() for alias in rule.aliases})
    codemods = sorted(fixtures.glob("*/codemod/*.in.py"))
    codemod_misses = [(path, check_codemod(path, fixtures, aliases)) for path in codemods]
    codemod_misses = [(path, diff) for path, diff in codemod_misses if diff is not None]

    mapped = len(tally.met) + len(tally.missed)
    total = mapped + len(tally.unmapped)
    share = len(tally.met) / mapped if mapped else 0.0
    print(f"TorchFix checker fixtures: {len(checkers)} files, {total} expected findings")
    print(f"  codes with a torchlint rule here: {mapped} findings, met {len(tally.met)} ({share:.1%})")
    print(f"  met over all expected findings:   {len(tally.met)}/{total} ({len(tally.met) / max(total, 1):.1%})")
    by_code = Counter(item.code for item, _ in tally.missed)
    for item, why in tally.missed:
        print(f"  MISS {item.path.parent.parent.name}/{item.path.name}:{item.line} {item.code} "
              f"({item.message[:70]}): {why}")
    unmapped = Counter(item.code for item in tally.unmapped)
    if unmapped:
        print("  no torchlint rule declares: " + ", ".join(f"{code} ({n})" for code, n in sorted(unmapped.items())))
    if by_code:
        print("  misses by code: " + ", ".join(f"{code} {n}" for code, n in sorted(by_code.items())))
    if tally.extra:
        print(f"  torchlint also reports (not in TorchFix's expectations): {', '.join(tally.extra)}")
    print(f"TorchFix codemod fixtures: {len(codemods)}, same text after torchlint's fixes: "
          f"{len(codemods) - len(codemod_misses)}")
    for path, diff in codemod_misses:
        print(f"  DIFFERS {path.parent.parent.name}/{path.name} (- TorchFix's .out.py, + torchlint):\n{diff}")
    return 0 if share >= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
