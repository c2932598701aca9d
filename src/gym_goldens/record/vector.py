"""Recording a vector env: each sub-env's episodes in a file of its own.

A ``gymnasium.vector.VectorEnv`` steps ``num_envs`` sub-envs in lock-step and
batches their results. :class:`RecordVectorTrajectory` splits each batch and
records every sub-env as if it were a single env::

    <output_dir>/env_0/trajectory.jsonl
    <output_dir>/env_1/trajectory.jsonl
    ...

so each sub-env's episodes read back and compare one by one. The files are
those of :class:`~gym_goldens.record.single.RecordTrajectory`, with a ``vector``
header field (number of sub-envs, the sub-env's index, the autoreset mode) and
a ``vectorization_mode`` one.

Every autoreset mode of gymnasium 1.x is honoured:

- ``NextStep`` (the default): the step after a sub-env's episode ended
  ignores its action and returns its reset observation. That is recorded as
  the reset record of the sub-env's next episode, not as a step.
- ``SameStep``: the step that ends an episode returns the reset observation
  at once and the true last observation in ``info["final_obs"]`` and
  ``info["final_info"]``. The step is recorded with the final observation and
  info, and the reset observation opens the next episode.
- ``Disabled``: the caller resets ended sub-envs with
  ``reset(options={"reset_mask": mask})``; only the masked sub-envs start a
  new episode.

Vector infos hold a ``_key`` mask beside each key; a sub-env's info keeps the
keys whose mask is set for it, at every level of nesting.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import iterate

from gym_goldens.format.codec import DEFAULT_MAX_ARRAY_SIZE, ArraySizeSpec
from gym_goldens.format.header import describe_vector_env
from gym_goldens.format.layout import sub_env_dirname, trajectory_filename
from gym_goldens.record.writer import HeaderLines, Storage

__all__ = ["RecordVectorTrajectory", "sub_env_info", "sub_env_infos"]

_NEXT_STEP: Final = "NextStep"
_SAME_STEP: Final = "SameStep"
_DISABLED: Final = "Disabled"
_FINAL_KEYS: Final = frozenset({"final_obs", "final_info", "_final_obs", "_final_info"})
# Batched spaces whose batches gymnasium's iterate() splits as iter() does:
# row by row along the first axis. It is called twice per step; iter() costs less.
_ROW_SPACES: Final = (gym.spaces.Box, gym.spaces.MultiDiscrete, gym.spaces.MultiBinary)
_BOOL: Final = np.dtype(np.bool_)


class RecordVectorTrajectory(gym.vector.VectorWrapper, gym.utils.RecordConstructorArgs):
    """Record every sub-env of a vector env, one folder and trajectory file each.

    Args:
        env: The vector env to record, such as ``gym.make_vec("CartPole-v1", 4)``.
        output_dir: Folder of the recording; ``env_<i>/`` is created per sub-env.
        max_array_size: As for :class:`~gym_goldens.record.single.RecordTrajectory`.
        flush_every: As for :class:`~gym_goldens.record.single.RecordTrajectory`.
        compress: As for :class:`~gym_goldens.record.single.RecordTrajectory`.
        full_every: As for :class:`~gym_goldens.record.single.RecordTrajectory`.
        versions_of: As for :class:`~gym_goldens.record.single.RecordTrajectory`.
        images: As for :class:`~gym_goldens.record.single.RecordTrajectory`:
            with ``"frames"``, each sub-env's frames are in its own folder
            (``env_0/frames/``).

    Example:
        >>> import gymnasium as gym, tempfile
        >>> out = Path(tempfile.mkdtemp())
        >>> envs = RecordVectorTrajectory(gym.make_vec("CartPole-v1", num_envs=2), out)
        >>> _ = envs.reset(seed=0)
        >>> _ = envs.step(np.array([0, 1]))
        >>> envs.close()
        >>> sorted(str(p.relative_to(out)) for p in out.rglob("*.jsonl"))
        ['env_0/trajectory.jsonl', 'env_1/trajectory.jsonl']
    """

    def __init__(
        self,
        env: gym.vector.VectorEnv[Any, Any, Any],
        output_dir: str | os.PathLike[str],
        *,
        max_array_size: ArraySizeSpec = DEFAULT_MAX_ARRAY_SIZE,
        flush_every: int | None = None,
        compress: bool = False,
        full_every: int | None = None,
        versions_of: Iterable[str] = (),
        images: str = "summary",
    ) -> None:
        if not isinstance(env, gym.vector.VectorEnv):
            raise TypeError(
                f"RecordVectorTrajectory expects a gymnasium.vector.VectorEnv, got "
                f"{type(env).__name__}; for a single env use RecordTrajectory"
            )
        storage = Storage(max_array_size, flush_every, compress, full_every, images=images)
        gym.utils.RecordConstructorArgs.__init__(
            self,
            output_dir=str(output_dir),
            **dataclasses.asdict(storage),
            versions_of=tuple(versions_of),
        )
        gym.vector.VectorWrapper.__init__(self, env)
        self.output_dir = Path(output_dir)
        self.output_dir.mkdir(parents=True, exist_ok=True)
        mode = env.metadata.get("autoreset_mode", _NEXT_STEP)
        self.autoreset_mode: str = str(getattr(mode, "value", mode))
        if self.autoreset_mode not in (_NEXT_STEP, _SAME_STEP, _DISABLED):
            raise ValueError(
                f"RecordVectorTrajectory: unknown autoreset mode {self.autoreset_mode!r}; "
                "expected NextStep, SameStep or Disabled (gymnasium.vector.AutoresetMode)"
            )
        encoder = storage.encoder()
        names = tuple(versions_of)
        self._headers = HeaderLines(
            lambda: describe_vector_env(self.env, versions_of=names), storage.header, encoder
        )
        name = trajectory_filename(compress=compress)
        self._subs = [
            storage.writer(self.output_dir / sub_env_dirname(i) / name, encoder)
            for i in range(self.num_envs)
        ]
        # Sub-envs whose next step is NextStep's autoreset.
        self._autoreset = [False] * self.num_envs

    @property
    def episode_count(self) -> int:
        """Episodes started so far, over every sub-env."""
        return sum(sub.episode_count for sub in self._subs)

    @property
    def paths(self) -> list[Path]:
        """The trajectory file of each sub-env, in sub-env order."""
        return [sub.path for sub in self._subs]

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset the vector env; every reset sub-env starts a new episode."""
        __tracebackhide__ = True  # a value the recorder refuses: the test's line, not ours
        mask = None
        recorded_options = options
        if options is not None and "reset_mask" in options:
            # The vector env pops the mask from options; read it first.
            mask = np.asarray(options["reset_mask"], dtype=bool)
            recorded_options = {k: v for k, v in options.items() if k != "reset_mask"}
        try:
            obs, infos = self.env.reset(seed=seed, options=options)  # type: ignore[arg-type]
        except BaseException:
            self._end_all()
            raise
        split_infos = sub_env_infos(infos, self.num_envs)
        for i, sub_obs in enumerate(_split(self.observation_space, obs)):
            if mask is not None and not mask[i]:
                continue
            self._autoreset[i] = False
            self._start(i, sub_obs, split_infos[i], seed=seed, options=recorded_options)
        return obs, infos

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Step the vector env and record each sub-env's step (or reset)."""
        __tracebackhide__ = True
        try:
            result = self.env.step(actions)
        except BaseException:
            self._end_all()
            raise
        obs, rewards, terminations, truncations, infos = result
        same_step = self.autoreset_mode == _SAME_STEP
        next_step = self.autoreset_mode == _NEXT_STEP
        autoreset = self._autoreset
        # Each batch split once, not indexed per sub-env: this runs at every step.
        per_env = zip(
            itertools.count(),
            self._subs,
            _split(self.action_space, actions),
            _split(self.observation_space, obs),
            rewards,  # iterating an array gives the numpy scalars indexing would
            _flags(terminations),
            _flags(truncations),
            sub_env_infos(infos, self.num_envs) if infos else [{}] * self.num_envs,
        )
        for i, sub, sub_action, sub_obs, reward, terminated, truncated, info in per_env:
            if autoreset[i]:
                # NextStep: this sub-env ignored its action and reset.
                autoreset[i] = False
                self._start(i, sub_obs, info, autoreset=True)
                continue
            if not sub.active:
                raise gym.error.ResetNeeded(
                    f"RecordVectorTrajectory: sub-env {i} was stepped before it was reset"
                )
            done = terminated or truncated
            if same_step and done and "final_obs" in info:
                final_obs = info["final_obs"]
                final_info = info.get("final_info", {})
                reset_info = {k: v for k, v in info.items() if k not in _FINAL_KEYS}
                sub.step(sub_action, final_obs, reward, terminated, truncated, final_info)
                self._start(i, sub_obs, reset_info, autoreset=True)
                continue
            sub.step(sub_action, sub_obs, reward, terminated, truncated, info)
            if done and next_step:
                autoreset[i] = True
        return result

    def flush(self) -> None:
        """Write what is buffered; recording goes on."""
        for sub in self._subs:
            sub.write_buffer()

    def close(self, **kwargs: Any) -> None:
        """Write what is buffered, close the files, then close the vector env."""
        try:
            self._end_all()
        finally:
            super().close(**kwargs)

    def _start(
        self,
        index: int,
        obs: Any,
        info: dict[str, Any],
        *,
        seed: Any = None,
        options: Any = None,
        autoreset: bool = False,
    ) -> None:
        __tracebackhide__ = True
        writer = self._subs[index]
        writer.begin(self._headers.line(seed, options, autoreset=autoreset, index=index))
        writer.reset(obs, info)

    def _end_all(self) -> None:
        errors = []
        for sub in self._subs:
            try:
                sub.end()
            except Exception as exc:  # close the others, then raise the first
                errors.append(exc)
        if errors:
            raise errors[0]


