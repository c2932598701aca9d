"""Frames in the plugin: recorded, installed with the golden, compared pixel by pixel, shown."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gym_goldens.format.frames import decode_png, frame_digest, referenced_frames
from tests.support.frames import PaintedEnv, painted_test

GOLDEN = Path("goldens/test_painted/test_painted/Painted")
# Rows 20-27 and cols 30-41 of the 48x64 frame, from step 5 on: 96 pixels of 3,072.
PATCH = "(5, slice(20, 28), slice(30, 42), 190)"


def write_test(pytester: pytest.Pytester, **knobs: Any) -> None:
    pytester.makepyfile(test_painted=painted_test(**knobs))


def frame_names(folder: Path) -> list[str]:
    return sorted(os.listdir(folder / "frames"))


def test_an_update_installs_the_frames_with_the_golden_and_the_next_run_passes(
    pytester: pytest.Pytester,
) -> None:
    write_test(pytester, kwargs=", render=5", env_kwargs=", length=12", steps=12)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    golden = pytester.path / GOLDEN
    refs = referenced_frames(golden / "trajectory.jsonl")
    # The reset, steps 5 and 10, and the last step (12).
    assert sorted(refs) == [f"frames/e00000_t{t:06d}_render.png" for t in (0, 5, 10, 12)]
    assert frame_names(golden) == [Path(file).name for file in sorted(refs)]
    shown = PaintedEnv()
    shown.reset(seed=0)
    for t in range(5):
        shown.step(t % 2)
    frame = decode_png((golden / "frames/e00000_t000005_render.png").read_bytes(), path="x")
    np.testing.assert_array_equal(frame, shown.render())
    assert refs["frames/e00000_t000005_render.png"].digest == frame_digest(frame)
    pytester.runpytest().assert_outcomes(passed=1)


def test_an_update_that_keeps_the_golden_leaves_its_frames(
    pytester: pytest.Pytester, files_under: Callable[[Path], dict[Path, tuple[bytes, int]]]
) -> None:
    write_test(pytester, kwargs=", render=True", steps=6)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    before = files_under(pytester.path / "goldens")
    assert any(path.suffix == ".png" for path in before)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    assert files_under(pytester.path / "goldens") == before


def test_a_shorter_recording_removes_the_frames_it_no_longer_names(
    pytester: pytest.Pytester,
) -> None:
    write_test(pytester, kwargs=", render=True", steps=6)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    write_test(pytester, kwargs=", render=True", steps=3)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    assert frame_names(pytester.path / GOLDEN) == [f"e00000_t{t:06d}_render.png" for t in range(4)]
    write_test(pytester, kwargs="", steps=3)  # no frames at all: the folder goes
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    assert not (pytester.path / GOLDEN / "frames").exists()


def test_images_frames_from_the_marker_and_the_ini(pytester: pytest.Pytester) -> None:
    write_test(
        pytester,
        kwargs="",
        env_kwargs=", image_obs=True",
        marker='@pytest.mark.goldens(images="frames")',
        steps=2,
    )
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    assert "e00000_t000001_obs.image.png" in frame_names(pytester.path / GOLDEN)
    write_test(pytester, kwargs="", env_kwargs=", image_obs=True", steps=2)
    pytester.makeini("[pytest]\ngoldens_images = frames\n")
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    assert "e00000_t000002_info.minimap.png" in frame_names(pytester.path / GOLDEN)
    pytester.makeini("[pytest]\ngoldens_images = png\n")
    result = pytester.runpytest()
    result.stderr.fnmatch_lines(["*ini goldens_images must be one of 'summary', 'frames'*"])


def test_render_of_an_env_without_rgb_arrays_fails_the_test_with_the_fix(
    pytester: pytest.Pytester,
) -> None:
    write_test(pytester, kwargs=", render=True", env_kwargs=", render_mode=None")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(['*render_mode=None*make the env with render_mode="rgb_array"*'])
