"""ReplayActions: drive an env with a recording's actions and reset arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from gym_goldens import GoldenFormatError, RecordTrajectory, ReplayActions, compare, rollout
from gym_goldens.format.reader import read_recording
from gym_goldens.record.replay import decode_action
from tests.support import determinism_envs as envs
from tests.support.bombs import header_line, replay_peak


def _record(env: gym.Env, folder: Path, **kwargs: Any) -> None:
    recorder = RecordTrajectory(env, folder, **kwargs)
    rollout(recorder, seed=0, steps=40)
    recorder.close()


@pytest.mark.parametrize(
    "make_env",
    [
        lambda: gym.make("CartPole-v1"),
        lambda: gym.make("Pendulum-v1"),
        lambda: gym.make("Blackjack-v1"),
        lambda: gym.make("FrozenLake-v1", is_slippery=True),
        envs.SeededEnv,
    ],
)
def test_replaying_under_another_policy_records_the_golden_again(
    make_env: Any, tmp_path: Path
) -> None:
    _record(make_env(), tmp_path / "golden")
    replayed = ReplayActions(RecordTrajectory(make_env(), tmp_path / "replay"), tmp_path / "golden")
    rollout(replayed, seed=99, steps=40)  # other seeds, other actions: all replaced
    replayed.close()
    comparison = compare(tmp_path / "golden", tmp_path / "replay")
    assert comparison.equal, comparison.differing


def _record_episodes(folder: Path, seeds: list[int]) -> None:
    """One episode per seed, each with its own actions, in one trajectory file."""
    recorder = RecordTrajectory(gym.make("MountainCar-v0"), folder)
    for number, seed in enumerate(seeds):
        recorder.reset(seed=seed)
        for t in range(4 + number):
            recorder.step((t + number) % 3)
    recorder.close()


def _replay(golden: Path, out: Path, episodes: int) -> None:
    replayed = ReplayActions(RecordTrajectory(gym.make("MountainCar-v0"), out), golden)
    for _ in range(episodes):
        replayed.reset(seed=99)
        for _ in range(6):
            replayed.step(1)  # the golden's actions replace these, as far as it has steps
    replayed.close()


def test_each_episode_of_the_file_replays_its_own_seed_and_actions(tmp_path: Path) -> None:
    _record_episodes(tmp_path / "golden", seeds=[1, 2, 3])
    assert [p.name for p in (tmp_path / "golden").iterdir()] == ["trajectory.jsonl"]
    _replay(tmp_path / "golden", tmp_path / "replay", episodes=3)
    replayed = list(read_recording(tmp_path / "replay"))
    assert [(e.header or {})["reset"]["seed"] for e in replayed] == [1, 2, 3]
    golden = list(read_recording(tmp_path / "golden"))
    for old, new in zip(golden, replayed, strict=True):
        steps = len(old.steps)
        assert [s["action"] for s in new.steps[:steps]] == [s["action"] for s in old.steps]
        assert [s["action"] for s in new.steps[steps:]] == [1] * (6 - steps)


def test_past_the_end_of_the_golden_the_test_drives(tmp_path: Path) -> None:
    recorder = RecordTrajectory(gym.make("MountainCar-v0"), tmp_path / "golden")
    recorder.reset(seed=1)
    for _ in range(3):
        recorder.step(2)
    recorder.close()
    replayed = ReplayActions(
        RecordTrajectory(gym.make("MountainCar-v0"), tmp_path / "replay"), tmp_path / "golden"
    )
    replayed.reset(seed=5)
    for _ in range(5):
        replayed.step(0)
    replayed.close()
    comparison = compare(tmp_path / "golden", tmp_path / "replay")
    (episode,) = comparison.differing
    assert (episode.golden_steps, episode.actual_steps) == (3, 5)
    assert episode.first is not None
    assert episode.first.t == 4


@pytest.mark.parametrize(
    ("space", "value", "expected"),
    [
        (spaces.Discrete(3, start=1), 2, np.int64(2)),
        (
            spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32),
            [0.1, -0.5],
            np.array([0.1, -0.5], np.float32),
        ),
        (spaces.Box(-1.0, 1.0, shape=(), dtype=np.float64), 0.25, np.array(0.25)),
        (spaces.MultiDiscrete([3, 4]), [2, 3], np.array([2, 3], np.int64)),
        (spaces.MultiBinary(3), [1, 0, 1], np.array([1, 0, 1], np.int8)),
        (spaces.Text(5), "abc", "abc"),
    ],
)
def test_actions_decode_to_the_space_type_and_dtype(
    space: spaces.Space, value: Any, expected: Any
) -> None:
    decoded = decode_action(value, space, Path("golden"), 1)
    assert type(decoded) is type(expected)
    if isinstance(expected, np.ndarray | np.generic):
        assert decoded.dtype == expected.dtype
        assert decoded.shape == expected.shape
        np.testing.assert_array_equal(decoded, expected)
        assert decoded in space
    else:
        assert decoded == expected


def test_composite_actions_decode_part_by_part() -> None:
    space = spaces.Dict(
        {
            "move": spaces.Discrete(4),
            "force": spaces.Tuple((spaces.Box(0.0, 1.0, (1,)), spaces.MultiBinary(2))),
        }
    )
    decoded = decode_action({"move": 3, "force": [[0.5], [0, 1]]}, space, Path("golden"), 1)
    assert decoded in space
    assert isinstance(decoded["force"], tuple)
    assert decoded["force"][0].dtype == np.float32


def test_a_summarised_action_cannot_be_replayed(tmp_path: Path) -> None:
    space = spaces.Box(0.0, 1.0, shape=(8,), dtype=np.float32)

    class BigActionEnv(gym.Env[np.ndarray, np.ndarray]):
        observation_space = spaces.Discrete(1)
        action_space = space

        def reset(
            self, *, seed: int | None = None, options: dict | None = None
        ) -> tuple[int, dict]:
            super().reset(seed=seed)
            return 0, {}

        def step(self, action: np.ndarray) -> tuple[int, float, bool, bool, dict]:
            return 0, 0.0, False, False, {}

    _record(BigActionEnv(), tmp_path / "golden", max_array_size=4)
    with pytest.raises(
        GoldenFormatError, match=r"the action of episode 0, step t=1 is stored as an array summary"
    ):
        ReplayActions(BigActionEnv(), tmp_path / "golden")


def test_a_missing_recording_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(GoldenFormatError, match="no such file or folder"):
        ReplayActions(gym.make("CartPole-v1"), tmp_path / "nothing")


def test_a_replay_keeps_one_episode_of_its_golden_however_many_it_holds(tmp_path: Path) -> None:
    """What a replay holds does not grow with the golden's episodes (an episode bomb)."""
    header = header_line(tmp_path / "real")

    def peak(episodes: int) -> int:
        return replay_peak(
            tmp_path, header, episodes, lambda bomb: ReplayActions(gym.make("CartPole-v1"), bomb)
        )

    small, large = peak(1_000), peak(20_000)
    # Twenty times the episodes: holding each one would take about twenty times the memory.
    assert large < 2 * small, f"{small:,} bytes for 1,000 episodes, {large:,} for 20,000"
