"""Warm runs (issue 27): a run where nothing changed reads the cache and the
files' stat data, builds no project index and lints nothing; a change
re-lints the files whose findings depend on it.  Counts, never timings."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

import pytest

from torchlint.analysis import queries
from torchlint.analysis.index import EMPTY, ProjectIndex
from torchlint.lint import runner
from torchlint.lint.cache import Cache
from torchlint.lint.runner import FileOutcome, cached_run, lint_file
from torchlint.lint.settings import Settings
from torchlint.source import stamps

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
HOUR_NS = 3600 * 10**9


class Counts:
    """What a run did: files linted, index builds, files' bytes read."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.linted: List[str] = []
        self.builds = 0
        self.reads: List[str] = []
        build = queries.build_from
        read_source = runner.read_source
        stamp_read = stamps.read_regular_with_status

        def counted_build(*args: Any, **kwargs: Any) -> ProjectIndex:
            self.builds += 1
            return build(*args, **kwargs)

        def counting(read: Callable[..., Any]) -> Callable[..., Any]:
            def wrapped(path: Any, *args: Any, **kwargs: Any) -> Any:
                self.reads.append(Path(path).name)
                return read(path, *args, **kwargs)
            return wrapped

        monkeypatch.setattr(queries, "build_from", counted_build)
        monkeypatch.setattr(runner, "read_source", counting(read_source))
        monkeypatch.setattr(stamps, "read_regular_with_status", counting(stamp_read))

    def lint(self, path: Path, settings: Settings, project: ProjectIndex = EMPTY) -> FileOutcome:
        self.linted.append(path.name)
        return lint_file(path, settings, project)

    def reset(self) -> None:
        self.linted.clear()
        self.reads.clear()
        self.builds = 0


def project(tmp_path: Path, name: str = "callers_project") -> List[Path]:
    """TL301's callers project (by default): engine.py's findings depend on
    how the other modules call its functions."""
    root = tmp_path / "project"
    shutil.copytree(FIXTURES / "TL301" / name, root, ignore=shutil.ignore_patterns("*.fixed.py"))
    return sorted(root.rglob("*.py"))


def findings(outcomes: Sequence[FileOutcome]) -> List[Any]:
    return [(o.path, list(o.diagnostics)) for o in outcomes]


def fresh(files: Sequence[Path], settings: Settings) -> List[Any]:
    """The findings of a run without a cache."""
    return findings(cached_run(files, lambda _: settings, lint_file, cache=None))


@pytest.fixture
def trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stamps taken now are trusted (the files were written long enough ago)."""
    real = stamps.now_ns
    monkeypatch.setattr(stamps, "now_ns", lambda: real() + HOUR_NS)


class Warm:
    """The setup every test here shares: TL301's callers project copied and
    made the working folder, settings selecting every rule, a cache, and the
    counts of what each run does."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str = "callers_project") -> None:
        self.files = project(tmp_path, name)
        monkeypatch.chdir(tmp_path / "project")
        self.root = tmp_path / "project"
        self.settings = Settings(select=("ALL",), root=tmp_path)
        self.cache = Cache(tmp_path / "cache")
        self.counts = Counts(monkeypatch)

    def run(self, files: Optional[Sequence[Path]] = None,
            work: Optional[Callable[..., FileOutcome]] = None) -> List[FileOutcome]:
        """One cached run over the project's files (or ``files``), counted."""
        return cached_run(self.files if files is None else files, lambda _: self.settings,
                          work or self.counts.lint, cache=self.cache)


@pytest.fixture
def warm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Warm:
    return Warm(tmp_path, monkeypatch)


def test_an_unchanged_run_builds_no_index_lints_nothing_and_reads_only_files_with_findings(
        warm: Warm, trusted: None) -> None:
    counts = warm.counts
    first = warm.run()
    assert counts.builds == 1 and len(counts.linted) == len(warm.files)
    counts.reset()
    second = warm.run()
    assert counts.builds == 0 and counts.linted == []
    with_findings = sorted(Path(o.path).name for o in first if o.diagnostics)
    assert with_findings and len(with_findings) < len(warm.files)
    assert sorted(counts.reads) == with_findings  # their text is shown; nothing else is read
    assert findings(second) == findings(first) == fresh(warm.files, warm.settings)
    assert all(o.from_cache for o in second)


