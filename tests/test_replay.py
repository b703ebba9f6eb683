"""The replay of an unchanged ``check`` run (issue 27, start-up): the command
line's entry point (``torchlint.interfaces.quick``) answers a run whose
inputs did not change from a sealed record, byte for byte, importing almost
nothing; any change, any doubt and any option that writes runs the full
command line.

Most tests run the entry point in this process (a new interpreter costs half
a second), the full command line counted by a wrapper; the import budget is
checked in a child process.  The folders are made a little before the first
run: a folder that changed within a clock tick of a run is not recorded."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import pytest

from torchlint.interfaces import cli, quick
from torchlint.lint import replay, sealed, settings as settings_module
from torchlint.lint.sealed import REPLAYS

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FINDING = "boom()\n"
CLEAN = "x = 1\n"


def settle() -> None:
    """Let the folders just made age past a clock tick (see replay.TICK_NS)."""
    time.sleep(replay.TICK_NS / 1e9 + 0.02)


class Runs:
    """Runs ``torchlint ARGS`` through the entry point in this process and
    says whether the full command line ran ("full") or the record answered
    ("replay"), with the bytes written and the exit code."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: Any) -> None:
        self.tmp_path = tmp_path
        self.monkeypatch = monkeypatch
        self.capture = capsysbinary
        self.cache = tmp_path / "cache"
        for name in list(os.environ):
            if name.startswith("TORCHLINT_") and name != "TORCHLINT_CEILING_DIRECTORIES":
                monkeypatch.delenv(name)
        monkeypatch.delenv("NO_COLOR", raising=False)
        monkeypatch.setenv("TORCHLINT_CACHE_DIR", str(self.cache))

    def __call__(self, *args: str, cwd: Path, after: Optional[Any] = None) -> Tuple[str, bytes, bytes, Any]:
        """``after``: called when the full command line has run, before its record is stored."""
        calls: List[int] = []
        full = cli.main

        def counted(*a: Any, **k: Any) -> Any:
            calls.append(1)
            try:
                return full(*a, **k)
            finally:
                if after is not None:
                    after()

        self.capture.readouterr()
        settings_module.clear_detection_caches()  # as a new process has them
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(cli, "main", counted)
            patch.setattr(sys, "argv", ["torchlint", *args])
            patch.chdir(cwd)
            code: Any = None
            try:
                quick.main()
            except SystemExit as exit:
                code = exit.code
        out, err = self.capture.readouterr()
        return ("full" if calls else "replay"), out, err, code

    def records(self) -> List[Path]:
        return sorted(p for p in self.cache.rglob("*.json") if REPLAYS in p.parts)

    def warm(self, *args: str, cwd: Path) -> Tuple[str, bytes, bytes, Any]:
        """The full run, then its replay (asserted), whose result is returned."""
        first = self(*args, cwd=cwd)
        assert first[0] == "full"
        second = self(*args, cwd=cwd)
        assert second[0] == "replay", second
        assert second[1:] == first[1:]
        return second


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: Any, rule_doubles: None) -> Runs:
    """With the test rules of tests/rule_doubles.py."""
    return Runs(tmp_path, monkeypatch, capsysbinary)


@pytest.fixture
def real_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: Any) -> Runs:
    """With the real rules."""
    return Runs(tmp_path, monkeypatch, capsysbinary)


