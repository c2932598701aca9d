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

A parallel step of the same agents and types as the step before (which was
recorded in full) takes the lean path: a key of its agents and types
(:func:`lean_key`), one ``orjson.dumps``, the search for ``null`` and ``$``
and an append, as the single env's writer does; any other step is recorded
in full.

PettingZoo is imported here: this module is loaded only for its envs.
"""

from __future__ import annotations

import dataclasses
import operator
import os
from collections.abc import Iterable, Mapping
from itertools import chain
from pathlib import Path
from typing import Any, ClassVar, Final

import gymnasium as gym
import numpy as np
from pettingzoo.utils.wrappers import BaseParallelWrapper, BaseWrapper

from gym_goldens.format import dtypes
from gym_goldens.format.codec import DEFAULT_MAX_ARRAY_SIZE, ArraySizeSpec
from gym_goldens.format.layout import trajectory_filename
from gym_goldens.record.agents import AgentApi, agent_api, describe_agent_env
from gym_goldens.record.writer import HeaderLines, Storage

__all__ = ["AgentTypes", "RecordAECTrajectory", "RecordParallelTrajectory", "step_key"]

_MISSING: Final[Any] = object()
# Types whose numpy type their type gives: Python values (none) and numpy
# scalars (their dtype); arrays give theirs with their dtype and shape.
_ALL_SCALARS: Final = frozenset(
    {float, int, bool, str, bytes, type(None)}
    | {kind for kind in np.sctypeDict.values() if issubclass(kind, (np.number, np.bool_))}
).issuperset
_ALL_ARRAYS: Final = frozenset({np.ndarray}).issuperset
_ALL_DICTS: Final = frozenset({dict}).issuperset
_ALL_BOOLS: Final = frozenset({bool}).issuperset
_DTYPE_AND_SHAPE: Final = operator.attrgetter("dtype", "shape")
# Not the lean key of any step: the next step is recorded in full.
_NOT_LEAN: Final[Any] = object()
# Values that the lean key cannot vouch for (see lean_getters).
_REFUSED: Final[Any] = object()


class AgentTypes:
    """The ``dtypes`` field of multi-agent step records: written when an agent's types change.

    Each agent's types are compared with its own previous step of the
    episode, so that an AEC env, whose records alternate between agents,
    writes them on each agent's first step only, and a parallel env whose
    agent leaves does not write them again for the others.

    Walking every agent's values costs more than encoding them, so they are
    walked only when a cheap key of the step (:func:`step_key`: its agents,
    the types of their values, the dtype and shape of their arrays) differs
    from the previous step's, or cannot stand for the types.
    """

    __slots__ = ("_key", "_last", "retyped")

    def __init__(self) -> None:
        self._last: dict[Any, tuple[Any, ...]] = {}
        self._key: tuple[Any, ...] | None = None
        # Whether the last step's types were walked (they may have changed).
        self.retyped = True

    def begin(self) -> None:
        """Start an episode: each agent's first step writes its types."""
        self._last.clear()
        self._key = None

    def field(
        self,
        action: Mapping[Any, Any],
        obs: Mapping[Any, Any],
        reward: Mapping[Any, Any],
        info: Mapping[Any, Any],
    ) -> Any:
        """The ``dtypes`` field of a step's record, or None when no agent's types changed."""
        key = step_key(action, obs, reward, info)
        if key is not None and key == self._key:
            self.retyped = False
            return None  # the same agents, with the same types, as the step before
        self._key = key
        self.retyped = True
        last = self._last
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
        found = signature({"action": action, "obs": obs, "reward": reward, "info": info})
        return None if found is None else dtypes.to_json(found)


def step_key(
    action: Mapping[Any, Any], obs: Mapping[Any, Any], reward: Mapping[Any, Any], info: Any
) -> tuple[Any, ...] | None:
    """A key that stands for the agents and numpy types of a step, or None where it cannot.

    It holds each field's agents and the types of their values, with the
    dtype and shape of arrays: enough when every value is an array, a
    Python value or a numpy scalar, and every info a dict of such scalars
    (the common case, built with C-level calls). A value of any other type
    (a dict observation, an info holding an array) gives None: its types
    are walked.
    """
    action_key = _values_key(action.values())
    obs_key = _values_key(obs.values())
    reward_key = _values_key(reward.values())
    infos = info.values()
    if (
        action_key is None
        or obs_key is None
        or reward_key is None
        or not _ALL_DICTS(map(type, infos))
    ):
        return None
    info_key: tuple[Any, ...] = ()
    if any(infos):
        info_key = tuple(map(_TYPED_ITEMS, infos))
        if not all(_ALL_SCALARS(kinds) for _, kinds in info_key):
            return None
    agents = (tuple(action), tuple(obs), tuple(reward), tuple(info))
    return (action_key, obs_key, reward_key, info_key, agents)


