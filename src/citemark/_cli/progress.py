"""The progress bar of the `citemark` command: rows, MB/s and ETA on standard error.

Shown only when standard error is a terminal, and never with --quiet, nor when the results
themselves go to that terminal (the bar would be drawn through them).  Drawn with `rich` when
it is installed (`pip install citemark[cli]`), else as one plain line rewritten in place.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, TextIO

from .common import report


class Progress:
    """`advance(rows, nbytes)` after each chunk; use as a context manager."""

    def __init__(self, total_bytes: int | None, *, enabled: bool, stream: TextIO | None = None):
        self.total = total_bytes
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.rows = 0
        self.bytes = 0
        self._bar: Any = None
        self._task: Any = None
        self._began = time.monotonic()
        self._drawn = 0.0

    def __enter__(self) -> Progress:
        if not self.enabled:
            return self
        try:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                TaskProgressColumn,
                TextColumn,
            )
            from rich.progress import Progress as Bar
        except ImportError:
            return self
        console = Console(file=self.stream)
        # Rate and ETA from the bytes done since the start: rich's own speed column needs
        # several updates in its window and shows "?" on a run of a few chunks.
        self._bar = Bar(
            TextColumn("{task.fields[rows]:>12,} rows"),
            BarColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("ETA {task.fields[eta]}"),
            console=console,
            redirect_stdout=False,
            redirect_stderr=False,
            transient=False,
        )
        self._bar.start()
        self._task = self._bar.add_task("citemark", total=self.total, rows=0, rate="", eta="")
        return self

    def advance(self, rows: int, nbytes: int) -> None:
        self.rows += rows
        self.bytes += nbytes
        if not self.enabled:
            return
        now = time.monotonic()
        if self._bar is not None:
            rate, eta = self._rate(now)
            self._bar.update(self._task, advance=nbytes, rows=self.rows, rate=rate, eta=eta)
            return
        if now - self._drawn >= 0.2:
            self._drawn = now
            self._plain(now)

    def say(self, message: str) -> None:
        """A line of the run's own (a skipped row, why it stopped) on standard error: above
        the bar while one is drawn, so the two never share a line."""
        if self._bar is not None and self._bar.live.is_started:
            self._bar.console.print(message, markup=False, highlight=False, soft_wrap=True)
            return
        if self.enabled and self._drawn:
            self.stream.write("\r\x1b[K")  # the plain line drawn so far goes; it is drawn again
            self._drawn = 0.0
        report(message)

    def _rate(self, now: float) -> tuple[str, str]:
        rate = self.bytes / max(now - self._began, 1e-6)
        eta = "?"
        if self.total is not None and rate > 0:
            eta = _clock(max(0, self.total - self.bytes) / rate)
        return f"{rate / 1e6:7.1f} MB/s", eta

    def _plain(self, now: float) -> None:
        rate, eta = self._rate(now)
        line = f"{self.rows:>12,} rows  {rate}"
        if self.total:
            line += f"  {100 * min(self.bytes, self.total) / self.total:5.1f}%  ETA {eta}"
        self.stream.write("\r" + line)
        self.stream.flush()

    def __exit__(self, *exc: object) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.stop()
        else:
            self._plain(time.monotonic())
            self.stream.write("\n")
            self.stream.flush()


def _clock(seconds: float) -> str:
    seconds = int(max(0, seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def wanted(quiet: bool, output_is_stdout: bool) -> bool:
    """Draw a bar? Only on a terminal stderr, not --quiet, not over results on that terminal."""
    if quiet or os.environ.get("TERM") == "dumb":
        return False
    try:
        if not sys.stderr.isatty():
            return False
        return not (output_is_stdout and sys.stdout.isatty())
    except (AttributeError, ValueError):
        return False
