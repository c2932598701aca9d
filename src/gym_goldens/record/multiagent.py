"""Recording PettingZoo envs: every agent's part of each step, in one trajectory file.

A recording of a multi-agent env is a recording like any other (one folder,
``trajectory.jsonl``, an episode after another, each a ``header``, a
``reset`` and ``step`` records) whose record fields are keyed by agent (see
:mod:`gym_goldens.format.agents`):

- :class:`RecordParallelTrajectory` wraps a ``ParallelEnv``: a step record
  holds the actions given and the obs, rewards, terminations, truncations and
  infos returned, each an object by agent, as ``step()`` gives them.
- :class:`RecordAECTrajectory` wraps an ``AECEnv``: one step record per
  ``step()``, of the acting agent (``agent``): what ``env.last()`` gave it
  before it acted (obs, reward, termination, truncation, info) and the
  action it took, each keyed by that agent.

``terminated`` and ``truncated`` keep their names and hold a boolean by
agent. The reset record holds the obs and info of every agent (an AEC env's
as ``observe()`` and ``infos`` give them) and ``agents``, the live agents;
a step record holds ``agents`` when a step changed them (an agent joined or
left), so the last step of an episode holds ``"agents": []``. The header
holds ``agent_api``, ``possible_agents`` and each agent's spaces.

The numpy types (``dtypes``) are keyed by agent too, and written when those
of an agent in the record differ from that agent's previous step of the
episode: on each agent's first step, in practice.

PettingZoo is imported here: this module is loaded only for its envs.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

import gymnasium as gym
from pettingzoo.utils.wrappers import BaseParallelWrapper, BaseWrapper

from gym_goldens.format import dtypes
from gym_goldens.format.codec import DEFAULT_MAX_ARRAY_SIZE, ArraySizeSpec
from gym_goldens.format.header import FORMAT_VERSION
from gym_goldens.format.layout import trajectory_filename
from gym_goldens.record.agents import agent_api, describe_agent_env
from gym_goldens.record.writer import HeaderLines, Storage

__all__ = ["AgentTypes", "RecordAECTrajectory", "RecordParallelTrajectory"]

_TYPED_FIELDS: Final = ("action", "obs", "reward", "info")
_MISSING: Final[Any] = object()


class AgentTypes:
    """The ``dtypes`` field of multi-agent step records: written when an agent's types change.

    Each agent's types are compared with its own previous step of the
    episode, so that an AEC env, whose records alternate between agents,
    writes them on each agent's first step only, and a parallel env whose
    agent leaves does not write them again for the others.
    """

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: dict[Any, tuple[Any, ...]] = {}

    def begin(self) -> None:
        """Start an episode: each agent's first step writes its types."""
        self._last.clear()

    def field(self, fields: Mapping[str, Any]) -> Any:
        """The ``dtypes`` field of a step record, or None when no agent's types changed."""
        last = self._last
        action, obs, reward, info = (fields[name] for name in _TYPED_FIELDS)
        signature = dtypes.signature
        changed = False
        for agent in obs.keys() | action.keys():
            types = (
                signature(action.get(agent)),
                signature(obs.get(agent)),
                signature(reward.get(agent)),
                signature(info.get(agent)),
            )
            if last.get(agent, _MISSING) != types:
                last[agent] = types
                changed = True
        if not changed:
            return None
        found = signature({name: fields[name] for name in _TYPED_FIELDS})
        return None if found is None else dtypes.to_json(found)


