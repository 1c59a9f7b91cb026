"""A progress bar on stderr: redrawn in place on a terminal, a line every 10% otherwise (logs)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

WIDTH = 30


class ProgressBar:
    def __init__(self, label: str, total: int, stream: TextIO | None = None) -> None:
        self.label = label
        self.total = max(total, 1)
        self.done = 0
        self._stream = stream if stream is not None else sys.stderr
        self._tty = self._stream.isatty()
        self._started = time.monotonic()
        self._last_decile = -1
        self._draw()

    def advance(self, n: int = 1) -> None:
        self.done = min(self.done + n, self.total)
        self._draw()

    def close(self) -> None:
        self.done = self.total
        self._draw()
        if self._tty:
            self._stream.write("\n")
            self._stream.flush()

    def render(self) -> str:
        filled = WIDTH * self.done // self.total
        elapsed = time.monotonic() - self._started
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        return (
            f"{self.label} [{'#' * filled}{'.' * (WIDTH - filled)}] {self.done}/{self.total} "
            f"{elapsed:.0f}s elapsed, ~{eta:.0f}s left"
        )

    def _draw(self) -> None:
        if self._tty:
            self._stream.write("\r" + self.render())
            self._stream.flush()
            return
        decile = 10 * self.done // self.total
        if decile != self._last_decile:
            self._last_decile = decile
            self._stream.write(self.render() + "\n")
            self._stream.flush()
