"""A plain progress bar for long command-line operations.

The bar is drawn on a terminal only, and only for work of 10^5 steps or more:
shorter work finishes before a bar would help, and a bar in a log file or a
pipe is noise. It redraws in place with a carriage return, at most ten times
a second, and erases itself when the work is done.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Final, TextIO

from gym_goldens.present.text import escape

__all__ = ["PROGRESS_THRESHOLD", "Progress", "is_terminal"]

PROGRESS_THRESHOLD: Final = 100_000
"""Work of at least this many steps gets a bar (on a terminal)."""

_WIDTH: Final = 30
_INTERVAL: Final = 0.1


class Progress:
    """A carriage-return progress bar on ``stream`` (stderr by default).

    Args:
        total: How many units the work has.
        label: What is being done, shown before the bar.
        unit: The name of a unit, shown after the counts.
        stream: Where to draw; the bar is drawn only if it is a terminal.
        threshold: Work smaller than this gets no bar.

    Example:
        >>> import io
        >>> with Progress(10, "reading", stream=io.StringIO()) as bar:
        ...     bar.advance(10)
        >>> bar.enabled
        False
    """

    def __init__(
        self,
        total: int,
        label: str,
        *,
        unit: str = "steps",
        stream: TextIO | None = None,
        threshold: int = PROGRESS_THRESHOLD,
    ) -> None:
        self.total = max(total, 0)
        self.label = escape(label)  # an env id or a file name: no escapes of its own
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.enabled = self.total >= threshold and is_terminal(self.stream)
        self._last_draw = -_INTERVAL
        self._drawn = False

    def advance(self, count: int = 1) -> None:
        """Count ``count`` more units done; redraw if it is time to."""
        self.done += count
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last_draw >= _INTERVAL:
            self._last_draw = now
            self._draw()

    def close(self) -> None:
        """Erase the bar, leaving the line free for what comes next."""
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _draw(self) -> None:
        fraction = min(self.done / self.total, 1.0) if self.total else 1.0
        filled = int(fraction * _WIDTH)
        bar = "#" * filled + "-" * (_WIDTH - filled)
        self.stream.write(
            f"\r{self.label} [{bar}] {fraction:4.0%} {self.done:,}/{self.total:,} {self.unit}"
        )
        self.stream.flush()
        self._drawn = True


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (a closed or unusual stream is not)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False
