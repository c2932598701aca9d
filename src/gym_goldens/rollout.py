"""Seeded random rollouts of any registered env, recorded: ``gym-goldens record``.

The same env id, keyword arguments, seed and step count give the same
recording: the env is reset with the seed, its action space is seeded with it,
and the episodes that follow the first are reset without a seed, so they
continue the env's random stream. A quick golden, or a bug report anyone can
replay.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from gym_goldens.errors import GoldensError

__all__ = ["EnvCreationError", "Rollout", "record_rollout"]


class EnvCreationError(GoldensError, ValueError):
    """``gym.make`` could not create the env that was asked for."""


@dataclasses.dataclass(frozen=True)
class Rollout:
    """What :func:`record_rollout` recorded.

    Attributes:
        output_dir: The recording folder.
        episodes: Episode files written.
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

    The recording is made in a temporary folder and then written over
    ``output_dir`` file by file, atomically; episode files left from an
    earlier, longer recording are removed.

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
    import gymnasium as gym

    from gym_goldens.recorder import RecordTrajectory
    from gym_goldens.store import update_golden

    if steps < 0:
        raise ValueError(f"steps must be 0 or more, got {steps}")
    env = _make(env_id, dict(env_kwargs or {}))
    target = Path(output_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".gym-goldens-record-", dir=target.parent))
    try:
        recorder: RecordTrajectory[Any, Any] = RecordTrajectory(env, scratch)
        try:
            recorder.action_space.seed(seed)
            recorder.reset(seed=seed)
            ended = False
            for _ in range(steps):
                if ended:  # reset only before a step, so no episode is a bare reset
                    recorder.reset()
                _, _, terminated, truncated, _ = recorder.step(recorder.action_space.sample())
                ended = bool(terminated or truncated)
                if advance is not None:
                    advance(1)
        except gym.error.Error as error:
            raise EnvCreationError(f"{env_id} failed during the rollout: {error}") from None
        finally:
            recorder.close()
        if not target.exists():
            # A new folder: one rename puts the whole recording in place.
            scratch.rename(target)
            return Rollout(target, recorder.episode_count, steps, "created")
        # An existing one is updated file by file, atomically, as goldens are.
        update = update_golden(scratch, target)
        return Rollout(target, recorder.episode_count, steps, update.status)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _make(env_id: str, kwargs: dict[str, Any]) -> Any:
    import gymnasium as gym

    try:
        return gym.make(env_id, **kwargs)
    except (gym.error.Error, ImportError, TypeError, ValueError) as error:
        hint = ""
        if isinstance(error, TypeError) and kwargs:
            hint = f"; check the --env-kwargs {sorted(kwargs)}"
        raise EnvCreationError(f"cannot make env {env_id!r}: {error}{hint}") from None
