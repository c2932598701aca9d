"""Replay: drive an env with the actions and reset arguments of a recording.

``record_trajectory(env, replay=True)`` checks a golden without the test's
policy: every ``reset`` takes the seed and options from the golden episode's
header, and every ``step`` takes the golden's action, decoded back to the
action space's type and dtype. If the recording still differs, the dynamics
changed, not the policy.

Past the end of the golden (more episodes or steps than it has) the test's
own arguments pass through, and the comparison reports the extra records.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import reprlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Generic, SupportsFloat, TypeVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.codec import ArraySummary, TaggedValue
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.format.lines import iter_episodes
from gym_goldens.format.reader import iter_records, recording_files

__all__ = [
    "GoldenEpisode",
    "GoldenEpisodes",
    "GoldenStep",
    "ReplayActions",
    "bad_reset",
    "decode_action",
    "env_failed",
    "env_said",
    "shown",
]

ObsType = TypeVar("ObsType")
ActType = TypeVar("ActType")

_NO_HEADER: Any = object()
# Values from the golden and errors from the env, shown short: repr escapes
# what a terminal would act on, and reprlib bounds length and depth.
_SHOWN: Final = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = 120
_FIX: Final = (
    "the golden does not fit the env (or the env changed): delete the golden's folder and "
    "record it again with pytest --update-goldens; if the golden's value is one the env "
    "takes, run the test without replay=True to see the env's own traceback"
)


@dataclasses.dataclass(frozen=True)
class GoldenStep:
    """An action of the golden (a multi-agent env's: its actions by agent), and where it is."""

    action: Any  # decoded to the action space's type
    recorded: Any  # as read from the file, for messages
    line: int
    t: int


@dataclasses.dataclass(frozen=True)
class GoldenEpisode:
    """What the golden's episode gives the env: its reset arguments and actions."""

    path: Path
    line: int  # of the header, which holds the reset arguments
    reset: Any  # the header's "reset", or _NO_HEADER
    steps: list[GoldenStep]


class GoldenEpisodes:
    """A golden's episodes, read one a reset: the one way replays read their golden.

    The golden is read through once, keeping nothing, so that one that does
    not fit is refused when the replay is made, on the test's line; then
    again, one episode a :meth:`next`: a golden of millions of episodes costs
    no more memory than one of one.

    Args:
        recording: A recording folder or its trajectory file.
        read: Reads an episode (its file, its lines, its number), raising
            :class:`~gym_goldens.errors.GoldenFormatError` where it does not fit.
        max_decompressed_size: What the recording, when compressed, may
            expand to when read, in bytes.
    """

    def __init__(
        self,
        recording: Path,
        read: Callable[[Path, Any, int], GoldenEpisode],
        max_decompressed_size: int,
    ) -> None:
        __tracebackhide__ = True
        files = recording_files(recording)
        for index, (path, lines) in enumerate(
            iter_episodes(files, max_decompressed_size=max_decompressed_size)
        ):
            read(path, lines, index)
        self._reader = enumerate(iter_episodes(files, max_decompressed_size=max_decompressed_size))
        self._read = read

    def next(self) -> GoldenEpisode | None:
        """The golden's next episode, read now; None past its last."""
        __tracebackhide__ = True
        item = next(self._reader, None)
        if item is None:
            return None
        index, (path, lines) = item
        return self._read(path, lines, index)


class ReplayActions(
    gym.Wrapper[ObsType, ActType, ObsType, ActType],
    gym.utils.RecordConstructorArgs,
    Generic[ObsType, ActType],
):
    """Replace the actions and reset arguments given to an env by a recording's.

    Put it outside a :class:`~gym_goldens.record.single.RecordTrajectory`, so that
    the replayed actions are the ones recorded.

    Args:
        env: The env to drive.
        recording: A recording folder (a golden) or its trajectory file; its
            episodes are replayed in order, one per ``reset()``.
        max_decompressed_size: What the recording, when compressed, may
            expand to when read, in bytes.

    Raises:
        GoldenFormatError: The recording cannot be read, or holds an action
            that cannot be replayed (stored as an array summary, or not of
            the action space). When the env raises on a seed, options or
            action of the recording, ``reset`` and ``step`` raise it too,
            naming the file and line it came from.

    Example:
        >>> import gymnasium as gym, tempfile
        >>> from gym_goldens import RecordTrajectory, rollout
        >>> golden = tempfile.mkdtemp()
        >>> recorder = RecordTrajectory(gym.make("CartPole-v1"), golden)
        >>> _ = rollout(recorder, seed=0, steps=10); recorder.close()
        >>> env = ReplayActions(gym.make("CartPole-v1"), golden)
        >>> _ = env.reset(seed=123)  # replays seed 0
        >>> _, _, _, _, _ = env.step(0)  # replays the golden's first action
    """

    def __init__(
        self,
        env: gym.Env[ObsType, ActType],
        recording: str | os.PathLike[str],
        *,
        max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    ) -> None:
        __tracebackhide__ = True  # a golden that does not fit: the test's line, not ours
        gym.utils.RecordConstructorArgs.__init__(self, recording=str(recording))
        gym.Wrapper.__init__(self, env)
        self.recording = Path(recording)
        # A partial, not a lambda: no frame of ours in the traceback of a golden that does not fit.
        read = functools.partial(_read_episode, space=env.action_space)
        self._golden = GoldenEpisodes(self.recording, read, max_decompressed_size)
        self._current: GoldenEpisode | None = None
        self._episode = -1
        self._t = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsType, dict[str, Any]]:
        """Reset with the seed and options of the recording's next episode."""
        __tracebackhide__ = True
        self._episode += 1
        self._t = 0
        self._current = episode = self._golden.next()
        if episode is None or episode.reset is _NO_HEADER:
            return self.env.reset(seed=seed, options=options)
        seed, options = episode.reset.get("seed"), episode.reset.get("options")
        try:
            return self.env.reset(seed=seed, options=options)
        except Exception as error:
            raise env_failed(
                episode.path,
                episode.line,
                f"was reset with the golden's seed and options of episode {self._episode} "
                f"(seed {shown(seed)}, options {shown(options)})",
                error,
            ) from None

    def step(self, action: ActType) -> tuple[ObsType, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step with the recording's action at this step."""
        __tracebackhide__ = True
        episode, replayed = self._current, None
        if episode is not None and self._t < len(episode.steps):
            replayed = episode.steps[self._t]
        self._t += 1
        if episode is None or replayed is None:
            return self.env.step(action)
        try:
            return self.env.step(replayed.action)
        except Exception as error:
            raise env_failed(
                episode.path,
                replayed.line,
                f"replayed the golden's action of episode {self._episode}, step t={replayed.t} "
                f"({shown(replayed.recorded)})",
                error,
            ) from None


def _read_episode(path: Path, lines: Any, index: int, space: gym.Space[Any]) -> GoldenEpisode:
    """The reset arguments and decoded actions of one episode of ``path``."""
    __tracebackhide__ = True
    header: dict[str, Any] | None = None
    first = 0
    first_record: dict[str, Any] | None = None
    steps: list[GoldenStep] = []
    typed = True
    for number, record in iter_records(path, lines):
        first = first or number
        event = record["event"]
        if event == "header":
            header = record
            continue
        if first_record is None:
            first_record = record
            # Formats 1.1 and later keep numpy types in "dtypes", written where they
            # change: an action without one was a plain Python value and is replayed as one.
            typed = header is None or "dtypes" not in record
        if event != "step":
            continue
        if "dtypes" in record:
            typed = "action" in record["dtypes"]
        recorded = record.get("action")
        t = record["t"]
        try:
            action = decode_action(recorded, space, path, t, episode=index)
        except GoldenFormatError as error:
            raise GoldenFormatError(path, error.reason, line=number) from None
        except (ValueError, TypeError, OverflowError, IndexError, KeyError) as error:
            raise GoldenFormatError(
                path,
                f"the golden's action of episode {index}, step t={t} ({shown(recorded)}) "
                f"does not fit the env's action space {shown(space)}: "
                f"{type(error).__name__}: {env_said(error)}",
                line=number,
            ) from None
        if not typed and isinstance(action, np.generic):
            action = action.item()
        steps.append(GoldenStep(action, recorded, number, t))
    reset = _NO_HEADER if header is None else header.get("reset") or {}
    if not isinstance(reset, dict) and reset is not _NO_HEADER:
        raise bad_reset(path, first, reset)
    return GoldenEpisode(path, first or 1, reset, steps)


def shown(value: object) -> str:
    """A value from the golden or the env, for a message: short, and escaped by ``repr``."""
    return _SHOWN.repr(value)


def env_said(error: BaseException) -> str:
    """The first line of an error's message, short and escaped (the env's words, quoted)."""
    text = str(error).strip().partition("\n")[0]
    return shown(text) if text else "(no message)"


def env_failed(path: Path, line: int, doing: str, error: BaseException) -> GoldenFormatError:
    """The error of an env that raised on what the golden gave it, and the fix.

    Args:
        path: The golden file.
        line: The line of what the env was given.
        doing: What the env did, after ``when it``: ``replayed the golden's action of ...``.
        error: What it raised.
    """
    return GoldenFormatError(
        path,
        f"the env raised {type(error).__name__} when it {doing}: {env_said(error)}; {_FIX}",
        line=line,
    )


def bad_reset(path: Path, line: int, reset: object) -> GoldenFormatError:
    """The error of a header whose ``reset`` is no object of seed and options."""
    return GoldenFormatError(
        path,
        f'expected the header\'s "reset" to be an object of seed and options, found {shown(reset)}',
        line=line,
    )


def decode_action(
    value: Any, space: gym.Space[Any], path: Path, t: int, *, episode: int | None = None
) -> Any:
    """Turn a recorded action back into a value of ``space``.

    Box, MultiDiscrete and MultiBinary actions become arrays of the space's
    dtype and shape, Discrete ones a scalar of its dtype; Tuple, Dict, Text,
    Sequence, OneOf and Graph are rebuilt from their parts.

    Args:
        value: The action as read from the recording file ``path``.
        space: The env's action space.
        path: The recording file, for the error message.
        t: The step of the action, likewise.
        episode: The episode of the step in the file, likewise.

    Raises:
        GoldenFormatError: The action was stored as an array summary, which
            holds too little to replay.
    """
    if isinstance(value, ArraySummary):
        where = f"step t={t}" if episode is None else f"episode {episode}, step t={t}"
        raise GoldenFormatError(
            path,
            f"the action of {where} is stored as an array summary, which cannot be replayed; "
            "record with RecordTrajectory(..., max_array_size=None) to keep actions in full",
        )
    if isinstance(value, TaggedValue) or value is None:
        return value
    if isinstance(space, spaces.Discrete):
        return space.dtype.type(value) if space.dtype is not None else value
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        return np.asarray(value, dtype=space.dtype).reshape(space.shape)
    return _decode_parts(value, space, lambda v, s: decode_action(v, s, path, t, episode=episode))


def _decode_parts(value: Any, space: gym.Space[Any], decode: Callable[[Any, Any], Any]) -> Any:
    """A value of a space made of other spaces, each part turned back by ``decode``."""
    if isinstance(space, spaces.Tuple) and isinstance(value, list):
        return tuple(decode(v, s) for v, s in zip(value, space.spaces, strict=False))
    if isinstance(space, spaces.Dict) and isinstance(value, dict):
        return {key: decode(value[key], sub) for key, sub in space.spaces.items() if key in value}
    if isinstance(space, spaces.OneOf) and isinstance(value, list) and len(value) == 2:
        index = int(value[0])
        return (np.int64(index), decode(value[1], space.spaces[index]))
    if isinstance(space, spaces.Sequence) and isinstance(value, list):
        items = [decode(v, space.feature_space) for v in value]
        return np.asarray(items) if space.stack else tuple(items)
    if isinstance(space, spaces.Graph) and isinstance(value, list) and len(value) == 3:
        return _graph_instance(value, space)
    return value


def _graph_instance(value: list[Any], space: spaces.Graph) -> spaces.GraphInstance:
    """A recorded ``[nodes, edges, edge_links]`` as the Graph space's instance."""
    nodes, edges, links = value
    edge_space = space.edge_space
    edge_values = None
    if edges is not None and edge_space is not None:
        edge_values = np.asarray(edges, dtype=edge_space.dtype)
    return spaces.GraphInstance(
        np.asarray(nodes, dtype=space.node_space.dtype),
        edge_values,
        np.asarray(links, dtype=np.int64),
    )
