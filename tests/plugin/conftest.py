"""Helpers of the plugin tests: small projects run by ``pytester``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import gymnasium  # noqa: F401
import hypothesis  # noqa: F401
import numpy  # noqa: F401
import pytest

# pytester runs sessions in this process and afterwards drops the modules they
# imported; numpy refuses to be imported twice, and hypothesis's plugin takes
# seconds to import. Importing them here keeps them loaded across sessions.

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

# CartPole whose observations are scaled by FACTOR, in float64 so that a
# relative change of 1e-9 survives (float32 would round it away).
SCALED_TEST = """
import gymnasium as gym
import numpy as np
import pytest

FACTOR = {factor!r}

class ScaleObs(gym.ObservationWrapper):
    def __init__(self, env, factor):
        super().__init__(env)
        self.factor = factor
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(4,), dtype=np.float64)

    def observation(self, observation):
        return np.asarray(observation, dtype=np.float64) * self.factor

{marker}
def test_scaled(record_trajectory):
    env = record_trajectory(ScaleObs(gym.make("CartPole-v1"), FACTOR){kwargs})
    env.action_space.seed(0)
    env.reset(seed=0)
    for _ in range(50):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
"""


@pytest.fixture
def cartpole_test(pytester: pytest.Pytester) -> Callable[..., Path]:
    """Write ``test_cp.py``: the issue's CartPole test, optionally perturbed."""

    def write(gravity: float | None = None) -> Path:
        return pytester.makepyfile(test_cp=CARTPOLE_TEST.format(gravity=gravity))

    return write


@pytest.fixture
def scaled_test(pytester: pytest.Pytester) -> Callable[..., Path]:
    """Write ``test_scaled.py``: CartPole with observations times ``factor``."""

    def write(factor: float = 1.0, *, marker: str = "", kwargs: str = "") -> Path:
        return pytester.makepyfile(
            test_scaled=SCALED_TEST.format(factor=factor, marker=marker, kwargs=kwargs)
        )

    return write


def snapshot(folder: Path) -> dict[Path, tuple[bytes, int]]:
    """Every file under ``folder`` with its bytes and mtime."""
    return {
        path: (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def files_under() -> Callable[[Path], dict[Path, tuple[bytes, int]]]:
    """``snapshot``, as a fixture."""
    return snapshot
