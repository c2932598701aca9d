"""Golden trajectories of Gymnasium's toy-text envs, two envs in one test."""

from __future__ import annotations

import gymnasium as gym

from gym_goldens import rollout


def test_frozen_lake_slippery(record_trajectory):
    env = record_trajectory(gym.make("FrozenLake-v1", is_slippery=True))
    rollout(env, seed=42, steps=100)


def test_two_lakes(record_trajectory):
    # Two envs with the same id in one test: the second is recorded as "FrozenLake-v1-2".
    calm = record_trajectory(gym.make("FrozenLake-v1", is_slippery=False))
    large = record_trajectory(gym.make("FrozenLake-v1", map_name="8x8"))
    rollout(calm, seed=5, steps=60)
    rollout(large, seed=6, steps=60)


class TestBlackjack:
    def test_sticks_on_twenty(self, record_trajectory):
        env = record_trajectory(gym.make("Blackjack-v1", sab=True))
        obs, _ = env.reset(seed=11)
        for _ in range(50):
            action = 0 if obs[0] >= 20 else 1
            obs, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                obs, _ = env.reset()