def _values_key(values: Iterable[Any]) -> tuple[Any, ...] | None:
    """The types of values, with the dtype and shape of arrays; None for other values."""
    kinds = tuple(map(type, values))
    if _ALL_ARRAYS(kinds):
        return tuple(map(_DTYPE_AND_SHAPE, values))
    return kinds if _ALL_SCALARS(kinds) else None


def _typed_items(info: dict[Any, Any]) -> tuple[tuple[Any, ...], tuple[type, ...]]:
    return tuple(info), tuple(map(type, info.values()))


_TYPED_ITEMS: Final = _typed_items

_Getters = tuple[Any, Any, Any]


def lean_key(getters: _Getters, action: Any, result: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The key of a parallel step for the lean path; None where it cannot be built.

    It holds the agents of each field and the type of every value, and
    ``getters`` read more of the values of ``action``, ``obs`` and
    ``reward``: the dtype and shape of arrays (None for scalars, whose type
    gives their numpy type), as :func:`lean_getters` chose them for a step
    recorded in full. A step whose key equals that step's holds the same
    agents, with values of the same types (the flags booleans, each info a
    dict of the same keys and types of scalars), so that its record holds
    neither ``dtypes`` nor ``agents``.
    """
    obs, reward, terminated, truncated, info = result
    of_action, of_obs, of_reward = getters
    try:
        infos = info.values()
        # One flat tuple, which costs least to build and compare; the lengths
        # first place every other item: the flags, the only ones whose
        # lengths it lacks, are booleans however the two dicts share them out.
        return (
            len(action),
            len(obs),
            len(reward),
            len(info),
            *action,
            *obs,
            *reward,
            *info,
            *map(
                type,
                chain(
                    (action, *result),
                    action.values(),
                    obs.values(),
                    reward.values(),
                    terminated.values(),
                    truncated.values(),
                    infos,
                ),
            ),
            of_action and tuple(map(of_action, action.values())),
            of_obs and tuple(map(of_obs, obs.values())),
            of_reward and tuple(map(of_reward, reward.values())),
            any(infos) and tuple(map(_TYPED_ITEMS, infos)),
        )
    except (AttributeError, TypeError):  # not a dict, or an array's attributes missing
        return None


def lean_getters(action: Any, result: tuple[Any, ...]) -> _Getters | None:
    """The getters of :func:`lean_key` for the steps like this one; None if they must be walked.

    The lean path takes dicts by agent of arrays (each of a type orjson
    writes itself: not a ``datetime64``, nor of the other byte order) or of
    scalars whose type gives their numpy type, flags that are booleans and
    infos that are dicts of such scalars.
    """
    obs, reward, terminated, truncated, info = result
    if type(action) is not dict or not _ALL_DICTS(map(type, result)):
        return None
    # The obs first: where they are not arrays (a dict of them), the step is
    # turned down at the least cost.
    of_obs, of_action, of_reward = map(_getter, (obs, action, reward))
    if (
        of_obs is _REFUSED
        or of_action is _REFUSED
        or of_reward is _REFUSED
        or not _ALL_BOOLS(map(type, terminated.values()))
        or not _ALL_BOOLS(map(type, truncated.values()))
        or not _ALL_DICTS(map(type, info.values()))
        or not all(_ALL_SCALARS(map(type, values.values())) for values in info.values())
    ):
        return None
    return (of_action, of_obs, of_reward)


def _getter(values_by_agent: dict[Any, Any]) -> Any:
    """What :func:`lean_key` reads of these values beyond their types: None, or dtype and shape."""
    values = values_by_agent.values()
    kinds = set(map(type, values))
    if _ALL_SCALARS(kinds):
        return None
    if _ALL_ARRAYS(kinds) and not any(
        dtypes.needs_careful_path((array.dtype, array.shape)) for array in values
    ):
        return _DTYPE_AND_SHAPE
    return _REFUSED


@dataclasses.dataclass
class _Recording:
    """What both recorders keep: the file, its headers and the numpy types."""

    output_dir: Path
    compress: bool
    headers: HeaderLines
    writer: Any
    types: AgentTypes
    # The lean path of parallel steps: the key of the steps that take it
    # (_NOT_LEAN: none) and the getters it is built with (see lean_key).
    lean: Any = _NOT_LEAN
    getters: _Getters = (None, None, None)

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
        self.lean = _NOT_LEAN  # step 1 writes every agent's types

    def reset(self, obs: Mapping[Any, Any], info: Mapping[Any, Any], agents: list[Any]) -> None:
        typed = dtypes.signature({"obs": obs, "info": info})
        fields = {"obs": obs, "info": info, "agents": agents}
        if typed is not None:
            fields["dtypes"] = dtypes.to_json(typed)
        self.writer.reset_record(fields)

    def step(self, fields: dict[str, Any], before: list[Any], after: list[Any]) -> bool:
        """Record a step of ``fields``; ``before`` and ``after`` are the live agents around it.

        Returns:
            Whether a step of the same agents and types may take the lean path.
        """
        if after != before:
            fields["agents"] = list(after)
        types = self.types
        typed = types.field(fields["action"], fields["obs"], fields["reward"], fields["info"])
        if typed is not None:
            fields["dtypes"] = typed
        lean: bool = self.writer.step_record(fields, done=not after, retyped=types.retyped)
        return lean and bool(after) and after == before

    def keep_lean(self, action: Any, result: tuple[Any, ...]) -> None:
        """Let the steps like the parallel step ``result`` (recorded in full) take the lean path."""
        getters = lean_getters(action, result)
        key = None if getters is None else lean_key(getters, action, result)
        if getters is None or key is None:
            self.lean = _NOT_LEAN
        else:
            self.getters, self.lean = getters, key


class _Recorder:
    """What both recorders share: their storage, their file and how they end."""

    _recording: _Recording
    _api: ClassVar[AgentApi]
    env: Any

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
    ) -> None:
        storage = Storage(max_array_size, flush_every, compress, full_every)
        api = self._api
        self._wrap(env)
        if agent_api(env) != api:
            wanted, other = (
                ("ParallelEnv", "AECEnv") if api == "parallel" else ("AECEnv", "ParallelEnv")
            )
            raise TypeError(
                f"{type(self).__name__} expects a PettingZoo {wanted}, got {type(env).__name__}; "
                f"for an {other} use record_agents(env, folder), which picks the recorder"
            )
        self._recording = _Recording.of(env, output_dir, storage, versions_of)

    def _wrap(self, env: Any) -> None:
        raise NotImplementedError

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

    def flush(self) -> None:
        """Write what is buffered; recording goes on."""
        self._recording.writer.write_buffer()

    def close(self) -> None:
        """Write what is buffered, close the file, then close the env."""
        try:
            self._recording.writer.end()
        finally:
            self.env.close()

    def _reset_needed(self) -> gym.error.ResetNeeded:
        return gym.error.ResetNeeded(
            f"{type(self).__name__}: call reset() before step(); a recording starts at reset"
        )


class RecordParallelTrajectory(_Recorder, BaseParallelWrapper):  # type: ignore[misc]
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
    """

    _api = "parallel"

    def _wrap(self, env: Any) -> None:
        BaseParallelWrapper.__init__(self, env)

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
        """Step the env and record the step of every agent.

        The lean path takes a step whose :func:`lean_key` is that of the step
        before, which was recorded in full and let it (its agents did not
        change, its values are of the types the key vouches for): the step's
        line is written without working out its types (see
        :meth:`~gym_goldens.record.writer.EpisodeWriter.lean_step_record`).
        """
        recording = self._recording
        writer = recording.writer
        if not writer.active:
            raise self._reset_needed()
        env = self.env
        before = list(env.agents)
        try:
            result = env.step(actions)
        except BaseException:
            writer.end()
            raise
        obs, rewards, terminations, truncations, infos = result
        after = env.agents
        # Encoded before the env steps again: the env's own dicts, not copies.
        if (
            after
            and after == before
            and recording.lean is not _NOT_LEAN
            and lean_key(recording.getters, actions, result) == recording.lean
        ):
            writer.lean_step_record(actions, obs, rewards, terminations, truncations, infos)
            return result  # type: ignore[no-any-return]
        fields = {
            "action": actions,
            "obs": obs,
            "reward": rewards,
            "terminated": _flags(terminations),
            "truncated": _flags(truncations),
            "info": infos,
        }
        if recording.step(fields, before, after):
            recording.keep_lean(actions, result)
        else:
            recording.lean = _NOT_LEAN
        return result  # type: ignore[no-any-return]


class RecordAECTrajectory(_Recorder, BaseWrapper):  # type: ignore[misc]
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
    """

    _api = "aec"

    def _wrap(self, env: Any) -> None:
        BaseWrapper.__init__(self, env)

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
        if not recording.writer.active:
            raise self._reset_needed()
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


def _flags(flags: Mapping[Any, Any]) -> dict[Any, bool]:
    """Terminations or truncations by agent, as Python booleans."""
    if type(flags) is dict and _ALL_BOOLS(map(type, flags.values())):
        return flags
    return {agent: bool(flag) for agent, flag in flags.items()}
