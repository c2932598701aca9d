"""The floor under the recorder's ratios: the least a Python recorder of this format does.

:class:`FloorLines` builds a step's record, encodes it with one
``orjson.dumps`` and appends the line to a buffer; :class:`FloorRecorder`
and :class:`FloorVectorRecorder` put an env and a vector env under it.
``benchmarks/run.py`` measures our recorder against it, and its golden suite
rows import it into the suite's tests (the suite's floor: the same lines
written to one file under ``tmp_path`` at the end of a test).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import orjson

try:
    from gym_goldens.format.codec import DEFAULT_MAX_ARRAY_SIZE, ArraySummary, Encoder
except ImportError:  # a checkout from before the layered package, to compare with
    from gym_goldens.codec import (  # type: ignore[no-redef,import-not-found]
        DEFAULT_MAX_ARRAY_SIZE,
        ArraySummary,
        Encoder,
    )

__all__ = [
    "FLOOR_BUFFER_SIZE",
    "FLOOR_DUMPS_OPTIONS",
    "FloorLines",
    "FloorRecorder",
    "FloorVectorRecorder",
]


# The options the recorder's fast path dumps a step with (sorted keys, numpy
# values by orjson); a checkout from before the layered package has no
# dumps_options, and wrote with these.
FLOOR_DUMPS_OPTIONS = (
    getattr(Encoder(), "dumps_options", orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_SORT_KEYS)
    | orjson.OPT_APPEND_NEWLINE
)
# Lines are dropped (or written to the file, if any) at this size, so that
# memory stays flat as the recorder's does.
FLOOR_BUFFER_SIZE = 4 * 1024 * 1024


class FloorLines:
    """The floor under our ratio: the least a Python recorder of this format does at a step.

    :meth:`add` builds the step record, encodes it with one ``orjson.dumps``
    (an observation above the default ``max_array_size`` as the summary that
    the format keeps instead) and appends the line to a buffer. Nothing
    records resets or headers, works out numpy types, checks a line for NaN
    or None, or writes a file per episode: what our recorder costs above the
    floor is what those promises of the format cost.

    Args:
        path: Where the lines go, in one write when the buffer fills and at
            :meth:`close`; without it they are dropped.
    """

    def __init__(self, path: Path | None = None) -> None:
        self._buffer = bytearray()
        self._path = path
        if path is not None:
            path.write_bytes(b"")

    def add(  # noqa: PLR0917
        self, t: int, action: Any, obs: Any, reward: Any, terminated: Any, truncated: Any, info: Any
    ) -> None:
        if type(obs) is np.ndarray and obs.size > DEFAULT_MAX_ARRAY_SIZE:
            obs = {"$array": ArraySummary.of(obs).to_json()}
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
        self._buffer += orjson.dumps(record, option=FLOOR_DUMPS_OPTIONS)
        if len(self._buffer) >= FLOOR_BUFFER_SIZE:
            self.close()

    def close(self) -> None:
        """Write the buffered lines to the file, if any, and empty the buffer."""
        if self._path is not None:
            with self._path.open("ab") as file:
                file.write(self._buffer)
        self._buffer = bytearray()


class FloorRecorder(gym.Wrapper[Any, Any, Any, Any]):
    """A single env under :class:`FloorLines`, its lines dropped or written to ``path``."""

    def __init__(self, env: gym.Env[Any, Any], path: Path | None = None) -> None:
        super().__init__(env)
        self._lines = FloorLines(path)
        self._t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        self._t = 0
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        result = self.env.step(action)
        obs, reward, terminated, truncated, info = result
        self._t += 1
        self._lines.add(self._t, action, obs, reward, terminated, truncated, info)
        return result

    def close(self) -> None:
        self._lines.close()
        super().close()


class FloorVectorRecorder(gym.vector.VectorWrapper):
    """A vector env under a :class:`FloorLines` per sub-env; infos split by key, masks dropped."""

    def __init__(self, env: gym.vector.VectorEnv[Any, Any, Any]) -> None:
        super().__init__(env)
        self._lines = [FloorLines() for _ in range(env.num_envs)]
        self._t = 0

    def step(self, actions: Any) -> Any:
        result = self.env.step(actions)
        obs, rewards, terminations, truncations, infos = result
        self._t += 1
        for index, lines in enumerate(self._lines):
            info = {key: value[index] for key, value in infos.items() if key[:1] != "_"}
            lines.add(
                self._t,
                actions[index],
                obs[index],
                rewards[index],
                terminations[index],
                truncations[index],
                info,
            )
        return result
