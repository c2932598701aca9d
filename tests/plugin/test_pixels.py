"""Frames in the plugin: recorded, installed with the golden, compared pixel by pixel, shown."""

from __future__ import annotations

import base64
import io
import os
import re
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from gym_goldens.format.frames import decode_png, frame_digest, referenced_frames
from tests.support.frames import PaintedEnv, painted_test, png_chunk

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


def expected_frames(t: int, patch: tuple[int, slice, slice, int] | None = None) -> Any:
    """The frame PaintedEnv renders at step ``t`` of the suite's test (actions t % 2)."""
    env = PaintedEnv(patch=patch)
    env.reset(seed=0)
    for step in range(t):
        env.step(step % 2)
    return env.render()


def read_png(path: Path) -> Any:
    return decode_png(path.read_bytes(), path=path)


def failure_lines(result: pytest.RunResult) -> list[str]:
    out = result.stdout.lines
    start = next(i for i, line in enumerate(out) if line.startswith("golden "))
    end = next(i for i in range(start, len(out)) if out[i].startswith(("---", "===")))
    return out[start:end]


def test_a_changed_frame_fails_naming_its_pixels_with_golden_actual_and_diff_images(
    pytester: pytest.Pytester,
) -> None:
    write_test(pytester)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    write_test(pytester, patch=PATCH.replace("(5,", "(12,"))
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    lines = failure_lines(result)
    assert lines[0] == f"golden mismatch: {GOLDEN / 'trajectory.jsonl'}:14"
    assert lines[2] == (
        "  first divergence: render at episode 0, step t=12: 96 of 3,072 pixels differ beyond "
        "pixel_atol 0 (3.1%), largest channel difference 190, rows 20-27, cols 30-41"
    )
    assert lines[3] == (
        "    only render differs: obs, action, reward, terminated, truncated and info match"
    )
    shown = {line.split(": ")[0].strip(): Path(line.split(": ")[1]) for line in lines[4:]}
    golden, actual, diff = (shown[name] for name in ("golden.png", "actual.png", "diff.png"))
    assert golden.parent == actual.parent == diff.parent == shown["actual recording"]
    np.testing.assert_array_equal(read_png(golden), expected_frames(12))
    patch = (12, slice(20, 28), slice(30, 42), 190)
    np.testing.assert_array_equal(read_png(actual), expected_frames(12, patch))
    picture = read_png(diff)
    magenta = np.all(picture == (255, 0, 255), axis=2)
    assert magenta[20:28, 30:42].all()
    assert magenta.sum() == 96
    # divergence.png: the three side by side, the differing pixels magenta in the third.
    plot = read_png(shown["plot"])
    assert np.all(plot == (255, 0, 255), axis=2).sum() >= 96


def test_a_pixel_tolerance_accepts_what_it_allows(pytester: pytest.Pytester) -> None:
    write_test(pytester)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    # 96 pixels of 3,072 differ from step 5 on, each channel by at most 190.
    cases: list[tuple[dict[str, str], bool]] = [
        ({"marker": '@pytest.mark.goldens(max_diff_pixels={"render": 96})'}, True),
        ({"marker": "@pytest.mark.goldens(max_diff_pixels=95)"}, False),
        ({"kwargs": ", render=True, pixel_atol=190"}, True),
        ({"kwargs": ", render=True, pixel_atol=189"}, False),
        ({"kwargs": ', render=True, max_diff_pixel_ratio={"render": 0.032}'}, True),
        ({"kwargs": ", render=True, max_diff_pixel_ratio=0.031"}, False),
    ]
    for knobs, passes in cases:
        write_test(pytester, patch=PATCH, **knobs)
        outcome = {"passed": 1} if passes else {"failed": 1}
        pytester.runpytest().assert_outcomes(**outcome)


def test_ini_pixel_tolerances(pytester: pytest.Pytester) -> None:
    write_test(pytester)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    write_test(pytester, patch=PATCH)
    pytester.makeini("[pytest]\ngoldens_max_diff_pixels = 96\n")
    pytester.runpytest().assert_outcomes(passed=1)
    pytester.makeini(
        "[pytest]\ngoldens_max_diff_pixels = 96\ngoldens_max_diff_pixel_ratio = 0.01\n"
    )
    pytester.runpytest().assert_outcomes(failed=1)  # both limits given: the smaller applies
    pytester.makeini("[pytest]\ngoldens_pixel_atol = 256\n")
    result = pytester.runpytest()
    result.stderr.fnmatch_lines(["*ini goldens_pixel_atol must be a whole number from 0 to 255*"])
    write_test(pytester, patch=PATCH, marker="@pytest.mark.goldens(pixel_atol=-1)")
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(["*@pytest.mark.goldens: pixel_atol must be zero or more, got -1*"])


