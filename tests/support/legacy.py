"""Recordings in the layout of format 1: a folder of one file per episode."""

from __future__ import annotations

from pathlib import Path

from gym_goldens.format.lines import iter_lines, split_episodes


def split_into_episode_files(
    trajectory: Path, folder: Path, *, version: bytes | None = None
) -> list[Path]:
    """Write the episodes of a trajectory file as ``episode_NNNNN.jsonl`` files in ``folder``.

    Args:
        trajectory: A ``trajectory.jsonl`` of format 2.
        folder: Where the episode files go; created if missing.
        version: The version the headers then say, as a format-1 writer
            left them (such as ``b"1.1"``); None keeps every byte, so the
            files concatenate back into ``trajectory``.

    Returns:
        The episode files, in episode order.
    """
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for index, lines in enumerate(split_episodes(iter_lines(trajectory))):
        data = b"".join(line + b"\n" for _, line in lines)
        if version is not None:
            data = data.replace(b'"version":"2.0"', b'"version":"%s"' % version, 1)
        file = folder / f"episode_{index:05d}.jsonl"
        file.write_bytes(data)
        files.append(file)
    return files


def write_format_1(recording: Path, folder: Path) -> Path:
    """Write the episodes of a format-2 recording folder as a new folder of format 1.1."""
    folder.mkdir(parents=True)
    split_into_episode_files(recording / "trajectory.jsonl", folder, version=b"1.1")
    return folder
