"""The command line, end to end: outputs, exit codes, fixes, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Sequence

import pytest

from conftest import run_in_process
from click.testing import CliRunner

from torchlint.interfaces.cli import main

DP_SOURCE = "import torch.nn as nn\n\nmodel = nn.DataParallel(net)\n"
# A script with a main guard, so that TL201's fix is offered (workers can start under spawn).
MAIN = 'if __name__ == "__main__":\n    train(loader)\n'
DL_SOURCE = "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, batch_size=8)\n" + MAIN
DL_FIXED = "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, batch_size=8, num_workers=4)\n" + MAIN
CLEAN = "import torch\n\nx = torch.zeros(3)\n"


def run(args: Sequence[str], cwd: Path, stdin: str = "") -> "subprocess.CompletedProcess[str]":
    """The command's result, run in this process (see conftest.run_in_process)."""
    return run_in_process(args, cwd, stdin=stdin, env={"TORCHLINT_OUTPUT_FORMAT": None})


def project(tmp_path: Path, files: dict) -> Path:  # type: ignore[type-arg]
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
    return tmp_path


def test_findings_exit_1_and_clean_exit_0(tmp_path: Path) -> None:
    project(tmp_path, {"src/train.py": DP_SOURCE, "clean/ok.py": CLEAN})
    bad = run(["check", "src"], tmp_path)
    assert bad.returncode == 1
    assert "TL501" in bad.stdout and "src/train.py:3:9" in bad.stdout
    assert "Found 1 warning" in bad.stdout  # TL501 is advisory: a warning, as in github and SARIF
    good = run(["check", "clean"], tmp_path)
    assert good.returncode == 0 and "All checks passed!" in good.stdout
    assert run(["check", "src", "--exit-zero"], tmp_path).returncode == 0


def test_concise_output_marks_fixable(tmp_path: Path) -> None:
    project(tmp_path, {"a.py": DL_SOURCE})
    out = run(["check", "a.py", "--output-format", "concise", "--unsafe-fixes"], tmp_path).stdout
    assert out.splitlines()[0].startswith("a.py:3:10: TL201 [*] ")
    out = run(["check", "a.py", "--output-format", "concise"], tmp_path).stdout
    assert out.splitlines()[0].startswith("a.py:3:10: TL201 ")
    assert "[*]" not in out.splitlines()[0]


def test_json_output(tmp_path: Path) -> None:
    project(tmp_path, {"a.py": DL_SOURCE})
    result = run(["check", "a.py", "--output-format", "json"], tmp_path)
    [item] = json.loads(result.stdout)
    assert item["code"] == "TL201" and item["location"] == {"row": 3, "column": 10}
    assert item["fix"]["applicability"] == "unsafe"


def test_no_ansi_colour_when_not_a_terminal_or_no_color(tmp_path: Path) -> None:
    project(tmp_path, {"a.py": DP_SOURCE})
    assert "\x1b[" not in run(["check", "a.py"], tmp_path).stdout
    runner = CliRunner(env={"NO_COLOR": "1"})
    result = runner.invoke(main, ["check", str(tmp_path / "a.py")], color=True)
    assert "\x1b[" not in result.output


def test_statistics(tmp_path: Path) -> None:
    project(tmp_path, {"a.py": DP_SOURCE + "m2 = nn.DataParallel(net)\n"})
    out = run(["check", "a.py", "--statistics"], tmp_path).stdout
    assert out.splitlines()[0].split() == ["2", "TL501", "[", "]", "data-parallel"]


def test_unknown_rule_and_bad_config_exit_2(tmp_path: Path) -> None:
    project(tmp_path, {"a.py": CLEAN})
    result = run(["check", "a.py", "--select", "TL999"], tmp_path)
    assert result.returncode == 2 and "TL999" in result.stderr
    project(tmp_path, {"pyproject.toml": "[tool.torchlint]\nselct = ['TL1']\n"})
    result = run(["check", "a.py"], tmp_path)
    assert result.returncode == 2
    assert "pyproject.toml" in result.stderr and "selct" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_input_files_are_diagnostics_and_others_still_linted(tmp_path: Path) -> None:
    project(tmp_path, {
        "a_syntax.py": "import torch\ndef f(:\n",
        "b_binary.py": b"import torch\nx = '\xff'\n",
        "c_latin1.py": b"# -*- coding: latin-1 -*-\nimport torch.nn as nn\n# caf\xe9\nm = nn.DataParallel(n)\n",
        "d_empty.py": "",
        "e_good.py": DP_SOURCE,
    })
    result = run(["check", ".", "--output-format", "concise"], tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("a_syntax.py:2:") and "TL000" in line for line in lines)
    assert any(line.startswith("b_binary.py:") and "TL000" in line and "utf-8" in line for line in lines)
    assert any(line.startswith("c_latin1.py:4:") and "TL501" in line for line in lines)
    assert any(line.startswith("e_good.py:3:") and "TL501" in line for line in lines)


