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

import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path

from gym_goldens.errors import GoldenFormatError, GoldenWriteError, UnsafeGoldenPathError
from gym_goldens.format.files import is_dead_leftover, remove_frames
from gym_goldens.format.layout import (
    golden_file_dir,
    golden_path_dir,
    golden_test_dir,
    is_recording_file_name,
    safe_segment,
    sub_env_index,
)
from gym_goldens.format.lock import golden_lock
from gym_goldens.format.paths import (
    ensure_inside,
    is_sub_env_folder,
    scan_folder,
    symlink_error,
)

__all__ = ["Found", "Refusal", "find_stale", "prune", "stale_goldens"]

Refusal = GoldenFormatError | UnsafeGoldenPathError
"""Why a folder was not looked into or not pruned: an entry in the way, or a symlink met."""


@dataclasses.dataclass(frozen=True)
class Found:
    """Golden folders found (stale, or pruned), and what was not looked into.

    Attributes:
        goldens: Golden folders, as POSIX paths relative to the goldens dir, sorted.
        refused: Why parts of the goldens dir were not looked into or not
            pruned: a symlink met (never followed), or an entry in the way.
    """

    goldens: list[str] = dataclasses.field(default_factory=list)
    refused: list[Refusal] = dataclasses.field(default_factory=list)


