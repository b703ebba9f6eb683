"""Precision and recall of torchlint's rules on hand-labelled real training code.

    .venv/bin/python bench/score_labels.py --src /tmp/labelsrc --mirror /work/.mirror
    .venv/bin/python bench/score_labels.py --src /tmp/labelsrc --markdown   # the table of docs/measurements.md
    .venv/bin/python bench/score_labels.py --src DIR --markdown-out table.md # both in one run
    .venv/bin/python bench/score_labels.py --src DIR --rules TL101 TL301    # some rules only

Each `bench/labels/<CODE>.toml` lists places in public repositories, read by
hand, where the rule must report (`positive`) or must stay quiet (`negative`,
a look-alike).  A (file, rule) pair that appears in a label file is fully
labelled, so any other finding of the rule in that file is a false positive
too.  Checkouts live in `--src DIR` as `DIR/<owner>__<name>`; a missing one is
cloned from `--mirror DIR` (`<owner>+<name>/repo` git dirs) or from github.com,
and the labelled commit is checked out.  torchlint (the one this Python runs,
or `--torchlint CMD`) is run with only the rule selected, the label file's
`torch-version` and each repository's framework releases (its `[pins."owner/name"]`
table: `lightning-version`, `transformers-version`, `accelerate-version`, passed
as the command-line flags of those names, so gated checks see the release the
project pins), no cache and no configuration, over the labelled files and
the project modules they star-import (so that `from models import *` resolves
as in a run over the whole project; findings there are not judged).  Bad label files stop the run with a one-line message naming the file.
"""

from __future__ import annotations

import argparse
import enum
import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
LABELS = HERE / "labels"

_TOP_KEYS = frozenset({"rule", "torch-version", "case", "pins"})
_PIN_KEYS = ("accelerate-version", "lightning-version", "transformers-version")
"""A repository's framework releases, by the torchlint setting (and flag) that takes each."""
_CASE_REQUIRED = ("repo", "commit", "path", "line", "label")
_CASE_KEYS = frozenset(_CASE_REQUIRED) | {"group", "note", "set"}
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_RULE = re.compile(r"^TL[0-9]{3}$")
_VERSION = re.compile(r"^[0-9]+\.[0-9]+(\.[0-9]+)?$")


class LabelError(Exception):
    """A label file (or the checkout it points into) cannot be used; the message is one line."""


class Label(enum.Enum):
    POSITIVE = "positive"
    NEGATIVE = "negative"


@dataclass(frozen=True)
class Case:
    repo: str
    commit: str
    path: str
    line: int
    label: Label
    group: str = ""
    note: str = ""
    # The labelling round a case belongs to (e.g. "blind-2026-11-26"): `--set` scores one round
    # alone, so numbers on code read after a rule was tuned stay apart from unseen ones.
    set: str = ""

    @property
    def where(self) -> str:
        return f"{self.repo} {self.path}:{self.line}"


Pins = Tuple[Tuple[str, Tuple[Tuple[str, str], ...]], ...]
"""(repo, ((setting, release), ...)) for each pinned repository, sorted."""


@dataclass(frozen=True)
class LabelSet:
    rule: str
    torch_version: Optional[str]
    cases: Tuple[Case, ...]
    source: Path
    pins: Pins = ()
    """Each repository's framework releases (``lightning-version`` ...), where its project pins one."""

    def pinned(self, repo: str) -> Tuple[Tuple[str, str], ...]:
        """``repo``'s framework releases as (setting, release) pairs."""
        return dict(self.pins).get(repo, ())

    def flags(self, repo: str) -> List[str]:
        """The command-line flags that give torchlint ``repo``'s releases."""
        return [part for key, release in self.pinned(repo) for part in (f"--{key}", release)]

    def files(self) -> List[Tuple[str, str, str]]:
        """(repo, commit, path) of every fully labelled file, sorted."""
        return sorted({(c.repo, c.commit, c.path) for c in self.cases})


@dataclass(frozen=True)
class Finding:
    rule: str
    repo: str
    path: str
    row: int
    end_row: int
    message: str


class Outcome(enum.Enum):
    TRUE_POSITIVE = "TP"
    FALSE_POSITIVE = "FP"
    FALSE_NEGATIVE = "FN"
    TRUE_NEGATIVE = "TN"