def test_only_an_image_observation_differs(pytester: pytest.Pytester) -> None:
    knobs = {"kwargs": ', images="frames"', "env_kwargs": ", image_obs=True", "steps": 8}
    write_test(pytester, **knobs)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    write_test(pytester, patch=PATCH, **knobs)
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(
        [
            "  first divergence: obs.image at episode 0, step t=5: 96 of 3,072 pixels differ *",
            "    only obs differs: action, reward, terminated, truncated and info match",
        ]
    )


def test_at_a_reset_only_images_differing_names_the_info_that_matches(
    pytester: pytest.Pytester,
) -> None:
    knobs = {"kwargs": ', images="frames", render=True', "env_kwargs": ", image_obs=True"}
    write_test(pytester, steps=3, **knobs)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    write_test(pytester, steps=3, patch=PATCH.replace("(5,", "(0,"), **knobs)
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(
        [
            "  first divergence: obs.image at episode 0, reset: 96 of 3,072 pixels differ *",
            "    only obs and render differ: info matches",
        ]
    )


def test_a_frame_against_a_summary_compares_by_digest(pytester: pytest.Pytester) -> None:
    # The golden keeps the image obs as summaries; the test now keeps them as frames.
    knobs: dict[str, Any] = {"kwargs": "", "env_kwargs": ", image_obs=True", "steps": 8}
    write_test(pytester, **knobs)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    knobs["kwargs"] = ', images="frames"'
    write_test(pytester, **knobs)
    pytester.runpytest().assert_outcomes(passed=1)
    write_test(pytester, patch=PATCH, **knobs)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "  first divergence: episode 0, step t=5, obs.image",
            '    the golden keeps this image as a summary (images="summary"), the actual '
            "recording as a frame: they compare by digest, and the digests differ*",
        ]
    )


def reencode(folder: Path) -> dict[Path, bytes]:
    """Write the frames of ``folder`` again as another encoder would: other bytes, same pixels."""
    written = {}
    for path in sorted((folder / "frames").iterdir()):
        pixels = read_png(path)
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, format="PNG", compress_level=9)
        assert buffer.getvalue() != path.read_bytes()
        path.write_bytes(buffer.getvalue())
        written[path] = buffer.getvalue()
    return written


def test_an_update_keeps_frames_that_match_within_the_pixel_tolerance(
    pytester: pytest.Pytester, files_under: Callable[[Path], dict[Path, tuple[bytes, int]]]
) -> None:
    write_test(pytester)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    before = files_under(pytester.path / "goldens")
    write_test(pytester, patch=PATCH, marker="@pytest.mark.goldens(max_diff_pixels=96)")
    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(passed=1)
    assert files_under(pytester.path / "goldens") == before


@pytest.mark.parametrize("option", ["--update-goldens", "--update-goldens-all"])
def test_frames_of_other_png_bytes_but_the_same_pixels_are_not_rewritten(
    pytester: pytest.Pytester,
    files_under: Callable[[Path], dict[Path, tuple[bytes, int]]],
    option: str,
) -> None:
    write_test(pytester)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    reencode(pytester.path / GOLDEN)  # another Pillow, another zlib
    before = files_under(pytester.path / "goldens")
    pytester.runpytest(option).assert_outcomes(passed=1)
    assert files_under(pytester.path / "goldens") == before


def test_a_rewritten_golden_keeps_the_frames_whose_pixels_did_not_change(
    pytester: pytest.Pytester,
) -> None:
    write_test(pytester, steps=8)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    golden = pytester.path / GOLDEN
    other_bytes = reencode(golden)
    write_test(pytester, patch=PATCH, steps=8)  # frames 5 to 8 change
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    for path, data in other_bytes.items():
        step = int(path.name[8:14])
        assert (path.read_bytes() == data) == (step < 5), path.name
    pytester.runpytest().assert_outcomes(passed=1)


