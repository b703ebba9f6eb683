"""Read rule fixtures: expectations, per-fixture settings, expected fixed text."""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Counter as CounterType, List, Optional, Tuple

from torchlint.engine import lint_source
from torchlint.fixer import FixResult, fix_text
from torchlint.jobscript.lint import fix_job_script, is_job_script, lint_job_script
from torchlint.model import Diagnostic
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
        return self.path.with_name(self.path.stem + ".fixed" + self.path.suffix)

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


FIXTURE_SUFFIXES = (".py", ".sh", ".slurm", ".sbatch", ".job")


def all_fixtures() -> List[Fixture]:
    """Every ``fixtures/TLxxx/*.py`` (and batch script, whose launched code
    lives in a subfolder) that is not an expected output."""
    fixtures = []
    for folder in sorted(FIXTURES.glob("TL[0-9][0-9][0-9]")):
        for path in sorted(folder.iterdir()):
            if path.suffix in FIXTURE_SUFFIXES and not path.stem.endswith(".fixed"):
                fixtures.append(Fixture(path, folder.name))
    return fixtures


def lint_fixture(fixture: Fixture, source: str) -> List[Diagnostic]:
    """Lint ``source`` as the fixture's file: a batch script or Python."""
    config = fixture.settings().lint_config(fixture.path)
    if is_job_script(fixture.path, source):
        return lint_job_script(source, str(fixture.path), config, fixture.path)
    return lint_source(source, str(fixture.path), config)


def fix_fixture(fixture: Fixture, source: str) -> FixResult:
    """Fix ``source`` (unsafe fixes too) as the fixture's file."""
    config = fixture.settings().lint_config(fixture.path)
    if is_job_script(fixture.path, source):
        return fix_job_script(source, str(fixture.path), config, unsafe=True, file=fixture.path)
    return fix_text(source, str(fixture.path), config, unsafe=True)
