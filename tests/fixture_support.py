"""Read rule fixtures: expectations, per-fixture settings, expected fixed text."""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from contextlib import contextmanager
from typing import Counter as CounterType, Iterator, List, Optional, Tuple

from dataclasses import replace

from torchlint.analysis.index import EMPTY, ProjectIndex
from torchlint.lint.engine import lint_source
from torchlint.lint.fixer import FixResult, fix_text
from torchlint.lint.jobscripts import fix_job_script, is_job_script, lint_job_script
from torchlint.model import Diagnostic
from torchlint.lint.runner import prepare_project
from torchlint.lint.settings import Settings, settings_from_table

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
    project: Optional[Path] = None
    """For a file of a project fixture (``fixtures/TLxxx/<name>_project/``):
    the folder, whose files are indexed together (cross-file facts)."""

    @property
    def name(self) -> str:
        """The path under the rule's folder (``a.py``, ``callers_project/main.py``)."""
        return self.path.relative_to(FIXTURES / self.code).as_posix()

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


PROJECT_SUFFIX = "_project"
"""A subfolder named ``<name>_project`` is one project: each of its ``.py``
files (at any depth, ``__init__.py`` making packages) is a fixture linted
with the cross-file index of the whole folder."""


def _is_fixture_file(path: Path) -> bool:
    return path.is_file() and path.suffix in FIXTURE_SUFFIXES and not path.stem.endswith(".fixed")


def all_fixtures() -> List[Fixture]:
    """Every ``fixtures/TLxxx/*.py`` (and batch script, whose launched code
    lives in a subfolder) that is not an expected output, and every file of
    the rule's project fixtures."""
    fixtures = []
    for folder in sorted(FIXTURES.glob("TL[0-9][0-9][0-9]")):
        for path in sorted(folder.iterdir()):
            if _is_fixture_file(path):
                fixtures.append(Fixture(path, folder.name))
            elif path.is_dir() and path.name.endswith(PROJECT_SUFFIX):
                fixtures.extend(Fixture(p, folder.name, path) for p in sorted(path.rglob("*")) if _is_fixture_file(p))
    return fixtures


def _project_index(fixture: Fixture) -> ProjectIndex:
    """The index of the fixture's project (none for a single-file fixture),
    as a run over that folder builds it."""
    if fixture.project is None:
        return EMPTY
    files = sorted(p for p in fixture.project.rglob("*.py") if not p.stem.endswith(".fixed"))
    return prepare_project(files, lambda path: Fixture(path, fixture.code, fixture.project).settings())


def lint_fixture(fixture: Fixture, source: str) -> List[Diagnostic]:
    """Lint ``source`` as the fixture's file: a batch script or Python."""
    config = fixture.settings().lint_config(fixture.path)
    if is_job_script(fixture.path, source):
        return lint_job_script(source, str(fixture.path), config, fixture.path)
    return lint_source(source, str(fixture.path), replace(config, project=_project_index(fixture)))


def fix_fixture(fixture: Fixture, source: str) -> FixResult:
    """Fix ``source`` (unsafe fixes too) as the fixture's file."""
    config = fixture.settings().lint_config(fixture.path)
    if is_job_script(fixture.path, source):
        return fix_job_script(source, str(fixture.path), config, unsafe=True, file=fixture.path)
    return fix_text(source, str(fixture.path), replace(config, project=_project_index(fixture)), unsafe=True)
