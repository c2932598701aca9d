"""Frames of two recordings compared: digests first, then pixels within the pixel tolerance."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gym_goldens import RecordTrajectory, Tolerance, compare
from gym_goldens.comparison.pixels import PixelTolerance
from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.frames import StoredFrame
from tests.support.frames import PaintedEnv

PATCH = (5, slice(20, 28), slice(30, 42), 190)  # 96 pixels from step 5 on


def record(folder: Path, *, patch: Any = None, steps: int = 8, **options: Any) -> Path:
    env = RecordTrajectory(PaintedEnv(patch=patch), folder, render=True, **options)
    env.reset(seed=0)
    for t in range(steps):
        env.step(t % 2)
    env.close()
    return folder


def test_frames_of_one_digest_match_without_being_read(tmp_path: Path) -> None:
    golden, actual = record(tmp_path / "golden"), record(tmp_path / "actual")
    shutil.rmtree(golden / "frames")  # equal digests: no file is read
    shutil.rmtree(actual / "frames")
    assert compare(golden, actual).equal


def test_differing_frames_are_compared_by_pixels_within_the_tolerance(tmp_path: Path) -> None:
    golden = record(tmp_path / "golden")
    actual = record(tmp_path / "actual", patch=PATCH)
    comparison = compare(golden, actual)
    assert not comparison.equal
    (episode,) = comparison.episodes
    assert episode.differing_records == 4  # steps 5 to 8
    assert episode.first is not None
    (difference,) = episode.first.differences
    assert difference.path == ("render",)
    assert difference.pixels is not None
    assert (difference.pixels.differing, difference.pixels.rows, difference.pixels.cols) == (
        96,
        (20, 27),
        (30, 41),
    )
    assert isinstance(difference.golden, StoredFrame)
    assert difference.golden.folder == golden
    assert compare(golden, actual, Tolerance().refine(max_diff_pixels=96)).equal
    assert compare(golden, actual, Tolerance().refine(max_diff_pixels={"render": 96})).equal
    assert not compare(golden, actual, Tolerance().refine(max_diff_pixels={"obs": 96})).equal
    assert compare(golden, actual, Tolerance(ignore=("render",))).equal


def test_a_frame_whose_file_lost_its_pixels_is_unreadable(tmp_path: Path) -> None:
    golden = record(tmp_path / "golden")
    actual = record(tmp_path / "actual", patch=PATCH)
    (golden / "frames/e00000_t000005_render.png").write_bytes(
        (golden / "frames/e00000_t000004_render.png").read_bytes()
    )
    with pytest.raises(GoldenFormatError, match="do not match the digest the recording gives"):
        compare(golden, actual)


def test_the_decoded_frames_count_against_the_decompressed_size_limit(tmp_path: Path) -> None:
    golden = record(tmp_path / "golden")
    actual = record(tmp_path / "actual", patch=PATCH)
    frame = 48 * 64 * 3  # four frames differ on each side, the first explained once more
    compare(golden, actual, max_decompressed_size=5 * frame)
    with pytest.raises(GoldenFormatError, match=r"frames of this recording decode to more than"):
        compare(golden, actual, max_decompressed_size=3 * frame)


def test_a_frame_against_a_summary_or_a_full_array_of_the_same_pixels_matches(
    tmp_path: Path,
) -> None:
    def image_obs(folder: Path, patch: Any = None, **options: Any) -> Path:
        env = RecordTrajectory(PaintedEnv(patch=patch, image_obs=True), folder, **options)
        env.reset(seed=0)
        for t in range(6):
            env.step(t % 2)
        env.close()
        return folder

    frames = image_obs(tmp_path / "frames", images="frames")
    summaries = image_obs(tmp_path / "summaries")
    full = image_obs(tmp_path / "full", max_array_size=None)
    for one, other in [(summaries, frames), (frames, summaries), (full, frames), (frames, full)]:
        assert compare(one, other).equal, (one.name, other.name)
    changed = image_obs(tmp_path / "changed", patch=PATCH, images="frames")
    by_digest = compare(summaries, changed)
    assert by_digest.episodes[0].first is not None
    assert by_digest.episodes[0].first.t == 5
    by_pixels = compare(full, changed, Tolerance().refine(max_diff_pixels=96))
    assert by_pixels.equal  # the golden's full array against the frame, pixel by pixel


def test_the_pixel_tolerance_is_set_by_field_pattern() -> None:
    tolerance = Tolerance().refine(pixel_atol=3, max_diff_pixels={"render": 10})
    root = tolerance.tree()
    assert root.child("render").pixels == PixelTolerance(3, 10)
    assert root.child("obs").child("image").pixels == PixelTolerance(3)
    # A number replaces the per-field values of its setting, as rtol's do.
    assert tolerance.refine(max_diff_pixels=2).tree().child("render").pixels == PixelTolerance(3, 2)
    assert "max_diff_pixels[render]=10" in tolerance.describe()
    with pytest.raises(ValueError, match=r"max_diff_pixel_ratio\['render'\] must be from 0 to 1"):
        Tolerance().refine(max_diff_pixel_ratio={"render": 2})
    with pytest.raises(TypeError, match="max_diff_pixels must be a whole number"):
        Tolerance().refine(max_diff_pixels=1.5)
    with pytest.raises(ValueError, match="not a record field"):
        Tolerance().refine(pixel_atol={"frame": 1})


def test_a_frame_against_no_image_is_a_change_of_type(tmp_path: Path) -> None:
    golden = record(tmp_path / "golden")
    line = (golden / "trajectory.jsonl").read_bytes().splitlines()
    # The reset's render replaced by a number: a frame against something else.
    reset = line[1].replace(line[1][line[1].index(b'"render":') :], b'"render":7}')
    (golden / "trajectory.jsonl").write_bytes(b"\n".join([line[0], reset, *line[2:]]) + b"\n")
    comparison = compare(golden, record(tmp_path / "actual"))
    first = comparison.episodes[0].first
    assert first is not None
    (difference,) = first.differences
    assert (difference.path, difference.kind, difference.golden) == (("render",), "type", 7)
    assert isinstance(difference.actual, StoredFrame)
    shown = PaintedEnv()
    shown.reset(seed=0)
    np.testing.assert_array_equal(difference.actual.read(), shown.render())
