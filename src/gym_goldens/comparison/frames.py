"""Frames of two recordings compared: by digest first, then by their decoded pixels.

A record refers to a frame by a reference (:class:`~gym_goldens.format.frames.FrameRef`):
file, digest of the pixels, shape. Two references with one digest and shape
hold the same pixels: they match and nothing is read. Otherwise both PNG files
are read (:func:`~gym_goldens.format.frames.read_frame`: the path check, the
limits against hostile files, the digest checked) and compared within the
pixel tolerance of their field (:func:`~gym_goldens.comparison.pixels.compare_frames`,
the tolerance from the tree of :mod:`gym_goldens.comparison.tolerance`).

A frame against an array kept as a summary (a golden recorded with
``images="summary"``) compares by digest: a frame's digest is that of the
summary of its pixels. A frame against an array kept in full compares by
pixels. Anything else against a frame is a change of type.

The decoded frames of each recording folder count against a budget of
``max_decompressed_size`` bytes, as its compressed lines do, so that no
golden, however many frames it names, makes a comparison decode without end.

:class:`FramePairs` does this for the engine: :meth:`FramePairs.settle` makes
each actual frame that matches its golden the golden's own value, so that the
walk of the records finds nothing left to compare there, and gives each frame
that does not match as a :class:`~gym_goldens.comparison.result.Difference`
carrying its :class:`~gym_goldens.comparison.pixels.FrameComparison`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, NamedTuple

import numpy as np

from gym_goldens.comparison.pixels import FrameComparison, PixelTolerance, compare_frames
from gym_goldens.comparison.result import Difference
from gym_goldens.comparison.tolerance import ToleranceNode
from gym_goldens.format.codec import ArraySummary, TaggedValue
from gym_goldens.format.fields import FieldPath
from gym_goldens.format.frames import FRAME_TAG, FrameRef, StoredFrame
from gym_goldens.format.limits import RAISE_THE_LIMIT, DecompressionBudget

__all__ = ["FramePairs", "holds_frames", "is_frame"]

_MARKER: Final = b'"' + FRAME_TAG.encode() + b'"'
_UINT8_MAX: Final = 255


def is_frame(value: object) -> bool:
    """Whether a parsed value is a frame reference (a ``$frame`` tag)."""
    return isinstance(value, TaggedValue) and value.tag == FRAME_TAG


def holds_frames(*lines: bytes) -> bool:
    """Whether any of the record lines holds a frame reference."""
    return any(_MARKER in line for line in lines)


class _Where(NamedTuple):
    """Where two records are: the golden's and the actual recording file, the golden's line."""

    files: tuple[Path, Path]
    line: int | None


_FRAMES_REFUSAL: Final = (
    "the frames of this recording decode to more than {limit} in one comparison, the limit "
    "for what a recording may expand to; the golden is damaged or made to exhaust the "
    "machine. " + RAISE_THE_LIMIT
)


class FramePairs:
    """The frames of the records of one comparison, compared pair by pair.

    Args:
        root: The comparison's tolerance tree (its pixel tolerances).
        max_decompressed_size: What the decoded frames of each recording
            folder may take, in bytes.
    """

    def __init__(self, root: ToleranceNode, max_decompressed_size: int) -> None:
        self.root = root
        self.limit = max_decompressed_size
        self._budgets: dict[Path, DecompressionBudget] = {}

    def settle(
        self,
        golden: dict[str, Any],
        actual: dict[str, Any],
        files: tuple[Path, Path],
        line: int | None = None,
        *,
        hide_differing: bool = False,
    ) -> list[Difference]:
        """Compare the frames of two parsed records; those that match become the golden's.

        Args:
            golden: The golden record; left as it is.
            actual: The actual record; each frame that matches its golden
                within tolerance is replaced by the golden's value.
            files: The golden's and the actual recording file.
            line: The golden's line, named in errors.
            hide_differing: Replace the frames that differ too (their
                differences are returned), for an explanation of the rest.

        Returns:
            A difference per frame that does not match, in record order.

        Raises:
            GoldenFormatError: A reference is not valid, or a frame file is
                missing, damaged, too large or not of its digest.
            UnsafeGoldenPathError: A frame or its folder is a symlink.
        """
        where = _Where(files, line)
        found: list[Difference] = []

        def visit(
            path: FieldPath, golden_value: Any, actual_value: Any, node: ToleranceNode
        ) -> bool:
            difference = self._pair(path, (golden_value, actual_value), node, where)
            if difference is not None:
                found.append(difference)
            return difference is None or hide_differing

        _walk(golden, actual, self.root, (), visit)
        return found

    def _pair(
        self, path: FieldPath, values: tuple[Any, Any], node: ToleranceNode, where: _Where
    ) -> Difference | None:
        """The difference of one pair of values, one of them a frame; None when they match."""
        sides = [
            StoredFrame(file.parent, FrameRef.from_tagged(value, path=file, line=where.line))
            if is_frame(value)
            else value
            for value, file in zip(values, where.files, strict=True)
        ]
        golden_side, actual_side = sides
        if isinstance(golden_side, StoredFrame) and isinstance(actual_side, StoredFrame):
            comparison = self._compare(golden_side, actual_side, node.pixels)
            if comparison is None or comparison.matches:
                return None
            return Difference(path, "value", golden_side, actual_side, pixels=comparison)
        frame, other = (
            (golden_side, actual_side)
            if isinstance(golden_side, StoredFrame)
            else (actual_side, golden_side)
        )
        assert isinstance(frame, StoredFrame)
        if isinstance(other, ArraySummary):
            if _summary_of(other, frame.ref):
                return None
            return Difference(path, "value", golden_side, actual_side)
        pixels = _pixels_of(other, frame.ref)
        if pixels is None:
            return Difference(path, "type", golden_side, actual_side)
        stored = frame.read(self._budget(frame.folder))
        pair = (stored, pixels) if frame is golden_side else (pixels, stored)
        comparison = compare_frames(*pair, node.pixels)
        if comparison.matches:
            return None
        return Difference(path, "value", golden_side, actual_side, pixels=comparison)

    def _compare(
        self, golden: StoredFrame, actual: StoredFrame, tolerance: PixelTolerance
    ) -> FrameComparison | None:
        """The two frames compared by pixels; None when their digests say they are equal."""
        if golden.ref.digest == actual.ref.digest and golden.ref.shape == actual.ref.shape:
            return None
        golden_pixels = golden.read(self._budget(golden.folder))
        actual_pixels = actual.read(self._budget(actual.folder))
        return compare_frames(golden_pixels, actual_pixels, tolerance)

    def _budget(self, folder: Path) -> DecompressionBudget:
        budget = self._budgets.get(folder)
        if budget is None:
            budget = self._budgets[folder] = DecompressionBudget(self.limit, _FRAMES_REFUSAL)
        return budget


_Visit = Callable[[FieldPath, Any, Any, ToleranceNode], bool]


def _walk(golden: Any, actual: Any, node: ToleranceNode, path: FieldPath, visit: _Visit) -> None:
    """Visit the pairs of values of which one is a frame; a visit that says so settles it.

    A settled pair's actual value becomes the golden's. Values of one side
    only, and ignored fields, are left to the walk of the records.
    """
    if isinstance(golden, dict) and isinstance(actual, dict):
        keys: list[Any] = [key for key in golden if key in actual]
    elif isinstance(golden, list) and isinstance(actual, list) and len(golden) == len(actual):
        keys = list(range(len(golden)))
    else:
        return
    for key in keys:
        child = node.child(key)
        if child.ignored:
            continue
        golden_value, actual_value = golden[key], actual[key]
        if is_frame(golden_value) or is_frame(actual_value):
            if visit((*path, key), golden_value, actual_value, child):
                actual[key] = golden_value
        else:
            _walk(golden_value, actual_value, child, (*path, key), visit)


def _summary_of(summary: ArraySummary, ref: FrameRef) -> bool:
    """Whether an array summary is that of a frame's pixels: by digest."""
    return summary.dtype == "uint8" and summary.shape == ref.shape and summary.digest == ref.digest


def _pixels_of(value: Any, ref: FrameRef) -> np.ndarray[Any, Any] | None:
    """An array kept in full, as the pixels of a frame of ``ref``'s shape; None if it is none."""
    if not isinstance(value, list):
        return None
    try:
        array = np.asarray(value)
    except (ValueError, TypeError, OverflowError):
        return None
    if array.shape != ref.shape or array.dtype.kind not in "iu":
        return None
    if array.size and (array.min() < 0 or array.max() > _UINT8_MAX):
        return None
    return array.astype(np.uint8)
