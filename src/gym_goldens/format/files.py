"""Recording files on disk: written atomically, read and written only inside their root.

A recording file is replaced atomically: the new content goes to a temporary
file in the same folder, is flushed to disk and renamed over the old file,
and the folder is flushed too, so a reader (or a crash) sees the old file or
the new one, never a part. The content is copied in chunks, so an update
takes the same memory for a golden of any size. A golden whose recorded
content is current is not rewritten, so its mtime and git status stay. When
the file system refuses (a read-only folder, a full disk), the update fails
with :class:`~gym_goldens.errors.GoldenWriteError` naming the file and the
cause, and the old file is left as it was.

A recording's frames (the PNG files of its ``frames`` folder) are installed
with it: each frame the new recording refers to is copied atomically (a
frame whose file already holds its pixels is left as it is, whatever bytes
another Pillow or zlib wrote), then the recording file, then the frames no
longer referred to are removed. A frame's digest is in the line that names
it, so a reader never takes one frame for another: a reader that races an
update, or an update killed between its frames and its recording file, finds
a frame whose pixels are not the digest's and says so (record the golden
again); the next update replaces such a golden.

Goldens are read and written only inside the goldens dir, and no symlink
below it is followed: every read, write and removal of a golden goes through
the one path check of :mod:`gym_goldens.format.paths`, which refuses a
symlink at any depth with :class:`~gym_goldens.errors.UnsafeGoldenPathError`.
An update holds the golden's lock (:mod:`gym_goldens.format.lock`), so two
updates of one golden never interleave.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final, Literal

from gym_goldens.errors import GoldenFormatError, GoldenWriteError, UnsafeGoldenPathError
from gym_goldens.format.frames import FRAMES_DIR, FrameRef, read_frame, referenced_frames
from gym_goldens.format.layout import (
    GITIGNORE,
    GOLDENS_GITIGNORE,
    UPDATE_LOCK,
    is_leftover_file_name,
    leftover_owner,
    temporary_prefix,
    this_writer,
    trajectory_filename,
)
from gym_goldens.format.lock import golden_lock, remove_unheld_lock
from gym_goldens.format.paths import (
    FolderEntries,
    GoldenFolder,
    ensure_inside,
    scan_folder,
    scan_frames,
)

__all__ = [
    "InstallStatus",
    "Installed",
    "atomic_copy",
    "atomic_write_bytes",
    "ensure_gitignore",
    "install_recording",
    "is_dead_leftover",
    "remove_dead_leftovers",
    "remove_frames",
    "same_bytes",
]

InstallStatus = Literal["created", "updated", "unchanged"]

# Copies and comparisons go through memory in chunks of this size, whatever the file's size.
_COPY_CHUNK: Final = 1 << 20


def same_bytes(first: Path, second: Path) -> bool:
    """Whether two files hold the same bytes, read a chunk at a time.

    A file that cannot be read is not the same: the caller reads it the long
    way, and says why it cannot.
    """
    try:
        if first.stat().st_size != second.stat().st_size:
            return False
        with first.open("rb") as one, second.open("rb") as other:
            while True:
                chunk = one.read(_COPY_CHUNK)
                if chunk != other.read(_COPY_CHUNK):
                    return False
                if not chunk:
                    return True
    except OSError:
        return False


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old or the new file.

    The data goes to a temporary file in the same folder, is flushed to disk,
    and is renamed over ``path``; the folder is then flushed too, so the
    rename survives a power cut. If ``path`` is a symlink, the link itself is
    replaced: its target is never written.

    Raises:
        GoldenWriteError: The file system refused (a read-only folder, a full
            disk); ``path`` is as it was.
    """
    _atomic_write(path, lambda descriptor: _write_all(descriptor, data))


def atomic_copy(path: Path, sources: Sequence[Path]) -> None:
    """Write the concatenation of ``sources`` to ``path``, as :func:`atomic_write_bytes` does.

    The files are copied in chunks of 1 MiB, so the memory it takes does not
    grow with their size.

    Raises:
        GoldenWriteError: The file system refused; ``path`` is as it was.
    """

    def copy(descriptor: int) -> None:
        for source in sources:
            with open(source, "rb") as handle:
                while chunk := handle.read(_COPY_CHUNK):
                    _write_all(descriptor, chunk)

    _atomic_write(path, copy)


