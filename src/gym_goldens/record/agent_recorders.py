"""The recorder and the replay of a PettingZoo env, chosen by its kind (parallel or AEC).

Apart from :mod:`gym_goldens.record.agents`, which tells PettingZoo envs apart
without importing PettingZoo and which the recorders themselves use: the
modules chosen here are imported only when a PettingZoo env is given.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from gym_goldens.record.agents import agent_api

if TYPE_CHECKING:
    from gym_goldens.record.multiagent import RecordAECTrajectory, RecordParallelTrajectory
    from gym_goldens.record.multiagent_replay import ReplayAECActions, ReplayParallelActions

__all__ = ["record_agents", "replay_agents"]


def record_agents(
    env: Any, output_dir: str | os.PathLike[str], **storage: Any
) -> RecordParallelTrajectory | RecordAECTrajectory:
    """The recorder of a PettingZoo env: parallel or AEC, as the env is.

    Args:
        env: A PettingZoo ``ParallelEnv`` or ``AECEnv`` (or a wrapper of one).
        output_dir: Folder of the recording.
        **storage: The recorders' keyword arguments (``max_array_size``, ...).
    """
    from gym_goldens.record import multiagent  # PettingZoo: imported for its envs only

    if agent_api(env) == "aec":
        return multiagent.RecordAECTrajectory(env, output_dir, **storage)
    return multiagent.RecordParallelTrajectory(env, output_dir, **storage)


def replay_agents(
    env: Any, recording: str | os.PathLike[str], *, max_decompressed_size: int
) -> ReplayParallelActions | ReplayAECActions:
    """The replay of a recording's actions for a PettingZoo env: parallel or AEC, as the env is.

    Args:
        env: The env to drive (its recorder, to record the replay).
        recording: A recording folder (a golden) or its trajectory file.
        max_decompressed_size: What the recording may expand to when read, in bytes.
    """
    __tracebackhide__ = True
    from gym_goldens.record import multiagent_replay  # PettingZoo: imported for its envs only

    if agent_api(env) == "aec":
        return multiagent_replay.ReplayAECActions(
            env, recording, max_decompressed_size=max_decompressed_size
        )
    return multiagent_replay.ReplayParallelActions(
        env, recording, max_decompressed_size=max_decompressed_size
    )
