"""torchlint: a static linter with autofixes for PyTorch training code.

The Python API::

    import torchlint
    diagnostics = torchlint.check_source(code, path="train.py")
    result = torchlint.fix_source(code, path="train.py", unsafe=True)
    print(result.source)
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

__version__ = "0.1.0"

from torchlint.fixer import FixResult, fix_text
from torchlint.model import Applicability, Diagnostic, Edit, Fix, Position
from torchlint.settings import Settings


def check_source(
    source: str, path: str = "<stdin>", settings: Optional[Settings] = None
) -> List[Diagnostic]:
    """Lint Python source text; returns sorted diagnostics."""
    from torchlint.engine import lint_source

    settings = settings or Settings()
    return lint_source(source, path, settings.lint_config(Path(path)))


def fix_source(
    source: str,
    path: str = "<stdin>",
    settings: Optional[Settings] = None,
    *,
    unsafe: bool = False,
) -> FixResult:
    """Apply fixes (safe ones, or all with ``unsafe=True``) until stable."""
    settings = settings or Settings()
    return fix_text(source, path, settings.lint_config(Path(path)), unsafe=unsafe)


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
