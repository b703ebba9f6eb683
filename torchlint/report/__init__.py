"""Reporters: turn sorted diagnostics into the text of one output format.

Each format is one module with ``render(diagnostics, context) -> str``;
:func:`render` picks one by name.  Reporters never read files or parse code:
everything they show comes from the diagnostics and ``context.sources``.
"""

from __future__ import annotations

from typing import Callable, Dict, Sequence

from torchlint.model import Diagnostic
from torchlint.report import concise, full, github, json, sarif
from torchlint.report.context import ReportContext
from torchlint.report.statistics import render_statistics

FORMATS = ("full", "concise", "json", "github", "sarif")

Renderer = Callable[[Sequence[Diagnostic], ReportContext], str]

_RENDERERS: Dict[str, Renderer] = {
    "full": full.render,
    "concise": concise.render,
    "json": json.render,
    "github": github.render,
    "sarif": sarif.render,
}


def render(fmt: str, diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """The whole output of format ``fmt`` (one of FORMATS); ends in a newline when not empty."""
    try:
        renderer = _RENDERERS[fmt]
    except KeyError:
        raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}") from None
    return renderer(diagnostics, context)


__all__ = ["FORMATS", "ReportContext", "render", "render_statistics"]
