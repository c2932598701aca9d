"""The gym-goldens command and frames: `frames` exports them, `show` lists them, `diff --images`.

Recordings are made of :class:`~tests.support.frames.PaintedEnv`, whose frames
are drawn with numpy: each test replays the env to know every frame's pixels,
and opens the images written with Pillow to check them pixel by pixel.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from gym_goldens import RecordTrajectory
from gym_goldens.cli import main
from gym_goldens.present.images import DIFF_COLOUR
from tests.support.frames import PaintedEnv
from tests.support.recordings import record_cartpole

STEPS = 6
SEEDS = (0, 1)
PATCH = (3, slice(2, 5), slice(3, 9), 90)
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def record(folder: Path, **env_options: Any) -> Path:
    """Two episodes of PaintedEnv, its frames and image observations recorded."""
    images = "frames" if env_options.get("image_obs") else "summary"
    env = RecordTrajectory(
        PaintedEnv(length=STEPS, **env_options), folder, render=True, images=images
    )
    for seed in SEEDS:
        env.reset(seed=seed)
        for t in range(STEPS):
            env.step(t % 2)
    env.close()
    return folder


def expected_frames(seed: int, patch: Any = None) -> list[np.ndarray[Any, Any]]:
    """The frames the env draws in the episode of ``seed``: after the reset and each step."""
    env = PaintedEnv(length=STEPS, patch=patch)
    env.reset(seed=seed)
    frames = [env.draw()]
    for t in range(STEPS):
        env.step(t % 2)
        frames.append(env.draw())
    return frames


def pixels(path: Path) -> np.ndarray[Any, Any]:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


@pytest.fixture(scope="module")
def painted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record(tmp_path_factory.mktemp("painted") / "Painted", image_obs=True)


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return code, out, err


# frames


def test_frames_exports_every_frame_as_a_png_of_its_pixels(
    painted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code, stdout, err = run(capsys, "frames", painted, "--out", out)
    assert (code, err) == (0, "")
    names = sorted(path.name for path in out.iterdir())
    fields = ("info.minimap", "obs.image", "render")
    assert names == sorted(
        f"e{e:05d}_t{t:06d}_{field}.png"
        for e in range(len(SEEDS))
        for t in range(STEPS + 1)
        for field in fields
    )
    for episode, seed in enumerate(SEEDS):
        for t, frame in enumerate(expected_frames(seed)):
            for field in ("render", "obs.image"):
                assert np.array_equal(pixels(out / f"e{episode:05d}_t{t:06d}_{field}.png"), frame)
    minimap = np.asarray(Image.open(out / "e00000_t000000_info.minimap.png"))
    assert minimap.shape == (16, 16)
    assert sorted(np.unique(minimap)) == [0, 255]
    assert f"episode 1, render: {STEPS + 1} frames -> " in stdout


def test_frames_of_one_episode_and_field_as_a_gif(
    painted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code, stdout, err = run(
        capsys, "frames", painted, "--episode", 1, "--field", "render", "--out", out, "--gif"
    )
    assert (code, err) == (0, "")
    gif = out / "e00001_render.gif"
    assert sorted(path.name for path in out.iterdir()) == sorted(
        [gif.name, *(f"e00001_t{t:06d}_render.png" for t in range(STEPS + 1))]
    )
    assert f"gif: {gif}" in stdout
    expected = expected_frames(SEEDS[1])
    with Image.open(gif) as image:
        assert image.n_frames == len(expected)
        for index, frame in enumerate(expected):
            image.seek(index)
            # Three colours: the GIF's palette holds them exactly.
            assert np.array_equal(np.asarray(image.convert("RGB")), frame), index


def test_frames_without_frames_says_how_to_record_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cartpole = record_cartpole(tmp_path / "CartPole-v1", steps=5)
    code, out, err = run(capsys, "frames", cartpole, "--out", tmp_path / "out")
    assert (code, out) == (2, "")
    assert "no frames in this recording" in err
    assert "render=True" in err
    assert not (tmp_path / "out").exists()


def test_frames_of_a_missing_field_or_episode_names_those_that_exist(
    painted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "frames", painted, "--field", "obs", "--out", tmp_path / "o")
    assert code == 2
    assert "no frames of the field 'obs'; the fields with frames are info.minimap, " in err
    assert "obs.image, render" in err
    code, _, err = run(capsys, "frames", painted, "--episode", 5, "--out", tmp_path / "o")
    assert code == 2
    assert "episode 5 has no frames; the episodes with frames are 0, 1" in err


@pytest.mark.parametrize("fps", ["0", "-3", "nan", "1e-9"])
def test_frames_refuses_an_fps_no_gif_can_hold_before_writing_anything(
    painted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fps: str
) -> None:
    out = tmp_path / "out"
    code, stdout, err = run(capsys, "frames", painted, "--out", out, "--gif", "--fps", fps)
    assert (code, stdout) == (2, "")
    assert "--fps must be" in err
    assert "Traceback" not in err
    assert not out.exists()


def test_frames_out_may_be_neither_a_file_nor_a_symlink(
    painted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "file"
    file.write_text("keep")
    code, _, err = run(capsys, "frames", painted, "--out", file)
    assert code == 2
    assert "is a file" in err
    assert file.read_text() == "keep"
    target = tmp_path / "elsewhere"
    target.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target)
    code, _, err = run(capsys, "frames", painted, "--out", link)
    assert code == 2
    assert "is a symlink" in err
    assert list(target.iterdir()) == []


def test_frames_out_may_not_be_the_recordings_own_frames_folder(
    painted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A hostile line names the frame of step 1 at step 2: exported into the
    # recording's own frames folder, step 1's pixels would replace step 2's file.
    folder = Path(shutil.copytree(painted, tmp_path / "hostile"))
    trajectory = folder / "trajectory.jsonl"
    lines = trajectory.read_bytes().split(b"\n")
    ref = re.compile(rb'"render":\{"\$frame":\{[^}]*\}\}')
    first = next(ref.search(line) for line in lines if b'"t":1,' in line)
    assert first is not None
    at = next(index for index, line in enumerate(lines) if b'"t":2,' in line)
    lines[at] = ref.sub(first.group(0).replace(b"\\", b"\\\\"), lines[at], count=1)
    trajectory.write_bytes(b"\n".join(lines))
    before = {path.name: path.read_bytes() for path in (folder / "frames").iterdir()}
    for out in (folder / "frames", tmp_path / "hostile" / "." / "frames"):
        code, stdout, err = run(capsys, "frames", folder, "--field", "render", "--out", out)
        assert (code, stdout) == (2, "")
        assert "is the frames folder of the recording" in err
    after = {path.name: path.read_bytes() for path in (folder / "frames").iterdir()}
    assert after == before


def test_a_link_in_the_place_of_an_exported_frame_is_replaced_not_followed(
    painted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    (out / "e00000_t000000_render.png").symlink_to(victim)
    code, _, err = run(capsys, "frames", painted, "--field", "render", "--out", out)
    assert (code, err) == (0, "")
    assert victim.read_text() == "keep"
    assert not (out / "e00000_t000000_render.png").is_symlink()
    assert np.array_equal(pixels(out / "e00000_t000000_render.png"), expected_frames(0)[0])


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        ("escape", "a frame reference names the file '../../../secret.png'"),
        ("truncate", "the PNG is cut short"),
        ("link", "frames: a symlink"),
    ],
)
def test_frames_of_a_hostile_recording_is_a_clean_error(
    painted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str, reason: str
) -> None:
    folder = Path(shutil.copytree(painted, tmp_path / "hostile"))
    frame = folder / "frames" / "e00000_t000002_render.png"
    if damage == "escape":
        trajectory = folder / "trajectory.jsonl"
        trajectory.write_bytes(
            trajectory.read_bytes().replace(
                b"frames/e00000_t000002_render.png", b"../../../secret.png"
            )
        )
    elif damage == "truncate":
        frame.write_bytes(frame.read_bytes()[:-30])
    else:
        frames = folder / "frames"
        shutil.move(frames, tmp_path / "real_frames")
        os.symlink(tmp_path / "real_frames", frames)
    code, out, err = run(capsys, "frames", folder, "--field", "render", "--out", tmp_path / "o")
    assert code == 2
    assert reason in err
    assert "Traceback" not in err
    assert not CONTROL.search(out + err)


def test_the_frames_chosen_count_against_the_limit_before_any_is_read(
    painted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A line may name one small frame under thousands of fields: each frame
    # chosen is kept until it is exported, so each costs its bookkeeping too,
    # not only its pixels (8x8 gray: 64 bytes). These frames' files are missing:
    # the limit is met before any is read.
    folder = tmp_path / "many"
    folder.mkdir()
    lines = (painted / "trajectory.jsonl").read_bytes().split(b"\n")
    ref = (
        b'{"$frame":{"digest":"0123456789abcdef0123456789abcdef",'
        b'"file":"frames/e00000_t000000_f.png","shape":[8,8]}}'
    )
    fields = b",".join(b'"f%d":%s' % (index, ref) for index in range(1000))
    reset = b'{"episode":0,"event":"reset","info":{},"obs":0,"render":{%s}}' % fields
    (folder / "trajectory.jsonl").write_bytes(lines[0] + b"\n" + reset + b"\n")
    out = tmp_path / "out"
    code, stdout, err = run(
        capsys, "frames", folder, "--out", out, "--max-decompressed-size", "1MiB"
    )
    assert (code, stdout) == (2, "")
    assert "the frames read decode to more than 1 MiB" in err
    assert "choose fewer frames" in err
    assert not out.exists()


def test_frames_names_a_long_field_short(
    painted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = Path(shutil.copytree(painted, tmp_path / "long"))
    trajectory = folder / "trajectory.jsonl"
    long = "r" * 10_000
    trajectory.write_bytes(trajectory.read_bytes().replace(b'"render":', f'"{long}":'.encode()))
    code, out, err = run(capsys, "frames", folder, "--episode", 0, "--out", tmp_path / "o", "--gif")
    assert (code, err) == (0, "")
    assert f"episode 0, {long[:45]}...: {STEPS + 1} frames -> " in out
    assert max(len(line) for line in out.splitlines()) < 1000


# show


def test_show_lists_the_frame_fields(painted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "show", painted)
    assert (code, err) == (0, "")
    frames = STEPS + 1
    assert "  frames (PNG files; export them with gym-goldens frames):" in out
    for field, shape in (
        ("info.minimap", "16x16"),
        ("obs.image", "48x64x3"),
        ("render", "48x64x3"),
    ):
        line = rf"^ +{re.escape(field)} +{2 * frames} frames, {shape}, in 2 episodes$"
        assert re.search(line, out, re.MULTILINE), line


def test_show_lists_a_bounded_number_of_frame_fields_each_on_a_short_line(
    painted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A hostile line may name frames under any number of fields, of any length.
    folder = tmp_path / "fields"
    folder.mkdir()
    header = (painted / "trajectory.jsonl").read_bytes().split(b"\n")[0]
    ref = (
        b'{"$frame":{"digest":"0123456789abcdef0123456789abcdef",'
        b'"file":"frames/e00000_t000000_f.png","shape":[8,%d]}}'
    )
    names = [b"x" * 10_000, *(b"f%d" % index for index in range(1, 150))]
    fields = b",".join(b'"%s":%s' % (name, ref % (8 + i)) for i, name in enumerate(names))
    reset = b'{"episode":0,"event":"reset","info":{},"obs":0,"render":{%s}}' % fields
    (folder / "trajectory.jsonl").write_bytes(header + b"\n" + reset + b"\n")

    code, out, err = run(capsys, "show", folder)

    assert (code, err) == (0, "")
    listed = out.split("  frames (PNG files; export them with gym-goldens frames):\n")[1]
    assert len(listed.splitlines()) == 101
    assert listed.splitlines()[-1] == "    and more fields, past the first 100"
    # The test's folder counted as one character: pytest's numbered folders grow longer.
    assert max(len(line) for line in out.replace(str(tmp_path), "~").splitlines()) < 200


def test_show_of_a_recording_without_frames_lists_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "show", record_cartpole(tmp_path / "CartPole-v1", steps=5))
    assert code == 0
    assert "frames (" not in out


# diff --images


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("pair")
    return record(folder / "golden"), record(folder / "actual", patch=PATCH)


def test_diff_images_writes_golden_actual_and_diff_of_the_first_differing_frame(
    pair: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    golden, actual = pair
    images = tmp_path / "images"
    code, out, err = run(capsys, "diff", golden, actual, "--images", images)
    assert (code, err) == (1, "")
    assert "first divergence: render at episode 0, step t=3: 18 of 3,072 pixels differ" in out
    for name in ("golden.png", "actual.png", "diff.png"):
        assert f"  {name}: {images / name}" in out
    t = PATCH[0]
    expected, changed = expected_frames(0)[t], expected_frames(0, PATCH)[t]
    assert np.array_equal(pixels(images / "golden.png"), expected)
    assert np.array_equal(pixels(images / "actual.png"), changed)
    diff = pixels(images / "diff.png")
    magenta = np.all(diff == DIFF_COLOUR, axis=2)
    patched = np.zeros(expected.shape[:2], bool)
    patched[PATCH[1], PATCH[2]] = True
    assert np.array_equal(magenta, patched)
    gray = diff[~patched]
    assert np.all(gray[:, 0] == gray[:, 1])
    assert np.all(gray[:, 1] == gray[:, 2])


def test_diff_images_when_no_frame_differs_writes_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    golden = record_cartpole(tmp_path / "golden", steps=5)
    actual = Path(shutil.copytree(golden, tmp_path / "actual"))
    trajectory = actual / "trajectory.jsonl"
    lines = trajectory.read_bytes().split(b"\n")
    lines[3] = re.sub(rb'"reward":1\.0', b'"reward":2.0', lines[3])
    trajectory.write_bytes(b"\n".join(lines))
    code, out, _ = run(capsys, "diff", golden, actual, "--images", tmp_path / "images")
    assert code == 1
    assert "images: none written; no frame differs at the first divergence" in out
    assert list((tmp_path / "images").iterdir()) == []


def test_diff_images_into_a_symlink_is_refused(
    pair: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "link").symlink_to(target)
    code, _, err = run(capsys, "diff", *pair, "--images", tmp_path / "link")
    assert code == 2
    assert "--images" in err
    assert "is a symlink" in err
    assert list(target.iterdir()) == []
