"""Frames recorded: render=True and render=k, images="frames", the PNG files beside the lines."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from PIL import Image

from gym_goldens import RecordTrajectory, RecordVectorTrajectory, compare, read_recording
from gym_goldens.format.codec import ArraySummary, TaggedValue
from gym_goldens.format.frames import FRAME_TAG, FrameRef, decode_png, frame_digest
from gym_goldens.format.header import FORMAT_VERSION
from tests.support.frames import PaintedEnv, needs_renderer


def frame_ref(value: Any, path: Path) -> FrameRef:
    """The reference a record holds, as the comparison reads it."""
    assert isinstance(value, TaggedValue), value
    assert value.tag == FRAME_TAG
    return FrameRef.from_tagged(value, path=path)


def pixels(folder: Path, ref: FrameRef) -> np.ndarray[Any, Any]:
    return decode_png((folder / ref.file).read_bytes(), path=ref.file, expected_shape=ref.shape)


def play(env: gym.Env[Any, Any], steps: int, *, seed: int = 0) -> None:
    env.reset(seed=seed)
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(1)
        if terminated or truncated:
            env.reset()


def test_render_true_records_the_frame_of_the_reset_and_of_every_step(tmp_path: Path) -> None:
    recorder = RecordTrajectory(PaintedEnv(), tmp_path, render=True)
    shown = PaintedEnv()  # the same env beside it: the frames it renders are the expected ones
    recorder.reset(seed=0)
    shown.reset(seed=0)
    expected = [shown.render()]
    for _ in range(5):
        recorder.step(1)
        shown.step(1)
        expected.append(shown.render())
    recorder.close()
    (episode,) = read_recording(tmp_path)
    refs = [frame_ref(record["render"], tmp_path) for record in episode.records]
    assert [ref.file for ref in refs] == [f"frames/e00000_t{t:06d}_render.png" for t in range(6)]
    for ref, frame in zip(refs, expected, strict=True):
        assert ref.shape == (48, 64, 3)
        assert ref.digest == frame_digest(frame)
        np.testing.assert_array_equal(pixels(tmp_path, ref), frame)
    assert sorted(os.listdir(tmp_path / "frames")) == sorted(Path(r.file).name for r in refs)


def test_render_k_records_the_reset_every_kth_step_and_the_last_of_each_episode(
    tmp_path: Path,
) -> None:
    recorder = RecordTrajectory(PaintedEnv(length=11), tmp_path, render=4)
    play(recorder, 15)  # episode 0: steps 1..11 (terminated at 11); episode 1: steps 1..4
    recorder.close()
    episodes = list(read_recording(tmp_path))
    rendered = [
        [record.get("t", 0) for record in episode.records if "render" in record]
        for episode in episodes
    ]
    assert rendered == [[0, 4, 8, 11], [0, 4]]
    names = sorted(os.listdir(tmp_path / "frames"))
    assert names == sorted(
        f"e{e:05d}_t{t:06d}_render.png" for e, ts in enumerate(rendered) for t in ts
    )


def test_cartpole_renders_headless_into_frames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    needs_renderer()
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    env = gym.make("CartPole-v1", render_mode="rgb_array")
    recorder = RecordTrajectory(env, tmp_path, render=10)
    play(recorder, 12)
    recorder.close()
    (episode, *_) = read_recording(tmp_path)
    ref = frame_ref(episode.records[0]["render"], tmp_path)
    frame = pixels(tmp_path, ref)
    assert frame.shape == (400, 600, 3)
    # CartPole draws a white sky and a brown pole: both colours are there.
    colours = {tuple(pixel) for pixel in frame.reshape(-1, 3)[::97]}
    assert (255, 255, 255) in colours
    assert len(colours) > 2


def test_an_env_that_does_not_render_rgb_arrays_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match=r'render_mode=None.*render_mode="rgb_array"'):
        RecordTrajectory(PaintedEnv(render_mode=None), "unused", render=True)
    with pytest.raises(ValueError, match=r'gym.make\("CartPole-v1", render_mode="rgb_array"\)'):
        RecordTrajectory(gym.make("CartPole-v1"), "unused", render=True)
    for render in (0, -2, 1.5, "yes"):
        with pytest.raises(ValueError, match="render must be True, False or a positive int"):
            RecordTrajectory(PaintedEnv(), "unused", render=render)  # type: ignore[arg-type]


def test_a_render_that_is_no_frame_is_refused(tmp_path: Path) -> None:
    env = PaintedEnv()
    env.render = lambda: np.zeros((48, 64, 3), np.float32)  # type: ignore[method-assign]
    recorder = RecordTrajectory(env, tmp_path, render=True)
    refused = r"render: PaintedEnv\.render\(\) returned an array of dtype float32"
    with pytest.raises(TypeError, match=refused):
        recorder.reset(seed=0)
    recorder.close()


def test_a_completed_episode_has_its_frames_on_disk_before_the_next_starts(
    tmp_path: Path,
) -> None:
    recorder = RecordTrajectory(PaintedEnv(length=3), tmp_path, render=True)
    recorder.reset(seed=0)
    for _ in range(3):
        recorder.step(0)
    # Terminated: the lines are written, and every frame they name is there, whole.
    for record in read_recording(tmp_path)[0].records:
        ref = frame_ref(record["render"], tmp_path)
        assert frame_digest(pixels(tmp_path, ref)) == ref.digest
    recorder.close()


def test_a_frame_that_cannot_be_written_fails_the_recording_at_the_episode_end(
    tmp_path: Path,
) -> None:
    # A folder where step 1's frame goes: the worker cannot write it.
    (tmp_path / "frames" / "e00000_t000001_render.png").mkdir(parents=True)
    recorder = RecordTrajectory(PaintedEnv(length=2), tmp_path, render=True)
    recorder.reset(seed=0)
    recorder.step(0)
    with pytest.raises(IsADirectoryError, match=r"e00000_t000001_render\.png"):
        recorder.step(0)  # the episode ends: its lines wait for its frames
    recorder.close()


def test_images_frames_stores_image_like_obs_and_info_as_frames(tmp_path: Path) -> None:
    recorder = RecordTrajectory(PaintedEnv(image_obs=True), tmp_path, images="frames")
    play(recorder, 2)
    recorder.close()
    reset, step, _ = read_recording(tmp_path)[0].records
    image = frame_ref(step["obs"]["image"], tmp_path)
    minimap = frame_ref(step["info"]["minimap"], tmp_path)
    assert image.file == "frames/e00000_t000001_obs.image.png"
    assert minimap.file == "frames/e00000_t000001_info.minimap.png"
    assert (image.shape, minimap.shape) == ((48, 64, 3), (16, 16))
    assert all(type(v) is int for v in step["obs"]["position"])  # no frame: kept as it is
    # The numpy types are those of the arrays themselves.
    assert step["dtypes"]["obs"]["image"] == "uint8[48,64,3]"
    assert "render" not in step  # no render= given
    assert frame_ref(reset["obs"]["image"], tmp_path).file == "frames/e00000_t000000_obs.image.png"


def test_images_summary_keeps_image_obs_as_arrays(tmp_path: Path) -> None:
    recorder = RecordTrajectory(PaintedEnv(image_obs=True), tmp_path, max_array_size=16)
    play(recorder, 2)
    recorder.close()
    step = read_recording(tmp_path)[0].records[1]
    assert isinstance(step["obs"]["image"], ArraySummary)
    assert not (tmp_path / "frames").exists()


def test_images_is_summary_or_frames(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match='images must be "summary"'):
        RecordTrajectory(PaintedEnv(), tmp_path, images="png")


def test_steps_kept_as_digests_write_no_frames(tmp_path: Path) -> None:
    recorder = RecordTrajectory(PaintedEnv(length=7), tmp_path, render=True, full_every=3)
    play(recorder, 7)
    recorder.close()
    # Steps 1, 3, 6 and the last (7) in full, with the reset; the others digests only.
    names = sorted(os.listdir(tmp_path / "frames"))
    kept = [f"e00000_t{t:06d}_render.png" for t in (0, 1, 3, 6, 7)]
    assert names == [*kept, "e00001_t000000_render.png"]  # the next episode's reset


def test_a_vector_env_keeps_each_sub_env_s_frames_in_its_folder(tmp_path: Path) -> None:
    envs = gym.vector.SyncVectorEnv([lambda: PaintedEnv(image_obs=True) for _ in range(2)])
    recorder = RecordVectorTrajectory(envs, tmp_path, images="frames")
    recorder.reset(seed=0)
    for _ in range(2):
        recorder.step(np.array([0, 1]))
    recorder.close()
    for index in range(2):
        folder = tmp_path / f"env_{index}"
        step = read_recording(folder)[0].records[2]
        ref = frame_ref(step["obs"]["image"], folder)
        assert ref.file == "frames/e00000_t000002_obs.image.png"
        assert frame_digest(pixels(folder, ref)) == ref.digest


def test_a_recording_of_format_2_2_whose_frames_are_rgb_pngs_reads_and_matches(
    tmp_path: Path,
) -> None:
    # Format 2.3 writes a frame of few colours as a palette PNG; 2.2 wrote RGB: it still reads.
    for name in ("now", "older"):
        recorder = RecordTrajectory(PaintedEnv(), tmp_path / name, render=True)
        play(recorder, 4)
        recorder.close()
    older = tmp_path / "older"
    trajectory = older / "trajectory.jsonl"
    content = trajectory.read_bytes()
    current = f'"version":"{FORMAT_VERSION}"'.encode()
    assert current in content
    trajectory.write_bytes(content.replace(current, b'"version":"2.2"'))
    for path in (older / "frames").iterdir():
        with Image.open(path) as image:
            assert image.mode == "P"
            image.convert("RGB").save(path, format="PNG", compress_level=6, compress_type=3)
    (episode,) = read_recording(older)
    assert episode.header["version"] == "2.2"
    refs = [frame_ref(record["render"], older) for record in episode.records]
    for ref in refs:
        assert frame_digest(pixels(older, ref)) == ref.digest
    assert compare(tmp_path / "now", older).equal
