"""Writing goldens: ``--update-goldens`` puts a recording in its golden's place.

Goldens are written atomically (:func:`gym_goldens.format.files.install_recording`):
the recording file goes to a temporary file in its own folder and is renamed
into place, so an interrupted update leaves the golden of a single env either
old or new as a whole, never partial (the golden of a vector env: each
sub-env's file). A golden that already holds the recording is not rewritten,
so its mtime and git status stay.

Golden folders of format 1 (one file per episode, ``episode_00000.jsonl``,
...) still read; updating one writes ``trajectory.jsonl`` and then removes the
episode files.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Final

from gym_goldens.comparison.engine import compare
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.errors import GoldenFormatError, UnsafeGoldenPathError
from gym_goldens.format.files import Installed, install_recording
from gym_goldens.format.header import FORMAT_VERSION
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.format.reader import read_header

__all__ = ["GoldenUpdate", "update_golden"]

GoldenUpdate = Installed
"""What :func:`update_golden` did to one golden folder."""

_EXACT: Final = Tolerance(rtol=0.0, atol=0.0)


def update_golden(
    actual_dir: Path,
    golden_dir: Path,
    *,
    goldens_dir: Path | None = None,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> GoldenUpdate:
    """Make ``golden_dir`` hold the recording of ``actual_dir``.

    A golden whose recorded content is unchanged is left alone: differences
    in informational header fields (versions, platform) alone do not rewrite
    it. A golden of an older format version is rewritten.

    Args:
        actual_dir: The new recording.
        golden_dir: The golden folder to update.
        goldens_dir: The goldens root; when given, nothing is read or written
            unless it lies inside it.
        max_decompressed_size: What the existing golden (compressed) may
            expand to when read; one that expands further is replaced.

    Raises:
        GoldenFormatError: An existing golden entry is in the way (a folder
            where the recording file should be, a file where the golden
            folder should be); it is left as it is.
        UnsafeGoldenPathError: ``golden_dir`` or one of its files resolves
            outside ``goldens_dir``.
    """
    is_current = functools.partial(_is_current, limit=max_decompressed_size)
    return install_recording(actual_dir, golden_dir, is_current=is_current, root=goldens_dir)


def _is_current(target: Path, actual_dir: Path, *, limit: int) -> bool:
    """Whether ``target`` holds the recording of ``actual_dir``, in this format version."""
    try:
        header = read_header(target, max_decompressed_size=limit)
        current = (header or {}).get("version") == FORMAT_VERSION
        return current and compare(target, actual_dir, _EXACT, max_decompressed_size=limit).equal
    except UnsafeGoldenPathError:
        raise
    except GoldenFormatError:
        return False  # an unreadable golden is replaced
