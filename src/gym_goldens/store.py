"""Where goldens live, and writing them safely.

A golden recording lives at::

    <goldens_dir>/<test file without .py, relative to the rootdir>/<test>/<name>/trajectory.jsonl

where ``<test>`` is the rest of the node id: one folder per ``::`` part (class,
test name with its parametrize id). Every part is made filesystem-safe by
:func:`safe_segment`, a mapping that is stable and one-to-one, so distinct
tests never share a golden.

The golden of a vector env holds one folder per sub-env (``env_0/``, ...)
under ``<name>/``, each with its own ``trajectory.jsonl``.

Goldens are written atomically: the recording file goes to a temporary file
in its own folder and is renamed into place, so an interrupted update leaves
the golden of a single env either old or new as a whole, never partial (the
golden of a vector env: each sub-env's file). A temporary file left behind by
a killed update (``.trajectory.jsonl.<random>.tmp``) is ignored by readers and
removed by the next update of its folder. A golden whose content is unchanged
is not rewritten, so its mtime and git status stay.

Golden folders of format 1 (one file per episode, ``episode_00000.jsonl``,
...) still read; updating one writes ``trajectory.jsonl`` and then removes the
episode files.

Goldens are read and written only inside the goldens dir: a golden path that
resolves outside it (through a symlink) is refused with
:class:`~gym_goldens.errors.UnsafeGoldenPathError`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import tempfile
from pathlib import Path
from typing import Final, Literal

__all__ = [
    "GoldenUpdate",
    "atomic_write_bytes",
    "ensure_inside",
    "golden_dir_for",
    "golden_file_dir",
    "golden_recording_files",
    "golden_test_dir",
    "is_leftover_file_name",
    "safe_segment",
    "update_golden",
]

_SAFE: Final = re.compile(r"[A-Za-z0-9_\-.\[\]=+,@]")
_MAX_SEGMENT_BYTES: Final = 120
_HASH_CHARS: Final = 10
# The temporary files of atomic_write_bytes, of this format and of format 1.
_LEFTOVER_NAME: Final = re.compile(r"^\.(?:trajectory|episode_\d+)\.jsonl(?:\.gz)?\..+\.tmp$")
_RESERVED_WINDOWS: Final = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
)

UpdateStatus = Literal["created", "updated", "unchanged"]


def safe_segment(text: str) -> str:
    """Map one part of a test id to a safe, unique file name.

    Letters, digits and ``_-.[]=+,@`` are kept; every other character is
    written as ``%XX`` (its UTF-8 bytes in hex), ``%`` included, so the
    mapping is one-to-one. A leading dot is escaped, so no part is ``.`` or
    ``..`` or hidden, and a trailing dot is escaped (Windows drops it).
    Reserved Windows device names (``con``, ``nul``, ``com1``...) get a
    leading ``%``. Names that would exceed 120 bytes are cut and end in ``~``
    and a hash of the whole part, which keeps them unique and stable; no
    other name contains ``~``.

    Example:
        >>> safe_segment("test_x[Mountain/Car v0]")
        'test_x[Mountain%2FCar%20v0]'
    """
    escaped = "".join(
        char if _SAFE.match(char) else "".join(f"%{byte:02X}" for byte in char.encode("utf-8"))
        for char in text
    )
    if escaped.startswith("."):
        escaped = "%2E" + escaped[1:]
    if escaped.endswith("."):
        escaped = escaped[:-1] + "%2E"
    if not escaped or escaped.split(".")[0].lower() in _RESERVED_WINDOWS:
        escaped = "%" + escaped
    if len(escaped) > _MAX_SEGMENT_BYTES:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_CHARS]
        escaped = f"{escaped[: _MAX_SEGMENT_BYTES - _HASH_CHARS - 1]}~{digest}"
    return escaped


def golden_dir_for(goldens_dir: Path, nodeid: str, name: str) -> Path:
    """The golden folder of recording ``name`` in the test ``nodeid``.

    Args:
        goldens_dir: The root of the goldens.
        nodeid: The pytest node id, relative to the rootdir
            (``tests/test_envs.py::TestCart::test_x[a]``).
        name: The recording's name within the test.

    Example:
        >>> golden_dir_for(Path("goldens"), "tests/test_envs.py::test_cartpole", "CartPole-v1")
        PosixPath('goldens/tests/test_envs/test_cartpole/CartPole-v1')
    """
    return golden_test_dir(goldens_dir, nodeid) / safe_segment(name)


def golden_file_dir(goldens_dir: Path, nodeid: str) -> Path:
    """The folder holding the goldens of every test in the file of ``nodeid``.

    Example:
        >>> golden_file_dir(Path("goldens"), "tests/test_envs.py::TestCart::test_x")
        PosixPath('goldens/tests/test_envs')
    """
    file_part = nodeid.partition("::")[0]
    if file_part.endswith(".py"):
        file_part = file_part[:-3]
    return goldens_dir.joinpath(*(safe_segment(part) for part in file_part.split("/") if part))


def golden_test_dir(goldens_dir: Path, nodeid: str) -> Path:
    """The folder holding the goldens of the test ``nodeid``.

    Example:
        >>> golden_test_dir(Path("goldens"), "tests/test_envs.py::TestCart::test_x[a::b]")
        PosixPath('goldens/tests/test_envs/TestCart/test_x[a%3A%3Ab]')
    """
    rest = nodeid.partition("::")[2]
    # A parametrize id may itself hold "::" or "/": only the part before its
    # "[" is split, so the mapping stays one-to-one.
    head, bracket, params = rest.partition("[")
    parts = head.split("::") if head else [""]
    parts[-1] += bracket + params
    return golden_file_dir(goldens_dir, nodeid).joinpath(
        *(safe_segment(part) for part in parts if part)
    )


def ensure_inside(goldens_dir: Path, path: Path) -> Path:
    """Refuse a path that resolves outside the goldens dir.

    Symlinks are followed as far as they exist, so a link anywhere on the
    way (the file, its folder, a parent folder) that leads out is caught.

    Returns:
        ``path`` resolved.

    Raises:
        UnsafeGoldenPathError: ``path`` resolves outside ``goldens_dir``.
    """
    from gym_goldens.errors import UnsafeGoldenPathError

    root = goldens_dir.resolve()
    resolved = path.resolve()
    if resolved != root and root not in resolved.parents:
        raise UnsafeGoldenPathError(
            path,
            f"resolves to {resolved}, outside the goldens dir {root}; goldens are read and "
            "written only inside it: replace the symlink with the golden itself",
        )
    return resolved


def golden_recording_files(goldens_dir: Path, golden_dir: Path) -> list[Path]:
    """The recording file of a golden, checked to be safe to read.

    Returns:
        ``[<golden_dir>/trajectory.jsonl]`` (or ``.jsonl.gz``); the episode
        files in episode order for a golden of format 1; empty when there is
        no golden yet.

    Raises:
        GoldenFormatError: The golden is a file instead of a folder, its
            recording file is a folder or empty, or the folder holds both
            layouts (or two files claim one episode).
        UnsafeGoldenPathError: The golden or its recording file resolves
            outside the goldens dir.
    """
    from gym_goldens.errors import GoldenFormatError
    from gym_goldens.reader import recording_files

    ensure_inside(goldens_dir, golden_dir)
    if not golden_dir.exists():
        return []
    if not golden_dir.is_dir():
        raise GoldenFormatError(
            golden_dir, "expected a golden folder, found a file; remove the file"
        )
    for entry in _named_recording_files(golden_dir):
        ensure_inside(goldens_dir, entry)
        if entry.is_dir():
            raise GoldenFormatError(
                entry, "expected a recording file, found a folder; remove the folder"
            )
    files = recording_files(golden_dir)
    for path in files:
        if path.stat().st_size == 0:
            raise GoldenFormatError(
                path,
                "the file is empty; a golden holds a header and a reset record for each episode",
            )
    return files


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old or the new file.

    The data goes to a temporary file in the same folder, is flushed to disk,
    and is renamed over ``path``; the folder is then flushed too, so the
    rename survives a power cut. If ``path`` is a symlink, the link itself is
    replaced: its target is never written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp makes the file private (0600); a golden gets the usual mode.
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _fsync_folder(path.parent)


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
class GoldenUpdate:
    """What :func:`update_golden` did to one golden folder.

    Attributes:
        golden_dir: The golden folder.
        status: ``created`` (no golden before), ``updated`` (a file was
            written or removed) or ``unchanged``.
        written: Files written: the recording file (of each sub-env that
            changed, for a vector env).
        removed: Files removed: episode files of format 1, a recording file
            of the other compression, the files of sub-envs that are gone.
    """

    golden_dir: Path
    status: UpdateStatus
    written: tuple[Path, ...] = ()
    removed: tuple[Path, ...] = ()


def update_golden(
    actual_dir: Path, golden_dir: Path, *, goldens_dir: Path | None = None
) -> GoldenUpdate:
    """Make ``golden_dir`` hold the recording of ``actual_dir``.

    The recording file is copied atomically (see the module docstring), then
    the files it replaces are removed: the episode files of a golden of
    format 1, a recording file of the other compression, and temporary files
    left by an interrupted update. A golden whose recorded content is
    unchanged is left alone: differences in informational header fields
    (versions, platform) alone do not rewrite it. A golden of an older
    format version is rewritten. Vector recordings are updated sub-env
    folder by sub-env folder.

    Args:
        actual_dir: The new recording.
        golden_dir: The golden folder to update.
        goldens_dir: The goldens root; when given, nothing is read or
            written unless it lies inside it.

    Raises:
        GoldenFormatError: An existing golden entry is in the way (a folder
            where the recording file should be, a file where the golden
            folder should be); it is left as it is.
        UnsafeGoldenPathError: ``golden_dir`` or one of its files resolves
            outside ``goldens_dir``.
    """
    from gym_goldens.reader import sub_env_dirs

    actual_envs = sub_env_dirs(actual_dir)
    golden_envs = sub_env_dirs(golden_dir)
    if actual_envs or golden_envs:
        return _update_vector(actual_dir, golden_dir, actual_envs, golden_envs, goldens_dir)
    return _update_file(actual_dir, golden_dir, goldens_dir)


def _update_file(actual_dir: Path, golden_dir: Path, goldens_dir: Path | None) -> GoldenUpdate:
    from gym_goldens.reader import recording_files

    old_files = _existing_files(golden_dir, goldens_dir)
    _remove_leftovers(golden_dir)
    written: list[Path] = []
    actual_files = recording_files(actual_dir)
    target: Path | None = None
    if actual_files:
        name, data = _recording_bytes(actual_files)
        target = golden_dir / name
        if goldens_dir is not None:
            ensure_inside(goldens_dir, target)
        if not _is_current(target, actual_dir):
            atomic_write_bytes(target, data)
            written.append(target)
    # Only once the new file is in place: an update killed before this point
    # leaves the old golden readable (or both layouts, which the next update
    # clears), never no golden at all.
    removed: list[Path] = []
    for old in old_files:
        if old != target:
            old.unlink()
            removed.append(old)
    status: UpdateStatus = (
        "created" if not old_files else "updated" if written or removed else "unchanged"
    )
    return GoldenUpdate(golden_dir, status, tuple(written), tuple(removed))


def _recording_bytes(files: list[Path]) -> tuple[str, bytes]:
    """The name and content of the recording file that ``files`` make.

    A recording of format 1 (a file per episode) becomes one file, their
    concatenation, which is what the recorder writes now.
    """
    from gym_goldens.errors import GoldenFormatError
    from gym_goldens.reader import _TRAJECTORY_NAME
    from gym_goldens.recorder import trajectory_filename

    if len(files) == 1 and _TRAJECTORY_NAME.match(files[0].name):
        return files[0].name, files[0].read_bytes()
    compressed = {file.name.endswith(".gz") for file in files}
    if len(compressed) > 1:
        raise GoldenFormatError(
            files[0].parent,
            "holds both compressed and plain episode files; record it again to update the golden",
        )
    # Gzip members concatenate into one valid gzip file, as plain lines do.
    return trajectory_filename(compress=compressed.pop()), b"".join(
        file.read_bytes() for file in files
    )


def _is_current(target: Path, actual_dir: Path) -> bool:
    """Whether ``target`` holds the recording of ``actual_dir``, in this format version."""
    from gym_goldens.diff import compare
    from gym_goldens.errors import GoldenFormatError, UnsafeGoldenPathError
    from gym_goldens.header import FORMAT_VERSION
    from gym_goldens.reader import read_header
    from gym_goldens.tolerance import Tolerance

    if not target.is_file():
        return False
    try:
        current = (read_header(target) or {}).get("version") == FORMAT_VERSION
        return current and compare(target, actual_dir, Tolerance(rtol=0.0, atol=0.0)).equal
    except UnsafeGoldenPathError:
        raise
    except GoldenFormatError:
        return False  # an unreadable golden is replaced


def _update_vector(
    actual_dir: Path,
    golden_dir: Path,
    actual_envs: list[tuple[int, Path]],
    golden_envs: list[tuple[int, Path]],
    goldens_dir: Path | None,
) -> GoldenUpdate:
    existed = any(_named_recording_files(folder) for _, folder in golden_envs) or bool(
        _named_recording_files(golden_dir)
    )
    written: list[Path] = []
    removed: list[Path] = []
    kept = set()
    for _, actual_env in actual_envs:
        kept.add(actual_env.name)
        update = _update_file(actual_env, golden_dir / actual_env.name, goldens_dir)
        written += update.written
        removed += update.removed
    # Sub-envs that are gone, and the file of a single-env golden this replaces.
    stale = [folder for _, folder in golden_envs if folder.name not in kept]
    for folder in [*stale, golden_dir]:
        if folder == golden_dir and not actual_envs:
            continue
        for old in _existing_files(folder, goldens_dir):
            old.unlink()
            removed.append(old)
        _remove_leftovers(folder)
        if folder != golden_dir and not any(folder.iterdir()):
            folder.rmdir()
    if not actual_envs:
        # A single-env recording replaces a vector golden.
        update = _update_file(actual_dir, golden_dir, goldens_dir)
        written += update.written
        removed += update.removed
    status: UpdateStatus = (
        "created" if not existed else "updated" if written or removed else "unchanged"
    )
    return GoldenUpdate(golden_dir, status, tuple(written), tuple(removed))


def _existing_files(golden_dir: Path, goldens_dir: Path | None) -> list[Path]:
    """The recording files of a golden folder, of either layout, refusing what is in the way.

    Unlike :func:`golden_recording_files`, a folder holding both layouts (an
    update killed between writing the new file and removing the old ones) is
    accepted: the update clears it. What is damaged is not refused either: it
    is replaced.

    Raises:
        GoldenFormatError: A file where the golden folder should be, or a
            folder where a recording file should be.
        UnsafeGoldenPathError: With ``goldens_dir``: the golden or one of
            its files resolves outside it.
    """
    from gym_goldens.errors import GoldenFormatError

    if goldens_dir is not None:
        ensure_inside(goldens_dir, golden_dir)
    if golden_dir.exists() and not golden_dir.is_dir():
        raise GoldenFormatError(
            golden_dir, "expected a golden folder, found a file; remove it to update the golden"
        )
    files = _named_recording_files(golden_dir)
    for path in files:
        if goldens_dir is not None:
            ensure_inside(goldens_dir, path)
        if path.is_dir():
            raise GoldenFormatError(
                path, "expected a recording file, found a folder; remove it to update the golden"
            )
    return files


def _named_recording_files(folder: Path) -> list[Path]:
    """The entries of ``folder`` named as recording files of either layout, sorted."""
    from gym_goldens.reader import is_recording_file_name

    if not folder.is_dir():
        return []
    return sorted(entry for entry in folder.iterdir() if is_recording_file_name(entry.name))


def is_leftover_file_name(name: str) -> bool:
    """Whether ``name`` is that of a temporary file an interrupted update left."""
    return _LEFTOVER_NAME.match(name) is not None


def _remove_leftovers(folder: Path) -> None:
    """Remove the temporary files of an interrupted update."""
    if not folder.is_dir():
        return
    for entry in folder.iterdir():
        if is_leftover_file_name(entry.name) and not entry.is_dir():
            entry.unlink(missing_ok=True)