def test_missing_path_is_reported(tmp_path: Path) -> None:
    result = run(["check", "nope.py", "--output-format", "concise"], tmp_path)
    assert result.returncode == 1 and "nope.py" in result.stdout and "TL000" in result.stdout


def test_fix_prints_diff_then_apply_writes(tmp_path: Path) -> None:
    project(tmp_path, {"a.py": DL_SOURCE})
    safe_only = run(["fix", "a.py"], tmp_path)
    assert safe_only.returncode == 0 and safe_only.stdout == ""
    assert "--unsafe-fixes" in safe_only.stderr
    diff = run(["fix", "a.py", "--unsafe-fixes"], tmp_path)
    assert diff.returncode == 1
    assert "-loader = DataLoader(ds, batch_size=8)" in diff.stdout
    assert "+loader = DataLoader(ds, batch_size=8, num_workers=4)" in diff.stdout
    assert (tmp_path / "a.py").read_text() == DL_SOURCE
    applied = run(["fix", "a.py", "--unsafe-fixes", "--apply"], tmp_path)
    assert applied.returncode == 0 and "Fixed 1 finding in 1 file" in applied.stderr
    assert (tmp_path / "a.py").read_text() == DL_FIXED
    again = run(["fix", "a.py", "--unsafe-fixes"], tmp_path)
    assert again.returncode == 0 and again.stdout == ""


def test_check_fix_applies_and_reports_what_is_left(tmp_path: Path) -> None:
    project(tmp_path, {"a.py": DL_SOURCE + "import torch.nn as nn\nm = nn.DataParallel(x)\n"})
    result = run(["check", "a.py", "--fix", "--unsafe-fixes", "--output-format", "concise"], tmp_path)
    assert result.returncode == 1
    assert "TL501" in result.stdout and "TL201" not in result.stdout
    assert "num_workers=4" in (tmp_path / "a.py").read_text()


def test_stdin_check_and_fix(tmp_path: Path) -> None:
    result = run(["check", "-", "--stdin-filename", "x.py", "--output-format", "concise"], tmp_path, DP_SOURCE)
    assert result.returncode == 1 and result.stdout.startswith("x.py:3:9: TL501")
    fixed = run(["fix", "-", "--stdin-filename", "x.py", "--unsafe-fixes"], tmp_path, DL_SOURCE)
    assert fixed.returncode == 0 and fixed.stdout == DL_FIXED


def test_force_exclude_skips_explicit_excluded_paths(tmp_path: Path) -> None:
    project(tmp_path, {"pyproject.toml": "[tool.torchlint]\nextend-exclude = ['gen']\n", "gen/a.py": DP_SOURCE})
    assert run(["check", "gen/a.py"], tmp_path).returncode == 1
    assert run(["check", "gen/a.py", "--force-exclude"], tmp_path).returncode == 0
    assert run(["check", "."], tmp_path).returncode == 0


def test_fix_keeps_crlf_bom_and_mode(tmp_path: Path) -> None:
    data = ("\ufeff" + DL_SOURCE.replace("\n", "\r\n")).encode("utf-8")
    project(tmp_path, {"a.py": data})
    os.chmod(tmp_path / "a.py", 0o755)
    run(["fix", "a.py", "--unsafe-fixes", "--apply"], tmp_path)
    assert (tmp_path / "a.py").read_bytes() == ("\ufeff" + DL_FIXED.replace("\n", "\r\n")).encode("utf-8")
    assert (tmp_path / "a.py").stat().st_mode & 0o777 == 0o755


