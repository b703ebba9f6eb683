"""Where a cold run's time goes: the share of each rule, each fact and the parse.

    .venv/bin/python bench/profile_rules.py                # 120 torch files, every rule
    .venv/bin/python bench/profile_rules.py --files 400 --training fixtures
    .venv/bin/python bench/profile_rules.py --areas        # the cProfile table by code area instead

Lints files in this process (one index build, then each file, as ``-j 1``
does) and prints one of two tables.

**By rule and by fact** (the default): CPU time charged to whoever is running,
with a stack of owners, so that the rows add up to the whole lint.  A rule
is charged for its visitor methods (and what the facts do lazily when it
asks them), a fact for its first build (``Facts``' cached properties, the
scopes, the import table), minus whatever nested owner it triggered; the
index for each query kind's builder; the engine for the pre-check's parse
and summary, libcst's parse, the traversal and the positions of findings;
``gc`` for the cyclic garbage collector's collections (and what they free),
whoever set them off.  No profiler runs, so the shares are those of a real run (a timer per
visitor call adds a little to the rules' rows).

**By code area** (``--areas``, instead: a run under cProfile): each
function's own time (``tottime``: exclusive, so the buckets add up; a
built-in's time goes to the functions that called it) summed by where the
function lives.  The profiler slows Python code more than the parser's
native code, so shares of Python buckets are upper bounds; the order is
what to read.

The files: ``--files`` spread over the torch corpus bench/speed.py unzips
(bench/_corpus/torch), or every ``.py`` file of ``--training`` (without
``*.fixed.py``).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import sys
import time
from collections import defaultdict
from functools import cached_property, wraps
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

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


class Ledger:
    """CPU time charged to the owner on top of a stack (exclusive times that add up)."""

    def __init__(self) -> None:
        self.stack: List[str] = []
        self.totals: Dict[str, float] = defaultdict(float)
        self.calls: Dict[str, int] = defaultdict(int)
        self.last = time.process_time()

    def enter(self, owner: str) -> None:
        now = time.process_time()
        if self.stack:
            self.totals[self.stack[-1]] += now - self.last
        self.stack.append(owner)
        self.calls[owner] += 1
        self.last = now

    def leave(self) -> None:
        now = time.process_time()
        self.totals[self.stack.pop()] += now - self.last
        self.last = now

    def wrap(self, owner: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(function)
        def charged(*args: Any, **kwargs: Any) -> Any:
            self.enter(owner)
            try:
                return function(*args, **kwargs)
            finally:
                self.leave()

        charged.__wrapped_by_ledger__ = True  # type: ignore[attr-defined]
        return charged


def _patch(ledger: Ledger, owner: str, holder: Any, name: str) -> None:
    setattr(holder, name, ledger.wrap(owner, getattr(holder, name)))


def instrument(ledger: Ledger, rules: Any) -> None:
    """Wrap the engine's phases, every fact's first build, the index's
    builders and every visitor method of ``rules`` (rule classes)."""
    import torchlint.analysis as analysis
    import torchlint.analysis.mentions as mentions
    import torchlint.analysis.names as names
    import torchlint.analysis.queries as queries
    import torchlint.analysis.saves as saves
    import torchlint.analysis.summaries as summaries
    import torchlint.lint.engine as engine
    import torchlint.lint.runner as runner
    import torchlint.ruleapi.precheck as precheck

    _patch(ledger, "run: read files, settings, records", runner, "lint_file")
    _patch(ledger, "pre-check: CPython ast.parse", engine, "facts_of")
    _patch(ledger, "pre-check: summary walk", precheck, "summarize")
    _patch(ledger, "pre-check: the index's summary of the file", engine, "_summary_from_index")
    _patch(ledger, "pre-check: rules' could_match", engine, "_kept")
    _patch(ledger, "libcst parse", engine, "parse_module")
    _patch(ledger, "engine: traversal, dispatch", engine, "_run_rules")
    _patch(ledger, "engine: positions of findings, fixes", engine, "_to_diagnostics")
    _patch(ledger, "engine: suppression comments", engine, "parse_suppressions")
    _patch(ledger, "fact scopes", names, "Scopes")
    for name, value in list(vars(analysis.Facts).items()):
        if isinstance(value, cached_property):
            label = {"located": "positions (one code generation)", "_walked": "parents, nodes_of (one walk)"}.get(
                name, name)
            value.func = ledger.wrap(f"fact {label}", value.func)
    _patch(ledger, "index: other (reading, module names)", runner, "prepare_project")
    for name in ("star_parts", "with_imported", "hierarchy", "_callers", "_methods", "connected", "reexports"):
        _patch(ledger, f"index {name.strip('_')}", queries, name)
    # The one parse of each file (names used, keywords, methods called, summaries, saves), by part.
    _patch(ledger, "index one_parse_each: reading, store", queries, "one_parse_each")
    _patch(ledger, "index one_parse_each: ast.parse", queries, "parse_quietly")
    _patch(ledger, "index one_parse_each: names used", mentions, "names_in_tree")
    _patch(ledger, "index one_parse_each: keywords, methods called", queries, "calls_in")
    _patch(ledger, "index one_parse_each: summaries", summaries, "summary_of_tree")
    _patch(ledger, "index one_parse_each: saves", saves, "saves_of_module")
    _patch(ledger, "index summaries: link", summaries, "link")
    _patch(ledger, "index project_saves", saves, "project_saves")
    for rule in rules:
        owner = f"rule {rule.code} {rule.name}"
        for attribute in dir(rule):  # inherited handlers too, wrapped on this class
            if attribute.startswith(("visit_", "leave_")) or attribute in ("after_suppressions", "__init__"):
                _patch(ledger, owner, rule, attribute)


def by_owner(files: List[Path], settings: Any) -> Tuple[Dict[str, float], Dict[str, int], float]:
    """One instrumented lint of ``files``: CPU seconds and calls by owner, and the whole."""
    from torchlint.lint.runner import lint_file, prepare_project
    from torchlint.ruleapi.catalog import all_rules
    from torchlint.ruleapi.precheck import shipped
    from torchlint.source.parsing import on_deep_stack

    ledger = Ledger()
    instrument(ledger, all_rules())
    import torchlint.lint.runner as runner

    def run() -> None:
        ledger.enter("other")
        project = runner.prepare_project(files, lambda _: settings, per_tree=shipped)
        for path in files:
            runner.lint_file(path, settings, project)
        ledger.leave()

    def collecting(phase: str, info: Dict[str, int]) -> None:
        # The cyclic collector's own time (freeing what it finds included), whoever set it off.
        if phase == "start":
            ledger.enter("gc: cyclic collections")
        else:
            ledger.leave()

    gc.callbacks.append(collecting)
    start = time.process_time()
    try:
        on_deep_stack(run)
    finally:
        gc.callbacks.remove(collecting)
    return ledger.totals, ledger.calls, time.process_time() - start


def owner_table(totals: Dict[str, float], calls: Dict[str, int], whole: float, top: int) -> List[str]:
    """The table by rule and fact, largest first, then the sums of each kind."""
    kinds: Dict[str, float] = defaultdict(float)
    for name, seconds in totals.items():
        kind = name.split(" ", 1)[0].rstrip(":")
        kinds[{"pre-check": "pre-check", "libcst": "libcst parse", "engine": "engine", "rule": "rules",
               "fact": "facts", "index": "index", "run": "run", "gc": "gc"}.get(kind, "other")] += seconds
    lines = [f"| owner | CPU s | share | calls |", "|---|---:|---:|---:|"]
    for name, seconds in sorted(totals.items(), key=lambda item: -item[1])[:top]:
        lines.append(f"| {name} | {seconds:.2f} | {seconds / whole:.1%} | {calls.get(name, 0):,} |")
    lines += ["", "| kind | CPU s | share |", "|---|---:|---:|"]
    for name, seconds in sorted(kinds.items(), key=lambda item: -item[1]):
        lines.append(f"| {name} | {seconds:.2f} | {seconds / whole:.1%} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=120, help="torch files, spread over the corpus")
    parser.add_argument("--training", type=Path, help="lint every .py file of this folder instead")
    parser.add_argument("--select", default="ALL")
    parser.add_argument("--top", type=int, default=60, help="rows shown")
    parser.add_argument("--areas", action="store_true", help="the cProfile table by code area instead")
    args = parser.parse_args()
    from torchlint.lint.runner import lint_file, prepare_project
    from torchlint.lint.settings import Settings
    from torchlint.source.parsing import on_deep_stack

    root, files = files_of(args)
    os.chdir(root)
    settings = Settings(select=tuple(args.select.split(",")), root=root)
    lint_file(files[0], settings)  # imports, outside the measurement
    if not args.areas:
        totals, calls, whole = by_owner(files, settings)
        print(f"{len(files)} files under {root}, --select {args.select}; {whole:.2f} s of CPU "
              "(each owner's exclusive time, by rule, fact, index builder and engine phase)")
        print("\n".join(owner_table(totals, calls, whole, args.top)))
        return 0
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
