"""Golden trajectories of PettingZoo's multi-agent envs: parallel, AEC, and one of our own."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium import spaces

pytest.importorskip("pettingzoo", reason="pip install 'pytest-gym-goldens[pettingzoo]'")
pytest.importorskip("pygame", reason="PettingZoo's classic games draw with pygame-ce")

from pettingzoo import ParallelEnv

with warnings.catch_warnings():
    # PettingZoo 1.27 deprecates importing an env's module, in favour of pettingzoo.make.
    warnings.simplefilter("ignore", DeprecationWarning)
    from pettingzoo.classic import connect_four_v3, rps_v2

from gym_goldens import rollout


def test_rock_paper_scissors(record_trajectory):
    # A parallel env: each step record holds both players' actions, observations, rewards,
    # terminations, truncations and infos, keyed by player: obs.player_0, reward.player_1...
    rollout(record_trajectory(rps_v2.parallel_env(max_cycles=15)), seed=0, steps=40)


def test_connect_four(record_trajectory):
    # An AEC env: one record per move, of the player to move ("agent"), with what env.last()
    # gave it and the column it chose; rollout() picks columns within the action mask of the
    # observation, and steps a player whose game is over with None.
    rollout(record_trajectory(connect_four_v3.env()), seed=0, steps=100)


class Herd(ParallelEnv):
    """Sheep that drift towards a dog; a sheep that reaches the pen leaves the herd.

    Each sheep observes its position and the dog's (Box(4,) float32) and moves one of four
    ways; the dog is part of the env. A custom ParallelEnv, as PettingZoo's docs write them.
    """

    metadata = {"name": "herd_v0", "render_modes": []}  # noqa: RUF012
    MOVES = np.array([[0.0, 0.1], [0.1, 0.0], [0.0, -0.1], [-0.1, 0.0]])

    def __init__(self, sheep=3, max_cycles=25):
        self.possible_agents = [f"sheep_{i}" for i in range(sheep)]
        self.max_cycles = max_cycles
        self.observation_spaces = {
            agent: spaces.Box(-2.0, 2.0, (4,), dtype=np.float32) for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(4) for agent in self.possible_agents}

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed=None, options=None):
        if seed is not None or not hasattr(self, "rng"):
            self.rng = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        self.cycle = 0
        self.dog = self.rng.uniform(-1.0, 1.0, size=2)
        self.position = {agent: self.rng.uniform(-1.0, 1.0, size=2) for agent in self.agents}
        return {agent: self._observe(agent) for agent in self.agents}, {a: {} for a in self.agents}

    def step(self, actions):
        self.cycle += 1
        self.dog = np.clip(self.dog + self.rng.normal(scale=0.05, size=2), -1.0, 1.0)
        rewards, terminations, truncations, infos = {}, {}, {}, {}
        for agent in self.agents:
            pull = 0.05 * (self.dog - self.position[agent])
            self.position[agent] = np.clip(
                self.position[agent] + self.MOVES[actions[agent]] + pull, -2.0, 2.0
            )
            distance = float(np.linalg.norm(self.position[agent] - [0.5, 0.5]))
            rewards[agent] = -distance
            terminations[agent] = distance < 0.3  # in the pen
            truncations[agent] = self.cycle >= self.max_cycles
            infos[agent] = {"distance_to_pen": distance}
        observations = {agent: self._observe(agent) for agent in self.agents}
        self.agents = [a for a in self.agents if not (terminations[a] or truncations[a])]
        return observations, rewards, terminations, truncations, infos

    def _observe(self, agent):
        return np.concatenate([self.position[agent], self.dog]).astype(np.float32)


# Field patterns name agents as any key: sheep_2's info is compared more loosely here.
@pytest.mark.goldens(rtol={"info.sheep_2": 1e-4})
def test_herd(record_trajectory):
    rollout(record_trajectory(Herd()), seed=0, steps=60)