def test_rules_and_explain(tmp_path: Path) -> None:
    listing = run(["rules", "--json"], tmp_path)
    codes = [rule["code"] for rule in json.loads(listing.stdout)]
    assert codes == sorted(codes) and {"TL101", "TL201", "TL301", "TL302", "TL401", "TL501"} <= set(codes)
    page = run(["explain", "TL501", "--format", "markdown"], tmp_path)
    assert page.returncode == 0 and page.stdout.startswith("# data-parallel (TL501)")
    assert "## Why is this bad?" in page.stdout and "```python" in page.stdout
    assert run(["explain", "data-parallel", "--format", "markdown"], tmp_path).stdout == page.stdout
    assert run(["explain", "TL999"], tmp_path).returncode == 2


def test_explain_renders_the_page_for_a_terminal(tmp_path: Path) -> None:
    """Headings lose their marks, code blocks their fences (indented instead); lists stay."""
    page = run(["explain", "TL501"], tmp_path)
    assert page.returncode == 0
    lines = page.stdout.splitlines()
    assert lines[:2] == ["data-parallel (TL501)", "=" * len("data-parallel (TL501)")]
    assert "Why is this bad?" in lines and "-" * len("Why is this bad?") in lines
    assert not any(line.startswith("#") or line.strip().startswith("```") for line in lines)
    markdown = run(["explain", "TL501", "--format", "markdown"], tmp_path).stdout.splitlines()
    fence = markdown.index("```python")
    assert "    " + markdown[fence + 1] in lines  # the block's first line, indented
    assert [line for line in markdown if line.startswith("- ")] == [line for line in lines if line.startswith("- ")]
    assert "\x1b[" not in page.stdout  # no colour when stdout is not a terminal


def test_terminal_markdown_colours_only_when_asked() -> None:
    from torchlint.interfaces.terminal_markdown import render_markdown

    text = "# Title\n\n## Part\n\n```python\nx = 1\n```\n- item\n"
    assert render_markdown(text, color=False) == "Title\n=====\n\nPart\n----\n\n    x = 1\n- item\n"
    coloured = render_markdown(text, color=True)
    assert "\x1b[1;4mTitle\x1b[0m" in coloured and "\x1b[1mPart\x1b[0m" in coloured
    assert "    \x1b[36mx = 1\x1b[0m" in coloured and "```" not in coloured and "#" not in coloured


def test_show_files(tmp_path: Path) -> None:
    project(tmp_path, {"b.py": CLEAN, "a/c.py": CLEAN, "venv/x.py": CLEAN})
    assert run(["check", "--show-files"], tmp_path).stdout.split() == ["a/c.py", "b.py"]


def test_sarif_and_github_formats(tmp_path: Path) -> None:
    project(tmp_path, {"a.py": DP_SOURCE})
    sarif = json.loads(run(["check", "a.py", "--output-format", "sarif"], tmp_path).stdout)
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["results"][0]["ruleId"] == "TL501"
    github = run(["check", "a.py", "--output-format", "github"], tmp_path).stdout
    assert github.startswith("::warning title=torchlint (TL501),file=a.py,line=3,col=9,")


def test_baseline_hides_known_findings_and_survives_line_shifts(tmp_path: Path) -> None:
    project(tmp_path, {"src/a.py": DP_SOURCE})
    written = run(["check", "src", "--write-baseline", "tl-baseline.json"], tmp_path)
    assert written.returncode == 0 and "Wrote 1 finding" in written.stderr
    assert run(["check", "src", "--baseline", "tl-baseline.json"], tmp_path).returncode == 0
    # Unrelated edits move the old finding down; it is still known.
    (tmp_path / "src/a.py").write_text("import os\n\n\n" + DP_SOURCE + "other = nn.DataParallel(net2)\n")
    result = run(["check", "src", "--baseline", "tl-baseline.json", "--output-format", "concise"], tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].startswith("src/a.py:7:9: TL501")
    assert len([line for line in result.stdout.splitlines() if "TL501" in line]) == 1
    broken = project(tmp_path, {"bad.json": "{not json"})
    assert run(["check", "src", "--baseline", str(broken / "bad.json")], tmp_path).returncode == 2


# -- run-level failures (issues 9 and 17) --------------------------------------------


