"""The cache never takes over the project, `clean` removes only torchlint's
own files, and a cache entry of any shape is at worst a miss."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

import pytest

from conftest import run_in_process

from torchlint.analysis.index import EMPTY
from torchlint.lint.cache import Cache, EntryKey
from torchlint.lint.runner import cached_run, lint_file
from torchlint.lint.settings import Settings

FINDING = "import torch.nn as nn\n\nmodel = nn.DataParallel(net)\n"
SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"


def cli(args: Sequence[str], cwd: Path, env: Optional[Dict[str, str]] = None) -> "subprocess.CompletedProcess[str]":
    environment: Dict[str, Optional[str]] = {"TORCHLINT_CACHE_DIR": None, "TORCHLINT_OUTPUT_FORMAT": None}
    environment.update(env or {})
    return run_in_process(args, cwd, env=environment)


def user_project(root: Path) -> Dict[Path, bytes]:
    """A project with a fake git folder and user files; returns every file's bytes."""
    files = {
        root / ".git" / "HEAD": b"ref: refs/heads/main\n",
        root / ".git" / "config": b"[core]\n",
        root / "train.py": FINDING.encode(),
        root / "notes.txt": b"my notes\n",
        root / "api" / "server.py": b"x = 1\n",
        root / "api" / "v1" / "routes.py": b"y = 2\n",
    }
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return files


