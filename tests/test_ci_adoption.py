"""Adopting torchlint in CI: the first run with a baseline, and the composite
GitHub Action at the repository root, its shell steps run here as the runner
would run them (inputs substituted, the actions it uses left out)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import run_in_process

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
DP = "import torch.nn as nn\n\nmodel = nn.DataParallel(net)\n"


def test_baseline_create_records_on_the_first_run_then_fails_only_on_new_findings(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(DP, encoding="utf-8")
    missing = run_in_process(["check", ".", "--baseline", "tl.json", "--no-cache"], tmp_path)
    assert missing.returncode == 2 and "pass --baseline-create to record it on the first run" in missing.stderr
    first = run_in_process(["check", ".", "--baseline", "tl.json", "--baseline-create", "--no-cache"], tmp_path)
    assert first.returncode == 0, first.stderr
    assert "Wrote 1 finding to tl.json; commit it" in first.stderr
    assert json.loads((tmp_path / "tl.json").read_text())["findings"][0]["code"] == "TL501"
    again = run_in_process(["check", ".", "--baseline", "tl.json", "--baseline-create", "--no-cache"], tmp_path)
    assert again.returncode == 0 and "1 finding in the baseline tl.json not shown." in again.stderr
    (tmp_path / "b.py").write_text(DP, encoding="utf-8")
    new = run_in_process(["check", ".", "--baseline", "tl.json", "--baseline-create", "--no-cache",
                          "--output-format", "concise"], tmp_path)
    assert new.returncode == 1 and new.stdout.startswith("b.py:3:9: TL501")
    usage = run_in_process(["check", ".", "--baseline-create"], tmp_path)
    assert usage.returncode == 2 and "--baseline-create needs --baseline" in usage.stderr


def _action() -> Dict[str, Any]:
    data = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_the_action_is_a_composite_that_installs_torchlint_and_uploads_sarif() -> None:
    action = _action()
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    uses = [step.get("uses", "") for step in steps]
    assert any(u.startswith("actions/setup-python@") for u in uses)
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    install = next(step for step in steps if step.get("name") == "Install torchlint")
    assert "$GITHUB_ACTION_PATH" in install["run"]  # this checkout's torchlint by default
    for step in steps:
        assert "uses" in step or step.get("shell") == "bash", step


def _expand(text: str, inputs: Dict[str, str]) -> str:
    return re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: inputs[m.group(1)], text)


def _run_action(cwd: Path, given: Dict[str, str]) -> "List[subprocess.CompletedProcess[str]]":
    """Run the action's shell steps but the install (torchlint is this
    environment's) in ``cwd``, as a runner would; the `uses` steps are left out."""
    action = _action()
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs.update(given)
    # `torchlint` on the PATH runs this environment's torchlint (installed or not).
    bin_dir = cwd.parent / f"{cwd.name}-bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "torchlint"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m torchlint "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    results = []
    for step in action["runs"]["steps"]:
        if "run" not in step or step.get("name") == "Install torchlint":
            continue
        condition = step.get("if")
        if condition is not None:
            match = re.fullmatch(r"inputs\.([\w-]+) == '(.*)'", condition)
            assert match is not None, condition
            if inputs[match.group(1)] != match.group(2):
                continue
        env = {**os.environ, "PATH": str(bin_dir) + os.pathsep + os.environ["PATH"], "GITHUB_ACTION_PATH": str(ROOT),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        env.pop("TORCHLINT_OUTPUT_FORMAT", None)
        env.update({key: _expand(str(value), inputs) for key, value in step.get("env", {}).items()})
        results.append(subprocess.run(["bash", "-e", "-c", _expand(step["run"], inputs)], cwd=cwd, env=env,
                                      capture_output=True, text=True, timeout=120))
    return results


def test_the_actions_steps_run_the_first_time_and_then_fail_on_a_new_finding(tmp_path: Path) -> None:
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    (tmp_path / "a.py").write_text(DP, encoding="utf-8")
    sarif, annotate = _run_action(tmp_path, {"baseline": "torchlint-baseline.json"})
    assert sarif.returncode == 0, sarif.stderr
    log = json.loads((tmp_path / "torchlint.sarif").read_text(encoding="utf-8"))
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["TL501"]
    assert annotate.returncode == 0, annotate.stderr
    assert "::warning title=torchlint baseline::Recorded the current findings in torchlint-baseline.json" \
        in annotate.stdout
    (tmp_path / "b.py").write_text(DP, encoding="utf-8")
    _, annotate = _run_action(tmp_path, {"baseline": "torchlint-baseline.json"})
    assert annotate.returncode == 1
    assert annotate.stdout.startswith("::warning title=torchlint (TL501),file=b.py,line=3,")
    assert "Recorded the current findings" not in annotate.stdout
    # Without a baseline, every finding fails the job; without SARIF, no file is written.
    (tmp_path / "torchlint.sarif").unlink()
    [plain] = _run_action(tmp_path, {"sarif": "false", "args": "a.py"})
    assert plain.returncode == 1 and "file=a.py" in plain.stdout and not (tmp_path / "torchlint.sarif").exists()
