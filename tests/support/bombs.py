"""Episode bombs: recordings of many header-only episodes, as a pull request could make them.

Each episode is one header line (the header of a real CartPole recording),
so a few kB of gzip hold millions of them. The tests use a few thousand and
check that what a reader keeps does not grow with their number;
``benchmarks/hostile.py`` measures millions.
"""

from __future__ import annotations

import gzip
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.recordings import record_alternating


def header_line(folder: Path) -> bytes:
    """The header line of a real recording (recorded into ``folder``), with its newline."""
    recording = record_alternating(folder, steps=2)
    with (recording / "trajectory.jsonl").open("rb") as handle:
        return handle.readline()


def episode_bomb(folder: Path, header: bytes, episodes: int, *, compress: bool = False) -> Path:
    """A recording folder of ``episodes`` episodes, each ``header`` alone."""
    folder.mkdir(parents=True)
    data = header * episodes
    if compress:
        (folder / "trajectory.jsonl.gz").write_bytes(gzip.compress(data, mtime=0))
    else:
        (folder / "trajectory.jsonl").write_bytes(data)
    return folder


def replay_peak(folder: Path, header: bytes, episodes: int, replay: Callable[[Path], Any]) -> int:
    """The peak memory of ``replay(bomb)`` and its first reset, on a bomb of ``episodes``."""
    bomb = episode_bomb(folder / f"bomb{episodes}", header, episodes)
    tracemalloc.start()
    try:
        env = replay(bomb)
        env.reset()
        _, traced = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    env.close()
    return traced