def test_deleted_working_directory_is_one_clear_line(tmp_path: Path) -> None:
    project(tmp_path, {"a.py": DP_SOURCE})
    gone = tmp_path / "gone"
    gone.mkdir()
    # The shell enters the folder, deletes it, then runs torchlint there.
    script = 'cd "$1" && rmdir "$1" && exec "$0" -m torchlint check --no-cache "$2"'
    result = subprocess.run(["sh", "-c", script, sys.executable, str(gone), str(tmp_path / "a.py")],
                            capture_output=True, text=True)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == "torchlint: error: the working directory no longer exists (it was deleted or moved)\n"


@pytest.mark.parametrize("source, code", [(DP_SOURCE, 1), (CLEAN, 0)], ids=["findings", "clean"])
def test_closed_stdout_exits_by_the_findings_quietly(tmp_path: Path, source: str, code: int) -> None:
    project(tmp_path, {"a.py": source})
    script = 'exec "$0" -m torchlint check --no-cache a.py >&-'
    result = subprocess.run(["sh", "-c", script, sys.executable], cwd=tmp_path, capture_output=True, text=True)
    assert (result.returncode, result.stderr) == (code, "")


def run_into_closed_pipe(args: Sequence[str], cwd: Path) -> "subprocess.CompletedProcess[str]":
    """Run torchlint with its stdout a pipe whose reader has already gone (``| head`` that quit)."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run([sys.executable, "-m", "torchlint", *args], cwd=cwd, stdout=writer,
                              stderr=subprocess.PIPE, text=True)
    finally:
        os.close(writer)


@pytest.mark.parametrize("extra", [["--show-files"], [], ["--output-format", "json"]], ids=["show-files", "full", "json"])
def test_broken_pipe_is_a_quiet_exit(tmp_path: Path, extra: Sequence[str]) -> None:
    project(tmp_path, {"a.py": DP_SOURCE, "b.py": DL_SOURCE})
    result = run_into_closed_pipe(["check", "--no-cache", ".", *extra], tmp_path)
    assert (result.returncode, result.stderr) == (0, "")


def test_check_fix_says_when_the_write_failed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torchlint.lint.runner

    def refuse(*_: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(torchlint.lint.runner, "write_source", refuse)
    target = project(tmp_path, {"a.py": DL_SOURCE}) / "a.py"
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "--no-cache", "-j", "1",
                                       "--output-format", "concise", "a.py"])
    assert result.exit_code == 1
    assert target.read_text() == DL_SOURCE
    assert "All checks passed" not in result.output
    assert "a.py:1:1: TL000 fixes not written: [Errno 30] Read-only file system\n" in result.output
    assert "a.py:3:10: TL201" in result.output  # still in the file, so still reported
    assert "Found 1 error and 1 warning.\n" in result.output
    # `fix --apply` says the same in its summary.
    fixed = CliRunner().invoke(main, ["fix", "--apply", "--unsafe-fixes", "--no-cache", "-j", "1", "a.py"])
    assert fixed.exit_code == 1 and "No fixes available" not in fixed.output
    assert "No fixes applied. Could not write 1 file (see above).\n" in fixed.output


FORMATS = ["full", "concise", "json", "github", "sarif"]
NOT_UTF8 = os.fsdecode(b"caf\xe9.py")


@pytest.fixture(scope="module")
def not_utf8_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("not-utf8")
    (root / NOT_UTF8).write_text(DP_SOURCE)
    return root


@pytest.fixture(scope="module")
def not_utf8_shown(not_utf8_project: Path) -> Dict[str, "subprocess.CompletedProcess[bytes]"]:
    """``torchlint check`` in a new process, once per format, over a file whose
    name is not UTF-8, with a strict UTF-8 stdout (as in a UTF-8 locale).  The
    two tests below read it; the runs themselves change nothing."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return {
        fmt: subprocess.run([sys.executable, "-m", "torchlint", "check", "--no-cache", "--output-format", fmt, "."],
                            cwd=not_utf8_project, capture_output=True, env=env)
        for fmt in FORMATS
    }


