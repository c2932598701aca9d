"""Two frames compared pixel by pixel, within a pixel tolerance.

**The pixel rule.** A pixel *differs* when any of its channels differs by
more than ``pixel_atol`` (0 to 255; 0 by default: any change). Two frames of
one shape *match* when no more pixels differ than the tolerance allows:

- ``max_diff_pixels``: at most this many pixels may differ;
- ``max_diff_pixel_ratio``: at most this fraction of the frame's pixels
  (``H * W``) may differ.

The two limits combine as in Playwright's ``toHaveScreenshot``: when both are
given, a match needs both (the smaller allowance applies); when one is
given, it alone applies; when neither is, no pixel may differ. A limit left
out is not a limit of 0: ``PixelTolerance(max_diff_pixels=10)`` allows 10
pixels, whatever the ratio. The ratio's allowance is the whole number of
pixels it gives, worked out in decimal (``0.29`` of 100 pixels is 29, not
28.999...). Frames of two shapes never match.

The comparison (:func:`compare_frames`) is vectorised: an identical frame
costs one ``array_equal``; a differing one a few passes over its bytes.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Any, Final

import numpy as np

from gym_goldens.format.frames import format_shape

__all__ = [
    "FrameComparison",
    "PixelTolerance",
    "compare_frames",
    "pixel_differences",
]

_MAX_CHANNEL_DIFFERENCE: Final = 255


@dataclasses.dataclass(frozen=True)
class PixelTolerance:
    """How far a frame may be from its golden and still match (see the module's docstring).

    Attributes:
        pixel_atol: The largest difference of a channel that does not make
            its pixel differ (0 to 255).
        max_diff_pixels: How many pixels may differ; None: no such limit.
        max_diff_pixel_ratio: The fraction of the pixels that may differ (0
            to 1); None: no such limit.

    Example:
        >>> PixelTolerance(max_diff_pixels=10).allowed_pixels(3072)
        10
        >>> PixelTolerance(max_diff_pixels=10, max_diff_pixel_ratio=0.001).allowed_pixels(3072)
        3

    Raises:
        TypeError: A value is not a whole number (``pixel_atol``,
            ``max_diff_pixels``) or a number (``max_diff_pixel_ratio``).
        ValueError: A value is negative, ``pixel_atol`` is above 255 or the
            ratio above 1.
    """

    pixel_atol: int = 0
    max_diff_pixels: int | None = None
    max_diff_pixel_ratio: float | None = None

    def __post_init__(self) -> None:
        atol = _whole("pixel_atol", self.pixel_atol)
        if atol > _MAX_CHANNEL_DIFFERENCE:
            raise ValueError(
                f"pixel_atol must be at most 255 (a channel of a uint8 frame differs by at "
                f"most 255), got {atol}"
            )
        object.__setattr__(self, "pixel_atol", atol)
        if self.max_diff_pixels is not None:
            object.__setattr__(
                self, "max_diff_pixels", _whole("max_diff_pixels", self.max_diff_pixels)
            )
        if self.max_diff_pixel_ratio is not None:
            ratio = _fraction("max_diff_pixel_ratio", self.max_diff_pixel_ratio)
            object.__setattr__(self, "max_diff_pixel_ratio", ratio)

    def allowed_pixels(self, total: int) -> int:
        """How many of ``total`` pixels may differ: the smaller allowance of the limits given."""
        allowances = []
        if self.max_diff_pixels is not None:
            allowances.append(self.max_diff_pixels)
        if self.max_diff_pixel_ratio is not None:
            # In decimal, as written: the float 0.29 times 100 is 28.999...
            allowances.append(math.floor(Fraction(repr(self.max_diff_pixel_ratio)) * total))
        return min(allowances, default=0)

    def allows(self, differing: int, total: int) -> bool:
        """Whether ``differing`` of ``total`` pixels differing is a match."""
        return differing <= self.allowed_pixels(total)

    def limits_text(self) -> str:
        """The limits given, for a message: ``max_diff_pixels 10 and max_diff_pixel_ratio 0.01``."""
        limits = []
        if self.max_diff_pixels is not None:
            limits.append(f"max_diff_pixels {self.max_diff_pixels:,}")
        if self.max_diff_pixel_ratio is not None:
            limits.append(f"max_diff_pixel_ratio {self.max_diff_pixel_ratio!r}")
        return " and ".join(limits)


def _fraction(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(
            f"{name} must be a number from 0 to 1, got {type(value).__name__} {value!r}"
        )
    if not 0 <= value <= 1:  # NaN fails too
        raise ValueError(f"{name} must be from 0 to 1, got {value!r}")
    return float(value)


def _whole(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be a whole number, got {type(value).__name__} {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be zero or more, got {value!r}")
    return int(value)


@dataclasses.dataclass(frozen=True)
class FrameComparison:
    """What :func:`compare_frames` found: data, described by :meth:`describe`.

    Attributes:
        golden_shape: The golden frame's shape.
        actual_shape: The actual frame's shape.
        tolerance: The tolerance compared with.
        total: The pixels of the golden frame (``H * W``).
        differing: The pixels that differ beyond ``pixel_atol`` (0 when the
            shapes differ: no pixel is compared).
        largest_difference: The largest difference of a channel, over the
            frame (0 for identical frames).
        rows: The first and last row holding a differing pixel, or None.
        cols: The first and last column holding a differing pixel, or None.
    """

    golden_shape: tuple[int, ...]
    actual_shape: tuple[int, ...]
    tolerance: PixelTolerance
    total: int
    differing: int = 0
    largest_difference: int = 0
    rows: tuple[int, int] | None = None
    cols: tuple[int, int] | None = None

    @property
    def shape_matches(self) -> bool:
        """Whether the frames have one shape (and so were compared pixel by pixel)."""
        return self.golden_shape == self.actual_shape

    @property
    def ratio(self) -> float:
        """The fraction of the pixels that differ."""
        return self.differing / self.total if self.total else 0.0

    @property
    def matches(self) -> bool:
        """Whether the actual frame matches the golden within the tolerance."""
        return self.shape_matches and self.tolerance.allows(self.differing, self.total)

    def describe(self) -> str:
        """The comparison in words, as a failure message gives it.

        Example:
            >>> print(FrameComparison(
            ...     (48, 64, 3), (48, 64, 3), PixelTolerance(), 3072, 143, 190, (20, 27), (30, 41)
            ... ).describe())  # doctest: +NORMALIZE_WHITESPACE
            143 of 3,072 pixels differ beyond pixel_atol 0 (4.7%), largest channel difference 190,
            rows 20-27, cols 30-41
        """
        if not self.shape_matches:
            return (
                f"the frames differ in shape: golden {format_shape(self.golden_shape)}, "
                f"actual {format_shape(self.actual_shape)}"
            )
        atol = self.tolerance.pixel_atol
        parts = [
            f"{self.differing:,} of {self.total:,} pixels differ beyond pixel_atol {atol} "
            f"({_percent(self.differing, self.total)})"
        ]
        if self.largest_difference:
            parts.append(f"largest channel difference {self.largest_difference}")
        if self.rows is not None and self.cols is not None:
            parts += [_span("row", self.rows), _span("col", self.cols)]
        text = ", ".join(parts)
        limits = self.tolerance.limits_text()
        if limits:
            allowed = self.tolerance.allowed_pixels(self.total)
            verb = "allows" if " and " not in limits else "allow"
            text += f"; {limits} {verb} {allowed:,}"
        return text


def _percent(part: int, whole: int) -> str:
    """``4.7%``; a share that one decimal would show as 0% or 100% says so."""
    if not part or not whole:
        return "0%"
    if part == whole:
        return "100%"
    percent = 100 * part / whole
    if percent < 0.1:
        return "<0.1%"
    if percent > 99.9:
        return ">99.9%"
    return f"{percent:.1f}%"


def _span(name: str, span: tuple[int, int]) -> str:
    first, last = span
    return f"{name} {first}" if first == last else f"{name}s {first}-{last}"


def pixel_differences(
    golden: np.ndarray[Any, Any], actual: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """The largest channel difference of each pixel of two frames of one shape: ``H x W`` uint8.

    A pixel differs beyond ``pixel_atol`` where this is above it: the one
    place that says which pixels differ (the comparison and the diff image).

    Raises:
        TypeError: A frame is not a uint8 array of 2 or 3 dimensions.
        ValueError: The frames' shapes differ.
    """
    _check_frame("golden", golden)
    _check_frame("actual", actual)
    if golden.shape != actual.shape:
        raise ValueError(
            f"frames of two shapes have no pixel differences: golden "
            f"{format_shape(golden.shape)}, actual {format_shape(actual.shape)}"
        )
    # |a - b| in uint8, without wrapping around: max - min.
    difference: np.ndarray[Any, Any] = np.maximum(golden, actual)
    difference -= np.minimum(golden, actual)
    if difference.ndim == 2:
        return difference
    # Channel by channel: a reduction along a short last axis is several times slower.
    largest: np.ndarray[Any, Any] = difference[:, :, 0].copy()
    for channel in range(1, difference.shape[2]):
        np.maximum(largest, difference[:, :, channel], out=largest)
    return largest


def _check_frame(name: str, frame: object) -> None:
    if not isinstance(frame, np.ndarray) or frame.dtype != np.uint8 or frame.ndim not in (2, 3):
        found = (
            f"dtype {frame.dtype} and shape {format_shape(frame.shape) or '()'}"
            if isinstance(frame, np.ndarray)
            else type(frame).__name__
        )
        raise TypeError(f"the {name} frame must be a uint8 array H x W (x C), got {found}")


def compare_frames(
    golden: np.ndarray[Any, Any],
    actual: np.ndarray[Any, Any],
    tolerance: PixelTolerance | None = None,
) -> FrameComparison:
    """Compare an actual frame with its golden, within ``tolerance`` (exact by default).

    Example:
        >>> import numpy as np
        >>> golden = np.zeros((48, 64, 3), np.uint8)
        >>> actual = golden.copy()
        >>> actual[20:28, 30:42] = (190, 0, 0)
        >>> result = compare_frames(golden, actual, PixelTolerance(max_diff_pixels=100))
        >>> result.matches, result.differing, result.rows, result.cols
        (True, 96, (20, 27), (30, 41))

    Raises:
        TypeError: A frame is not a uint8 array of 2 or 3 dimensions.
    """
    tolerance = tolerance or PixelTolerance()
    _check_frame("golden", golden)
    _check_frame("actual", actual)
    golden_shape, actual_shape = tuple(golden.shape), tuple(actual.shape)
    total = golden_shape[0] * golden_shape[1]
    if golden_shape != actual_shape:
        return FrameComparison(golden_shape, actual_shape, tolerance, total)
    if np.array_equal(golden, actual):
        return FrameComparison(golden_shape, actual_shape, tolerance, total)
    largest = pixel_differences(golden, actual)
    differs = largest > tolerance.pixel_atol
    differing = int(np.count_nonzero(differs))
    rows = cols = None
    if differing:
        rows = _first_and_last(np.any(differs, axis=1))
        cols = _first_and_last(np.any(differs, axis=0))
    return FrameComparison(
        golden_shape,
        actual_shape,
        tolerance,
        total,
        differing,
        int(largest.max()),
        rows,
        cols,
    )


def _first_and_last(flags: np.ndarray[Any, Any]) -> tuple[int, int]:
    indices = np.flatnonzero(flags)
    return int(indices[0]), int(indices[-1])