def assert_clean_failure(result: pytest.RunResult, verdict: str, reason: str) -> None:
    """The test failed through our message, with no traceback of our internals."""
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"{verdict}: *{reason}*"])
    text = result.stdout.str() + result.stderr.str()
    for internal in ("INTERNALERROR", "Traceback", "gym_goldens/", "site-packages"):
        assert internal not in text


def hostile_project(pytester: pytest.Pytester) -> Path:
    """A golden of 8 steps, and a test whose frames differ from step 5 on: frames are read."""
    write_test(pytester, steps=8)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    write_test(pytester, patch=PATCH, steps=8)
    return pytester.path / GOLDEN


def test_a_reference_out_of_the_frames_folder_is_refused_unread(
    pytester: pytest.Pytester,
) -> None:
    golden = hostile_project(pytester)
    outside = golden / "frames/e00000_t000005_render.png"
    (pytester.path / "x.png").write_bytes(outside.read_bytes())
    trajectory = golden / "trajectory.jsonl"
    trajectory.write_bytes(
        trajectory.read_bytes().replace(b"frames/e00000_t000005_render.png", b"../../x.png")
    )
    result = pytester.runpytest()
    assert_clean_failure(
        result, "golden unreadable", "a frame reference names the file '../../x.png'"
    )


def test_a_symlinked_frames_folder_is_refused(pytester: pytest.Pytester) -> None:
    golden = hostile_project(pytester)
    elsewhere = pytester.path / "elsewhere"
    (golden / "frames").rename(elsewhere)
    (golden / "frames").symlink_to(elsewhere)
    result = pytester.runpytest()
    assert_clean_failure(result, "golden refused", "frames: a symlink (to *elsewhere)")


def test_a_truncated_png_is_a_clean_failure(pytester: pytest.Pytester) -> None:
    golden = hostile_project(pytester)
    frame = golden / "frames/e00000_t000005_render.png"
    frame.write_bytes(frame.read_bytes()[:60])
    result = pytester.runpytest()
    assert_clean_failure(result, "golden unreadable", "e00000_t000005_render.png: the PNG is cut")


def test_a_png_claiming_100000_by_100000_pixels_is_refused_before_decoding(
    pytester: pytest.Pytester,
) -> None:
    golden = hostile_project(pytester)
    header = (100_000).to_bytes(4, "big") * 2 + bytes([8, 2, 0, 0, 0])
    bomb = b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            png_chunk(b"IHDR", header),
            png_chunk(b"IDAT", zlib.compress(b"\x00" * 1000)),
            png_chunk(b"IEND", b""),
        ]
    )
    (golden / "frames/e00000_t000005_render.png").write_bytes(bomb)
    result = pytester.runpytest()
    assert_clean_failure(
        result, "golden unreadable", "the PNG claims 100,000 x 100,000 pixels*refused before"
    )


def test_the_html_report_and_the_artifacts_hold_golden_actual_and_diff(
    pytester: pytest.Pytester,
) -> None:
    write_test(pytester)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    write_test(pytester, patch=PATCH.replace("(5,", "(12,"))
    result = pytester.runpytest("--goldens-report=report", "--goldens-artifacts=kept")
    result.assert_outcomes(failed=1)
    page = (pytester.path / "report" / "index.html").read_text()
    sources = re.findall(
        r'<img alt="(golden|actual|diff): [^"]*" src="data:image/png;base64,([^"]+)"', page
    )
    assert [label for label, _ in sources] == ["golden", "actual", "diff"]
    pictures = {label: decode_png(base64.b64decode(data), path=label) for label, data in sources}
    np.testing.assert_array_equal(pictures["golden"], expected_frames(12))
    np.testing.assert_array_equal(
        pictures["actual"], expected_frames(12, (12, slice(20, 28), slice(30, 42), 190))
    )
    assert np.all(pictures["diff"][20:28, 30:42] == (255, 0, 255))
    # Frames alone differ: the plot would only repeat the three pictures, and is left out.
    assert page.count("<img") == 3
    kept = pytester.path / "kept" / "test_painted" / "test_painted" / "Painted"
    assert {"golden.png", "actual.png", "diff.png", "frames"} <= set(os.listdir(kept))
    assert read_png(kept / "frames/e00000_t000012_render.png").shape == (48, 64, 3)
