"""Seeded rollouts: the loop most golden tests need, in one call.

:func:`rollout` seeds the env and its action space, steps it, and resets it
when an episode ends, so a golden test is three lines::

    def test_cartpole(record_trajectory):
        env = record_trajectory(gym.make("CartPole-v1"))
        rollout(env, seed=0, steps=300)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import gymnasium as gym

__all__ = ["RolloutResult", "rollout"]

Policy = Callable[[Any], Any]
"""A policy: takes an observation, returns an action."""


@dataclasses.dataclass(frozen=True)
class RolloutResult:
    """What a rollout did.

    Attributes:
        steps: Steps taken.
        episodes: Episodes started (the first reset and every reset after an
            episode ended).
        returns: The summed reward of each episode, the last one possibly
            unfinished.
    """

    steps: int
    episodes: int
    returns: tuple[float, ...]


def rollout(
    env: gym.Env[Any, Any],
    *,
    seed: int,
    steps: int,
    policy: Policy | None = None,
) -> RolloutResult:
    """Run a seeded rollout of ``steps`` steps.

    The first reset is ``env.reset(seed=seed)``; after an episode ends
    (terminated or truncated) the env is reset again without a seed, so its
    random generator carries on as gymnasium intends. Without a policy, the
    actions are samples of the action space seeded with ``seed``, so the same
    call always takes the same actions.

    Args:
        env: The env, typically wrapped by the ``record_trajectory`` fixture.
        seed: Seeds the first reset and, without a policy, the action space.
        steps: How many steps to take, across episodes.
        policy: ``policy(obs) -> action``; None samples the action space.

    Returns:
        The number of steps and episodes, and the episode returns.

    Raises:
        TypeError: ``seed`` or ``steps`` is not an int, or ``policy`` is not callable.
        ValueError: ``steps`` is negative.

    Example:
        >>> import gymnasium as gym
        >>> result = rollout(gym.make("CartPole-v1"), seed=0, steps=50)
        >>> result.steps, result.episodes
        (50, 4)
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"rollout seed must be an int, got {type(seed).__name__} {seed!r}")
    if isinstance(steps, bool) or not isinstance(steps, int):
        raise TypeError(f"rollout steps must be an int, got {type(steps).__name__} {steps!r}")
    if steps < 0:
        raise ValueError(f"rollout steps must be zero or more, got {steps}")
    if policy is not None and not callable(policy):
        raise TypeError(
            f"rollout policy must be a callable obs -> action, got {type(policy).__name__}"
        )
    if policy is None:
        env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    returns: list[float] = [0.0]
    for _ in range(steps):
        action = env.action_space.sample() if policy is None else policy(obs)
        obs, reward, terminated, truncated, _ = env.step(action)
        returns[-1] += float(reward)
        if terminated or truncated:
            obs, _ = env.reset()
            returns.append(0.0)
    return RolloutResult(steps=steps, episodes=len(returns), returns=tuple(returns))
