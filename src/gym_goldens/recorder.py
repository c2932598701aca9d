"""The recording wrapper: one JSONL file per recording.

A recording is the folder ``output_dir`` holding ``trajectory.jsonl``: for each
episode a ``header`` record, a ``reset`` record and one ``step`` record per
step; see ``docs/FORMAT.md``.

Flush policy: lines are buffered in memory during an episode and appended to
the file with one write when the episode ends (terminated or truncated), on
the next ``reset()``, on ``flush()`` and ``close()``, and when the env raises.
A completed episode is therefore handed to the operating system before the
next one starts: if the process then dies (even by a segfault or SIGKILL),
every completed episode is on disk and only the episode in progress is lost.
``flush_every=N`` also writes the buffer every N lines (steps), for per-step
durability of long episodes at the cost of a write every N steps; after a
crash the last episode then ends early, and the reader reports it as
incomplete (see :attr:`gym_goldens.reader.Episode.complete`). The file stays
open between episodes: an append costs a few microseconds where creating a
file per episode costs tens to hundreds.

Storage options keep goldens of image envs and long rollouts small:
``max_array_size`` (summaries of large arrays, by field), ``compress``
(``trajectory.jsonl.gz``, a gzip member per write) and ``full_every`` (only
every k-th step in full, a digest of the others).

The step loop does as little as it can: one dict, one ``orjson.dumps`` (the
careful encoder only when that line may be lossy) and a list append; the
header, which does not change between episodes, is encoded once, and the
numpy types of a step are worked out in full only when a cheap signature of
them changes.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from pathlib import Path
from typing import Any, Final, Generic, SupportsFloat, TypeVar

import gymnasium as gym
import numpy as np
import orjson

from gym_goldens import dtypes

# The codec's own dumps options: the step loop inlines Encoder.encode.
from gym_goldens.codec import (
    _DUMPS_OPTIONS,
    DEFAULT_MAX_ARRAY_SIZE,
    ArraySizeSpec,
    Encoder,
    _large_obs,
)
from gym_goldens.header import FORMAT_NAME, FORMAT_VERSION, describe_env

__all__ = [
    "TRAJECTORY_NAME",
    "RecordTrajectory",
    "StepTypes",
    "TrajectoryFile",
    "check_every",
    "digest_record",
    "step_key",
    "storage_header",
    "trajectory_filename",
]

_DIGEST_BYTES = 8
_GZIP_LEVEL = 6

ObsType = TypeVar("ObsType")
ActType = TypeVar("ActType")

_DUMPS: Final = orjson.dumps
_NDARRAY: Final = np.ndarray
_MAX_CACHED: Final = 64
# Types whose numpy type, if any, their type alone gives: Python values (none)
# and numpy numbers (their dtype). Strings and bytes of numpy carry a length.
_SIMPLE_TYPES: Final = frozenset(
    {float, int, bool, str, bytes, type(None)}
    | {kind for kind in np.sctypeDict.values() if issubclass(kind, (np.number, np.bool_))}
)
_ALL_PLAIN: Final = frozenset({float, int, bool, str, bytes, type(None)}).issuperset
_NEW_FILE: Final = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
_APPEND: Final = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)


TRAJECTORY_NAME: Final = "trajectory.jsonl"
"""The file of a recording, in its folder (``.gz`` added when compressed)."""


def trajectory_filename(*, compress: bool = False) -> str:
    """The file name of a recording: ``trajectory.jsonl`` or ``trajectory.jsonl.gz``."""
    return TRAJECTORY_NAME + (".gz" if compress else "")


def digest_record(t: int, line: bytes) -> bytes:
    """The record that stands for step ``t`` when only its digest is kept."""
    digest = hashlib.blake2b(line, digest_size=_DIGEST_BYTES).hexdigest()
    return b'{"digest":"%s","event":"step","t":%d}' % (digest.encode("ascii"), t)


def check_every(name: str, value: int | None) -> None:
    """Refuse a ``flush_every`` or ``full_every`` that is not None or a positive int."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"{name} must be None or a positive int, got {value!r}")


