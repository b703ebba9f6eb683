"""Framework spellings of the rules' anti-patterns, on both sides of every
release gate the framework data sets (the fixtures hold the full cases)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import List, Optional

import pytest

import torchlint
from torchlint.lint.jobscripts import lint_job_script
from torchlint.lint.settings import Settings


def messages(source: str, code: str, *, lightning: Optional[str] = None, transformers: Optional[str] = None,
             accelerate: Optional[str] = None, path: str = "train.py") -> List[str]:
    """The messages of rule ``code`` on ``source``, for the given framework releases."""
    versions = tuple(sorted((name, value) for name, value in (
        ("lightning", lightning), ("transformers", transformers), ("accelerate", accelerate)) if value is not None))
    settings = Settings(select=(code,), framework_versions=versions)
    return [d.message for d in torchlint.check_source(textwrap.dedent(source), path, settings)]


def verdict(found: List[str]) -> str:
    """"quiet", "runs" (the anti-pattern runs) or "gone" (the spelling no longer runs)."""
    if not found:
        return "quiet"
    assert len(found) == 1, found
    return "gone" if "no longer runs" in found[0] or "was removed" in found[0] else "runs"


# -- TL501: DataParallel through Lightning ----------------------------------------------

DP_CASES = [
    # strategy="dp": added 1.5.0, removed 2.0.0
    ('pl.Trainer(strategy="dp")', "1.4.9", "quiet"),
    ('pl.Trainer(strategy="dp")', "1.5.0", "runs"),
    ('pl.Trainer(strategy="dp")', "1.9.5", "runs"),
    ('pl.Trainer(strategy="dp")', "2.0.0", "gone"),
    # accelerator="dp": 1.0.0 to 1.7.0
    ('pl.Trainer(accelerator="dp")', "0.10.0", "quiet"),
    ('pl.Trainer(accelerator="dp")', "1.0.0", "runs"),
    ('pl.Trainer(accelerator="dp")', "1.6.5", "runs"),
    ('pl.Trainer(accelerator="dp")', "1.7.0", "gone"),
    # distributed_backend="dp": until 1.5.0
    ('pl.Trainer(distributed_backend="dp")', "1.4.9", "runs"),
    ('pl.Trainer(distributed_backend="dp")', "1.5.0", "gone"),
    # DataParallelStrategy: 1.6.0 to 2.0.0; DataParallelPlugin: until 1.6.0
    ("pl.Trainer(strategy=pl.strategies.DataParallelStrategy())", "1.5.10", "quiet"),
    ("pl.Trainer(strategy=pl.strategies.DataParallelStrategy())", "1.6.0", "runs"),
    ("pl.Trainer(strategy=pl.strategies.DataParallelStrategy())", "2.0.0", "gone"),
    ("pl.Trainer(plugins=[pl.plugins.DataParallelPlugin()])", "1.5.10", "runs"),
    ("pl.Trainer(plugins=[pl.plugins.DataParallelPlugin()])", "1.6.0", "quiet"),
    # On the CPU Lightning 1.x falls back to DDP.
    ('pl.Trainer(strategy="dp", accelerator="cpu")', "1.9.5", "quiet"),
]


@pytest.mark.parametrize("call, release, expected", DP_CASES)
def test_lightning_data_parallel_gates(call: str, release: str, expected: str) -> None:
    source = f"import pytorch_lightning as pl\ntrainer = {call}\n"
    assert verdict(messages(source, "TL501", lightning=release)) == expected


def test_lightning_data_parallel_suggests_the_releases_ddp_spelling() -> None:
    source = 'import pytorch_lightning as pl\ntrainer = pl.Trainer(accelerator="dp")\n'
    assert '`accelerator="ddp"`' in messages(source, "TL501", lightning="1.4")[0]
    assert '`strategy="ddp"`' in messages(source, "TL501", lightning="1.5")[0]


# -- TL605: Lightning's cuDNN flags ---------------------------------------------------------

FLAGS = "import torch\nimport pytorch_lightning as pl\n"


@pytest.mark.parametrize("source, release, expected", [
    # deterministic="warn" exists from 1.7.0
    (FLAGS + 'pl.Trainer(benchmark=True, deterministic="warn")\n', "1.6.5", 0),
    (FLAGS + 'pl.Trainer(benchmark=True, deterministic="warn")\n', "1.7.0", 1),
    (FLAGS + "pl.Trainer(benchmark=True, deterministic=True)\n", "1.4.0", 1),
    # Trainer(benchmark=True) against the file's cudnn.deterministic: from 1.5.0
    (FLAGS + "torch.backends.cudnn.deterministic = True\npl.Trainer(benchmark=True)\n", "1.4.9", 0),
    (FLAGS + "torch.backends.cudnn.deterministic = True\npl.Trainer(benchmark=True)\n", "1.5.0", 1),
    # Lightning sets benchmark itself from 1.6.0 to 1.6.3
    (FLAGS + "torch.backends.cudnn.deterministic = True\npl.Trainer()\n", "1.5.10", 0),
    (FLAGS + "torch.backends.cudnn.deterministic = True\npl.Trainer()\n", "1.6.0", 1),
    (FLAGS + "torch.backends.cudnn.deterministic = True\npl.Trainer()\n", "1.6.3", 1),
    (FLAGS + "torch.backends.cudnn.deterministic = True\npl.Trainer()\n", "1.6.4", 0),
    # The file's own contradiction survives a Trainer that leaves the flag alone (1.6.4 on) ...
    (FLAGS + "torch.backends.cudnn.benchmark = True\ntorch.backends.cudnn.deterministic = True\npl.Trainer()\n",
     "1.6.4", 1),
    # ... and is overwritten before 1.6.0 (the Trainer assigns its default False).
    (FLAGS + "torch.backends.cudnn.benchmark = True\ntorch.backends.cudnn.deterministic = True\npl.Trainer()\n",
     "1.5.10", 0),
])
def test_lightning_cudnn_flag_gates(source: str, release: str, expected: int) -> None:
    assert len(messages(source, "TL605", lightning=release)) == expected


@pytest.mark.parametrize("release, expected", [("1.4.9", 0), ("1.5.0", 1), ("2.6.5", 1)])
def test_lightning_detect_anomaly_exists_from_1_5(release: str, expected: int) -> None:
    source = "import pytorch_lightning as pl\ntrainer = pl.Trainer(detect_anomaly=True)\n"
    assert len(messages(source, "TL304", lightning=release)) == expected


# -- TL602: precision as a framework argument ----------------------------------------------

def test_lightning_precision_suggests_the_releases_mixed_spelling() -> None:
    source = 'import pytorch_lightning as pl\ntrainer = pl.Trainer(accelerator="gpu")\n'
    assert "`precision=16`" in messages(source, "TL602", lightning="1.4")[0]
    assert "bf16" not in messages(source, "TL602", lightning="1.4")[0]
    assert '`precision="bf16"`' in messages(source, "TL602", lightning="1.5")[0]
    assert '`precision="bf16-mixed"`' in messages(source, "TL602", lightning="2.0")[0]


@pytest.mark.parametrize("precision, release, expected", [
    ('"32"', "1.4.9", 0), ('"32"', "1.5.0", 1),  # string precision from 1.5
    ('"32-true"', "1.9.5", 0), ('"32-true"', "2.0.0", 1),  # canonical names from 2.0
    ("None", "2.0.0", 0), ("None", "2.1.0", 1),  # None resolves to "32-true" from 2.1
    ("16", "1.9.5", 0), ("16", "2.0.0", 0), ('"bf16"', "2.0.0", 0),
])
def test_lightning_full_precision_values_by_release(precision: str, release: str, expected: int) -> None:
    source = f'import pytorch_lightning as pl\ntrainer = pl.Trainer(accelerator="gpu", precision={precision})\n'
    assert len(messages(source, "TL602", lightning=release)) == expected


@pytest.mark.parametrize("release, expected", [("1.9.5", 1), ("2.0.0", 0)])
def test_lightning_gpus_argument_until_2_0(release: str, expected: int) -> None:
    source = "import pytorch_lightning as pl\ntrainer = pl.Trainer(gpus=2)\n"
    assert len(messages(source, "TL602", lightning=release)) == expected


@pytest.mark.parametrize("release, expected", [("4.19.0", 0), ("4.20.0", 1), ("5.24.0", 1)])
def test_transformers_fp16_bf16_from_4_20(release: str, expected: int) -> None:
    source = 'from transformers import Trainer, TrainingArguments\nargs = TrainingArguments("out")\nTrainer(model=model, args=args).train()\n'
    assert len(messages(source, "TL602", transformers=release)) == expected


@pytest.mark.parametrize("release, expected", [("0.5.1", 0), ("0.6.0", 1), ("1.14.0", 1)])
def test_accelerate_mixed_precision_from_0_6(release: str, expected: int) -> None:
    source = 'from accelerate import Accelerator\naccelerator = Accelerator(mixed_precision="no")\n'
    assert len(messages(source, "TL602", accelerate=release)) == expected


# -- TL201: Transformers' dataloader_num_workers ----------------------------------------------

@pytest.mark.parametrize("release, expected", [("4.8.2", 0), ("4.9.0", 1), ("5.24.0", 1)])
def test_transformers_workers_known_from_4_9(release: str, expected: int) -> None:
    source = 'from transformers import Trainer, TrainingArguments\nargs = TrainingArguments("out")\nTrainer(model=model, args=args).train()\n'
    assert len(messages(source, "TL201", transformers=release)) == expected


def test_transformers_workers_fix_follows_the_num_workers_option() -> None:
    source = 'from transformers import Trainer, TrainingArguments\nargs = TrainingArguments("out", dataloader_num_workers=0)\nTrainer(model=model, args=args).train()\n'
    settings = Settings(select=("TL201",), rule_options={"TL201": {"num-workers": "slurm"}})
    fixed = torchlint.fix_source(source, "train.py", settings, unsafe=True).source
    assert fixed == ('import os\nfrom transformers import Trainer, TrainingArguments\nargs = TrainingArguments("out", '
                     'dataloader_num_workers=int(os.environ.get("SLURM_CPUS_PER_TASK", 4)))\n'
                     'Trainer(model=model, args=args).train()\n')


# -- Training arguments no Trainer reads (a bag of settings) ------------------------------------

BAG = """
from transformers import Trainer, TrainingArguments
def helper(model, settings):
    return settings.learning_rate
