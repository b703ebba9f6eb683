"""The label-file scorer: validation of label files, matching of findings to cases, checkouts."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

_SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "score_labels.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("score_labels", _SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["score_labels"] = module
    spec.loader.exec_module(module)
    return module


sl = _load()
COMMIT = "a" * 40
HEADER = 'rule = "TL201"\ntorch-version = "1.13"\n'


def case(line: int, label: str = "positive", path: str = "train.py", repo: str = "me/proj", **extra: object) -> str:
    text = f'\n[[case]]\nrepo = "{repo}"\ncommit = "{COMMIT}"\npath = "{path}"\nline = {line}\nlabel = "{label}"\n'
    for key, value in extra.items():
        text += f"{key} = {value!r}\n".replace("'", '"')
    return text


def parse(text: str) -> "sl.LabelSet":
    return sl.parse_labels(text, Path("TL201.toml"))


def finding(row: int, end: int = 0, path: str = "train.py", repo: str = "me/proj") -> "sl.Finding":
    return sl.Finding("TL201", repo, path, row, end or row, "msg")


# ------------------------------------------------------------ validation


def test_valid_file_loads_with_version_and_cases() -> None:
    labels = parse(HEADER + case(3, note="why") + case(5, "negative", group="g"))
    assert labels.rule == "TL201" and labels.torch_version == "1.13"
    assert [(c.line, c.label, c.group) for c in labels.cases] == [(3, sl.Label.POSITIVE, ""), (5, sl.Label.NEGATIVE, "g")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (HEADER + "colour = 1\n" + case(3), "unknown key(s) colour"),
        (HEADER + case(3, reason="x"), "case 1: unknown key(s) reason"),
        (HEADER + case(3, "maybe"), "`label` must be positive or negative, not 'maybe'"),
        (HEADER + case(3) + case(3, "negative"), "case 2 repeats case 1"),
        (HEADER + case(0), "`line` must be a positive integer"),
        (HEADER.replace("1.13", "new") + case(3), "`torch-version` must be a release"),
        ('rule = "TL2"\n' + case(3), "`rule` must be a code"),
        ('rule = "TL101"\n' + case(3), "holds rule TL101 but is named TL201.toml"),
        (HEADER, "no [[case]] entries"),
        (HEADER + case(3, path="../x.py"), "`path` must be relative inside the repository"),
        (HEADER + case(3, repo="noslash"), "`repo` must be owner/name"),
        (HEADER + case(3).replace(COMMIT, "abc"), "`commit` must be 40 lowercase hex digits"),
        (HEADER + case(3) + case(4).replace(COMMIT, "b" * 40), "me/proj is labelled at two commits"),
        (HEADER + "[[case]\n", "not valid TOML"),
        (HEADER + case(3) + '[pins."me/proj"]\nlightning = "1.9"\n', "pins.me/proj: unknown key(s) lightning"),
        (HEADER + case(3) + '[pins."me/proj"]\nlightning-version = "one"\n', "`lightning-version` must be a release"),
        (HEADER + case(3) + '[pins."me/proj"]\nlightning-version = 1.9\n', "`lightning-version` must be a release"),
        (HEADER + case(3) + '[pins."x/y"]\nlightning-version = "1.9"\n', "pins: x/y has no case in this file"),
        (HEADER + case(3) + '[pins."me/proj"]\n', "pins.me/proj must be a table"),
        (HEADER + 'pins = 3\n' + case(3), "`pins` must be a table of repositories"),
    ],
)
def test_bad_label_files_give_one_line_errors_naming_the_file(text: str, message: str) -> None:
    with pytest.raises(sl.LabelError) as info:
        parse(text)
    assert str(info.value).startswith("TL201.toml: ")
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_lines_out_of_range_or_blank_are_rejected(tmp_path: Path) -> None:
    (tmp_path / "me__proj").mkdir()
    (tmp_path / "me__proj" / "train.py").write_text("a = 1\n\nb = 2\n")
    sl.check_lines(parse(HEADER + case(1) + case(3)), tmp_path)
    with pytest.raises(sl.LabelError, match="line 9 is out of range"):
        sl.check_lines(parse(HEADER + case(9)), tmp_path)
    with pytest.raises(sl.LabelError, match="line 2 of train.py is blank"):
        sl.check_lines(parse(HEADER + case(2)), tmp_path)
    with pytest.raises(sl.LabelError, match="cannot read"):
        sl.check_lines(parse(HEADER + case(1, path="gone.py")), tmp_path)


# ------------------------------------------------------------ scoring


def outcomes(score: "sl.Score") -> list:
    return sorted((j.outcome.value, j.path, j.line) for j in score.judged)


def test_positive_found_is_tp_missed_is_fn_negative_quiet_is_tn() -> None:
    labels = parse(HEADER + case(3) + case(7) + case(9, "negative"))
    score = sl.score(labels, [finding(3)])
    assert outcomes(score) == [("FN", "train.py", 7), ("TN", "train.py", 9), ("TP", "train.py", 3)]
    assert score.precision == 1.0 and score.recall == 0.5


def test_finding_on_negative_or_unlabelled_line_of_labelled_file_is_fp() -> None:
    labels = parse(HEADER + case(3) + case(9, "negative"))
    score = sl.score(labels, [finding(3), finding(9), finding(20)])
    assert outcomes(score) == [("FP", "train.py", 9), ("FP", "train.py", 20), ("TP", "train.py", 3)]
    assert score.precision == pytest.approx(1 / 3)


def test_findings_in_files_without_labels_are_ignored() -> None:
    labels = parse(HEADER + case(3))
    score = sl.score(labels, [finding(3), finding(5, path="other.py"), finding(5, repo="x/y")])
    assert outcomes(score) == [("TP", "train.py", 3)]


def test_multi_line_finding_claims_the_labelled_line_inside_its_span() -> None:
    labels = parse(HEADER + case(12) + case(14, "negative"))
    score = sl.score(labels, [finding(10, end=15)])
    assert outcomes(score) == [("TN", "train.py", 14), ("TP", "train.py", 12)]


def test_same_line_wins_over_span_and_duplicates_count_once() -> None:
    labels = parse(HEADER + case(10, "negative") + case(11))
    score = sl.score(labels, [finding(10, end=11), finding(11), finding(11)])
    assert outcomes(score) == [("FP", "train.py", 10), ("TP", "train.py", 11)]


def test_no_findings_and_no_positives_gives_undefined_ratios() -> None:
    score = sl.score(parse(HEADER + case(3, "negative")), [])
    assert score.precision is None and score.recall is None
    assert "n/a" in sl.markdown_report([score])


def test_reports_name_rules_counts_repositories_and_each_miss() -> None:
    labels = parse(HEADER + case(3, note="missing workers") + case(4, repo="other/repo"))
    score = sl.score(labels, [finding(4, repo="other/repo")])
    text = sl.text_report([score])
    assert "FN TL201 me/proj train.py:3 missing workers" in text
    table = sl.markdown_report([score])
    assert "| TL201 | 2 | 0 | 2 | 1 | 0 | 1 | 1.00 | 0.50 |" in table
    assert "`me/proj`, `other/repo`" in table


def test_parse_findings_keeps_only_the_rule_and_makes_paths_relative(tmp_path: Path) -> None:
    report = (
        '[{"code": "TL201", "filename": "%s", "location": {"row": 4}, "end_location": {"row": 6}, "message": "m"},'
        ' {"code": "TL101", "filename": "a.py", "location": {"row": 1}, "end_location": {"row": 1}, "message": "n"}]'
    ) % (tmp_path / "pkg" / "a.py").as_posix()
    found = sl.parse_findings(report, "me/proj", tmp_path, "TL201")
    assert found == [sl.Finding("TL201", "me/proj", "pkg/a.py", 4, 6, "m")]


# ------------------------------------------------------------ checkouts and a real run


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _origin(tmp_path: Path) -> "tuple[Path, str, str]":
    mirror = tmp_path / "mirror" / "me+proj" / "repo"
    mirror.mkdir(parents=True)
    _git("init", "-q", cwd=mirror)
    source = "from torch.utils.data import DataLoader\nloader = DataLoader(ds)\nother = DataLoader(ds, num_workers=4)\n"
    (mirror / "train.py").write_text(source)
    _git("add", "train.py", cwd=mirror)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one", cwd=mirror)
    first = _git("rev-parse", "HEAD", cwd=mirror)
    (mirror / "train.py").write_text("changed = 1\n")
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two", cwd=mirror)
    return mirror.parent.parent, first, _git("rev-parse", "HEAD", cwd=mirror)


def test_checkout_is_cloned_from_the_mirror_at_the_labelled_commit(tmp_path: Path) -> None:
    mirror, first, _second = _origin(tmp_path)
    target = sl.prepare_checkout("me/proj", first, tmp_path / "src", mirror)
    assert target == tmp_path / "src" / "me__proj"
    assert "DataLoader(ds)" in (target / "train.py").read_text()
    assert sl.prepare_checkout("me/proj", first, tmp_path / "src", mirror) == target


def test_end_to_end_run_scores_the_real_cli(tmp_path: Path) -> None:
    mirror, first, _second = _origin(tmp_path)
    labels_dir = tmp_path / "labels"
    labels_dir.mkdir()
    text = HEADER + case(2, note="no workers").replace(COMMIT, first) + case(3, "negative").replace(COMMIT, first)
    (labels_dir / "TL201.toml").write_text(text)
    out = subprocess.run(
        [sys.executable, str(_SCRIPT), "--src", str(tmp_path / "src"), "--mirror", str(mirror), "--labels", str(labels_dir),
         "--markdown-out", str(tmp_path / "table.md")],
        capture_output=True, text=True, check=False,
    )
    assert out.returncode == 0, out.stderr
    first_row = out.stdout.splitlines()[1].split()
    assert first_row[:7] == ["TL201", "1", "1", "1", "1", "0", "0"]
    assert "| TL201 | 1 | 1 | 1 | 1 | 0 | 0 | 1.00 | 1.00 |" in (tmp_path / "table.md").read_text()


def test_bad_label_file_exits_2_with_a_message(tmp_path: Path) -> None:
    (tmp_path / "TL201.toml").write_text(HEADER + case(3, "perhaps"))
    out = subprocess.run(
        [sys.executable, str(_SCRIPT), "--src", str(tmp_path), "--labels", str(tmp_path)],
        capture_output=True, text=True, check=False,
    )
    assert out.returncode == 2
    assert out.stderr.startswith("error: ") and "TL201.toml" in out.stderr and "Traceback" not in out.stderr


def test_checkout_at_the_mirror_head_gets_its_files(tmp_path: Path) -> None:
    """A `--no-checkout` clone already sits at the mirror's HEAD with an empty
    index: the labelled files must still be written (the `.git` folder alone
    is not a checkout)."""
    mirror, _first, second = _origin(tmp_path)
    target = sl.prepare_checkout("me/proj", second, tmp_path / "src", mirror)
    assert (target / "train.py").read_text() == "changed = 1\n"


def test_the_files_labelled_files_star_import_are_found(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text("from .fcn import *\n")
    (tmp_path / "models" / "fcn.py").write_text("import torch\n")
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "run.py").write_text("from models import *\nfrom torch.nn import *\n")
    assert sl.star_imported(tmp_path, ["train/run.py"]) == ["models/__init__.py", "models/fcn.py"]


def test_set_selects_one_labelling_round_and_keeps_other_rounds_out() -> None:
    labels = parse(HEADER + case(3, set="blind") + case(5, "negative", path="b.py", set="blind") + case(7, path="c.py"))
    blind = sl.only_sets(labels, ["blind"])
    assert blind is not None
    assert [(c.path, c.line) for c in blind.cases] == [("train.py", 3), ("b.py", 5)]
    # A finding in the file of the other round is not judged under the cut.
    scored = sl.score(blind, [finding(3), finding(7, path="c.py")])
    assert (scored.count(sl.Outcome.TRUE_POSITIVE), scored.count(sl.Outcome.FALSE_POSITIVE)) == (1, 0)
    assert sl.only_sets(labels, ["other"]) is None
    assert sl.only_sets(labels, []) is labels


# ------------------------------------------------------------ framework pins


PINS = '[pins."me/proj"]\nlightning-version = "1.9"\ntransformers-version = "4.40.0"\n'


def test_pins_give_each_repository_its_framework_flags_and_survive_a_cut() -> None:
    labels = parse(HEADER + case(3, set="a") + case(4, repo="other/repo", set="b") + PINS)
    assert labels.pinned("me/proj") == (("lightning-version", "1.9"), ("transformers-version", "4.40.0"))
    assert labels.flags("me/proj") == ["--lightning-version", "1.9", "--transformers-version", "4.40.0"]
    assert labels.flags("other/repo") == []
    kept = sl.only_sets(labels, ["a"])
    assert kept is not None and kept.flags("me/proj") == labels.flags("me/proj")
    dropped = sl.only_sets(labels, ["b"])
    assert dropped is not None and dropped.pins == ()


def test_a_repository_pinned_differently_in_two_files_is_an_error() -> None:
    first = parse(HEADER + case(3) + PINS)
    second = sl.parse_labels('rule = "TL202"\n' + case(3) + '[pins."me/proj"]\nlightning-version = "2.0"\n',
                             Path("TL202.toml"))
    sl.check_pins_agree([first, first])
    with pytest.raises(sl.LabelError, match="pins.me/proj: `lightning-version` is '2.0' here but '1.9' in TL201.toml"):
        sl.check_pins_agree([first, second])


def test_end_to_end_run_passes_the_pins_to_torchlint(tmp_path: Path) -> None:
    """A Lightning 1.9 `strategy="dp"` is DataParallel (TL501's advice: DDP); the
    same line under the newest release no longer runs.  The pin reaches the run."""
    mirror = tmp_path / "mirror" / "me+proj" / "repo"
    mirror.mkdir(parents=True)
    _git("init", "-q", cwd=mirror)
    (mirror / "train.py").write_text("import pytorch_lightning as pl\ntrainer = pl.Trainer(gpus=2, strategy='dp')\n")
    _git("add", "train.py", cwd=mirror)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one", cwd=mirror)
    commit = _git("rev-parse", "HEAD", cwd=mirror)
    labels = sl.parse_labels('rule = "TL501"\n' + case(2).replace(COMMIT, commit) + PINS, Path("TL501.toml"))
    sl.prepare_checkout("me/proj", commit, tmp_path / "src", mirror.parent.parent)
    command = [sys.executable, "-m", "torchlint"]
    pinned = sl.run_torchlint(command, labels, tmp_path / "src")
    newest = sl.run_torchlint(command, sl.LabelSet(labels.rule, None, labels.cases, labels.source), tmp_path / "src")
    assert [f.row for f in pinned] == [2] and [f.row for f in newest] == [2]
    assert "no longer" not in pinned[0].message and "no longer" in newest[0].message


def test_rules_that_need_the_same_run_share_one_and_keep_their_own_findings(tmp_path: Path) -> None:
    """Two rules over one repository with the same options make one torchlint
    run selecting both; each label set gets only its rule's findings.  A set
    with another torch version needs (and gets) a run of its own."""
    mirror = tmp_path / "mirror" / "me+proj" / "repo"
    mirror.mkdir(parents=True)
    _git("init", "-q", cwd=mirror)
    (mirror / "train.py").write_text(
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "loader = DataLoader(range(4), num_workers=2)\n"
        "model = torch.nn.Linear(2, 2).cuda()\n"
        "x = torch.zeros(2).cuda()\n"
    )
    _git("add", "train.py", cwd=mirror)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one", cwd=mirror)
    commit = _git("rev-parse", "HEAD", cwd=mirror)
    sl.prepare_checkout("me/proj", commit, tmp_path / "src", mirror.parent.parent)
    log = tmp_path / "argv.log"
    wrapper = tmp_path / "wrap.py"
    wrapper.write_text(
        "import runpy, sys\n"
        f"open({str(log)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        "sys.argv = ['torchlint', *sys.argv[1:]]\n"
        "runpy.run_module('torchlint', run_name='__main__')\n"
    )
    loader = sl.parse_labels('rule = "TL201"\n' + case(3).replace(COMMIT, commit), Path("TL201.toml"))
    moved = sl.parse_labels('rule = "TL101"\n' + case(5).replace(COMMIT, commit), Path("TL101.toml"))
    other = sl.parse_labels('rule = "TL203"\ntorch-version = "1.13"\n' + case(3).replace(COMMIT, commit), Path("TL203.toml"))
    command = [sys.executable, str(wrapper)]
    results = sl.run_all(command, [loader, moved, other], tmp_path / "src", whole=True)
    runs = log.read_text().splitlines()
    assert len(runs) == 2
    assert any("--select TL101,TL201 " in run and "--torch-version" not in run for run in runs)
    assert any("--select TL203 " in run and "--torch-version 1.13" in run for run in runs)
    assert {f.rule for f in results[0]} <= {"TL201"} and {f.rule for f in results[1]} <= {"TL101"}
    root = sl.checkout_dir(tmp_path / "src", "me/proj")
    for labels, found in zip([loader, moved, other], results):
        alone = subprocess.run(
            [sys.executable, "-m", "torchlint", "check", "--select", labels.rule, "--no-cache", "--isolated",
             "--exit-zero", "--output-format", "json", *(["--torch-version", "1.13"] if labels.torch_version else []), "."],
            cwd=root, capture_output=True, text=True, check=True,
        ).stdout
        assert found == sl.parse_findings(alone, "me/proj", root, labels.rule)
    assert [f.row for f in results[1]] == [4, 5]