def _atomic_write(path: Path, fill: Callable[[int], None]) -> None:
    """Fill a temporary file beside ``path`` by ``fill(descriptor)``; rename it over ``path``."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(
            prefix=temporary_prefix(path.name), suffix=".tmp", dir=path.parent
        )
    except OSError as error:
        raise _write_error(path, error) from None
    try:
        try:
            fill(descriptor)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        # mkstemp makes the file private (0600); a golden gets the usual mode.
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError) and not isinstance(error, GoldenWriteError):
            raise _write_error(path, error) from None
        raise
    _fsync_folder(path.parent)


def _write_all(descriptor: int, data: bytes) -> None:
    # os.write may write less than it was given (a signal, a pipe): write the rest.
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def _write_error(path: Path, error: OSError) -> GoldenWriteError:
    """The error of a file system that refused to write ``path`` (or a file beside it)."""
    return GoldenWriteError(path, f"cannot write it ({error.strerror or error})")


def _umask() -> int:
    # os.umask can only be read by setting it; it is set back at once.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_folder(folder: Path) -> None:
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # folders cannot be opened on Windows; NTFS renames are journaled
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


@dataclasses.dataclass(frozen=True)
class Installed:
    """What :func:`install_recording` did to one folder.

    Attributes:
        folder: The folder installed into.
        status: ``created`` (no recording before), ``updated`` (a file was
            written or removed) or ``unchanged``.
        written: Files written: the frames that changed and the recording
            file (of each sub-env that changed, for a vector env).
        removed: Files removed: a recording file of the other compression,
            the episode files of a pre-release format, frames no longer
            referred to, the files of sub-envs that are gone.
    """

    folder: Path
    status: InstallStatus
    written: tuple[Path, ...] = ()
    removed: tuple[Path, ...] = ()


IsCurrent = Callable[[Path, GoldenFolder], bool]
"""``is_current(existing_file, new_recording)``: whether the file already holds it."""


def install_recording(
    source: GoldenFolder, target: Path, *, is_current: IsCurrent, root: Path | None = None
) -> Installed:
    """Make the folder ``target`` hold the recording of the folder ``source``.

    The frames the recording refers to are copied atomically (those that
    already hold their pixels are left), then the recording file, then the
    files it replaces are removed: frames it no longer refers to, a recording
    file of the other compression and the episode files of a pre-release
    format (format 1). A file that ``is_current`` says already
    holds the recording is left alone. Temporary files of other writes are
    not touched here (see :func:`remove_dead_leftovers`): one may be another
    process's, writing the same golden. Vector recordings are installed
    sub-env folder by sub-env folder.

    The whole install holds the golden's update lock
    (:func:`~gym_goldens.format.lock.golden_lock`): a second update of the
    same golden waits, then finds the folder as the first left it, so two
    updates with other settings (one compressing, one not) never remove
    each other's file.

    Args:
        source: The new recording, resolved (see
            :func:`~gym_goldens.format.paths.resolve_recording`).
        target: The folder to update.
        is_current: Whether an existing recording file already holds the
            new recording, and may stay as it is.
        root: The folder nothing is read or written outside of, with no
            symlink followed below it (see
            :func:`~gym_goldens.format.paths.ensure_inside`); ``target`` itself
            when None.

    Raises:
        GoldenFormatError: An existing entry is in the way (a folder where
            the recording file should be, a file where the folder should
            be); it is left as it is.
        GoldenWriteError: The file system refused to write or remove a file
            (a read-only folder, a full disk); a file that was being
            replaced is as it was.
        UnsafeGoldenPathError: A symlink between ``root`` and ``target``, or
            among the files and folders of ``target``.
    """
    try:
        ensure_inside(target if root is None else root, target)
        scan_folder(target)  # a file where the folder should be is refused, not replaced
        target.mkdir(parents=True, exist_ok=True)
        with golden_lock(target):
            # Looked at once the lock is held: as the update before left it.
            entries = scan_folder(target)
            if source.envs or entries.sub_envs:
                return _install_vector(source, entries, is_current)
            return _install_file(source, entries, is_current)
    except GoldenWriteError:
        raise
    except OSError as error:
        # A file removed or a folder made or listed: the file system names it.
        raise _write_error(Path(error.filename or target), error) from None


def _install_file(source: GoldenFolder, target: FolderEntries, is_current: IsCurrent) -> Installed:
    scan_frames(target.folder)  # a symlink among the frames is refused, as among the files
    old_files = target.files
    written: list[Path] = []
    source_files = source.files
    destination: Path | None = None
    frames: dict[str, FrameRef] | None = None
    if source_files:
        compressed = source_files[0].name.endswith(".gz")
        destination = target.folder / trajectory_filename(compress=compressed)
        current = destination in old_files and is_current(destination, source)
        if not (current and _frames_intact(destination)):
            frames = _source_frames(source)
            written += _install_frames(source.path, target.folder, frames)
            atomic_copy(destination, source_files)
            written.append(destination)
    # Only once the new file is in place: an update killed before this point
    # leaves the old recording readable (or both files, of which readers
    # take the plain one and the next update removes the other), never no
    # recording at all.
    removed: list[Path] = []
    for old in old_files:
        if old != destination:
            old.unlink(missing_ok=True)
            removed.append(old)
    if frames is not None or not source_files:
        removed += remove_frames(target.folder, keep=frames or {})
    status: InstallStatus = (
        "created" if not old_files else "updated" if written or removed else "unchanged"
    )
    return Installed(target.folder, status, tuple(written), tuple(removed))


def _source_frames(source: GoldenFolder) -> dict[str, FrameRef]:
    """The frames the recording ``source`` refers to (none unless it has a ``frames`` folder)."""
    frames: dict[str, FrameRef] = {}
    if (source.path / FRAMES_DIR).is_dir():
        for file in source.files:
            frames.update(referenced_frames(file))
    return frames


def _frames_intact(recording_file: Path) -> bool:
    """Whether every frame a golden's recording file refers to is there, with its pixels."""
    try:
        folder = recording_file.parent
        for ref in referenced_frames(recording_file).values():
            read_frame(folder, ref)
    except GoldenFormatError:
        return False  # replaced, as an unreadable golden is
    return True