class TrajectoryFile:
    """The file of one recording, written in pieces.

    The first write creates the file (replacing an older one); later writes
    append to it, also after :meth:`close`. Writes are os-level calls,
    unbuffered: a file object costs more than the write itself, and what was
    written has reached the operating system. A compressed file gets one
    complete gzip member per write (with a fixed timestamp, so the same lines
    give the same bytes), so that what was written reads back even if the
    process dies before the next write.

    Args:
        path: The trajectory file.
        compress: Whether it is gzip-compressed (``.jsonl.gz``).
    """

    __slots__ = ("_compress", "_fd", "_started", "path")

    def __init__(self, path: str, *, compress: bool) -> None:
        self.path = path
        self._compress = compress
        self._fd: int | None = None
        self._started = False

    @property
    def is_open(self) -> bool:
        """Whether a handle on the file is open."""
        return self._fd is not None

    def write(self, lines: list[bytes]) -> None:
        """Append ``lines`` (without newlines), each ending in a newline.

        The list is used up: the caller hands over its buffer.
        """
        lines.append(b"")  # the last newline, without copying the joined lines again
        data = b"\n".join(lines)
        if self._compress:
            data = gzip.compress(data, compresslevel=_GZIP_LEVEL, mtime=0)
        if self._fd is None:
            self._fd = os.open(self.path, _APPEND if self._started else _NEW_FILE, 0o666)
            self._started = True
        written = os.write(self._fd, data)
        if written < len(data):
            # A short write (a signal, a nearly full disk): the rest goes after it.
            view = memoryview(data)[written:]
            while view:
                view = view[os.write(self._fd, view) :]

    def close(self) -> None:
        """Close the handle; a later write appends."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


def step_key(action: Any, obs: Any, reward: Any) -> tuple[Any, ...]:
    """A cheap key of the types of a step: types, and dtype and shape of arrays."""
    action_key: Any = type(action)
    if action_key is _NDARRAY:
        action_key = (action.dtype, action.shape)
    obs_key: Any = type(obs)
    if obs_key is _NDARRAY:
        obs_key = (obs.dtype, obs.shape)
    return (action_key, obs_key, type(reward))


class StepTypes:
    """The numpy types of the steps of one recording, worked out only when they may change.

    Walking every value of a step for its numpy type costs more than encoding
    a small step, so a recorder walks them (:meth:`walk`) only when the cheap
    :func:`step_key` of a step differs from :attr:`key` or when :meth:`known`
    cannot vouch for the info dict. The key stands for the types when each
    of action, obs and reward is a plain array, a Python value or a numpy
    number, and the info dict holds Python values only (which have no numpy
    type); otherwise :attr:`key` is None and every step is walked.

    Attributes:
        key: The key that stands for the last walked types, or None.
        field: The ``dtypes`` record field of those types (None when nothing
            has a numpy type).
    """

    __slots__ = ("_types", "field", "key")

    def __init__(self) -> None:
        self.key: tuple[Any, ...] | None = None
        self.field: Any = None
        self._types: Any = None

    def known(self, key: tuple[Any, ...], info: Any) -> bool:
        """Whether the types of a step with this key and info are those last walked."""
        return (
            key == self.key
            and type(info) is dict
            and (not info or _ALL_PLAIN(map(type, info.values())))
        )

    def walk(self, action: Any, obs: Any, reward: Any, info: Any, key: tuple[Any, ...]) -> bool:
        """Work out the types of a step in full; whether they changed since the last walk."""
        types = (
            dtypes.signature(action),
            dtypes.signature(obs),
            dtypes.signature(reward),
            dtypes.signature(info),
        )
        changed: bool = types != self._types
        if changed:
            self._types = types
            fields = zip(("action", "obs", "reward", "info"), types, strict=True)
            typed = {name: found for name, found in fields if found is not None}
            self.field = dtypes.to_json(typed) if typed else None
        simple = type(info) is dict and types[3] is None
        simple = simple and all(type(part) is tuple or part in _SIMPLE_TYPES for part in key)
        self.key = key if simple else None
        return changed


def storage_header(max_array_size: ArraySizeSpec, full_every: int | None) -> dict[str, Any]:
    """The ``storage`` header field: how arrays and steps were kept."""
    return {"max_array_size": max_array_size, "full_every": full_every}


class RecordTrajectory(
    gym.Wrapper[ObsType, ActType, ObsType, ActType],
    gym.utils.RecordConstructorArgs,
    Generic[ObsType, ActType],
):
    """Record every reset and step of an env as JSON lines, in one file.

    Args:
        env: The env to record.
        output_dir: Folder of the recording (``trajectory.jsonl``); created
            if missing.
        max_array_size: Arrays with more elements are stored as a summary
            (dtype, shape, digest, statistics); None stores every array in full.
            A mapping from field patterns to sizes sets it by field, such as
            ``{"obs.image": None}``.
        flush_every: Also write the buffer whenever it holds this many
            lines (one per step, plus the header and reset lines at the start
            of an episode), for durability of long episodes against a crash
            of the process. None (the default) writes each episode once,
            at episode end, reset, flush, close and on error.
        compress: Write ``trajectory.jsonl.gz``.
        full_every: Keep only step 1, every ``full_every``-th step and the
            last step of an episode in full, and a digest of the others. A
            digest is compared exactly, without tolerance.

    Example:
        >>> import gymnasium as gym, tempfile
        >>> out = tempfile.mkdtemp()
        >>> env = RecordTrajectory(gym.make("CartPole-v1"), out)
        >>> _ = env.reset(seed=0)
        >>> _ = env.step(0)
        >>> env.close()
        >>> sorted(p.name for p in Path(out).iterdir())
        ['trajectory.jsonl']
    """

    def __init__(
        self,
        env: gym.Env[ObsType, ActType],
        output_dir: str | os.PathLike[str],
        *,
        max_array_size: ArraySizeSpec = DEFAULT_MAX_ARRAY_SIZE,
        flush_every: int | None = None,
        compress: bool = False,
        full_every: int | None = None,
    ) -> None:
        if not isinstance(env, gym.Env):
            raise TypeError(
                f"RecordTrajectory expects a gymnasium.Env, got {type(env).__name__}; "
                "wrap the result of gym.make(...), for example "
                'RecordTrajectory(gym.make("CartPole-v1"), dir)'
            )
        check_every("flush_every", flush_every)
        check_every("full_every", full_every)
        gym.utils.RecordConstructorArgs.__init__(
            self,
            output_dir=str(output_dir),
            max_array_size=max_array_size,
            flush_every=flush_every,
            compress=compress,
            full_every=full_every,
        )
        gym.Wrapper.__init__(self, env)
        self.output_dir = Path(output_dir)
        self.output_dir.mkdir(parents=True, exist_ok=True)
        self.flush_every = flush_every
        self.compress = compress
        self.full_every = full_every
        self.episode_count = 0
        self._encoder = Encoder(max_array_size=max_array_size)
        self._careful = self._encoder.encode_careful
        self._fast_limit = self._encoder.fast_limit
        self._flush_limit = flush_every if flush_every is not None else float("inf")
        self._storage = storage_header(max_array_size, full_every)
        # They outlive an episode: step 1 of the next one writes the field again.
        self._step_types = StepTypes()
        self._obs_large = False
        self._reset_dtypes: dict[Any, Any] = {}
        # The smallest array that may be summarised (see Encoder.encode).
        limit = self._encoder.fast_limit
        self._smallest_array = limit / 2 if limit != float("inf") else limit
        self._static_header: dict[str, Any] | None = None
        self._headers: dict[int | None, bytes] = {}
        self._lines: list[bytes] = []
        self._file = TrajectoryFile(str(self.path), compress=compress)
        # Whether an episode is in progress (reset called, not ended by close).
        self._recording = False
        self._t = 0

    @property
    def path(self) -> Path:
        """The trajectory file (written at the end of the first episode)."""
        return self.output_dir / trajectory_filename(compress=self.compress)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsType, dict[str, Any]]:
        """Reset the env and start a new episode."""
        if self._lines:
            self._write_buffer()  # the episode did not end: written as it is
        index = self.episode_count
        self._recording = True
        self.episode_count = index + 1
        self._t = 0
        self._lines = [self._header(seed, options)]
        try:
            obs, info = self.env.reset(seed=seed, options=options)
        except BaseException:
            self._end_episode()
            raise
        record = {"event": "reset", "episode": self.episode_count - 1, "obs": obs, "info": info}
        reset_dtypes = self._reset_types(obs, info)
        if reset_dtypes is not None:
            record["dtypes"] = reset_dtypes
        self._lines.append(self._encoder.encode(record))
        return obs, info

    def _reset_types(self, obs: Any, info: Any) -> Any:
        """The dtypes field of a reset record (None for none), kept by type of obs."""
        key: Any = type(obs)
        if key is _NDARRAY:
            key = (obs.dtype, obs.shape)
        cacheable = (type(key) is tuple or key in _SIMPLE_TYPES) and (
            type(info) is dict and _ALL_PLAIN(map(type, info.values()))
        )
        if cacheable and key in self._reset_dtypes:
            return self._reset_dtypes[key]
        types = dtypes.signature({"obs": obs, "info": info})
        found = None if types is None else dtypes.to_json(types)
        if cacheable and len(self._reset_dtypes) < _MAX_CACHED:
            self._reset_dtypes[key] = found
        return found

    def step(self, action: ActType) -> tuple[ObsType, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the env and record the step."""
        if not self._recording:
            raise gym.error.ResetNeeded(
                "RecordTrajectory: call reset() before step(); a recording starts at reset"
            )
        try:
            result = self.env.step(action)
        except BaseException:
            self._end_episode()
            raise
        obs, reward, terminated, truncated, info = result
        self._t = t = self._t + 1
        record = {
            "event": "step",
            "t": t,
            "action": action,
            "obs": obs,
            "reward": reward,
            "terminated": bool(terminated),
            "truncated": bool(truncated),
            "info": info,
        }
        # The numpy types are written when they change (in practice on step 1),
        # walked in full only when a cheap key of them changes (see StepTypes).
        # step_key and StepTypes.known, inlined: this runs at every step.
        action_key: Any = type(action)
        if action_key is _NDARRAY:
            action_key = (action.dtype, action.shape)  # type: ignore[attr-defined]
        obs_key: Any = type(obs)
        if obs_key is _NDARRAY:
            obs_key = (obs.dtype, obs.shape)  # type: ignore[attr-defined]
        key = (action_key, obs_key, type(reward))
        step_types = self._step_types
        if (
            key != step_types.key
            or type(info) is not dict
            or (info and not _ALL_PLAIN(map(type, info.values())))
        ):
            changed = step_types.walk(action, obs, reward, info, key)
            if (changed or t == 1) and step_types.field is not None:
                record["dtypes"] = step_types.field
            self._obs_large = _large_obs(obs, self._smallest_array)
        elif t == 1 and step_types.field is not None:
            # The same types as the last step of the previous episode.
            record["dtypes"] = step_types.field
        # Encoder.encode, inlined: this runs at every step of every recording.
        if self._obs_large:
            # An image would be written in full only to be summarised.
            line = self._careful(record)
        else:
            try:
                line = _DUMPS(record, option=_DUMPS_OPTIONS)
            except orjson.JSONEncodeError:
                line = self._careful(record)
            else:
                # partition(), not find() or "in": its one-argument call costs
                # least on short bytes. Any "$" (not only '"$') is a false alarm
                # at worst: the careful path gives the same bytes.
                if (
                    line.partition(b"null")[1]
                    or line.partition(b"$")[1]
                    or len(line) > self._fast_limit
                ):
                    line = self._careful(record)
        if (
            self.full_every is not None
            and t % self.full_every
            and t != 1
            and not (terminated or truncated)
        ):
            line = digest_record(t, line)
        lines = self._lines
        lines.append(line)
        if terminated or truncated or len(lines) >= self._flush_limit:
            self._write_buffer()
        return result

    def flush(self) -> None:
        """Write what is buffered; recording goes on."""
        self._write_buffer()

    def close(self) -> None:
        """Write what is buffered, close the file, then close the env."""
        try:
            self._end_episode()
        finally:
            super().close()

    def _header(self, seed: int | None, options: dict[str, Any] | None) -> bytes:
        cacheable = options is None and (seed is None or type(seed) is int)
        if cacheable and seed in self._headers:
            # Mostly reset() or reset(seed=n): the same bytes every episode.
            return self._headers[seed]
        if self._static_header is None:
            static = describe_env(self.env)
            encode = self._encoder.encode
            self._static_header = {
                "event": "header",
                "format": FORMAT_NAME,
                "version": FORMAT_VERSION,
                "storage": orjson.Fragment(encode(self._storage)),
                **{key: orjson.Fragment(encode(value)) for key, value in static.items()},
            }
        reset = orjson.Fragment(self._encoder.encode({"seed": seed, "options": options}))
        # Every value is a string or already encoded, so one dumps gives the
        # same bytes as the careful path, without walking the header again.
        line = _DUMPS({**self._static_header, "reset": reset}, option=_DUMPS_OPTIONS)
        if cacheable and len(self._headers) < _MAX_CACHED:
            self._headers[seed] = line
        return line

    def _end_episode(self) -> None:
        self._recording = False
        try:
            self._write_buffer()
        finally:
            self._file.close()

    def _write_buffer(self) -> None:
        if self._lines:
            lines, self._lines = self._lines, []
            self._file.write(lines)
