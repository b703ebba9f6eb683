"""bench/training_corpus.py: which files it draws, and that a draw repeats."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import List

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "training_corpus.py"


def _checkouts(root: Path) -> Path:
    src = root / "src"
    for repository, names in {
        "a__one": ["train.py", "main_ddp.py", "engine.py", "model.py", "utils/train_utils.py"],
        "b__two": ["finetune.py", "trainer.py", "tests/train_test.py"],
        "c__three": ["setup.py"],
    }.items():
        for name in names:
            path = src / repository / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# {repository}/{name}\nx = 1\n")
    (src / "a__one" / ".git").mkdir()
    (src / "a__one" / ".git" / "train_hook.py").write_text("x = 1\n")
    return src


def _draw(src: Path, out: Path, *options: str) -> List[str]:
    subprocess.run([sys.executable, str(SCRIPT), str(src), str(out), *options], check=True, capture_output=True)
    return sorted(path.read_text().splitlines()[0] for path in out.iterdir())


def test_draws_training_scripts_per_repository_and_repeats(tmp_path: Path) -> None:
    src = _checkouts(tmp_path)
    first = _draw(src, tmp_path / "one")
    assert first == _draw(src, tmp_path / "two")  # the same checkouts give the same corpus
    repositories = [line.split()[1].split("/")[0] for line in first]
    assert repositories.count("a__one") == 2 and repositories.count("b__two") == 2
    assert "c__three" not in repositories  # no training script there
    picked = {line.split()[1] for line in first}
    assert picked <= {"a__one/train.py", "a__one/main_ddp.py", "a__one/engine.py", "a__one/utils/train_utils.py",
                      "b__two/finetune.py", "b__two/tests/train_test.py"}  # never model.py, trainer.py or .git
    everything = _draw(src, tmp_path / "all", "--per-repo", "9")
    assert len(everything) == 6
    assert len(_draw(src, tmp_path / "three", "--per-repo", "9", "--limit", "3")) == 3
