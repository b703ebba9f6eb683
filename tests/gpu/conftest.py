"""tests/gpu runs only where torch sees a CUDA GPU; elsewhere every test here is skipped.

None of these tests has run yet: no GPU has been available to this project.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    if _cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU: torch is missing or torch.cuda.is_available() is False")
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(skip)
