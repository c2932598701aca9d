"""Test files of the plugin tests: the user's tests that ``pytester`` runs.

Each is a template (``str.format``) with knobs that change the dynamics, so
that a test records goldens with one setting and checks them with another.
"""

from __future__ import annotations

import inspect

from tests.support.envs import ScaleObs

# The example test, with a knob to perturb the dynamics.
CARTPOLE_TEST = """
import gymnasium as gym

GRAVITY = {gravity!r}

def test_cartpole(record_trajectory):
    env = record_trajectory(gym.make("CartPole-v1"))
    if GRAVITY is not None:
        env.unwrapped.gravity = GRAVITY
    env.action_space.seed(0)
    obs, info = env.reset(seed=0)
    for _ in range(300):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        if terminated or truncated:
            obs, info = env.reset()
"""

# A CartPole test whose pole is kept upright by a controller (so that its
# episodes are long), with GRAVITY to change the dynamics: the body of the
# pytester suites of the plot and report tests.
CONTROLLED_CARTPOLE_TEST = """
import gymnasium as gym

GRAVITY = {gravity}

def test_cartpole(record_trajectory):
    env = gym.make("CartPole-v1")
    env.unwrapped.gravity = GRAVITY
    env = record_trajectory(env)
    obs, _ = env.reset(seed=0)
    for _ in range({steps}):
        obs, *_ = env.step(int(obs[2] + 0.5 * obs[3] > 0))
"""

# CartPole whose observations are scaled by FACTOR, in float64 so that a
# relative change of 1e-9 survives (float32 would round it away).
SCALED_TEST = """
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

FACTOR = {factor!r}

{scale_obs}
{marker}
def test_scaled(record_trajectory):
    env = record_trajectory(ScaleObs(gym.make("CartPole-v1"), FACTOR){kwargs})
    env.action_space.seed(0)
    env.reset(seed=0)
    for _ in range(50):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
""".replace("{scale_obs}", inspect.getsource(ScaleObs))