def test_a_change_to_a_caller_relints_the_callee_and_matches_a_run_without_cache(warm: Warm, trusted: None) -> None:
    counts = warm.counts
    warm.run()
    tools = warm.root / "tools.py"
    # predict() gets a caller with gradients on: engine.py's finding changes.
    tools.write_text(tools.read_text().replace("@torch.no_grad()\n", ""))
    counts.reset()
    third = warm.run()
    assert counts.builds == 1
    assert "tools.py" in counts.linted and "engine.py" in counts.linted
    assert "train.py" not in counts.linted  # it read no fact the change touched
    assert findings(third) == fresh(warm.files, warm.settings)
    counts.reset()
    fourth = warm.run()
    assert counts.builds == 0 and counts.linted == [] and findings(fourth) == findings(third)


def test_a_grad_mode_change_in_a_helper_relints_the_files_that_asked_about_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trusted: None) -> None:
    """The summary facts that change with grad mode are read one function at
    a time (not part of the digest of the summaries as a whole): turning
    gradients off inside `steps.forward` must still re-lint train.py, whose
    TL301 finding rests on that helper running the model with autograd on."""
    warm = Warm(tmp_path, monkeypatch, "helper_forward_project")

    def tl301_in_train(outcomes: Sequence[FileOutcome]) -> List[int]:
        return [d.start.line for o in outcomes if Path(o.path).name == "train.py"
                for d in o.diagnostics if d.code == "TL301"]

    assert tl301_in_train(warm.run()) == [18]
    steps = warm.root / "steps.py"
    steps.write_text(steps.read_text().replace(
        "    return targets, model(inputs)\n", "    with torch.no_grad():\n        return targets, model(inputs)\n"))
    warm.counts.reset()
    second = warm.run()
    assert "train.py" in warm.counts.linted
    assert tl301_in_train(second) == []
    assert findings(second) == fresh(warm.files, warm.settings)


def test_unguarding_a_methods_only_call_relints_the_method_file_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trusted: None) -> None:
    """Whether every project call of a method runs with gradients off is read
    one function at a time: taking `with torch.no_grad():` away from the
    trainer's call of `Evaluator.accuracy` re-lints evaluator.py (the method
    is now reported) and nothing that never asked about it."""
    warm = Warm(tmp_path, monkeypatch, "guarded_method_callers_project")

    def reported(outcomes: Sequence[FileOutcome]) -> List[int]:
        return sorted(d.start.line for o in outcomes if Path(o.path).name == "evaluator.py"
                      for d in o.diagnostics if d.code == "TL301")

    assert reported(warm.run()) == [17]
    trainer = warm.root / "trainer.py"
    trainer.write_text(trainer.read_text().replace(
        "            with torch.no_grad():\n                print(self.val_eval.accuracy(self.model))\n",
        "            print(self.val_eval.accuracy(self.model))\n"))
    warm.counts.reset()
    second = warm.run()
    assert "evaluator.py" in warm.counts.linted
    assert reported(second) == [10, 17]
    assert findings(second) == fresh(warm.files, warm.settings)


