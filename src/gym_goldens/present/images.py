"""Frames shown as pictures: the diff image, golden/actual/diff side by side, GIFs.

**The diff image** (:func:`diff_image`) has the golden frame's size: the
golden in dimmed gray, and every pixel that differs beyond ``pixel_atol`` (the
rule of :mod:`gym_goldens.comparison.pixels`) in pure magenta, a colour the
dimmed gray never takes. Frames of two shapes cannot be overlaid: their diff
image shows both, golden on the left, on a background of magenta stripes.

**The triptych** (:func:`write_triptych_files`) is three PNG files in a
folder, ``golden.png``, ``actual.png`` and ``diff.png``, the frames at their
own size and in their own pixels, written atomically (the files of
:func:`~gym_goldens.format.files.atomic_write_bytes`: a link in their place is
replaced, never followed). :func:`side_by_side` puts the three in one
picture for a plot or a page, each labelled, small frames enlarged by a whole
factor (each pixel a block: nothing is smoothed).

**GIFs** (:func:`write_gif`): an episode's frames as an animation that loops,
each frame shown for ``1000 / fps`` ms (GIF counts in hundredths of a second;
browsers show at most 50 frames a second). A GIF holds 256 colours a frame,
so it is for watching, not for comparing; the PNG files are the frames.

Gray frames are shown in gray; an RGBA frame over a checkerboard, so that
what is transparent shows as such.

**A failure's frames** (:func:`first_frame_difference`,
:func:`write_frame_diff`): the first frame that differs at the first
divergence of a comparison, as the report names it, written as the
triptych beside the actual recording.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np

from gym_goldens.comparison.pixels import pixel_differences
from gym_goldens.comparison.result import Comparison, Difference
from gym_goldens.format.files import atomic_write_bytes
from gym_goldens.format.frames import StoredFrame, encode_png, format_shape, is_image_like
from gym_goldens.format.limits import MAX_FRAME_PIXELS
from gym_goldens.present.differences import headline_order

__all__ = [
    "DIFF_COLOUR",
    "MIN_GIF_FPS",
    "TRIPTYCH_FILES",
    "diff_image",
    "display_rgb",
    "first_frame_difference",
    "frame_triptych",
    "side_by_side",
    "write_frame_diff",
    "write_gif",
    "write_triptych_files",
]

DIFF_COLOUR: Final = (255, 0, 255)
"""The colour of a differing pixel in a diff image: magenta."""

MIN_GIF_FPS: Final = 1000 / 655_350
"""The fewest frames a second of a GIF: it holds a frame's delay in 16 bits of centiseconds."""

TRIPTYCH_FILES: Final = ("golden.png", "actual.png", "diff.png")
"""The files :func:`write_triptych_files` writes, in its folder."""

_BACKGROUND: Final = (28, 28, 32)
_LABEL_COLOUR: Final = (225, 225, 225)
_MARGIN: Final = 8
_LABEL_HEIGHT: Final = 16
# The golden's gray is squeezed into 32..172: dim, yet its shapes show.
_DIM_FLOOR: Final = 32
_DIM_RANGE: Final = 140
# Small frames are enlarged until about this high, by at most this factor.
_SHOWN_HEIGHT: Final = 192
_MAX_SCALE: Final = 8
_CHECKER: Final = 8
_STRIPE: Final = 6


