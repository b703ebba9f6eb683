"""The cache's trust model (issue 25, items 1 and 2): no link is followed
anywhere in the cache, only regular files are read, a folder that is a link
or writable by other users is refused unless shared on purpose, and an
entry is used only when torchlint sealed it for this very content in this
very cache, and (unless shared) this user wrote it.

The tests find entries by looking at what a first run wrote, so the same
attack is tried whatever the cache's layout."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence

import pytest
from hostile_support import cli_in_child

from torchlint.analysis.index import EMPTY, ProjectIndex
from torchlint.lint.cache import Cache, EntryKey, Lint, Variant
from torchlint.lint.runner import FileOutcome, cached_run, lint_file
from torchlint.lint.settings import Settings
from torchlint.source.stamps import RunRecord

FINDING = "import torch.nn as nn\n\nmodel = nn.DataParallel(net)\n"
SECRET = b"the victim's private notes\n"
ENV: Dict[str, Optional[str]] = {"TORCHLINT_CACHE_DIR": None, "TORCHLINT_OUTPUT_FORMAT": "concise",
                                 "TORCHLINT_CACHE_SHARED": None}


def check(cwd: Path, *args: str, user: Optional[tuple] = None) -> "subprocess.CompletedProcess[str]":  # type: ignore[type-arg]
    return cli_in_child(["check", *args], cwd, timeout=120, env=ENV, user=user)


def project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "train.py").write_text(FINDING)
    return root


def entries(cache: Path) -> List[Path]:
    """The lint entries a run wrote (not the project index's facts)."""
    return sorted(p for p in cache.rglob("*.json") if "facts" not in p.parts and not p.is_symlink())


def victim(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    secret = folder / "notes.txt"
    secret.write_bytes(SECRET)
    os.chmod(secret, 0o600)
    return secret


# -- item 1: links, special files, folders others can write ------------------------------------

def test_a_link_planted_at_an_entry_is_replaced_not_written_through(tmp_path: Path) -> None:
    work = project(tmp_path / "work")
    assert check(work, ".").returncode == 1
    secret = victim(tmp_path / "home")
    planted = entries(work / ".torchlint_cache")
    assert planted
    for entry in planted:
        entry.unlink()
        entry.symlink_to(secret)
    again = check(work, ".")
    assert again.returncode == 1 and "train.py:3:9: TL501" in again.stdout, again.stderr
    assert secret.read_bytes() == SECRET and stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert all(entry.is_file() and not entry.is_symlink() for entry in planted)


def test_entries_that_are_fifos_or_devices_are_misses(tmp_path: Path) -> None:
    work = project(tmp_path / "work")
    assert check(work, ".").returncode == 1
    planted = entries(work / ".torchlint_cache")
    for number, entry in enumerate(planted):
        entry.unlink()
        if number % 2:
            entry.symlink_to("/dev/zero")
        else:
            os.mkfifo(entry)
    again = check(work, ".")  # a FIFO opened for reading used to block the run for ever
    assert again.returncode == 1 and "train.py:3:9: TL501" in again.stdout, again.stderr


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_a_folder_of_the_cache_that_is_a_link_is_refused(tmp_path: Path, depth: int) -> None:
    """depth 1: the shard folder holding the entries, 2: the folder of this
    torchlint's entries, 3: the format's folder."""
    work = project(tmp_path / "work")
    assert check(work, ".").returncode == 1
    folder = entries(work / ".torchlint_cache")[0].parents[depth - 1]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "mine.txt").write_bytes(SECRET)
    shutil.rmtree(folder)
    folder.symlink_to(elsewhere, target_is_directory=True)
    result = check(work, ".")
    assert result.returncode == 2 and result.stdout == "", result.stdout
    [line] = result.stderr.strip().splitlines()
    assert "symbolic link" in line and folder.name in line
    assert sorted(p.name for p in elsewhere.iterdir()) == ["mine.txt"]


def test_a_cache_folder_that_is_a_link_is_refused(tmp_path: Path) -> None:
    work = project(tmp_path / "work")
    (tmp_path / "real-cache").mkdir(mode=0o700)
    (work / "linked").symlink_to(tmp_path / "real-cache", target_is_directory=True)
    result = check(work, "train.py", "--cache-dir", "linked")
    assert result.returncode == 2 and "symbolic link" in result.stderr and "--cache-dir" in result.stderr
    assert list((tmp_path / "real-cache").iterdir()) == []


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777])
def test_a_cache_folder_others_can_write_is_refused_unless_shared(tmp_path: Path, mode: int) -> None:
    work = project(tmp_path / "work")
    cache = work / ".torchlint_cache"
    assert check(work, ".").returncode == 1
    os.chmod(cache, mode)
    result = check(work, ".")
    assert result.returncode == 2 and result.stdout == ""
    [line] = result.stderr.strip().splitlines()
    assert ("writable by other users" in line and "--cache-shared" in line) or "every user" in line
    shared = check(work, ".", "--cache-shared")
    if mode & 0o002:  # writable by every user: not even a shared cache may be
        assert shared.returncode == 2 and "every user" in shared.stderr
    else:
        assert shared.returncode == 1 and "train.py:3:9: TL501" in shared.stdout, shared.stderr


