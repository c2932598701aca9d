"""Envs that misbehave where the audit meets them: importing this module registers them.

- ``Stuck/Sleeps-v0`` sleeps in ``step``, for an hour: only ``--timeout`` ends it.
- ``Stuck/SleepsFresh-v0`` does so in the audit's fresh process only.
- ``Stuck/Garbage-v0`` writes bytes that are not UTF-8 to fd 2 at each reset,
  and is otherwise deterministic.
- ``Stuck/GarbageFails-v0`` does so, then fails in the fresh process.
- ``Stuck/Floods-v0`` writes ``FLOOD_BYTES`` (env var, default 8 MB) to fd 2 in
  the fresh process, then fails.
- ``Stuck/Batch1-v0`` to ``Stuck/Batch6-v0``, a batch for the reused fresh
  process: 3 ends it (``os._exit(5)``) and 5 hangs in it; the others note the
  fresh process's id in the file ``STUCK_PIDS`` (env var) and write a line to fd 2.

The audit's fresh processes import it by name (``tests.audit.stuck_envs``),
as the tests give it in ``import_modules``.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

GARBAGE = b"\xff\xfe bytes that are not UTF-8 \x80\xc3\n"


def in_fresh_process() -> bool:
    """Whether this is the audit's fresh process (``python -c ... SPEC``), not the test's.

    An xdist worker runs as ``python -c`` too, without the spec.
    """
    return sys.argv[0] == "-c" and len(sys.argv) == 2 and '"sys_path"' in sys.argv[1]


class Counter(gym.Env[np.ndarray, np.int64]):
    """Deterministic: the observation counts the steps."""

    observation_space = spaces.Box(0.0, 1000.0, (1,), dtype=np.float32)
    action_space = spaces.Discrete(2)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.t += 1
        return np.full(1, self.t, np.float32), 1.0, False, self.t >= 50, {}


class Sleeps(Counter):
    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self.t == 2:
            time.sleep(3600)
        return super().step(action)


class SleepsFresh(Counter):
    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if in_fresh_process():
            time.sleep(3600)
        return super().step(action)


class Garbage(Counter):
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        os.write(2, GARBAGE)
        return super().reset(seed=seed, options=options)


class GarbageFails(Garbage):
    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if in_fresh_process():
            os.write(2, GARBAGE)
            os._exit(3)
        return super().step(action)


class Floods(Counter):
    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if in_fresh_process():
            line = b"flooding stderr " * 64 + b"\n"
            size = int(os.environ.get("FLOOD_BYTES", str(8 << 20)))
            for _ in range(size // len(line)):
                os.write(2, line)
            os.write(2, b"the last words\n")
            os._exit(4)
        return super().step(action)


class Notes(Counter):
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if in_fresh_process():
            assert self.spec is not None
            os.write(2, f"notes from {self.spec.id}\n".encode())
            with open(os.environ["STUCK_PIDS"], "a") as pids:
                pids.write(f"{self.spec.id} {os.getpid()}\n")
        return super().reset(seed=seed, options=options)


class EndsFresh(Counter):
    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if in_fresh_process():
            os.write(2, b"the end of the fresh process\n")
            os._exit(5)
        return super().step(action)


_BATCH = ["Notes", "Notes", "EndsFresh", "Notes", "SleepsFresh", "Notes"]
for env_id, name in [
    *((f"Stuck/{name}-v0", name) for name in ("Sleeps", "SleepsFresh", "Garbage", "GarbageFails")),
    ("Stuck/Floods-v0", "Floods"),
    *((f"Stuck/Batch{index}-v0", name) for index, name in enumerate(_BATCH, 1)),
]:
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=f"{__name__}:{name}")
