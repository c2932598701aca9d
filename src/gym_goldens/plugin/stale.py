"""Stale goldens: goldens that no test of a complete run used.

Only the goldens of the test files collected in the session are looked at
(``<goldens_dir>/<test file>/...``), so running one folder of tests never
calls the goldens of another folder stale. And only a complete run gives a
verdict: when tests were deselected (``-k``, ``-m``, ``--lf``, ``--deselect``,
``--sw``), picked by node id, stopped early, or when anything failed, some
goldens may simply not have been reached, so nothing is called stale.

What a session saw (:class:`gym_goldens.plugin.session.StaleTracker`) is fed
from test reports and, under pytest-xdist, from what each worker sends back
when it finishes, so the verdict is the same with or without ``-n``. This
module, which gives the verdict and prunes, is loaded only at the end of a
session that looks for stale goldens.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from gym_goldens.format.files import is_dead_leftover
from gym_goldens.format.layout import (
    golden_file_dir,
    golden_path_dir,
    golden_test_dir,
    is_recording_file_name,
    is_sub_env_dir_name,
    safe_segment,
)

__all__ = ["find_stale", "prune", "stale_goldens"]


def stale_goldens(
    goldens_dir: Path,
    *,
    test_files: Iterable[str],
    dirs: Iterable[str] = (),
    rootdir: Path | None = None,
    used: Iterable[str],
    protected: Iterable[str],
    skipped: Iterable[str],
) -> list[str]:
    """The golden folders of the collected test files that no test used.

    And those of deleted test files: in the goldens folder of a folder of the
    test tree that was collected whole, a folder that no file or folder of
    the tree maps to.

    Args:
        goldens_dir: The goldens root.
        test_files: The collected test files (the file part of node ids).
        dirs: The folders of the test tree collected whole, relative to
            ``rootdir``.
        rootdir: The root of the test tree, where ``dirs`` are.
        used: The golden folders tests compared or updated, relative to
            ``goldens_dir``.
        protected: Golden folders under which nothing is stale: the plain
            golden folders of tests that keep variants (which hold the
            variants of other machines and versions).
        skipped: The golden node ids of tests that were skipped or xfailed:
            their goldens were not reached, they are not stale.
    """
    file_dirs = {
        golden_file_dir(goldens_dir, file).relative_to(goldens_dir).as_posix()
        for file in test_files
    }
    if rootdir is not None:
        file_dirs |= _orphans(goldens_dir, rootdir, dirs)
    skipped_dirs = {
        golden_test_dir(goldens_dir, nodeid).relative_to(goldens_dir).as_posix()
        for nodeid in skipped
    }
    return find_stale(goldens_dir, file_dirs, used, {*protected, *skipped_dirs})


def _orphans(goldens_dir: Path, rootdir: Path, dirs: Iterable[str]) -> set[str]:
    """The golden folders, in those of ``dirs``, that no entry of the test tree maps to.

    A file ``test_x.py`` maps to ``test_x``, a folder to its own name, each
    made safe as golden paths are (:func:`~gym_goldens.format.layout.safe_segment`).
    """
    found: set[str] = set()
    for relative in dirs:
        folder = golden_path_dir(goldens_dir, relative)
        source = rootdir / relative
        if folder.is_symlink() or not folder.is_dir() or not source.is_dir():
            continue
        mapped = {
            safe_segment(entry.name[:-3] if entry.name.endswith(".py") else entry.name)
            for entry in source.iterdir()
        }
        for entry in folder.iterdir():
            if entry.is_dir() and not entry.is_symlink() and entry.name not in mapped:
                found.add(entry.relative_to(goldens_dir).as_posix())
    return found


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
    for entry in folder.iterdir():
        name = entry.name
        if (is_recording_file_name(name) or is_dead_leftover(name)) and (
            entry.is_symlink() or not entry.is_dir()
        ):
            entry.unlink(missing_ok=True)


def _remove_empty_folders(folder: Path, root: Path) -> None:
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return  # not empty
        folder = folder.parent
