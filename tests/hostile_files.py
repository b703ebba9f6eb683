"""Hostile projects for the fuzz tests and ``bench/fuzz.py --hostile-files``:
FIFOs and device links where torchlint reads files, links planted in the
cache, deep package trees, import graphs that fan out at every level, and
pathological job scripts.  Each case is a folder and a command; the promise
checked is the same for all: the run ends within its time, without an
internal error or a traceback, with an exit code the case allows, and
nothing outside the project (a "victim" file) is changed."""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, FrozenSet, List, Optional

from hostile_support import cli_in_child, package_chain

GOOD = "import torch.nn as nn\nmodel = nn.DataParallel(net)\n"
VICTIM = b"a file outside the project that nothing may change\n"


@dataclass
class Case:
    """One hostile project: the command to run in ``root`` and what it may answer."""

    root: Path
    args: List[str]
    codes: FrozenSet[int] = frozenset({0, 1})
    victim: Optional[Path] = None
    before: List[List[str]] = field(default_factory=list)
    """Commands run first (to fill a cache), whose outcome is not judged."""
    deep: int = 0
    """Nested packages to build (and remove) around the run."""
    tamper: Optional[int] = None
    """A seed: after :attr:`before`, plant links and special files in the cache."""


def _special(path: Path, rng: random.Random, victim: Path) -> None:
    """A FIFO, a link to an endless device, or a link to the victim file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    choice = rng.randrange(3)
    if choice == 0:
        os.mkfifo(path)
    elif choice == 1:
        os.symlink("/dev/zero", path)
    else:
        os.symlink(victim, path)


def _victim(root: Path) -> Path:
    outside = root.parent / f"{root.name}-outside"
    outside.mkdir()
    victim = outside / "notes.txt"
    victim.write_bytes(VICTIM)
    os.chmod(victim, 0o600)
    return victim


def special_files(root: Path, rng: random.Random, size: int) -> Case:
    """FIFOs and device links where torchlint reads settings, ignores,
    requirements, a baseline and imported modules."""
    victim = _victim(root)
    (root / ".git" / "info").mkdir(parents=True)
    (root / "train.py").write_text("from models import *\nfrom helpers import Wrap\n" + GOOD)
    names = [".gitignore", ".git/info/exclude", "requirements.txt", "requirements-dev.txt", "pyproject.toml",
             ".torchlint.toml", "models.py", "helpers/__init__.py", "sub/.gitignore", "baseline.json"]
    for name in rng.sample(names, rng.randrange(1, len(names) + 1)):
        _special(root / name, rng, victim)
    (root / "sub").mkdir(exist_ok=True)
    (root / "sub" / "x.py").write_text(GOOD)
    args = ["check", ".", "--no-cache", "--select", "ALL"]
    if os.path.lexists(root / "baseline.json"):
        args += ["--baseline", "baseline.json"]
    # Exit 2 is allowed: a baseline that is not a regular file, or a configuration file that is a
    # link to a file that is not TOML, is a usage error (one line, nothing linted).
    return Case(root, args, frozenset({0, 1, 2}), victim)


def cache_links(root: Path, rng: random.Random, size: int) -> Case:
    """A warm cache whose entries and folders are replaced by links (to the
    victim, to a device, to a folder elsewhere), FIFOs and other users' modes."""
    victim = _victim(root)
    for number in range(max(size, 1)):
        (root / f"m{number}.py").write_text(GOOD)
    return Case(root, ["check", "."], frozenset({1, 2}), victim, before=[["check", "."]],
                tamper=rng.randrange(1 << 30))


def tamper_cache(case: Case) -> None:
    """Run after :attr:`Case.before`: plant links and special files in the cache."""
    rng = random.Random(case.tamper)
    cache = case.root / ".torchlint_cache"
    assert case.victim is not None
    entries = sorted(p for p in cache.rglob("*.json"))
    for entry in rng.sample(entries, rng.randrange(0, len(entries) + 1)):
        entry.unlink()
        _special(entry, rng, case.victim)
    folders = sorted(p for p in cache.rglob("*") if p.is_dir() and not p.is_symlink())
    if folders and rng.random() < 0.5:
        folder = rng.choice(folders)
        shutil.rmtree(folder)
        folder.symlink_to(case.victim.parent, target_is_directory=True)
    if rng.random() < 0.3:
        os.chmod(cache, 0o777)


def deep_packages(root: Path, rng: random.Random, size: int) -> Case:
    """A package tree ``size`` levels deep whose innermost module star-imports
    a sibling and subclasses a torch class."""
    (root / "train.py").write_text(GOOD)
    return Case(root, ["check", ".", "--no-cache", "--select", "ALL"], deep=max(size, 1))


def import_fan(root: Path, rng: random.Random, size: int) -> Case:
    """Modules m0..mN where each imports (or star-imports) the next two: the
    number of import paths doubles at every level."""
    levels = max(size, 2)
    for number in range(levels):
        after = [f"m{n}" for n in (number + 1, number + 2) if n < levels]
        star = rng.random() < 0.5
        lines = [f"from {name} import *" if star else f"from {name} import Base{name[1:]}" for name in after]
        lines.append("import torch")
        lines.append(f"class Base{number}(torch.nn.DataParallel):\n    pass")
        (root / f"m{number}.py").write_text("\n".join(lines) + "\n")
    (root / "train.py").write_text("from m0 import *\n" + GOOD)
    files = ["train.py"] if rng.random() < 0.5 else ["."]
    return Case(root, ["check", *files, "--no-cache", "--select", "ALL"])


