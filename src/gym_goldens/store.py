"""Where goldens live, and writing them safely.

A golden recording lives at::

    <goldens_dir>/<test file without .py, relative to the rootdir>/<test>/<name>/episode_NNNNN.jsonl

where ``<test>`` is the rest of the node id: one folder per ``::`` part (class,
test name with its parametrize id). Every part is made filesystem-safe by
:func:`safe_segment`, a mapping that is stable and one-to-one, so distinct
tests never share a golden.

The golden of a vector env holds one folder per sub-env (``env_0/``, ...)
under ``<name>/``, each with its episode files.

Goldens are written atomically: each file goes to a temporary file in its own
folder and is renamed into place, so an interrupted update leaves every golden
either old or new, never partial. A golden whose content is unchanged is not
rewritten, so its mtime and git status stay.
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
    "golden_dir_for",
    "safe_segment",
    "update_golden",
]

_SAFE: Final = re.compile(r"[A-Za-z0-9_\-.\[\]=+,@]")
_MAX_SEGMENT_BYTES: Final = 120
_HASH_CHARS: Final = 10
_RESERVED_WINDOWS: Final = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
)

UpdateStatus = Literal["created", "updated", "unchanged"]


def safe_segment(text: str) -> str:
    """Map one part of a test id to a safe, unique file name.

    Letters, digits and ``_-.[]=+,@`` are kept; every other character is
    written as ``%XX`` (its UTF-8 bytes in hex), ``%`` included, so the
    mapping is one-to-one. A leading dot is escaped, so no part is ``.`` or
    ``..`` or hidden. Names that would exceed 120 bytes are cut and end in
    ``~`` and a hash of the whole part, which keeps them unique and stable.

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
    file_part, _, rest = nodeid.partition("::")
    if file_part.endswith(".py"):
        file_part = file_part[:-3]
    file_segments = [safe_segment(part) for part in file_part.split("/") if part]
    test_segments = [safe_segment(part) for part in rest.split("::") if part] if rest else []
    return goldens_dir.joinpath(*file_segments, *test_segments, safe_segment(name))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old or the new file.

    The data goes to a temporary file in the same folder, is flushed to disk,
    and is renamed over ``path``.
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
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@dataclasses.dataclass(frozen=True)
class GoldenUpdate:
    """What :func:`update_golden` did to one golden folder.

    Attributes:
        golden_dir: The golden folder.
        status: ``created`` (no golden before), ``updated`` (a file was
            written or removed) or ``unchanged``.
        written: Files written.
        removed: Episode files removed (the new recording has fewer episodes).
    """

    golden_dir: Path
    status: UpdateStatus
    written: tuple[Path, ...] = ()
    removed: tuple[Path, ...] = ()


def update_golden(actual_dir: Path, golden_dir: Path) -> GoldenUpdate:
    """Make ``golden_dir`` hold the episodes of ``actual_dir``.

    Files whose recorded content is unchanged are left alone: differences in
    informational header fields (versions, platform) alone do not rewrite a
    golden. A golden of an older format version is rewritten. Vector
    recordings are updated sub-env folder by sub-env folder.
    """
    from gym_goldens.reader import sub_env_dirs

    actual_envs = sub_env_dirs(actual_dir)
    golden_envs = sub_env_dirs(golden_dir)
    if actual_envs or golden_envs:
        return _update_vector(actual_dir, golden_dir, actual_envs, golden_envs)
    return _update_files(actual_dir, golden_dir)


def _update_files(actual_dir: Path, golden_dir: Path) -> GoldenUpdate:
    from gym_goldens.diff import compare
    from gym_goldens.errors import GoldenFormatError
    from gym_goldens.header import FORMAT_VERSION
    from gym_goldens.reader import episode_files, read_header
    from gym_goldens.tolerance import Tolerance

    existed = golden_dir.is_dir() and bool(_episode_files_or_empty(golden_dir))
    exact = Tolerance(rtol=0.0, atol=0.0)
    written: list[Path] = []
    new_names = set()
    for actual_file in episode_files(actual_dir):
        target = golden_dir / actual_file.name
        new_names.add(actual_file.name)
        if target.is_file():
            try:
                current = (read_header(target) or {}).get("version") == FORMAT_VERSION
                if current and compare(target, actual_file, exact).equal:
                    continue
            except GoldenFormatError:
                pass  # an unreadable golden is replaced
        atomic_write_bytes(target, actual_file.read_bytes())
        written.append(target)
    removed: list[Path] = []
    for old in _episode_files_or_empty(golden_dir):
        if old.name not in new_names:
            old.unlink()
            removed.append(old)
    status: UpdateStatus = (
        "created" if not existed else "updated" if written or removed else "unchanged"
    )
    return GoldenUpdate(golden_dir, status, tuple(written), tuple(removed))


def _update_vector(
    actual_dir: Path,
    golden_dir: Path,
    actual_envs: list[tuple[int, Path]],
    golden_envs: list[tuple[int, Path]],
) -> GoldenUpdate:
    existed = any(_episode_files_or_empty(folder) for _, folder in golden_envs) or bool(
        _episode_files_or_empty(golden_dir)
    )
    written: list[Path] = []
    removed: list[Path] = []
    kept = set()
    for _, actual_env in actual_envs:
        kept.add(actual_env.name)
        update = _update_files(actual_env, golden_dir / actual_env.name)
        written += update.written
        removed += update.removed
    # Sub-envs that are gone, and the files of a single-env golden this replaces.
    stale = [folder for _, folder in golden_envs if folder.name not in kept]
    for folder in [*stale, golden_dir]:
        if folder == golden_dir and not actual_envs:
            continue
        for old in _episode_files_or_empty(folder):
            old.unlink()
            removed.append(old)
        if folder != golden_dir and not any(folder.iterdir()):
            folder.rmdir()
    if not actual_envs:
        # A single-env recording replaces a vector golden.
        update = _update_files(actual_dir, golden_dir)
        written += update.written
        removed += update.removed
    status: UpdateStatus = (
        "created" if not existed else "updated" if written or removed else "unchanged"
    )
    return GoldenUpdate(golden_dir, status, tuple(written), tuple(removed))


def _episode_files_or_empty(folder: Path) -> list[Path]:
    from gym_goldens.reader import _EPISODE_NAME

    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if _EPISODE_NAME.match(p.name))