@pytest.mark.parametrize("fmt", FORMATS)
def test_file_name_that_is_not_utf8_in_every_format(
    not_utf8_shown: Dict[str, "subprocess.CompletedProcess[bytes]"], fmt: str
) -> None:
    result = not_utf8_shown[fmt]
    assert result.returncode == 1 and b"Traceback" not in result.stderr and b"internal error" not in result.stderr
    if fmt == "sarif":
        log = json.loads(result.stdout.decode("utf-8"))
        [finding] = log["runs"][0]["results"]
        assert finding["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "caf%E9.py"
    elif fmt == "json":
        assert json.loads(result.stdout)[0]["filename"] == NOT_UTF8
    else:
        assert b"caf\xe9.py" in result.stdout  # the name's own bytes, as ls prints them


@pytest.mark.parametrize("fmt", FORMATS)
def test_report_file_with_a_name_that_is_not_utf8(
    tmp_path: Path, not_utf8_shown: Dict[str, "subprocess.CompletedProcess[bytes]"], fmt: str
) -> None:
    """``-o`` writes what standard output would carry (the file is written by
    the command, not through this process's stdout: it runs in-process)."""
    (tmp_path / NOT_UTF8).write_text(DP_SOURCE)
    written = run_in_process(["check", "--no-cache", "--output-format", fmt, ".", "-o", "report.out"], tmp_path,
                             env={"TORCHLINT_OUTPUT_FORMAT": None})
    assert written.returncode == 1 and written.stderr == "", written.stderr
    assert (tmp_path / "report.out").read_bytes() == not_utf8_shown[fmt].stdout


def test_only_a_stdout_whose_reader_left_counts_as_a_broken_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    """A BrokenPipeError from elsewhere (a child process) must stay an internal error."""
    from torchlint.interfaces import cli

    reader, writer = os.pipe()
    with open(writer, "w") as stream:
        monkeypatch.setattr(sys, "stdout", stream)
        assert cli._stdout_reader_gone() is False
        os.close(reader)
        assert cli._stdout_reader_gone() is True


def test_symlink_in_the_tree_gives_no_duplicates_and_no_false_write_error(tmp_path: Path) -> None:
    project(tmp_path, {"pkg/a.py": DL_SOURCE})
    os.symlink("a.py", tmp_path / "pkg" / "link.py")
    checked = run(["check", "--no-cache", "--output-format", "concise", "."], tmp_path)
    assert [line.split(":")[0] for line in checked.stdout.splitlines() if " TL201 " in line] == ["pkg/a.py"]
    fixed = run(["check", "--no-cache", "--fix", "--unsafe-fixes", "."], tmp_path)
    assert fixed.returncode == 0 and fixed.stderr == "", fixed.stderr
    assert (tmp_path / "pkg" / "a.py").read_text() == DL_FIXED
    assert os.readlink(tmp_path / "pkg" / "link.py") == "a.py"


def run_bytes(args: Sequence[str], cwd: Path, stdin: bytes) -> "subprocess.CompletedProcess[bytes]":
    env = {k: v for k, v in os.environ.items() if k != "TORCHLINT_OUTPUT_FORMAT"}
    return subprocess.run([sys.executable, "-m", "torchlint", *args], cwd=cwd, input=stdin,
                          capture_output=True, env=env)


def test_stdin_check_fix_prints_only_code_on_stdout(tmp_path: Path) -> None:
    source = "import torch\n" + DL_SOURCE + "x = torch.zeros(3).cuda()\n"
    fixed = "import torch\n" + DL_SOURCE + 'x = torch.zeros(3, device="cuda")\n'
    for output_format in ("json", "full"):
        result = run(["check", "--fix", "-", "--stdin-filename", "x.py", "--output-format", output_format],
                     tmp_path, source)
        assert result.returncode == 1 and result.stdout == fixed  # the TL201 finding remains
        if output_format == "json":
            assert [d["code"] for d in json.loads(result.stderr)] == ["TL201"]
        else:
            assert "TL201" in result.stderr


def test_stdin_fix_echoes_undecodable_input(tmp_path: Path) -> None:
    data = b"import torch\nx = '\xff'\ny = torch.zeros(3).cuda()\n"
    for command in (["fix", "-"], ["check", "--fix", "-"]):
        result = run_bytes(command, tmp_path, data)
        assert result.returncode == 1 and result.stdout == data
        errors = [line for line in result.stderr.decode().splitlines() if "TL000" in line]
        assert len(errors) == 1 and "not valid utf-8" in errors[0]


def test_stdin_fix_answers_in_the_input_encoding(tmp_path: Path) -> None:
    data = "# coding: latin-1\nimport torch\ns = 'caf\xe9'\r\ny = torch.zeros(3).cuda()\n".encode("latin-1")
    result = run_bytes(["fix", "-"], tmp_path, data)
    assert result.returncode == 0
    assert result.stdout == data.replace(b"torch.zeros(3).cuda()", b'torch.zeros(3, device="cuda")')


def test_torch_from_a_project_star_import_is_torch(tmp_path: Path) -> None:
    """`from models import *` where the package imports torch resolves to
    torch, in a run over the project and in a run over the script alone (as
    pre-commit runs it), where the module is found beside the script; a
    module Python would not find there leaves the name unknown."""
    root = project(tmp_path, {
        "models/__init__.py": "from .net import *\n",
        "models/net.py": "import torch\n",
        "train.py": "from models import *\nstate = torch.load('ckpt.pt')\n",
        "scripts/other.py": "from elsewhere import *\nstate = torch.load('ckpt.pt')\n",
        "lib/elsewhere.py": "import torch\n",
    })
    args = ["check", "--select", "TL801", "--torch-version", "2.0", "--no-cache", "--output-format", "concise"]
    whole = run([*args, "."], root)
    assert "train.py:2:9: TL801" in whole.stdout, whole.stdout + whole.stderr
    alone = run([*args, "train.py"], root)
    assert "train.py:2:9: TL801" in alone.stdout, alone.stdout + alone.stderr
    unknown = run([*args, "scripts/other.py"], root)
    assert "TL801" not in unknown.stdout and unknown.returncode == 0, unknown.stdout


def test_torch_name_re_exported_by_a_project_module_is_torch(tmp_path: Path) -> None:
    """`from utils import load` where the project's utils.py imports torch's
    `load`: in a run over the project the call is torch's; where the module
    defines its own `load` after importing torch's, it is not."""
    root = project(tmp_path, {
        "utils.py": "from torch import load\n",
        "train.py": "from utils import load\nstate = load('ckpt.pt')\n",
        "mine.py": "from torch import load\ndef load(path):\n    return path\n",
        "other.py": "from mine import load\nstate = load('ckpt.pt')\n",
    })
    args = ["check", "--select", "TL801", "--torch-version", "2.0", "--no-cache", "--output-format", "concise", "."]
    result = run(args, root)
    assert "train.py:2:9: TL801" in result.stdout, result.stdout + result.stderr
    assert "other.py" not in result.stdout


def test_torch_from_a_star_import_of_a_namespace_package_module(tmp_path: Path) -> None:
    """`from nerf.utils import *` where the folder nerf/ has no `__init__.py`
    (a namespace package, which Python 3 imports all the same) and utils.py
    imports torch: over the project and over the one file."""
    root = project(tmp_path, {
        "nerf/utils.py": "import torch\n",
        "dnerf/train.py": "from nerf.utils import *\nstate = torch.load('ckpt.pt')\n",
    })
    args = ["check", "--select", "TL801", "--torch-version", "2.0", "--no-cache", "--output-format", "concise"]
    whole = run([*args, "."], root)
    assert "train.py:2:9: TL801" in whole.stdout, whole.stdout + whole.stderr
    alone = run([*args, "dnerf/train.py"], root)
    assert "train.py:2:9: TL801" in alone.stdout, alone.stdout + alone.stderr


def test_torch_from_a_relative_star_import_in_a_package(tmp_path: Path) -> None:
    """Inside a package, `from .common import *` where `common` imports torch."""
    root = project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/common.py": "import torch\nimport torch.nn as nn\n",
        "pkg/train.py": "from .common import *\nstate = torch.load('ckpt.pt')\n",
        "pkg/sub/__init__.py": "from ..common import *\nstate = torch.load('ckpt.pt')\n",
    })
    args = ["check", "--select", "TL801", "--torch-version", "2.0", "--no-cache", "--output-format", "concise"]
    for target in (".", "pkg/train.py"):
        found = run([*args, target], root)
        assert "train.py:2:9: TL801" in found.stdout, (target, found.stdout + found.stderr)
    whole = run([*args, "."], root)
    assert "sub/__init__.py:2:9: TL801" in whole.stdout, whole.stdout
