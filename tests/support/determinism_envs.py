"""Small envs, each nondeterministic in one way, and a deterministic control.

The plugin tests copy this file into their pytester projects, so it imports
nothing from the test suite.
"""

from __future__ import annotations

import random
import time
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

_NAMES = frozenset(
    [
        *("alpha", "bravo", "charlie", "delta", "echo", "foxtrot"),
        *("golf", "hotel", "india", "juliet", "kilo", "lima"),
    ]
)
_SORTED_NAMES = sorted(_NAMES)
_CREATED = [0]


class SeededEnv(gym.Env[np.ndarray, np.int64]):
    """Deterministic: every random number comes from ``self.np_random``."""

    observation_space = spaces.Box(-10.0, 10.0, shape=(2,), dtype=np.float64)
    action_space = spaces.Discrete(2)
    episode_length = 15

    def __init__(self) -> None:
        self._state = np.zeros(2)
        self._t = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._t = 0
        self._state = self._start()
        return self._state.copy(), {}

    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self._t += 1
        push = 1.0 if int(action) == 1 else -1.0
        self._state = np.clip(0.9 * self._state + 0.1 * push + self._noise(), -10.0, 10.0)
        done = self._t >= self.episode_length
        return self._state.copy(), float(self._state.sum()), done, False, self._info()

    def _start(self) -> np.ndarray:
        return self.np_random.uniform(-1.0, 1.0, size=2)

    def _noise(self) -> np.ndarray:
        return self.np_random.normal(0.0, 0.01, size=2)

    def _info(self) -> dict[str, Any]:
        return {"t": self._t}


class UnseededNumpyEnv(SeededEnv):
    """Draws its noise from the global ``np.random``, which reset does not seed."""

    def _noise(self) -> np.ndarray:
        return np.random.normal(0.0, 0.01, size=2)


class GlobalRandomEnv(SeededEnv):
    """Draws its start state from the global ``random`` module."""

    def _start(self) -> np.ndarray:
        return np.array([random.uniform(-1.0, 1.0), random.uniform(-1.0, 1.0)])


class SetOrderEnv(SeededEnv):
    """Walks a set of strings: its order depends on ``PYTHONHASHSEED``."""

    def _info(self) -> dict[str, Any]:
        name = list(_NAMES)[self._t % len(_NAMES)]
        return {"t": self._t, "visiting": name, "index": _SORTED_NAMES.index(name)}


class WallClockEnv(SeededEnv):
    """Puts the wall-clock time since reset in ``info``."""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        self._started = time.perf_counter()
        return super().reset(seed=seed, options=options)

    def _info(self) -> dict[str, Any]:
        return {"t": self._t, "time": time.perf_counter() - self._started}


class TimestampEnv(SeededEnv):
    """Puts the Unix time in ``info``: about 1.8e9, so within ``rtol=1e-6`` for half an hour."""

    def _info(self) -> dict[str, Any]:
        return {"t": self._t, "stamp": time.time()}


class UnseededResetInfoEnv(SeededEnv):
    """Seeds its state, but puts a sample of a space built in reset() in reset's info.

    highway-env does this: its reset() rebuilds the action space and reports
    ``action_space.sample()`` as ``info["action"]``. Here the sample is drawn
    from a wide space so that two runs never agree by chance.
    """

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        obs, _ = super().reset(seed=seed, options=options)
        # A fresh space, never seeded; wide enough that two runs of two
        # episodes draw the same values once in 10**12.
        unseeded = spaces.Discrete(10**6)
        return obs, {"action": int(unseeded.sample())}


class LeakyResetEnv(SeededEnv):
    """Counts steps across resets: a second rollout on the same env differs."""

    def __init__(self) -> None:
        super().__init__()
        self._total_steps = 0

    def _info(self) -> dict[str, Any]:
        self._total_steps += 1
        return {"t": self._t, "total_steps": self._total_steps}


class GlobalCounterEnv(SeededEnv):
    """Numbers its instances with a module-level counter: state leaks across envs."""

    def __init__(self) -> None:
        super().__init__()
        _CREATED[0] += 1
        self._serial = _CREATED[0]

    def _info(self) -> dict[str, Any]:
        return {"t": self._t, "serial": self._serial}


class OwnRngEnv(SeededEnv):
    """Ignores reset's seed: draws from its own generator, seeded once at construction."""

    def __init__(self) -> None:
        super().__init__()
        self._rng = np.random.default_rng(1234)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        self._t = 0
        self._state = self._rng.uniform(-1.0, 1.0, size=2)
        return self._state.copy(), {}

    def _noise(self) -> np.ndarray:
        return self._rng.normal(0.0, 0.01, size=2)


class FixedStartEnv(SeededEnv):
    """Ignores reset's seed and has no randomness at all."""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        self._t = 0
        self._state = np.array([0.5, -0.5])
        return self._state.copy(), {}

    def _noise(self) -> np.ndarray:
        return np.zeros(2)
