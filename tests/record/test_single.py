"""Tests of the recording wrapper (``gym_goldens.record.single``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from gym_goldens import RecordTrajectory, read_recording
from gym_goldens.format.lines import iter_lines, split_episodes


class Boom(RuntimeError):
    """The error the raising envs raise; tests check it arrives unchanged."""


class RaisingEnv(gym.Env[np.ndarray, int]):
    """Counts steps and raises in ``step`` number ``fail_at`` or in ``reset``."""

    observation_space = spaces.Box(-10.0, 10.0, shape=(2,), dtype=np.float64)
    action_space = spaces.Discrete(2)

    def __init__(self, fail_at: int | None = None, fail_on_reset: bool = False) -> None:
        self.fail_at = fail_at
        self.fail_on_reset = fail_on_reset
        self.t = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if self.fail_on_reset:
            raise Boom("reset failed")
        self.t = 0
        return np.array([0.0, 0.5]), {"start": True}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.t += 1
        if self.t == self.fail_at:
            raise Boom(f"step {self.t} failed")
        return np.array([float(self.t), -0.5]), 1.0, False, False, {"t": self.t}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _buffered(env: RecordTrajectory[Any, Any]) -> bool:
    """Whether lines wait in memory, not yet handed to the operating system."""
    return bool(env._writer.buffered)


def _episodes_on_disk(path: Path) -> list[list[dict[str, Any]]]:
    """The records of each episode of a trajectory file, read as it is now."""
    return [[json.loads(raw) for _, raw in lines] for lines in split_episodes(iter_lines(path))]


def test_one_file_holds_every_episode_with_the_seed_field_names(tmp_path: Path) -> None:
    env = RecordTrajectory(gym.make("CartPole-v1"), tmp_path)
    env.action_space.seed(0)
    env.reset(seed=0)
    episodes = 1
    for _ in range(60):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
            episodes += 1
    env.close()
    assert episodes >= 2
    assert [p.name for p in tmp_path.iterdir()] == ["trajectory.jsonl"]
    assert env.path == tmp_path / "trajectory.jsonl"
    on_disk = _episodes_on_disk(env.path)
    assert len(on_disk) == episodes
    # Each episode opens with its header: the file is the episodes one after another.
    assert [episode[0]["event"] for episode in on_disk] == ["header"] * episodes
    assert sum(len(episode) for episode in on_disk) == len(_lines(env.path))

    header, reset, *steps = on_disk[0]
    assert header["event"] == "header"
    assert header["reset"] == {"seed": 0, "options": None}
    assert header["env"]["id"] == "CartPole-v1"
    # The seed's fields, plus the numpy types of the values (format 1.1).
    assert set(reset) == {"event", "episode", "obs", "info", "dtypes"}
    assert (reset["event"], reset["episode"]) == ("reset", 0)
    assert len(reset["obs"]) == 4
    assert [s["t"] for s in steps] == list(range(1, len(steps) + 1))
    for step in steps:
        # dtypes appears only where the numpy types change (step 1 here).
        assert set(step) - {"dtypes"} == {
            "event",
            "t",
            "action",
            "obs",
            "reward",
            "terminated",
            "truncated",
            "info",
        }
        assert step["event"] == "step"
        assert step["action"] in (0, 1)
        assert step["reward"] == 1.0
    assert steps[-1]["terminated"] or steps[-1]["truncated"]
    second_reset = on_disk[1][1]
    assert second_reset["episode"] == 1


def test_episode_is_on_disk_and_complete_at_episode_end(tmp_path: Path) -> None:
    env = RecordTrajectory(gym.make("FrozenLake-v1", is_slippery=False), tmp_path)
    env.reset(seed=0)
    for action in (1, 1, 2, 1, 2, 2):  # down, down, right, down, right, right: the goal
        _, reward, terminated, _, _ = env.step(action)
    assert terminated
    assert reward == 1.0
    assert not _buffered(env)
    # Read before close(): the completed episode is already in the file.
    episode = read_recording(tmp_path)[0]
    assert episode.complete
    assert [r["t"] for r in episode.steps] == [1, 2, 3, 4, 5, 6]


def test_file_is_written_on_close_and_on_next_reset(tmp_path: Path) -> None:
    env = RecordTrajectory(gym.make("CartPole-v1"), tmp_path)
    env.reset(seed=1)
    env.step(0)
    env.step(1)
    env.reset(seed=2)  # ends episode 0 mid-way
    assert len(read_recording(tmp_path)[0].steps) == 2
    assert _episodes_on_disk(env.path)[0][-1]["t"] == 2
    env.step(0)
    env.close()
    recording = read_recording(tmp_path)
    assert len(recording) == 2
    assert len(recording[1].steps) == 1
    assert recording[1].header is not None
    assert recording[1].header["reset"]["seed"] == 2


def test_env_raising_mid_episode_leaves_a_readable_partial_episode(tmp_path: Path) -> None:
    env = RecordTrajectory(RaisingEnv(fail_at=3), tmp_path)
    env.reset(seed=0)
    env.step(0)
    env.step(1)
    with pytest.raises(Boom, match=r"^step 3 failed$") as info:
        env.step(0)
    assert type(info.value) is Boom
    assert not _buffered(env)
    episode = read_recording(tmp_path)[0]
    assert [r["event"] for r in episode.records] == ["reset", "step", "step"]
    assert episode.steps[-1]["obs"] == [2.0, -0.5]
    assert not episode.complete
    # Stepping after the failure needs a new reset, like any ended recording.
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)


def test_env_raising_in_reset_propagates_and_leaves_a_readable_file(tmp_path: Path) -> None:
    env = RecordTrajectory(RaisingEnv(fail_on_reset=True), tmp_path)
    with pytest.raises(Boom, match=r"^reset failed$"):
        env.reset(seed=0)
    assert not _buffered(env)
    episode = read_recording(tmp_path)[0]
    assert episode.header is not None
    assert episode.records == []


def test_step_before_reset_is_an_error_naming_the_fix(tmp_path: Path) -> None:
    env = RecordTrajectory(gym.make("CartPole-v1"), tmp_path)
    with pytest.raises(gym.error.ResetNeeded, match=r"call reset\(\) before step\(\)"):
        env.step(0)
    assert list(tmp_path.iterdir()) == []


def test_flush_every_writes_during_the_episode(tmp_path: Path) -> None:
    env = RecordTrajectory(RaisingEnv(), tmp_path, flush_every=2)
    env.reset(seed=0)
    for _ in range(5):
        env.step(0)
    on_disk = (tmp_path / "trajectory.jsonl").read_text().splitlines()
    assert len(on_disk) >= 4
    env.close()
    assert [r["t"] for r in read_recording(tmp_path)[0].steps] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("flush_every", [1, 2, 3, 5])
def test_flush_every_writes_when_the_buffer_holds_that_many_lines(
    tmp_path: Path, flush_every: int
) -> None:
    env = RecordTrajectory(RaisingEnv(), tmp_path, flush_every=flush_every)
    path = tmp_path / "trajectory.jsonl"
    on_disk = 0
    # The documented rule, counted line by line: header and reset lines come
    # with the reset, a step adds one, and flush() writes what is buffered.
    buffered = 0
    for action in ["reset", *["step"] * 7, "reset", *["step"] * 4, "flush", *["step"] * 6]:
        if action == "reset":
            env.reset(seed=0)  # writes the unfinished episode first
            on_disk, buffered = on_disk + buffered, 2
        elif action == "flush":
            env.flush()
            on_disk, buffered = on_disk + buffered, 0
        else:
            env.step(0)
            buffered += 1
            if buffered >= flush_every:
                on_disk, buffered = on_disk + buffered, 0
        written = len(path.read_bytes().splitlines()) if path.exists() else 0
        assert written == on_disk, action
    env.close()
    assert len(path.read_bytes().splitlines()) == on_disk + buffered


def test_record_constructor_args_rebuild_the_wrapper(tmp_path: Path) -> None:
    env = RecordTrajectory(
        gym.make("CartPole-v1"), tmp_path / "rec", max_array_size=None, flush_every=10
    )
    assert env._saved_kwargs == {
        "output_dir": str(tmp_path / "rec"),
        "max_array_size": None,
        "flush_every": 10,
        "compress": False,
        "full_every": None,
        "images": "summary",
        "versions_of": (),
        "render": False,
    }
    stack = env.spec.additional_wrappers if env.spec else ()
    assert [w.name for w in stack][-1] == "RecordTrajectory"
    assert stack[-1].kwargs["flush_every"] == 10


def test_bad_arguments_say_what_was_expected(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"expects a gymnasium\.Env, got str"):
        RecordTrajectory("CartPole-v1", tmp_path)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="flush_every must be None or a positive int, got 0"):
        RecordTrajectory(gym.make("CartPole-v1"), tmp_path, flush_every=0)


def test_wrapper_returns_what_the_env_returns(tmp_path: Path) -> None:
    bare = gym.make("Pendulum-v1")
    wrapped = RecordTrajectory(gym.make("Pendulum-v1"), tmp_path)
    expected_obs, _ = bare.reset(seed=4)
    obs, _ = wrapped.reset(seed=4)
    np.testing.assert_array_equal(obs, expected_obs)
    action = np.array([0.3], dtype=np.float32)
    for got, want in zip(wrapped.step(action), bare.step(action), strict=True):
        np.testing.assert_array_equal(got, want)
    wrapped.close()
