"""Every file and folder name of the package: recordings, goldens and what sits beside them.

A recording is a folder holding ``trajectory.jsonl`` (``.jsonl.gz`` when
compressed); the recording of a vector env holds one such folder per sub-env,
``env_0/``, ``env_1/``, ... Folders of format 1, before the first release,
held one file per episode, ``episode_00000.jsonl``: their names are known so
that such a golden is refused, rewritten and pruned, never read.

A golden recording lives at::

    <goldens_dir>/<test file without .py, relative to the rootdir>/<test>/<name>/trajectory.jsonl

where ``<test>`` is the rest of the node id: one folder per ``::`` part (class,
test name with its parametrize id). Every part is made filesystem-safe by
:func:`safe_segment`, a mapping that is stable and one-to-one, so distinct
tests never share a golden. A golden kept per variant (``variant_by``) lives
in a folder named after the variant inside the plain golden folder.

Beside an actual recording the plugin writes ``divergence.png``; an artifact
folder holds ``report.txt``; the recordings of the extra runs of a
determinism check are ``run-<n>/`` (in ``gym-goldens audit``, inside a
``seed-<s>/`` folder per seed), and a fresh process that records tests leaves
``.recorded`` in the folder of each test it recorded whole; an atomic write goes through a temporary
file ``.<file name>.<host>-<pid>.<random>.tmp``, named after the process
that writes it, which an interrupted write may leave behind; an update of a
golden holds the lock file ``.trajectory.lock.tmp`` in its folder; the
goldens folder holds a ``.gitignore`` that keeps such files out of git's way.

When a folder holds both ``trajectory.jsonl`` and ``trajectory.jsonl.gz`` (an
update that changed the compression, killed between installing the new file
and removing the old one), the plain ``trajectory.jsonl`` is the one read:
either is a whole golden, and the plain one is the one a reviewer can read
in a diff. The next update removes the other.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
from pathlib import Path
from typing import Final

__all__ = [
    "ARTIFACT_REPORT",
    "DIVERGENCE_PLOT",
    "FRESH_RECORDED",
    "GITIGNORE",
    "GOLDENS_GITIGNORE",
    "HTML_REPORT",
    "RECORDING_FILE_GLOBS",
    "TRAJECTORY_NAME",
    "UPDATE_LOCK",
    "golden_dir_for",
    "golden_file_dir",
    "golden_path_dir",
    "golden_test_dir",
    "is_leftover_file_name",
    "is_recording_file_name",
    "is_trajectory_file_name",
    "leftover_owner",
    "run_dirname",
    "safe_segment",
    "seed_dirname",
    "sub_env_dirname",
    "sub_env_index",
    "temporary_prefix",
    "this_writer",
    "trajectory_filename",
    "variant_dir",
]

TRAJECTORY_NAME: Final = "trajectory.jsonl"
"""The file of a recording, in its folder (``.gz`` added when compressed)."""

DIVERGENCE_PLOT: Final = "divergence.png"
"""The file, next to an actual recording, that plots where it left its golden."""

ARTIFACT_REPORT: Final = "report.txt"
"""The failure text beside a recording copied by ``--goldens-artifacts``."""

FRESH_RECORDED: Final = ".recorded"
"""The file a fresh process leaves in the folder of a test whose body passed, all
recorded; no recording's folder is named so (:func:`safe_segment` escapes a leading dot)."""

HTML_REPORT: Final = "index.html"
"""The page ``--goldens-report=DIR`` writes in DIR."""

RECORDING_FILE_GLOBS: Final = ("trajectory.jsonl*", "episode_*.jsonl*")
"""Globs of the names a recording's files have, to find recordings below a folder."""

UPDATE_LOCK: Final = ".trajectory.lock.tmp"
"""The lock file an update of a golden holds in the golden's folder (see ``format/lock.py``)."""

GITIGNORE: Final = ".gitignore"
GOLDENS_GITIGNORE: Final = (
    "# Temporary files of gym-goldens' atomic writes, left by an interrupted update.\n.*.tmp\n"
)
"""The content of the ``.gitignore`` the plugin puts in a goldens folder."""

_TRAJECTORY: Final = re.compile(r"^trajectory\.jsonl(\.gz)?$")
_EPISODE: Final = re.compile(r"^episode_\d+\.jsonl(\.gz)?$")
_SUB_ENV: Final = re.compile(r"^env_(\d+)$")
# The temporary files of atomic writes, of this format and of format 1.
_LEFTOVER: Final = re.compile(r"^\.(?:trajectory|episode_\d+)\.jsonl(?:\.gz)?\..+\.tmp$")
# The owner part of a temporary file's name: host and process id.
_OWNER: Final = re.compile(r"\.([A-Za-z0-9_-]+)-(\d+)\.[^.]+\.tmp$")
_HOST_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_-]")