def make(root: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    settle()
    return root


# -- the replay is the run it replays ---------------------------------------------------


@pytest.mark.parametrize("fmt", ["full", "concise", "json"])
@pytest.mark.parametrize("target", ["a.py", "clean.py", "."])
def test_a_replay_writes_what_the_full_run_wrote(runs: Runs, tmp_path: Path, fmt: str, target: str) -> None:
    root = make(tmp_path / "p", {"a.py": FINDING, "clean.py": CLEAN, "sub/b.py": "boom()\nboom()\n"})
    first = runs("check", "--output-format", fmt, target, cwd=root)
    second = runs("check", "--output-format", fmt, target, cwd=root)
    assert (first[0], second[0]) == ("full", "replay")
    assert second[1:] == first[1:]
    assert first[3] == (0 if target == "clean.py" else 1)
    assert first[1] if target != "clean.py" or fmt == "json" else True
    # and it is what a run without any cache prints
    fresh = runs("check", "--no-cache", "--output-format", fmt, target, cwd=root)
    assert fresh[0] == "full" and fresh[1:] == first[1:]


def test_a_run_in_worker_processes(runs: Runs, tmp_path: Path) -> None:
    """With -j 2 the files are linted (and read) in forked workers: the run
    record still names each, and an edit of one is seen."""
    root = make(tmp_path / "p", {f"m{i}.py": FINDING if i % 2 else CLEAN for i in range(8)})
    first = runs.warm("check", "-j", "2", ".", cwd=root)
    (root / "m2.py").write_text(FINDING)
    after = runs("check", "-j", "2", ".", cwd=root)
    assert after[0] == "full" and after[1].count(b"m2.py") > first[1].count(b"m2.py")


def test_notes_on_standard_error_are_replayed_in_order(runs: Runs, tmp_path: Path) -> None:
    root = make(tmp_path / "p", {"a.py": FINDING})
    result = runs.warm("check", "a.py", "missing.py", cwd=root)
    assert b"missing.py" in result[1] + result[2] and result[3] == 1


# -- what a replay depends on ------------------------------------------------------------


def test_an_edit_of_the_linted_file_with_the_same_size_and_mtime(runs: Runs, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from torchlint.source import stamps

    real = stamps.now_ns
    monkeypatch.setattr(stamps, "now_ns", lambda: real() + 3600 * 10**9)  # stamps taken now are trusted
    root = make(tmp_path / "p", {"a.py": "boom()\n"})
    runs.warm("check", "a.py", cwd=root)
    target = root / "a.py"
    info = target.stat()
    target.write_text("xoom()\n")  # same size
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    after = runs("check", "a.py", cwd=root)
    assert after[0] == "full" and after[3] == 0


def test_a_module_the_index_read(real_runs: Runs, tmp_path: Path) -> None:
    """TL501's subclass project (a real rule that asks the project index),
    linting train.py alone: the index reads nets/parallel.py from disk."""
    root = tmp_path / "p"
    shutil.copytree(FIXTURES / "TL501" / "subclass_project", root, ignore=shutil.ignore_patterns("*.fixed.py"))
    settle()
    before = real_runs.warm("check", "--select", "TL501", "train.py", cwd=root)
    parallel = root / "nets" / "parallel.py"
    parallel.write_text(parallel.read_text().replace("class Wrapped(DistributedDataParallel)",
                                                     "class Wrapped(nn.DataParallel)"))
    after = real_runs("check", "--select", "TL501", "train.py", cwd=root)
    assert after[0] == "full" and after[1] != before[1]


def test_a_new_file_in_a_walked_folder(runs: Runs, tmp_path: Path) -> None:
    root = make(tmp_path / "p", {"a.py": CLEAN, "sub/b.py": CLEAN})
    runs.warm("check", ".", cwd=root)
    (root / "sub" / "c.py").write_text(FINDING)
    after = runs("check", ".", cwd=root)
    assert after[0] == "full" and after[3] == 1 and b"c.py" in after[1]


def test_a_configuration_file_new_in_a_folder_above(runs: Runs, tmp_path: Path) -> None:
    root = make(tmp_path / "above" / "p", {"a.py": "boom()\nbang\n"})
    first = runs.warm("check", "a.py", cwd=root)
    (tmp_path / "above" / "torchlint.toml").write_text('extend-select = ["TL993"]\n')
    after = runs("check", "a.py", cwd=root)
    assert after[0] == "full" and b"TL993" in after[1] and b"TL993" not in first[1]


def test_a_configuration_file_made_above_while_the_run_went_on(runs: Runs, tmp_path: Path) -> None:
    """The run looked before it was there: the record would say it is, and hold."""
    root = make(tmp_path / "above" / "p", {"a.py": "boom()\nbang\n"})
    config = tmp_path / "above" / "torchlint.toml"
    first = runs("check", "a.py", cwd=root, after=lambda: config.write_text('extend-select = ["TL993"]\n'))
    assert first[0] == "full" and b"TL993" not in first[1]
    after = runs("check", "a.py", cwd=root)
    assert after[0] == "full" and b"TL993" in after[1]


def test_an_edited_configuration_file(runs: Runs, tmp_path: Path) -> None:
    root = make(tmp_path / "p", {"a.py": "boom()\nbang\n", "torchlint.toml": 'extend-select = ["TL991"]\n'})
    first = runs.warm("check", "a.py", cwd=root)
    (root / "torchlint.toml").write_text('extend-select = ["TL993"]\n')
    after = runs("check", "a.py", cwd=root)
    assert after[0] == "full" and b"TL993" in after[1] and b"TL993" not in first[1]


def test_a_file_an_extend_names_through_a_variable(runs: Runs, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root = make(tmp_path / "p", {"a.py": "boom()\nbang\n", "torchlint.toml": 'extend = "$BASE/base.toml"\n',
                                 "one/base.toml": "", "two/base.toml": 'extend-select = ["TL993"]\n'})
    monkeypatch.setenv("BASE", str(root / "one"))
    first = runs.warm("check", "a.py", cwd=root)
    monkeypatch.setenv("BASE", str(root / "two"))
    after = runs("check", "a.py", cwd=root)
    assert after[0] == "full" and b"TL993" in after[1] and b"TL993" not in first[1]


def test_an_edited_ignore_file(runs: Runs, tmp_path: Path) -> None:
    root = make(tmp_path / "p", {"a.py": FINDING, "b.py": FINDING, ".gitignore": "a.py\n"})
    first = runs.warm("check", ".", cwd=root)
    (root / ".gitignore").write_text("b.py\n")
    after = runs("check", ".", cwd=root)
    assert after[0] == "full" and b"a.py" in after[1] and b"a.py" not in first[1]


@pytest.mark.parametrize("name,values", [("TORCHLINT_OUTPUT_FORMAT", ("full", "concise")),
                                         ("NO_COLOR", ("", "1"))])
def test_a_changed_environment_variable(runs: Runs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        name: str, values: Tuple[str, str]) -> None:
    root = make(tmp_path / "p", {"a.py": FINDING})
    monkeypatch.setenv(name, values[0])
    runs.warm("check", "a.py", cwd=root)
    monkeypatch.setenv(name, values[1])
    assert runs("check", "a.py", cwd=root)[0] == "full"
    assert runs("check", "a.py", cwd=root)[0] == "replay"
    monkeypatch.setenv(name, values[0])
    assert runs("check", "a.py", cwd=root)[0] == "replay"


def test_another_working_folder(runs: Runs, tmp_path: Path) -> None:
    one = make(tmp_path / "one", {"a.py": FINDING})
    two = make(tmp_path / "two", {"a.py": FINDING})
    runs.warm("check", "a.py", cwd=one)
    after = runs("check", "a.py", cwd=two)
    assert after[0] == "full"


def test_other_arguments(runs: Runs, tmp_path: Path) -> None:
    root = make(tmp_path / "p", {"a.py": FINDING})
    runs.warm("check", "a.py", cwd=root)
    assert runs("check", "--select", "TL991", "a.py", cwd=root)[0] == "full"
    assert runs("check", "-q", "a.py", cwd=root)[0] == "full"


def test_torchlint_code_changed(runs: Runs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make(tmp_path / "p", {"a.py": FINDING})
    runs.warm("check", "a.py", cwd=root)
    real = replay.fingerprint
    monkeypatch.setattr(replay, "fingerprint", lambda: hashlib.sha256(real().encode()).hexdigest()[:16])
    assert runs("check", "a.py", cwd=root)[0] == "full"


def test_a_folder_that_changed_during_the_run_is_not_recorded(runs: Runs, tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "a.py").write_text(FINDING)  # no settle(): the folder is younger than a tick
    runs("check", ".", cwd=root)
    assert runs.records() == []
    settle()
    runs.warm("check", ".", cwd=root)


def test_old_folders_are_recorded_by_their_stamps(runs: Runs, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay, "TRUSTED_NS", 0)
    root = make(tmp_path / "p", {"a.py": CLEAN})
    runs.warm("check", ".", cwd=root)
    [record] = [json.loads(p.read_bytes().partition(b"\n")[2]) for p in runs.records()]
    assert record["folders"] and all(stamp is not None for _, stamp, _ in record["folders"])
    (root / "new.py").write_text(FINDING)
    assert runs("check", ".", cwd=root)[0] == "full"


# -- trust ----------------------------------------------------------------------------------


def sealed_payload(path: Path) -> Tuple[bytes, Dict[str, Any]]:
    seal, _, payload = path.read_bytes().partition(b"\n")
    return seal, json.loads(payload)


def test_an_edited_or_forged_record_is_a_miss(runs: Runs, tmp_path: Path) -> None:
    root = make(tmp_path / "p", {"a.py": FINDING})
    runs.warm("check", "a.py", cwd=root)
    [record] = runs.records()
    seal, payload = sealed_payload(record)
    payload["output"] = [[1, "All checks passed!\n"]]
    payload["code"] = 0
    edited = json.dumps(payload).encode()
    record.write_bytes(seal + b"\n" + edited)
    assert runs("check", "a.py", cwd=root)[0] == "full"
    forged = hmac.new(b"\0" * 32, edited, hashlib.sha256).hexdigest().encode()
    record.write_bytes(forged + b"\n" + edited)
    record.chmod(0o600)
    assert runs("check", "a.py", cwd=root)[0] == "full"


def test_a_record_of_another_user_is_a_miss(runs: Runs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make(tmp_path / "p", {"a.py": FINDING})
    runs.warm("check", "a.py", cwd=root)
    real = sealed._euid()
    with monkeypatch.context() as patch:
        patch.setattr(sealed, "_euid", lambda: real + 1)
        assert runs("check", "a.py", cwd=root)[0] == "full"
    assert runs("check", "a.py", cwd=root)[0] == "replay"


def test_a_link_in_the_records_folder_is_a_miss(runs: Runs, tmp_path: Path) -> None:
    root = make(tmp_path / "p", {"a.py": FINDING})
    runs.warm("check", "a.py", cwd=root)
    [record] = runs.records()
    folder = record.parent.parent  # replays/
    moved = folder.with_name("elsewhere")
    folder.rename(moved)
    folder.symlink_to(moved)
    assert runs("check", "a.py", cwd=root)[0] == "full"


def test_no_cache_never_replays_nor_records(runs: Runs, tmp_path: Path) -> None:
    root = make(tmp_path / "p", {"a.py": FINDING})
    for _ in range(2):
        assert runs("check", "--no-cache", "a.py", cwd=root)[0] == "full"
    assert runs.records() == []


@pytest.mark.parametrize("options", [
    ("--fix",), ("--add-noqa",), ("-o", "{out}/report.txt"), ("--baseline", "{out}/base.json", "--baseline-create"),
    ("--write-baseline", "{out}/base.json"), ("--show-files",), ("--show-settings",), ("--stdin-filename", "a.py", "-"),
])
def test_options_that_write_or_show_are_never_recorded(runs: Runs, tmp_path: Path, options: Sequence[str]) -> None:
    """What they write goes outside the project: no folder the run depends on changes."""
    root = make(tmp_path / "p", {"a.py": CLEAN})
    (tmp_path / "out").mkdir()
    settle()
    arguments = [option.format(out=tmp_path / "out") for option in options]
    for _ in range(2):
        assert runs("check", *arguments, *([] if "-" in options else ["a.py"]), cwd=root)[0] == "full"
    assert runs.records() == []


def test_watch_mode_is_never_recorded(runs: Runs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCHLINT_WATCH_TIMEOUT", "0.01")
    root = make(tmp_path / "p", {"a.py": FINDING})
    for _ in range(2):
        assert runs("check", "--watch", "a.py", cwd=root)[0] == "full"
    assert runs.records() == []


# -- the import budget, in a new process ------------------------------------------------------


def test_a_replay_imports_no_linter(tmp_path: Path) -> None:
    """``python -m torchlint check one.py`` answered by its record imports
    neither click nor libcst, dataclasses or torchlint's model (the real
    rules: the ones a user runs)."""
    root = tmp_path / "p"
    root.mkdir()
    (root / "one.py").write_text("import torch\nx = torch.zeros(3).cuda()\n")
    settle()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHLINT_") or "CEILING" in k}
    env["TORCHLINT_CACHE_DIR"] = str(tmp_path / "cache")
    command = [sys.executable, "-X", "importtime", "-m", "torchlint", "check", "one.py"]
    runs = [subprocess.run(command, cwd=root, capture_output=True, env=env) for _ in range(2)]

    def imported(stderr: bytes) -> List[str]:
        return [line.split(b"|")[-1].strip().decode() for line in stderr.splitlines()
                if line.startswith(b"import time:")]

    def output(stderr: bytes) -> bytes:
        return b"\n".join(line for line in stderr.splitlines() if not line.startswith(b"import time:"))

    full, replayed = runs
    assert "click" in imported(full.stderr)
    assert (replayed.returncode, replayed.stdout, output(replayed.stderr)) == \
        (full.returncode, full.stdout, output(full.stderr)) == (1, full.stdout, b"")
    assert b"TL101" in full.stdout
    modules = imported(replayed.stderr)
    assert "torchlint.interfaces.quick" in modules
    assert not {"click", "libcst", "dataclasses", "torchlint.model", "torchlint.interfaces.cli"} & set(modules)


def test_flushing_after_the_stream_under_it_closed_is_quiet_and_doubted() -> None:
    """At interpreter shutdown (or after a test's captured output is closed) the
    recording tee may be flushed over a closed stream: nothing to flush, no error,
    and the record is not trusted."""
    import io as _io

    from torchlint.lint.replay import Recording, _Tee

    recording = Recording("key")
    target = _io.BytesIO()
    tee = _Tee(target, 1, recording)
    tee.write(b"finding\n")
    target.close()
    tee.flush()
    assert recording.doubts