def test_a_racily_written_file_is_read_again_even_when_its_stamp_looks_the_same(warm: Warm) -> None:
    """A stamp taken in the same moment the file was written is not trusted:
    a change of the same size with the modification time put back is seen."""
    warm.run()
    tools = warm.root / "tools.py"
    before = tools.stat()
    text = tools.read_text()
    tools.write_text(text.replace("@torch.no_grad()\n", "#torch.no_grad()\n"))  # same size
    os.utime(tools, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert tools.stat().st_size == before.st_size
    warm.counts.reset()
    after = warm.run()
    assert "engine.py" in warm.counts.linted
    assert findings(after) == fresh(warm.files, warm.settings)


def test_a_change_to_an_imported_module_outside_the_run_rebuilds_the_index(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trusted: None) -> None:
    """The index also reads modules the run's files import, from disk (here
    TL501's subclass project, linting train.py alone); changing one is seen."""
    root = tmp_path / "project"
    shutil.copytree(FIXTURES / "TL501" / "subclass_project", root, ignore=shutil.ignore_patterns("*.fixed.py"))
    monkeypatch.chdir(root)
    linted = [root / "train.py"]
    settings = Settings(select=("ALL",), root=tmp_path)
    cache = Cache(tmp_path / "cache")
    counts = Counts(monkeypatch)
    first = cached_run(linted, lambda _: settings, counts.lint, cache=cache)
    counts.reset()
    cached_run(linted, lambda _: settings, counts.lint, cache=cache)
    assert counts.builds == 0 and counts.linted == []
    parallel = root / "nets" / "parallel.py"
    # Wrapped becomes a DataParallel: train.py gains a finding.
    parallel.write_text(parallel.read_text().replace("class Wrapped(DistributedDataParallel)",
                                                     "class Wrapped(nn.DataParallel)"))
    counts.reset()
    after = cached_run(linted, lambda _: settings, counts.lint, cache=cache)
    assert counts.builds == 1 and counts.linted == ["train.py"]
    assert findings(after) == fresh(linted, settings) != findings(first)


def test_a_new_module_in_an_import_root_rebuilds_the_index(warm: Warm, trusted: None) -> None:
    warm.run()
    (warm.root / "newmodule.py").write_text("x = 1\n")
    warm.counts.reset()
    warm.run()
    assert warm.counts.builds == 1


def test_settings_are_resolved_once_per_file_on_a_warm_run(warm: Warm, trusted: None) -> None:
    asked: Dict[str, int] = {}

    def settings_for(path: Path) -> Settings:
        asked[path.name] = asked.get(path.name, 0) + 1
        return warm.settings

    cached_run(warm.files, settings_for, lint_file, cache=warm.cache)
    asked.clear()
    cached_run(warm.files, settings_for, lint_file, cache=warm.cache)
    assert asked == {path.name: 1 for path in warm.files}


def test_settings_are_resolved_once_per_file_on_a_run_without_a_cache(warm: Warm) -> None:
    """The index build and the lints are given the settings resolved at the
    start; neither asks for them again."""
    asked: Dict[str, int] = {}

    def settings_for(path: Path) -> Settings:
        asked[path.name] = asked.get(path.name, 0) + 1
        return warm.settings

    outcomes = cached_run(warm.files, settings_for, lint_file, cache=None)
    assert asked == {path.name: 1 for path in warm.files}
    assert findings(outcomes) == fresh(warm.files, warm.settings)


def test_a_job_script_beside_unchanged_files_is_linted_again_without_an_index(warm: Warm, trusted: None) -> None:
    """A job script's findings are never cached (they depend on the code it
    launches), and it reads nothing from the index: an otherwise unchanged
    run lints it alone, without building the index."""
    counts = warm.counts
    script = warm.root / "job"  # no suffix: what it holds says what it is
    script.write_text("#!/bin/bash\n#SBATCH --gres=gpu:4\n#SBATCH --ntasks-per-node=1\npython train.py\n")
    warm.files.append(script)
    first = warm.run()
    counts.reset()
    second = warm.run()
    assert counts.builds == 0 and counts.linted == ["job"]
    assert findings(second) == findings(first)
    # It stops being a job script and becomes Python (no #SBATCH line, no
    # shebang): linted as Python, with the index.
    script.write_text("import torch\nx = torch.zeros(3).cuda()\n")
    counts.reset()
    third = warm.run()
    assert counts.builds == 1
    assert findings(third) == fresh(warm.files, warm.settings)


def test_editing_a_loader_building_function_changes_its_callers_findings_on_a_warm_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trusted: None) -> None:
    """main.py's TL201 findings come from what data/loaders.py's functions
    pass their `DataLoader`: a warm run after changing a default there
    lints main.py again and reports what a run without cache reports."""
    root = tmp_path / "project"
    shutil.copytree(FIXTURES / "TL201" / "wrapper_project", root, ignore=shutil.ignore_patterns("*.fixed.py"))
    files = sorted(root.rglob("*.py"))
    monkeypatch.chdir(root)
    settings = Settings(select=("TL201",), root=tmp_path)
    cache = Cache(tmp_path / "cache")
    counts = Counts(monkeypatch)

    def main_lines(outcomes: Sequence[FileOutcome]) -> List[int]:
        return sorted(d.start.line for o in outcomes if Path(o.path).name == "main.py" for d in o.diagnostics)

    first = cached_run(files, lambda _: settings, counts.lint, cache=cache)
    assert main_lines(first) == [8, 9, 12, 18]
    loaders = root / "data" / "loaders.py"
    loaders.write_text(loaders.read_text().replace("def build_loader(dataset, workers=0,", "def build_loader(dataset, workers=4,"))
    counts.reset()
    second = cached_run(files, lambda _: settings, counts.lint, cache=cache)
    assert "main.py" in counts.linted
    assert main_lines(second) == [8, 9, 18]  # build_loader(train_set) now has 4 workers
    assert findings(second) == fresh(files, settings)


