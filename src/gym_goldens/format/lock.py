"""One update of a golden at a time: the lock file of a golden folder.

Two runs of ``pytest --update-goldens`` (two terminals, two CI jobs on one
machine, pytest-xdist workers of two sessions) may update the same golden,
with other settings: one writes ``trajectory.jsonl.gz`` and removes
``trajectory.jsonl``, the other does the opposite. Each alone leaves one
file; interleaved, each could remove the file the other just installed. So
an update holds the golden's lock file, ``.trajectory.lock.tmp`` in its
folder, from the moment it looks at the folder until it is done with it; a
second update waits for it, then looks at the folder as the first left it.

The lock is an operating-system lock on the open file (``flock`` on POSIX,
``msvcrt.locking`` on Windows), so it goes with the process that holds it:
a killed update leaves no lock held, only its file, which the next update
takes over. The file holds its owner (host and process id), shown when an
update gives up waiting. Locks span the processes of one machine (and the
machines of a network file system whose locks do). The file's name ends in
``.tmp``, which the goldens folder's ``.gitignore`` keeps out of git.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from gym_goldens.errors import GoldenWriteError
from gym_goldens.format.layout import UPDATE_LOCK, this_writer
from gym_goldens.format.paths import symlink_error

__all__ = ["golden_lock", "remove_unheld_lock"]

_WAIT: Final = 600.0
"""How long an update waits for another update of the same golden, in seconds."""

_POLL: Final = 0.02
# A planted symlink by the lock's name is not opened (where the flag exists).
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)


@contextlib.contextmanager
def golden_lock(folder: Path, *, wait: float | None = None) -> Iterator[None]:
    """Hold the update lock of the golden folder ``folder`` (which must exist).

    Args:
        folder: The golden folder.
        wait: How long to wait for another update that holds it, in seconds
            (10 minutes when None).

    A folder that cannot be written (read-only) is not locked: no update can
    write in it, so none can undo another's.

    Raises:
        GoldenWriteError: Another update held it for ``wait`` seconds, or the
            lock file cannot be created.
        UnsafeGoldenPathError: The lock file is a symlink.
    """
    path = folder / UPDATE_LOCK
    if _read_only(folder):
        # No update can write here, so none can undo another's: the update
        # goes on unlocked, keeps what still holds, and fails where it writes.
        yield
        return
    descriptor = _acquire(path, _WAIT if wait is None else wait)
    try:
        yield
    finally:
        _release(path, descriptor)


def remove_unheld_lock(folder: Path) -> bool:
    """Remove the lock file of ``folder`` if no update holds it (left by a killed one).

    Returns:
        Whether a lock file was removed.
    """
    path = folder / UPDATE_LOCK
    if not path.is_file() or path.is_symlink():
        return False
    try:
        descriptor = _acquire(path, 0.0)
    except (GoldenWriteError, OSError):
        return False
    _release(path, descriptor)
    return True


def _acquire(path: Path, wait: float) -> int:
    deadline = time.monotonic() + wait
    while True:
        descriptor = _open(path)
        locked = False
        try:
            locked = _try_lock(descriptor)
            # A lock on a file its holder removed since it was opened locks nothing.
            if locked and _is_the_file(descriptor, path):
                _write_owner(descriptor)
                return descriptor
            if not locked and time.monotonic() >= deadline:
                owner = _owner(descriptor)
                raise GoldenWriteError(
                    path.parent,
                    f"another update of this golden ({owner}) still holds its lock "
                    f"{UPDATE_LOCK} after {wait:.0f} s; let it finish, or remove the lock file "
                    "if that process is gone",
                )
        except BaseException:
            os.close(descriptor)
            raise
        os.close(descriptor)
        if not locked:
            time.sleep(_POLL)


def _read_only(folder: Path) -> bool:
    return not os.access(folder, os.W_OK)


def _open(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise symlink_error(path) from None
        raise GoldenWriteError(path.parent, f"cannot write in it ({error.strerror})") from None


def _release(path: Path, descriptor: int) -> None:
    try:
        if sys.platform != "win32" and _is_the_file(descriptor, path):
            # Removed while held: an update waiting on this file finds it gone
            # once it gets the lock, and opens the next one.
            path.unlink()
    except OSError:
        pass
    finally:
        os.close(descriptor)
    if sys.platform == "win32":
        with contextlib.suppress(OSError):
            path.unlink()  # an open file cannot be removed there; one that is held stays


def _try_lock(descriptor: int) -> bool:
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(descriptor, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _is_the_file(descriptor: int, path: Path) -> bool:
    try:
        on_disk = os.lstat(path)
    except OSError:
        return False
    held = os.fstat(descriptor)
    return (held.st_dev, held.st_ino) == (on_disk.st_dev, on_disk.st_ino)


def _write_owner(descriptor: int) -> None:
    host, pid = this_writer()
    with contextlib.suppress(OSError):
        os.ftruncate(descriptor, 0)
        os.lseek(descriptor, 0, os.SEEK_SET)
        os.write(descriptor, f"{host}-{pid}\n".encode())


def _owner(descriptor: int) -> str:
    try:
        os.lseek(descriptor, 0, os.SEEK_SET)
        text = os.read(descriptor, 200).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return f"process {text}" if text else "a process"
