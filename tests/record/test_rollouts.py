"""rollout(): a seeded rollout in one call."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from gym_goldens import RecordTrajectory, compare, read_recording, rollout
from tests.support.envs import MultiObjectiveEnv, RebuildingSpacesEnv


def _manual_loop(env: gym.Env, seed: int, steps: int) -> None:
    env.action_space.seed(seed)
    env.reset(seed=seed)
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()


def test_it_records_what_the_hand_written_loop_records(tmp_path: Path) -> None:
    by_hand = RecordTrajectory(gym.make("CartPole-v1"), tmp_path / "hand")
    _manual_loop(by_hand, seed=0, steps=120)
    by_hand.close()
    helper = RecordTrajectory(gym.make("CartPole-v1"), tmp_path / "helper")
    result = rollout(helper, seed=0, steps=120)
    helper.close()
    assert compare(tmp_path / "hand", tmp_path / "helper").equal
    assert result.episodes == len(read_recording(tmp_path / "helper"))


def test_it_resets_when_an_episode_ends(tmp_path: Path) -> None:
    env = RecordTrajectory(gym.make("CartPole-v1"), tmp_path)
    result = rollout(env, seed=0, steps=100)
    env.close()
    episodes = list(read_recording(tmp_path))
    assert result.steps == 100
    assert result.episodes == len(episodes) > 1
    assert sum(len(e.steps) for e in episodes) == 100
    assert all(e.complete for e in episodes[:-1])
    assert episodes[0].header is not None
    assert episodes[0].header["reset"]["seed"] == 0
    assert all(e.header is not None and e.header["reset"]["seed"] is None for e in episodes[1:])
    # CartPole pays 1 per step, so the returns are the episode lengths.
    assert list(result.returns) == [float(len(e.steps)) for e in episodes]


def test_the_same_seed_takes_the_same_actions_and_another_seed_others(tmp_path: Path) -> None:
    for folder, seed in [("a", 4), ("b", 4), ("c", 5)]:
        env = RecordTrajectory(gym.make("FrozenLake-v1"), tmp_path / folder)
        rollout(env, seed=seed, steps=50)
        env.close()
    assert compare(tmp_path / "a", tmp_path / "b").equal
    assert not compare(tmp_path / "a", tmp_path / "c").equal


def test_a_policy_chooses_the_actions(tmp_path: Path) -> None:
    seen: list[np.ndarray] = []

    def policy(obs: np.ndarray) -> np.ndarray:
        seen.append(obs)
        return np.array([1.0], dtype=np.float32)

    env = RecordTrajectory(gym.make("Pendulum-v1"), tmp_path)
    rollout(env, seed=2, steps=10, policy=policy)
    env.close()
    actions = [step["action"] for step in read_recording(tmp_path)[0].steps]
    assert actions == [[1.0]] * 10
    assert len(seen) == 10


def test_zero_steps_only_resets() -> None:
    result = rollout(gym.make("CartPole-v1"), seed=0, steps=0)
    assert (result.steps, result.episodes, result.returns) == (0, 1, (0.0,))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"seed": 0, "steps": -1}, ValueError, "rollout steps must be zero or more, got -1"),
        ({"seed": 0, "steps": 2.5}, TypeError, "rollout steps must be an int, got float 2.5"),
        ({"seed": None, "steps": 3}, TypeError, "rollout seed must be an int, got NoneType None"),
        ({"seed": 0, "steps": 3, "policy": 1}, TypeError, "rollout policy must be a callable"),
    ],
)
def test_bad_arguments(kwargs: dict, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        rollout(gym.make("CartPole-v1"), **kwargs)


def _actions(path: Path) -> list[list[int]]:
    return [[record["action"] for record in episode.steps] for episode in read_recording(path)]


def test_an_env_that_builds_its_action_space_in_reset_takes_the_same_actions_every_run(
    tmp_path: Path,
) -> None:
    for folder in ("a", "b"):
        env = RecordTrajectory(RebuildingSpacesEnv(), tmp_path / folder)
        rollout(env, seed=3, steps=40)
        env.close()
    assert compare(tmp_path / "a", tmp_path / "b").equal
    episodes = _actions(tmp_path / "a")
    assert len(episodes) == 7
    # Each new space is seeded from the rollout's seed and the episode's index.
    assert len({tuple(actions) for actions in episodes}) == len(episodes)


def test_another_seed_takes_other_actions_in_a_rebuilt_space(tmp_path: Path) -> None:
    for folder, seed in (("a", 3), ("b", 4)):
        env = RecordTrajectory(RebuildingSpacesEnv(), tmp_path / folder)
        rollout(env, seed=seed, steps=20)
        env.close()
    assert _actions(tmp_path / "a")[1] != _actions(tmp_path / "b")[1]


def _returns_of(path: Path) -> list[tuple[float, ...]]:
    """Each episode's summed reward vector, from the recording."""
    sums = [
        np.sum([step["reward"] for step in episode.steps], axis=0) if episode.steps else (0.0, 0.0)
        for episode in read_recording(path)
    ]
    return [tuple(float(x) for x in total) for total in sums]


def test_a_vector_reward_is_summed_per_objective(tmp_path: Path) -> None:
    env = RecordTrajectory(MultiObjectiveEnv(energy_cost=0.25), tmp_path)
    result = rollout(env, seed=0, steps=40)
    env.close()
    assert result.episodes == len(read_recording(tmp_path)) > 1
    assert all(isinstance(total, tuple) and len(total) == 2 for total in result.returns)
    np.testing.assert_allclose(result.returns, _returns_of(tmp_path), rtol=1e-6)
    # Every step moves by one and pays 0.25 of energy for it.
    assert sum(total[1] for total in result.returns) == pytest.approx(-0.25 * 40)  # type: ignore[index]


def test_mo_gymnasium_envs_roll_out(tmp_path: Path) -> None:
    mo_gymnasium = pytest.importorskip(
        "mo_gymnasium", reason="mo-gymnasium is not installed: pip install mo-gymnasium"
    )
    env = RecordTrajectory(mo_gymnasium.make("deep-sea-treasure-v0"), tmp_path)
    result = rollout(env, seed=0, steps=30)
    env.close()
    assert result.steps == 30
    assert [len(total) for total in result.returns] == [2] * result.episodes  # type: ignore[arg-type]
    np.testing.assert_allclose(result.returns, _returns_of(tmp_path), rtol=1e-6)
