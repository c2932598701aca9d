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

import os
from pathlib import Path
from typing import Any, Generic, SupportsFloat, TypeVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.codec import ArraySummary, TaggedValue
from gym_goldens.format.reader import read_recording

__all__ = ["ReplayActions", "decode_action"]

ObsType = TypeVar("ObsType")
ActType = TypeVar("ActType")

_NO_HEADER: Any = object()


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

    Raises:
        GoldenFormatError: The recording cannot be read, or holds an action
            that cannot be replayed (stored as an array summary).

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

    def __init__(self, env: gym.Env[ObsType, ActType], recording: str | os.PathLike[str]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, recording=str(recording))
        gym.Wrapper.__init__(self, env)
        self.recording = Path(recording)
        self._episodes: list[tuple[Any, list[Any]]] = []
        for episode in read_recording(self.recording):
            reset = _NO_HEADER if episode.header is None else episode.header.get("reset") or {}
            actions = []
            # Formats 1.1 and later keep numpy types in "dtypes", written where they change:
            # an action without one was a plain Python value and is replayed as one.
            typed = episode.header is None or "dtypes" not in (episode.records or [{}])[0]
            for record in episode.steps:
                if "dtypes" in record:
                    typed = "action" in record["dtypes"]
                action = decode_action(
                    record.get("action"),
                    env.action_space,
                    episode.path,
                    record["t"],
                    episode=episode.index,
                )
                if not typed and isinstance(action, np.generic):
                    action = action.item()
                actions.append(action)
            self._episodes.append((reset, actions))
        self._episode = -1
        self._t = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsType, dict[str, Any]]:
        """Reset with the seed and options of the recording's next episode."""
        self._episode += 1
        self._t = 0
        if self._episode < len(self._episodes):
            reset = self._episodes[self._episode][0]
            if reset is not _NO_HEADER:
                seed, options = reset.get("seed"), reset.get("options")
        return self.env.reset(seed=seed, options=options)

    def step(self, action: ActType) -> tuple[ObsType, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step with the recording's action at this step."""
        if 0 <= self._episode < len(self._episodes):
            actions = self._episodes[self._episode][1]
            if self._t < len(actions):
                action = actions[self._t]
        self._t += 1
        return self.env.step(action)


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
    if isinstance(space, spaces.Tuple) and isinstance(value, list):
        return tuple(
            decode_action(v, s, path, t, episode=episode)
            for v, s in zip(value, space.spaces, strict=False)
        )
    if isinstance(space, spaces.Dict) and isinstance(value, dict):
        return {
            key: decode_action(value[key], sub, path, t, episode=episode)
            for key, sub in space.spaces.items()
            if key in value
        }
    if isinstance(space, spaces.OneOf) and isinstance(value, list) and len(value) == 2:
        index = int(value[0])
        return (
            np.int64(index),
            decode_action(value[1], space.spaces[index], path, t, episode=episode),
        )
    if isinstance(space, spaces.Sequence) and isinstance(value, list):
        items = [decode_action(v, space.feature_space, path, t, episode=episode) for v in value]
        return np.asarray(items) if space.stack else tuple(items)
    if isinstance(space, spaces.Graph) and isinstance(value, list) and len(value) == 3:
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
    return value
