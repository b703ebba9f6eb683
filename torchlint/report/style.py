"""ANSI colour, applied only when the context allows it."""

from __future__ import annotations

BOLD = "1"
RED = "31"
GREEN = "32"
YELLOW = "33"
BLUE = "34"
CYAN = "36"


class Style:
    """Wraps text in ANSI codes when ``enabled``; returns it unchanged otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def paint(self, text: str, *codes: str) -> str:
        """``text`` in the given SGR codes (e.g. ``BOLD, RED``)."""
        if not self.enabled or not text or not codes:
            return text
        return f"\x1b[{';'.join(codes)}m{text}\x1b[0m"

    def code(self, code: str) -> str:
        """A rule code: bold red."""
        return self.paint(code, BOLD, RED)

    def path(self, text: str) -> str:
        """A file location: cyan."""
        return self.paint(text, CYAN)

    def gutter(self, text: str) -> str:
        """Line numbers, ``|`` and ``-->``: bold blue."""
        return self.paint(text, BOLD, BLUE)

    def fix_marker(self, fixable: bool) -> str:
        """``[*]`` with a cyan star, or ``[ ]``."""
        return f"[{self.paint('*', CYAN)}]" if fixable else "[ ]"