@dataclass(frozen=True)
class Judged:
    """One labelled case or one unlabelled finding, with what torchlint did there."""

    outcome: Outcome
    repo: str
    path: str
    line: int
    group: str
    note: str


@dataclass(frozen=True)
class Score:
    rule: str
    judged: Tuple[Judged, ...]
    positives: int
    negatives: int
    repos: Tuple[str, ...] = field(default=())

    def count(self, outcome: Outcome) -> int:
        return sum(1 for j in self.judged if j.outcome is outcome)

    @property
    def precision(self) -> Optional[float]:
        tp, fp = self.count(Outcome.TRUE_POSITIVE), self.count(Outcome.FALSE_POSITIVE)
        return tp / (tp + fp) if tp + fp else None

    @property
    def recall(self) -> Optional[float]:
        tp, fn = self.count(Outcome.TRUE_POSITIVE), self.count(Outcome.FALSE_NEGATIVE)
        return tp / (tp + fn) if tp + fn else None


# ---------------------------------------------------------------- loading


def _fail(source: Path, message: str) -> LabelError:
    return LabelError(f"{source}: {message}")


def _case(source: Path, index: int, raw: object) -> Case:
    where = f"case {index + 1}"
    if not isinstance(raw, dict):
        raise _fail(source, f"{where} is not a table")
    unknown = sorted(set(raw) - _CASE_KEYS)
    if unknown:
        raise _fail(source, f"{where}: unknown key(s) {', '.join(unknown)}")
    missing = [k for k in _CASE_REQUIRED if k not in raw]
    if missing:
        raise _fail(source, f"{where}: missing key(s) {', '.join(missing)}")
    for key in ("repo", "commit", "path", "label", "group", "note", "set"):
        if key in raw and not isinstance(raw[key], str):
            raise _fail(source, f"{where}: `{key}` must be a string")
    line = raw["line"]
    if isinstance(line, bool) or not isinstance(line, int) or line < 1:
        raise _fail(source, f"{where}: `line` must be a positive integer, not {line!r}")
    if not _REPO.match(raw["repo"]):
        raise _fail(source, f"{where}: `repo` must be owner/name, not {raw['repo']!r}")
    if not _COMMIT.match(raw["commit"]):
        raise _fail(source, f"{where}: `commit` must be 40 lowercase hex digits, not {raw['commit']!r}")
    path = raw["path"]
    if not path or path.startswith("/") or "\\" in path or ".." in Path(path).parts:
        raise _fail(source, f"{where}: `path` must be relative inside the repository, not {path!r}")
    try:
        label = Label(raw["label"])
    except ValueError:
        raise _fail(source, f"{where}: `label` must be positive or negative, not {raw['label']!r}") from None
    return Case(raw["repo"], raw["commit"], path, line, label, raw.get("group", ""), raw.get("note", ""), raw.get("set", ""))


