"""Run torchlint over real code we did not write and print what happened.

    python bench/realcode.py                 # lightning, ultralytics, monai + torch's own source
    python bench/realcode.py --packages lightning --no-torch
    python bench/realcode.py --corpus DIR    # any folder of Python files

For every file: `check` must not hit an internal error; `fix --unsafe-fixes`
(on a copy) must leave every touched file parsable, and a second fix run
must change nothing.  Exit status 1 when any of that fails.
"""

from __future__ import annotations

import argparse
import collections
import difflib
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Counter, Dict, List, Sequence

import libcst as cst

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from torchlint.source.edits import LineIndex  # noqa: E402
from torchlint.lint.engine import parse_module  # noqa: E402
from torchlint.model import Diagnostic  # noqa: E402
from torchlint.lint.runner import fix_file, lint_file  # noqa: E402
from torchlint.lint.settings import Settings  # noqa: E402

DEFAULT_PACKAGES = ("lightning", "ultralytics", "monai")
TORCH_WHEEL = "torch==2.13.0"


def fetch(requirement: str, into: Path) -> Path:
    """Download one wheel without dependencies and unzip its Python files."""
    name = requirement.split("=")[0].split("<")[0].split(">")[0]
    target = into / name
    if target.is_dir() and any(target.rglob("*.py")):
        return target
    wheels = into / "_wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
         "-d", str(wheels), requirement],
        check=True,
    )
    wheel = max(wheels.glob(f"{name.replace('-', '_')}-*.whl"), key=lambda p: p.stat().st_mtime)
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.endswith(".py"):
                archive.extract(member, target)
    return target


def python_files(root: Path) -> List[Path]:
    return sorted(p for p in root.rglob("*.py") if p.is_file())


def is_internal_error(diagnostic: Diagnostic) -> bool:
    return diagnostic.code == "TL000" and "internal error" in diagnostic.message


def diff_within_findings(before: str, after: str, findings: Sequence[Diagnostic]) -> bool:
    """Whether every changed line lies on a finding, or inside one of the
    edits its fix declares (a statement a fix inserts elsewhere, as TL603's
    `set_float32_matmul_precision` after the imports), or is an added import."""
    covered: set = set()  # type: ignore[type-arg]
    lines = LineIndex(before)
    for finding in findings:
        if finding.fix is not None:
            covered.update(range(finding.start.line - 1, finding.end.line + 2))
            for edit in finding.fix.edits:
                covered.update(range(lines.position(edit.start).line - 1, lines.position(edit.end).line + 2))
    old, new = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        lines = set(range(i1 + 1, i2 + 1)) or {i1, i1 + 1}
        if lines & covered:
            continue
        if tag == "insert" and all(line.startswith("import ") for line in new[j1:j2]):
            continue
        return False
    return True


def run_corpus(name: str, root: Path, settings: Settings) -> bool:
    files = python_files(root)
    lines = 0
    codes: Counter[str] = collections.Counter()
    internal: List[str] = []
    started = time.perf_counter()
    for path in files:
        outcome = lint_file(path, settings)
        lines += path.read_bytes().count(b"\n")
        for diagnostic in outcome.diagnostics:
            codes[diagnostic.code] += 1
            if is_internal_error(diagnostic):
                internal.append(f"{outcome.path}: {diagnostic.message}")
    check_seconds = time.perf_counter() - started

    scratch = Path(tempfile.mkdtemp(prefix=f"torchlint-{name}-"))
    copy = scratch / name
    shutil.copytree(root, copy)
    touched = broken = unstable = stray = refound = 0
    applied: Counter[str] = collections.Counter()
    problems: List[str] = []
    for path in python_files(copy):
        before = lint_file(path, settings)
        first = fix_file(path, settings, unsafe=True, write=True)
        if first.fixed is None or not first.fixed.changed:
            continue
        touched += 1
        if first.source is not None and not diff_within_findings(first.source, first.fixed.source, before.diagnostics):
            stray += 1
            problems.append(f"fix changed lines outside its findings: {path}")
        applied.update(d.code for d in first.fixed.applied)
        text = path.read_text(encoding=first.original.encoding if first.original else "utf-8")
        if isinstance(parse_module(text, str(path)), Diagnostic):
            broken += 1
            problems.append(f"unparsable after fix: {path}")
            continue
        second = fix_file(path, settings, unsafe=True, write=False)
        if second.fixed is not None and second.fixed.changed:
            unstable += 1
            problems.append(f"second fix run changed: {path}")
        fixed_codes = {d.code for d in first.fixed.applied}
        if any(d.code in fixed_codes and d.fixable(True) for d in second.diagnostics):
            refound += 1
            problems.append(f"re-check still reports a fixed finding: {path}")
    shutil.rmtree(scratch, ignore_errors=True)

    found = ", ".join(f"{code} {count}" for code, count in sorted(codes.items())) or "none"
    fixed = ", ".join(f"{code} {count}" for code, count in sorted(applied.items())) or "none"
    print(f"\n== {name}: {len(files)} files, {lines} lines, check {check_seconds:.1f} s")
    print(f"   findings: {found}")
    print(f"   internal errors: {len(internal)}")
    print(f"   fix --unsafe-fixes: {touched} files changed ({fixed}); "
          f"unparsable after fix: {broken}; changed by a second run: {unstable}; "
          f"diff outside findings: {stray}; fixed findings reported again: {refound}")
    for line in internal[:20] + problems[:20]:
        print(f"   ! {line}")
    return not internal and not broken and not unstable and not stray and not refound


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--packages", nargs="*", default=list(DEFAULT_PACKAGES))
    parser.add_argument("--no-torch", action="store_true", help="skip torch's own source")
    parser.add_argument("--corpus", type=Path, action="append", default=[])
    parser.add_argument("--cache", type=Path, default=HERE / "_corpus")
    args = parser.parse_args()

    settings = Settings(select=("ALL",))
    corpora: Dict[str, Path] = {}
    for requirement in args.packages:
        corpora[requirement] = fetch(requirement, args.cache)
    if not args.no_torch:
        corpora["torch"] = fetch(TORCH_WHEEL, args.cache)
    for extra in args.corpus:
        corpora[extra.name] = extra
    ok = True
    for name, root in corpora.items():
        ok = run_corpus(name, root, settings) and ok
    print("\nresult:", "OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
