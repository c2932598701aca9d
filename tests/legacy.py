"""Recordings in the layout of format 1: a folder of one file per episode."""

from __future__ import annotations

from pathlib import Path


def write_format_1(recording: Path, folder: Path) -> Path:
    """Write the episodes of a format-2 recording folder as a folder of format 1.1.

    Each episode (from its header line on) becomes ``episode_NNNNN.jsonl``, its
    header saying version 1.1, as a format-1 writer left them.
    """
    folder.mkdir(parents=True)
    episodes: list[list[bytes]] = []
    for line in (recording / "trajectory.jsonl").read_bytes().splitlines():
        if b'"event":"header"' in line:
            episodes.append([line.replace(b'"version":"2.0"', b'"version":"1.1"')])
        else:
            episodes[-1].append(line)
    for index, lines in enumerate(episodes):
        (folder / f"episode_{index:05d}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return folder