def _split(space: gym.Space[Any], batch: Any) -> Iterator[Any]:
    """The sub-env items of a batch, as gymnasium's ``iterate`` gives them."""
    if type(batch) is np.ndarray:
        # Rows of a Fortran-ordered batch (CartPoleVectorEnv's) would each need
        # a copy to encode; a C-ordered one is returned as it is, at less cost
        # than a look at its flags.
        batch = np.ascontiguousarray(batch)
        if type(space) in _ROW_SPACES:
            return iter(batch)
    return iterate(space, batch)


def _flags(batch: Any) -> list[bool]:
    """A batch of terminated or truncated flags as Python bools."""
    if type(batch) is np.ndarray and batch.dtype is _BOOL:
        return batch.tolist()  # type: ignore[no-any-return]
    return [bool(flag) for flag in batch]


def sub_env_info(infos: Mapping[str, Any], index: int) -> dict[str, Any]:
    """The info of sub-env ``index``, out of a vector env's batched info.

    A key is kept when its ``_key`` mask is set for the sub-env (or it has no
    mask); nested dicts are split the same way.

    Example:
        >>> infos = {"x": np.array([1.0, 2.0]), "_x": np.array([False, True])}
        >>> sub_env_info(infos, 0), float(sub_env_info(infos, 1)["x"])
        ({}, 2.0)
    """
    return sub_env_infos(infos, index + 1)[index]


