"""Read rule fixtures: expectations, per-fixture settings, expected fixed text."""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Counter as CounterType, List, Optional, Tuple

from torchlint.settings import Settings, settings_from_table

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
_EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>(?:TL\d{3}[\s,]*)+)")
_SETTING = re.compile(r"^#\s*settings:\s*(?P<toml>.+)$")


@dataclass(frozen=True)
class Fixture:
    """One fixture file of a rule folder."""

    path: Path
    code: str

    @property
    def fixed_path(self) -> Path:
        return self.path.with_name(self.path.stem + ".fixed.py")

    @property
    def source(self) -> str:
        return self.path.read_text(encoding="utf-8")

    def expected(self) -> CounterType[Tuple[int, str]]:
        """(line, code) pairs marked with ``# expect: CODE`` comments."""
        found: CounterType[Tuple[int, str]] = Counter()
        for number, line in enumerate(self.source.splitlines(), start=1):
            match = _EXPECT.search(line)
            if match:
                for code in re.findall(r"TL\d{3}", match.group("codes")):
                    found[(number, code)] += 1
        return found

    def settings(self) -> Settings:
        """Only this rule, plus ``# settings: key = value`` lines from the top."""
        lines: List[str] = []
        for line in self.source.splitlines():
            match = _SETTING.match(line)
            if match:
                lines.append(match.group("toml"))
        table = tomllib.loads("\n".join(lines)) if lines else {}
        table.setdefault("select", [self.code])
        return settings_from_table(table, self.path)

    def expected_fixed(self) -> Optional[str]:
        if self.fixed_path.exists():
            return self.fixed_path.read_text(encoding="utf-8")
        return None


def all_fixtures() -> List[Fixture]:
    """Every ``fixtures/TLxxx/*.py`` that is not an expected output."""
    fixtures = []
    for folder in sorted(FIXTURES.glob("TL[0-9][0-9][0-9]")):
        for path in sorted(folder.glob("*.py")):
            if not path.name.endswith(".fixed.py"):
                fixtures.append(Fixture(path, folder.name))
    return fixtures
