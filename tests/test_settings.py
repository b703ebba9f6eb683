"""Configuration: discovery, validation, selection, torch version."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Tuple

import pytest
from hostile_support import deep_folders, deny

from torchlint.ruleapi.registry import all_rules
from torchlint.ruleapi.rule import CURRENT_TORCH, TorchVersion
from torchlint.lint.settings import (
    ConfigError,
    Overrides,
    Settings,
    SettingsResolver,
    detect_torch_version,
    load_config_file,
    version_from_requirement,
)


def codes(settings: Settings, path: str = "a.py") -> Tuple[str, ...]:
    return tuple(rule.code for rule in settings.enabled_rules(Path(path)))


def test_default_selection_is_every_default_rule() -> None:
    assert codes(Settings()) == tuple(r.code for r in all_rules() if r.default_enabled)


def test_select_by_code_prefix_name_and_all() -> None:
    assert codes(Settings(select=("TL501",))) == ("TL501",)
    assert codes(Settings(select=("data-parallel",))) == ("TL501",)
    prefixed = tuple(r.code for r in all_rules() if r.code.startswith("TL5"))
    assert "TL501" in prefixed and codes(Settings(select=("TL5",))) == prefixed
    assert codes(Settings(select=("ALL",))) == tuple(r.code for r in all_rules())


def test_more_specific_selector_wins() -> None:
    assert "TL501" not in codes(Settings(select=("ALL",), ignore=("TL501",)))
    assert codes(Settings(select=("TL501",), ignore=("TL5",))) == ("TL501",)
    assert codes(Settings(select=("TL5",), ignore=("TL5",))) == ()


def test_unknown_selector_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="TL999"):
        Settings(select=("TL999",))


def test_unknown_selector_names_the_option_and_the_closest_rule(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^--select: unknown rule selector `TL1O1` \(did you mean `TL101`\?\)$"):
        Overrides(select=("TL1O1",))
    with pytest.raises(ConfigError, match=r"--ignore: .*`dataparallel`.*did you mean `data-parallel`"):
        Overrides(ignore=("dataparallel",))
    config = tmp_path / "pyproject.toml"
    with pytest.raises(ConfigError, match=r"pyproject.toml: extend-select: unknown rule selector `XYZ`$"):
        Settings(extend_select=("XYZ",), config_file=config)


def test_cli_selector_error_is_not_blamed_on_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL101"]\n', encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        SettingsResolver(Overrides(select=("TL1O1",))).for_path(tmp_path / "a.py")
    assert str(raised.value).startswith("--select:")


def test_rule_names_accept_underscores() -> None:
    assert codes(Settings(select=("data_parallel",))) == ("TL501",)
    assert codes(Settings(select=("ALL",), ignore=("Data_Parallel",))) == tuple(
        r.code for r in all_rules() if r.code != "TL501"
    )


def test_per_file_ignores(tmp_path: Path) -> None:
    settings = Settings(select=("TL501",), per_file_ignores=(("tests/*.py", ("TL501",)),), root=tmp_path)
    assert codes(settings, str(tmp_path / "tests" / "t.py")) == ()
    assert codes(settings, str(tmp_path / "src" / "t.py")) == ("TL501",)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_pyproject_table_is_read(tmp_path: Path) -> None:
    config = write(tmp_path / "pyproject.toml", '[tool.torchlint]\nselect = ["TL501"]\ntorch-version = "1.13"\n')
    settings = load_config_file(config)
    assert codes(settings) == ("TL501",)
    assert settings.target_torch() == TorchVersion(1, 13)


@pytest.mark.parametrize(
    "body, fragment",
    [
        ('[tool.torchlint]\nselectt = ["TL5"]\n', "selectt"),
        ('[tool.torchlint]\nselect = ["TL777"]\n', "TL777"),
        ('[tool.torchlint]\nselect = "TL5"\n', "select"),
        ("[tool.torchlint\nselect = 1\n", "invalid TOML"),
        ('[tool.torchlint]\ntorch-version = "new"\n', "torch-version"),
        ('[tool.torchlint.data-parallel]\nnope = 1\n', "nope"),
        ('[tool.torchlint.no-such-rule]\nx = 1\n', "no-such-rule"),
    ],
)
def test_bad_config_names_file_and_key(tmp_path: Path, body: str, fragment: str) -> None:
    config = write(tmp_path / "pyproject.toml", body)
    with pytest.raises(ConfigError) as error:
        load_config_file(config)
    assert str(config.resolve()) in str(error.value) or str(config) in str(error.value)
    assert fragment in str(error.value)


def test_closest_config_wins_without_merging(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.torchlint]\nselect = ["TL501"]\n')
    write(tmp_path / "sub" / "torchlint.toml", 'ignore = ["TL501"]\n')
    write(tmp_path / "other" / "pyproject.toml", "[project]\nname = 'x'\n")
    resolver = SettingsResolver()
    assert codes(resolver.for_path(tmp_path / "a.py")) == ("TL501",)
    sub = resolver.for_path(tmp_path / "sub" / "b.py")
    assert "TL501" not in codes(sub) and len(codes(sub)) >= 1
    # A pyproject without [tool.torchlint] is skipped on the way up.
    assert codes(resolver.for_path(tmp_path / "other" / "c.py")) == ("TL501",)


def test_cli_overrides_apply_on_top(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.torchlint]\nselect = ["TL501"]\n')
    resolver = SettingsResolver(Overrides(ignore=("TL501",)))
    assert codes(resolver.for_path(tmp_path / "a.py")) == ()


@pytest.mark.parametrize(
    "line, expected",
    [
        ("torch>=1.12", TorchVersion(1, 12)),
        ("torch==1.13.1", TorchVersion(1, 13)),
        ("torch~=2.1", TorchVersion(2, 1)),
        ("torch<2.0", TorchVersion(1, 13)),
        ("torch>=1.10,<2.2", TorchVersion(1, 10)),
        ("torch[cuda] >= 2.3 ; python_version > '3.8'", TorchVersion(2, 3)),
        ("torch", None),
        ("torchvision>=0.10", None),
        ("# torch>=1.0", None),
    ],
)
def test_version_from_requirement(line: str, expected: object) -> None:
    assert version_from_requirement(line) == expected


def test_torch_version_read_from_project_dependencies(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[project]\nname = "p"\ndependencies = ["torch>=1.12", "numpy"]\n[tool.torchlint]\n')
    settings = SettingsResolver().for_path(tmp_path / "x.py")
    assert settings.target_torch() == TorchVersion(1, 12)


def test_torch_version_read_from_requirements(tmp_path: Path) -> None:
    write(tmp_path / "requirements-train.txt", "numpy\ntorch==1.11.0\n")
    write(tmp_path / "torchlint.toml", "")
    assert detect_torch_version(tmp_path) == TorchVersion(1, 11)
    assert SettingsResolver().for_path(tmp_path / "x.py").target_torch() == TorchVersion(1, 11)


def test_torch_version_defaults_to_current(tmp_path: Path) -> None:
    write(tmp_path / "torchlint.toml", "")
    assert SettingsResolver().for_path(tmp_path / "x.py").target_torch() == CURRENT_TORCH


def test_per_file_ignores_and_excludes_share_one_matcher(tmp_path: Path) -> None:
    # A leading dot is part of the name, not a "./" prefix.
    settings = Settings(select=("TL501",), per_file_ignores=((".ci/*.py", ("TL501",)),),
                        extend_exclude=("./gen/",), root=tmp_path)
    assert codes(settings, str(tmp_path / ".ci" / "run.py")) == ()
    assert codes(settings, str(tmp_path / "ci" / "run.py")) == ("TL501",)
    assert settings.is_excluded(tmp_path / "gen" / "deep" / "a.py")
    assert not settings.is_excluded(tmp_path / "src" / "gen.py")


# -- hostile configuration (issue 9) ----------------------------------------------


@pytest.mark.parametrize(
    "body, fragments",
    [
        (b'[project]\nname = "caf\xe9"\n', ("not UTF-8", "0xe9")),
        (b'[tool]\ntorchlint = "x"\n', ("`tool.torchlint` must be a table",)),
        (b'tool = 3\n', ("`tool` must be a table",)),
        (b"[tool.torchlint.TL201]\nnum-workers = -3\n", ("num-workers", "TL201", "dataloader-without-workers", "at least 1")),
        (b"[tool.torchlint.dataloader-without-workers]\nnum-workers = 0\n", ("num-workers", "at least 1")),
    ],
    ids=["not-utf8", "tool-torchlint-string", "tool-not-table", "negative-workers", "zero-workers"],
)
def test_hostile_config_found_by_search_is_a_config_error(tmp_path: Path, body: bytes,
                                                          fragments: Tuple[str, ...]) -> None:
    (tmp_path / "pyproject.toml").write_bytes(body)
    with pytest.raises(ConfigError) as error:
        SettingsResolver().for_path(tmp_path / "a.py")
    message = str(error.value)
    assert "\n" not in message and str(tmp_path / "pyproject.toml") in message
    for fragment in fragments:
        assert fragment in message


def test_option_minimum_accepts_values_in_range(tmp_path: Path) -> None:
    config = write(tmp_path / "pyproject.toml", "[tool.torchlint.TL201]\nnum-workers = 1\n")
    assert load_config_file(config).rule_options == {"TL201": {"num-workers": 1}}


def test_unsearchable_folder_is_no_config_plus_a_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "pyproject.toml", '[tool.torchlint]\nselect = ["TL501"]\n')
    (tmp_path / "locked").mkdir()
    deny(monkeypatch, tmp_path / "locked")
    resolver = SettingsResolver()
    settings = resolver.for_path(tmp_path / "locked")
    assert settings.config_file == tmp_path / "pyproject.toml"  # the search went on upwards
    [(where, why)] = resolver.problems
    assert where == tmp_path / "locked" and "Permission denied" in why


def test_unreadable_config_found_by_search_is_skipped_with_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "pyproject.toml", '[tool.torchlint]\nselect = ["TL501"]\n')
    unreadable = write(tmp_path / "sub" / ".torchlint.toml", 'select = ["TL2"]\n')
    real_open = os.open

    def open_(path: Any, *args: Any, **kwargs: Any) -> int:
        if os.fspath(path) == str(unreadable):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)
    resolver = SettingsResolver()
    assert codes(resolver.for_path(tmp_path / "sub" / "a.py")) == ("TL501",)
    [(where, why)] = resolver.problems
    assert where == unreadable and "Permission denied" in why
    # Named with --config, the same file is a configuration error (exit 2).
    with pytest.raises(ConfigError, match="Permission denied"):
        SettingsResolver(config_file=unreadable)


def test_settings_search_has_no_recursion_limit(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.torchlint]\nselect = ["TL501"]\n')
    with deep_folders(tmp_path, 1100) as deep:
        assert SettingsResolver().for_path(deep / "x.py").config_file == tmp_path / "pyproject.toml"


def test_config_that_is_a_symlink_loop_is_skipped_with_a_problem(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.torchlint]\nselect = ["TL501"]\n')
    (tmp_path / "sub").mkdir()
    loop = tmp_path / "sub" / ".torchlint.toml"
    loop.symlink_to(loop)
    resolver = SettingsResolver()
    assert codes(resolver.for_path(tmp_path / "sub" / "a.py")) == ("TL501",)
    [(where, why)] = resolver.problems
    assert where == loop and why.startswith("cannot read configuration file: Too many levels of symbolic links")


def test_config_files_may_only_ask_sbatch_for_resources(tmp_path: Path) -> None:
    # Issue 25 item 4: a cloned project's pyproject.toml must not choose sbatch's output file,
    # environment or script; resource options pass, in every spelling sbatch reads.
    config = tmp_path / "pyproject.toml"
    allowed = ["--partition=gpu", "--gres=gpu:1", "--time", "00:30:00", "-p", "debug", "-c4", "--mem=8G",
               "--account=proj", "--qos=high", "--constraint=a100", "-G", "2"]
    config.write_text("[tool.torchlint.verify]\nsbatch-args = [" + ", ".join(f'"{a}"' for a in allowed) + "]\n")
    assert load_config_file(config).sbatch_args == tuple(allowed)
    for hostile in ("--output=/home/victim/.bashrc", "--export=ALL,LD_PRELOAD=/tmp/evil.so", "--chdir=/",
                    "-o", "--wrap=rm -rf ~", "-e/tmp/x", "--get-user-env", "payload"):
        config.write_text(f'[tool.torchlint.verify]\nsbatch-args = ["--partition=gpu", "{hostile}"]\n')
        with pytest.raises(ConfigError, match="is not a resource option") as raised:
            load_config_file(config)
        assert hostile in str(raised.value) and "--sbatch-arg" in str(raised.value)
