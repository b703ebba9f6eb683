"""Framework facts as data (``torchlint/data/frameworks.toml``) and the
framework releases a project targets (``lightning-version`` and the like,
or its requirements)."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchlint.data import apidata
from torchlint.data.apidata import DataError, Framework
from torchlint.lint.cache import config_fingerprint
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
