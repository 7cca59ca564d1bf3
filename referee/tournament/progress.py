"""Progress of a long run on stderr: games done, rate and ETA, at most a few times a second."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """A one-line bar on a terminal (redrawn in place); a line every few seconds elsewhere (CI, logs)."""

    def __init__(self, total: int, done: int = 0, stream: TextIO | None = None, *,
                 interval: float | None = None) -> None:
        self.stream = stream or sys.stderr
        self.is_tty = self.stream.isatty()
        self.interval = interval if interval is not None else (0.2 if self.is_tty else 5.0)
        self.total = total
        self.done = done
        self._start_done = done
        self._start = time.monotonic()
        self._last_draw = 0.0
        self._drawn_done = -1

    def advance(self, games: int = 1) -> None:
        self.done += games
        now = time.monotonic()
        if now - self._last_draw >= self.interval or self.done >= self.total:
            self._draw(now)

    def line(self, now: float | None = None) -> str:
        elapsed = (now or time.monotonic()) - self._start
        played = self.done - self._start_done
        rate = played / elapsed if elapsed > 0 else 0.0
        left = self.total - self.done
        eta = _clock(left / rate) if rate > 0 else "?"
        width = 24
        filled = int(width * self.done / self.total) if self.total else width
        bar = "#" * filled + "-" * (width - filled)
        percent = 100 * self.done / self.total if self.total else 100.0
        return f"[{bar}] {self.done}/{self.total} games {percent:3.0f}%  {rate:,.1f} games/s  ETA {eta}"

    def finish(self) -> None:
        """Draw the final state (unless just drawn) and end the line."""
        if self.done == self._start_done:
            return  # nothing was played: no bar at all
        if self._drawn_done != self.done:
            self._draw(time.monotonic())
        if self.is_tty:
            self.stream.write("\n")
            self.stream.flush()

    def note(self, text: str) -> None:
        """A line of its own (a bar being drawn is ended first), shown at once."""
        if self.is_tty and self._drawn_done >= 0:
            self.stream.write("\n")
        self.stream.write(text + "\n")
        self.stream.flush()

    def _draw(self, now: float) -> None:
        self._last_draw = now
        self._drawn_done = self.done
        if self.is_tty:
            self.stream.write("\r" + self.line(now))
        else:
            self.stream.write(self.line(now) + "\n")
        self.stream.flush()


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"
