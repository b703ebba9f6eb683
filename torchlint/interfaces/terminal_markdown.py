"""Markdown rule pages rendered for a terminal (``torchlint explain``).

Only what rule pages use: ``#``/``##`` headings, fenced code blocks, lists,
tables and paragraphs.  Headings lose their ``#`` marks and are underlined;
code blocks lose their fences and are indented (dim, when colour is on).
Everything else is kept as written, so no information is lost.
"""

from __future__ import annotations

from typing import List

from torchlint.report.style import BOLD, CYAN, Style

_FENCE = "```"
_UNDERLINE = "4"
_CODE_INDENT = "    "


def render_markdown(text: str, color: bool) -> str:
    """``text`` as a terminal page; ANSI styles only when ``color`` is set."""
    style = Style(color)
    out: List[str] = []
    in_code = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(_FENCE):
            in_code = not in_code
            continue
        if in_code:
            out.append(_CODE_INDENT + style.paint(line, CYAN) if line else "")
            continue
        level = len(line) - len(line.lstrip("#"))
        if 1 <= level <= 6 and line[level:level + 1] == " ":
            title = line[level:].strip()
            if color:
                out.append(style.paint(title, BOLD, _UNDERLINE) if level == 1 else style.paint(title, BOLD))
            else:
                out += [title, ("=" if level == 1 else "-") * len(title)]
            continue
        out.append(line)
    return "\n".join(out).rstrip() + "\n"