def parse_labels(text: str, source: Path) -> LabelSet:
    """Validate one label file's text; every problem is a LabelError naming the file."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _fail(source, f"not valid TOML: {exc}") from None
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise _fail(source, f"unknown key(s) {', '.join(unknown)}")
    rule = data.get("rule")
    if not isinstance(rule, str) or not _RULE.match(rule):
        raise _fail(source, f"`rule` must be a code such as \"TL101\", not {rule!r}")
    if source.suffix == ".toml" and source.stem != rule:
        raise _fail(source, f"holds rule {rule} but is named {source.name}")
    version = data.get("torch-version")
    if version is not None and (not isinstance(version, str) or not _VERSION.match(version)):
        raise _fail(source, f"`torch-version` must be a release such as \"1.13\", not {version!r}")
    raw_cases = data.get("case", [])
    if not isinstance(raw_cases, list) or not raw_cases:
        raise _fail(source, "no [[case]] entries")
    cases = tuple(_case(source, i, raw) for i, raw in enumerate(raw_cases))
    seen: Dict[Tuple[str, str, int], int] = {}
    commits: Dict[str, str] = {}
    for i, case in enumerate(cases):
        key = (case.repo, case.path, case.line)
        if key in seen:
            raise _fail(source, f"case {i + 1} repeats case {seen[key] + 1} ({case.where})")
        seen[key] = i
        if commits.setdefault(case.repo, case.commit) != case.commit:
            raise _fail(source, f"case {i + 1}: {case.repo} is labelled at two commits")
    return LabelSet(rule, version, cases, source, _pins(source, data.get("pins", {}), {c.repo for c in cases}))


def _pins(source: Path, raw: object, repos: Set[str]) -> Pins:
    """The `[pins."owner/name"]` tables: known settings, release strings, repositories the file labels."""
    if not isinstance(raw, dict):
        raise _fail(source, "`pins` must be a table of repositories")
    found = []
    for repo, table in sorted(raw.items()):
        if not _REPO.match(repo):
            raise _fail(source, f"pins: `{repo}` must be owner/name")
        if repo not in repos:
            raise _fail(source, f"pins: {repo} has no case in this file")
        if not isinstance(table, dict) or not table:
            raise _fail(source, f"pins.{repo} must be a table such as {{ lightning-version = \"1.9\" }}")
        unknown = sorted(set(table) - set(_PIN_KEYS))
        if unknown:
            raise _fail(source, f"pins.{repo}: unknown key(s) {', '.join(unknown)} (known: {', '.join(_PIN_KEYS)})")
        for key, release in sorted(table.items()):
            if not isinstance(release, str) or not _VERSION.match(release):
                raise _fail(source, f"pins.{repo}: `{key}` must be a release such as \"1.9\" or \"4.40.0\", not {release!r}")
        found.append((repo, tuple(sorted(table.items()))))
    return tuple(found)


def check_pins_agree(sets: Sequence[LabelSet]) -> None:
    """A repository is pinned alike in every label file that pins it (its project has one set of requirements)."""
    seen: Dict[Tuple[str, str], Tuple[str, Path]] = {}
    for labels in sets:
        for repo, pinned in labels.pins:
            for key, release in pinned:
                first = seen.setdefault((repo, key), (release, labels.source))
                if first[0] != release:
                    raise LabelError(f"{labels.source}: pins.{repo}: `{key}` is {release!r} here but {first[0]!r} in {first[1]}")


def only_sets(labels: LabelSet, names: Sequence[str]) -> Optional[LabelSet]:
    """The label set cut down to the cases of the named rounds (None when none is left).

    A (file, rule) pair is labelled as a whole in one round, so a cut keeps whole files."""
    if not names:
        return labels
    cases = tuple(c for c in labels.cases if c.set in names)
    repos = {c.repo for c in cases}
    pins = tuple(entry for entry in labels.pins if entry[0] in repos)
    return LabelSet(labels.rule, labels.torch_version, cases, labels.source, pins) if cases else None


def load_labels(path: Path) -> LabelSet:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(path, f"cannot read: {exc}") from None
    return parse_labels(text, path)


def checkout_dir(src: Path, repo: str) -> Path:
    return src / repo.replace("/", "__")


def check_lines(labels: LabelSet, src: Path) -> None:
    """Every labelled line must exist in its file and hold code, not a blank line."""
    texts: Dict[Tuple[str, str], List[str]] = {}
    for i, case in enumerate(labels.cases):
        key = (case.repo, case.path)
        if key not in texts:
            file = checkout_dir(src, case.repo) / case.path
            try:
                texts[key] = file.read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                raise _fail(labels.source, f"case {i + 1}: cannot read {file}: {exc}") from None
        lines = texts[key]
        if case.line > len(lines):
            raise _fail(labels.source, f"case {i + 1}: line {case.line} is out of range ({case.path} has {len(lines)} lines)")
        if not lines[case.line - 1].strip():
            raise _fail(labels.source, f"case {i + 1}: line {case.line} of {case.path} is blank")


# ---------------------------------------------------------------- scoring


def _claim(finding: Finding, cases: Sequence[Case]) -> Optional[Case]:
    """The labelled case a finding speaks about: same line first, else a line inside its span."""
    same = [c for c in cases if c.line == finding.row]
    if same:
        return same[0]
    inside = [c for c in cases if finding.row <= c.line <= finding.end_row]
    inside.sort(key=lambda c: (c.label is not Label.POSITIVE, c.line))
    return inside[0] if inside else None


def score(labels: LabelSet, findings: Iterable[Finding]) -> Score:
    """Judge every labelled case and every finding in a labelled file.

    A positive is a true positive when some finding claims it, else a false
    negative.  A finding that claims a negative, or claims nothing in a fully
    labelled file, is a false positive; findings in unlabelled files are ignored.
    Several findings on one positive line count once.
    """
    by_file: Dict[Tuple[str, str], List[Case]] = {}
    for case in labels.cases:
        by_file.setdefault((case.repo, case.path), []).append(case)
    hit: Dict[Case, bool] = {}
    judged: List[Judged] = []
    for finding in sorted(findings, key=lambda f: (f.repo, f.path, f.row, f.end_row, f.message)):
        if finding.rule != labels.rule:
            continue
        cases = by_file.get((finding.repo, finding.path))
        if cases is None:
            continue
        case = _claim(finding, cases)
        if case is None:
            judged.append(Judged(Outcome.FALSE_POSITIVE, finding.repo, finding.path, finding.row, "", f"unlabelled finding: {finding.message}"))
        elif case.label is Label.NEGATIVE:
            if case not in hit:
                judged.append(Judged(Outcome.FALSE_POSITIVE, case.repo, case.path, case.line, case.group, case.note))
            hit[case] = True
        else:
            hit[case] = True
    for case in labels.cases:
        if case.label is Label.POSITIVE:
            outcome = Outcome.TRUE_POSITIVE if case in hit else Outcome.FALSE_NEGATIVE
        elif case not in hit:
            outcome = Outcome.TRUE_NEGATIVE
        else:
            continue
        judged.append(Judged(outcome, case.repo, case.path, case.line, case.group, case.note))
    positives = sum(1 for c in labels.cases if c.label is Label.POSITIVE)
    repos = tuple(sorted({c.repo for c in labels.cases}))
    return Score(labels.rule, tuple(judged), positives, len(labels.cases) - positives, repos)


# ---------------------------------------------------------------- running


def _git(args: Sequence[str], cwd: Optional[Path] = None) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)


def prepare_checkout(repo: str, commit: str, src: Path, mirror: Optional[Path]) -> Path:
    """`src/<owner>__<name>` at `commit`: kept if already there, else cloned and checked out."""
    target = checkout_dir(src, repo)
    if not target.exists():
        origin = mirror / repo.replace("/", "+") / "repo" if mirror is not None else None
        url = str(origin) if origin is not None and origin.exists() else f"https://github.com/{repo}.git"
        src.mkdir(parents=True, exist_ok=True)
        done = _git(["clone", "-q", "--no-checkout", url, str(target)])
        if done.returncode != 0:
            raise LabelError(f"{repo}: cannot clone {url}: {done.stderr.strip().splitlines()[-1:]}")
    head = _git(["rev-parse", "HEAD"], cwd=target)
    if head.returncode == 0 and head.stdout.strip() == commit and any(p.name != ".git" for p in target.iterdir()):
        return target
    # `-f`: a `--no-checkout` clone is already at `commit` with an empty index.
    done = _git(["-c", "advice.detachedHead=false", "checkout", "-q", "-f", "--detach", commit], cwd=target)
    if done.returncode != 0:
        # Some snapshots lack their largest blobs; the Python files are what the rules read.
        done = _git(["checkout", "-q", commit, "--", ":(glob)**/*.py"], cwd=target)
    if done.returncode != 0:
        raise LabelError(f"{repo}: cannot check out {commit} in {target}: {done.stderr.strip()}")
    return target


def parse_findings(text: str, repo: str, root: Path, rule: str) -> List[Finding]:
    """torchlint's JSON report, with file names made relative to the checkout."""
    found: List[Finding] = []
    for item in json.loads(text):
        if item["code"] != rule:
            continue
        name = Path(item["filename"])
        if name.is_absolute():
            name = name.resolve().relative_to(root.resolve())
        found.append(Finding(rule, repo, name.as_posix(), item["location"]["row"], item["end_location"]["row"], item["message"]))
    return found


