"""Golden trajectories of every env of Gymnasium's classic-control and toy-text registries.

``registered_envs`` turns a family of registered envs into test parameters
(selected here by their entry point): an env added to the family gets a test
of its own, and ``--update-goldens`` writes its golden, with no new test code.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

from gym_goldens import registered_envs, rollout

# CartPole-v0 is still registered, but out of date: gym.make warns about it.
pytestmark = pytest.mark.filterwarnings("ignore:.*is out of date:DeprecationWarning")


@pytest.mark.parametrize("env_id", registered_envs(entry_point="gymnasium.envs.classic_control*"))
def test_classic_control(record_trajectory, env_id):
    rollout(record_trajectory(gym.make(env_id)), seed=0, steps=100)


@pytest.mark.parametrize("env_id", registered_envs(entry_point="gymnasium.envs.toy_text*"))
def test_toy_text(record_trajectory, env_id):
    rollout(record_trajectory(gym.make(env_id)), seed=0, steps=100)
