"""Statistics of a differing array, for failure messages.

When the first differing record holds an array in full on both sides (an
observation, an action mask, an image stored with ``max_array_size=None``),
the field-by-field differences show at most a few elements. This module
measures the whole array: how many elements are out of tolerance, the largest
difference and where the first one is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import numpy as np

from gym_goldens.comparison.floats import arrays_match
from gym_goldens.comparison.tolerance import ToleranceNode
from gym_goldens.format.codec import ArraySummary
from gym_goldens.format.fields import FieldPath

__all__ = ["ArrayDelta", "array_deltas", "numeric_pair", "summarise_like", "summary_matches"]


@dataclasses.dataclass(frozen=True)
class ArrayDelta:
    """How much one array differs.

    Attributes:
        path: The array's field, such as ``("obs", "image")``.
        shape: Its shape.
        differing: Elements out of tolerance.
        max_abs: The largest ``|actual - golden|`` among them (inf when an
            infinity or NaN stands against a number).
        first: The index of the first of them.
    """

    path: FieldPath
    shape: tuple[int, ...]
    differing: int
    max_abs: float
    first: tuple[int, ...]

    @property
    def size(self) -> int:
        """The number of elements."""
        return int(np.prod(self.shape)) if self.shape else 1


def array_deltas(
    golden: Any, actual: Any, paths: Iterable[FieldPath], root: ToleranceNode
) -> tuple[ArrayDelta, ...]:
    """Measure the arrays that contain the differing ``paths`` of two records.

    An array is the outermost list, along a path, that reads as a numeric
    numpy array of the same shape on both sides. Paths outside any such array
    are skipped.
    """
    found: dict[FieldPath, ArrayDelta] = {}
    for path in paths:
        located = _locate(golden, actual, path, root)
        if located is None:
            continue
        array_path, golden_array, actual_array, node = located
        if array_path not in found:
            delta = _measure(array_path, golden_array, actual_array, node)
            if delta is not None:
                found[array_path] = delta
    return tuple(found.values())


def summarise_like(summary: ArraySummary, value: Any) -> ArraySummary | None:
    """The summary of ``value``, an array written in full, read as ``summary``'s dtype.

    None when ``value`` is not an array of that dtype and shape, or the
    summary is of an array of objects, whose items cannot be rebuilt from
    what was read.
    """
    try:
        dtype = np.dtype(summary.dtype)
        if dtype.hasobject:
            return None
        array = np.asarray(value, dtype=dtype)
    except (ValueError, TypeError, OverflowError):
        return None
    if array.shape != summary.shape:
        return None
    return ArraySummary.of(array)


def summary_matches(golden: Any, actual: Any) -> bool:
    """Whether an array stored as a summary on one side is the full array on the other.

    A golden written with the default ``max_array_size`` then matches a
    recording that keeps its arrays in full, and the other way round.
    """
    if isinstance(golden, ArraySummary) and isinstance(actual, list):
        return summarise_like(golden, actual) == golden
    if isinstance(actual, ArraySummary) and isinstance(golden, list):
        return summarise_like(actual, golden) == actual
    return False


def numeric_pair(
    golden: list[Any], actual: list[Any]
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
    """Two lists as numeric arrays of one shape, when their elements are all of one type.

    Every element of both must be a float, or every one an int (not a bool):
    then comparing the arrays element by element is comparing the values, a
    change of type included. None otherwise (ragged lists, mixed types).
    """
    try:
        golden_array, actual_array = np.asarray(golden), np.asarray(actual)
    except (ValueError, TypeError, OverflowError):
        return None
    kind = golden_array.dtype.kind
    if (
        golden_array.shape != actual_array.shape
        or golden_array.ndim == 0
        or kind not in "if"
        or actual_array.dtype.kind != kind
    ):
        return None
    wanted = float if kind == "f" else int
    if not (_all_of_type(golden, wanted) and _all_of_type(actual, wanted)):
        return None
    return golden_array, actual_array


def _all_of_type(value: list[Any], wanted: type) -> bool:
    # np.asarray has already checked the nesting: a list holds lists or leaves only.
    if value and type(value[0]) is list:
        return all(_all_of_type(item, wanted) for item in value)
    return all(type(item) is wanted for item in value)


def _locate(
    golden: Any, actual: Any, path: FieldPath, node: ToleranceNode
) -> tuple[FieldPath, np.ndarray[Any, Any], np.ndarray[Any, Any], ToleranceNode] | None:
    for depth, segment in enumerate(path):
        if isinstance(golden, list) and isinstance(actual, list):
            golden_array, actual_array = _numeric(golden), _numeric(actual)
            if (
                golden_array is not None
                and actual_array is not None
                and golden_array.shape == actual_array.shape
            ):
                return path[:depth], golden_array, actual_array, node
        try:
            golden, actual = golden[segment], actual[segment]
        except (KeyError, IndexError, TypeError):
            return None
        node = node.child(segment)
    return None


def _numeric(value: list[Any]) -> np.ndarray[Any, Any] | None:
    try:
        array = np.asarray(value)
    except (ValueError, TypeError):
        return None
    if array.dtype.kind not in "biuf" or array.ndim == 0 or array.size < 2:
        return None
    return array


def _measure(
    path: FieldPath,
    golden: np.ndarray[Any, Any],
    actual: np.ndarray[Any, Any],
    node: ToleranceNode,
) -> ArrayDelta | None:
    far = ~arrays_match(golden, actual, node.rtol, node.atol)
    count = int(far.sum())
    if not count:
        return None
    if golden.dtype.kind == "f" or actual.dtype.kind == "f":
        with np.errstate(invalid="ignore", over="ignore"):
            spread = np.abs(actual[far].astype(np.float64) - golden[far].astype(np.float64))
        # An infinity or NaN against a number is infinitely far off.
        largest = float("inf") if not np.isfinite(spread).all() else float(spread.max())
    else:
        spread = np.abs(actual[far].astype(np.int64) - golden[far].astype(np.int64))
        largest = float(spread.max())
    first = tuple(int(i) for i in np.argwhere(far)[0])
    return ArrayDelta(path, tuple(golden.shape), count, largest, first)