def snapshot(root: Path) -> Dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def assert_one_line_error(result: "subprocess.CompletedProcess[str]", *names: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    for name in names:
        assert name in lines[0]


@pytest.mark.parametrize("command", ["check", "fix"])
def test_empty_cache_dir_variable_is_refused(tmp_path: Path, command: str) -> None:
    user_project(tmp_path)
    before = snapshot(tmp_path)
    result = cli([command, "."], tmp_path, {"TORCHLINT_CACHE_DIR": ""})
    assert_one_line_error(result, "TORCHLINT_CACHE_DIR")
    assert snapshot(tmp_path) == before
    assert not (tmp_path / ".gitignore").exists() and not (tmp_path / "CACHEDIR.TAG").exists()
    # The findings are still found on the next run.
    assert cli(["check", ".", "--no-cache"], tmp_path).returncode == 1


@pytest.mark.parametrize("value", ["", ".", "..", "../.."])
def test_cache_dir_that_is_or_contains_the_working_tree_is_refused(tmp_path: Path, value: str) -> None:
    user_project(tmp_path)
    work = tmp_path / "api" / "v1" if value == "../.." else tmp_path / "api" if value == ".." else tmp_path
    before = snapshot(tmp_path)
    result = cli(["check", ".", "--cache-dir", value], work)
    assert_one_line_error(result, "--cache-dir")
    assert snapshot(tmp_path) == before


def test_cache_dir_holding_other_files_is_refused(tmp_path: Path) -> None:
    user_project(tmp_path)
    before = snapshot(tmp_path)
    result = cli(["check", "train.py", "--cache-dir", "api"], tmp_path)
    assert_one_line_error(result, "--cache-dir", "api")
    assert snapshot(tmp_path) == before
    # The sources in api/ are still linted afterwards (no `*` .gitignore was planted there).
    assert cli(["check", ".", "--no-cache", "--show-files"], tmp_path).stdout.count("api/") == 2


def test_folder_whose_only_entry_is_named_like_the_cache_format_is_refused(tmp_path: Path) -> None:
    user_project(tmp_path)
    (tmp_path / "api" / "server.py").unlink()  # api/ now holds only the user's v1/ folder
    before = snapshot(tmp_path)
    assert_one_line_error(cli(["check", "train.py", "--cache-dir", "api"], tmp_path), "--cache-dir", "api")
    assert_one_line_error(cli(["clean", "--cache-dir", "api"], tmp_path), "--cache-dir", "api")
    assert snapshot(tmp_path) == before


def test_cache_dir_variable_pointing_at_a_shared_folder_is_refused(tmp_path: Path) -> None:
    user_project(tmp_path / "project")
    home_cache = tmp_path / "home" / ".cache"
    (home_cache / "pip").mkdir(parents=True)
    (home_cache / "pip" / "wheel.whl").write_bytes(b"wheel")
    before = snapshot(tmp_path)
    result = cli(["check", "."], tmp_path / "project", {"TORCHLINT_CACHE_DIR": str(home_cache)})
    assert_one_line_error(result, "TORCHLINT_CACHE_DIR")
    assert snapshot(tmp_path) == before


def test_a_fresh_or_empty_cache_dir_is_used(tmp_path: Path) -> None:
    user_project(tmp_path)
    (tmp_path / "empty").mkdir()
    for folder in ("empty", "new/nested"):
        result = cli(["check", ".", "--cache-dir", folder, "--exclude", "empty,new"], tmp_path)
        assert result.returncode == 1, result.stderr
        tag = (tmp_path / folder / "CACHEDIR.TAG").read_text().splitlines()
        assert tag[0] == SIGNATURE and "torchlint" in tag[1]
        again = cli(["check", ".", "--cache-dir", folder, "--exclude", "empty,new"], tmp_path)
        assert again.returncode == 1 and again.stdout == result.stdout


def test_clean_keeps_a_folder_that_is_not_torchlints(tmp_path: Path) -> None:
    user_project(tmp_path)
    before = snapshot(tmp_path)
    result = cli(["clean", "--cache-dir", "api"], tmp_path)  # api/ has a v1/ child
    assert_one_line_error(result, "api")
    assert snapshot(tmp_path) == before


def test_clean_with_variable_pointing_at_a_shared_folder_removes_nothing(tmp_path: Path) -> None:
    home_cache = tmp_path / "home" / ".cache"
    (home_cache / "pip").mkdir(parents=True)
    (home_cache / "pip" / "wheel.whl").write_bytes(b"wheel")
    (home_cache / "v1").mkdir()
    (home_cache / "v1" / "data").write_bytes(b"someone else's")
    (tmp_path / "work").mkdir()
    before = snapshot(tmp_path)
    result = cli(["clean"], tmp_path / "work", {"TORCHLINT_CACHE_DIR": str(home_cache)})
    assert_one_line_error(result, "TORCHLINT_CACHE_DIR")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("environment, args", [({"TORCHLINT_CACHE_DIR": ""}, []), ({}, ["--cache-dir", ""]),
                                               ({}, ["--cache-dir", "."])])
def test_clean_refuses_the_working_tree(tmp_path: Path, environment: Dict[str, str], args: Sequence[str]) -> None:
    user_project(tmp_path)
    # Even a project that an old torchlint turned into a cache keeps its files.
    (tmp_path / "CACHEDIR.TAG").write_text(SIGNATURE + "\n# This file is a cache directory tag created by torchlint.\n")
    before = snapshot(tmp_path)
    result = cli(["clean", *args], tmp_path, environment)
    assert_one_line_error(result, "TORCHLINT_CACHE_DIR" if environment else "--cache-dir")
    assert snapshot(tmp_path) == before


def test_clean_removes_only_torchlints_entries(tmp_path: Path) -> None:
    user_project(tmp_path)
    assert cli(["check", "."], tmp_path).returncode == 1
    cache = tmp_path / ".torchlint_cache"
    assert (cache / "v2").is_dir()
    (cache / "v1").mkdir()  # an older torchlint's entries
    (cache / "v1" / "entry.json").write_bytes(b"{}")
    (cache / "mine.txt").write_bytes(b"put here by the user")
    (cache / "v9").mkdir()
    (cache / "v9" / "keep").write_bytes(b"not a folder torchlint ever wrote")
    result = cli(["clean"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in cache.iterdir()) == ["mine.txt", "v9"]
    assert (cache / "v9" / "keep").read_bytes() == b"not a folder torchlint ever wrote"
    assert (tmp_path / ".git" / "HEAD").read_bytes() == b"ref: refs/heads/main\n"


def test_clean_leaves_a_user_gitignore_and_another_tools_tag(tmp_path: Path) -> None:
    other = tmp_path / "other-cache"
    (other / "v1").mkdir(parents=True)
    (other / "CACHEDIR.TAG").write_text(SIGNATURE + "\n# created by some other tool\n")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "ok.py").write_text("x = 1\n")
    before = snapshot(tmp_path)
    assert_one_line_error(cli(["clean", "--cache-dir", str(other)], tmp_path / "work"), "other-cache")
    assert snapshot(tmp_path) == before

    assert cli(["check", ".", "--cache-dir", "c", "--exclude", "c"], tmp_path / "work").returncode == 0
    (tmp_path / "work" / "c" / ".gitignore").write_text("*\n!important\n")
    assert cli(["clean", "--cache-dir", "c"], tmp_path / "work").returncode == 0
    assert [p.name for p in (tmp_path / "work" / "c").iterdir()] == [".gitignore"]


def test_clean_removes_a_pure_cache_folder(tmp_path: Path) -> None:
    user_project(tmp_path)
    before = snapshot(tmp_path)
    assert cli(["check", "."], tmp_path).returncode == 1
    result = cli(["clean"], tmp_path)
    assert result.returncode == 0 and "Removed" in result.stderr
    assert not (tmp_path / ".torchlint_cache").exists()
    assert snapshot(tmp_path) == before
    assert cli(["clean"], tmp_path).returncode == 0  # nothing to clean is fine


# -- cache entries of the wrong shape ---------------------------------------------------------

def _entry(**overrides: Any) -> Dict[str, Any]:
    diagnostic: Dict[str, Any] = {
        "path": "a.py", "start": {"line": 3, "column": 9}, "end": {"line": 3, "column": 30},
        "code": "TL501", "name": "data-parallel", "message": "m", "fix": None, "hint": None, "cell": None,
    }
    diagnostic.update(overrides)
    return diagnostic


WRONG_SHAPES = [
    [],
    "text",
    {"diagnostics": []},
    {"key": "KEY"},
    {"key": "KEY", "diagnostics": "abc"},
    {"key": "KEY", "diagnostics": {"a": 1}},
    {"key": "KEY", "diagnostics": [1]},
    {"key": "KEY", "diagnostics": [_entry(start={"line": 1e400, "column": 0})]},
    {"key": "KEY", "diagnostics": [_entry(start={"line": "3", "column": 0})]},
    {"key": "KEY", "diagnostics": [_entry(start={"line": -3, "column": 0})]},
    {"key": "KEY", "diagnostics": [_entry(start=[3, 9])]},
    {"key": "KEY", "diagnostics": [_entry(code=501)]},
    {"key": "KEY", "diagnostics": [_entry(message=None)]},
    {"key": "KEY", "diagnostics": [_entry(hint=["a"])]},
    {"key": "KEY", "diagnostics": [_entry(cell="2")]},
    {"key": "KEY", "diagnostics": [_entry(fix=[])]},
    {"key": "KEY", "diagnostics": [_entry(fix={"edits": [{"start": 1, "end": 2}], "applicability": "safe",
                                               "description": "d"})]},
    {"key": "KEY", "diagnostics": [_entry(fix={"edits": [], "applicability": "bogus", "description": "d"})]},
    {"key": "KEY", "diagnostics": [_entry(fix={"edits": "x", "applicability": "safe", "description": "d"})]},
    {"key": "KEY", "diagnostics": [_entry(fix={"edits": [{"start": True, "end": 2, "text": ""}],
                                               "applicability": "safe", "description": "d"})]},
]


WRONG_SHAPES += [  # the variants of an entry (its lints under different project facts)
    {"key": "KEY", "variants": "abc"},
    {"key": "KEY", "variants": [1]},
    {"key": "KEY", "variants": [{"facts": 1, "reads": [], "diagnostics": []}]},
    {"key": "KEY", "variants": [{"reads": [], "diagnostics": []}]},
    {"key": "KEY", "variants": [{"facts": "", "reads": "calls", "diagnostics": []}]},
    {"key": "KEY", "variants": [{"facts": "", "reads": [1], "diagnostics": []}]},
    {"key": "KEY", "variants": [{"facts": "", "reads": [], "diagnostics": "abc"}]},
    {"key": "KEY", "variants": [{"facts": "", "reads": []}]},
]

KEY = EntryKey("a.py", "source-digest", "config")


def _sealed(shape: Any, key: EntryKey = KEY) -> Any:
    """``shape`` as an entry torchlint itself would have sealed for ``key``
    (its seal holds, so only its shape can make it a miss).  A shape given
    with ``diagnostics`` is the entry's one lint, without an index."""
    if isinstance(shape, dict) and "key" in shape:
        if "diagnostics" in shape:
            shape = {"key": shape["key"], "variants": [{"facts": "", "reads": [], "diagnostics": shape["diagnostics"]}]}
        shape = {"format": 3, "path": key.path, "source": key.source, **shape}
    return json.loads(json.dumps(shape).replace('"KEY"', json.dumps(key.key)).replace("Infinity", "1e400"))


def _plant(cache: Cache, key: EntryKey, payload: Any) -> None:
    cache._put(cache._shard(key=key.key), f"{key.key}.json", payload)


@pytest.mark.parametrize("shape", WRONG_SHAPES, ids=[str(i) for i in range(len(WRONG_SHAPES))])
def test_cache_entry_of_the_wrong_shape_is_a_miss(tmp_path: Path, shape: Any) -> None:
    cache = Cache(tmp_path / "cache")
    _plant(cache, KEY, _sealed(shape))
    assert cache.get_entries([KEY]) == [None]


def test_a_well_formed_entry_is_a_hit(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache")
    fix = {"edits": [{"start": 1, "end": 2, "text": "x"}], "applicability": "safe", "description": "d"}
    _plant(cache, KEY, _sealed({"key": "KEY", "diagnostics": [_entry(fix=fix, hint="h", cell=2)]}))
    [found] = cache.get_entries([KEY])
    assert found is not None and found.answer(EMPTY) is not None
    [finding] = found.variants[0].diagnostics
    assert finding.code == "TL501" and finding.fix is not None and finding.cell == 2


def reseal(directory: Path, change: Any) -> int:
    """Rewrite every lint entry under ``directory`` as ``change(payload)``,
    sealed as torchlint seals entries; how many were rewritten."""
    cache = Cache(directory)
    count = 0
    for entry in sorted(directory.rglob("*.json")):
        if {"facts", "runs"} & set(entry.parts):  # not lint entries
            continue
        payload = json.loads(entry.read_bytes().partition(b"\n")[2])
        key = payload["key"]
        cache._put(cache._shard(key=key), f"{key}.json", change(payload, count))
        count += 1
    return count


def _forget_runs(directory: Path) -> None:
    for record in directory.rglob("runs/*/*.json"):
        record.unlink()


def test_wrong_shaped_entries_in_a_real_run_are_recomputed(tmp_path: Path) -> None:
    user_project(tmp_path)
    first = cli(["check", ".", "--output-format", "concise"], tmp_path)
    assert first.returncode == 1

    def wrong(payload: Any, index: int) -> Any:
        shape = WRONG_SHAPES[index % len(WRONG_SHAPES)]
        key = EntryKey(payload["path"], payload["source"], "")
        sealed = _sealed(shape, key)
        return json.loads(json.dumps(sealed).replace(json.dumps(key.key), json.dumps(payload["key"])))

    assert reseal(tmp_path / ".torchlint_cache", wrong) > 0
    _forget_runs(tmp_path / ".torchlint_cache")  # else the run record answers, and no entry is read
    second = cli(["check", ".", "--output-format", "concise"], tmp_path)
    assert second.returncode == 1 and second.stdout == first.stdout
    assert "internal error" not in second.stderr and "Traceback" not in second.stderr


def test_cached_run_survives_an_entry_with_an_overflowing_number(tmp_path: Path) -> None:
    source = tmp_path / "a.py"
    source.write_text(FINDING)
    settings = Settings(select=("ALL",), root=tmp_path)
    cache = Cache(tmp_path / "cache")
    first = cached_run([source], lambda _: settings, lint_file, cache=cache)

    def overflow(payload: Any, index: int) -> Any:
        return json.loads(json.dumps(payload).replace('"line": 3', '"line": 1e400'))

    assert reseal(tmp_path / "cache", overflow) == 1
    _forget_runs(tmp_path / "cache")
    second = cached_run([source], lambda _: settings, lint_file, cache=cache)
    assert [o.diagnostics for o in second] == [o.diagnostics for o in first]
    assert not second[0].from_cache


RECORD_WRONG_SHAPES = [
    {"findings": "abc"},
    {"findings": [1]},
    {"findings": [[1]]},
    {"findings": []},  # fewer files than the run's
    {"findings": None},
    {"record": []},
    {"record": {"format": 3, "files": "abc", "inputs": [], "probes": [], "listings": []}},
    {"record": {"format": 3, "files": [[None, None, "no"]], "inputs": [], "probes": [], "listings": []}},
]


@pytest.mark.parametrize("change", RECORD_WRONG_SHAPES, ids=[str(i) for i in range(len(RECORD_WRONG_SHAPES))])
def test_a_run_record_of_the_wrong_shape_is_a_miss(tmp_path: Path, change: Dict[str, Any]) -> None:
    """The record answers a run where nothing changed: sealed by this very
    cache but not exactly what torchlint writes, it is ignored."""
    user_project(tmp_path)
    first = cli(["check", ".", "--output-format", "concise"], tmp_path)
    records = sorted((tmp_path / ".torchlint_cache").rglob("runs/*/*.json"))
    assert first.returncode == 1 and records
    cache = Cache(tmp_path / ".torchlint_cache")
    for record in records:
        payload = json.loads(record.read_bytes().partition(b"\n")[2])
        cache._put(cache._shard("runs", key=payload["key"]), record.name, {**payload, **change})
    second = cli(["check", ".", "--output-format", "concise"], tmp_path)
    assert second.returncode == 1 and second.stdout == first.stdout
    assert "internal error" not in second.stderr and "Traceback" not in second.stderr


def test_a_run_record_whose_findings_disagree_with_its_digests_is_a_miss(tmp_path: Path) -> None:
    """A file recorded with a digest (cached) but no findings: the record is
    not used, and the run lints the file again."""
    source = tmp_path / "a.py"
    source.write_text(FINDING)
    settings = Settings(select=("ALL",), root=tmp_path)
    cache = Cache(tmp_path / "cache")
    first = cached_run([source], lambda _: settings, lint_file, cache=cache)
    [record] = sorted((tmp_path / "cache").rglob("runs/*/*.json"))
    payload = json.loads(record.read_bytes().partition(b"\n")[2])
    assert cache.get_record(payload["key"], [first[0].path]) is not None
    cache._put(cache._shard("runs", key=payload["key"]), record.name, {**payload, "findings": [None]})
    assert Cache(tmp_path / "cache").get_record(payload["key"], [first[0].path]) is None
    again = cached_run([source], lambda _: settings, lint_file, cache=Cache(tmp_path / "cache"))
    assert [o.diagnostics for o in again] == [o.diagnostics for o in first]  # from its entry
