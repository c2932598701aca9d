"""A small custom PettingZoo ParallelEnv, with knobs: the multi-agent tests' own env.

Self-contained (numpy, gymnasium and pettingzoo only), so that the plugin
tests copy it into their pytester projects as it is.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv


class Drifters(ParallelEnv):  # type: ignore[misc]
    """Agents on a plane, each pushed by its action and a seeded drift.

    ``agent_1`` leaves (terminates) at cycle ``leave_at``; the last agent
    joins at cycle ``join_at``; every agent left is truncated at
    ``max_cycles``. Each agent's info holds the cycle and its distance from
    the origin.

    Args:
        agents: How many agents.
        max_cycles: The cycle that truncates the episode.
        agent_2_gain: How far ``agent_2`` moves per action (1.0 as the
            others): a knob that changes one agent's dynamics.
        agent_1_info_scale: Scales the distance in ``agent_1``'s info only
            (1.0 the true one): a knob that changes one agent's info.
        leave_at: The cycle at which ``agent_1`` leaves; None never.
        join_at: The cycle at which the last agent joins; None from the start.
    """

    metadata: ClassVar[dict[str, Any]] = {"name": "drifters_v0", "render_modes": []}

    def __init__(
        self,
        agents: int = 3,
        max_cycles: int = 8,
        *,
        agent_2_gain: float = 1.0,
        agent_1_info_scale: float = 1.0,
        leave_at: int | None = 4,
        join_at: int | None = 2,
    ) -> None:
        self.possible_agents = [f"agent_{i}" for i in range(agents)]
        self.render_mode = None
        self.max_cycles = max_cycles
        self.agent_2_gain = agent_2_gain
        self.agent_1_info_scale = agent_1_info_scale
        self.leave_at = leave_at
        self.join_at = join_at
        self.agents: list[str] = []
        self.observation_spaces = {
            agent: spaces.Box(-np.inf, np.inf, (2,), dtype=np.float64)
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(5) for agent in self.possible_agents}

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        if seed is not None or not hasattr(self, "rng"):
            # Seeded by the first reset; later resets carry the generator on.
            self.rng = np.random.default_rng(seed)
        self.cycle = 0
        late = self.possible_agents[-1] if self.join_at else None
        self.agents = [agent for agent in self.possible_agents if agent != late]
        self.positions = {agent: self.rng.normal(size=2) for agent in self.possible_agents}
        return {agent: self._obs(agent) for agent in self.agents}, self._infos(self.agents)

    def step(self, actions: dict[str, Any]) -> tuple[Any, Any, Any, Any, Any]:
        self.cycle += 1
        moves = np.array([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]], dtype=np.float64)
        stepped = list(self.agents)
        rewards = {}
        for agent in stepped:
            gain = self.agent_2_gain if agent == "agent_2" else 1.0
            drift = self.rng.normal(scale=0.1, size=2)
            self.positions[agent] = self.positions[agent] + 0.5 * gain * moves[actions[agent]]
            self.positions[agent] = self.positions[agent] + drift
            rewards[agent] = -float(np.linalg.norm(self.positions[agent]))
        terminations = {a: a == "agent_1" and self.cycle == self.leave_at for a in stepped}
        truncations = {agent: self.cycle >= self.max_cycles for agent in stepped}
        self.agents = [a for a in stepped if not (terminations[a] or truncations[a])]
        if self.join_at is not None and self.cycle == self.join_at and self.cycle < self.max_cycles:
            # The late agent joins, with its first observation in this step's.
            late = self.possible_agents[-1]
            stepped.append(late)
            self.agents.append(late)
            rewards[late], terminations[late], truncations[late] = 0.0, False, False
        observations = {agent: self._obs(agent) for agent in stepped}
        return observations, rewards, terminations, truncations, self._infos(stepped)

    def _obs(self, agent: str) -> np.ndarray:
        return self.positions[agent].copy()

    def _infos(self, agents: list[str]) -> dict[str, dict[str, Any]]:
        infos = {}
        for agent in agents:
            distance = float(np.linalg.norm(self.positions[agent]))
            if agent == "agent_1":
                distance *= self.agent_1_info_scale
            infos[agent] = {"cycle": self.cycle, "distance": distance}
        return infos