def sub_env_infos(infos: Mapping[str, Any], num_envs: int) -> list[dict[str, Any]]:
    """The info of each of the first ``num_envs`` sub-envs (see :func:`sub_env_info`).

    Each key's batch is split once for every sub-env, not indexed per sub-env.
    A value that is not batched (not a sequence, or one with fewer items than
    the sub-env's index) is the same for every sub-env.
    """
    keys: list[Any] = []
    columns: list[Sequence[Any]] = []
    masks: list[Iterable[bool]] = []
    every = itertools.repeat(True)
    partial = False  # whether a mask leaves a key out of a sub-env's info
    for key, value in infos.items():
        mask = None
        if isinstance(key, str):
            if key[:1] == "_" and key[1:] in infos:
                continue  # the mask of another key
            mask = infos.get(f"_{key}")
        keys.append(key)
        columns.append(_items(value, num_envs))
        if mask is None:
            masks.append(every)
        else:
            flags = _flags(mask)
            partial = partial or len(flags) < num_envs or False in flags[:num_envs]
            masks.append(flags)
    if not partial:
        # Each sub-env's info built at once: the common case, every key set.
        return [dict(zip(keys, row, strict=True)) for row in zip(*columns, strict=True)] or [
            {} for _ in range(num_envs)
        ]
    split: list[dict[str, Any]] = [{} for _ in range(num_envs)]
    for key, items, kept_by in zip(keys, columns, masks, strict=True):
        for info, kept, item in zip(split, kept_by, items, strict=False):
            if kept:
                info[key] = item
    return split


def _items(value: Any, num_envs: int) -> Sequence[Any]:
    """The item of a batched info value for each sub-env (the value itself where not batched)."""
    # Arrays first: isinstance(value, Mapping) is an ABC check, slow on an array.
    # Iterating an array gives the numpy scalars (or rows) indexing would.
    if type(value) is np.ndarray and value.shape[:1] == (num_envs,):
        return list(value.flat) if value.ndim == 1 else list(value)
    if isinstance(value, (np.ndarray, list, tuple)):
        items = list(itertools.islice(value, num_envs))
        return items + [value] * (num_envs - len(items))  # not batched for these
    if isinstance(value, Mapping):
        return sub_env_infos(value, num_envs)
    return [value] * num_envs  # not batched: the same for every sub-env
