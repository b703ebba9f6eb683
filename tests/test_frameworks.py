"""Framework facts as data (``torchlint/data/frameworks.toml``) and the
framework releases a project targets (``lightning-version`` and the like,
or its requirements)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from torchlint.data import apidata
from torchlint.data.apidata import DataError, Framework
from torchlint.lint.settings import config_fingerprint
from torchlint.lint.settings import ConfigError, SettingsResolver, detect_framework_versions, release_from_requirement
from torchlint.data.versions import CURRENT_TORCH, FrameworkReleases, Release

R = Release.parse
L, T, A = Framework.LIGHTNING, Framework.TRANSFORMERS, Framework.ACCELERATE


def test_shipped_file_holds_the_facts_rules_rely_on() -> None:
    data = apidata.frameworks()
    assert data is apidata.frameworks()  # read once
    assert data.frameworks[L].distributions == ("lightning", "pytorch-lightning")
    assert "pytorch_lightning.Trainer" in data.names(L, "trainer")
    assert data.class_of("lightning.pytorch.LightningModule") is not None
    # DataParallel: strategy="dp" from 1.5 to 2.0, accelerator="dp" from 1.0 to 1.7.
    assert data.meaning(L, "trainer", "strategy", "dp", R("1.9.5")) == "data-parallel"
    assert data.meaning(L, "trainer", "strategy", "dp", R("2.0")) is None
    assert data.meaning(L, "trainer", "strategy", "dp", R("1.4")) is None
    assert data.meaning(L, "trainer", "accelerator", "dp", R("1.6")) == "data-parallel"
    assert data.meaning(L, "trainer", "accelerator", "dp", R("1.7")) is None
    # Precision: an int 32 is not a string "32" before 1.5; True is not 1.
    assert data.meaning(L, "trainer", "precision", 32, R("1.4")) == "full-precision"
    assert data.meaning(L, "trainer", "precision", "32", R("1.4")) is None
    assert data.meaning(L, "trainer", "precision", "32", R("1.5")) == "full-precision"
    assert data.meaning(L, "trainer", "precision", True, R("2.2")) is None
    mixed = data.preferred(L, "trainer", "precision", "mixed-float16", R("1.9"))
    assert mixed is not None and mixed.spelling == "16"
    mixed = data.preferred(L, "trainer", "precision", "mixed-float16", R("2.0"))
    assert mixed is not None and mixed.spelling == '"16-mixed"'
    precision = data.argument(L, "trainer", "precision")
    assert (precision.default_in(R("1.9")), precision.default_in(R("2.0")), precision.default_in(R("2.1"))) == (
        32, "32-true", None)
    assert data.argument(L, "trainer", "detect_anomaly").default_in(R("1.4")) is apidata.MISSING
    # Lightning's own cudnn.benchmark assignments change at 1.6.0 and 1.6.4.
    benchmark = [data.behaviour(L, "trainer-sets-cudnn-benchmark", R(v)) for v in ("1.5.10", "1.6.3", "1.6.4")]
    assert benchmark == ["from-argument", "not-deterministic", "only-if-given"]
    # Transformers' use_reentrant default: reentrant below 5.0.
    assert data.behaviour(T, "trainer-gradient-checkpointing-reentrant", R("4.57.6")) == "reentrant"
    assert data.behaviour(T, "trainer-gradient-checkpointing-reentrant", R("5.0")) == "non-reentrant"
    assert data.behaviour(T, "gradient-checkpointing-enable-reentrant", R("4.34")) is None
    kwargs = data.argument(T, "training-arguments", "gradient_checkpointing_kwargs")
    assert not kwargs.exists_in(R("4.34.0")) and kwargs.exists_in(R("4.35.0"))
    workers = data.argument(T, "training-arguments", "dataloader_num_workers")
    assert not workers.since_known and workers.default_in(R("4.9.0")) == 0
    # Accelerate's values are case-insensitive.
    assert data.meaning(A, "accelerator", "mixed_precision", "NO", R("1.0")) == "full-precision"
    assert data.meaning(A, "accelerator", "mixed_precision", "no", R("0.5")) is None
    assert data.meaning(T, "training-arguments", "use_cpu", True, R("5.24.0")) == "off-cuda"
    assert not data.argument(T, "training-arguments", "no_cuda").exists_in(R("5.0.0"))
    assert "validation_step" in data.hook_names(L, "lightning-module", "disabled")
    assert "training_step" not in data.hook_names(L, "lightning-module", "disabled")


GOOD = '''
[[framework]]
name = "lightning"
distributions = ["PyTorch_Lightning"]
newest = "2.0"
reference = "r"

[[class]]
framework = "lightning"
role = "trainer"
names = ["pl.Trainer"]
reference = "r"

[[argument]]
framework = "lightning"
owner = "trainer"
name = "strategy"
since = "1.5"
defaults = { "1.5" = "None" }
reference = "r"

[[value]]
framework = "lightning"
owner = "trainer"
argument = "strategy"
value = "'dp'"
meaning = "data-parallel"
until = "2.0"
reference = "r"
'''


_SUBCLASS = '''
[[class]]
framework = "lightning"
role = "trainer"
library = "lib"
names = ["lib.MyTrainer"]
changed_defaults = ["strategy"]
reference = "r"
'''

_CONSTRUCTOR = '''
[[constructor]]
framework = "lightning"
owner = "trainer"
name = "from_argparse_args"
values_from = "command-line"
until = "2.0"
reference = "r"
'''


def test_subclasses_from_other_packages_and_constructors_are_read(tmp_path: Path) -> None:
    (tmp_path / "f.toml").write_text(GOOD + _SUBCLASS + _CONSTRUCTOR)
    data = apidata.read_frameworks(tmp_path / "f.toml")
    assert data.names(L, "trainer") == frozenset({"pl.Trainer", "lib.MyTrainer"})
    found = data.class_of("lib.MyTrainer")
    assert found is not None and found.role == "trainer" and found.changed_defaults == frozenset({"strategy"})
    assert data.class_of("pl.Trainer") is not None and data.class_of("pl.Trainer").changed_defaults == frozenset()
    made = data.constructor(L, "trainer", "from_argparse_args")
    assert made is not None and made.values_from == "command-line" and made.releases.until == R("2.0")
    assert data.constructor(L, "trainer", "from_yaml") is None


def test_shipped_subclasses_and_constructors() -> None:
    """TRL's configurations take TrainingArguments' arguments and change the
    defaults of bf16 and checkpointing (TRL at its tags); Lightning's Trainer is
    also built by from_argparse_args before 2.0; Fabric exists from 1.9."""
    data = apidata.frameworks()
    sft = data.class_of("trl.SFTConfig")
    assert sft is not None and (sft.framework, sft.role, sft.library) == (T, "training-arguments", "trl")
    assert sft.changed_defaults == frozenset({"bf16", "gradient_checkpointing", "gradient_checkpointing_kwargs"})
    assert data.class_of("trl.PPOConfig") is None  # a plain dataclass before TRL 0.12
    trainer = data.class_of("trl.SFTTrainer")
    assert trainer is not None and trainer.role == "trainer"
    assert "SFTConfig" in {n.rsplit(".", 1)[-1] for n in data.names(T, "training-arguments")}
    made = data.constructor(L, "trainer", "from_argparse_args")
    assert made is not None and not made.releases.contains(R("2.0.0")) and made.releases.contains(R("1.9.5"))
    fabric = data.class_of("lightning.Fabric")
    assert fabric is not None and fabric.role == "fabric" and not fabric.releases.contains(R("1.8.6"))
    assert data.meaning(L, "fabric", "precision", "32-true", R("2.0.0")) == "full-precision"
    assert data.preferred(L, "fabric", "precision", "mixed-float16", R("1.9.5")).value == 16


def test_a_good_file_is_read_with_normalised_distribution_names(tmp_path: Path) -> None:
    (tmp_path / "f.toml").write_text(GOOD)
    data = apidata.read_frameworks(tmp_path / "f.toml")
    assert data.frameworks[L].distributions == ("pytorch-lightning",)
    assert data.meaning(L, "trainer", "strategy", "dp", R("1.9")) == "data-parallel"


MALFORMED = [
    (GOOD + 'colour = "red"\n', "[[value]] entry 1: unknown key 'colour'"),
    (GOOD.replace('framework = "lightning"\nowner = "trainer"\nargument', 'framework = "keras"\nowner = "trainer"\nargument'),
     "`framework` has an unknown value 'keras'"),
    (GOOD.replace('since = "1.5"\ndefaults', 'since = "1.x"\ndefaults'), '`since` must be a release like "1.6.4"'),
    (GOOD.replace('until = "2.0"', 'since = "2.0"\nuntil = "1.0"'), "`until` (1.0) is not after `since` (2.0)"),
    (GOOD.replace("value = \"'dp'\"", 'value = "dp("'), "`value` is not a Python literal"),
    (GOOD.replace('argument = "strategy"', 'argument = "stratgy"'), "no [[argument]] trainer.stratgy"),
    (GOOD.replace('owner = "trainer"\nname', 'owner = "trainr"\nname'), "`owner` 'trainr' is neither"),
    (GOOD + GOOD[GOOD.index("[[value]]"):], "value ('lightning', 'trainer', 'strategy', ('str', \"'dp'\")): two entries"),
    (GOOD.replace('since = "1.5"\ndefaults', 'since = "1.5"\nknown_from = "1.4"\ndefaults'), "not both"),
    (GOOD.replace('defaults = { "1.5" = "None" }', 'defaults = { "1.5" = 3 }'), "`defaults` values must be strings"),
    (GOOD + '[[hook]]\nframework = "lightning"\nowner = "trainer"\nnames = ["x"]\ngrad = "off"\nreference = "r"\n',
     "`grad` must be one of disabled"),
    (GOOD + '[[framwork]]\n', "unknown top-level key 'framwork'"),
    (GOOD + _SUBCLASS.replace('library = "lib"\n', ''), "`changed_defaults` belongs to a subclass from another `library`"),
    (GOOD + _SUBCLASS.replace('["strategy"]', '["stratgy"]'),
     "lightning class trainer from lib: `changed_defaults` names 'stratgy', which is no [[argument]] of trainer"),
    (GOOD + _SUBCLASS + _SUBCLASS.replace("lib.MyTrainer", "lib.Other"), "lightning class trainer from lib: listed twice"),
    (GOOD + _CONSTRUCTOR.replace('owner = "trainer"', 'owner = "fabric"'), "`owner` 'fabric' is not a [[class]] role"),
    (GOOD + _CONSTRUCTOR.replace('values_from = "command-line"\n', ''), "`values_from`"),
    (GOOD + _CONSTRUCTOR + _CONSTRUCTOR, "lightning constructor trainer.from_argparse_args: listed twice"),
]


@pytest.mark.parametrize("text, complaint", MALFORMED)
def test_malformed_files_are_rejected_naming_file_and_entry(tmp_path: Path, text: str, complaint: str) -> None:
    path = tmp_path / "frameworks.toml"
    path.write_text(text)
    with pytest.raises(DataError) as error:
        apidata.read_frameworks(path)
    assert str(error.value).startswith("frameworks.toml: ")
    assert complaint in str(error.value)


# -- the releases a project targets ------------------------------------------------------


@pytest.mark.parametrize(
    "line, expected",
    [
        ("pytorch-lightning>=1.9,<2.0", R("1.9")),
        ("PyTorch_Lightning==1.6.4", R("1.6.4")),
        ("pytorch.lightning ~= 1.5.10", R("1.5.10")),
        ("lightning[extra]>=2.1 ; python_version >= '3.9'", R("2.1")),
        ("lightning<2.0", R("2.0").before()),
        ("lightning-fabric>=2.0", None),
        ("lightning", None),
        ("# lightning>=2.0", None),
    ],
)
def test_release_from_requirement_normalises_names(line: str, expected: object) -> None:
    assert release_from_requirement(line, ("lightning", "pytorch-lightning")) == expected


def write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def test_framework_releases_read_from_requirements_oldest_wins(tmp_path: Path) -> None:
    write(tmp_path / "requirements.txt", "lightning>=2.1\nTransformers==4.40.2\ntorch>=2.0\n")
    write(tmp_path / "requirements-dev.txt", "pytorch_lightning>=1.9\n")
    write(tmp_path / "pyproject.toml", '[project]\nname = "p"\ndependencies = ["accelerate>=0.20"]\n[tool.torchlint]\n')
    found = detect_framework_versions(tmp_path)
    assert found == FrameworkReleases((("accelerate", R("0.20")), ("lightning", R("1.9")), ("transformers", R("4.40.2"))))
    settings = SettingsResolver().for_path(tmp_path / "x.py")
    assert settings.target_frameworks().get("lightning") == R("1.9")


def test_framework_settings_win_over_requirements_and_are_validated(tmp_path: Path) -> None:
    write(tmp_path / "requirements.txt", "lightning>=2.1\n")
    write(tmp_path / "torchlint.toml", 'lightning-version = "1.6.4"\naccelerate-version = "0.30"\n')
    settings = SettingsResolver().for_path(tmp_path / "x.py")
    assert settings.target_frameworks() == FrameworkReleases((("accelerate", R("0.30")), ("lightning", R("1.6.4"))))
    assert settings.lint_config().frameworks == settings.target_frameworks()
    write(tmp_path / "torchlint.toml", 'transformers-version = "four"\n')
    with pytest.raises(ConfigError, match="transformers-version: not a release"):
        SettingsResolver().for_path(tmp_path / "x.py")
    write(tmp_path / "torchlint.toml", "lightning-version = 2\n")
    with pytest.raises(ConfigError, match="`lightning-version` must be a string"):
        SettingsResolver().for_path(tmp_path / "x.py")


def test_no_pin_means_newest_and_the_cache_key_follows_the_pins(tmp_path: Path) -> None:
    write(tmp_path / "torchlint.toml", "")
    settings = SettingsResolver().for_path(tmp_path / "x.py")
    assert settings.target_frameworks() == FrameworkReleases()
    unpinned = config_fingerprint(["TL501"], CURRENT_TORCH, {})
    pinned = config_fingerprint(["TL501"], CURRENT_TORCH, {}, frameworks=FrameworkReleases((("lightning", R("1.9")),)))
    assert unpinned != pinned


# -- the command line: --lightning-version, --transformers-version, --accelerate-version -------------

_DP_TRAINER = "import pytorch_lightning as pl\ntrainer = pl.Trainer(gpus=2, strategy='dp')\n"
_CHECKPOINTING = ("from transformers import Trainer, TrainingArguments\n"
                  "args = TrainingArguments(output_dir='o', gradient_checkpointing=True)\n"
                  "Trainer(model=model, args=args).train()\n")


def _check(tmp_path: Path, *flags: str, select: str = "TL501") -> "subprocess.CompletedProcess[str]":
    from conftest import run_in_process

    return run_in_process(["check", "a.py", "--select", select, "--no-cache", "--output-format", "json", *flags],
                          tmp_path, env={"TORCHLINT_OUTPUT_FORMAT": None})


def test_framework_flags_pin_the_release_over_the_requirements_and_the_file(tmp_path: Path) -> None:
    import json

    write(tmp_path / "a.py", _DP_TRAINER)
    write(tmp_path / "requirements.txt", "pytorch-lightning>=2.0\n")
    write(tmp_path / "torchlint.toml", 'lightning-version = "2.1"\n')
    newer = json.loads(_check(tmp_path).stdout)
    assert [item["code"] for item in newer] == ["TL501"] and "no longer" in newer[0]["message"]
    older = json.loads(_check(tmp_path, "--lightning-version", "1.9").stdout)
    assert [item["code"] for item in older] == ["TL501"] and "no longer" not in older[0]["message"]
    write(tmp_path / "a.py", _CHECKPOINTING)
    assert json.loads(_check(tmp_path, select="TL705").stdout) == []  # newest transformers: non-reentrant default
    reentrant = json.loads(_check(tmp_path, "--transformers-version", "4.40", select="TL705").stdout)
    assert [item["code"] for item in reentrant] == ["TL705"]
    assert json.loads(_check(tmp_path, "--transformers-version", "4.34", select="TL705").stdout) == []


def test_framework_flags_show_in_settings_and_bad_values_name_the_flag(tmp_path: Path) -> None:
    write(tmp_path / "a.py", "x = 1\n")
    write(tmp_path / "torchlint.toml", 'accelerate-version = "0.30"\n')
    shown = _check(tmp_path, "--show-settings", "--transformers-version", "4.40").stdout
    assert 'transformers-version = "4.40"  # command line' in shown
    assert f'accelerate-version = "0.30"  # {tmp_path / "torchlint.toml"}' in shown
    assert "lightning-version = (not set)  # default" in shown
    assert "# target frameworks: accelerate 0.30, transformers 4.40" in shown
    for flag in ("--lightning-version", "--transformers-version", "--accelerate-version"):
        bad = _check(tmp_path, flag, "four")
        assert bad.returncode == 2 and f"torchlint: error: {flag}: not a release" in bad.stderr, bad.stderr
        assert "torchlint.toml" not in bad.stderr


# -- more places projects pin releases ---------------------------------------------------------

def _detect(tmp_path: Path) -> FrameworkReleases:
    from torchlint.lint.settings import clear_detection_caches

    clear_detection_caches()
    return detect_framework_versions(tmp_path)


def test_setup_py_install_requires_is_read_without_running_it(tmp_path: Path) -> None:
    from torchlint.lint.settings import clear_detection_caches, detect_torch_version

    write(tmp_path / "setup.py", "import os\nos.system('exit 1')\nfrom setuptools import setup\n"
                                 "setup(name='p', install_requires=['pytorch-lightning>=1.7.0', 'torch>=1.12',"
                                 " 'transformers'])\n")
    assert _detect(tmp_path) == FrameworkReleases((("lightning", R("1.7.0")),))
    clear_detection_caches()
    assert str(detect_torch_version(tmp_path)) == "1.12"
    write(tmp_path / "setup.py", "from setuptools import setup\nREQUIRED = ('accelerate>=0.25.0', 'x')\n"
                                 "setuptools.setup(name='p', install_requires=REQUIRED)\n")
    assert _detect(tmp_path) == FrameworkReleases((("accelerate", R("0.25.0")),))
    for broken in ("setup(install_requires=[\n", "setup(install_requires=read('requirements.in'))\n",
                   "REQ = ['lightning>=2.0']\nREQ = ['lightning>=2.1']\nsetup(install_requires=REQ)\n"):
        write(tmp_path / "setup.py", broken)
        assert _detect(tmp_path) == FrameworkReleases()


def test_setup_cfg_options_install_requires(tmp_path: Path) -> None:
    write(tmp_path / "setup.cfg", "[metadata]\nname = p\n\n[options]\ninstall_requires =\n"
                                  "    # the trainer\n    transformers>=4.38,<5\n    numpy\n")
    assert _detect(tmp_path) == FrameworkReleases((("transformers", R("4.38")),))
    write(tmp_path / "setup.cfg", "[options\ninstall_requires = lightning>=2.0\n")
    assert _detect(tmp_path) == FrameworkReleases()


def test_conda_environment_pip_section_and_conda_packages(tmp_path: Path) -> None:
    write(tmp_path / "environment.yaml", (
        "name: ldm\nchannels:\n  - pytorch\n  - defaults\ndependencies:\n  - python=3.8.5\n"
        "  - conda-forge::accelerate=0.21.0=pyhd8ed1ab_0\n  - pip:\n"
        "    - pytorch-lightning==1.4.2   # pinned by the paper\n    - \"transformers==4.3.1\"\n"
        "    - -e git+https://github.com/CompVis/taming-transformers.git@master#egg=taming-transformers\n"
        "  - cudatoolkit=11.0\nvariables:\n  - lightning=2.5\n"
    ))
    assert _detect(tmp_path) == FrameworkReleases(
        (("accelerate", R("0.21.0")), ("lightning", R("1.4.2")), ("transformers", R("4.3.1"))))
    (tmp_path / "environment.yaml").unlink()
    write(tmp_path / "environment.yml", "dependencies:\n- lightning>=2.1\n- pip:\n  - accelerate>=0.30\nname: x\n")
    assert _detect(tmp_path) == FrameworkReleases((("accelerate", R("0.30")), ("lightning", R("2.1"))))


def test_pyproject_optional_groups_and_poetry_tables(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", (
        '[project]\nname = "p"\ndependencies = ["numpy"]\n'
        '[project.optional-dependencies]\ntrain = ["lightning>=2.2"]\n'
        '[tool.poetry.dependencies]\npython = "^3.9"\ntransformers = "^4.40"\n'
        '[tool.poetry.group.dev.dependencies]\naccelerate = { version = "~0.28" }\n'
    ))
    assert _detect(tmp_path) == FrameworkReleases(
        (("accelerate", R("0.28")), ("lightning", R("2.2")), ("transformers", R("4.40"))))


def test_requirement_files_that_are_not_regular_files_count_as_absent(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "setup.py")
    (tmp_path / "environment.yml").symlink_to(tmp_path / "missing.yml")
    write(tmp_path / "setup.cfg", "[options]\ninstall_requires = lightning>=2.0\n" + "#" * (2 * 1024 * 1024))
    assert _detect(tmp_path) == FrameworkReleases()
