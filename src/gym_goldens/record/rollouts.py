"""Seeded rollouts: the loop most golden tests need, in one call.

:func:`rollout` seeds the env and its action space, steps it, and resets it
when an episode ends, so a golden test is three lines::

    def test_cartpole(record_trajectory):
        env = record_trajectory(gym.make("CartPole-v1"))
        rollout(env, seed=0, steps=300)

:func:`record_rollout` makes an env by id and records a seeded random rollout
of it, for ``gym-goldens record``. It resets only before the next step, so no
episode of its recordings is a bare reset.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from gym_goldens.errors import GoldensError
from gym_goldens.format.files import install_recording, same_bytes
from gym_goldens.format.paths import GoldenFolder, resolve_recording
from gym_goldens.format.reader import Return, add_reward
from gym_goldens.record.agents import agent_api
from gym_goldens.record.multiagent_rollouts import agent_rollout
from gym_goldens.record.single import RecordTrajectory

__all__ = [
    "EnvCreationError",
    "Rollout",
    "RolloutResult",
    "SeededActions",
    "record_rollout",
    "rollout",
]

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
            unfinished: a float, or a tuple of one float per objective for
            an env whose reward is a vector (mo-gymnasium's envs).
    """

    steps: int
    episodes: int
    returns: tuple[Return, ...]


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
    actions are samples of the action space, seeded with ``seed`` after the
    first reset, so the same call always takes the same actions (see
    :class:`SeededActions`, which also seeds an action space an env builds
    anew in ``reset``).

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
    _check_rollout(seed=seed, steps=steps, policy=policy)
    if agent_api(env) is not None:  # a PettingZoo env
        agent_returns = agent_rollout(env, seed=seed, steps=steps, policy=policy)
        return RolloutResult(steps, len(agent_returns), tuple(agent_returns))
    obs, _ = env.reset(seed=seed)
    actions = SeededActions(env, seed)
    returns: list[Return] = [0.0]
    for _ in range(steps):
        action = actions.sample() if policy is None else policy(obs)
        obs, reward, terminated, truncated, _ = env.step(action)
        returns[-1] = add_reward(returns[-1], reward)
        if terminated or truncated:
            obs, _ = env.reset()
            # A vector reward's next episode starts from one zero per objective.
            last = returns[-1]
            returns.append((0.0,) * len(last) if isinstance(last, tuple) else 0.0)
            actions.after_reset()
    return RolloutResult(steps=steps, episodes=len(returns), returns=tuple(returns))


def _check_rollout(*, seed: object, steps: object, policy: object) -> None:
    """Refuse arguments :func:`rollout` cannot take, saying what it expects."""
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


class SeededActions:
    """Random actions that repeat: the action space sampled, seeded from the rollout's seed.

    The action space is seeded with ``seed`` once the env is reset (an env
    may build its spaces in ``reset``, as highway-env does). When a later
    reset hands out another action space object, the new one is seeded with
    a seed derived from ``seed`` and the episode's index (counting from 0),
    ``numpy.random.SeedSequence([seed, episode]).generate_state(1)[0]``, so
    that its episodes differ from each other and every run repeats them. An
    env that keeps its action space samples from it as seeded at the start.

    Args:
        env: The env, reset with the rollout's seed already.
        seed: The rollout's seed.
    """

    def __init__(self, env: gym.Env[Any, Any], seed: int) -> None:
        self.env = env
        self.seed = seed
        self.episode = 0
        self.space = env.action_space
        self.space.seed(seed)

    def after_reset(self) -> None:
        """Count an episode begun; seed its action space if the env made a new one."""
        self.episode += 1
        space = self.env.action_space
        if space is not self.space:
            self.space = space
            derived = np.random.SeedSequence([self.seed, self.episode]).generate_state(1)[0]
            space.seed(int(derived))

    def sample(self) -> Any:
        """The next action."""
        return self.space.sample()


class EnvCreationError(GoldensError, ValueError):
    """``gym.make`` could not create the env that was asked for."""


@dataclasses.dataclass(frozen=True)
class Rollout:
    """What :func:`record_rollout` recorded.

    Attributes:
        output_dir: The recording folder.
        episodes: Episodes recorded.
        steps: Steps taken.
        status: ``created``, ``updated`` or ``unchanged`` (the folder
            already held this very recording).
    """

    output_dir: Path
    episodes: int
    steps: int
    status: str


def record_rollout(
    env_id: str,
    output_dir: str | Path,
    *,
    seed: int,
    steps: int,
    env_kwargs: Mapping[str, Any] | None = None,
    advance: Callable[[int], None] | None = None,
) -> Rollout:
    """Record ``steps`` random steps of ``gym.make(env_id, **env_kwargs)``.

    The recording is made in a temporary folder, and its ``trajectory.jsonl``
    then replaces the one of ``output_dir`` atomically.

    Args:
        env_id: A registered env id, such as ``"CartPole-v1"``.
        output_dir: The recording folder; created if missing.
        seed: Seeds the first reset and the action space.
        steps: Steps to take in all, over as many episodes as it takes.
        env_kwargs: Keyword arguments of ``gym.make``.
        advance: Called with 1 after each step (for a progress bar).

    Raises:
        EnvCreationError: The env cannot be made.
        ValueError: ``steps`` is negative.

    Example:
        >>> import tempfile
        >>> rollout = record_rollout("CartPole-v1", tempfile.mkdtemp(), seed=0, steps=30)
        >>> rollout.steps, rollout.status
        (30, 'created')
    """
    if steps < 0:
        raise ValueError(f"steps must be 0 or more, got {steps}")
    env = _make(env_id, dict(env_kwargs or {}))
    target = Path(output_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".gym-goldens-record-", dir=target.parent))
    try:
        recorder: RecordTrajectory[Any, Any] = RecordTrajectory(env, scratch)
        try:
            _random_steps(recorder, seed=seed, steps=steps, advance=advance)
        except gym.error.Error as error:
            raise EnvCreationError(f"{env_id} failed during the rollout: {error}") from None
        finally:
            recorder.close()
        if not target.exists():
            # A new folder: one rename puts the whole recording in place.
            scratch.rename(target)
            return Rollout(target, recorder.episode_count, steps, "created")
        # An existing one is updated as goldens are: its file replaced atomically,
        # unless it holds these very bytes.
        installed = install_recording(
            resolve_recording(scratch), target, is_current=_same_file_bytes
        )
        return Rollout(target, recorder.episode_count, steps, installed.status)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _random_steps(
    env: gym.Env[Any, Any], *, seed: int, steps: int, advance: Callable[[int], None] | None
) -> None:
    """Take ``steps`` seeded random steps, resetting only before the next step.

    So no episode is a bare reset.
    """
    env.reset(seed=seed)
    actions = SeededActions(env, seed)
    ended = False
    for _ in range(steps):
        if ended:
            env.reset()
            actions.after_reset()
        _, _, terminated, truncated, _ = env.step(actions.sample())
        ended = bool(terminated or truncated)
        if advance is not None:
            advance(1)


def _same_file_bytes(existing: Path, recording: GoldenFolder) -> bool:
    files = recording.files
    return len(files) == 1 and same_bytes(files[0], existing)


def _make(env_id: str, kwargs: dict[str, Any]) -> Any:
    try:
        return gym.make(env_id, **kwargs)
    except (gym.error.Error, ImportError, TypeError, ValueError) as error:
        hint = ""
        if isinstance(error, TypeError) and kwargs:
            hint = f"; check the --env-kwargs {sorted(kwargs)}"
        raise EnvCreationError(f"cannot make env {env_id!r}: {error}{hint}") from None
