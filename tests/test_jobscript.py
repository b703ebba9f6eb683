"""Batch scripts: the #SBATCH forms, launch lines, and job scripts in `torchlint check`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Optional

import pytest
from conftest import run_in_process

from torchlint.jobscript import Launcher, parse_job_script
from torchlint.jobscript.model import Resources

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _resources(header: str) -> Resources:
    return parse_job_script(f"#!/bin/bash\n{header}\npython x.py\n", Path("job.sh")).resources


@pytest.mark.parametrize("header, gpus", [
    ("#SBATCH --gres=gpu:4", 4),
    ("#SBATCH --gres=gpu", 1),
    ("#SBATCH --gres=gpu:a100:2", 2),
    ("#SBATCH --gres gpu:a100:2,shard:1", 2),
    ("#SBATCH --gres=shard:2", None),
    ("#SBATCH --gpus-per-node=v100:2", 2),
    ("#SBATCH --gpus-per-node 3", 3),
    ("#SBATCH -N 2\n#SBATCH --gpus=8", 4),
    ("#SBATCH --nodes=2\n#SBATCH -G 4", 2),
    ("#SBATCH --ntasks-per-node=4\n#SBATCH --gpus-per-task=1", 4),
    ("#SBATCH -n 2\n#SBATCH --gpus-per-task=a100:2", 4),
    ("#SBATCH --gres=gpu:2 # two GPUs", 2),
    ("#SBATCH --gres=gpu:1\n#SBATCH --gres=gpu:2", 2),
    ("echo start\n#SBATCH --gres=gpu:4", None),
])
def test_gpus_per_node_from_each_directive_form(header: str, gpus: Optional[int]) -> None:
    assert _resources(header).gpus_per_node == gpus


@pytest.mark.parametrize("header, cpus, tasks", [
    ("#SBATCH --cpus-per-task=8", 8, None),
    ("#SBATCH --cpus-per-task 8", 8, None),
    ("#SBATCH -c 8", 8, None),
    ("#SBATCH -c8", 8, None),
    ("#SBATCH -c=8", 8, None),
    ("#SBATCH -n 4\n#SBATCH -c 2", 2, 4),
    ("#SBATCH --ntasks=8\n#SBATCH --nodes=2\n#SBATCH -c 2", 2, 4),
    ("#SBATCH --ntasks-per-node=3", None, 3),
])
def test_cpus_and_tasks_from_each_directive_form(header: str, cpus: Optional[int], tasks: Optional[int]) -> None:
    resources = _resources(header)
    assert (resources.cpus_per_task, resources.tasks_per_node) == (cpus, tasks)


@pytest.mark.parametrize("line, launcher, processes", [
    ("python train.py", Launcher.PYTHON, 1),
    ("python3 -u train.py --lr 1", Launcher.PYTHON, 1),
    ("python -m pkg.train", Launcher.PYTHON, 1),
    ("srun python train.py", Launcher.PYTHON, 4),
    ("srun -n 8 -N 2 python train.py", Launcher.PYTHON, 4),
    ("srun --ntasks-per-node=2 python train.py", Launcher.PYTHON, 2),
    ("torchrun --nproc_per_node=4 train.py", Launcher.TORCHRUN, 4),
    ("torchrun --nproc-per-node 2 --standalone train.py", Launcher.TORCHRUN, 2),
    ("torchrun --nproc_per_node=gpu train.py", Launcher.TORCHRUN, None),
    ("srun torchrun --nproc_per_node=2 train.py", Launcher.TORCHRUN, 8),
    ("python -m torch.distributed.launch --nproc_per_node=2 train.py", Launcher.LEGACY_LAUNCH, 2),
    ("python -m torch.distributed.run --nproc_per_node 3 train.py", Launcher.DISTRIBUTED_RUN, 3),
    ("accelerate launch --num_processes 4 train.py", Launcher.ACCELERATE, 4),
    ("accelerate launch --multi_gpu --num_processes=8 --num_machines 2 train.py", Launcher.ACCELERATE, 4),
    ("mpirun -np 8 python train.py", Launcher.PYTHON, 8),
    ("OMP_NUM_THREADS=1 A=b python train.py", Launcher.PYTHON, 1),
    ("time python train.py", Launcher.PYTHON, 1),
])
def test_launch_lines(tmp_path: Path, line: str, launcher: Launcher, processes: Optional[int]) -> None:
    (tmp_path / "train.py").write_text("x = 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text("x = 1\n")
    text = f"#!/bin/bash\n#SBATCH --ntasks-per-node=4\n{line}\n"
    (launch,) = parse_job_script(text, tmp_path / "job.sh").launches
    assert (launch.launcher, launch.processes_per_node) == (launcher, processes)
    assert launch.target is not None and launch.target.name == "train.py"


def test_variables_cd_submit_dir_and_continuations_resolve_the_file(tmp_path: Path) -> None:
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "main.py").write_text("x = 1\n")
    text = (
        "#!/bin/bash\n#SBATCH -c 2\nSCRIPT=main.py\nexport DIR=code\ncd $SLURM_SUBMIT_DIR/${DIR}\n"
        "srun \\\n  python \"$SCRIPT\" \\\n  --flag\n"
    )
    (launch,) = parse_job_script(text, tmp_path / "job.sh").launches
    assert launch.target == tmp_path / "code" / "main.py"
    assert launch.span.line == 6


@pytest.mark.parametrize("line", [
    "python $NOT_SET/train.py",
    "python \"$(ls *.py)\"",
    "python -c 'import train'",
    "python missing.py",
    "cd $UNKNOWN && python train.py",
])
def test_unresolvable_launches_have_no_target(tmp_path: Path, line: str) -> None:
    (tmp_path / "train.py").write_text("x = 1\n")
    job = parse_job_script(f"#!/bin/bash\n#SBATCH -c 2\n{line}\n", tmp_path / "job.sh")
    assert all(launch.target is None for launch in job.launches)


def _check(*args: str, cwd: Path) -> "subprocess.CompletedProcess[str]":
    """``torchlint check --no-cache ARGS``, run in this process (what the
    command does is under test here, not how it starts)."""
    return run_in_process(["check", "--no-cache", *args], cwd)


def _project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8, num_workers=16)\n")
    (tmp_path / "job.slurm").write_text("#!/bin/bash\n#SBATCH --cpus-per-task=4\npython train.py\n")
    (tmp_path / "helper.sh").write_text("#!/bin/bash\necho not a batch script\n")
    (tmp_path / "run").write_text("#!/bin/bash\n#SBATCH -c 2\npython train.py\n")
    return tmp_path


def test_check_finds_batch_scripts_in_folders_and_by_name(tmp_path: Path) -> None:
    project = _project(tmp_path)
    listed = _check("--show-files", ".", cwd=project).stdout.split()
    assert listed == ["job.slurm", "train.py"]
    done = _check("--select", "TL902", "--output-format", "concise", ".", "run", cwd=project)
    assert done.returncode == 1
    assert "job.slurm:2:1: TL902" in done.stdout and "run:2:1: TL902" in done.stdout


@pytest.mark.parametrize("output_format", ["full", "concise", "json", "github", "sarif"])
def test_job_script_findings_in_every_output_format(tmp_path: Path, output_format: str) -> None:
    done = _check("--select", "TL902", "--output-format", output_format, "job.slurm", cwd=_project(tmp_path))
    assert done.returncode == 1 and "TL902" in done.stdout
    if output_format in ("json", "sarif"):
        json.loads(done.stdout)


def test_suppression_config_and_baseline_apply_to_job_scripts(tmp_path: Path) -> None:
    project = _project(tmp_path)
    job = project / "job.slurm"
    job.write_text("#!/bin/bash\n#SBATCH --cpus-per-task=4  # torchlint: ignore[TL902]\npython train.py\n")
    assert _check("--select", "TL902", "job.slurm", cwd=project).returncode == 0
    job.write_text("#!/bin/bash\n#SBATCH --cpus-per-task=4  # noqa: TL902\npython train.py\n")
    assert _check("--select", "TL902", "job.slurm", cwd=project).returncode == 0
    job.write_text("#!/bin/bash\n#SBATCH --cpus-per-task=4\npython train.py\n")
    assert _check("--select", "TL902", "job.slurm", cwd=project).returncode == 1
    assert _check("--ignore", "TL902", "job.slurm", cwd=project).returncode == 0
    (project / "pyproject.toml").write_text('[tool.torchlint]\nper-file-ignores = { "*.slurm" = ["TL902"] }\n')
    assert _check("--select", "TL902", "job.slurm", cwd=project).returncode == 0
    (project / "pyproject.toml").unlink()
    assert _check("--select", "TL902", "--write-baseline", "base.json", "job.slurm", cwd=project).returncode == 0
    assert _check("--select", "TL902", "--baseline", "base.json", "job.slurm", cwd=project).returncode == 0


def test_changing_the_launched_code_changes_the_job_scripts_findings(tmp_path: Path) -> None:
    project = _project(tmp_path)
    cached = ["check", "--select", "TL902", "--cache-dir", str(project / "cache"), "job.slurm"]
    first = run_in_process(cached, project)
    assert first.returncode == 1
    (project / "train.py").write_text(
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8, num_workers=4)\n")
    second = run_in_process(cached, project)
    assert second.returncode == 0, second.stdout


def test_fix_rewrites_the_legacy_launcher_only_with_unsafe_fixes(tmp_path: Path) -> None:
    script = tmp_path / "job.sh"
    original = "#!/bin/bash\n#SBATCH --gres=gpu:2\npython -m torch.distributed.launch --use_env --nproc_per_node=2 t.py\n"
    script.write_text(original)
    assert _check("--select", "TL903", "--fix", "job.sh", cwd=tmp_path).returncode == 1
    assert script.read_text() == original
    done = _check("--select", "TL903", "--fix", "--unsafe-fixes", "job.sh", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert script.read_text() == "#!/bin/bash\n#SBATCH --gres=gpu:2\ntorchrun --nproc_per_node=2 t.py\n"
