"""Reporters: turn sorted diagnostics into the text of one output format.

Each format is one module with ``render(diagnostics, context) -> str``;
:func:`render` picks one by name.  Reporters never read files or parse code:
everything they show comes from the diagnostics and ``context.sources``.
"""

from __future__ import annotations

import importlib
from typing import Callable, Sequence

from torchlint.model import Diagnostic
from torchlint.report.context import ReportContext
from torchlint.report.statistics import render_statistics

FORMATS = ("full", "concise", "json", "github", "gitlab", "sarif")

Renderer = Callable[[Sequence[Diagnostic], ReportContext], str]


def renderer(fmt: str) -> Renderer:
    """The ``render`` function of format ``fmt``.  Each reporter module is
    imported when its format is used, so a run pays only for the one it prints."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")
    module = importlib.import_module(f"{__name__}.{fmt}")
    function: Renderer = module.render
    return function


def render(fmt: str, diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """The whole output of format ``fmt`` (one of FORMATS); ends in a newline when not empty."""
    return renderer(fmt)(diagnostics, context)


__all__ = ["FORMATS", "ReportContext", "render", "render_statistics"]