_STAR_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\*", re.MULTILINE)


def star_imported(root: Path, paths: Sequence[str]) -> List[str]:
    """The checkout's files that the labelled files star-import, directly or
    through each other (``from models import *`` -> every ``models.py`` and
    ``models/__init__.py``; ``from .fcn import *`` -> the sibling ``fcn.py``):
    what `torchlint check .` would give its project index to resolve them."""
    seen = set(paths)
    pending = list(paths)
    extra: List[str] = []
    while pending:
        current = root / pending.pop()
        try:
            text = current.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for dots, module in _STAR_IMPORT.findall(text):
            if not dots and (module == "torch" or module.startswith("torch.")):
                continue
            parts = module.split(".") if module else []
            if dots:
                base = current.parent
                for _ in range(len(dots) - 1):
                    base = base.parent
                candidates = [base.joinpath(*parts).with_suffix(".py") if parts else base / "__init__.py",
                              base.joinpath(*parts, "__init__.py")]
            else:
                tail = Path(*parts)
                candidates = [*root.rglob(f"{tail}.py"), *root.rglob(f"{tail}/__init__.py")]
            for candidate in candidates:
                if not candidate.is_file():
                    continue
                relative = candidate.resolve().relative_to(root.resolve()).as_posix()
                if relative not in seen:
                    seen.add(relative)
                    extra.append(relative)
                    pending.append(relative)
    return sorted(extra)


