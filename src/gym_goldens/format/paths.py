"""The one path check: no symlink is followed inside our own folders.

The goldens dir arrives in pull requests, and so can the folders the plugin
writes into (``--goldens-artifacts``, ``--goldens-report``): any entry in
them may be a symlink that leads to another golden, or anywhere on the
machine. So below such a root nothing is followed: :func:`ensure_inside`
looks at every path component from the root down (``lstat``, which does not
follow a link) and refuses the first symlink with
:class:`~gym_goldens.errors.UnsafeGoldenPathError`, naming it. The root
itself is the user's choice: the plugin refuses a symlinked goldens,
artifacts or report dir at start-up, and the ``gym-goldens`` command follows
a path typed on its command line, but no link it meets inside one.

A golden folder is resolved once into a :class:`GoldenFolder`: its recording
files in reading order, its frames (the PNG files of its ``frames`` folder)
and the folders of its sub-envs, each checked against the rule, and its
header (read when first asked for). That value is what the comparison, the
update and the choice of a variant are handed: none of them lists the folder
again. Every read of a golden goes through :func:`resolve_golden` (a
recording named by its own path, such as a test's own recording or one typed
on the command line, through :func:`resolve_recording`); the writers and the
pruning of stale goldens look at the entries of a folder through
:func:`scan_folder` (and :func:`scan_frames`), which check them the same way.

What this guarantees, and what it does not: the check looks at the files as
they are when it runs, which is what a checkout holds. A process that swaps
a checked folder for a symlink between the check and the use is not caught;
such a process can write in the goldens dir already. Files that are created
are created exclusively (``O_EXCL``) and renamed into place, and a rename or
a removal acts on a link itself, never on what it points to.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import stat
from pathlib import Path
from typing import Any, Final

from gym_goldens.errors import GoldenFormatError, UnsafeGoldenPathError
from gym_goldens.format.frames import FRAMES_DIR, is_frame_file_name
from gym_goldens.format.layout import is_recording_file_name, sub_env_index
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.format.reader import read_header, read_order, recording_files

__all__ = [
    "GOLDENS_DIR",
    "FolderEntries",
    "GoldenFolder",
    "ensure_inside",
    "find_recording_folders",
    "is_sub_env_folder",
    "resolve_golden",
    "resolve_recording",
    "scan_folder",
    "scan_frames",
    "symlink_error",
]

GOLDENS_DIR: Final = "the goldens dir"
"""How messages name the root of the goldens."""
_RECORDING_DIR: Final = "a recording folder"
"""How messages name a recording folder named by its own path."""

_REPLACE_IT: Final = "replace it with the file or folder itself"


def symlink_error(
    link: Path, within: str = GOLDENS_DIR, fix: str = _REPLACE_IT
) -> UnsafeGoldenPathError:
    """The refusal of a symlink met inside ``within``, naming it and where it points."""
    try:
        target = os.readlink(link)
    except OSError:
        target = "?"
    if not target.isprintable():
        # Any text a pull request chose: quoted and escaped, a newline too, so
        # that it stays on its line and can print no line of its own.
        target = ascii(target)
    return UnsafeGoldenPathError(
        link, f"a symlink (to {target}), which gym-goldens does not follow inside {within}: {fix}"
    )


def ensure_inside(root: Path, path: Path, *, within: str = GOLDENS_DIR) -> Path:
    """Refuse a path that leaves ``root`` or meets a symlink on its way down from it.

    Every component below ``root``, down to ``path`` itself, is looked at
    without following it: the first symlink is refused, as is a file where
    a folder should be. The components that do not exist yet are fine (a
    golden to be created). ``root`` itself is not looked at.

    Returns:
        ``path``, absolute, under ``root`` resolved.

    Raises:
        UnsafeGoldenPathError: ``path`` is not below ``root``, or a component
            on the way is a symlink.
        GoldenFormatError: A component on the way is a file, not a folder.
    """
    __tracebackhide__ = True
    return root.resolve().joinpath(*_walk_down(root, path, within))


def _walk_down(root: Path, path: Path, within: str) -> tuple[str, ...]:
    """The check of :func:`ensure_inside`; the components of ``path`` below ``root``."""
    __tracebackhide__ = True
    parts = _relative(root, path, within).parts
    current = root
    for number, part in enumerate(parts, 1):
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except (FileNotFoundError, NotADirectoryError):
            break  # nothing below a missing folder exists yet
        if stat.S_ISLNK(mode):
            raise symlink_error(current, within)
        if number < len(parts) and not stat.S_ISDIR(mode):
            raise GoldenFormatError(current, "expected a folder, found a file; remove the file")
    return parts


def _relative(root: Path, path: Path, within: str) -> Path:
    try:
        relative = path.relative_to(root)
    except ValueError:
        try:
            relative = Path(os.path.abspath(path)).relative_to(os.path.abspath(root))
        except ValueError:
            relative = Path("..")
    if ".." in relative.parts:
        raise UnsafeGoldenPathError(
            path, f"lies outside {within} {root}; nothing is read or written there"
        )
    return relative


@dataclasses.dataclass(frozen=True)
class FolderEntries:
    """The entries of a folder that a recording is made of, checked: no symlink among them.

    Attributes:
        folder: The folder.
        files: Its entries named as recording files (of either layout, both
            compressions), sorted; each a regular file.
        sub_envs: Its folders named as sub-env folders (``env_<i>``), as
            ``(index, folder)``, sorted by index.
        exists: Whether the folder exists.
        frames: Whether it has an entry named as the folder of frames (see
            :func:`scan_frames`, which looks at it).
    """

    folder: Path
    files: tuple[Path, ...] = ()
    sub_envs: tuple[tuple[int, Path], ...] = ()
    exists: bool = False
    frames: bool = False


def scan_folder(folder: Path, *, within: str = GOLDENS_DIR) -> FolderEntries:
    """The recording files and sub-env folders of ``folder``, none of them a symlink.

    Only the entries with those names are looked at; others are never
    read, written or removed, so they do not matter. ``folder`` itself is
    not looked at here (see :func:`ensure_inside`).

    Raises:
        UnsafeGoldenPathError: One of them is a symlink.
        GoldenFormatError: ``folder`` is a file, or an entry named as a
            recording file is a folder.
    """
    __tracebackhide__ = True
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return FolderEntries(folder)
    except NotADirectoryError:
        raise GoldenFormatError(
            folder, "expected a golden folder, found a file; remove the file"
        ) from None
    files: list[Path] = []
    sub_envs: list[tuple[int, Path]] = []
    frames = False
    for entry in entries:
        frames = frames or entry.name == FRAMES_DIR
        index = sub_env_index(entry.name)
        if index is None and not is_recording_file_name(entry.name):
            continue
        path = Path(entry.path)
        if entry.is_symlink():
            raise symlink_error(path, within)
        is_folder = entry.is_dir(follow_symlinks=False)
        if index is None and is_folder:
            raise GoldenFormatError(
                path, "expected a recording file, found a folder; remove the folder"
            )
        if index is None:
            files.append(path)
        elif is_folder:
            sub_envs.append((index, path))
    return FolderEntries(folder, tuple(sorted(files)), tuple(sorted(sub_envs)), True, frames)


@dataclasses.dataclass(frozen=True)
class GoldenFolder:
    """A golden (or recording) folder, resolved once and checked against the path rules.

    Attributes:
        path: The folder (or the recording file, given itself).
        files: Its recording files, in the order they are read: its
            ``trajectory.jsonl`` (or ``.jsonl.gz``); empty when it holds none
            of its own.
        left: Recording files beside them that are not read: the other
            compression's file, left by an update that was killed between
            installing one and removing the other; the next update removes it.
        envs: The folders of its sub-envs (``env_0``, ...), for the recording
            of a vector env, by index.
        frames: The frame files of its ``frames`` folder (see
            :func:`scan_frames`).
        env: The index of the sub-env it holds, for a sub-env folder.
        max_decompressed_size: What its compressed files may expand to when
            its header is read, in bytes.
    """

    path: Path
    files: tuple[Path, ...] = ()
    left: tuple[Path, ...] = ()
    envs: tuple[GoldenFolder, ...] = ()
    frames: tuple[Path, ...] = ()
    env: int | None = None
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE

    @property
    def all_files(self) -> tuple[Path, ...]:
        """The recording files it is read from: of every sub-env, in order, for a vector env's."""
        if self.envs:
            return tuple(file for env in self.envs for file in env.all_files)
        return self.files

    @property
    def recorded(self) -> bool:
        """Whether it holds a recording: a recording file of its own, or of a sub-env."""
        return bool(self.all_files)

    @functools.cached_property
    def header(self) -> dict[str, Any] | None:
        """The header of its first episode (of its first sub-env's), read once; None without one.

        Raises:
            GoldenFormatError: The file cannot be read, or its first record is bad.
        """
        files = self.all_files
        limit = self.max_decompressed_size
        return read_header(files[0], max_decompressed_size=limit) if files else None

    @property
    def version(self) -> object:
        """The format version its header names; None without a header."""
        return None if self.header is None else self.header.get("version")


