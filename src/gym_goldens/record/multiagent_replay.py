"""Replay for PettingZoo envs: the golden's actions, agent by agent, and its reset seeds.

``record_trajectory(env, replay=True)`` of a PettingZoo env drives it with
the golden's own actions, as :mod:`gym_goldens.record.replay` does for a
single env: every ``reset`` takes the seed and options of the golden
episode's header; a parallel env's ``step`` takes the golden's actions of
every agent of that step, an AEC env's ``step`` the golden's action of that
step (its acting agent's; ``None`` for an agent that was done), each decoded
back to its agent's action space. If the recording still differs, the
dynamics changed, not the policy. Past the end of the golden the test's own
arguments pass through.

PettingZoo is imported here: this module is loaded only for its envs.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from pettingzoo.utils.wrappers import BaseParallelWrapper, BaseWrapper

from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.format.reader import iter_records
from gym_goldens.record.replay import (
    GoldenEpisode,
    GoldenEpisodes,
    GoldenStep,
    bad_reset,
    decode_action,
    env_failed,
    env_said,
    shown,
)

__all__ = ["ReplayAECActions", "ReplayParallelActions"]


class _Golden:
    """The golden's episodes, read one a reset, and handed out step by step."""

    def __init__(self, env: Any, recording: Path, max_decompressed_size: int) -> None:
        __tracebackhide__ = True
        # A partial, not a lambda: no frame of ours in the traceback of a golden that does not fit.
        read = functools.partial(_read_episode, env=env)
        self.episodes = GoldenEpisodes(recording, read, max_decompressed_size)
        self.current: GoldenEpisode | None = None
        self.episode = -1
        self.t = 0

    def reset(self, env: Any, seed: Any, options: Any) -> Any:
        """Reset ``env`` with the next golden episode's seed and options."""
        __tracebackhide__ = True
        self.episode += 1
        self.t = 0
        self.current = episode = self.episodes.next()
        if episode is None:
            return env.reset(seed=seed, options=options)
        seed, options = episode.reset.get("seed"), episode.reset.get("options")
        try:
            return env.reset(seed=seed, options=options)
        except Exception as error:
            raise env_failed(
                episode.path,
                episode.line,
                f"was reset with the golden's seed and options of episode {self.episode} "
                f"(seed {shown(seed)}, options {shown(options)})",
                error,
            ) from None

    def next_step(self) -> GoldenStep | None:
        """The golden's next step of this episode; None past its end."""
        step = None
        if self.current is not None and self.t < len(self.current.steps):
            step = self.current.steps[self.t]
        self.t += 1
        return step

    def failed(self, step: GoldenStep, error: Exception) -> GoldenFormatError:
        """The error of an env that raised on the golden's actions of ``step``."""
        assert self.current is not None  # a step of the golden is one of the current episode
        return env_failed(
            self.current.path,
            step.line,
            f"replayed the golden's actions of episode {self.episode}, step t={step.t} "
            f"({shown(step.action)})",
            error,
        )


class _Replay:
    """What both replays share: the golden they read, made as the replay is."""

    _golden: _Golden
    env: Any
    recording: Path

    def __init__(
        self,
        env: Any,
        recording: str | os.PathLike[str],
        *,
        max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    ) -> None:
        __tracebackhide__ = True
        self._wrap(env)
        self.recording = Path(recording)
        self._golden = _Golden(env, self.recording, max_decompressed_size)

    def _wrap(self, env: Any) -> None:
        raise NotImplementedError


class ReplayParallelActions(_Replay, BaseParallelWrapper):  # type: ignore[misc]
    """Replace the actions and reset arguments given to a ``ParallelEnv`` by a recording's.

    Args:
        env: The env to drive (a recorder of it, to record the replay).
        recording: A recording folder (a golden) or its trajectory file.
        max_decompressed_size: What the recording, when compressed, may
            expand to when read, in bytes.

    Raises:
        GoldenFormatError: The recording cannot be read, or holds an action
            that cannot be replayed.
    """

    def _wrap(self, env: Any) -> None:
        BaseParallelWrapper.__init__(self, env)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        """Reset with the seed and options of the recording's next episode."""
        __tracebackhide__ = True
        return self._golden.reset(self.env, seed, options)

    def step(self, actions: dict[Any, Any]) -> Any:
        """Step with the recording's actions of this step."""
        __tracebackhide__ = True
        step = self._golden.next_step()
        if step is None:
            return self.env.step(actions)
        try:
            return self.env.step(step.action)
        except Exception as error:
            raise self._golden.failed(step, error) from None