def _run_key(labels: LabelSet, src: Path, repo: str, whole: bool) -> Tuple[Path, Tuple[str, ...], Tuple[str, ...]]:
    """(checkout, options, paths) of the run that gives ``labels`` its findings in ``repo``:
    label sets whose keys agree share one run."""
    root = checkout_dir(src, repo)
    labelled = sorted({path for case_repo, _commit, path in labels.files() if case_repo == repo})
    paths = ["."] if whole else [*labelled, *star_imported(root, labelled)]
    options = ["--torch-version", labels.torch_version] if labels.torch_version is not None else []
    return root, (*options, *labels.flags(repo)), tuple(paths)


def run_all(command: Sequence[str], sets: Sequence[LabelSet], src: Path, whole: bool = False) -> List[List[Finding]]:
    """Findings of each label set's rule over its labelled files (and the files
    they star-import, whose findings are not judged), in the order of ``sets``.
    ``whole``: over the whole checkout instead, as a user runs `check .`, so that
    a labelled file's callers in other modules are part of the run (findings in
    unlabelled files are still not judged).  Rules that need the same run (same
    checkout, options and paths) share one torchlint run that selects them all:
    rules do not read each other's findings, so the split is the same as one run
    per rule, at a twelfth of the cost on a full label folder."""
    wanted: Dict[Tuple[Path, Tuple[str, ...], Tuple[str, ...]], Set[str]] = {}
    repo_of: Dict[Path, str] = {}
    for labels in sets:
        for repo in sorted({repo for repo, _commit, _path in labels.files()}):
            key = _run_key(labels, src, repo, whole)
            wanted.setdefault(key, set()).add(labels.rule)
            repo_of[key[0]] = repo
    found: Dict[Tuple[Path, Tuple[str, ...], Tuple[str, ...]], List[Finding]] = {}
    for key in sorted(wanted, key=lambda k: (str(k[0]), k[1], k[2])):
        root, options, paths = key
        repo = repo_of[root]
        rules = sorted(wanted[key])
        argv = [*command, "check", "--select", ",".join(rules), "--no-cache", "--isolated", "--exit-zero",
                "--output-format", "json", *options]
        done = subprocess.run([*argv, *paths], cwd=root, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["no message"])[-1]
            sources = ", ".join(str(labels.source) for labels in sets if labels.rule in rules)
            raise LabelError(f"{sources}: torchlint failed on {repo} (exit {done.returncode}): {tail}")
        found[key] = [finding for rule in rules for finding in parse_findings(done.stdout, repo, root, rule)]
    results: List[List[Finding]] = []
    for labels in sets:
        mine: List[Finding] = []
        for repo in sorted({repo for repo, _commit, _path in labels.files()}):
            mine += [f for f in found[_run_key(labels, src, repo, whole)] if f.rule == labels.rule]
        results.append(mine)
    return results