class Holder:
    def __init__(self, args):
        self.args = args
    def fit(self, model):
        {holder}
def main(model, build):
    args = TrainingArguments("out"{extra})
    {use}
"""


@pytest.mark.parametrize(("use", "holder", "expected"), [
    # Handed to a Trainer: directly, through a function of the file, or stored on self and passed later.
    ("Trainer(model=model, args=args)", "pass", 1),
    ("Trainer(model, args)", "pass", 1),
    ("trainer = Trainer(model=model, args=args if model else None)", "pass", 1),
    ("Holder(args).fit(model)", "Trainer(model=model, args=self.args).train()", 1),
    # Escapes to code the file does not show, while the file names a Trainer.
    ("build(model, args)\n    Trainer", "pass", 1),
    # Read only by the file's own code: quiet, though the file names a Trainer elsewhere.
    ("print(args.learning_rate)\n    Trainer", "pass", 0),
    ("helper(model, args)\n    Trainer", "pass", 0),
    ("Holder(args).fit(model)\n    Trainer", "print(self.args.num_train_epochs)", 0),
    ("if args is not None and not args.do_train:\n        print(f'{args}')\n    Trainer", "pass", 0),
])
def test_training_arguments_are_read_where_they_reach_a_trainer(use: str, holder: str, expected: int) -> None:
    source = BAG.replace("{holder}", holder).replace("{use}", use)
    for code in ("TL201", "TL602", "TL603", "TL404"):
        assert len(messages(source.replace("{extra}", ""), code)) == expected, code
    checkpointing = source.replace("{extra}", ", gradient_checkpointing=True, dataloader_pin_memory=False")
    for code in ("TL705", "TL202"):
        assert len(messages(checkpointing, code, transformers="4.57.6")) == expected, code


def test_training_arguments_that_escape_without_any_trainer_are_quiet() -> None:
    source = 'from transformers import TrainingArguments\nargs = TrainingArguments("out")\nlog(args)\n'
    assert messages(source, "TL201") == [] and messages(source, "TL602") == []
    # The loop reads the field the rule is about: its default reaches that loop.
    reads = source + "loader = DataLoader(ds, num_workers=args.dataloader_num_workers)\n"
    assert len(messages(reads, "TL201")) == 1 and messages(reads, "TL602") == []


# -- TL202: pinned memory through the frameworks ------------------------------------------------

@pytest.mark.parametrize("release, expected", [("4.8.2", 0), ("4.9.0", 1)])
def test_transformers_pin_memory_known_from_4_9(release: str, expected: int) -> None:
    source = 'from transformers import Trainer, TrainingArguments\nargs = TrainingArguments("out", dataloader_pin_memory=False)\nTrainer(model=model, args=args).train()\n'
    assert len(messages(source, "TL202", transformers=release)) == expected


def test_a_loader_prepared_by_accelerate_needs_pinning_unless_placement_is_off() -> None:
    source = """
    from accelerate import Accelerator
    from torch.utils.data import DataLoader
    accelerator = Accelerator({options})
    loader = accelerator.prepare(DataLoader(ds, batch_size=8, num_workers=2){placement})
    """
    assert len(messages(source.format(options="", placement=""), "TL202")) == 1
    assert messages(source.format(options="device_placement=False", placement=""), "TL202") == []
    assert messages(source.format(options="", placement=", device_placement=[False]"), "TL202") == []
    # A value that is not an Accelerator: its prepare() is unknown.
    other = source.format(options="", placement="").replace("accelerator = Accelerator()", "accelerator = make()")
    assert messages(other, "TL202") == []


# -- TL705: Transformers' gradient checkpointing ------------------------------------------------

HF_CHECKPOINTING = [
    'from transformers import Trainer, TrainingArguments\nargs = TrainingArguments("out", gradient_checkpointing=True)\nTrainer(model=model, args=args).train()\n',
    'import transformers\nmodel = transformers.AutoModel.from_pretrained("m")\nmodel.gradient_checkpointing_enable()\n',
]


@pytest.mark.parametrize("source", HF_CHECKPOINTING)
@pytest.mark.parametrize("release, expected", [("4.34.1", 0), ("4.35.0", 1), ("4.44.0", 1), ("4.57.6", 1), ("5.0.0", 0)])
def test_transformers_reentrant_default_releases(source: str, release: str, expected: int) -> None:
    assert len(messages(source, "TL705", transformers=release)) == expected


def test_gradient_checkpointing_enable_needs_a_transformers_import() -> None:
    source = "model = build()\nmodel.gradient_checkpointing_enable()\n"
    assert messages(source, "TL705", transformers="4.57.6") == []


# -- TL603 / TL404: TF32 and compiling through TrainingArguments ----------------------------------

ARGS = 'from transformers import Trainer, TrainingArguments\nargs = TrainingArguments("out"{extra})\nTrainer(model=model, args=args).train()\n'


@pytest.mark.parametrize("release, expected", [("4.19.1", 0), ("4.20.0", 1)])
def test_transformers_tf32_field_from_4_20(release: str, expected: int) -> None:
    assert len(messages(ARGS.format(extra=""), "TL603", transformers=release)) == expected


@pytest.mark.parametrize("extra, expected", [
    (", torch_compile=True", 0), (", torch_compile=True, bf16=True", 0),
    (", torch_compile=True, fp16=True", 1),  # with fp16 alone Transformers leaves TF32 off
])
def test_transformers_compile_turns_tf32_on(extra: str, expected: int) -> None:
    assert len(messages(ARGS.format(extra=extra), "TL603", transformers="4.57.6")) == expected


@pytest.mark.parametrize("release, expected", [("4.25.1", 0), ("4.26.0", 1)])
def test_transformers_torch_compile_from_4_26(release: str, expected: int) -> None:
    assert len(messages(ARGS.format(extra=""), "TL404", transformers=release)) == expected


# -- TL901 / TL904: job scripts that launch framework code ----------------------------------------

def job_messages(tmp_path: Path, script: str, code: str, rule: str, **versions: str) -> List[str]:
    (tmp_path / "train.py").write_text(textwrap.dedent(code), encoding="utf-8")
    job = tmp_path / "job.sh"
    job.write_text(textwrap.dedent(script), encoding="utf-8")
    settings = Settings(select=(rule,), framework_versions=tuple(sorted(versions.items())), root=tmp_path)
    return [d.message for d in lint_job_script(job.read_text(), str(job), settings.lint_config(job), job)]


HF_TRAINER = """
from transformers import Trainer, TrainingArguments
Trainer(model=model, args=TrainingArguments("out")).train()
"""


@pytest.mark.parametrize("release, expected", [("4.34.1", 0), ("4.35.0", 1), ("5.24.0", 1)])
def test_transformers_trainer_in_one_process_gates(tmp_path: Path, release: str, expected: int) -> None:
    found = job_messages(tmp_path, "#SBATCH --gres=gpu:2\npython train.py\n", HF_TRAINER, "TL901",
                         transformers=release)
    assert len(found) == expected
    assert all("nn.DataParallel" in message and "torchrun --nproc_per_node=2 train.py" in message for message in found)


LIGHTNING_DEFAULT = "import lightning as L\nL.Trainer(accelerator='gpu').fit(model)\n"
TWO_TASKS = "#SBATCH --gres=gpu:4\n#SBATCH --ntasks-per-node=2\nsrun python train.py\n"


def test_lightning_devices_default_is_every_gpu_from_2_0(tmp_path: Path) -> None:
    newer = job_messages(tmp_path, TWO_TASKS, LIGHTNING_DEFAULT, "TL904", lightning="2.0.0")
    assert len(newer) == 1 and '`devices="auto"` (4 GPUs)' in newer[0]
    older = job_messages(tmp_path, TWO_TASKS, LIGHTNING_DEFAULT, "TL904", lightning="1.9.5")
    assert len(older) == 1 and "starts 2 Lightning processes per node, but the job requests 4 GPUs" in older[0]


@pytest.mark.parametrize("release, words", [("2.0.9", "the ranks Lightning computes disagree"),
                                            ("2.1.0", "raises `ValueError` at start-up")])
def test_lightning_checks_slurm_settings_from_2_1(tmp_path: Path, release: str, words: str) -> None:
    code = "import lightning as L\nL.Trainer(devices=4, num_nodes=1).fit(model)\n"
    found = job_messages(tmp_path, "#SBATCH --nodes=2\n#SBATCH --gres=gpu:4\n#SBATCH --ntasks-per-node=4\n"
                         "srun python train.py\n", code, "TL904", lightning=release)
    assert len(found) == 1 and "2 nodes against `num_nodes=1`" in found[0] and words in found[0]