def test_an_unchanged_run_opens_one_cache_file_the_record(warm: Warm, trusted: None,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file's findings are in the run's record: no entry is opened
    (besides the key the record is sealed with)."""
    first = warm.run()
    opened: List[str] = []
    read_file = Cache._read_file

    def counted(self: Cache, folder: int, name: str) -> Any:
        opened.append(name)
        return read_file(self, folder, name)

    monkeypatch.setattr(Cache, "_read_file", counted)
    second = warm.run(work=warm.counts.lint)
    assert [name for name in opened if name != "key"] == [next(n for n in opened if n != "key")]
    assert len(opened) <= 2 and findings(second) == findings(first)
    opened.clear()
    (warm.root / "engine.py").touch()  # a new stamp, the same bytes: still the record alone
    assert findings(warm.run()) == findings(first) and len([n for n in opened if n != "key"]) == 1


def test_a_changed_file_reads_each_entry_once_and_lints_only_what_its_change_reaches(
        warm: Warm, trusted: None, monkeypatch: pytest.MonkeyPatch) -> None:
    warm.run()
    opened: List[str] = []
    read_file = Cache._read_file

    def counted(self: Cache, folder: int, name: str) -> Any:
        opened.append(name)
        return read_file(self, folder, name)

    monkeypatch.setattr(Cache, "_read_file", counted)
    warm.counts.reset()
    (warm.root / "README.txt").write_text("not linted")  # changes nothing the run read
    readme_free = warm.run()
    assert warm.counts.linted == [] and all(o.from_cache for o in readme_free)
    lonely = next(p for p in warm.files if p.name != "engine.py")
    lonely.write_text(lonely.read_text() + "\n# a comment\n")
    warm.counts.reset()
    opened.clear()
    warm.run()
    entries = [name for name in opened if name not in ("key",) and name.endswith(".json")]
    # The record, then one entry a file (the facts the index keeps are read by the index builder).
    assert warm.counts.builds == 1 and warm.counts.linted == [lonely.name]
    assert len(set(entries)) == len(entries)


def test_editing_only_a_caller_changes_the_factory_findings_on_a_warm_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trusted: None) -> None:
    """data/factory.py's TL202 findings come from what its callers in other
    modules do with the loaders it returns: a warm run after a caller stops
    (then starts again) copying the batches to CUDA lints factory.py again,
    and its finding disappears (then reappears) as in a run without cache."""
    root = tmp_path / "project"
    shutil.copytree(FIXTURES / "TL202" / "factory_project", root, ignore=shutil.ignore_patterns("*.fixed.py"))
    files = sorted(root.rglob("*.py"))
    monkeypatch.chdir(root)
    settings = Settings(select=("TL202",), root=tmp_path)
    cache = Cache(tmp_path / "cache")
    counts = Counts(monkeypatch)

    def factory_lines(outcomes: Sequence[FileOutcome]) -> List[int]:
        return sorted(d.start.line for o in outcomes if Path(o.path).name == "factory.py" for d in o.diagnostics)

    first = cached_run(files, lambda _: settings, counts.lint, cache=cache)
    assert factory_lines(first) == [8, 14, 28]
    script = root / "train_script.py"
    original = script.read_text()
    script.write_text(original.replace("images = images.cuda()", "images = images.cpu()")
                      .replace("labels = labels.cuda()", "labels = labels.cpu()"))
    counts.reset()
    second = cached_run(files, lambda _: settings, counts.lint, cache=cache)
    assert "factory.py" in counts.linted
    assert factory_lines(second) == [8, 28]  # training_loader's only caller keeps its batches on the CPU
    assert findings(second) == fresh(files, settings)
    script.write_text(original)
    counts.reset()
    third = cached_run(files, lambda _: settings, counts.lint, cache=cache)
    assert factory_lines(third) == [8, 14, 28]
    assert findings(third) == fresh(files, settings)
