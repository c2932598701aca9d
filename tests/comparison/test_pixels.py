"""Frames compared with a pixel tolerance (``gym_goldens.comparison.pixels``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gym_goldens.comparison.pixels import (
    FrameComparison,
    PixelTolerance,
    compare_frames,
    pixel_differences,
)
from tests.support.frames import cartpole_frames, pong_frame


def naive(golden: np.ndarray[Any, Any], actual: np.ndarray[Any, Any], atol: int) -> dict[str, Any]:
    """The comparison written out pixel by pixel, to hold the vectorised one to."""
    g = golden.reshape(golden.shape[0], golden.shape[1], -1).astype(int).tolist()
    a = actual.reshape(actual.shape[0], actual.shape[1], -1).astype(int).tolist()
    differing, largest, rows, cols = 0, 0, [], []
    for row in range(len(g)):
        for col in range(len(g[0])):
            worst = max(abs(x - y) for x, y in zip(g[row][col], a[row][col], strict=True))
            largest = max(largest, worst)
            if worst > atol:
                differing += 1
                rows.append(row)
                cols.append(col)
    return {
        "differing": differing,
        "largest": largest,
        "rows": (min(rows), max(rows)) if rows else None,
        "cols": (min(cols), max(cols)) if cols else None,
    }


def found(result: FrameComparison) -> dict[str, Any]:
    return {
        "differing": result.differing,
        "largest": result.largest_difference,
        "rows": result.rows,
        "cols": result.cols,
    }


# --- the tolerance -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"pixel_atol": -1}, ValueError, "pixel_atol must be zero or more, got -1"),
        ({"pixel_atol": 256}, ValueError, "pixel_atol must be at most 255"),
        ({"pixel_atol": 1.5}, TypeError, "pixel_atol must be a whole number, got float 1.5"),
        ({"pixel_atol": 2.0}, TypeError, "pixel_atol must be a whole number, got float 2.0"),
        ({"pixel_atol": True}, TypeError, "pixel_atol must be a whole number, got bool True"),
        ({"pixel_atol": "3"}, TypeError, "pixel_atol must be a whole number, got str '3'"),
        ({"max_diff_pixels": -5}, ValueError, "max_diff_pixels must be zero or more"),
        ({"max_diff_pixels": 10.0}, TypeError, "max_diff_pixels must be a whole number"),
        ({"max_diff_pixel_ratio": 1.5}, ValueError, "max_diff_pixel_ratio must be from 0 to 1"),
        ({"max_diff_pixel_ratio": -0.1}, ValueError, "max_diff_pixel_ratio must be from 0 to 1"),
        ({"max_diff_pixel_ratio": math.nan}, ValueError, "max_diff_pixel_ratio must be from 0"),
        ({"max_diff_pixel_ratio": "1%"}, TypeError, "max_diff_pixel_ratio must be a number"),
        ({"max_diff_pixel_ratio": False}, TypeError, "max_diff_pixel_ratio must be a number"),
    ],
)
def test_a_bad_tolerance_says_what_was_expected(
    arguments: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        PixelTolerance(**arguments)
    assert str(caught.value).startswith(message)


def test_numpy_numbers_are_accepted_as_plain_ones() -> None:
    tolerance = PixelTolerance(np.int64(3), np.uint8(7), np.float32(0.5))
    assert tolerance == PixelTolerance(3, 7, 0.5)
    assert type(tolerance.pixel_atol) is int
    assert type(tolerance.max_diff_pixels) is int
    assert type(tolerance.max_diff_pixel_ratio) is float


@pytest.mark.parametrize(
    ("tolerance", "allowed"),
    [
        (PixelTolerance(), 0),
        (PixelTolerance(pixel_atol=10), 0),
        (PixelTolerance(max_diff_pixels=12), 12),
        (PixelTolerance(max_diff_pixel_ratio=0.01), 30),  # 30.72 pixels: 30 may differ
        (PixelTolerance(max_diff_pixels=12, max_diff_pixel_ratio=0.01), 12),
        (PixelTolerance(max_diff_pixels=100, max_diff_pixel_ratio=0.01), 30),
        (PixelTolerance(max_diff_pixels=0, max_diff_pixel_ratio=1.0), 0),
        (PixelTolerance(max_diff_pixel_ratio=1), 3072),
    ],
)
def test_both_limits_must_hold_and_a_limit_left_out_is_none(
    tolerance: PixelTolerance, allowed: int
) -> None:
    assert tolerance.allowed_pixels(3072) == allowed
    assert tolerance.allows(allowed, 3072)
    assert not tolerance.allows(allowed + 1, 3072)


def test_the_ratio_is_taken_in_decimal() -> None:
    # 0.29 * 100 is 28.999999999999996 in floats; the user means 29 pixels.
    assert 0.29 * 100 < 29
    assert PixelTolerance(max_diff_pixel_ratio=0.29).allowed_pixels(100) == 29
    assert PixelTolerance(max_diff_pixel_ratio=0.1).allowed_pixels(30) == 3


# --- the comparison ------------------------------------------------------------------------------


def test_identical_frames_match() -> None:
    frame = pong_frame(4)
    result = compare_frames(frame, frame.copy())
    assert result.matches
    assert found(result) == {"differing": 0, "largest": 0, "rows": None, "cols": None}
    assert result.total == 210 * 160
    assert result.describe() == "0 of 33,600 pixels differ beyond pixel_atol 0 (0%)"


def test_a_pixel_differs_when_any_channel_differs_beyond_pixel_atol() -> None:
    golden = pong_frame()
    actual = golden.copy()
    actual[100, 50, 2] += 20  # the blue channel only
    assert compare_frames(golden, actual, PixelTolerance(pixel_atol=19)).differing == 1
    within = compare_frames(golden, actual, PixelTolerance(pixel_atol=20))
    assert within.differing == 0
    assert within.largest_difference == 20
    assert within.matches
    assert within.describe() == (
        "0 of 33,600 pixels differ beyond pixel_atol 20 (0%), largest channel difference 20"
    )


def test_differences_do_not_wrap_around() -> None:
    golden = np.full((16, 16, 3), 10, np.uint8)
    actual = golden.copy()
    actual[3, 4] = (200, 10, 0)
    result = compare_frames(golden, actual)
    assert result.largest_difference == 190
    assert int(pixel_differences(golden, actual)[3, 4]) == 190
    assert int(pixel_differences(actual, golden)[3, 4]) == 190


def test_the_issue_example_reads_as_the_issue_writes_it() -> None:
    golden = np.zeros((48, 64, 3), np.uint8)
    actual = golden.copy()
    actual[20:28, 30:42] = (190, 0, 0)  # 96 pixels
    result = compare_frames(golden, actual)
    assert (result.differing, result.largest_difference) == (96, 190)
    assert result.describe() == (
        "96 of 3,072 pixels differ beyond pixel_atol 0 (3.1%), largest channel difference 190, "
        "rows 20-27, cols 30-41"
    )
    assert not result.matches


def test_a_rectangle_of_changes_is_located_exactly() -> None:
    golden = pong_frame(0)
    actual = golden.copy()
    actual[60:63, 70:75] ^= 0x40
    result = compare_frames(golden, actual)
    assert found(result) == {"differing": 15, "largest": 64, "rows": (60, 62), "cols": (70, 74)}
    assert result.ratio == 15 / 33600


def test_one_changed_pixel_is_named_by_its_row_and_column() -> None:
    golden = pong_frame(0)
    actual = golden.copy()
    actual[5, 9, 0] = 0
    text = compare_frames(golden, actual).describe()
    assert text.endswith(", row 5, col 9")
    assert "1 of 33,600 pixels differ beyond pixel_atol 0 (<0.1%)" in text


@pytest.mark.parametrize(
    ("tolerance", "matches", "tail"),
    [
        (PixelTolerance(max_diff_pixels=15), True, "; max_diff_pixels 15 allows 15"),
        (PixelTolerance(max_diff_pixels=14), False, "; max_diff_pixels 14 allows 14"),
        (
            PixelTolerance(max_diff_pixel_ratio=0.0005),
            True,
            "; max_diff_pixel_ratio 0.0005 allows 16",
        ),
        (
            PixelTolerance(max_diff_pixels=100, max_diff_pixel_ratio=0.0004),
            False,
            "; max_diff_pixels 100 and max_diff_pixel_ratio 0.0004 allow 13",
        ),
    ],
)
def test_the_limits_decide_and_are_named(
    tolerance: PixelTolerance, matches: bool, tail: str
) -> None:
    golden = pong_frame(0)
    actual = golden.copy()
    actual[60:63, 70:75] ^= 0x40  # 15 pixels
    result = compare_frames(golden, actual, tolerance)
    assert result.matches is matches
    assert result.describe().endswith(tail)


@pytest.mark.parametrize(
    ("golden_shape", "actual_shape", "text"),
    [
        ((210, 160, 3), (105, 80, 3), "golden 210x160x3, actual 105x80x3"),
        ((210, 160, 3), (210, 160, 4), "golden 210x160x3, actual 210x160x4"),
        ((84, 84), (84, 84, 1), "golden 84x84, actual 84x84x1"),
    ],
)
def test_frames_of_two_shapes_never_match(
    golden_shape: tuple[int, ...], actual_shape: tuple[int, ...], text: str
) -> None:
    golden, actual = np.zeros(golden_shape, np.uint8), np.zeros(actual_shape, np.uint8)
    result = compare_frames(golden, actual, PixelTolerance(255, 10**9, 1.0))
    assert not result.shape_matches
    assert not result.matches
    assert result.describe() == f"the frames differ in shape: {text}"
    with pytest.raises(ValueError, match="frames of two shapes"):
        pixel_differences(golden, actual)


@pytest.mark.parametrize(
    "frame",
    [np.zeros((16, 16), np.float32), np.zeros(16, np.uint8), [[0] * 16] * 16],
    ids=["float", "1-d", "list"],
)
def test_what_is_no_frame_is_refused(frame: Any) -> None:
    with pytest.raises(TypeError, match="the actual frame must be a uint8 array"):
        compare_frames(np.zeros((16, 16), np.uint8), frame)


@settings(max_examples=80, deadline=None)
@given(
    data=st.data(),
    dims=st.tuples(st.integers(1, 12), st.integers(1, 12), st.sampled_from([None, 1, 3, 4])),
    atol=st.integers(0, 255),
)
def test_the_vectorised_comparison_agrees_with_a_pixel_by_pixel_one(
    data: st.DataObject, dims: tuple[int, int, int | None], atol: int
) -> None:
    height, width, channels = dims
    shape = (height, width) if channels is None else (height, width, channels)
    golden = data.draw(hnp.arrays(np.uint8, shape))
    # Mostly equal pixels, so that matches, small and large changes all occur.
    change = data.draw(hnp.arrays(np.int16, shape, elements=st.sampled_from([0, 0, 0, 1, -3, 200])))
    actual = np.clip(golden.astype(np.int16) + change, 0, 255).astype(np.uint8)
    result = compare_frames(golden, actual, PixelTolerance(pixel_atol=atol))
    assert found(result) == naive(golden, actual, atol)
    assert result.matches is (result.differing == 0)


def test_real_cartpole_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    first, _, third = cartpole_frames(3)
    golden, actual = first[::4, ::4], third[::4, ::4]  # the naive loop is slow on 400x600
    result = compare_frames(golden, actual)
    assert not result.matches
    assert found(result) == naive(golden, actual, 0)
    assert result.rows is not None
    # Only the cart and the pole move: the sky above and the track below stay.
    assert 0 < result.rows[0] <= result.rows[1] < golden.shape[0] - 1


def test_pong_frames_one_step_apart() -> None:
    golden, actual = pong_frame(7)[::2, ::2], pong_frame(8)[::2, ::2]
    result = compare_frames(golden, actual, PixelTolerance(pixel_atol=5))
    assert found(result) == naive(golden, actual, 5)
    assert result.differing > 0
