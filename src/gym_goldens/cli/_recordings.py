"""Recordings named on the command line: their files, compared, read with a progress bar.

A path typed on the command line may be a symlink; no symlink inside a folder
it names is followed.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Final

from gym_goldens.cli._common import UsageError, display
from gym_goldens.comparison.engine import compare
from gym_goldens.comparison.result import Comparison
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.format.paths import GoldenFolder, resolve_recording
from gym_goldens.format.reader import count_episode_records
from gym_goldens.present.progress import Progress, is_terminal
from gym_goldens.present.report import format_comparison

__all__ = [
    "WALKED",
    "RecordProgress",
    "checked",
    "chosen_sizes",
    "compare_recordings",
    "diff_report",
    "files_of",
]

WALKED: Final = "a folder named on its command line"
"""Where a symlink met is not followed (one named on the command line is)."""
_FIX: Final = "pytest --update-goldens, in the project the golden belongs to"
# The folder goldens live in by default: a diff against a recording below one gets the update
# command; two recordings made by hand get none.
_GOLDENS: Final = "goldens"


def files_of(path: Path) -> list[Path]:
    """The files of a recording; of every sub-env, in order, for a vector env's."""
    return list(checked(path).all_files)


def checked(path: Path, limit: int = DEFAULT_MAX_DECOMPRESSED_SIZE) -> GoldenFolder:
    """A recording typed on the command line, checked: no symlink inside its folder followed."""
    return resolve_recording(path, within=WALKED, max_decompressed_size=limit)


def compare_recordings(golden: Path, actual: Path, tolerance: Tolerance, limit: int) -> Comparison:
    """``actual`` compared with ``golden``, with a progress bar by pairs of episodes."""
    first, second = checked(golden, limit), checked(actual, limit)
    sides = [first.all_files, second.all_files]
    for path, files in zip((golden, actual), sides, strict=True):
        if not files:
            raise UsageError(f"{path}: no recording (trajectory.jsonl) in this folder")
    with RecordProgress(
        lambda: sum(_episode_sizes(sides, limit)),
        "comparing",
        units=lambda: _episode_sizes(sides, limit),
    ) as bar:
        return compare(
            first,
            second,
            tolerance,
            progress=lambda _: bar.advance_unit(),
            max_decompressed_size=limit,
        )


def diff_report(comparison: Comparison, golden: Path) -> str:
    """The report of a diff; the update command only for a golden (a path under goldens/)."""
    is_golden = _GOLDENS in golden.absolute().parts[:-1]
    return format_comparison(
        comparison, display=display, fix=_FIX, fix_label="update with" if is_golden else None
    )


def _episode_sizes(sides: Sequence[Sequence[Path]], limit: int) -> Iterator[int]:
    """The records of each episode, over the recordings' files, read as they are asked for.

    Episodes of the same number in each recording are one unit of work.
    """
    counts = [count_episode_records(files, max_decompressed_size=limit) for files in sides]
    return map(sum, itertools.zip_longest(*counts, fillvalue=0))


def chosen_sizes(sides: Sequence[Sequence[Path]], episodes: Sequence[int], limit: int) -> int:
    """The records of the chosen episodes, over the recordings' files, all together."""
    wanted = set(episodes)
    sizes = itertools.islice(_episode_sizes(sides, limit), max(episodes, default=-1) + 1)
    return sum(size for index, size in enumerate(sizes) if index in wanted)


class RecordProgress:
    """A progress bar over the records of recordings, counted only on a terminal.

    Args:
        count: Gives the number of records to read; called only where a bar
            is drawn, as counting reads the files once more.
        label: What is being done.
        units: Gives the records of each unit of work in turn (an episode,
            or a pair of them), for :meth:`advance_unit`; read along with
            the work, so that nothing is kept per unit.
    """

    def __init__(
        self,
        count: Callable[[], int],
        label: str,
        *,
        units: Callable[[], Iterator[int]] | None = None,
    ) -> None:
        # Counting lines is fast next to parsing them, and skipped when no bar is drawn.
        shown = is_terminal(sys.stderr)
        self._units = units() if shown and units is not None else iter(())
        self._bar = Progress(count() if shown else 0, label, unit="records")

    def advance(self, count: int) -> None:
        """Count ``count`` more records read."""
        self._bar.advance(count)

    def advance_unit(self) -> None:
        """Count the next unit of work done."""
        self._bar.advance(next(self._units, 0))

    def __enter__(self) -> RecordProgress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._bar.close()
