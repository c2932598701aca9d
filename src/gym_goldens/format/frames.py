"""Frames: image-like arrays stored as PNG files beside a recording.

**The image-like rule.** A value is a frame when it is a numpy array of dtype
``uint8`` and shape ``H x W`` (gray), ``H x W x 1`` (gray), ``H x W x 3`` (RGB)
or ``H x W x 4`` (RGBA), with ``H`` and ``W`` at least :data:`MIN_FRAME_SIDE`
(8) and at most :data:`~gym_goldens.format.limits.MAX_FRAME_PIXELS` pixels in
all (:func:`is_image_like`). Smaller arrays, such as MiniGrid's 7 x 7 x 3 view,
are symbolic grids rather than pictures: they read better as numbers in the
JSON line. Larger ones would not read back (the reader's pixel limit), so they
are never written as frames.

**The PNG settings.** A frame is written by Pillow as a lossless PNG: mode
``L`` for gray (``H x W x 1`` too: the frame reference keeps its shape, and
:func:`decode_png` restores it), ``RGBA``, and for RGB a palette (``P``) of
its own colours when it has at most 256 (most rendered frames: Atari's,
CartPole's, MiniGrid's), ``RGB`` otherwise. The palette is the frame's
colours sorted (by red, then green, then blue), so it is a function of the
pixels, and exact: no colour is merged or dithered; Pillow packs the indices
in 1, 2, 4 or 8 bits by the palette's size (it picks a row filter for each
row of 1, 2 or 4 bits, as for every row of an ``RGB`` frame, and filters no
8-bit row), which makes a palette frame five to seven times faster to write
than an ``RGB`` one (Pong, CartPole) and smaller. Every PNG is
written with zlib level 6 and the run-length strategy (``Z_RLE``: rendered
frames are runs of flat colour, which it packs smaller and faster than the
default strategy), no optimisation pass, no interlacing and no chunk but
``IHDR``, ``PLTE`` (palettes only), ``IDAT`` and ``IEND``: no time, text,
gamma, transparency or colour profile (:func:`encode_png`). One frame, one
Pillow and one zlib give the same bytes every time; another Pillow or zlib
may give other bytes of the same pixels, which is why frames are compared by
their decoded pixels and their digest, never by their bytes.

**The frame reference.** A JSON line refers to a frame by a
:class:`FrameRef`: its file, relative to the recording's folder
(``frames/e00000_t000012_render.png``: episode, step and field, by
:func:`frame_filename`), the digest of its decoded pixels and its shape. The
digest is that of an array summary
(:meth:`~gym_goldens.format.codec.ArraySummary.of`, xxh3-128 of the digests
of up to 16 bands of rows), so a frame compares with the summary of the same
array by digest, and the digest is the same whatever Pillow or zlib wrote
the file. xxh3 rather than SHA-256: it is the summaries' hash and about ten
times faster; the digest guards against damage and stale files, not against
forgery (whoever can edit a golden's PNG can edit its digest too).

**Reading hostile goldens.** A reference names a plain file in the
recording's ``frames`` folder, in the form the writer gives it: no ``..``,
no absolute path, no separator but the one after ``frames``, no control
characters (:func:`check_frame_file`); neither the ``frames`` folder nor the
file may be a symlink. A PNG's size is read from its header before it is
decoded: one claiming more than ``max_pixels`` pixels, or another shape than
the reference gives, is refused, and its decoded bytes are counted against
the read's decompressed-size budget first. A truncated, damaged or foreign
file is a :class:`~gym_goldens.errors.GoldenFormatError` naming the file,
and so is a palette PNG unlike those written: one where a gray or RGBA frame
is expected, without a palette, with transparency, or whose pixels index
past its palette.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import mmap
import os
import re
import stat
import struct
import threading
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeGuard

import numpy as np

from gym_goldens.errors import GoldenFormatError, UnsafeGoldenPathError
from gym_goldens.format.codec import ArraySummary, TaggedValue, decode_line
from gym_goldens.format.fields import format_path
from gym_goldens.format.layout import safe_segment
from gym_goldens.format.limits import (
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    MAX_FRAME_PIXELS,
    DecompressionBudget,
)
from gym_goldens.format.lines import iter_lines

# Pillow is imported by the functions that encode or decode a PNG, not here:
# a suite that keeps no frames never loads it (tests/test_startup.py).
if TYPE_CHECKING:
    from PIL import Image

__all__ = [
    "FRAMES_DIR",
    "FRAME_TAG",
    "MIN_FRAME_SIDE",
    "PNG_COMPRESS_LEVEL",
    "PNG_COMPRESS_TYPE",
    "FrameRef",
    "StoredFrame",
    "check_frame_file",
    "decode_png",
    "encode_png",
    "format_shape",
    "frame_digest",
    "frame_filename",
    "frame_path",
    "frame_refs",
    "frames_in",
    "is_frame_file_name",
    "is_image_like",
    "read_frame",
    "referenced_frames",
]

FRAMES_DIR: Final = "frames"
"""The folder of a recording's frames, inside the recording's folder."""

FRAME_TAG: Final = "$frame"
"""The tag of a frame reference in a JSON line: ``{"$frame": {"file": ..., ...}}``."""

MIN_FRAME_SIDE: Final = 8
"""The least height and width of an image-like array."""

PNG_COMPRESS_LEVEL: Final = 6
"""The zlib level of every PNG written (zlib's default)."""

PNG_COMPRESS_TYPE: Final = zlib.Z_RLE
"""The zlib strategy of every PNG written: run-length encoding."""

_CHANNELS_OF_MODE: Final = {"L": 1, "RGB": 3, "RGBA": 4}
# The PNG colour types of 8-bit frames, to their number of channels.
_CHANNELS_OF_COLOUR_TYPE: Final = {0: 1, 2: 3, 6: 4}
# The PNG colour types of frames, to the mode Pillow opens them in.
_MODE_OF_COLOUR_TYPE: Final = {0: "L", 2: "RGB", 6: "RGBA", 3: "P"}
# A palette PNG (colour type 3) reads as RGB; Pillow packs its indices in 1 to 8 bits.
_PALETTE_COLOUR_TYPE: Final = 3
_PALETTE_DEPTHS: Final = (1, 2, 4, 8)
_PALETTE_COLOURS: Final = 256
# A frame of fewer runs of one colour than a run in this many pixels finds its palette
# from its runs (_run_palette); past it, counting and a table look-up cost less (measured
# on 210x160 frames of 20 colours: 99 against 124 us at one run in 32 pixels, 189 against
# 120 at one in 16).
_PIXELS_PER_RUN: Final = 24
# Each thread's table from a colour (r | g << 8 | b << 16) to its palette index (_colour_table).
_scratch: Final = threading.local()
# Private: a process forked while a table exists gets a copy of it, never shares it (an
# anonymous mapping is shared by default); Windows has no fork and no such flags.
_PRIVATE_MAPPING: Final = (
    {"flags": mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS} if hasattr(mmap, "MAP_PRIVATE") else {}
)
_PNG_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"
# The signature, the IHDR chunk's length and type, its 13 bytes and its CRC.
_IHDR_END: Final = 8 + 8 + 13 + 4
# The last chunk of every PNG: empty, so always these bytes.
_IEND: Final = b"\x00\x00\x00\x00IEND\xaeB`\x82"
_DIGEST: Final = re.compile(r"[0-9a-f]{32}")
# The names the writer gives; nothing else is read. The characters are those
# safe_segment writes (and "~" of its long names): no separator, no control
# character, and a name that starts with "e" is neither "." nor ".." nor hidden.
_FRAME_FILE: Final = re.compile(
    rf"{FRAMES_DIR}/e\d{{5,}}_t\d{{6,}}_[A-Za-z0-9_\-.\[\]=+,@%~]{{1,200}}\.png"
)
# A PNG of a frame is at most its filtered pixels stored uncompressed, plus
# zlib's and the chunks' framing: twice that and a margin bound a real file.
_PNG_SIZE_MARGIN: Final = 1 << 16
# The errors Pillow and zlib raise on a damaged PNG.
_REDO: Final = "record the golden again"
# How much of a value read from a file an error shows.
_SHOWN_CHARS: Final = 80


def is_image_like(value: object) -> bool:
    """Whether ``value`` is stored as a frame: the image-like rule of this module.

    Example:
        >>> import numpy as np
        >>> is_image_like(np.zeros((84, 84), np.uint8))
        True
        >>> is_image_like(np.zeros((7, 7, 3), np.uint8))  # MiniGrid's view: a grid of symbols
        False
    """
    if not isinstance(value, np.ndarray) or value.dtype != np.uint8:
        return False
    shape = value.shape
    if len(shape) == 3:
        if shape[2] not in _CHANNELS_OF_COLOUR_TYPE.values():
            return False
    elif len(shape) != 2:
        return False
    height: int = shape[0]
    width: int = shape[1]
    return min(height, width) >= MIN_FRAME_SIDE and height * width <= MAX_FRAME_PIXELS


def format_shape(shape: Sequence[int]) -> str:
    """A frame's shape as people write it: ``210x160x3``."""
    return "x".join(str(size) for size in shape)


def encode_png(frame: np.ndarray[Any, Any]) -> bytes:
    """The PNG file of an image-like array, with the module's fixed settings.

    An RGB frame of at most 256 colours is written as a palette PNG of its
    sorted colours (see the module's docstring). The same frame always gives
    the same bytes (with one Pillow and zlib).

    Raises:
        ValueError: ``frame`` is not image-like.
    """
    from PIL import Image

    if not is_image_like(frame):
        raise ValueError(
            f"expected an image-like array (uint8, H x W or H x W x 1, 3 or 4, each side at "
            f"least {MIN_FRAME_SIDE}, at most {MAX_FRAME_PIXELS:,} pixels), got "
            f"{_describe_value(frame)}"
        )
    pixels = np.ascontiguousarray(frame)
    if pixels.ndim == 3 and pixels.shape[2] == 1:
        pixels = pixels[:, :, 0]
    # fromarray picks L, RGB or RGBA from the shape; neither image has info,
    # so the PNG gets no chunk beyond IHDR, PLTE (a palette's), IDAT and IEND.
    rgb = pixels.ndim == 3 and pixels.shape[2] == 3
    image = _paletted(pixels) if rgb else Image.fromarray(pixels)
    buffer = io.BytesIO()
    image.save(
        buffer,
        format="PNG",
        compress_level=PNG_COMPRESS_LEVEL,
        compress_type=PNG_COMPRESS_TYPE,
        optimize=False,
    )
    return buffer.getvalue()


def _paletted(pixels: np.ndarray[Any, Any]) -> Image.Image:
    """An RGB frame as an exact palette image of its sorted colours; an ``RGB`` image past 256.

    Two ways to the same palette and indices. A frame of flat colour (a
    rendered one) holds few runs of one colour, row after row: its colours
    are those of the runs' first pixels, and its indices those of the runs,
    repeated (:func:`_run_palette`, several times faster on Pong and CartPole). A
    frame of many runs (noise, dithering, a photo) has its colours counted by
    Pillow and each pixel looked up in a table (:func:`_counted_palette`): past
    about one run in 24 pixels, sorting the runs costs more than that.
    """
    from PIL import Image

    flat = pixels.reshape(-1)
    limit = flat.size // (3 * _PIXELS_PER_RUN)
    bounds = _run_bounds(flat, limit)
    if bounds is None:
        return _counted_palette(pixels, _pixel_keys(pixels))
    found = _run_palette(flat, bounds)
    if found is None:
        return Image.fromarray(pixels)
    return _palette_image(*found, pixels.shape)


def _changed_bytes(flat: np.ndarray[Any, Any], limit: int) -> np.ndarray[Any, Any] | None:
    """Where a byte of a contiguous RGB frame's bytes differs from the byte 3 further on, sorted.

    Byte ``j`` against byte ``j + 3``: the same channel of pixel ``j // 3`` and
    of the next, so a pixel whose colour differs from the next one's shows at
    one to three of its bytes. Compared 8 bytes at a time (the frame against
    itself 3 bytes on, read as 64-bit words, a view, no copy): the frame's bytes
    are read once, in long strides, and only the few words that differ are
    looked at byte by byte; the bytes past the last whole word, on their own.
    ``None`` when more than ``2 * limit`` words differ: the frame then has more
    than ``limit`` runs (a change of colour spans at most two words).
    """
    size = flat.size
    words = (size - 3) // 8
    here = np.ndarray((words,), np.uint64, buffer=flat)
    ahead = np.ndarray((words,), np.uint64, buffer=flat, offset=3)
    changed = (here != ahead).nonzero()[0]
    if changed.size > 2 * limit:
        return None
    # Native words, so that the bytes of their xor are in the frame's order.
    lanes = (here[changed] ^ ahead[changed]).view(np.uint8).nonzero()[0]
    found = (changed << 3)[lanes >> 3] | (lanes & 7)
    rest = flat[words * 8 :].tobytes()
    tail = [words * 8 + i for i in range(len(rest) - 3) if rest[i] != rest[i + 3]]
    return np.concatenate([found, tail]) if tail else found


def _run_bounds(flat: np.ndarray[Any, Any], limit: int) -> np.ndarray[Any, Any] | None:
    """Where each run of one colour starts in a contiguous RGB frame, then its pixel count.

    A run is a longest stretch of pixels of one colour, in row-major order
    (across rows too); every pixel is in one, so the runs' first pixels show
    every colour of the frame. ``[0, start of run 2, ..., pixels]``: run ``i``
    is pixels ``bounds[i]`` to ``bounds[i + 1]``. ``None`` past ``limit`` runs.
    """
    changed = _changed_bytes(flat, limit)
    if changed is None:
        return None
    # The last pixel of each run (that of a change, and the frame's last), after a -1.
    ends = np.empty(changed.size + 2, np.intp)
    ends[0] = -1
    ends[-1] = flat.size // 3 - 1
    np.floor_divide(changed, 3, out=ends[1:-1])
    # A change of two or three channels shows at as many bytes: one end each.
    kept = np.empty(ends.size, bool)
    kept[0] = True
    np.not_equal(ends[1:], ends[:-1], out=kept[1:])
    bounds = ends[kept]
    if bounds.size - 1 > limit:
        return None
    bounds += 1
    return bounds


def _run_palette(
    flat: np.ndarray[Any, Any], bounds: np.ndarray[Any, Any]
) -> tuple[bytes, np.ndarray[Any, Any]] | None:
    """The sorted colours (``PLTE`` bytes) and the pixels' indices of a frame, from its runs.

    The runs' colours sorted, once each, and each run's index found by a
    binary search in them: on a few hundred runs, fewer and cheaper numpy calls
    than ``np.unique(..., return_inverse=True)``. ``None`` past 256 colours.
    """
    starts = bounds[:-1]
    keys = _run_keys(flat, starts)
    ordered = np.sort(keys)
    first = np.empty(ordered.size, bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    found = ordered[first]
    if found.size > _PALETTE_COLOURS:
        return None
    run_indices = np.searchsorted(found, keys).astype(np.uint8)
    indices = np.repeat(run_indices, bounds[1:] - starts)
    # r << 16 | g << 8 | b, big-endian, is 0, r, g, b: the palette's bytes after the 0.
    colours = found.astype(">u4").view(np.uint8).reshape(-1, 4)[:, 1:]
    return colours.tobytes(), indices


def _run_keys(flat: np.ndarray[Any, Any], starts: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``r << 16 | g << 8 | b`` of the pixels ``starts`` of a contiguous RGB frame.

    In the palette's order (red, then green, then blue). Each pixel's bytes
    are read as the high bytes of a big-endian 32-bit word starting at it (a
    strided view), the next pixel's red shifted off; the frame's last pixel,
    whose word would run past the array, on its own.
    """
    count = flat.size // 3
    words = np.ndarray((count - 1,), ">u4", buffer=flat, strides=(3,))
    if starts[-1] < count - 1:
        keys: np.ndarray[Any, Any] = words[starts] >> 8
        return keys
    last = int(flat[-3]) << 16 | int(flat[-2]) << 8 | int(flat[-1])
    return np.append(words[starts[:-1]] >> 8, np.uint32(last))


def _counted_palette(pixels: np.ndarray[Any, Any], keys: np.ndarray[Any, Any]) -> Image.Image:
    """A frame of many runs as :func:`_paletted` gives it: colours counted, pixels looked up."""
    from PIL import Image

    image = Image.fromarray(pixels)
    counted = image.getcolors(_PALETTE_COLOURS)
    if counted is None:
        return image
    colours = np.array(sorted(colour for _, colour in counted), np.uint8).reshape(-1, 3)
    table = _colour_table()
    table[_colour_keys(colours)] = np.arange(len(colours), dtype=np.uint8)
    # Every pixel's colour was just written in the table: no other entry is read.
    return _palette_image(colours.tobytes(), table.take(keys), pixels.shape)


@dataclasses.dataclass
class _KeptImage:
    """A thread's palette image of one frame size, kept from frame to frame.

    Attributes:
        size: Its width and height.
        buffer: Its pixels' indices: the buffer the image maps.
        image: The image.
        colours: The palette it was last given (``PLTE`` bytes).
    """

    size: tuple[int, int]
    buffer: np.ndarray[Any, Any]
    image: Image.Image
    colours: bytes = b""


def _palette_image(
    colours: bytes, indices: np.ndarray[Any, Any], shape: tuple[int, ...]
) -> Image.Image:
    """The palette image of ``colours`` (``PLTE`` bytes) whose flat pixels are ``indices``.

    One image a thread, of the last frame size, kept (it holds
    one frame's indices): the next frame of that size has its indices copied
    into the buffer the image maps (Pillow shows a change of the buffer in the
    image, as ``frombuffer`` documents) and its palette replaced when it
    changes, which costs a third of making an image each frame. Used again
    only while Pillow still maps the buffer (the image is read-only): Pillow
    10 copies the pixels when it saves the image, and that copy would show
    the first frame's pixels ever after. Valid until this thread's next call:
    :func:`encode_png` saves it at once, and the image never leaves this module.
    """
    from PIL import Image

    height, width = shape[:2]
    kept: _KeptImage | None = getattr(_scratch, "image", None)
    # Read-only: still the buffer's view, not a copy of it.
    if kept is None or not kept.image.readonly or kept.size != (width, height):
        buffer = np.empty(height * width, np.uint8)
        image = Image.frombuffer("P", (width, height), buffer, "raw", "P", 0, 1)
        kept = _scratch.image = _KeptImage((width, height), buffer, image)
    kept.buffer[:] = indices
    if colours != kept.colours:
        # A Pillow that copies the pixels to set the palette copies this frame's.
        kept.image.putpalette(colours)
        kept.colours = colours
    return kept.image


def _colour_table() -> np.ndarray[Any, Any]:
    """This thread's table from a colour key to its palette index: one entry per RGB colour.

    16 MiB of address space mapped anonymously, so that only the pages of the
    colours written are ever touched (a few KiB; numpy's own allocation would
    fault in huge pages); one a thread, so that threads encoding at once never
    share one. Entries are never cleared: a frame reads only those of its own
    colours, written just before.
    """
    table: np.ndarray[Any, Any] | None = getattr(_scratch, "table", None)
    if table is None:
        table = np.frombuffer(mmap.mmap(-1, 1 << 24, **_PRIVATE_MAPPING), np.uint8)
        _scratch.table = table
    return table


def _colour_keys(colours: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``r | g << 8 | b << 16`` of each row of an ``N x 3`` array of colours."""
    wide = colours.astype(np.intp)
    keys: np.ndarray[Any, Any] = wide[:, 0] | wide[:, 1] << 8 | wide[:, 2] << 16
    return keys


def _pixel_keys(pixels: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The colour key of each pixel of a contiguous ``H x W x 3`` frame, flat (``uint32``).

    Each pixel's three bytes are read as the low bytes of a little-endian
    32-bit word starting at the pixel (a view, no copy), the byte of the next
    pixel masked off; the last pixel, whose word would run past the array, on its own.
    32-bit keys rather than ``intp``: half the bytes to write and compare
    (``take`` casts them to ``intp``; only a frame of many runs is looked up).
    """
    flat = pixels.reshape(-1)
    count = flat.size // 3
    words = np.ndarray((count - 1,), "<u4", buffer=flat, strides=(3,))
    keys = np.empty(count, np.uint32)
    np.bitwise_and(words, 0xFFFFFF, out=keys[:-1])
    keys[-1] = int(flat[-3]) | int(flat[-2]) << 8 | int(flat[-1]) << 16
    return keys


def decode_png(
    data: bytes,
    *,
    path: str | Path,
    expected_shape: Sequence[int] | None = None,
    max_pixels: int = MAX_FRAME_PIXELS,
    budget: DecompressionBudget | None = None,
) -> np.ndarray[Any, Any]:
    """The pixels of a frame's PNG file, read safely.

    The header is checked before anything is decoded: the size against
    ``max_pixels`` and ``expected_shape``, the colour type against the
    frames this module writes (8-bit gray, RGB or RGBA, or a palette, which
    reads as RGB). The decoded size is then spent on ``budget``, and the
    pixels decoded; a palette PNG's indices are checked against its palette
    and turned into its colours.

    Args:
        data: The file's bytes.
        path: The file, named in errors.
        expected_shape: The shape the frame reference gives; ``H x W x 1`` is
            restored from a gray PNG. Without it, a gray PNG reads as ``H x W``.
        max_pixels: The most pixels the frame may have.
        budget: What the read may still decompress to; nothing is counted
            without one.

    Returns:
        A read-only ``uint8`` array.

    Raises:
        GoldenFormatError: The file is not a PNG, is cut short or damaged,
            holds another kind of image, is too large or has another shape
            than ``expected_shape``; or the budget is spent.
    """
    width, height, channels, mode = _png_header(data, path, max_pixels)
    shape: tuple[int, ...] = (height, width) if channels == 1 else (height, width, channels)
    if expected_shape is not None:
        expected = tuple(expected_shape)
        if expected[:2] != shape[:2] or _channels(expected) != channels:
            raise GoldenFormatError(
                path,
                f"the PNG holds a {format_shape(shape)} frame, the recording gives "
                f"{format_shape(expected)}; the file does not belong to the recording: {_REDO}",
            )
        shape = expected
    if not data.endswith(_IEND):
        # Pillow decodes a file cut short after its last pixels without a word.
        raise GoldenFormatError(path, f"the PNG is cut short: it has no end (IEND); {_REDO}")
    if budget is not None:
        budget.spend(height * width * channels, Path(path))
    pixels = _decoded(data, path, (width, height), mode)
    if pixels.dtype != np.uint8 or pixels.size != height * width * channels:
        raise GoldenFormatError(path, f"the PNG does not decode as its header says; {_REDO}")
    return pixels.reshape(shape)


def _decoded(
    data: bytes, path: str | Path, size: tuple[int, int], mode: str
) -> np.ndarray[Any, Any]:
    """The pixels Pillow decodes from a PNG whose header was checked; a palette PNG's as RGB.

    Pillow decodes by the last IHDR before the pixels: a file whose image is
    not the one its first header gave (which was checked) is refused before a
    pixel is decoded.
    """
    from PIL import Image

    opened: tuple[tuple[int, int], str] | None = None
    try:
        with Image.open(io.BytesIO(data), formats=["PNG"]) as image:
            opened = (image.size, image.mode)
            if opened == (size, mode):
                image.load()
                pixels = np.asarray(image)
                palette = image.palette.tobytes() if image.palette is not None else b""
                transparent = "transparency" in image.info
    except Image.DecompressionBombError as error:
        raise GoldenFormatError(path, f"refused by Pillow's pixel limit ({error})") from None
    except Exception as error:
        # Pillow's PNG reader raises many kinds of error on a hostile file (an
        # IndexError for a short iCCP chunk), and its warnings are errors under -W error.
        reason = f"the PNG is cut short or damaged ({type(error).__name__}: {error}); {_REDO}"
        raise GoldenFormatError(path, reason) from None
    if opened != (size, mode):
        raise GoldenFormatError(path, f"the PNG does not decode as its header says; {_REDO}")
    if mode == "P":
        return _unpaletted(pixels, palette, path, transparent=transparent)
    return pixels


def _unpaletted(
    indices: np.ndarray[Any, Any], palette: bytes, path: str | Path, *, transparent: bool
) -> np.ndarray[Any, Any]:
    """The RGB pixels of a palette PNG's indices, refused unless it is one the writer writes."""
    if not palette or len(palette) % 3 or len(palette) > 3 * _PALETTE_COLOURS:
        raise GoldenFormatError(
            path, f"the palette PNG has no palette (PLTE) of 1 to 256 colours; {_REDO}"
        )
    if transparent:
        raise GoldenFormatError(
            path,
            f"the palette PNG has transparency (tRNS), which gym-goldens never writes; {_REDO}",
        )
    colours = np.frombuffer(palette, np.uint8).reshape(-1, 3)
    if indices.dtype != np.uint8 or indices.ndim != 2:
        raise GoldenFormatError(path, f"the PNG does not decode as its header says; {_REDO}")
    if indices.size and int(indices.max()) >= len(colours):
        raise GoldenFormatError(
            path,
            f"the palette PNG's pixels index past its palette of {len(colours)} colours; "
            f"the file is damaged: {_REDO}",
        )
    rgb: np.ndarray[Any, Any] = colours.take(indices, axis=0)
    rgb.flags.writeable = False  # as the pixels of every other frame read
    return rgb


def _png_header(data: bytes, path: str | Path, max_pixels: int) -> tuple[int, int, int, str]:
    """The width, height, channels and Pillow mode of a PNG's header, checked; none decoded."""
    if data and _PNG_SIGNATURE.startswith(data[:8]) and len(data) < len(_PNG_SIGNATURE):
        raise GoldenFormatError(path, f"the PNG is cut short in its signature; {_REDO}")
    if not data.startswith(_PNG_SIGNATURE):
        found = "an empty file" if not data else f"a file starting {data[:8]!r}"
        raise GoldenFormatError(path, f"expected a PNG file, found {found}; {_REDO}")
    header = data[8:_IHDR_END]
    if len(header) < _IHDR_END - 8 or header[:8] != b"\x00\x00\x00\x0dIHDR":
        raise GoldenFormatError(path, f"the PNG is cut short or has no header (IHDR); {_REDO}")
    if zlib.crc32(header[4:-4]) != int.from_bytes(header[-4:], "big"):
        raise GoldenFormatError(path, f"the PNG's header (IHDR) is damaged: bad CRC; {_REDO}")
    # Compression, filter and interlace methods are left to Pillow, which reads them all.
    width, height, depth, colour_type = struct.unpack(">IIBB", header[8:18])
    if width * height > max_pixels:
        raise GoldenFormatError(
            path,
            f"the PNG claims {width:,} x {height:,} pixels, more than the {max_pixels:,} a frame "
            "may have; it was refused before decoding: the file is damaged or made to exhaust "
            "the machine",
        )
    channels = _CHANNELS_OF_COLOUR_TYPE.get(colour_type)
    if colour_type == _PALETTE_COLOUR_TYPE and depth in _PALETTE_DEPTHS:
        channels, depth = 3, 8  # its pixels read as RGB
    if depth != 8 or channels is None or not width or not height:
        raise GoldenFormatError(
            path,
            f"expected an 8-bit gray, RGB or RGBA PNG or a palette PNG, as gym-goldens writes "
            f"frames; found bit depth {depth}, colour type {colour_type}, size {width} x "
            f"{height}; {_REDO}",
        )
    return width, height, channels, _MODE_OF_COLOUR_TYPE[colour_type]


def _channels(shape: tuple[int, ...]) -> int:
    return 1 if len(shape) == 2 else shape[2]


def frame_digest(frame: np.ndarray[Any, Any]) -> str:
    """The digest of a frame's pixels: that of its array summary (see the module's docstring)."""
    return ArraySummary.of(frame, statistics=False).digest


def frame_filename(episode: int, step: int, field: str) -> str:
    """The file of a frame, relative to its recording's folder.

    The field path is made file-name safe by
    :func:`~gym_goldens.format.layout.safe_segment`, one-to-one, so two fields
    never share a file.

    Example:
        >>> frame_filename(0, 12, "render")
        'frames/e00000_t000012_render.png'
        >>> frame_filename(3, 0, "obs.pixels/left")
        'frames/e00003_t000000_obs.pixels%2Fleft.png'

    Raises:
        ValueError: ``episode`` or ``step`` is negative, or ``field`` empty.
    """
    if episode < 0 or step < 0 or not field:
        raise ValueError(
            f"expected a non-negative episode and step and a field path, got {episode}, {step} "
            f"and {field!r}"
        )
    return f"{FRAMES_DIR}/e{episode:05d}_t{step:06d}_{_field_name(field)}.png"


@functools.lru_cache(maxsize=1024)
def _field_name(field: str) -> str:
    """A field's part of its frames' names; kept, since a recorder names one at every step."""
    return safe_segment(field)


def check_frame_file(file: object, *, source: object) -> str:
    """The ``file`` of a frame reference, refused unless it is a name the writer gives.

    Args:
        file: The name read from a recording.
        source: The recording file, named in the error.

    Raises:
        GoldenFormatError: Not a name of the form of :func:`frame_filename`:
            a path leaving the ``frames`` folder, an absolute path, a
            separator, a control character.
    """
    if isinstance(file, str) and _FRAME_FILE.fullmatch(file):
        return file
    raise GoldenFormatError(
        source,
        f"a frame reference names the file {_short(file)}; expected a name such as "
        f"frames/e00000_t000012_render.png, inside the recording's {FRAMES_DIR} folder; "
        f"the recording is damaged or made to read other files: {_REDO}",
    )


def is_frame_file_name(name: str) -> bool:
    """Whether ``name`` (a file in a ``frames`` folder) is named as the writer names frames."""
    return _FRAME_FILE.fullmatch(f"{FRAMES_DIR}/{name}") is not None


def frame_path(recording: Path, file: str) -> Path:
    """The path of the frame ``file`` in the recording folder ``recording``, checked.

    The folder itself is checked by its reader (as every golden's is); here
    the name, and that the ``frames`` folder is no symlink, so the path
    stays inside the folder.

    Raises:
        GoldenFormatError: ``file`` is not a name the writer gives.
        UnsafeGoldenPathError: The ``frames`` folder is a symlink.
    """
    check_frame_file(file, source=recording)
    frames = recording / FRAMES_DIR
    if frames.is_symlink():
        raise UnsafeGoldenPathError(
            frames,
            "is a symlink; frames are read and written only inside the recording's folder: "
            "replace the link with the folder itself",
        )
    return recording / file


@dataclasses.dataclass(frozen=True)
class FrameRef:
    """A frame as a JSON line refers to it.

    Attributes:
        file: The PNG file, relative to the recording's folder (see
            :func:`frame_filename`).
        digest: The digest of the decoded pixels (:func:`frame_digest`).
        shape: The frame's shape: ``(H, W)`` or ``(H, W, C)``.
    """

    file: str
    digest: str
    shape: tuple[int, ...]

    @classmethod
    def of(cls, frame: np.ndarray[Any, Any], *, episode: int, step: int, field: str) -> FrameRef:
        """The reference of ``frame``, the value of ``field`` at ``step`` of ``episode``."""
        return cls(frame_filename(episode, step, field), frame_digest(frame), tuple(frame.shape))

    def to_json(self) -> dict[str, Any]:
        """The content of the ``$frame`` tag."""
        return {"digest": self.digest, "file": self.file, "shape": list(self.shape)}

    @classmethod
    def from_json(cls, content: object, *, path: object, line: int | None = None) -> FrameRef:
        """A reference read from a recording, checked (unknown keys are left out).

        Args:
            content: The ``$frame`` tag's content.
            path: The recording file, named in errors.
            line: Its line, named in errors.

        Raises:
            GoldenFormatError: Not a valid reference: the file name is not
                one the writer gives, the digest is not 32 hex digits, or the
                shape is not that of an image-like array.
        """
        if not isinstance(content, dict):
            raise GoldenFormatError(
                path, f"a frame reference must be an object, found {_short(content)}", line=line
            )
        file = check_frame_file(content.get("file"), source=path)
        digest = content.get("digest")
        shape = content.get("shape")
        if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
            raise GoldenFormatError(
                path,
                f"the frame {file} has no valid digest (32 hex digits): {_short(digest)}",
                line=line,
            )
        if not _is_frame_shape(shape):
            raise GoldenFormatError(
                path,
                f"the frame {file} has no valid shape ([H, W] or [H, W, 1|3|4]): {_short(shape)}",
                line=line,
            )
        return cls(file, digest, tuple(shape))

    @classmethod
    def from_tagged(cls, value: TaggedValue, *, path: object, line: int | None = None) -> FrameRef:
        """A reference as a parsed record holds it (a ``$frame`` tag), checked as by ``from_json``.

        Raises:
            GoldenFormatError: Not a valid reference.
        """
        return cls.from_json(_thawed(value.value), path=path, line=line)


def _thawed(frozen: object) -> object:
    """The content of a ``$frame`` tag as read (:class:`TaggedValue` freezes it), as parsed.

    An object's ``(key, value)`` pairs back into a dict, a list (the shape)
    back into a list; anything else is left for :meth:`FrameRef.from_json` to refuse.
    """
    if not isinstance(frozen, tuple) or not all(
        isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str) for pair in frozen
    ):
        return frozen
    return {key: list(value) if isinstance(value, tuple) else value for key, value in frozen}


@dataclasses.dataclass(frozen=True)
class StoredFrame:
    """A frame of a recording: its reference, and the recording folder its file is in.

    Attributes:
        folder: The recording's folder (that of its recording file).
        ref: The reference a line of the recording gives.
    """

    folder: Path
    ref: FrameRef

    @property
    def path(self) -> Path:
        """The frame's file."""
        return self.folder / self.ref.file

    def read(self, budget: DecompressionBudget | None = None) -> np.ndarray[Any, Any]:
        """The frame's pixels, read safely (see :func:`read_frame`)."""
        return read_frame(self.folder, self.ref, budget=budget)


def _is_frame_shape(shape: object) -> TypeGuard[list[int]]:
    if not isinstance(shape, list) or len(shape) not in (2, 3):
        return False
    if not all(type(size) is int and size >= 1 for size in shape):
        return False
    return len(shape) == 2 or shape[2] in _CHANNELS_OF_COLOUR_TYPE.values()


def read_frame(
    recording: Path,
    ref: FrameRef,
    *,
    max_pixels: int = MAX_FRAME_PIXELS,
    budget: DecompressionBudget | None = None,
) -> np.ndarray[Any, Any]:
    """The pixels of the frame ``ref`` of the recording folder ``recording``.

    The path is checked (:func:`frame_path`), the file is opened without
    following a symlink and read only if it is a plain file no larger than a
    PNG of its shape can be; the pixels are decoded by :func:`decode_png`
    with the reference's shape and checked against its digest.

    Args:
        recording: The recording's folder, already checked by its reader.
        ref: The reference read from the recording.
        max_pixels: The most pixels a frame may have.
        budget: What the read of the recording may still decompress to.

    Raises:
        GoldenFormatError: The file is missing, no plain file, too large,
            unreadable (see :func:`decode_png`), or its pixels do not match
            the reference's digest.
        UnsafeGoldenPathError: The file or the ``frames`` folder is a symlink.
    """
    path = frame_path(recording, ref.file)
    height, width = ref.shape[:2]
    limit = 2 * height * (width * _channels(ref.shape) + 1) + _PNG_SIZE_MARGIN
    data = _read_plain_file(path, limit)
    pixels = decode_png(
        data, path=path, expected_shape=ref.shape, max_pixels=max_pixels, budget=budget
    )
    if frame_digest(pixels) != ref.digest:
        raise GoldenFormatError(
            path,
            "its pixels do not match the digest the recording gives; the file was changed "
            f"after it was recorded: {_REDO}",
        )
    return pixels


def _read_plain_file(path: Path, limit: int) -> bytes:
    """The bytes of a plain file of at most ``limit`` bytes, opened without following links."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        raise GoldenFormatError(
            path, f"the frame file is missing; the recording refers to it: {_REDO}"
        ) from None
    except OSError as error:
        raise GoldenFormatError(path, f"cannot open ({error.strerror or error})") from None
    if stat.S_ISLNK(status.st_mode):
        raise _symlink_error(path)
    # Not opened unless a plain file: opening a named pipe would wait for a writer.
    if not stat.S_ISREG(status.st_mode):
        raise GoldenFormatError(path, "expected a PNG file, found a folder or other entry")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags | getattr(os, "O_BINARY", 0))
    except OSError as error:
        if path.is_symlink():  # replaced by a link since it was looked at
            raise _symlink_error(path) from None
        raise GoldenFormatError(path, f"cannot open ({error.strerror or error})") from None
    with os.fdopen(descriptor, "rb") as handle:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise GoldenFormatError(path, "expected a PNG file, found a folder or other entry")
        if status.st_size > limit:
            raise GoldenFormatError(
                path,
                f"holds {status.st_size:,} bytes, more than a PNG of its frame can ({limit:,}); "
                f"the file is damaged or made to exhaust the machine: {_REDO}",
            )
        return handle.read(limit + 1)


def _symlink_error(path: Path) -> UnsafeGoldenPathError:
    return UnsafeGoldenPathError(
        path,
        "is a symlink; frames are read only as plain files inside the recording's folder: "
        "replace the link with the file itself",
    )


def _describe_value(value: object) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of dtype {value.dtype} and shape {format_shape(value.shape) or '()'}"
    return f"a {type(value).__name__}"


def _short(value: object) -> str:
    """The repr of a value read from a file, cut short: escaped, and bounded."""
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."


def frame_refs(value: Any, *, path: object, line: int | None = None) -> Iterator[FrameRef]:
    """The frame references in a parsed value (a record), checked, in record order.

    Raises:
        GoldenFormatError: A reference is not valid (see :meth:`FrameRef.from_json`).
    """
    if isinstance(value, TaggedValue):
        if value.tag == FRAME_TAG:
            yield FrameRef.from_tagged(value, path=path, line=line)
    elif isinstance(value, dict):
        for item in value.values():
            yield from frame_refs(item, path=path, line=line)
    elif isinstance(value, list):
        for item in value:
            yield from frame_refs(item, path=path, line=line)


def frames_in(
    value: Any, *, path: object, line: int | None = None, _at: tuple[str | int, ...] = ()
) -> Iterator[tuple[str, FrameRef]]:
    """The frames of a parsed record, each with its field path (``render``, ``obs.image``).

    Raises:
        GoldenFormatError: A reference is not valid (see :meth:`FrameRef.from_json`).
    """
    if isinstance(value, TaggedValue):
        if value.tag == FRAME_TAG:
            yield format_path(_at), FrameRef.from_tagged(value, path=path, line=line)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from frames_in(item, path=path, line=line, _at=(*_at, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from frames_in(item, path=path, line=line, _at=(*_at, index))


def referenced_frames(
    path: Path, *, max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> dict[str, FrameRef]:
    """The frames a recording file refers to, by file (``frames/e00000_t000012_render.png``).

    Only lines that hold a reference are parsed.

    Raises:
        GoldenFormatError: The file cannot be read, or a reference is not valid.
    """
    found: dict[str, FrameRef] = {}
    marker = b'"' + FRAME_TAG.encode() + b'"'
    for number, raw in iter_lines(path, max_decompressed_size=max_decompressed_size):
        if marker in raw:
            record = decode_line(raw, path=path, line=number)
            found.update((ref.file, ref) for ref in frame_refs(record, path=path, line=number))
    return found
