"""Small purpose-built envs for edge cases that no registered env covers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import gymnasium as gym
import numpy as np
from gymnasium import spaces

TAXI: Final = "Taxi-v4" if "Taxi-v4" in gym.registry else "Taxi-v3"
"""The Taxi env of the installed gymnasium: v4 from 1.3 on, which dropped v3."""


class ScriptedEnv(gym.Env[Any, Any]):
    """Returns the given observations, rewards and infos, one per step.

    ``observations[0]`` and ``infos[0]`` come from ``reset``; step ``t``
    returns ``observations[t]``, ``rewards[t - 1]`` and ``infos[t]``, and
    truncates after the last observation.
    """

    def __init__(
        self,
        observation_space: spaces.Space[Any],
        observations: Sequence[Any],
        *,
        rewards: Sequence[Any] | None = None,
        infos: Sequence[dict[str, Any]] | None = None,
        action_space: spaces.Space[Any] | None = None,
    ) -> None:
        self.observation_space = observation_space
        self.action_space = action_space or spaces.Discrete(2)
        self.observations = list(observations)
        self.rewards = list(rewards) if rewards is not None else [0.0] * len(self.observations)
        self.infos = list(infos) if infos is not None else [{} for _ in self.observations]
        self.t = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return self.observations[0], self.infos[0]

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        self.t += 1
        last = self.t >= len(self.observations) - 1
        return (
            self.observations[self.t],
            self.rewards[self.t - 1],
            False,
            last,
            self.infos[self.t],
        )


class ImageEnv(gym.Env[np.ndarray, int]):
    """A deterministic 210x160x3 uint8 image env, like an Atari frame.

    Args:
        poke: The step whose frame gets one pixel changed by 50.
        dtype: The observation dtype.
        shape: The frame shape.
        length: Steps until truncation.
    """

    def __init__(
        self,
        poke: int | None = None,
        *,
        dtype: Any = np.uint8,
        shape: tuple[int, ...] = (210, 160, 3),
        length: int = 1000,
    ) -> None:
        self.observation_space = spaces.Box(0, 255, shape, dtype=dtype)
        self.action_space = spaces.Discrete(3)
        self.poke = poke
        self.length = length
        self.t = 0
        self._base = (np.arange(int(np.prod(shape))) * 7 % 251).astype(np.uint8).reshape(shape)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return self._frame(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.t += 1
        return self._frame(), 1.0, False, self.t >= self.length, {}

    def _frame(self) -> np.ndarray:
        shape = self._base.shape
        # uint8 arithmetic wraps around: a new frame each step, in one cheap pass.
        frame = (self._base + np.uint8(self.t % 256)).astype(self.observation_space.dtype)
        if self.t == self.poke:
            pixel = (len(shape) and shape[0] // 2,) + (1,) * (len(shape) - 1)
            value = int(frame[pixel])
            frame[pixel] = value + 50 if value < 200 else value - 50
        return frame


class MultiObjectiveEnv(gym.Env[np.ndarray, int]):
    """A chain walk with a two-objective reward vector (distance, energy)."""

    def __init__(self, energy_cost: float = 0.1) -> None:
        self.observation_space = spaces.Box(-10.0, 10.0, (1,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)
        self.reward_space = spaces.Box(-np.inf, np.inf, (2,), dtype=np.float32)
        self.energy_cost = energy_cost
        self.position = 0.0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.position = 0.0
        return np.array([self.position], dtype=np.float32), {}

    def step(self, action: int) -> tuple[np.ndarray, np.ndarray, bool, bool, dict[str, Any]]:
        move = 1.0 if action else -1.0
        self.position += move
        reward = np.array([move, -self.energy_cost * abs(move)], dtype=np.float32)
        done = abs(self.position) >= 5
        return np.array([self.position], dtype=np.float32), reward, done, False, {}


class ScaleObs(gym.ObservationWrapper[Any, Any, Any]):
    """Multiplies CartPole's observations by ``factor``, in float64.

    In float64 a relative change of 1e-9 survives, where float32 would round
    it away: a knob for changes just inside or outside a tolerance.
    """

    def __init__(self, env: gym.Env[Any, Any], factor: float) -> None:
        super().__init__(env)
        self.factor = factor
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(4,), dtype=np.float64)

    def observation(self, observation: Any) -> Any:
        return np.asarray(observation, dtype=np.float64) * self.factor


def record_scaled_cartpole(
    path: Any,
    *,
    steps: int = 30,
    resets: int = 1,
    factor: float = 1.0,
    gravity: float | None = None,
    action: Any = lambda t: t % 2,
) -> Any:
    """Record CartPole (observations times ``factor``): ``resets`` episodes of up to ``steps``.

    Episode ``i`` is reset with seed ``i``; ``action(t)`` gives the action of step ``t``.
    """
    from gym_goldens import RecordTrajectory

    env = RecordTrajectory(ScaleObs(gym.make("CartPole-v1"), factor), path)
    if gravity is not None:
        env.unwrapped.gravity = gravity  # type: ignore[attr-defined]
    for episode in range(resets):
        env.reset(seed=episode)
        for t in range(steps):
            _, _, terminated, truncated, _ = env.step(action(t))
            if terminated or truncated:
                break
    env.close()
    return path


def run(env: gym.Env[Any, Any], actions: Sequence[Any], *, seed: int = 0) -> None:
    """Reset ``env`` with ``seed``, take ``actions`` (resetting after each end), close it."""
    env.reset(seed=seed)
    for number, action in enumerate(actions, start=1):
        _, _, terminated, truncated, _ = env.step(action)
        if (terminated or truncated) and number < len(actions):
            env.reset()
    env.close()


class RebuildingSpacesEnv(gym.Env[np.ndarray, int]):
    """Builds a new action space at every reset, as highway-env does.

    Its dynamics are deterministic given the actions; what a rollout samples
    from the space it hands out is up to the rollout's seeding.
    """

    observation_space = spaces.Box(-100.0, 100.0, (1,), dtype=np.float64)

    def __init__(self, length: int = 6) -> None:
        self.length = length
        self.position = 0.0
        self.t = 0
        self.action_space = spaces.Discrete(5)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.action_space = spaces.Discrete(5)  # a new, unseeded space
        self.position, self.t = 0.0, 0
        return np.array([self.position]), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.t += 1
        self.position += float(action) - 2.0
        return np.array([self.position]), float(action), False, self.t >= self.length, {}