def stale_goldens(
    goldens_dir: Path,
    *,
    test_files: Iterable[str],
    dirs: Iterable[str] = (),
    rootdir: Path | None = None,
    used: Iterable[str],
    protected: Iterable[str],
    skipped: Iterable[str],
) -> Found:
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
        skipped: The golden node ids of tests that were skipped or xfailed,
            or that ``registered_envs`` left out on this machine: their
            goldens were not reached, they are not stale.
    """
    root = goldens_dir.resolve()
    file_dirs = {golden_file_dir(root, file).relative_to(root).as_posix() for file in test_files}
    refused: list[Refusal] = []
    if rootdir is not None:
        file_dirs |= _orphans(root, rootdir, dirs, refused)
    skipped_dirs = {
        golden_test_dir(root, nodeid).relative_to(root).as_posix() for nodeid in skipped
    }
    found = find_stale(root, file_dirs, used, {*protected, *skipped_dirs})
    # A link on the way to several folders looked at is named once.
    unique = {error.path: error for error in [*refused, *found.refused]}
    return Found(found.goldens, list(unique.values()))


def _orphans(root: Path, rootdir: Path, dirs: Iterable[str], refused: list[Refusal]) -> set[str]:
    """The golden folders, in those of ``dirs``, that no entry of the test tree maps to.

    A file ``test_x.py`` maps to ``test_x``, a folder to its own name, each
    made safe as golden paths are (:func:`~gym_goldens.format.layout.safe_segment`).
    """
    found: set[str] = set()
    for relative in dirs:
        folder = golden_path_dir(root, relative)
        source = rootdir / relative
        try:
            ensure_inside(root, folder)
        except (GoldenFormatError, UnsafeGoldenPathError) as error:
            refused.append(error)
            continue
        if not folder.is_dir() or not source.is_dir():
            continue
        mapped = {
            safe_segment(entry.name[:-3] if entry.name.endswith(".py") else entry.name)
            for entry in source.iterdir()
        }
        for entry in folder.iterdir():
            if entry.name in mapped or not entry.is_dir():
                continue
            if entry.is_symlink():
                refused.append(symlink_error(entry))  # a folder beyond it is not looked into
            else:
                found.add(entry.relative_to(root).as_posix())
    return found


def find_stale(
    goldens_dir: Path, file_dirs: Iterable[str], used: Iterable[str], protected: Iterable[str]
) -> Found:
    """Golden folders under ``file_dirs`` that are neither used nor protected.

    A golden folder is one that holds a recording file (``trajectory.jsonl``
    or ``trajectory.jsonl.gz``, or the episode files of format 1). The
    sub-env folders of a vector golden belong to the golden folder above
    them: a folder is one when its recording's header says so (a recording
    may well be named ``env_0``), or when the folder above it is a golden in
    use. No symlink below ``goldens_dir`` is followed: each one met is
    refused, named, and what lies beyond it is not looked at.

    Returns:
        Relative POSIX paths, sorted, and the symlinks met.
    """
    root = goldens_dir.resolve()
    used_set = set(used)
    protected_prefixes = tuple(f"{p}/" for p in protected)
    found: set[str] = set()
    refused: list[Refusal] = []
    for file_dir in sorted(set(file_dirs)):
        folder = root / file_dir
        try:
            ensure_inside(root, folder)
        except (GoldenFormatError, UnsafeGoldenPathError) as error:
            refused.append(error)
            continue
        for here, names in _walk(folder, refused):
            if not any(is_recording_file_name(name) for name in names):
                continue
            relative = _golden_of(here, root, used_set).relative_to(root).as_posix()
            if relative not in used_set and not f"{relative}/".startswith(protected_prefixes):
                found.add(relative)
    return Found(sorted(found), refused)


def _walk(folder: Path, refused: list[Refusal]) -> Iterable[tuple[Path, list[str]]]:
    """``(folder, file names)`` under ``folder``, refusing the symlinks that matter on the way."""
    for current, dirs, names in os.walk(folder):
        here = Path(current)
        for name in [*dirs, *names]:
            path = here / name
            if (name in dirs or is_recording_file_name(name)) and path.is_symlink():
                refused.append(symlink_error(path))
        yield here, [name for name in names if not (here / name).is_symlink()]


def _golden_of(folder: Path, root: Path, used: set[str]) -> Path:
    """The golden a folder holding a recording file belongs to: itself, or its vector golden."""
    parent = folder.parent
    if sub_env_index(folder.name) is None or parent == root:
        return folder
    if parent.relative_to(root).as_posix() in used or is_sub_env_folder(folder):
        return parent
    return folder


def prune(goldens_dir: Path, stale: Iterable[str]) -> Found:
    """Delete stale golden folders: their recording files, then empty folders.

    Recording files of both layouts go (``trajectory.jsonl(.gz)`` and the
    episode files of format 1), with their frames, and so do the folders of its sub-envs (told
    as :func:`find_stale` tells them) and temporary files left by an
    interrupted update. Other files in a stale folder are kept, and so is the
    folder then. A golden on the way to which, or in which, a symlink stands
    is not pruned: it is refused, naming the link. Each golden is pruned
    holding its update lock.

    Returns:
        The folders whose recording files were deleted, and those refused.
    """
    root = goldens_dir.resolve()
    pruned: list[str] = []
    refused: list[Refusal] = []
    for relative in stale:
        folder = root / relative
        try:
            ensure_inside(root, folder)
            entries = scan_folder(folder)
            if not entries.exists:
                continue
            sub_envs = [scan_folder(sub) for _, sub in entries.sub_envs if is_sub_env_folder(sub)]
            with golden_lock(folder):
                for removed in [entries, *sub_envs]:
                    _remove_recording_files(removed.folder, removed.files)
                    if removed is not entries and not any(removed.folder.iterdir()):
                        removed.folder.rmdir()
        except (GoldenFormatError, UnsafeGoldenPathError, OSError) as error:
            refused.append(_refusal(error, folder))
            continue
        pruned.append(relative)
        _remove_empty_folders(folder, root)
    return Found(pruned, refused)


def _refusal(error: Refusal | OSError, folder: Path) -> Refusal:
    """The reason a golden was not pruned, as the error of a file."""
    if isinstance(error, (GoldenFormatError, UnsafeGoldenPathError)):
        return error
    if isinstance(error, GoldenWriteError):
        return GoldenFormatError(error.path, error.reason)
    return GoldenFormatError(error.filename or folder, error.strerror or str(error))


def _remove_recording_files(folder: Path, files: Iterable[Path]) -> None:
    for path in files:
        path.unlink(missing_ok=True)
    remove_frames(folder, keep={})
    for entry in folder.iterdir():
        # Never a folder: the names are those of files.
        if is_dead_leftover(entry.name) and (entry.is_symlink() or not entry.is_dir()):
            entry.unlink(missing_ok=True)


def _remove_empty_folders(folder: Path, root: Path) -> None:
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return  # not empty
        folder = folder.parent
