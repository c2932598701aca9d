"""The limits of what a recording file may hold, so that reading any file is bounded.

Goldens arrive in pull requests and are read on shared CI runners, so no file
may make a reader take unbounded time or memory. The limits sit far above
what a real recording holds; ``docs/guarantees.md`` lists them.

- A line (one record) is at most :data:`MAX_LINE_BYTES`; a longer one is
  refused after reading at most that much of it, and is never written: the
  recorder refuses a record that long, as one nested deeper than
  :data:`MAX_NESTING` levels.
- A compressed file (``.jsonl.gz``) may expand to at most
  :data:`DEFAULT_MAX_DECOMPRESSED_SIZE` when read, unless the reader is given
  another limit (ini ``goldens_max_decompressed_size``, ``gym-goldens
  --max-decompressed-size``). A plain file is bounded by its size on disk.
- A frame (a PNG file of a recording) holds at most :data:`MAX_FRAME_PIXELS`
  pixels; a PNG that claims more is refused before it is decoded.
- What is read together (the compressed files of one read, the frames of one
  recording in a comparison, the frames one command exports) spends one
  :class:`DecompressionBudget`, so that many small bombs cannot add up.

Sizes are written for people as ``1 GiB``, ``512 MiB`` or a number of bytes
(:func:`parse_size`, :func:`format_size`). This module imports nothing
heavy: the pytest plugin reads the ini value with it at start-up.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

__all__ = [
    "COMPRESSED_FILES_REFUSAL",
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "MAX_FRAME_PIXELS",
    "MAX_LINE_BYTES",
    "MAX_NESTING",
    "RAISE_THE_LIMIT",
    "DecompressionBudget",
    "format_size",
    "parse_size",
]

_UNITS: Final = {"": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}
_SIZE: Final = re.compile(r"\s*(\d+)\s*([a-zA-Z]*)\s*")

MAX_LINE_BYTES: Final = 16 * _UNITS["mib"]
"""The longest line a reader accepts: records are a few kB with the default
array summaries, so a longer line is damage, and is refused before it fills memory."""

MAX_NESTING: Final = 254
"""The deepest a record nests, the record itself counting as one level: what
orjson writes. The recorder refuses a value nested deeper (or holding itself)
when it is recorded, naming its field."""

DEFAULT_MAX_DECOMPRESSED_SIZE: Final = _UNITS["gib"]
"""What a compressed recording may expand to by default: 1 GiB. A real golden
is a few MB; a few MB of gzip can hold 1000 times more."""

MAX_FRAME_PIXELS: Final = 4096 * 4096
"""The most pixels a frame may have: 16,777,216 (4096 x 4096, 64 MiB as RGBA). A
4K render (3840 x 2160) fits; a PNG claiming more is refused before it is
decoded, below Pillow's own limit (``Image.MAX_IMAGE_PIXELS``, about 89 million)."""


def parse_size(text: str) -> int:
    """A size in bytes, from ``"1073741824"``, ``"1 GiB"``, ``"512MiB"`` or ``"64 KiB"``.

    Example:
        >>> parse_size("2 GiB")
        2147483648

    Raises:
        ValueError: Not a whole number of bytes, KiB, MiB, GiB or TiB.
    """
    match = _SIZE.fullmatch(text)
    unit = _UNITS.get(match.group(2).lower()) if match else None
    if match is None or unit is None:
        raise ValueError(
            f"expected a size such as 1073741824, 512 MiB or 2 GiB (KiB, MiB, GiB, TiB), "
            f"got {text!r}"
        )
    return int(match.group(1)) * unit


def format_size(size: int) -> str:
    """A size as a person reads it: the largest unit that divides it.

    Example:
        >>> format_size(1 << 30), format_size(1536 * 1024), format_size(1000)
        ('1 GiB', '1536 KiB', '1,000 bytes')
    """
    for name in ("TiB", "GiB", "MiB", "KiB"):
        unit = _UNITS[name.lower()]
        if size and size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size:,} bytes"


RAISE_THE_LIMIT: Final = (
    "If it is a real recording, raise the limit: ini goldens_max_decompressed_size (pytest), "
    "or --max-decompressed-size (gym-goldens)"
)
"""What a refusal of the budget tells a user whose recording is real."""

COMPRESSED_FILES_REFUSAL: Final = (
    "decompresses to more than {limit}, the limit for a compressed recording{shared}; a real "
    "recording is far smaller, so this file is damaged or made to exhaust the machine. "
    + RAISE_THE_LIMIT
)
"""The refusal of the reader's budget, for the compressed files of one read."""


class DecompressionBudget:
    """What the files read together may still expand to, in bytes.

    One budget is shared by what is read together, so that many small bombs
    cannot add up. ``refusal`` is the message past the limit: ``{limit}`` is
    the limit written for people, ``{shared}`` says that the files before this
    one counted too.

    Example:
        >>> budget = DecompressionBudget(100)
        >>> budget.spend(60, Path("a.png"))
        >>> budget.left
        40
    """

    __slots__ = ("files", "left", "limit", "refusal")

    def __init__(self, limit: int, refusal: str = COMPRESSED_FILES_REFUSAL) -> None:
        self.limit = self.left = limit
        self.refusal = refusal
        self.files = 0  # the files read on it so far

    def spend(self, size: int, path: Path) -> None:
        """Count ``size`` decompressed bytes of ``path``; refuse them past the limit."""
        self.left -= size
        if self.left < 0:
            shared = " (with the files before it)" if self.files > 1 else ""
            message = self.refusal.format(limit=format_size(self.limit), shared=shared)
            # Imported here: pytest loads this module at start-up, for the ini value, and
            # each module it loads then costs (tests/test_startup.py).
            from gym_goldens.errors import GoldenFormatError

            raise GoldenFormatError(path, message)
