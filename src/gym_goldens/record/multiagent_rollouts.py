"""Seeded rollouts of PettingZoo envs, as :func:`~gym_goldens.record.rollouts.rollout` runs them.

``rollout(env, seed=0, steps=100)`` of a ``ParallelEnv`` steps every live
agent at once; of an ``AECEnv``, one agent per step, as ``agent_iter`` does.
An episode ends when no agent is left (``env.agents`` is empty); the env is
then reset again without a seed, as for a single env.

Without a policy every agent samples its own action space (see
:class:`AgentActions` for how it is seeded), within the action mask of its
observation (``obs["action_mask"]``, as PettingZoo's classic games give it)
or of its info (``info["action_mask"]``). An AEC agent that is terminated or
truncated is stepped with ``None``, as PettingZoo requires. A policy is
called ``policy(agent, obs)`` for each action, and is not called for a done
AEC agent.

PettingZoo itself is not imported: the env is driven through its API.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np
from gymnasium import spaces

from gym_goldens.record.agents import agent_api

__all__ = ["AgentActions", "AgentPolicy", "action_mask", "agent_rollout"]

AgentPolicy = Callable[[Any, Any], Any]
"""A policy of a multi-agent env: takes an agent and its observation, returns its action."""

_MASK_KEY: Final = "action_mask"


def agent_rollout(
    env: Any, *, seed: int, steps: int, policy: Callable[..., Any] | None = None
) -> list[float]:
    """Run a seeded rollout of ``steps`` steps of a PettingZoo env.

    Args:
        env: A ``ParallelEnv`` or ``AECEnv``, typically wrapped by the
            ``record_trajectory`` fixture.
        seed: Seeds the first reset and each agent's action space.
        steps: How many steps to take, across episodes: calls of ``step()``
            (of every agent at once in a parallel env, of one agent in an AEC env).
        policy: ``policy(agent, obs) -> action``; None samples the action spaces.

    Returns:
        Each episode's return, the last one possibly unfinished: the rewards
        of every agent, summed.
    """
    actions = AgentActions(env, seed)
    run = _aec if agent_api(env) == "aec" else _parallel
    return run(env, seed, steps, actions, policy)


def _parallel(
    env: Any, seed: int, steps: int, actions: AgentActions, policy: AgentPolicy | None
) -> list[float]:
    """Step every live agent at once; each episode's return."""
    observations, infos = env.reset(seed=seed)
    returns: list[float] = [0.0]
    for _ in range(steps):
        chosen = {
            agent: actions.choose(agent, observations.get(agent), infos.get(agent), policy)
            for agent in env.agents
        }
        observations, rewards, _, _, infos = env.step(chosen)
        returns[-1] += float(sum(rewards.values()))
        if not env.agents:
            observations, infos = env.reset()
            returns.append(0.0)
            actions.after_reset()
    return returns


def _aec(
    env: Any, seed: int, steps: int, actions: AgentActions, policy: AgentPolicy | None
) -> list[float]:
    """Step one agent at a time; each episode's return."""
    env.reset(seed=seed)
    returns: list[float] = [0.0]
    for _ in range(steps):
        agent = env.agent_selection
        obs, _, terminated, truncated, info = env.last()
        done = terminated or truncated
        env.step(None if done else actions.choose(agent, obs, info, policy))
        returns[-1] += float(sum(env.rewards.values()))
        if not env.agents:
            env.reset()
            returns.append(0.0)
            actions.after_reset()
    return returns


class AgentActions:
    """Random actions that repeat: each agent's action space, seeded from the rollout's seed.

    The action space of the agent at index ``i`` of ``env.possible_agents``
    (an agent missing there: after them, in the order they first act) is
    seeded, the first time the agent acts, with
    ``numpy.random.SeedSequence([seed, i]).generate_state(1)[0]``, so that
    agents draw apart from each other and every run repeats them. When a
    later episode hands out another action space object for the agent, it
    is seeded with ``SeedSequence([seed, i, episode])`` (episodes counted
    from 0), as :class:`~gym_goldens.record.rollouts.SeededActions` does for
    a single env.

    Args:
        env: The env.
        seed: The rollout's seed.
    """

    def __init__(self, env: Any, seed: int) -> None:
        self.env = env
        self.seed = seed
        self.episode = 0
        self._index = {agent: i for i, agent in enumerate(env.possible_agents)}
        # Each agent's space, and the episode in which the env last handed it out.
        self._spaces: dict[Any, tuple[spaces.Space[Any], int]] = {}

    def after_reset(self) -> None:
        """Count an episode begun."""
        self.episode += 1

    def choose(self, agent: Any, obs: Any, info: Any, policy: AgentPolicy | None) -> Any:
        """The action of ``agent``: the policy's, or a sample within its action mask."""
        if policy is not None:
            return policy(agent, obs)
        space = self.space(agent)
        mask = action_mask(obs, info)
        if mask is not None and isinstance(space, spaces.Discrete):
            return space.sample(mask=np.asarray(mask, dtype=np.int8))
        return space.sample() if mask is None else space.sample(mask=mask)

    def space(self, agent: Any) -> spaces.Space[Any]:
        """The agent's action space, seeded when it is first met.

        The env is asked for it once per episode: an env may build a new
        space at every call of ``action_space(agent)``, which would be seeded
        again at every step and repeat one action.
        """
        known = self._spaces.get(agent)
        if known is not None and known[1] == self.episode:
            return known[0]
        space: spaces.Space[Any] = self.env.action_space(agent)
        if known is None or known[0] is not space:
            index = self._index.setdefault(agent, len(self._index))
            entropy = [self.seed, index] if known is None else [self.seed, index, self.episode]
            space.seed(int(np.random.SeedSequence(entropy).generate_state(1)[0]))
        self._spaces[agent] = (space, self.episode)
        return space


def action_mask(obs: Any, info: Any) -> Any:
    """The action mask of an agent's observation or info (``"action_mask"``), or None.

    Example:
        >>> action_mask({"observation": 0, "action_mask": [1, 0]}, {})
        [1, 0]
        >>> action_mask([0.5], {"action_mask": [0, 1]})
        [0, 1]
    """
    for source in (obs, info):
        if isinstance(source, dict) and _MASK_KEY in source:
            return source[_MASK_KEY]
    return None