_SAFE: Final = re.compile(r"[A-Za-z0-9_\-.\[\]=+,@]")
_MAX_SEGMENT_BYTES: Final = 120
_HASH_CHARS: Final = 10
_RESERVED_WINDOWS: Final = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
)


def trajectory_filename(*, compress: bool = False) -> str:
    """The file name of a recording: ``trajectory.jsonl`` or ``trajectory.jsonl.gz``."""
    return TRAJECTORY_NAME + (".gz" if compress else "")


def is_trajectory_file_name(name: str) -> bool:
    """Whether ``name`` is that of a recording file of this format."""
    return _TRAJECTORY.match(name) is not None


def is_recording_file_name(name: str) -> bool:
    """Whether ``name`` is that of a recording file, of this format or of format 1."""
    return is_trajectory_file_name(name) or _EPISODE.match(name) is not None


def sub_env_dirname(index: int) -> str:
    """The folder of sub-env ``index`` in a vector recording: ``env_0``, ..."""
    return f"env_{index}"


def sub_env_index(name: str) -> int | None:
    """The sub-env index of a folder name (``env_3`` is 3), else None."""
    match = _SUB_ENV.match(name)
    return None if match is None else int(match.group(1))


def run_dirname(number: int) -> str:
    """The folder of the recordings of run ``number`` of a determinism check: ``run-2``."""
    return f"run-{number}"


def seed_dirname(seed: int) -> str:
    """The folder of the runs of one seed in ``gym-goldens audit``: ``seed-0``."""
    return f"seed-{seed}"


def temporary_prefix(name: str) -> str:
    """The start of the name of a temporary file that will become ``name``.

    It names the process that writes it (``.trajectory.jsonl.<host>-<pid>.``),
    so that a leftover can be told from a file another process is writing.
    """
    host, pid = this_writer()
    return f".{name}.{host}-{pid}."


def leftover_owner(name: str) -> tuple[str, int] | None:
    """The host and process id a temporary file's name gives, or None (an older name)."""
    match = _OWNER.search(name)
    return None if match is None else (match.group(1), int(match.group(2)))


def this_writer() -> tuple[str, int]:
    """The owner this process writes into the names of its temporary files: host and pid."""
    host = _HOST_UNSAFE.sub("_", socket.gethostname().split(".")[0]) or "host"
    return host, os.getpid()


def is_leftover_file_name(name: str) -> bool:
    """Whether ``name`` is that of a temporary file of an atomic write of a recording."""
    return _LEFTOVER.match(name) is not None


def _utf8(char: str) -> bytes:
    return char.encode("utf-8", "surrogatepass")


def safe_segment(text: str) -> str:
    """Map one part of a test id to a safe, unique file name.

    Letters, digits and ``_-.[]=+,@`` are kept; every other character is
    written as ``%XX`` (its UTF-8 bytes in hex; a lone surrogate, which has
    none, the bytes of its code point), ``%`` included, so the mapping is
    one-to-one. A leading dot is escaped, so no part is ``.`` or
    ``..`` or hidden, and a trailing dot is escaped (Windows drops it).
    Reserved Windows device names (``con``, ``nul``, ``com1``...) get a
    leading ``%``. Names that would exceed 120 bytes are cut and end in ``~``
    and a hash of the whole part, which keeps them unique and stable; no
    other name contains ``~``.

    Example:
        >>> safe_segment("test_x[Mountain/Car v0]")
        'test_x[Mountain%2FCar%20v0]'
    """
    # surrogatepass: a lone surrogate ("\ud800") has no UTF-8 bytes; it gets
    # the three of its code point, which no other character has.
    escaped = "".join(
        char if _SAFE.match(char) else "".join(f"%{b:02X}" for b in _utf8(char)) for char in text
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
    return golden_path_dir(goldens_dir, file_part)


def golden_path_dir(goldens_dir: Path, relative: str) -> Path:
    """The folder of the goldens under a path of the test tree (a folder, or a file without .py).

    Example:
        >>> golden_path_dir(Path("goldens"), "tests/unit")
        PosixPath('goldens/tests/unit')
    """
    return goldens_dir.joinpath(*(safe_segment(part) for part in relative.split("/") if part))


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


def variant_dir(plain: Path, label: str) -> Path:
    """The folder of a golden variant (``mujoco=3.1.2,machine=x86_64``) in its plain golden."""
    return plain / safe_segment(label)
