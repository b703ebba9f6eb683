"""The flake8 plugin, through the real flake8: TL codes, selection, cost."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Iterator, List, Sequence, Tuple

import pytest

pytest.importorskip("flake8")

from flake8.main.application import Application  # noqa: E402
from flake8.options.parse_args import parse_args  # noqa: E402

from torchlint.interfaces.flake8_plugin import TorchlintChecker  # noqa: E402

TRAIN = textwrap.dedent(
    """\
    import torch
    import torch.nn as nn

    x = torch.zeros(3).cuda()
    model = nn.DataParallel(net)
    other = nn.DataParallel(net)  # noqa: TL501
    """
)
ZERO_GRAD = "def step(optimizer):\n    optimizer.zero_grad()\n"


def _entry_point_installed() -> bool:
    """Whether pip registered the plugin (then no local-plugins config is needed)."""
    from importlib.metadata import entry_points

    found = entry_points()
    group = (
        found.select(group="flake8.extension")
        if hasattr(found, "select")
        else found.get("flake8.extension", [])  # type: ignore[attr-defined]  # Python 3.9
    )
    return any(ep.name == "TL" and ep.value.startswith("torchlint.interfaces.flake8_plugin") for ep in group)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder to run flake8 in, with the plugin registered either way."""
    if not _entry_point_installed():
        (tmp_path / ".flake8").write_text(
            "[flake8:local-plugins]\n"
            "extension =\n"
            "    TL = torchlint.interfaces.flake8_plugin:TorchlintChecker\n",
            encoding="utf-8",
        )
    monkeypatch.chdir(tmp_path)
    TorchlintChecker._resolver = None  # settings are looked up from the new cwd
    return tmp_path


DOUBLES = Path(__file__).resolve().parent / "rule_doubles.py"
TRAIN_DOUBLES = "x = boom(3)\ny = zap(4)\nz = zap(5)  # noqa: TL992\n"
"""For the rules of tests/rule_doubles.py: TL991 reports `boom()`, TL992 `zap()`."""


def _run_in_process(args: Sequence[str]) -> Application:
    TorchlintChecker._selections.clear()
    app = Application()
    app.run(["-j", "1", *args])
    return app


def flake8_here(capsys: pytest.CaptureFixture[str], *args: str) -> Tuple[int, str]:
    """flake8's exit status and output, run in this process (in the current
    folder) with the plugin's settings looked up afresh, as a new process would:
    for tests of what the plugin reports, not of how flake8 starts."""
    TorchlintChecker._resolver = None
    capsys.readouterr()
    app = _run_in_process(args)
    return app.exit_code(), capsys.readouterr().out