@dataclasses.dataclass
class _Recording:
    """What both recorders keep: the file, its headers and the numpy types."""

    output_dir: Path
    compress: bool
    headers: HeaderLines
    writer: Any
    types: AgentTypes

    @classmethod
    def of(
        cls, env: Any, output_dir: str | os.PathLike[str], storage: Storage, versions_of: Any
    ) -> _Recording:
        folder = Path(output_dir)
        folder.mkdir(parents=True, exist_ok=True)
        encoder = storage.encoder()
        names = tuple(versions_of)
        headers = HeaderLines(
            lambda: describe_agent_env(env, versions_of=names), storage.header, encoder
        )
        path = folder / trajectory_filename(compress=storage.compress)
        return cls(folder, storage.compress, headers, storage.writer(path, encoder), AgentTypes())

    def begin(self, seed: Any, options: Any) -> None:
        self.writer.begin(self.headers.line(seed, options))
        self.types.begin()

    def reset(self, obs: Mapping[Any, Any], info: Mapping[Any, Any], agents: list[Any]) -> None:
        typed = dtypes.signature({"obs": obs, "info": info})
        fields = {"obs": obs, "info": info, "agents": agents}
        if typed is not None:
            fields["dtypes"] = dtypes.to_json(typed)
        self.writer.reset_record(fields)

    def step(self, fields: dict[str, Any], before: list[Any], after: list[Any]) -> None:
        if after != before:
            fields["agents"] = list(after)
        typed = self.types.field(fields)
        if typed is not None:
            fields["dtypes"] = typed
        self.writer.step_record(fields, done=not after)

    def check_active(self, name: str) -> None:
        if not self.writer.active:
            raise gym.error.ResetNeeded(
                f"{name}: call reset() before step(); a recording starts at reset"
            )


class RecordParallelTrajectory(BaseParallelWrapper):  # type: ignore[misc]
    """Record every reset and step of a PettingZoo ``ParallelEnv``, in one file.

    Args:
        env: The parallel env to record, such as ``rps_v2.parallel_env()``.
        output_dir: Folder of the recording (``trajectory.jsonl``).
        max_array_size: As for :class:`~gym_goldens.record.single.RecordTrajectory`
            (field patterns name agents: ``{"obs.agent_0": None}``).
        flush_every: As for :class:`~gym_goldens.record.single.RecordTrajectory`.
        compress: As for :class:`~gym_goldens.record.single.RecordTrajectory`.
        full_every: As for :class:`~gym_goldens.record.single.RecordTrajectory`.
        versions_of: As for :class:`~gym_goldens.record.single.RecordTrajectory`.
        format_version: As for :class:`~gym_goldens.record.single.RecordTrajectory`.
    """

    def __init__(
        self,
        env: Any,
        output_dir: str | os.PathLike[str],
        *,
        max_array_size: ArraySizeSpec = DEFAULT_MAX_ARRAY_SIZE,
        flush_every: int | None = None,
        compress: bool = False,
        full_every: int | None = None,
        versions_of: Iterable[str] = (),
        format_version: str = FORMAT_VERSION,
    ) -> None:
        if agent_api(env) != "parallel":
            raise TypeError(
                f"RecordParallelTrajectory expects a PettingZoo ParallelEnv, got "
                f"{type(env).__name__}; for an AECEnv use RecordAECTrajectory"
            )
        storage = Storage(max_array_size, flush_every, compress, full_every, format_version)
        super().__init__(env)
        self._recording = _Recording.of(env, output_dir, storage, versions_of)

    @property
    def output_dir(self) -> Path:
        """The recording's folder."""
        return self._recording.output_dir

    @property
    def path(self) -> Path:
        """The trajectory file (written at the end of the first episode)."""
        return self._recording.writer.path  # type: ignore[no-any-return]

    @property
    def episode_count(self) -> int:
        """Episodes started so far."""
        return self._recording.writer.episode_count  # type: ignore[no-any-return]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[Any, Any], dict[Any, Any]]:
        """Reset the env and start a new episode."""
        recording = self._recording
        recording.begin(seed, options)
        try:
            obs, infos = self.env.reset(seed=seed, options=options)
        except BaseException:
            recording.writer.end()
            raise
        recording.reset(dict(obs), dict(infos), list(self.env.agents))
        return obs, infos

    def step(self, actions: dict[Any, Any]) -> tuple[Any, Any, Any, Any, Any]:
        """Step the env and record the step of every agent."""
        recording = self._recording
        recording.check_active(type(self).__name__)
        before = list(self.env.agents)
        try:
            result = self.env.step(actions)
        except BaseException:
            recording.writer.end()
            raise
        obs, rewards, terminations, truncations, infos = result
        fields = {
            "action": dict(actions),
            "obs": dict(obs),
            "reward": dict(rewards),
            "terminated": {agent: bool(flag) for agent, flag in terminations.items()},
            "truncated": {agent: bool(flag) for agent, flag in truncations.items()},
            "info": dict(infos),
        }
        recording.step(fields, before, self.env.agents)
        return result  # type: ignore[no-any-return]

    def flush(self) -> None:
        """Write what is buffered; recording goes on."""
        self._recording.writer.write_buffer()

    def close(self) -> None:
        """Write what is buffered, close the file, then close the env."""
        try:
            self._recording.writer.end()
        finally:
            self.env.close()


