"""Progress on stderr: a bar redrawn in place on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import Optional, TextIO

WIDTH = 24


class Progress:
    """Counts steps (one per child run) and says what is running."""

    def __init__(self, total: int, stream: Optional[TextIO] = None, enabled: bool = True) -> None:
        self.total = total
        self.done = 0
        self.enabled = enabled
        self._stream = stream if stream is not None else sys.stderr
        self._tty = self._stream.isatty()
        self._started = time.monotonic()
        self._drawn = False

    def step(self, text: str) -> None:
        """A new step starts: say what it is."""
        self.done += 1
        if not self.enabled:
            return
        position = f"[{min(self.done, self.total)}/{self.total}]"
        if self._tty:
            filled = WIDTH * (self.done - 1) // max(self.total, 1)
            bar = "#" * filled + "-" * (WIDTH - filled)
            elapsed = time.monotonic() - self._started
            line = f"\r\x1b[K{bar} {position} {elapsed:4.0f}s {text}"
            self._stream.write(line[: 200])
            self._drawn = True
        else:
            self._stream.write(f"torchlint verify {position} {text}\n")
        self._stream.flush()

    def extra(self, text: str) -> None:
        """A step nobody counted in advance (a replay, a run with aligned streams) starts."""
        self.total += 1
        self.step(text)

    def skip(self, steps: int) -> None:
        """Steps that will not run (a case stopped early)."""
        self.total -= steps

    def finish(self) -> None:
        """Clear the bar before the report is printed."""
        if self.enabled and self._tty and self._drawn:
            self._stream.write("\r\x1b[K")
            self._stream.flush()
