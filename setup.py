"""The package list, computed: every rule package in ``rules/`` (a rule with
verification files is ``rules/<name>/``) is installed as ``torchlint.rules.<name>``,
so adding a rule needs no edit here or in pyproject.toml."""

from pathlib import Path

from setuptools import setup

_CORE = ["torchlint", "torchlint.analysis", "torchlint.data", "torchlint.source", "torchlint.interfaces",
         "torchlint.jobscript", "torchlint.lint", "torchlint.report", "torchlint.ruleapi", "torchlint.verify",
         "torchlint.rules"]


def _rule_packages():
    root = Path(__file__).resolve().parent / "rules"
    return sorted(
        "torchlint.rules." + ".".join(init.parent.relative_to(root).parts)
        for init in root.glob("**/__init__.py")
        if init.parent != root and "__pycache__" not in init.parts
    )


setup(packages=_CORE + _rule_packages())
