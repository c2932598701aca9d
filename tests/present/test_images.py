"""Frames as pictures: diff images, triptychs, side by side, GIFs (``gym_goldens.present.images``).

The images are opened again and checked by their pixels.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageSequence

from gym_goldens.comparison.pixels import compare_frames, pixel_differences
from gym_goldens.format.frames import decode_png, is_image_like
from gym_goldens.format.limits import MAX_FRAME_PIXELS
from gym_goldens.present.images import (
    DIFF_COLOUR,
    TRIPTYCH_FILES,
    diff_image,
    display_rgb,
    side_by_side,
    write_gif,
    write_triptych_files,
)
from tests.support.frames import FIELD, cartpole_frames, pong_frame

MAGENTA = np.array(DIFF_COLOUR, np.uint8)


def highlighted(image: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Where an image is magenta."""
    return np.all(image == MAGENTA, axis=-1)


def read_png(path: Path) -> np.ndarray[Any, Any]:
    with Image.open(path) as image:
        assert image.format == "PNG"
        # A frame of few colours is a palette PNG: its pixels are its palette's colours.
        return np.array(image.convert("RGB") if image.mode == "P" else image)


def changed_pong() -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    golden = pong_frame(12)
    actual = golden.copy()
    actual[100:110, 60:70] = (92, 186, 92)  # a green block on the field
    actual[40, 3, 1] ^= 0x01  # one channel of one pixel, by 1
    return golden, actual


# --- the diff image ------------------------------------------------------------------------------


def test_the_diff_highlights_exactly_the_differing_pixels() -> None:
    golden, actual = changed_pong()
    image = diff_image(golden, actual)
    assert image.shape == (210, 160, 3)
    assert image.dtype == np.uint8
    expected = np.any(golden != actual, axis=2)
    assert np.array_equal(highlighted(image), expected)
    assert highlighted(image).sum() == compare_frames(golden, actual).differing == 101


def test_the_diff_leaves_out_differences_within_pixel_atol() -> None:
    golden, actual = changed_pong()
    image = diff_image(golden, actual, pixel_atol=1)
    assert highlighted(image).sum() == 100
    assert not highlighted(image)[40, 3]
    assert np.array_equal(highlighted(image), pixel_differences(golden, actual) > 1)


def test_the_rest_is_the_golden_in_dimmed_gray() -> None:
    golden, actual = changed_pong()
    image = diff_image(golden, actual)
    rest = image[~highlighted(image)]
    assert np.all(rest[:, 0] == rest[:, 1])
    assert np.all(rest[:, 1] == rest[:, 2])
    # Dimmed: black is 32, white 172; the golden's shapes keep their order of brightness.
    black = np.zeros((8, 8), np.uint8)
    assert diff_image(black, black)[0, 0].tolist() == [32] * 3
    white = np.full((8, 8, 3), 255, np.uint8)
    assert diff_image(white, white)[0, 0].tolist() == [172] * 3
    field, wall = image[150, 80, 0], image[200, 80, 0]  # the brown field, the white wall
    assert 32 < field < wall <= 172


def test_identical_frames_give_a_diff_without_highlights() -> None:
    frame = pong_frame(3)
    assert not highlighted(diff_image(frame, frame.copy())).any()


@pytest.mark.parametrize("shape", [(32, 48), (32, 48, 1), (32, 48, 4)])
def test_gray_and_rgba_frames_have_diff_images(shape: tuple[int, ...]) -> None:
    golden = np.random.default_rng(1).integers(0, 256, shape, dtype=np.uint8)
    actual = golden.copy()
    actual[5:9, 10:20] ^= 0x80
    image = diff_image(golden, actual)
    assert image.shape == (32, 48, 3)
    expected = np.zeros((32, 48), bool)
    expected[5:9, 10:20] = True
    assert np.array_equal(highlighted(image), expected)


def test_frames_of_two_shapes_give_both_on_stripes() -> None:
    golden, actual = pong_frame(1), pong_frame(1)[::2, ::2].copy()
    image = diff_image(golden, actual)
    border = 6
    assert image.shape == (210 + 2 * border, 160 + 80 + 3 * border, 3)
    assert np.array_equal(image[border : border + 210, border : border + 160], golden)
    right = 2 * border + 160
    assert np.array_equal(image[border : border + 105, right : right + 80], actual)
    # The stripes: magenta around the frames, and below the smaller one.
    assert highlighted(image[:border]).any()
    below = highlighted(image[border + 105 :, right : right + 80])
    assert below.mean() == pytest.approx(0.5, abs=0.1)


