"""Where a cold run's time goes: the share of each rule, each fact and the parse.

    .venv/bin/python bench/profile_rules.py                # 120 torch files, every rule
    .venv/bin/python bench/profile_rules.py --files 400 --training fixtures

Lints files in this process under cProfile (one index build, then each
file) and sums each function's own time (``tottime``: exclusive, so the
buckets add up; a built-in's time goes to the functions that called it) by
where the function lives: ``rules/<name>`` (a rule),
``torchlint/analysis/<module>`` (a fact of the program model), libcst's
parser (the floor), the rest of libcst (visitor dispatch, metadata), the
engine, the project index's builders, and everything else.  The profiler
slows Python code more than the parser's native code, so shares of Python
buckets are upper bounds; the order is what to read.

The files: ``--files`` spread over the torch corpus bench/speed.py unzips
(bench/_corpus/torch), or every ``.py`` file of ``--training`` (without
``*.fixed.py``).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Tuple

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "_corpus" / "torch"


def bucket(filename: str) -> str:
    """The bucket a function's own time is counted in, from its file."""
    path = filename.replace(os.sep, "/")
    if "/rules/" in path:
        name = path.split("/rules/", 1)[1].split("/", 1)[0]
        return f"rule {name[:-3] if name.endswith('.py') else name}"
    if "/torchlint/analysis/" in path:
        name = path.split("/torchlint/analysis/", 1)[1]
        module = name[:-3] if name.endswith(".py") else name
        builders = ("queries", "imports", "index", "store", "summaries", "asks")
        return f"index {module}" if module in builders else f"fact {module}"
    if "/libcst/_parser/" in path or "libcst/native" in path or "libcst_native" in path:
        return "libcst parse"
    if "/libcst/" in path:
        return "libcst other (nodes, visitors, metadata)"
    if "/torchlint/" in path:
        return "torchlint " + path.split("/torchlint/", 1)[1].replace(".py", "")
    if filename == "~":  # built-ins called from built-ins
        return "built-ins"
    if "/lib/python3" in path:
        return "stdlib " + path.rsplit("/lib/python3", 1)[1].split("/", 1)[-1].replace(".py", "")
    return "other " + path.rsplit("/", 1)[-1]


def files_of(args: argparse.Namespace) -> Tuple[Path, List[Path]]:
    if args.training is not None:
        root = args.training.resolve()
        return root, sorted(p for p in root.rglob("*.py") if not p.name.endswith(".fixed.py"))
    if not CORPUS.is_dir():
        raise SystemExit(f"no corpus in {CORPUS}: run bench/speed.py --quick once (it unzips the torch wheel)")
    every = sorted(CORPUS.rglob("*.py"))
    count = min(args.files, len(every))
    return CORPUS, [every[int(k * len(every) / count)] for k in range(count)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=120, help="torch files, spread over the corpus")
    parser.add_argument("--training", type=Path, help="lint every .py file of this folder instead")
    parser.add_argument("--select", default="ALL")
    parser.add_argument("--top", type=int, default=40, help="rows shown")
    args = parser.parse_args()
    from torchlint.lint.runner import lint_file, prepare_project
    from torchlint.lint.settings import Settings
    from torchlint.source.parsing import on_deep_stack

    root, files = files_of(args)
    os.chdir(root)
    settings = Settings(select=tuple(args.select.split(",")), root=root)
    lint_file(files[0], settings)  # imports, outside the profile
    profile = cProfile.Profile()

    def run() -> None:
        # In the deep-stack thread the engine would otherwise start per file, so
        # that the profiler (which sees one thread) sees the whole lint.
        profile.enable()
        project = prepare_project(files, lambda _: settings)
        for path in files:
            lint_file(path, settings, project)
        profile.disable()

    on_deep_stack(run)
    stats = pstats.Stats(profile)
    totals: Dict[str, float] = defaultdict(float)
    for (filename, _, _), (_, _, tottime, _, callers) in stats.stats.items():  # type: ignore[attr-defined]
        if filename == "~" and callers:
            # A built-in (isinstance, str.join, ...): its time goes to its callers' buckets.
            for (caller_file, _, _), (_, _, caller_tottime, _) in callers.items():
                totals[bucket(caller_file)] += caller_tottime
        else:
            totals[bucket(filename)] += tottime
    whole = sum(totals.values())
    print(f"{len(files)} files under {root}, --select {args.select}; profiled time {whole:.2f} s "
          "(own time of each function, summed by where it lives)")
    print(f"{'bucket':<48} {'seconds':>8} {'share':>7}")
    for name, seconds in sorted(totals.items(), key=lambda item: -item[1])[:args.top]:
        print(f"{name:<48} {seconds:>8.2f} {seconds / whole:>6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