def flake8(cwd: Path, *args: str, doubles: bool = False) -> "subprocess.CompletedProcess[str]":
    """flake8 with the real rules, or with the test rules of tests/rule_doubles.py."""
    start = [sys.executable, str(DOUBLES)] if doubles else [sys.executable]
    return subprocess.run(
        [*start, "-m", "flake8", "-j", "1", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )


def codes(output: str) -> List[str]:
    """``file:line:col: CODE`` for each reported line."""
    return [":".join(line.split(":")[:3]) + ": " + line.split(": ")[1].split()[0]
            for line in output.splitlines() if line.strip()]


def test_selected_tl_codes_are_reported_with_flake8_noqa(project: Path) -> None:
    (project / "train.py").write_text(TRAIN_DOUBLES, encoding="utf-8")
    result = flake8(project, "--select", "TL", "train.py", doubles=True)
    assert result.returncode == 1, result.stderr
    # torchlint reports TL991 at 1:4 and TL992 at 2:4; flake8 shows 1-based columns.
    assert codes(result.stdout) == ["train.py:1:5: TL991", "train.py:2:5: TL992"]
    assert "train.py:1:5: TL991 test message: `boom()` is called" in result.stdout.splitlines()


def test_default_selection_includes_tl(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "train.py").write_text(TRAIN, encoding="utf-8")
    _, output = flake8_here(capsys, "train.py")
    found = codes(output)
    assert "train.py:4:5: TL101" in found and "train.py:5:9: TL501" in found
    assert "train.py:5:25: F821" in found  # flake8's own checks still run


def test_flake8_does_the_selection(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "train.py").write_text(TRAIN, encoding="utf-8")
    assert codes(flake8_here(capsys, "--select", "TL1", "train.py")[1]) == ["train.py:4:5: TL101"]
    assert codes(flake8_here(capsys, "--select", "TL", "--extend-ignore", "TL1", "train.py")[1]) == [
        "train.py:5:9: TL501"
    ]
    per_file = flake8_here(capsys, "--select", "TL", "--per-file-ignores", "train.py:TL", "train.py")
    assert per_file == (0, "")


def test_torchlint_config_gives_torch_version_but_not_selection(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "step.py").write_text(ZERO_GRAD, encoding="utf-8")
    assert flake8_here(capsys, "--select", "TL", "step.py")[1] == ""  # current torch: fine
    (project / "pyproject.toml").write_text(
        '[tool.torchlint]\ntorch-version = "1.13"\nignore = ["TL302"]\n', encoding="utf-8"
    )
    # torch-version applies; torchlint's own `ignore` does not (flake8 selects).
    assert codes(flake8_here(capsys, "--select", "TL", "step.py")[1]) == ["step.py:2:5: TL302"]


def test_bad_torchlint_config_is_a_finding_not_a_crash(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "train.py").write_text(TRAIN, encoding="utf-8")
    (project / "pyproject.toml").write_text('[tool.torchlint]\ntorch-version = 3\n', encoding="utf-8")
    _, output = flake8_here(capsys, "--select", "TL", "train.py")
    assert codes(output) == ["train.py:1:1: TL000"]
    assert "invalid torchlint configuration" in output and "torch-version" in output


class _CountingParse:
    """Counts calls to libcst.parse_module."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import libcst

        self.calls = 0
        real = libcst.parse_module

        def counting(*args: object, **kwargs: object) -> object:
            self.calls += 1
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(libcst, "parse_module", counting)




def test_no_parsing_when_tl_is_not_selected(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "train.py").write_text(TRAIN, encoding="utf-8")
    parses = _CountingParse(monkeypatch)

    app = _run_in_process(["--select", "E,F,W", "train.py"])
    assert any(p.entry_name == "TL" for p in app.plugins.checkers.tree)  # the plugin ran
    assert "F821" in capsys.readouterr().out
    assert parses.calls == 0

    _run_in_process(["--select", "E,F,W", "--extend-select", "TL5", "train.py"])
    assert "TL501" in capsys.readouterr().out
    assert parses.calls == 1  # the counter does see the plugin's parse


def test_no_parsing_without_trigger_words(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "plain.py").write_text("import torch\n\nx = torch.ones(2) + 1\n", encoding="utf-8")
    parses = _CountingParse(monkeypatch)
    _run_in_process(["--select", "TL", "plain.py"])
    assert capsys.readouterr().out == ""
    assert parses.calls == 0


class _Untouchable(Sequence[str]):
    """Lines that fail the test if the plugin looks at them."""

    def __getitem__(self, index: object) -> str:  # type: ignore[override]
        raise AssertionError("the plugin read the file's lines")

    def __len__(self) -> int:
        raise AssertionError("the plugin read the file's lines")

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("the plugin read the file's lines")


@pytest.mark.parametrize(
    "argv",
    [
        ["--select", "E,F,W"],
        ["--select", "E", "--extend-select", "W6"],
        ["--extend-ignore", "TL"],
        ["--select", "TL", "--ignore", "TL"],
        ["--per-file-ignores", "train.py:TL"],
    ],
)
def test_lines_are_untouched_when_no_tl_code_can_be_reported(project: Path, argv: List[str]) -> None:
    TorchlintChecker._selections.clear()
    _, options = parse_args(argv)  # the real option parsing; calls parse_options
    assert TorchlintChecker._options is options
    checker = TorchlintChecker(ast.parse(""), _Untouchable(), "train.py")
    assert list(checker.run()) == []


def test_libcst_is_not_imported_when_tl_is_not_selected(project: Path) -> None:
    probe = "import sys, torchlint; print('libcst' in sys.modules)"
    eager = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    if eager.stdout.strip() == "True":
        pytest.skip("torchlint/__init__.py imports libcst eagerly")
    (project / "train.py").write_text(TRAIN, encoding="utf-8")
    script = (
        "import sys\n"
        "from flake8.main.application import Application\n"
        "app = Application()\n"
        "app.run(['-j', '1', '--select', 'E,F,W', 'train.py'])\n"
        "assert any(p.entry_name == 'TL' for p in app.plugins.checkers.tree)\n"
        "print('libcst' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=project, capture_output=True, text=True)
    assert result.stdout.strip().splitlines()[-1] == "False", result.stderr


def test_rules_off_by_default_need_an_explicit_selection(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from torchlint.ruleapi.registry import by_code_or_name

    rule = by_code_or_name("TL501")
    assert rule is not None
    monkeypatch.setattr(rule, "default_enabled", False)
    (project / "train.py").write_text(TRAIN, encoding="utf-8")

    _run_in_process(["train.py"])  # flake8's default selection includes "TL"
    output = capsys.readouterr().out
    assert "TL101" in output and "TL501" not in output
    _run_in_process(["--extend-select", "TL501", "train.py"])
    assert "TL501" in capsys.readouterr().out


PROFILED = textwrap.dedent(
    """\
    import torch

    def train(model, loader, optimizer):
        with torch.profiler.profile():
            for x in loader:
                model(x).sum().backward()
                optimizer.step()
    """
)


def test_precheck_runs_under_the_files_rule_options(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """TL304's option adds profilers to what it matches; the plugin's
    pre-check must see that option (it once filtered on bare trigger words)."""
    (project / "train.py").write_text(PROFILED, encoding="utf-8")
    (project / "pyproject.toml").write_text(
        '[tool.torchlint.TL304]\ninclude-profilers = true\n', encoding="utf-8"
    )
    TorchlintChecker._resolver = None
    _run_in_process(["--select", "TL304", "train.py"])
    assert "TL304" in capsys.readouterr().out


def test_a_trigger_word_alone_does_not_make_libcst_parse(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`.to(` and `DataParallel` appear, but nothing imports torch: the
    `ast` pre-check (could_match) rules the file out before libcst."""
    (project / "train.py").write_text(
        "def move(batch, device):\n    return batch.to(device)  # DataParallel\n", encoding="utf-8"
    )
    parses = _CountingParse(monkeypatch)
    _run_in_process(["--select", "TL", "train.py"])
    assert capsys.readouterr().out == ""
    assert parses.calls == 0


def test_cross_file_facts_match_the_command_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A DataParallel subclass defined in another module is reported as
    `torchlint check train.py` reports it (the imported module is read from disk)."""
    (project / "nets").mkdir()
    (project / "nets" / "__init__.py").write_text("from .parallel import Balanced\n", encoding="utf-8")
    (project / "nets" / "parallel.py").write_text(
        "import torch.nn as nn\n\n\nclass Balanced(nn.DataParallel):\n    pass\n", encoding="utf-8")
    (project / "train.py").write_text("import torch\nfrom nets import Balanced\n\nmodel = Balanced(torch.nn.Linear(2, 2))\n",
                                      encoding="utf-8")
    assert codes(flake8_here(capsys, "--select", "TL5", "train.py")[1]) == ["train.py:4:9: TL501"]


HOST_SYNC = textwrap.dedent(
    """\
    import torch

    def train(model, loader, optimizer):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            loss.backward()
            optimizer.step()
            total = loss.item()
    """
)


def test_select_tl_means_torchlints_defaults_and_suggestions_need_their_code(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # TL103 is a suggestion (off by default): a prefix does not turn it on,
    # in flake8 as in `torchlint check`; its own code does.
    (project / "train.py").write_text(HOST_SYNC, encoding="utf-8")
    for selection in (["--select", "TL"], ["--select", "TL1"], []):
        _run_in_process([*selection, "train.py"])
        assert "TL103" not in capsys.readouterr().out, selection
    _run_in_process(["--select", "TL103", "train.py"])
    assert "TL103" in capsys.readouterr().out
    _run_in_process(["--select", "TL", "--extend-select", "TL103", "train.py"])
    assert "TL103" in capsys.readouterr().out


def _findings(lines: str, root: Path) -> List[str]:
    """``path:line:col: CODE`` of every TL finding, paths relative to ``root``."""
    found = []
    for line in lines.splitlines():
        if ": TL" not in line:
            continue
        location, rest = line.split(": ", 1)
        path, row, column = location.rsplit(":", 2)
        relative = Path(path).resolve().relative_to(root.resolve()).as_posix() if Path(path).is_absolute() else path
        found.append(f"{relative}:{row}:{column}: {rest.split()[0]}")
    return sorted(found)


@pytest.mark.slow  # over 4 s on 2 busy cores; `pytest -m slow` (run by .ci/run) keeps it
def test_flake8_and_torchlint_check_report_the_same_on_the_fixtures(project: Path) -> None:
    # Every Python fixture (not the expected outputs), each project fixture
    # as its folder, plus suppression comments in the forms flake8 reads.
    import shutil

    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    tree = project / "code"
    for path in sorted(fixtures.glob("TL*/*.py")):
        if not path.stem.endswith(".fixed"):
            target = tree / path.parent.name / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    (tree / "noqa_forms.py").write_text(textwrap.dedent(
        """\
        import torch
        import torch.nn as nn
        from torch.utils.data import DataLoader

        a = nn.DataParallel(net)  # noqa: TL5
        b = DataLoader(ds,
                       batch_size=4)  # noqa: TL201
        c = [
            nn.DataParallel(net),
        ]  # noqa: TL501
        d = torch.zeros(3).cuda()  # noqa: TL2
        """), encoding="utf-8")
    # One (empty) configuration for both front ends: none above the test's folder applies.
    (project / "torchlint.toml").write_text("", encoding="utf-8")
    checked = subprocess.run([sys.executable, "-m", "torchlint", "check", "code", "--output-format", "concise",
                              "--no-cache"], cwd=project, capture_output=True, text=True, timeout=300,
                             env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert checked.returncode == 1, checked.stderr
    by_flake8 = flake8(project, "--select", "TL", "code")
    assert by_flake8.returncode == 1, by_flake8.stderr
    torchlint_found = _findings(checked.stdout, project)
    assert len(torchlint_found) > 100
    assert [f for f in torchlint_found if f.startswith("code/noqa_forms.py")] == ["code/noqa_forms.py:11:5: TL101"]
    assert _findings(by_flake8.stdout, project) == torchlint_found