def display_rgb(frame: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """An ``H x W x 3`` picture of a frame: gray repeated, RGBA over a checkerboard.

    Raises:
        ValueError: ``frame`` is not a uint8 ``H x W`` or ``H x W x 1, 3, 4`` array.
    """
    if frame.dtype != np.uint8 or frame.ndim not in (2, 3):
        raise ValueError(f"expected a uint8 frame, got {frame.dtype} {format_shape(frame.shape)}")
    if frame.ndim == 2:
        frame = frame[:, :, np.newaxis]
    channels = frame.shape[2]
    if channels == 1:
        return np.repeat(frame, 3, axis=2)
    if channels == 3:
        return frame
    if channels == 4:
        rows, cols = np.indices(frame.shape[:2])
        light = ((rows // _CHECKER + cols // _CHECKER) % 2 == 0)[:, :, np.newaxis]
        checker = np.where(light, np.uint16(200), np.uint16(150))
        alpha = frame[:, :, 3:].astype(np.uint16)
        mixed: np.ndarray[Any, Any] = (
            frame[:, :, :3] * alpha + checker * (255 - alpha) + 127
        ) // 255
        return mixed.astype(np.uint8)
    raise ValueError(
        f"expected 1, 3 or 4 channels, got a frame of shape {format_shape(frame.shape)}"
    )


def diff_image(
    golden: np.ndarray[Any, Any], actual: np.ndarray[Any, Any], *, pixel_atol: int = 0
) -> np.ndarray[Any, Any]:
    """The diff image of two frames (see the module's docstring): ``H x W x 3`` uint8.

    Example:
        >>> import numpy as np
        >>> golden = np.zeros((8, 8, 3), np.uint8)
        >>> actual = golden.copy()
        >>> actual[2, 5] = 90
        >>> image = diff_image(golden, actual)
        >>> image[2, 5].tolist(), image[0, 0].tolist()
        ([255, 0, 255], [32, 32, 32])
    """
    if golden.shape != actual.shape:
        return _shapes_differ_image(golden, actual)
    differs = pixel_differences(golden, actual) > pixel_atol
    picture = display_rgb(golden).astype(np.uint32)
    # ITU-R 601 luma, as Pillow's convert("L"): integer arithmetic, no float rounding.
    gray = (picture[:, :, 0] * 299 + picture[:, :, 1] * 587 + picture[:, :, 2] * 114) // 1000
    dimmed = (_DIM_FLOOR + gray * _DIM_RANGE // 255).astype(np.uint8)
    image = np.repeat(dimmed[:, :, np.newaxis], 3, axis=2)
    image[differs] = DIFF_COLOUR
    return image


def _shapes_differ_image(
    golden: np.ndarray[Any, Any], actual: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """Golden and actual side by side on magenta stripes: they cannot be overlaid."""
    border = _STRIPE
    left, right = _fitted([display_rgb(golden), display_rgb(actual)], 2 * border, 3 * border)
    height = max(left.shape[0], right.shape[0]) + 2 * border
    width = left.shape[1] + right.shape[1] + 3 * border
    rows = np.arange(height, dtype=np.int32)[:, np.newaxis]
    cols = np.arange(width, dtype=np.int32)[np.newaxis, :]
    stripes = ((rows + cols) // _STRIPE % 2 == 0)[:, :, np.newaxis]
    image = np.where(stripes, np.array(DIFF_COLOUR, np.uint8), np.array(_BACKGROUND, np.uint8))
    image[border : border + left.shape[0], border : border + left.shape[1]] = left
    start = 2 * border + left.shape[1]
    image[border : border + right.shape[0], start : start + right.shape[1]] = right
    return image.astype(np.uint8)


def side_by_side(
    golden: np.ndarray[Any, Any],
    actual: np.ndarray[Any, Any],
    diff: np.ndarray[Any, Any],
    *,
    labels: Sequence[str] | None = None,
) -> np.ndarray[Any, Any]:
    """Golden, actual and diff in one labelled picture, for a plot or an HTML page.

    The panels are enlarged by one whole factor, so that small frames (an
    84 x 84 observation) show at about 192 pixels high; a frame's pixels
    stay square blocks.

    Args:
        golden: The golden frame.
        actual: The actual frame.
        diff: Their diff image (:func:`diff_image`).
        labels: The panels' labels; by default ``golden``, ``actual`` and
            ``diff`` (``diff: shapes differ`` when they do).

    Returns:
        An ``H x W x 3`` uint8 array.
    """
    if labels is None:
        differ = golden.shape != actual.shape
        labels = ("golden", "actual", "diff: shapes differ" if differ else "diff")
    extra_height, extra_width = 2 * _MARGIN + _LABEL_HEIGHT, 4 * _MARGIN
    panels = _fitted(
        [display_rgb(frame) for frame in (golden, actual, diff)], extra_height, extra_width
    )
    tallest = max(panel.shape[0] for panel in panels)
    wide = sum(panel.shape[1] for panel in panels)
    scale = max(1, min(_MAX_SCALE, _SHOWN_HEIGHT // tallest))
    while scale > 1 and (tallest * scale + extra_height) * (wide * scale + extra_width) > (
        MAX_FRAME_PIXELS
    ):
        scale -= 1
    panels = [np.repeat(np.repeat(panel, scale, axis=0), scale, axis=1) for panel in panels]
    height = _MARGIN + _LABEL_HEIGHT + tallest * scale + _MARGIN
    width = _MARGIN + sum(panel.shape[1] + _MARGIN for panel in panels)
    canvas = np.empty((height, width, 3), np.uint8)
    canvas[:] = _BACKGROUND
    left = _MARGIN
    places = []
    for panel in panels:
        top = _MARGIN + _LABEL_HEIGHT
        canvas[top : top + panel.shape[0], left : left + panel.shape[1]] = panel
        places.append(left)
        left += panel.shape[1] + _MARGIN
    # Pillow is imported where an image is drawn: a passing suite never loads it.
    from PIL import Image, ImageDraw, ImageFont

    image = Image.fromarray(canvas)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    for label, place in zip(labels, places, strict=False):
        draw.text((place, _MARGIN), label, fill=_LABEL_COLOUR, font=font)
    picture: np.ndarray[Any, Any] = np.array(image)
    return picture


def _fitted(
    panels: list[np.ndarray[Any, Any]], extra_height: int, extra_width: int
) -> list[np.ndarray[Any, Any]]:
    """``panels`` side by side, subsampled by the least power of two that fits the limit.

    The picture they make (the tallest high, all of them wide, plus the
    margins) keeps within :data:`~gym_goldens.format.limits.MAX_FRAME_PIXELS`,
    whatever shapes a golden's frames claim: frames of real shapes are left whole.
    """
    step = 1
    while True:
        sizes = [(-(-panel.shape[0] // step), -(-panel.shape[1] // step)) for panel in panels]
        height = max(size[0] for size in sizes) + extra_height
        if height * (sum(size[1] for size in sizes) + extra_width) <= MAX_FRAME_PIXELS:
            break
        step *= 2
    return [panel[::step, ::step] for panel in panels] if step > 1 else panels


def write_triptych_files(
    folder: Path, golden: np.ndarray[Any, Any], actual: np.ndarray[Any, Any], *, pixel_atol: int = 0
) -> tuple[Path, Path, Path]:
    """Write ``golden.png``, ``actual.png`` and ``diff.png`` into ``folder``.

    The folder is made if needed; each file is written atomically.

    Returns:
        The paths of the three files.

    Raises:
        ValueError: A frame is not image-like
            (:func:`~gym_goldens.format.frames.is_image_like`).
        GoldenWriteError: The file system refused.
    """
    paths = tuple(folder / name for name in TRIPTYCH_FILES)
    pictures = (golden, actual, diff_image(golden, actual, pixel_atol=pixel_atol))
    for path, picture in zip(paths, pictures, strict=True):
        atomic_write_bytes(path, encode_png(picture))
    return paths[0], paths[1], paths[2]


def write_gif(path: Path, frames: Sequence[np.ndarray[Any, Any]], fps: float) -> None:
    """Write ``frames`` as an animated GIF that loops, ``fps`` frames a second.

    Written atomically, with fixed settings (no optimisation pass), so the
    same frames give the same file.

    Raises:
        ValueError: No frames, frames of two shapes or not image-like, or
            ``fps`` not above 0 or below :data:`MIN_GIF_FPS`.
        GoldenWriteError: The file system refused.
    """
    if not fps > 0:
        raise ValueError(f"fps must be above 0, got {fps!r}")
    if fps < MIN_GIF_FPS:
        raise ValueError(
            f"fps must be at least {MIN_GIF_FPS:.3g}: a GIF shows a frame for 655 s at most; "
            f"got {fps!r}"
        )
    if not frames:
        raise ValueError("expected at least one frame, got none")
    shapes = {frame.shape for frame in frames}
    if len(shapes) > 1 or not all(is_image_like(frame) for frame in frames):
        raise ValueError(
            "expected image-like frames of one shape, got shapes "
            + ", ".join(sorted(format_shape(shape) for shape in shapes))
        )
    from PIL import Image  # imported where an image is drawn, as in side_by_side

    images = [Image.fromarray(display_rgb(frame)) for frame in frames]
    buffer = io.BytesIO()
    images[0].save(
        buffer,
        format="GIF",
        save_all=True,
        append_images=images[1:],
        duration=max(1, round(1000 / fps)),
        loop=0,
        optimize=False,
    )
    atomic_write_bytes(path, buffer.getvalue())


def first_frame_difference(comparison: Comparison) -> Difference | None:
    """The first frame compared by pixels that differs at the first divergence, in report order.

    None when the comparison is equal, or no frame differs there (or only a
    frame against a summary, whose golden pixels are not known).
    """
    differing = comparison.differing
    first = differing[0].first if differing else None
    if first is None:
        return None
    frames = [d for d in headline_order(first.differences) if d.pixels is not None]
    return frames[0] if frames else None


def _pixels(difference: Difference) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    golden, actual = difference.golden, difference.actual
    if not (isinstance(golden, StoredFrame) and isinstance(actual, StoredFrame)):
        raise ValueError("expected the difference of two frames compared by their pixels")
    return golden.read(), actual.read()


def write_frame_diff(comparison: Comparison, folder: Path) -> tuple[Path, Path, Path] | None:
    """Write the golden, actual and diff images of :func:`first_frame_difference` into ``folder``.

    Returns:
        The paths of ``golden.png``, ``actual.png`` and ``diff.png``; None
        when no frame differs at the first divergence.

    Raises:
        GoldenFormatError: A frame cannot be read any longer.
        GoldenWriteError: The file system refused.
    """
    difference = first_frame_difference(comparison)
    if difference is None or difference.pixels is None:
        return None
    golden, actual = _pixels(difference)
    atol = difference.pixels.tolerance.pixel_atol
    return write_triptych_files(folder, golden, actual, pixel_atol=atol)


def frame_triptych(
    difference: Difference, sides: tuple[str, str] = ("golden", "actual")
) -> np.ndarray[Any, Any]:
    """Golden, actual and diff of a frame difference in one labelled picture (:func:`side_by_side`).

    Raises:
        ValueError: The difference is not of two frames compared by pixels.
    """
    if difference.pixels is None:
        raise ValueError("expected the difference of two frames compared by their pixels")
    golden, actual = _pixels(difference)
    pixels = difference.pixels
    diff = diff_image(golden, actual, pixel_atol=pixels.tolerance.pixel_atol)
    third = f"diff: {pixels.differing:,} px" if pixels.shape_matches else "diff: shapes differ"
    return side_by_side(golden, actual, diff, labels=(*sides, third))
