"""Recordings that the series and plot tests read."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import gymnasium as gym
import numpy as np
import orjson

from gym_goldens import RecordTrajectory
from tests.support.envs import ScriptedEnv, run


def record_cartpole(out: Path, *, steps: int = 60, seed: int = 0) -> Path:
    """Two episodes: ``steps`` steps of a pole kept upright, then ten random steps."""
    env = RecordTrajectory(gym.make("CartPole-v1"), out)
    env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    for _ in range(steps):
        obs, _, terminated, _, _ = env.step(int(obs[2] + 0.5 * obs[3] > 0))
        assert not terminated
    env.reset()
    for _ in range(10):
        env.step(env.action_space.sample())
    env.close()
    return out


def record_alternating(
    path: Path, *, seed: int = 0, steps: int = 5, resets: int = 1, compress: bool = False
) -> Path:
    """``resets`` CartPole episodes of ``steps`` steps, pushing left and right in turn."""
    env = RecordTrajectory(gym.make("CartPole-v1"), path, compress=compress)
    for episode in range(resets):
        env.reset(seed=seed + episode)
        for t in range(steps):
            env.step(t % 2)
    env.close()
    return path


def perturb(
    golden: Path, actual: Path, *, index: int, from_t: int, delta: float, episode: int = 0
) -> Path:
    """Copy a recording, adding ``delta`` to obs[index] of one episode from step ``from_t`` on."""
    shutil.copytree(golden, actual)
    path = actual / "trajectory.jsonl"
    lines = path.read_bytes().splitlines()
    current = -1
    for number, raw in enumerate(lines):
        record = orjson.loads(raw)
        current += record["event"] == "header"
        if current == episode and record["event"] == "step" and record["t"] >= from_t:
            record["obs"][index] += delta
            lines[number] = orjson.dumps(record, option=orjson.OPT_SORT_KEYS)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return actual


class GaugeEnv(gym.Env[dict[str, object], int]):
    """Dict observations, a float and a string in info, and a NaN once."""

    observation_space = gym.spaces.Dict(
        {"pos": gym.spaces.Box(-1.0, 1.0, (2,)), "mode": gym.spaces.Discrete(3)}
    )
    action_space = gym.spaces.Discrete(2)

    def __init__(self, drift: float = 0.0) -> None:
        self.drift = drift
        self.t = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, object] | None = None
    ) -> tuple[dict[str, object], dict[str, object]]:
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {"energy": 1.0, "tag": "start"}

    def step(self, action: int) -> tuple[dict[str, object], float, bool, bool, dict[str, object]]:
        self.t += 1
        energy = (
            float("nan")
            if self.t == 3
            else 1.0 - self.t / 10 + (self.drift if self.t >= 6 else 0.0)
        )
        return self._obs(), 0.5, False, False, {"energy": energy, "tag": "run"}

    def _obs(self) -> dict[str, object]:
        pos = np.array([self.t / 10, -self.t / 10], dtype=np.float32)
        return {"pos": pos, "mode": self.t % 3}


def record_gauge(out: Path, drift: float = 0.0) -> Path:
    env = RecordTrajectory(GaugeEnv(drift), out)
    env.reset(seed=0)
    for _ in range(8):
        env.step(0)
    env.close()
    return out


def record_extremes(out: Path, *, sign: float) -> Path:
    """Observations at the ends of float64; with the other sign their differences overflow."""
    rows = [[1e308, -1e308], [math.inf, 1e300], [1.0, 1e308], [2.0, -1e308]]
    observations = [np.array(row) * sign for row in rows]
    space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
    run(RecordTrajectory(ScriptedEnv(space, observations), out), [0] * (len(rows) - 1))
    return out
