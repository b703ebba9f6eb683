"""Is discovery linear in the number of folders?  A chain of nested folders.

    .venv/bin/python bench/deep_tree.py                # depths 300, 600, 1200
    .venv/bin/python bench/deep_tree.py --depths 500,1000,2000

For each depth it builds ``d/d/.../d`` (a ``.git`` at the top, a
``.gitignore`` and a ``pyproject.toml`` with a ``[tool.torchlint]`` table, one
Python file per level), then times ``discover()`` on the top folder, in this
process, after one warm-up.  It prints the seconds per depth and the ratio of
each time to the previous one: about 2 when the depth doubles means linear,
about 4 quadratic.  Everything is built in a temporary folder and removed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from hostile_support import deep_folders  # noqa: E402

from torchlint.lint.discovery import discover  # noqa: E402
from torchlint.lint.settings import SettingsResolver  # noqa: E402


def time_depth(depth: int) -> float:
    """Seconds for one discovery of a tree ``depth`` folders deep (best of two)."""
    with tempfile.TemporaryDirectory() as scratch:
        top = Path(scratch)
        (top / ".git").mkdir()
        (top / ".gitignore").write_text("*.pyc\nbuild/\n")
        (top / "pyproject.toml").write_text('[tool.torchlint]\nextend-exclude = ["gen"]\n')
        with deep_folders(top, depth) as leaf:
            folder = leaf
            while folder != top:
                (folder / "m.py").write_text("x = 1\n")
                folder = folder.parent
            best = float("inf")
            for _ in range(2):
                start = time.perf_counter()
                found = discover([top], SettingsResolver().for_path)
                best = min(best, time.perf_counter() - start)
            assert len(found.files) == depth, len(found.files)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", default="300,600,1200", help="comma-separated folder depths")
    depths = [int(d) for d in parser.parse_args().depths.split(",")]
    times: List[float] = []
    print(f"{'depth':>6} {'seconds':>9} {'ratio to previous':>18}")
    for depth in depths:
        times.append(time_depth(depth))
        ratio = f"{times[-1] / times[-2]:.2f}" if len(times) > 1 else ""
        print(f"{depth:>6} {times[-1]:>9.3f} {ratio:>18}", flush=True)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
