"""Golden trajectories of Gymnasium's classic-control envs."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from gym_goldens import rollout


def test_cartpole_random_policy(record_trajectory):
    env = record_trajectory(gym.make("CartPole-v1"))
    rollout(env, seed=0, steps=300)


def test_mountain_car_pushes_right(record_trajectory):
    env = record_trajectory(gym.make("MountainCar-v0"))
    env.reset(seed=3)
    for _ in range(200):
        _, _, terminated, truncated, _ = env.step(2)
        if terminated or truncated:
            break


@pytest.mark.goldens(rtol={"obs": 1e-5})
def test_pendulum_sine_torque(record_trajectory):
    env = record_trajectory(gym.make("Pendulum-v1"))
    env.reset(seed=7)
    for t in range(200):
        torque = np.array([2.0 * np.sin(t / 10.0)], dtype=np.float32)
        env.step(torque)


@pytest.mark.parametrize("seed", [0, 1])
def test_acrobot_seeds(record_trajectory, seed):
    env = record_trajectory(gym.make("Acrobot-v1"))
    rollout(env, seed=seed, steps=100)
