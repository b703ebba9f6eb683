"""The Ruff habits: --add-noqa, --show-fixes, --show-settings, fixable and
fix-safety settings, extend, -q/-s, --statistics as JSON, --watch, the
gitlab format, SARIF fingerprints, and the messages of bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence

import pytest

from conftest import run_in_process

DL = ("from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, batch_size=8)\n"
      'if __name__ == "__main__":\n    train(loader)\n')
DP = "import torch.nn as nn\n\nmodel = nn.DataParallel(net)\n"
ZERO_GRAD = "def step(optimizer):\n    optimizer.zero_grad()\n"
TORCHVISION = "import torchvision\nm = torchvision.models.resnet18(pretrained=False)\n"


def run(args: Sequence[str], cwd: Path, **env: str) -> "subprocess.CompletedProcess[str]":
    return run_in_process([*args, "--no-cache"] if args[0] in ("check", "fix") else list(args), cwd,
                          env={"TORCHLINT_OUTPUT_FORMAT": None, **env})


def write(root: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def codes(result: "subprocess.CompletedProcess[str]") -> List[str]:
    return [line.split(": ")[1].split()[0] for line in result.stdout.splitlines() if ": TL" in line]


# -- --add-noqa --------------------------------------------------------------------------


def test_add_noqa_suppresses_every_finding_in_place_and_is_idempotent(tmp_path: Path) -> None:
    source = (
        "import torch.nn as nn\n"
        "from torch.utils.data import DataLoader\n"
        "m = nn.DataParallel(x)  # keep this comment\n"
        "l = DataLoader(ds,\n"
        "               batch_size=3)\n"
        "n = nn.DataParallel(y)  # noqa: E501\n"
        'doc = """text\n'
        '"""; z = nn.DataParallel(z)\n'
    )
    write(tmp_path, {"train.py": source})
    assert run(["check", "train.py", "--output-format", "concise"], tmp_path).returncode == 1
    added = run(["check", "train.py", "--add-noqa"], tmp_path)
    assert added.returncode == 0, added.stderr
    assert "Added 4 noqa directives." in added.stderr
    assert (tmp_path / "train.py").read_text(encoding="utf-8") == (
        "import torch.nn as nn\n"
        "from torch.utils.data import DataLoader\n"
        "m = nn.DataParallel(x)  # keep this comment  # noqa: TL501\n"
        "l = DataLoader(ds,  # noqa: TL201\n"
        "               batch_size=3)\n"
        "n = nn.DataParallel(y)  # noqa: E501, TL501\n"
        'doc = """text\n'
        '"""; z = nn.DataParallel(z)  # noqa: TL501\n'
    )
    assert run(["check", "train.py"], tmp_path).returncode == 0
    again = run(["check", "train.py", "--add-noqa"], tmp_path)
    assert "Added 0 noqa directives." in again.stderr


def test_add_noqa_keeps_crlf_and_handles_notebooks(tmp_path: Path) -> None:
    (tmp_path / "w.py").write_bytes(DP.replace("\n", "\r\n").encode())
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": ["from torch.utils.data import DataLoader\n", "%time x = 1\n", "loader = DataLoader(ds)"]}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook, indent=1) + "\n", encoding="utf-8")
    result = run(["check", ".", "--add-noqa"], tmp_path)
    assert result.returncode == 0 and "Added 2 noqa directives." in result.stderr, result.stderr
    assert (tmp_path / "w.py").read_bytes() == b"import torch.nn as nn\r\n\r\nmodel = nn.DataParallel(net)  # noqa: TL501\r\n"
    sources = json.loads((tmp_path / "nb.ipynb").read_text(encoding="utf-8"))["cells"][0]["source"]
    assert sources == ["from torch.utils.data import DataLoader\n", "%time x = 1\n",
                       "loader = DataLoader(ds)  # noqa: TL201"]
    assert run(["check", "."], tmp_path).returncode == 0


# -- fixes: --show-fixes, fixable, unfixable, fix safety -----------------------------------


