"""The recording wrapper of a single env: one trajectory file per recording.

A recording is the folder ``output_dir`` holding ``trajectory.jsonl``: for each
episode a ``header`` record, a ``reset`` record and one ``step`` record per
step; see ``docs/format.md``. What is written when, and how fast, is the
episode writer's (:mod:`gym_goldens.record.writer`).

Storage options keep goldens of image envs and long rollouts small:
``max_array_size`` (summaries of large arrays, by field), ``compress``
(``trajectory.jsonl.gz``, a gzip member per write) and ``full_every`` (only
every k-th step in full, a digest of the others).

Frames: ``render=True`` calls ``env.render()`` after the reset and after each
step and records the frame in the field ``render`` (``render=k``: at the
reset, every k-th step and the last step of an episode); ``images="frames"``
keeps the image-like arrays of obs and info as frames too. Frames are PNG
files in the recording's ``frames`` folder (see :mod:`gym_goldens.record.frames`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Generic, SupportsFloat, TypeVar

import gymnasium as gym

from gym_goldens.format.codec import DEFAULT_MAX_ARRAY_SIZE, ArraySizeSpec
from gym_goldens.format.header import describe_env
from gym_goldens.format.layout import trajectory_filename
from gym_goldens.record.frames import image_like_or_error
from gym_goldens.record.writer import HeaderLines, Storage

__all__ = ["RecordTrajectory"]

ObsType = TypeVar("ObsType")
ActType = TypeVar("ActType")


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
        versions_of: Distributions whose versions the header records besides
            Python, gymnasium, numpy, this package and the distributions the
            env uses (informational; golden variants use them).
        render: Record the frame of ``env.render()`` in the field ``render``:
            ``True`` after the reset and every step; an int ``k``, after the
            reset, every k-th step and the last step of each episode. The
            env must render ``"rgb_array"`` frames.
        images: ``"summary"`` (the default) keeps image-like arrays of obs
            and info as arrays (summaries when large); ``"frames"`` as PNG
            files. ``render`` frames are always PNG files.

    Raises:
        ValueError: ``render`` is set and the env's ``render_mode`` is not
            ``"rgb_array"``, or ``render`` is not a bool or a positive int.

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
        versions_of: Iterable[str] = (),
        render: bool | int = False,
        images: str = "summary",
    ) -> None:
        if not isinstance(env, gym.Env):
            raise TypeError(
                f"RecordTrajectory expects a gymnasium.Env, got {type(env).__name__}; "
                "wrap the result of gym.make(...), for example "
                'RecordTrajectory(gym.make("CartPole-v1"), dir)'
            )
        storage = Storage(max_array_size, flush_every, compress, full_every, images=images)
        self.render_every = render_every(render, env)
        gym.utils.RecordConstructorArgs.__init__(
            self,
            output_dir=str(output_dir),
            **dataclasses.asdict(storage),
            versions_of=tuple(versions_of),
            render=render,
        )
        gym.Wrapper.__init__(self, env)
        self.output_dir = Path(output_dir)
        self.output_dir.mkdir(parents=True, exist_ok=True)
        self.flush_every = flush_every
        self.compress = compress
        self.full_every = full_every
        encoder = storage.encoder()
        names = tuple(versions_of)
        self._headers = HeaderLines(
            lambda: describe_env(self.env, versions_of=names), storage.header, encoder
        )
        self._writer = storage.writer(self.path, encoder, render=self.render_every is not None)

    @property
    def path(self) -> Path:
        """The trajectory file (written at the end of the first episode)."""
        return self.output_dir / trajectory_filename(compress=self.compress)

    @property
    def episode_count(self) -> int:
        """Episodes started so far."""
        return self._writer.episode_count

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsType, dict[str, Any]]:
        """Reset the env and start a new episode."""
        __tracebackhide__ = True  # a value the recorder refuses: the test's line, not ours
        writer = self._writer
        writer.begin(self._headers.line(seed, options))
        try:
            obs, info = self.env.reset(seed=seed, options=options)
        except BaseException:
            writer.end()
            raise
        if self.render_every is not None:
            writer.render(self._frame())
        writer.reset(obs, info)
        return obs, info

    def step(self, action: ActType) -> tuple[ObsType, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the env and record the step."""
        __tracebackhide__ = True
        writer = self._writer
        if not writer.active:
            raise gym.error.ResetNeeded(
                "RecordTrajectory: call reset() before step(); a recording starts at reset"
            )
        try:
            result = self.env.step(action)
        except BaseException:
            writer.end()
            raise
        obs, reward, terminated, truncated, info = result
        every = self.render_every
        if every is not None and (terminated or truncated or writer.t % every == every - 1):
            writer.render(self._frame())
        writer.step(action, obs, reward, bool(terminated), bool(truncated), info)
        return result

    def _frame(self) -> Any:
        """The frame of ``env.render()``, checked; the recording ends if the env raises."""
        try:
            return image_like_or_error(self.env.render(), self.env)
        except BaseException:
            self._writer.end()
            raise

    def flush(self) -> None:
        """Write what is buffered (and the frames it refers to); recording goes on."""
        self._writer.write_buffer()

    def close(self) -> None:
        """Write what is buffered, close the file, then close the env."""
        __tracebackhide__ = True
        try:
            self._writer.end()
        finally:
            super().close()


def render_every(render: object, env: gym.Env[Any, Any]) -> int | None:
    """The steps between two recorded frames of ``render`` (None: no frames), checked.

    Raises:
        ValueError: ``render`` is not a bool or a positive int, or it is set
            and the env does not render ``"rgb_array"`` frames.
    """
    if render is False:
        return None
    if render is not True and (type(render) is not int or render < 1):
        raise ValueError(
            "render must be True, False or a positive int k (a frame every k steps), "
            f"got {render!r}"
        )
    mode = env.render_mode
    if mode != "rgb_array":
        spec = env.spec
        made = (
            f'gym.make("{spec.id}", render_mode="rgb_array")'
            if spec
            else ('render_mode="rgb_array"')
        )
        raise ValueError(
            f"render={render!r} records the frames of env.render(), which renders "
            f"{'nothing' if mode is None else repr(mode)} here (render_mode={mode!r}); "
            f"make the env with {made}"
        )
    return 1 if render is True else int(render)