def _job_script(rng: random.Random, size: int) -> str:
    header = "#!/bin/bash\n#SBATCH --gres=gpu:2\n#SBATCH -c 4\n"
    launch = "python3.11 -u -m torch.distributed.launch --nproc_per_node=2 train.py\n"
    pieces = {
        "suppressions": "# torchlint: ignore[TL903]\n" * size,
        "doubling": "A=xxxxxxxx\n" + "A=$A$A\n" * min(size, 64) + "python $A.py\ncd $A\n",
        "heredoc": "cat <<EOF\n" + launch * size,  # never closed
        "quotes": "echo \"" + "x\\\"y" * size + "\n" + launch,
        "single-line": "'" * size + "\n",
        "continuations": "python train.py \\\n" * size + "\n",
        "cr-endings": (header + launch).replace("\n", "\r") * max(size // 10, 1),
        "digits": "#SBATCH --gres=gpu:\u00b2\n#SBATCH -c \u0664\n#SBATCH --gpus=\uff12\n",
        "arithmetic": "X=$((1 << 2))\n" * size,
    }
    chosen = rng.sample(sorted(pieces), rng.randrange(1, 4))
    return header + "".join(pieces[name] for name in chosen) + launch


def job_scripts(root: Path, rng: random.Random, size: int) -> Case:
    (root / "train.py").write_text("import torch\n")
    (root / "job.sh").write_text(_job_script(rng, size))
    (root / "plain.sh").write_text("#!/bin/bash\n" + "echo hi\n" * max(size // 100, 1))
    command = ["check", "job.sh", "plain.sh", "--no-cache", "--select", "ALL"]
    if rng.random() < 0.5:
        command = ["fix", "job.sh", "plain.sh", "--apply", "--unsafe-fixes", "--no-cache"]
    return Case(root, command)


def raw_text(root: Path, rng: random.Random, size: int) -> Case:
    """Lines the project index searches raw text for, never closed."""
    (root / "imports.py").write_text("from m import (\n" * size)
    (root / "classes.py").write_text("class A(\n" * size)
    (root / "train.py").write_text("from imports import *\nfrom classes import A\n" + GOOD)
    return Case(root, ["check", "train.py", "--no-cache", "--select", "ALL"])


KINDS: Dict[str, Callable[[Path, random.Random, int], Case]] = {
    "special-files": special_files,
    "cache-links": cache_links,
    "deep-packages": deep_packages,
    "import-fan": import_fan,
    "job-scripts": job_scripts,
    "raw-text": raw_text,
}
SIZES = {"special-files": 1, "cache-links": 8, "deep-packages": 1_200, "import-fan": 14, "job-scripts": 40_000,
         "raw-text": 40_000}
"""The largest size of each kind (a size is drawn up to it, log-uniform)."""
FAST_SIZES = {"special-files": 1, "cache-links": 4, "deep-packages": 40, "import-fan": 8, "job-scripts": 2_000,
              "raw-text": 2_000}
"""The test suite's sizes (bench/fuzz.py --hostile-files uses :data:`SIZES`)."""


def run_case(kind: str, seed: int, fast: bool = False, timeout: float = 120.0) -> Optional[str]:
    """Build and run one hostile project; None when the promises hold, else
    what went wrong."""
    rng = random.Random(seed)
    largest = (FAST_SIZES if fast else SIZES)[kind]
    size = int(2 ** rng.uniform(0, max(largest, 2).bit_length()))
    size = min(max(size, 1), largest)
    top = Path(tempfile.mkdtemp(prefix="torchlint-hostile-"))
    root = top / "project"
    root.mkdir()
    try:
        case = KINDS[kind](root, rng, size)
        env: Dict[str, Optional[str]] = {"TORCHLINT_CACHE_DIR": None, "TORCHLINT_OUTPUT_FORMAT": "concise",
                                         "TORCHLINT_CEILING_DIRECTORIES": str(top),
                                         "GIT_CEILING_DIRECTORIES": str(top)}
        for command in case.before:
            cli_in_child(command, root, timeout, env=env)
        if case.tamper is not None:
            tamper_cache(case)
        if case.deep:
            with package_chain(root, case.deep) as leaf:
                (leaf / "m.py").write_text("from .x import *\nimport torch\nclass W(torch.nn.DataParallel):\n"
                                           "    pass\n" + GOOD)
                (leaf / "x.py").write_text("y = 1\n")
                case.args.insert(1, os.path.relpath(leaf / "m.py", root))
                result = cli_in_child(case.args, root, timeout, env=env)
        else:
            result = cli_in_child(case.args, root, timeout, env=env)
        output = result.stdout + result.stderr
        if "internal error" in output or "Traceback" in output:
            return f"{kind} #{seed} (size {size}): {output[-600:]}"
        if result.returncode not in case.codes:
            return f"{kind} #{seed} (size {size}): exit {result.returncode}: {output[-600:]}"
        if case.victim is not None and case.victim.read_bytes() != VICTIM:
            return f"{kind} #{seed} (size {size}): the file outside the project was changed"
        return None
    except BaseException as error:  # pytest.fail from a timeout, or a broken case
        if isinstance(error, KeyboardInterrupt):
            raise
        return f"{kind} #{seed} (size {size}): {type(error).__name__}: {error}"
    finally:
        shutil.rmtree(top, ignore_errors=True)