def test_a_new_cache_is_private_whatever_the_umask(tmp_path: Path) -> None:
    work = project(tmp_path / "work")
    old = os.umask(0o002)
    try:
        assert check(work, ".").returncode == 1
    finally:
        os.umask(old)
    cache = work / ".torchlint_cache"
    for path in [cache, *cache.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert not mode & 0o077 or path.name in ("CACHEDIR.TAG", ".gitignore"), (path, oct(mode))
    assert check(work, ".").returncode == 1  # and the next run accepts it


def test_a_shared_cache_is_made_for_its_group(tmp_path: Path) -> None:
    work = project(tmp_path / "work")
    assert check(work, ".", "--cache-dir", "shared", "--cache-shared").returncode == 1
    cache = work / "shared"
    assert stat.S_IMODE(cache.stat().st_mode) == 0o2770
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o640 for p in entries(cache))
    warm = check(work, ".", "--cache-dir", "shared", "--cache-shared")
    assert warm.returncode == 1 and "train.py:3:9: TL501" in warm.stdout


# -- item 2: entries are bound to their content and sealed ------------------------------------

def _payload(entry: Path) -> dict:  # type: ignore[type-arg]
    data = entry.read_bytes()
    return json.loads(data if data.startswith(b"{") else data.partition(b"\n")[2])


def _without_findings(payload: Any) -> Any:
    """An entry or a run record as it would be had the files no findings."""
    for variant in payload.get("variants", ()):
        variant["diagnostics"] = []
    if "findings" in payload:
        payload["findings"] = [None if found is None else [] for found in payload["findings"]]
    return payload


def _rewrite(entry: Path, payload: dict) -> None:  # type: ignore[type-arg]
    """Write ``payload`` back into an entry in the entry's own layout; a
    sealed entry is resealed with the seal of the cache it is in (what an
    attacker with the key file, such as one who committed the cache, can do)."""
    if entry.read_bytes().startswith(b"{"):
        entry.write_text(json.dumps(payload))
        return
    cache_folder = next(p for p in entry.parents if (p / "CACHEDIR.TAG").exists())
    cache = Cache(cache_folder)
    key = payload["key"]
    cache._put(cache._shard(*(["runs"] if "runs" in entry.parts else []), key=key), f"{key}.json", payload)


def test_an_entry_edited_to_hold_no_findings_is_a_miss(tmp_path: Path) -> None:
    work = project(tmp_path / "work")
    assert check(work, ".").returncode == 1
    for entry in entries(work / ".torchlint_cache"):
        payload = _without_findings(_payload(entry))
        data = json.dumps(payload).encode()
        raw = entry.read_bytes()
        entry.write_bytes(data if raw.startswith(b"{") else raw.partition(b"\n")[0] + b"\n" + data)
    again = check(work, ".")
    assert again.returncode == 1 and "train.py:3:9: TL501" in again.stdout, again.stdout


def test_a_committed_or_copied_cache_is_not_trusted(tmp_path: Path) -> None:
    """Someone empties the entries of their own cache (sealing them with their
    own key) and commits the cache: in a checkout, every entry is a miss."""
    theirs = project(tmp_path / "theirs")
    assert check(theirs, ".").returncode == 1
    for entry in entries(theirs / ".torchlint_cache"):
        _rewrite(entry, _without_findings(_payload(entry)))
    assert check(theirs, ".").returncode == 0  # in their own cache the forgery holds
    checkout = tmp_path / "checkout"
    shutil.copytree(theirs, checkout)  # new files, as a clone makes them
    result = check(checkout, ".")
    assert result.returncode == 1 and "train.py:3:9: TL501" in result.stdout, result.stdout


def _counting(calls: List[Path]):  # type: ignore[no-untyped-def]
    def work(path: Path, settings: Settings, project: Any = None) -> FileOutcome:
        calls.append(path)
        return lint_file(path, settings) if project is None else lint_file(path, settings, project=project)
    return work


