"""Stale goldens: goldens that no test of a complete run used.

Only the goldens of the test files collected in the session are looked at
(``<goldens_dir>/<test file>/...``), so running one folder of tests never
calls the goldens of another folder stale. And only a complete run gives a
verdict: when tests were deselected (``-k``, ``-m``, ``--lf``, ``--deselect``,
``--sw``), picked by node id, stopped early, or when anything failed, some
goldens may simply not have been reached, so nothing is called stale.

The tracker is fed from test reports and, under pytest-xdist, from what each
worker sends back when it finishes, so the verdict is the same with or
without ``-n``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

__all__ = ["StaleTracker", "find_stale", "prune"]

WORKER_OUTPUT_KEY: Final = "gym_goldens"
"""The key of what a pytest-xdist worker sends back in ``workeroutput``."""


@dataclasses.dataclass
class StaleTracker:
    """What a session saw, to tell which goldens no test used.

    Golden folders are kept as POSIX paths relative to the goldens dir, so
    they compare equal across processes.

    Attributes:
        test_files: The collected test files (the file part of node ids);
            their golden folders are looked at.
        used: The golden folders that tests compared or updated.
        protected: Golden folders whose goldens are not stale: those of
            tests that were skipped (just not reached) and the plain golden
            folders of tests that keep variants (which hold the variants
            of other machines and versions).
        deselected: How many tests were deselected.
        partial_reason: Why the run does not cover the collected files, if
            known before the end (for example, tests picked by node id).
    """

    test_files: set[str] = dataclasses.field(default_factory=set)
    used: set[str] = dataclasses.field(default_factory=set)
    protected: set[str] = dataclasses.field(default_factory=set)
    deselected: int = 0
    partial_reason: str | None = None

    def worker_output(self) -> dict[str, Any]:
        """What a pytest-xdist worker sends back (plain, serialisable data)."""
        return {"test_files": sorted(self.test_files), "deselected": self.deselected}

    def merge_worker_output(self, output: dict[str, Any]) -> None:
        """Add what a pytest-xdist worker sent back."""
        self.test_files.update(output.get("test_files", ()))
        self.deselected += int(output.get("deselected", 0))

    def incomplete_reason(self, exitstatus: int) -> str | None:
        """Why no verdict can be given, or None when the run was complete."""
        if exitstatus != 0:
            return "the run did not pass"
        if self.partial_reason:
            return self.partial_reason
        if self.deselected == 1:
            return "1 test was deselected"
        if self.deselected:
            return f"{self.deselected} tests were deselected"
        if not self.test_files:
            return "no test file was collected"
        return None

    def stale(self, goldens_dir: Path) -> list[str]:
        """The golden folders of the collected files that no test used."""
        # Not imported with this module, which loads in every pytest run.
        from gym_goldens.store import golden_file_dir

        file_dirs = {
            golden_file_dir(goldens_dir, file).relative_to(goldens_dir).as_posix()
            for file in self.test_files
        }
        return find_stale(goldens_dir, file_dirs, self.used, self.protected)


def find_stale(
    goldens_dir: Path, file_dirs: Iterable[str], used: Iterable[str], protected: Iterable[str]
) -> list[str]:
    """Golden folders under ``file_dirs`` that are neither used nor protected.

    A golden folder is one that holds a recording file (``trajectory.jsonl``
    or ``trajectory.jsonl.gz``, or the episode files of format 1); the
    ``env_<i>`` folders of a vector golden belong to the golden folder above
    them. Symlinks are not followed, and nothing outside ``goldens_dir`` is
    looked at.

    Returns:
        Relative POSIX paths, sorted.
    """
    from gym_goldens.reader import is_recording_file_name, is_sub_env_dir_name

    root = goldens_dir.resolve()
    used_set = set(used)
    protected_prefixes = tuple(f"{p}/" for p in protected)
    found: list[str] = []
    for file_dir in sorted(set(file_dirs)):
        folder = root / file_dir
        if folder.is_symlink() or not folder.is_dir():
            continue
        for current, _, names in os.walk(folder):
            if not any(is_recording_file_name(name) for name in names):
                continue
            golden = Path(current)
            if is_sub_env_dir_name(golden.name):
                golden = golden.parent
            relative = golden.relative_to(root).as_posix()
            if relative in found or relative in used_set:
                continue
            if f"{relative}/".startswith(protected_prefixes):
                continue
            found.append(relative)
    return sorted(found)


def prune(goldens_dir: Path, stale: Iterable[str]) -> list[str]:
    """Delete stale golden folders: their recording files, then empty folders.

    Recording files of both layouts go (``trajectory.jsonl(.gz)`` and the
    episode files of format 1), and so do temporary files left by an
    interrupted update. Other files in a stale folder are kept, and so is the
    folder then.

    Returns:
        The folders whose recording files were deleted.
    """
    from gym_goldens.reader import is_sub_env_dir_name

    root = goldens_dir.resolve()
    pruned: list[str] = []
    for relative in stale:
        folder = root / relative
        if folder.is_symlink() or not folder.is_dir():
            continue
        _remove_recording_files(folder)
        for entry in folder.iterdir():
            # The sub-env folders of a vector golden go with it.
            if is_sub_env_dir_name(entry.name) and entry.is_dir() and not entry.is_symlink():
                _remove_recording_files(entry)
                if not any(entry.iterdir()):
                    entry.rmdir()
        pruned.append(relative)
        _remove_empty_folders(folder, root)
    return pruned


def _remove_recording_files(folder: Path) -> None:
    from gym_goldens.reader import is_recording_file_name
    from gym_goldens.store import is_leftover_file_name

    for entry in folder.iterdir():
        if (is_recording_file_name(entry.name) or is_leftover_file_name(entry.name)) and (
            entry.is_symlink() or not entry.is_dir()
        ):
            entry.unlink()


def _remove_empty_folders(folder: Path, root: Path) -> None:
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return  # not empty
        folder = folder.parent
