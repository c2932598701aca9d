"""A small env package, as a user would write one: importing it registers its envs.

- ``Sound/*``: deterministic envs (one of them builds a new action space in
  every ``reset``, as highway-env does).
- ``Planted/*``: each faulty in one way: the global RNG in ``step``, the
  iteration order of a set of strings in ``reset`` (which only another
  ``PYTHONHASHSEED`` changes), an observation outside its space (which
  gymnasium's ``check_env`` refuses), an error in ``step``.
- ``Loading/*``: entry points that load, lack a dependency, are broken,
  out of date, or registered for ``make_vec`` only; an env that checks its
  dependency only when it is made (as MiniGrid's WFC envs do).
- ``Dying/*``: an env that ends the interpreter in ``step``, as a crash in
  native code would: audit it only in worker processes.

The tests copy this file into a folder of their own as ``planted_envs.py``
(the CLI imports it from the current folder, and the audit's fresh
processes and workers import it by name), so it imports nothing from the
test suite.
"""

from __future__ import annotations

import os
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

IDS = {
    "Sound": ["Sound/NewActionSpace-v0", "Sound/Walker-v0"],
    "Planted": [
        "Planted/BadObservation-v0",
        "Planted/Crashes-v0",
        "Planted/GlobalRng-v0",
        "Planted/HashOrder-v0",
    ],
    "Loading": [
        "Loading/Broken-v0",
        "Loading/BrokenSubmodule-v0",
        "Loading/MissingDependency-v0",
        "Loading/NeedsExtra-v0",
        "Loading/Old-v0",
        "Loading/Old-v1",
        "Loading/VectorOnly-v0",
    ],
    "Dying": ["Dying/Exits-v0"],
}
"""Every id this module registers, by namespace."""

_LANDMARKS = frozenset(
    [
        *("alpha", "bravo", "charlie", "delta", "echo", "foxtrot"),
        *("golf", "hotel", "india", "juliet", "kilo", "lima"),
    ]
)


class Walker(gym.Env[np.ndarray, np.int64]):
    """Deterministic: every random number comes from ``self.np_random``."""

    observation_space = spaces.Box(-10.0, 10.0, shape=(2,), dtype=np.float64)
    episode_length = 12

    def __init__(self) -> None:
        self.action_space = spaces.Discrete(3)
        self._state = np.zeros(2)
        self._t = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._t = 0
        self._state = self.np_random.uniform(-1.0, 1.0, size=2)
        return self._state.copy(), {}

    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self._t += 1
        push = float(int(action) - 1)
        self._state = np.clip(0.9 * self._state + 0.1 * push + self._noise(), -10.0, 10.0)
        done = self._t >= self.episode_length
        return self._state.copy(), float(self._state.sum()), done, False, {"t": self._t}

    def _noise(self) -> np.ndarray:
        return self.np_random.normal(0.0, 0.01, size=2)


class NewActionSpaceWalker(Walker):
    """Builds a new action space in every ``reset``: the rollout must seed each one."""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        self.action_space = spaces.Discrete(3)
        return super().reset(seed=seed, options=options)


class GlobalRngWalker(Walker):
    """Draws its noise from the global ``np.random``, which ``reset(seed=...)`` does not seed."""

    def _noise(self) -> np.ndarray:
        return np.random.normal(0.0, 0.01, size=2)


class HashOrderWalker(Walker):
    """Plans a tour of landmarks in the iteration order of a set of strings.

    In one process the order is always the same; another ``PYTHONHASHSEED``
    gives another.
    """

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        obs, info = super().reset(seed=seed, options=options)
        return obs, {**info, "tour": list(_LANDMARKS)}


class BadObservationWalker(Walker):
    """Deterministic, but its observations leave their space: ``check_env`` fails."""

    observation_space = spaces.Box(-0.5, 0.5, shape=(2,), dtype=np.float64)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        obs, info = super().reset(seed=seed, options=options)
        self._state = obs = obs + 2.0
        return obs.copy(), info


class CrashingWalker(Walker):
    """Raises in its fifth step."""

    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._t == 4:
            raise RuntimeError("the walker fell over")
        return super().step(action)


class NeedsExtraWalker(Walker):
    """Loads, but refuses to be made: it needs an optional dependency that is not installed."""

    def __init__(self) -> None:
        raise gym.error.DependencyNotInstalled(
            'the walker needs its extra: pip install "planted[extra]"'
        )


class ExitingWalker(Walker):
    """Ends the process in its first step, as a segmentation fault would."""

    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        os._exit(70)


def _register() -> None:
    for env_id, entry_point in [
        ("Sound/Walker-v0", "planted_envs:Walker"),
        ("Sound/NewActionSpace-v0", "planted_envs:NewActionSpaceWalker"),
        ("Planted/GlobalRng-v0", "planted_envs:GlobalRngWalker"),
        ("Planted/HashOrder-v0", "planted_envs:HashOrderWalker"),
        ("Planted/BadObservation-v0", "planted_envs:BadObservationWalker"),
        ("Planted/Crashes-v0", "planted_envs:CrashingWalker"),
        ("Loading/Broken-v0", "planted_envs:NoSuchWalker"),
        ("Loading/BrokenSubmodule-v0", "planted_envs.missing:Walker"),
        ("Loading/MissingDependency-v0", "planted_absent_dependency.envs:Walker"),
        ("Loading/NeedsExtra-v0", "planted_envs:NeedsExtraWalker"),
        ("Loading/Old-v0", "planted_absent_dependency.envs:OldWalker"),
        ("Loading/Old-v1", "planted_envs:Walker"),
        ("Dying/Exits-v0", "planted_envs:ExitingWalker"),
    ]:
        gym.register(id=env_id, entry_point=entry_point)
    gym.register(id="Loading/VectorOnly-v0", vector_entry_point="planted_envs:Walker")


_register()
