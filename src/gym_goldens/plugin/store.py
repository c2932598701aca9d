"""Writing goldens: ``--update-goldens`` puts a recording in its golden's place.

A golden is rewritten only when it no longer holds the recording: when the
fresh recording differs from it beyond the test's own tolerances and ignore
patterns, when it is of an older format version, or when it was kept with
other storage settings (``max_array_size``, ``full_every``, compression).
A golden that still matches is left untouched, content and mtime, so that an
update on another machine, or with noise inside tolerance, leaves ``git
status`` clean. ``--update-goldens-all`` rewrites every golden whose bytes are
not the fresh recording's.

Goldens are written atomically (:func:`gym_goldens.format.files.install_recording`):
the recording file goes to a temporary file in its own folder and is renamed
into place, so an interrupted update leaves the golden of a single env either
old or new as a whole, never partial (the golden of a vector env: each
sub-env's file).

A golden of a pre-release format is refused when read; updating it writes
``trajectory.jsonl`` and then removes format 1's episode files, if any.

A golden about to be created or rewritten (one that does not
:func:`hold <holds>` the recording) waits, as a :class:`PendingGolden`, for a
fresh process to record the test alike (:mod:`gym_goldens.plugin.pending`),
unless the test is recorded once.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Final

from gym_goldens.comparison.engine import compare
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.files import Installed, install_recording, same_bytes
from gym_goldens.format.header import FORMAT_VERSION
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.format.paths import GoldenFolder, resolve_recording

__all__ = [
    "PendingGolden",
    "holds",
    "still_matches",
    "update_golden",
]

_EXACT: Final = Tolerance(rtol=0.0, atol=0.0)


@dataclasses.dataclass(frozen=True)
class PendingGolden:
    """A golden an update is about to write (once a fresh process records the same, if it waits).

    Attributes:
        nodeid: The golden node id of its test.
        name: The recording's name in the test.
        actual_dir: The recording to write.
        target: The golden folder to write it in.
        tolerance: The test's tolerance of the recording.
        run: The number of this process's run in the test's determinism
            check (the fresh process's run is the next).
    """

    nodeid: str
    name: str
    actual_dir: Path
    target: Path
    tolerance: Tolerance
    run: int = 1


def update_golden(
    actual_dir: Path,
    golden_dir: Path,
    *,
    goldens_dir: Path | None = None,
    tolerance: Tolerance | None = None,
    rewrite: bool = False,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> Installed:
    """Make ``golden_dir`` hold the recording of ``actual_dir``, unless it still does.

    Args:
        actual_dir: The new recording.
        golden_dir: The golden folder to update.
        goldens_dir: The goldens root; when given, nothing is read or written
            unless it lies inside it.
        tolerance: The test's tolerance: a golden that the recording matches
            within it (and of this format version and storage settings) is
            kept. Exact when None.
        rewrite: Rewrite the golden unless its bytes are the recording's
            (``--update-goldens-all``).
        max_decompressed_size: What the existing golden (compressed) may
            expand to when read; one that expands further is replaced.

    Raises:
        GoldenFormatError: An existing golden entry is in the way (a folder
            where the recording file should be, a file where the golden
            folder should be); it is left as it is.
        UnsafeGoldenPathError: ``golden_dir`` or one of its files resolves
            outside ``goldens_dir``.
    """
    tolerance = tolerance or _EXACT
    limit = max_decompressed_size
    actual = resolve_recording(actual_dir, max_decompressed_size=limit)

    def is_current(golden_file: Path, source: GoldenFolder) -> bool:
        if rewrite:
            return same_bytes(golden_file, source.files[0])
        # The install found the file, under the golden's lock, by the one path check.
        golden = GoldenFolder(golden_file.parent, (golden_file,), max_decompressed_size=limit)
        return still_matches(golden, source, tolerance, limit)

    return install_recording(actual, golden_dir, is_current=is_current, root=goldens_dir)


def holds(
    actual: GoldenFolder,
    golden: GoldenFolder,
    *,
    tolerance: Tolerance,
    rewrite: bool = False,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> bool:
    """Whether an update would leave ``golden`` as it is: it holds the recording already.

    The rule of :func:`update_golden`, for a whole recording folder (every
    sub-env's file of a vector recording): the same files, each matching
    within ``tolerance`` (of this format and storage), or of the same bytes
    with ``rewrite``.
    """
    golden_files, actual_files = golden.all_files, actual.all_files
    names = [file.relative_to(golden.path) for file in golden_files]
    if not golden_files or names != [file.relative_to(actual.path) for file in actual_files]:
        return False
    if rewrite:
        return all(map(same_bytes, golden_files, actual_files))
    return still_matches(golden, actual, tolerance, max_decompressed_size)


def still_matches(
    golden: GoldenFolder,
    actual: GoldenFolder,
    tolerance: Tolerance,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> bool:
    """Whether a golden still holds a recording: it matches within ``tolerance``.

    And the golden is of this format version, with the storage settings of
    the recording: a golden of an older version, or kept with another
    ``max_array_size``, ``full_every`` or compression, is rewritten.

    Args:
        golden: The golden (a folder, or its recording file).
        actual: The recording (a folder, or its recording file).
        tolerance: The test's tolerance.
        max_decompressed_size: What the golden (compressed) may expand to
            when read; one that expands further does not match.
    """
    try:
        if golden.header is None or actual.header is None:
            return False
        same_format = golden.version == FORMAT_VERSION and golden.header.get(
            "storage"
        ) == actual.header.get("storage")
        same_files = [file.name for file in golden.all_files] == [
            file.name for file in actual.all_files
        ]
        limit = max_decompressed_size
        return (
            same_format
            and same_files
            and compare(golden, actual, tolerance, max_decompressed_size=limit).equal
        )
    except GoldenFormatError:
        return False  # an unreadable golden is replaced (a refused one is not: the error stands)
