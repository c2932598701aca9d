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

Sizes are written for people as ``1 GiB``, ``512 MiB`` or a number of bytes
(:func:`parse_size`, :func:`format_size`). This module imports nothing
heavy: the pytest plugin reads the ini value with it at start-up.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "MAX_FRAME_PIXELS",
    "MAX_LINE_BYTES",
    "MAX_NESTING",
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