def _install_frames(source: Path, folder: Path, frames: dict[str, FrameRef]) -> list[Path]:
    """Copy the frames of the recording ``source`` into ``folder``; the files written.

    A frame whose file in ``folder`` already holds its pixels is left as it
    is: decoded pixels are compared, not bytes.
    """
    written = []
    for file, ref in sorted(frames.items()):
        destination = folder / file
        try:
            read_frame(folder, ref)
        except (GoldenFormatError, UnsafeGoldenPathError):
            pass  # missing, other pixels, damaged or a link: written anew
        else:
            continue
        origin = source / file
        if not origin.is_file():
            raise GoldenFormatError(origin, "the recording refers to this frame, which is missing")
        atomic_copy(destination, [origin])
        written.append(destination)
    return written


def remove_frames(folder: Path, *, keep: Mapping[str, object]) -> list[Path]:
    """Remove the frames of ``folder`` whose files are not in ``keep``; the folder, once empty.

    Only files named as frames are removed (see
    :func:`~gym_goldens.format.paths.scan_frames`, which refuses symlinks).

    Returns:
        The files removed.
    """
    removed = []
    for path in scan_frames(folder):
        if f"{FRAMES_DIR}/{path.name}" not in keep:
            path.unlink(missing_ok=True)
            removed.append(path)
    frames = folder / FRAMES_DIR
    if removed and not any(frames.iterdir()):
        frames.rmdir()
    return removed


def _install_vector(
    source: GoldenFolder, target: FolderEntries, is_current: IsCurrent
) -> Installed:
    target_envs = {folder.name: scan_folder(folder) for _, folder in target.sub_envs}
    existed = bool(target.files) or any(env.files for env in target_envs.values())
    written: list[Path] = []
    removed: list[Path] = []
    for source_env in source.envs:
        name = source_env.path.name
        sub = target_envs.pop(name, None) or scan_folder(target.folder / name)
        installed = _install_file(source_env, sub, is_current)
        written += installed.written
        removed += installed.removed
    # Sub-envs that are gone, and the file of a single-env recording this replaces.
    for entries in [*target_envs.values(), *([target] if source.envs else [])]:
        for old in entries.files:
            old.unlink(missing_ok=True)
            removed.append(old)
        removed += remove_frames(entries.folder, keep={})
        for entry in entries.folder.iterdir():
            if is_dead_leftover(entry.name):
                entry.unlink(missing_ok=True)
        if entries is not target and not any(entries.folder.iterdir()):
            entries.folder.rmdir()
    if not source.envs:
        # A single-env recording replaces a vector one.
        installed = _install_file(source, scan_folder(target.folder), is_current)
        written += installed.written
        removed += installed.removed
    status: InstallStatus = (
        "created" if not existed else "updated" if written or removed else "unchanged"
    )
    return Installed(target.folder, status, tuple(written), tuple(removed))


def is_dead_leftover(name: str) -> bool:
    """Whether ``name`` is a temporary file of an atomic write whose writer is gone.

    Its name gives its owner, host and process id: a leftover of this host
    whose process has ended is dead; one of another host cannot be told from
    a write in progress and is kept; one of an older version of this package,
    whose name gives no owner, is dead. On Windows, where no process can be
    asked whether it lives without signalling it, only those are dead.
    """
    if not is_leftover_file_name(name):
        return False
    owner = leftover_owner(name)
    if owner is None:
        return True
    host, pid = owner
    return host == this_writer()[0] and not _alive(pid)


def remove_dead_leftovers(root: Path) -> list[Path]:
    """Remove the temporary files under ``root`` whose writers are gone.

    See :func:`is_dead_leftover`; the update locks no update holds go too.
    Symlinks are not followed. A file that another process removes first is
    no error.

    Returns:
        The files removed.
    """
    removed: list[Path] = []
    if root.is_symlink() or not root.is_dir():
        return removed
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            if is_dead_leftover(name) and not path.is_symlink():
                path.unlink(missing_ok=True)
                removed.append(path)
            elif name == UPDATE_LOCK and remove_unheld_lock(path.parent):
                removed.append(path)
    return removed


def ensure_gitignore(root: Path) -> bool:
    """Give a goldens folder its ``.gitignore`` (keeping leftovers out of git), unless it has one.

    Written atomically, so a concurrent run sees it whole or not at all; an
    existing ``.gitignore`` is the user's and is left as it is.

    Returns:
        Whether it was written.
    """
    path = root / GITIGNORE
    if path.exists() or path.is_symlink():
        return False
    atomic_write_bytes(path, GOLDENS_GITIGNORE.encode())
    return True


def _alive(pid: int) -> bool:
    if sys.platform == "win32":
        return True  # asking would signal it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's
    return True
