"""The rules' metadata kept as data, so that a run answered from the cache
imports neither libcst nor any rule."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Iterator

import pytest

from torchlint.ruleapi import catalog
from torchlint.ruleapi.meta import RuleInfo
from torchlint.ruleapi.catalog import info_of, rule_infos, tool_fingerprint
from torchlint.ruleapi.registry import all_rules


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh metadata store, and no metadata remembered by this process."""
    folder = tmp_path / "catalog"
    monkeypatch.setenv("TORCHLINT_CATALOG_DIR", str(folder))
    rule_infos.cache_clear()
    yield folder
    rule_infos.cache_clear()


def _expected() -> tuple[RuleInfo, ...]:
    return tuple(info_of(rule) for rule in all_rules())


def _same(left: tuple[RuleInfo, ...], right: tuple[RuleInfo, ...]) -> bool:
    # ``options`` is left out of a RuleInfo's equality (a dict); compare it too.
    return left == right and [dict(a.options) for a in left] == [dict(b.options) for b in right]


def test_metadata_matches_the_rule_classes(store: Path) -> None:
    infos = rule_infos()
    assert _same(infos, _expected())
    assert [info.code for info in infos] == sorted(info.code for info in infos)
    # What a rule asks across files is carried over exactly.
    for rule, info in zip(all_rules(), infos):
        assert info.queries == tuple(rule.project_queries)
    assert any(info.queries for info in infos)


def test_stored_metadata_is_read_back_identically(store: Path) -> None:
    first = rule_infos()
    entry = store / f"rules-{tool_fingerprint()}.json"
    assert entry.is_file()
    rule_infos.cache_clear()
    # Read from the store this time: the classes would give the same answer.
    assert _same(rule_infos(), first)
    assert _same(catalog._from_json(entry.read_text(encoding="utf-8"), tool_fingerprint()), first)


@pytest.mark.parametrize("content", ["not json", "{}", json.dumps({"fingerprint": "other", "rules": []}),
                                     json.dumps({"fingerprint": "{fp}", "rules": [{"code": "TL101"}]})])
def test_a_damaged_or_stale_store_is_rebuilt(store: Path, content: str) -> None:
    entry = store / f"rules-{tool_fingerprint()}.json"
    store.mkdir(parents=True)
    entry.write_text(content.replace("{fp}", tool_fingerprint()), encoding="utf-8")
    assert _same(rule_infos(), _expected())
    assert json.loads(entry.read_text(encoding="utf-8"))["fingerprint"] == tool_fingerprint()


def test_a_changed_build_writes_new_metadata_and_drops_only_day_old_metadata(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rule_infos()
    recent = store / f"rules-{tool_fingerprint()}.json"
    stale = store / "rules-aaaaaaaaaaaaaaaa.json"
    stale.write_text("{}", encoding="utf-8")
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(stale, (two_days_ago, two_days_ago))
    rule_infos.cache_clear()
    monkeypatch.setattr(catalog, "tool_fingerprint", lambda: "0123456789abcdef")
    rule_infos()
    assert (store / "rules-0123456789abcdef.json").is_file()
    assert recent.is_file()  # another install may still use it
    assert not stale.exists()


def test_an_unwritable_store_only_costs_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("TORCHLINT_CATALOG_DIR", str(blocker / "below"))
    rule_infos.cache_clear()
    try:
        assert _same(rule_infos(), _expected())
    finally:
        rule_infos.cache_clear()


_PROBE = textwrap.dedent("""
    import sys
    from torchlint.interfaces.cli import main
    sys.argv = ["torchlint", *sys.argv[1:]]
    try:
        main()
    except SystemExit as exit:
        code = exit.code
    heavy = sorted(name for name in sys.modules
                   if name == "libcst" or name.startswith(("libcst.", "torchlint.rules.", "rules."))
                   or name in ("torchlint.lint.engine", "torchlint.ruleapi.rule", "torchlint.lint.fixer", "multiprocessing",
                               # the index's builders: a run answered from the cache builds no index
                               "torchlint.analysis.queries", "torchlint.analysis.imports",
                               "torchlint.analysis.summaries", "torchlint.analysis.gradmode",
                               # nor the index itself (a run that builds none passes None for it)
                               "torchlint.analysis.index",
                               # nor what Python files and the default output never need
                               "torchlint.jobscript.parse", "torchlint.report.statistics"))
    print("HEAVY", ",".join(heavy), file=sys.stderr)
    sys.exit(code)
""")


def _probe(folder: Path, store: Path, *args: str) -> "subprocess.CompletedProcess[str]":
    env = {"TORCHLINT_CATALOG_DIR": str(store), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-c", _PROBE, *args], cwd=folder, capture_output=True, text=True,
                          env=env, check=False, timeout=120)


def _heavy(result: "subprocess.CompletedProcess[str]") -> list[str]:
    line = [line for line in result.stderr.splitlines() if line.startswith("HEAVY")][-1]
    return [name for name in line[len("HEAVY "):].split(",") if name]


def test_a_cache_hit_imports_neither_libcst_nor_any_rule(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import torch\nfrom torch import nn\n\nmodel = nn.DataParallel(net)\n",
                                       encoding="utf-8")
    store = tmp_path / "store"
    first = _probe(tmp_path, store, "check", "train.py", "--output-format", "concise")
    assert first.returncode == 1, first.stderr
    assert "libcst" in _heavy(first)  # the first run lints the file
    second = _probe(tmp_path, store, "check", "train.py", "--output-format", "concise")
    assert second.returncode == 1, second.stderr
    assert second.stdout == first.stdout
    assert "TL501" in second.stdout
    assert _heavy(second) == []


def test_a_warm_run_over_a_folder_in_the_default_format_imports_no_analysis_of_the_index(tmp_path: Path) -> None:
    """The run benchmarks time: a folder, the full report, every file a cache hit."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text("import torch\nfrom torch import nn\n\nmodel = nn.DataParallel(net)\n",
                                      encoding="utf-8")
    (project / "clean.py").write_text("import torch\n\n\ndef step(x):\n    return torch.relu(x)\n",
                                      encoding="utf-8")
    store = tmp_path / "store"
    first = _probe(project, store, "check", ".")
    assert "torchlint.analysis.index" in _heavy(first)  # the first run builds the index
    second = _probe(project, store, "check", ".")
    assert second.returncode == 1, second.stderr
    assert second.stdout == first.stdout and "TL501" in second.stdout
    assert _heavy(second) == []


def test_a_rule_selected_by_a_typo_is_refused_without_importing_rules(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("x = 1\n", encoding="utf-8")
    store = tmp_path / "store"
    _probe(tmp_path, store, "check", "train.py")  # builds the metadata
    result = _probe(tmp_path, store, "check", "train.py", "--select", "TL1O1")
    assert result.returncode == 2
    assert "did you mean `TL101`?" in result.stderr
    assert _heavy(result) == []
