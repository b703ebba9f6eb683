"""torchlint: a static linter with autofixes for PyTorch training code.

The Python API::

    import torchlint
    diagnostics = torchlint.check_source(code, path="train.py")
    result = torchlint.fix_source(code, path="train.py", unsafe=True)
    print(result.source)
"""

from __future__ import annotations

from torchlint.version import __version__ as __version__

TYPE_CHECKING = False  # neither typing nor pathlib on a replay's path (mypy reads this name as typing's)
if TYPE_CHECKING:
    from typing import Any, List, Optional

    from torchlint.model import Applicability, Diagnostic, Edit, Fix, Position
    from torchlint.analysis.index import ProjectIndex
    from torchlint.lint.fixer import FixResult
    from torchlint.lint.settings import Settings


def check_source(
    source: str, path: str = "<stdin>", settings: Optional[Settings] = None,
    project: "Optional[ProjectIndex]" = None,
) -> List[Diagnostic]:
    """Lint Python source text; returns sorted diagnostics.  ``project``: the
    cross-file index of the run the text belongs to
    (``torchlint.analysis.queries.build``), none by default."""
    from dataclasses import replace
    from pathlib import Path

    from torchlint.lint.engine import lint_source
    from torchlint.lint.settings import Settings

    settings = settings or Settings()
    config = settings.lint_config(Path(path))
    return lint_source(source, path, config if project is None else replace(config, project=project))


def fix_source(
    source: str,
    path: str = "<stdin>",
    settings: Optional[Settings] = None,
    *,
    unsafe: bool = False,
    project: "Optional[ProjectIndex]" = None,
) -> FixResult:
    """Apply fixes (safe ones, or all with ``unsafe=True``) until stable."""
    from dataclasses import replace
    from pathlib import Path

    from torchlint.lint.fixer import fix_text
    from torchlint.lint.settings import Settings

    settings = settings or Settings()
    config = settings.lint_config(Path(path))
    return fix_text(source, path, config if project is None else replace(config, project=project), unsafe=unsafe)


_MODEL = ("Applicability", "Diagnostic", "Edit", "Fix", "Position")


def __getattr__(name: str) -> Any:
    """Import ``FixResult`` and ``Settings`` on first use: they pull in libcst,
    which plugins loaded by other tools (flake8) should not pay for; and the
    model's types too: the replay of an unchanged command-line run imports
    the package without them."""
    if name in _MODEL:
        import torchlint.model

        return getattr(torchlint.model, name)
    if name == "FixResult":
        from torchlint.lint.fixer import FixResult

        return FixResult
    if name == "Settings":
        from torchlint.lint.settings import Settings

        return Settings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Applicability",
    "Diagnostic",
    "Edit",
    "Fix",
    "FixResult",
    "Position",
    "Settings",
    "__version__",
    "check_source",
    "fix_source",
]