class RecordAECTrajectory(BaseWrapper):  # type: ignore[misc]
    """Record every reset and step of a PettingZoo ``AECEnv``, in one file.

    Each ``step(action)`` is recorded as the acting agent's step: what
    ``env.last()`` gave it (asked of the env before the step) and ``action``.

    Args:
        env: The AEC env to record, such as ``connect_four_v3.env()``.
        output_dir: Folder of the recording (``trajectory.jsonl``).
        max_array_size: As for :class:`RecordParallelTrajectory`.
        flush_every: As for :class:`RecordParallelTrajectory`.
        compress: As for :class:`RecordParallelTrajectory`.
        full_every: As for :class:`RecordParallelTrajectory`.
        versions_of: As for :class:`RecordParallelTrajectory`.
        format_version: As for :class:`RecordParallelTrajectory`.
    """

    def __init__(
        self,
        env: Any,
        output_dir: str | os.PathLike[str],
        *,
        max_array_size: ArraySizeSpec = DEFAULT_MAX_ARRAY_SIZE,
        flush_every: int | None = None,
        compress: bool = False,
        full_every: int | None = None,
        versions_of: Iterable[str] = (),
        format_version: str = FORMAT_VERSION,
    ) -> None:
        if agent_api(env) != "aec":
            raise TypeError(
                f"RecordAECTrajectory expects a PettingZoo AECEnv, got {type(env).__name__}; "
                "for a ParallelEnv use RecordParallelTrajectory"
            )
        storage = Storage(max_array_size, flush_every, compress, full_every, format_version)
        super().__init__(env)
        self._recording = _Recording.of(env, output_dir, storage, versions_of)

    @property
    def output_dir(self) -> Path:
        """The recording's folder."""
        return self._recording.output_dir

    @property
    def path(self) -> Path:
        """The trajectory file (written at the end of the first episode)."""
        return self._recording.writer.path  # type: ignore[no-any-return]

    @property
    def episode_count(self) -> int:
        """Episodes started so far."""
        return self._recording.writer.episode_count  # type: ignore[no-any-return]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Reset the env and start a new episode."""
        recording = self._recording
        recording.begin(seed, options)
        env = self.env
        try:
            env.reset(seed=seed, options=options)
            agents = list(env.agents)
            obs = {agent: env.observe(agent) for agent in agents}
            infos = {agent: env.infos[agent] for agent in agents}
        except BaseException:
            recording.writer.end()
            raise
        recording.reset(obs, infos, agents)

    def step(self, action: Any) -> None:
        """Step the env and record the acting agent's step."""
        recording = self._recording
        recording.check_active(type(self).__name__)
        env = self.env
        try:
            agent = env.agent_selection
            obs, reward, terminated, truncated, info = env.last()
            before = list(env.agents)
            env.step(action)
        except BaseException:
            recording.writer.end()
            raise
        fields = {
            "agent": agent,
            "action": {agent: action},
            "obs": {agent: obs},
            "reward": {agent: reward},
            "terminated": {agent: bool(terminated)},
            "truncated": {agent: bool(truncated)},
            "info": {agent: info},
        }
        recording.step(fields, before, env.agents)

    def flush(self) -> None:
        """Write what is buffered; recording goes on."""
        self._recording.writer.write_buffer()

    def close(self) -> None:
        """Write what is buffered, close the file, then close the env."""
        try:
            self._recording.writer.end()
        finally:
            self.env.close()
