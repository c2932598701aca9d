"""Replaying a golden's actions checks the dynamics alone."""

from __future__ import annotations

import gymnasium as gym

from gym_goldens import rollout


def test_pendulum_dynamics(record_trajectory):
    # With replay=True the env is driven by the golden's own actions and reset seeds, so
    # this golden keeps checking the dynamics even if the policy below changes.
    env = record_trajectory(gym.make("Pendulum-v1"), replay=True)
    rollout(env, seed=0, steps=200)
