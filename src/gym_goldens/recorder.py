"""The recording wrapper: one JSONL file per episode.

Each episode file holds a ``header`` record, a ``reset`` record and one
``step`` record per step; see ``docs/FORMAT.md``. Lines are buffered in memory
during an episode and written when it ends (terminated or truncated), on the
next ``reset()``, on ``close()`` and when the env raises, so the wrapper adds
little to the step loop. ``flush_every=N`` also writes every N steps, for
durability against a crash of the whole process mid-episode.

Storage options keep goldens of image envs and long rollouts small:
``max_array_size`` (summaries of large arrays, by field), ``compress``
(``episode_NNNNN.jsonl.gz``) and ``full_every`` (only every k-th step in full,
a digest of the others).
"""

from __future__ import annotations

import gzip
import hashlib
import os
from pathlib import Path
from typing import IO, Any, Generic, SupportsFloat, TypeVar

import gymnasium as gym
import orjson

from gym_goldens import dtypes
from gym_goldens.codec import DEFAULT_MAX_ARRAY_SIZE, ArraySizeSpec, Encoder
from gym_goldens.header import FORMAT_NAME, FORMAT_VERSION, describe_env

__all__ = [
    "RecordTrajectory",
    "digest_record",
    "episode_filename",
    "open_episode_file",
    "storage_header",
]

_DIGEST_BYTES = 8
_GZIP_LEVEL = 6

ObsType = TypeVar("ObsType")
ActType = TypeVar("ActType")


def episode_filename(index: int, *, compress: bool = False) -> str:
    """The file name of episode ``index``: ``episode_00000.jsonl`` and so on."""
    return f"episode_{index:05d}.jsonl" + (".gz" if compress else "")


def open_episode_file(path: Path, mode: str, *, compress: bool) -> IO[bytes]:
    """Open an episode file for writing (``wb``) or appending (``ab``).

    A gzip file gets a fixed timestamp, so the same lines give the same
    bytes; each append adds a gzip member, which readers handle.
    """
    if compress:
        return gzip.GzipFile(path, mode, compresslevel=_GZIP_LEVEL, mtime=0)  # type: ignore[return-value]
    return open(path, mode)


def digest_record(t: int, line: bytes) -> bytes:
    """The record that stands for step ``t`` when only its digest is kept."""
    digest = hashlib.blake2b(line, digest_size=_DIGEST_BYTES).hexdigest()
    return b'{"digest":"%s","event":"step","t":%d}' % (digest.encode("ascii"), t)


def storage_header(max_array_size: ArraySizeSpec, full_every: int | None) -> dict[str, Any]:
    """The ``storage`` header field: how arrays and steps were kept."""
    return {"max_array_size": max_array_size, "full_every": full_every}


