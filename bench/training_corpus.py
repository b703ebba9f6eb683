"""Copy a corpus of real training scripts out of repository checkouts.

    python bench/training_corpus.py SRC OUT [--per-repo 2] [--limit 60] [--seed 0]

SRC holds one checkout per repository (``bench/score_labels.py``'s ``--src``
folder: ``SRC/<owner>__<name>``).  From each, in name order, up to
``--per-repo`` files named ``train*.py``, ``main*.py``, ``engine*.py`` or
``finetune*.py`` are drawn (a seeded shuffle of the sorted candidates), until
``--limit`` files; each is copied to OUT as ``NN_<name>.py``.  The same
checkouts and options give the same corpus, which ``bench/speed.py
--training OUT`` then measures.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
from pathlib import Path
from typing import List

PREFIXES = ("train", "main", "engine", "finetune")


def candidates(repository: Path) -> List[Path]:
    """The training-script files of one checkout, sorted."""
    found = [
        path for path in repository.rglob("*.py")
        if ".git" not in path.parts and path.name.split(".")[0].split("_")[0] in PREFIXES
    ]
    return sorted(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--per-repo", type=int, default=2)
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    chosen: List[Path] = []
    for repository in sorted(p for p in args.src.iterdir() if p.is_dir()):
        files = candidates(repository)
        rng.shuffle(files)
        chosen += files[: args.per_repo]
    chosen = chosen[: args.limit]
    args.out.mkdir(parents=True, exist_ok=True)
    for number, path in enumerate(chosen):
        shutil.copy(path, args.out / f"{number:02d}_{path.name}")
    lines = sum(len(path.read_text(encoding="utf-8", errors="replace").splitlines()) for path in chosen)
    print(f"{len(chosen)} files, {lines:,} lines, from "
          f"{len({path.relative_to(args.src).parts[0] for path in chosen})} repositories -> {args.out}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