# A golden's frame may have any shape of at most MAX_FRAME_PIXELS pixels: a
# hostile one (8 x 2,097,152) beside the actual frame, or beside another made
# to cross it, must not make a picture past that many pixels either.
LONG = (8, MAX_FRAME_PIXELS // 8)


@pytest.mark.parametrize(
    "actual",
    [np.zeros(LONG[::-1], np.uint8), np.zeros((48, 64, 3), np.uint8)],
    ids=["crossed", "beside a real frame"],
)
def test_frames_of_hostile_shapes_give_a_diff_within_the_pixel_limit(
    actual: np.ndarray[Any, Any],
) -> None:
    golden = np.zeros(LONG, np.uint8)
    golden[:, ::3] = 200
    image = diff_image(golden, actual)
    assert is_image_like(image)
    assert highlighted(image).any()
    picture = side_by_side(golden, actual, image)
    assert picture.shape[0] * picture.shape[1] <= MAX_FRAME_PIXELS


def test_two_large_frames_of_two_shapes_give_their_triptych_files(tmp_path: Path) -> None:
    golden = np.full((4096, 4096), 90, np.uint8)
    actual = np.full((4096, 4000), 90, np.uint8)
    written = write_triptych_files(tmp_path, golden, actual)
    with Image.open(written[2]) as diff:
        assert diff.width * diff.height <= MAX_FRAME_PIXELS


# --- the triptych files --------------------------------------------------------------------------


def test_the_triptych_files_hold_the_frames_and_their_diff(tmp_path: Path) -> None:
    golden, actual = changed_pong()
    paths = write_triptych_files(tmp_path / "step_12", golden, actual)
    assert [path.name for path in paths] == list(TRIPTYCH_FILES)
    assert sorted(path.name for path in (tmp_path / "step_12").iterdir()) == sorted(TRIPTYCH_FILES)
    assert np.array_equal(read_png(paths[0]), golden)
    assert np.array_equal(read_png(paths[1]), actual)
    diff = read_png(paths[2])
    assert np.array_equal(diff, diff_image(golden, actual))
    assert np.array_equal(highlighted(diff), np.any(golden != actual, axis=2))


def test_the_triptych_of_real_cartpole_frames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    frames = cartpole_frames(6)
    golden, actual = frames[0], frames[5]
    _, actual_path, diff_path = write_triptych_files(tmp_path, golden, actual)
    diff = read_png(diff_path)
    assert np.array_equal(read_png(actual_path), actual)
    assert np.array_equal(highlighted(diff), pixel_differences(golden, actual) > 0)
    comparison = compare_frames(golden, actual)
    rows, cols = np.nonzero(highlighted(diff))
    assert (rows.min(), rows.max()) == comparison.rows
    assert (cols.min(), cols.max()) == comparison.cols


def test_the_triptych_replaces_a_symlink_and_leaves_its_target(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    folder = tmp_path / "images"
    folder.mkdir()
    (folder / "diff.png").symlink_to(target)
    golden, actual = changed_pong()
    write_triptych_files(folder, golden, actual)
    assert target.read_text() == "keep me"
    assert not (folder / "diff.png").is_symlink()
    assert highlighted(read_png(folder / "diff.png")).any()


def test_a_gray_triptych_keeps_the_frames_shape(tmp_path: Path) -> None:
    golden = np.zeros((20, 30, 1), np.uint8)
    actual = golden.copy()
    actual[3, 4] = 200
    paths = write_triptych_files(tmp_path, golden, actual)
    stored = decode_png(paths[1].read_bytes(), path=paths[1], expected_shape=(20, 30, 1))
    assert np.array_equal(stored, actual)


# --- side by side --------------------------------------------------------------------------------


def test_side_by_side_shows_the_three_in_order() -> None:
    golden, actual = changed_pong()
    diff = diff_image(golden, actual)
    picture = side_by_side(golden, actual, diff)
    margin, label = 8, 16
    top = margin + label
    assert picture.shape == (top + 210 + margin, margin + 3 * (160 + margin), 3)
    for index, panel in enumerate((golden, actual, diff)):
        left = margin + index * (160 + margin)
        assert np.array_equal(picture[top : top + 210, left : left + 160], panel)


def test_side_by_side_labels_the_panels() -> None:
    golden, actual = changed_pong()
    picture = side_by_side(golden, actual, diff_image(golden, actual))
    band = picture[:24]
    background = band[0, 0]
    # Light text in each panel's label band, on the dark background.
    for index in range(3):
        left = 8 + index * 168
        label = band[:, left : left + 60]
        assert (label.max(axis=2) > 150).any()
        assert np.all(band[:4] == background)


def test_small_frames_are_enlarged_in_square_blocks() -> None:
    golden = np.arange(16 * 16, dtype=np.uint8).reshape(16, 16)
    actual = golden.copy()
    actual[2, 3] = 0
    picture = side_by_side(golden, actual, diff_image(golden, actual))
    scale = 8  # 16 rows shown at 128, within 192
    top, left = 8 + 16, 8
    panel = picture[top : top + 16 * scale, left : left + 16 * scale, 0]
    assert np.array_equal(panel, np.kron(golden, np.ones((scale, scale), np.uint8)))
    diff_left = 8 + 2 * (16 * scale + 8)
    row, col = top + 2 * scale, diff_left + 3 * scale
    block = picture[row : row + scale, col : col + scale]
    assert highlighted(block).all()


def test_an_rgba_frame_shows_over_a_checkerboard() -> None:
    frame = np.zeros((16, 16, 4), np.uint8)
    frame[..., 0] = 255
    frame[:, 8:, 3] = 255  # the right half opaque red, the left transparent
    shown = display_rgb(frame)
    assert shown[:, 8:].tolist() == [[[255, 0, 0]] * 8] * 16
    left = shown[:, :8]
    assert left[0, 0].tolist() == [200, 200, 200]
    assert left[8, 0].tolist() == [150, 150, 150]


# --- GIFs ----------------------------------------------------------------------------------------


def test_an_episode_becomes_a_looping_gif(tmp_path: Path) -> None:
    frames = [pong_frame(t) for t in range(6)]
    path = tmp_path / "episode_0.gif"
    write_gif(path, frames, fps=20)
    with Image.open(path) as image:
        assert image.format == "GIF"
        assert image.info["loop"] == 0
        shown = [np.array(frame.convert("RGB")) for frame in ImageSequence.Iterator(image)]
        durations = [frame.info["duration"] for frame in ImageSequence.Iterator(image)]
    assert len(shown) == 6
    assert set(durations) == {50}
    # Pong has few colours: the GIF's palette holds them all, so the frames are exact.
    for got, frame in zip(shown, frames, strict=True):
        assert np.array_equal(got, frame)
    assert tuple(shown[0][150, 80]) == FIELD


def test_a_gif_is_deterministic(tmp_path: Path) -> None:
    frames = [pong_frame(t) for t in range(4)]
    write_gif(tmp_path / "a.gif", frames, fps=15)
    write_gif(tmp_path / "b.gif", [frame.copy() for frame in frames], fps=15)
    assert (tmp_path / "a.gif").read_bytes() == (tmp_path / "b.gif").read_bytes()


@pytest.mark.parametrize(
    ("frames", "fps", "message"),
    [
        ([], 10, "expected at least one frame"),
        ([pong_frame(0), pong_frame(0)[::2]], 10, "expected image-like frames of one shape"),
        ([np.zeros((4, 4), np.uint8)], 10, "expected image-like frames"),
        ([pong_frame(0)], 0, "fps must be above 0"),
        ([pong_frame(0)], float("nan"), "fps must be above 0"),
        # A GIF holds a frame's delay in 16 bits of centiseconds: 655.35 s at most.
        ([pong_frame(0)], 1e-9, "fps must be at least 0.00153"),
        ([pong_frame(0)], 0.0015, "fps must be at least 0.00153"),
    ],
)
def test_a_gif_of_bad_input_is_refused(
    tmp_path: Path, frames: list[Any], fps: float, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        write_gif(tmp_path / "x.gif", frames, fps)
    assert not (tmp_path / "x.gif").exists()