class RecordTrajectory(
    gym.Wrapper[ObsType, ActType, ObsType, ActType],
    gym.utils.RecordConstructorArgs,
    Generic[ObsType, ActType],
):
    """Record every reset and step of an env as JSON lines, one file per episode.

    Args:
        env: The env to record.
        output_dir: Folder for the episode files; created if missing.
        max_array_size: Arrays with more elements are stored as a summary
            (dtype, shape, digest, statistics); None stores every array in full.
            A mapping from field patterns to sizes sets it by field, such as
            ``{"obs.image": None}``.
        flush_every: Also write the buffered lines every this many steps.
            None (the default) writes at episode end, reset, close and on error.
        compress: Write ``episode_NNNNN.jsonl.gz`` files.
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
        ['episode_00000.jsonl']
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
        if flush_every is not None and flush_every < 1:
            raise ValueError(f"flush_every must be None or a positive int, got {flush_every!r}")
        if full_every is not None and (isinstance(full_every, bool) or full_every < 1):
            raise ValueError(f"full_every must be None or a positive int, got {full_every!r}")
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
        self._storage = storage_header(max_array_size, full_every)
        self._step_types: Any = None
        self._static_header: dict[str, Any] | None = None
        self._lines: list[bytes] = []
        self._file: IO[bytes] | None = None
        self._path: Path | None = None
        self._file_started = False
        self._t = 0

    @property
    def episode_paths(self) -> list[Path]:
        """The files written so far, in episode order."""
        return [
            self.output_dir / episode_filename(i, compress=self.compress)
            for i in range(self.episode_count)
        ]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsType, dict[str, Any]]:
        """Reset the env and start a new episode file."""
        self._end_episode()
        self._path = self.output_dir / episode_filename(self.episode_count, compress=self.compress)
        self.episode_count += 1
        self._t = 0
        self._step_types = None
        self._file_started = False
        self._lines = [self._header(seed, options)]
        try:
            obs, info = self.env.reset(seed=seed, options=options)
        except BaseException:
            self._end_episode()
            raise
        record = {"event": "reset", "episode": self.episode_count - 1, "obs": obs, "info": info}
        types = dtypes.signature({"obs": obs, "info": info})
        if types is not None:
            record["dtypes"] = dtypes.to_json(types)
        self._lines.append(self._encoder.encode(record))
        return obs, info

    def step(self, action: ActType) -> tuple[ObsType, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the env and record the step."""
        if self._path is None:
            raise gym.error.ResetNeeded(
                "RecordTrajectory: call reset() before step(); a recording starts at reset"
            )
        try:
            result = self.env.step(action)
        except BaseException:
            self._end_episode()
            raise
        obs, reward, terminated, truncated, info = result
        self._t += 1
        record = {
            "event": "step",
            "t": self._t,
            "action": action,
            "obs": obs,
            "reward": reward,
            "terminated": bool(terminated),
            "truncated": bool(truncated),
            "info": info,
        }
        # The numpy types are written when they change (in practice on step 1).
        types = (
            dtypes.signature(action),
            dtypes.signature(obs),
            dtypes.signature(reward),
            dtypes.signature(info),
        )
        if types != self._step_types:
            self._step_types = types
            fields = zip(("action", "obs", "reward", "info"), types, strict=True)
            typed = {key: found for key, found in fields if found is not None}
            if typed:
                record["dtypes"] = dtypes.to_json(typed)
        line = self._encoder.encode(record)
        if (
            self.full_every is not None
            and self._t % self.full_every
            and self._t != 1
            and not (terminated or truncated)
        ):
            line = digest_record(self._t, line)
        self._lines.append(line)
        if terminated or truncated:
            self._close_file()
        elif self.flush_every is not None and len(self._lines) >= self.flush_every:
            self._write_buffer()
            # Hand the lines to the OS: flush_every exists to survive a crash.
            if self._file is not None:
                self._file.flush()
        return result

    def flush(self) -> None:
        """Write what is buffered and close the current file; recording goes on."""
        self._close_file()

    def close(self) -> None:
        """Write what is buffered, close the file, then close the env."""
        try:
            self._end_episode()
        finally:
            super().close()

    def _header(self, seed: int | None, options: dict[str, Any] | None) -> bytes:
        if self._static_header is None:
            static = describe_env(self.env)
            self._static_header = {
                key: orjson.Fragment(self._encoder.encode(value)) for key, value in static.items()
            }
        return self._encoder.encode(
            {
                "event": "header",
                "format": FORMAT_NAME,
                "version": FORMAT_VERSION,
                "reset": {"seed": seed, "options": options},
                "storage": self._storage,
                **self._static_header,
            }
        )

    def _end_episode(self) -> None:
        self._close_file()
        self._path = None

    def _write_buffer(self) -> None:
        if not self._lines or self._path is None:
            return
        if self._file is None:
            # The first write of an episode creates the file; later ones, after
            # a flush or past the end of the episode, append to it.
            mode = "ab" if self._file_started else "wb"
            self._file = open_episode_file(self._path, mode, compress=self.compress)
        lines, self._lines = self._lines, []
        self._file.write(b"\n".join(lines) + b"\n")
        self._file_started = True

    def _close_file(self) -> None:
        try:
            self._write_buffer()
        finally:
            if self._file is not None:
                self._file.close()
                self._file = None