class ReplayAECActions(_Replay, BaseWrapper):  # type: ignore[misc]
    """Replace the actions and reset arguments given to an ``AECEnv`` by a recording's.

    Args:
        env: The env to drive (a recorder of it, to record the replay).
        recording: A recording folder (a golden) or its trajectory file.
        max_decompressed_size: As for :class:`ReplayParallelActions`.

    Raises:
        GoldenFormatError: As for :class:`ReplayParallelActions`.
    """

    def _wrap(self, env: Any) -> None:
        BaseWrapper.__init__(self, env)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Reset with the seed and options of the recording's next episode."""
        __tracebackhide__ = True
        self._golden.reset(self.env, seed, options)

    def step(self, action: Any) -> None:
        """Step with the recording's action of this step (of its acting agent)."""
        __tracebackhide__ = True
        step = self._golden.next_step()
        if step is None:
            self.env.step(action)
            return
        try:
            self.env.step(next(iter(step.action.values()), None))
        except Exception as error:
            raise self._golden.failed(step, error) from None


def _read_episode(path: Path, lines: Any, index: int, *, env: Any) -> GoldenEpisode:
    """The reset arguments and decoded actions of one episode of ``path`` (its ``index``-th)."""
    __tracebackhide__ = True
    header: dict[str, Any] = {}
    first = 0
    steps: list[GoldenStep] = []
    # Whether each agent's actions were numpy values: an action without a
    # dtypes entry was a plain Python value, and is replayed as one.
    typed: dict[Any, bool] = {}
    for number, record in iter_records(path, lines):
        first = first or number
        if record["event"] == "header":
            header = record
            continue
        actions = record.get("action")
        if record["event"] != "step" or not isinstance(actions, dict):
            continue
        if "dtypes" in record:
            mirror = record["dtypes"].get("action") if isinstance(record["dtypes"], dict) else None
            typed.update({agent: isinstance(mirror, dict) and agent in mirror for agent in actions})
        # A loop, not a comprehension: a comprehension's frame would show in the traceback.
        decoded = {}
        for key, agent, value in _items(env, actions):
            decoded[agent] = _decode(
                env,
                agent,
                value,
                typed=typed.get(key, True),
                path=path,
                line=number,
                at=(index, record["t"]),
            )
        steps.append(GoldenStep(decoded, actions, number, record["t"]))
    reset = header.get("reset") or {}
    if not isinstance(reset, dict):
        raise bad_reset(path, first, reset)
    return GoldenEpisode(path, first or 1, reset, steps)


def _items(env: Any, actions: dict[str, Any]) -> Iterator[tuple[str, Any, Any]]:
    """The golden's actions: each one's key, its agent as the env names it, and the action.

    Keys are strings; an agent id that is not one (an int) was written as its text.
    """
    agents = {a if isinstance(a, str) else str(a): a for a in env.possible_agents}
    for key, value in actions.items():
        yield key, agents.get(key, key), value


def _decode(
    env: Any, agent: Any, value: Any, *, typed: bool, path: Path, line: int, at: tuple[int, int]
) -> Any:
    """An agent's action as the env takes it; ``at`` is its episode and step."""
    __tracebackhide__ = True
    episode, t = at
    try:
        space = env.action_space(agent)
        action = decode_action(value, space, path, t, episode=episode)
    except GoldenFormatError as error:
        raise GoldenFormatError(path, error.reason, line=line) from None
    except Exception as error:
        raise GoldenFormatError(
            path,
            f"the golden's action of agent {shown(agent)} at episode {episode}, step t={t} "
            f"({shown(value)}) does not fit the env's action space of that agent: "
            f"{type(error).__name__}: {env_said(error)}",
            line=line,
        ) from None
    if not typed and isinstance(action, np.generic):
        return action.item()
    return action