def test_show_fixes_lists_what_was_fixed(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": TORCHVISION, "b.py": ZERO_GRAD})
    result = run(["check", ".", "--fix", "--show-fixes", "--torch-version", "1.13", "--output-format", "concise"],
                 tmp_path)
    assert "Fixed 1 finding:\n- a.py:\n    1 \u00d7 TL704 (torchvision-pretrained)\n" in result.stdout
    assert "b.py:2:5: TL302" in result.stdout  # unsafe: not fixed, still reported


def test_unfixable_keeps_the_finding_but_no_fix_is_applied(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": TORCHVISION, "pyproject.toml": '[tool.torchlint]\nunfixable = ["TL704"]\n'})
    result = run(["check", "a.py", "--fix", "--output-format", "concise"], tmp_path)
    assert result.returncode == 1 and codes(result) == ["TL704"]
    assert "[*]" not in result.stdout
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == TORCHVISION
    assert run(["fix", "a.py", "--apply"], tmp_path).stderr.startswith("No fixes available.")
    # The command line's --fixable replaces the configured list; --unfixable adds to it.
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\n", encoding="utf-8")
    assert "[*]" not in run(["check", "a.py", "--unfixable", "torchvision-pretrained"], tmp_path).stdout
    assert "[*]" not in run(["check", "a.py", "--fixable", "TL1"], tmp_path).stdout
    assert "[*]" in run(["check", "a.py", "--fixable", "TL7"], tmp_path).stdout


def test_extend_safe_and_unsafe_fixes_change_what_fix_applies(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": TORCHVISION, "b.py": ZERO_GRAD,
                     "pyproject.toml": '[tool.torchlint]\ntorch-version = "1.13"\n'
                                       'extend-safe-fixes = ["TL302"]\nextend-unsafe-fixes = ["TL7"]\n'})
    result = run(["fix", ".", "--apply"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "b.py").read_text(encoding="utf-8") == ZERO_GRAD.replace("()", "(set_to_none=True)")
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == TORCHVISION  # now unsafe
    # The more specific selector wins: a code beats its prefix.
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchlint]\nextend-safe-fixes = ["TL704"]\nextend-unsafe-fixes = ["TL7"]\n', encoding="utf-8")
    assert run(["fix", "a.py", "--apply"], tmp_path).returncode == 0
    assert "weights=None" in (tmp_path / "a.py").read_text(encoding="utf-8")


def test_fix_says_which_fixes_earlier_fixes_brought_about(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": "import torch\nx = torch.range(0, 4).cuda()\n"})
    checked = run(["check", "a.py", "--unsafe-fixes", "--output-format", "concise", "--torch-version", "2.0"],
                  tmp_path)
    # `torch.range` -> `torch.arange` (TL703) makes a factory that TL101 then reports and fixes.
    assert "[*] 1 fixable with" in checked.stdout and codes(checked) == ["TL703"]
    result = run(["fix", "a.py", "--apply", "--unsafe-fixes", "--torch-version", "2.0"], tmp_path)
    assert result.stderr.startswith("Fixed 2 findings in 1 file (1 of them found after earlier fixes")
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == 'import torch\nx = torch.arange(0, 5, device="cuda")\n'


# -- settings: extend, --show-settings, messages -----------------------------------------


def test_extend_inherits_another_file_and_overrides_it(tmp_path: Path) -> None:
    write(tmp_path, {
        "base.toml": 'torch-version = "1.13"\nignore = ["TL501"]\n[dataloader-without-workers]\nnum-workers = 6\nmin-workers = 2\n',
        "proj/pyproject.toml": '[tool.torchlint]\nextend = "../base.toml"\nignore = []\n'
                               '[tool.torchlint.dataloader-without-workers]\nnum-workers = 8\n',
        "proj/a.py": DP + ZERO_GRAD + "from torch.utils.data import DataLoader\nl = DataLoader(ds, num_workers=1)\n"
                     'if __name__ == "__main__":\n    train(l)\n',
    })
    result = run(["check", "proj/a.py", "--output-format", "json"], tmp_path)
    found = {item["code"]: item for item in json.loads(result.stdout)}
    assert set(found) == {"TL501", "TL302", "TL201"}  # ignore replaced; torch 1.13 inherited (TL302)
    assert found["TL201"]["fix"]["edits"][0]["content"] == "8"  # num-workers overridden, min-workers inherited
    shown = run(["check", "proj/a.py", "--show-settings"], tmp_path).stdout
    assert f'torch-version = "1.13"  # {tmp_path / "base.toml"}' in shown
    assert f"ignore = []  # {tmp_path / 'proj' / 'pyproject.toml'}" in shown
    assert f"TL201.min-workers = 2  # {tmp_path / 'base.toml'}" in shown
    assert f"TL201.num-workers = 8  # {tmp_path / 'proj' / 'pyproject.toml'}" in shown
    assert "exclude = [" in shown and "# default" in shown
    flagged = run(["check", "proj/a.py", "--show-settings", "--torch-version", "2.1"], tmp_path).stdout
    assert 'torch-version = "2.1"  # command line' in flagged


def test_extend_cycle_and_missing_file_are_errors(tmp_path: Path) -> None:
    write(tmp_path, {"a.toml": 'extend = "b.toml"\n', "b.toml": 'extend = "a.toml"\n', "x.py": "x = 1\n"})
    cycle = run(["check", "x.py", "--config", "a.toml"], tmp_path)
    assert cycle.returncode == 2 and "`extend` makes a cycle" in cycle.stderr
    write(tmp_path, {"c.toml": 'extend = "missing.toml"\n'})
    missing = run(["check", "x.py", "--config", "c.toml"], tmp_path)
    assert missing.returncode == 2 and "no such configuration file 'missing.toml'" in missing.stderr


@pytest.mark.parametrize(("config", "args", "expected"), [
    ("", ["--torch-version", "banana"], "torchlint: error: --torch-version: not a torch version: 'banana'"),
    ("", ["--target-version", "py2"], "torchlint: error: --target-version:"),
    ("selct = []\n", [], "unknown setting `selct` (did you mean `select`?)"),
    ("[dataloader-without-workrs]\nnum-workers = 3\n", [],
     "unknown rule table `dataloader-without-workrs` (did you mean `dataloader-without-workers`?)"),
    ("[TL201]\nnum-worker = 3\n", [], "unknown option `num-worker` for TL201 (dataloader-without-workers) "
                                      "(did you mean `num-workers`?)"),
    ("[tool.torchlint]\nselect = []\n", [], "torchlint.toml takes the settings as top-level keys"),
])
def test_configuration_messages_name_the_culprit(tmp_path: Path, config: str, args: List[str], expected: str) -> None:
    write(tmp_path, {"torchlint.toml": config, "a.py": DL})
    result = run(["check", "a.py", *args], tmp_path)
    assert result.returncode == 2 and expected in result.stderr, result.stderr
    if args:  # a bad flag is not blamed on the (empty) configuration file
        assert "torchlint.toml" not in result.stderr


def test_explain_suggests_the_closest_rule(tmp_path: Path) -> None:
    result = run(["explain", "TL2O1"], tmp_path)
    assert result.returncode == 2 and "(did you mean `TL201`?)" in result.stderr


# -- output: -q, -s, statistics JSON, gitlab, SARIF fingerprints ---------------------------------


def test_quiet_prints_findings_only_and_silent_nothing(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": DP})
    quiet = run(["check", "a.py", "-q", "--output-format", "concise"], tmp_path)
    assert quiet.returncode == 1 and quiet.stdout == "a.py:3:9: TL501 " + quiet.stdout.split(" TL501 ")[1]
    assert "Found" not in quiet.stdout and quiet.stdout.count("\n") == 1
    silent = run(["check", "a.py", "--silent"], tmp_path)
    assert silent.returncode == 1 and silent.stdout == "" and silent.stderr == ""
    assert run(["fix", "a.py", "-q"], tmp_path).stderr == ""


def test_statistics_as_json(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": DP + "m2 = nn.DataParallel(net)\n" + DL})
    result = run(["check", "a.py", "--statistics", "--output-format", "json"], tmp_path)
    assert json.loads(result.stdout) == [
        {"code": "TL501", "name": "data-parallel", "count": 2, "fixable": False, "fixable_count": 0,
         "unsafe_fix_count": 0},
        {"code": "TL201", "name": "dataloader-without-workers", "count": 1, "fixable": False, "fixable_count": 0,
         "unsafe_fix_count": 1},
    ]
    text = run(["check", "a.py", "--statistics"], tmp_path).stdout
    assert "TL201\t[ ] dataloader-without-workers (1 with `--unsafe-fixes`)" in text
    assert "Found 3 warnings." in text


def test_gitlab_code_quality_report(tmp_path: Path) -> None:
    write(tmp_path, {"src/a.py": DP})
    result = run(["check", "src", "--output-format", "gitlab"], tmp_path)
    [issue] = json.loads(result.stdout)
    assert issue["check_name"] == "TL501 (data-parallel)"
    assert issue["description"].startswith("TL501 `nn.DataParallel`")
    assert issue["severity"] == "minor"
    assert issue["location"] == {"path": "src/a.py", "lines": {"begin": 3, "end": 3}}
    assert len(issue["fingerprint"]) == 64
    assert json.loads(run(["check", "src", "--output-format", "gitlab", "--select", "TL101"], tmp_path).stdout) == []


def test_fingerprints_follow_a_finding_across_commits(tmp_path: Path) -> None:
    two = DP + "other = nn.DataParallel(net)\n"
    write(tmp_path, {"a.py": two})

    def prints(fmt: str) -> List[str]:
        data = json.loads(run(["check", "a.py", "--output-format", fmt], tmp_path).stdout)
        if fmt == "sarif":
            return [r["partialFingerprints"]["torchlint/v1"] for r in data["runs"][0]["results"]]
        return [issue["fingerprint"] for issue in data]

    before = {fmt: prints(fmt) for fmt in ("sarif", "gitlab")}
    assert len(set(before["sarif"])) == 2 and before["sarif"] == before["gitlab"]
    # Lines added above shift the findings; they are still the same findings.
    write(tmp_path, {"a.py": "# a comment\n\n" + two})
    assert prints("sarif") == before["sarif"] and prints("gitlab") == before["gitlab"]
    # An identical line added before the first: the two old findings keep
    # their fingerprints through order (first/second identical line).
    write(tmp_path, {"a.py": two + "model = nn.DataParallel(net)\n"})
    assert set(before["sarif"]) < set(prints("sarif"))


# -- --watch --------------------------------------------------------------------------------------


def test_watch_lints_again_when_a_file_changes(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": "x = 1\n"})
    env = {**os.environ, "TORCHLINT_WATCH_TIMEOUT": "20", "TORCHLINT_WATCH_INTERVAL": "0.1",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    env.pop("TORCHLINT_OUTPUT_FORMAT", None)
    process = subprocess.Popen([sys.executable, "-m", "torchlint", "check", "a.py", "--watch", "--no-cache",
                                "--output-format", "concise"], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stderr is not None
        assert "Starting linter in watch mode" in process.stderr.readline()
        assert process.stdout.readline() == "All checks passed!\n"
        time.sleep(0.3)
        (tmp_path / "a.py").write_text(DP, encoding="utf-8")
        assert "File change detected" in process.stderr.readline()
        assert process.stdout.readline().startswith("a.py:3:9: TL501 ")
    finally:
        process.kill()
        process.wait(timeout=10)


def test_add_noqa_in_a_job_script_goes_at_the_end_of_the_line(tmp_path: Path) -> None:
    write(tmp_path, {
        "job.sh": "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:4\n#SBATCH --cpus-per-task=8\n"
                  "python \\\n  train.py\n",
        "train.py": "import torch\nprint(torch.cuda.device_count())\n",
    })
    before = run(["check", "job.sh", "--output-format", "concise"], tmp_path)
    assert before.returncode == 1 and codes(before), before.stdout
    added = run(["check", "job.sh", "--add-noqa"], tmp_path)
    assert added.returncode == 0, added.stderr
    text = (tmp_path / "job.sh").read_text(encoding="utf-8")
    assert "# noqa: TL9" in text and "python \\\n" in text  # a continued line takes no comment
    assert run(["check", "job.sh"], tmp_path).returncode == 0