def test_entries_written_by_another_user_are_misses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulated: the same files, read by a process of another uid."""
    from torchlint.lint import sealed as cache_module  # the trust checks of the store

    source = tmp_path / "a.py"
    source.write_text(FINDING)
    settings = Settings(select=("ALL",), root=tmp_path)
    calls: List[Path] = []
    cached_run([source], lambda _: settings, _counting(calls), cache=Cache(tmp_path / "cache"))
    assert cached_run([source], lambda _: settings, _counting(calls), cache=Cache(tmp_path / "cache"))[0].from_cache
    real = cache_module._euid()
    monkeypatch.setattr(cache_module, "_euid", lambda: real + 1)
    # To another user the folder and the entries are someone else's: not used (not written either) ...
    assert not cached_run([source], lambda _: settings, _counting(calls),
                          cache=Cache(tmp_path / "cache"))[0].from_cache
    # ... unless the cache is shared on purpose.
    assert cached_run([source], lambda _: settings, _counting(calls),
                      cache=Cache(tmp_path / "cache", shared=True))[0].from_cache
    assert len(calls) == 2


def test_an_entry_for_other_content_is_a_miss(tmp_path: Path) -> None:
    """The entry records the source's and the facts' digests; both are checked."""
    cache = Cache(tmp_path / "cache")
    key = EntryKey("a.py", "source-1", "config")
    cache.store(EMPTY, [Lint(key, (), ())], None, RunRecord(()), (), None)
    [found] = cache.get_entries([key])
    assert found is not None and found.answer(EMPTY) == Variant("", (), ())
    payload = _payload(next((tmp_path / "cache").rglob(f"{key.key}.json")))
    for field, value in (("source", "source-2"), ("path", "b.py"), ("format", 2), ("key", "k")):
        cache._put(cache._shard(key=key.key), f"{key.key}.json", {**payload, field: value})
        assert cache.get_entries([key]) == [None], field
    # A lint under other project facts is kept beside it, and is no answer for these.
    another = ProjectIndex(star_parts={"models": {}})
    cache.store(another, [Lint(key, ("star_parts",), (), found)], None, RunRecord(()), (), None)
    [found] = cache.get_entries([key])
    assert found is not None and len(found.variants) == 2
    assert found.answer(EMPTY) == Variant("", (), ()) and found.answer(another) == found.variants[0]
    assert found.variants[0].facts == another.digest_of(["star_parts"])


# -- two users on a shared machine (needs root) ------------------------------------------------

GROUP, VICTIM, ATTACKER = 64990, 64991, 64992


@pytest.fixture
def shared_area() -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("needs root to act as two unprivileged users")
    top = Path(tempfile.mkdtemp(prefix="torchlint-two-users-"))
    os.chmod(top, 0o755)
    try:
        yield top
    finally:
        shutil.rmtree(top)


def _own(path: Path, uid: int, gid: int) -> None:
    for item in [path, *path.rglob("*")]:
        os.lchown(item, uid, gid)


@pytest.mark.parametrize("shared", [False, True])
def test_another_user_of_a_group_cache_cannot_make_torchlint_overwrite_your_files(
        shared_area: Path, shared: bool) -> None:
    victim_user, attacker_user = (VICTIM, [VICTIM, GROUP]), (ATTACKER, [ATTACKER, GROUP])
    work = project(shared_area / "work")
    secret = victim(shared_area / "home")
    _own(shared_area / "home", VICTIM, VICTIM)
    os.chmod(shared_area / "home", 0o700)
    _own(work, VICTIM, GROUP)
    os.chmod(work, 0o775)
    first = check(work, ".", "--cache-dir", "cache", user=victim_user)
    assert first.returncode == 1, first.stderr
    # The victim shares the cache with the group (as root does it here, the way `chmod -R g+w` would) ...
    cache = work / "cache"
    _own(cache, VICTIM, GROUP)
    for item in [cache, *cache.rglob("*")]:
        if item.is_dir():
            os.chmod(item, 0o2770)
    # ... and the attacker replaces every entry with a link to the victim's private file.
    plant = ("import os, pathlib\n"
             f"for entry in sorted(pathlib.Path({str(cache)!r}).rglob('*.json')):\n"
             "    entry.unlink(); entry.symlink_to(" + repr(str(secret)) + ")\n")
    planted = subprocess.run(["python3", "-c", plant], capture_output=True, text=True, user=ATTACKER,
                             group=GROUP, extra_groups=[GROUP])
    assert planted.returncode == 0, planted.stderr
    assert any(p.is_symlink() for p in cache.rglob("*.json"))
    args = ["--cache-dir", "cache", "--cache-shared"] if shared else ["--cache-dir", "cache"]
    result = check(work, ".", *args, user=victim_user)
    assert secret.read_bytes() == SECRET
    if shared:
        assert result.returncode == 1 and "train.py:3:9: TL501" in result.stdout, result.stderr
    else:
        assert result.returncode == 2 and "writable by other users" in result.stderr
    assert attacker_user  # the attacker only ever planted links


def test_root_finds_a_cache_of_another_user_refused(shared_area: Path) -> None:
    work = project(shared_area / "work")
    assert check(work, ".").returncode == 1
    _own(work / ".torchlint_cache", VICTIM, VICTIM)
    result = check(work, ".")
    assert result.returncode == 2 and "belongs to another user" in result.stderr