def resolve_golden(
    root: Path,
    folder: Path,
    *,
    within: str = GOLDENS_DIR,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> GoldenFolder:
    """The recording of ``folder``, checked to be safe to read below ``root``.

    No symlink between ``root`` and ``folder``, none among its recording
    files and sub-env folders, nor theirs; no folder where a recording file
    should be, no empty recording file. A folder that does not exist is a
    golden not recorded yet: it holds no file.

    Args:
        root: The folder nothing is read outside of.
        folder: The golden folder.
        within: How messages name ``root``.
        max_decompressed_size: What its compressed files may expand to when
            its header is read.

    Raises:
        UnsafeGoldenPathError: A symlink on the way or inside, named.
        GoldenFormatError: The golden is a file instead of a folder, a
            recording file is a folder or empty, or the folder holds the
            episode files of a pre-release format.
    """
    __tracebackhide__ = True
    _walk_down(root, folder, within)
    return _resolve(scan_folder(folder, within=within), within, max_decompressed_size)


def resolve_recording(
    path: Path,
    *,
    within: str = _RECORDING_DIR,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> GoldenFolder:
    """A recording named by its own path: a folder, no symlink inside it followed, or a file.

    ``path`` itself may be a link (its name is the caller's choice); a
    recording file given itself is its own recording.

    Raises:
        UnsafeGoldenPathError: A symlink inside the folder, named.
        GoldenFormatError: ``path`` does not exist, or is a folder that
            :func:`resolve_golden` refuses, or an empty file.
    """
    __tracebackhide__ = True
    limit = max_decompressed_size
    if path.is_dir():  # the root of its own check: nothing lies between
        return _resolve(scan_folder(path, within=within), within, limit)
    if not path.is_file():
        if not path.exists():
            raise GoldenFormatError(path, "no such file or folder")
        raise GoldenFormatError(
            path,
            "expected a recording file or folder, found another kind of entry (a named pipe, a "
            "device); give the recording's file or folder",
        )
    _check_files((path,))
    return GoldenFolder(path, (path,), max_decompressed_size=limit)


def _resolve(
    entries: FolderEntries, within: str, limit: int, env: int | None = None
) -> GoldenFolder:
    __tracebackhide__ = True
    if env is not None and entries.sub_envs:
        # One level of them: nested ones would be read at any depth a pull request gives.
        raise GoldenFormatError(
            entries.sub_envs[0][1],
            "a sub-env's folder holds no sub-env folder; a vector env's recording has one level "
            "of them: remove this folder",
        )
    files = _check_files(tuple(read_order(entries.folder, entries.files)))
    envs = tuple(
        _resolve(scan_folder(folder, within=within), within, limit, index)
        for index, folder in entries.sub_envs
    )
    left = tuple(path for path in entries.files if path not in files)
    frames = scan_frames(entries.folder, within=within) if entries.frames else ()
    return GoldenFolder(entries.folder, files, left, envs, frames, env, limit)


def _check_files(files: tuple[Path, ...]) -> tuple[Path, ...]:
    """``files``, each a regular file holding something."""
    __tracebackhide__ = True
    for path in files:
        found = os.stat(path)
        if not stat.S_ISREG(found.st_mode):
            raise GoldenFormatError(
                path, "expected a recording file, found a folder or other entry"
            )
        if found.st_size == 0:
            raise GoldenFormatError(
                path,
                "the file is empty; a golden holds a header and a reset record for each episode",
            )
    return files


def scan_frames(folder: Path, *, within: str = GOLDENS_DIR) -> tuple[Path, ...]:
    """The frame files in the ``frames`` folder of a recording folder, sorted.

    Neither the ``frames`` folder nor any entry in it may be a symlink; files
    not named as frames are left out (and never read, written or removed).

    Raises:
        UnsafeGoldenPathError: The ``frames`` folder, or an entry in it, is a symlink.
        GoldenFormatError: ``frames`` is a file, not a folder.
    """
    __tracebackhide__ = True
    frames = folder / FRAMES_DIR
    try:
        mode = os.lstat(frames).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return ()
    if stat.S_ISLNK(mode):
        raise symlink_error(frames, within)
    if not stat.S_ISDIR(mode):
        raise GoldenFormatError(
            frames, "expected the folder of the recording's frames, found a file; remove the file"
        )
    found = []
    for entry in os.scandir(frames):
        if entry.is_symlink():
            raise symlink_error(Path(entry.path), within)
        if is_frame_file_name(entry.name) and entry.is_file(follow_symlinks=False):
            found.append(Path(entry.path))
    return tuple(sorted(found))


def is_sub_env_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a sub-env of the vector recording in its parent folder.

    Told by the recording's own header, not by the folder's name alone: a
    recording may be named ``env_0`` too. A sub-env's header has a ``vector``
    field; a file that cannot be read (or has no header, or is a symlink)
    goes by the name.
    """
    if sub_env_index(folder.name) is None:
        return False
    try:
        # Nothing is read through a symlink: one in the folder goes by the name.
        files = recording_files(folder) if scan_folder(folder).files else []
        header = read_header(files[0]) if files else None
    except GoldenFormatError:
        return True
    if header is None:
        return True
    return isinstance(header.get("vector"), dict)


def find_recording_folders(root: Path, *, within: str) -> list[Path]:
    """The folders under ``root`` (itself included) that hold a recording file.

    Each sub-env folder of a vector recording is one. Nothing below
    ``root`` is followed: a symlinked folder, or a symlinked recording file,
    met on the way is refused.

    Raises:
        UnsafeGoldenPathError: A symlink met, named.
        GoldenFormatError: ``root`` is not a folder, or a folder below it
            cannot be read as a recording (of a pre-release format, say).
    """
    if not root.is_dir():
        raise GoldenFormatError(root, "expected a folder of recordings")
    found: list[Path] = []
    for current, dirs, names in os.walk(root):
        here = Path(current)
        for name in dirs:
            if (here / name).is_symlink():
                raise symlink_error(here / name, within)
        holds_one = any(is_recording_file_name(name) for name in names)
        if holds_one and resolve_golden(root, here, within=within).files:
            found.append(here)
    return sorted(found)