def run_torchlint(command: Sequence[str], labels: LabelSet, src: Path, whole: bool = False) -> List[Finding]:
    """Findings of one label set's rule (see `run_all`)."""
    return run_all(command, [labels], src, whole)[0]


# ---------------------------------------------------------------- reporting


def _ratio(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def text_report(scores: Sequence[Score]) -> str:
    out = [f"{'rule':6} {'pos':>4} {'neg':>4} {'repos':>5} {'TP':>4} {'FP':>4} {'FN':>4} {'precision':>9} {'recall':>6}"]
    for s in scores:
        out.append(
            f"{s.rule:6} {s.positives:4} {s.negatives:4} {len(s.repos):5} {s.count(Outcome.TRUE_POSITIVE):4} "
            f"{s.count(Outcome.FALSE_POSITIVE):4} {s.count(Outcome.FALSE_NEGATIVE):4} {_ratio(s.precision):>9} {_ratio(s.recall):>6}"
        )
    for s in scores:
        for j in s.judged:
            if j.outcome in (Outcome.FALSE_POSITIVE, Outcome.FALSE_NEGATIVE):
                group = f" [{j.group}]" if j.group else ""
                out.append(f"{j.outcome.value} {s.rule} {j.repo} {j.path}:{j.line}{group} {j.note}")
    return "\n".join(out)


def markdown_report(scores: Sequence[Score]) -> str:
    out = [
        "| rule | positives | negatives | repositories | TP | FP | FN | precision | recall |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in scores:
        out.append(
            f"| {s.rule} | {s.positives} | {s.negatives} | {len(s.repos)} | {s.count(Outcome.TRUE_POSITIVE)} | "
            f"{s.count(Outcome.FALSE_POSITIVE)} | {s.count(Outcome.FALSE_NEGATIVE)} | {_ratio(s.precision)} | {_ratio(s.recall)} |"
        )
    repos = sorted({r for s in scores for r in s.repos})
    out += ["", f"Repositories ({len(repos)}): " + ", ".join(f"`{r}`" for r in repos) + "."]
    return "\n".join(out)


def label_files(rules: Sequence[str], folder: Path) -> List[Path]:
    if rules:
        return [folder / f"{rule}.toml" for rule in rules]
    return sorted(folder.glob("*.toml"))


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, required=True, help="folder of <owner>__<name> checkouts (made when missing)")
    parser.add_argument("--mirror", type=Path, help="folder of <owner>+<name>/repo git dirs to clone from instead of github.com")
    parser.add_argument("--labels", type=Path, default=LABELS, help="folder of <CODE>.toml label files")
    parser.add_argument("--rules", nargs="*", default=[], help="rule codes to score (default: every label file)")
    parser.add_argument("--set", nargs="*", default=[], dest="sets", help="score only the cases of these labelling rounds (a case's `set`)")
    parser.add_argument("--torchlint", default=f"{shlex.quote(sys.executable)} -m torchlint", help="command that runs torchlint")
    parser.add_argument("--markdown", action="store_true", help="print the table docs/measurements.md shows")
    parser.add_argument("--markdown-out", type=Path, help="also write that table to this file")
    parser.add_argument("--whole-checkout", action="store_true",
                        help="run over each whole checkout (`check .`), as users do, so that callers in unlabelled modules count")
    args = parser.parse_args(argv)
    command = shlex.split(args.torchlint)
    scores: List[Score] = []
    try:
        loaded = [only_sets(load_labels(path), args.sets) for path in label_files(args.rules, args.labels)]
        sets = [labels for labels in loaded if labels is not None]
        if not sets:
            raise LabelError(f"{args.labels}: no label files")
        check_pins_agree(sets)
        for labels in sets:
            for repo, commit, _path in labels.files():
                prepare_checkout(repo, commit, args.src, args.mirror)
            check_lines(labels, args.src)
        for labels, findings in zip(sets, run_all(command, sets, args.src, args.whole_checkout)):
            scores.append(score(labels, findings))
    except LabelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(markdown_report(scores) if args.markdown else text_report(scores))
    if args.markdown_out is not None:
        args.markdown_out.write_text(markdown_report(scores) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
