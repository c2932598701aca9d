"""``gym-goldens show``: a recording or a folder of recordings summarised.

See :mod:`gym_goldens.present.summary`; ``--steps A:B`` prints records as a table.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Final

from gym_goldens.cli._common import EXIT_OK, Subcommands, UsageError, display, print_lines
from gym_goldens.cli._options import add_limit_option, fields
from gym_goldens.cli._recordings import WALKED, RecordProgress, checked, files_of
from gym_goldens.cli.frames import frame_fields
from gym_goldens.format.paths import find_recording_folders
from gym_goldens.format.reader import count_records, recording_files
from gym_goldens.present.summary import (
    MAX_EPISODE_ROWS,
    MAX_LISTED_EPISODES,
    format_folder,
    format_recording,
    format_steps,
    summarize,
)

__all__ = ["add_parser", "run"]

_ALL_HELP: Final = f"list every episode (the first {MAX_LISTED_EPISODES:,} of a longer recording)"


def add_parser(commands: Subcommands) -> argparse.ArgumentParser:
    """The parser of ``show``."""
    show = commands.add_parser(
        "show",
        help="summarise a recording or a goldens folder",
        description="Summarise a recording (a recording folder or a trajectory file) or a folder "
        "of recordings: episodes, steps and return per episode, spaces and fields.",
    )
    show.add_argument(
        "path",
        type=Path,
        metavar="PATH",
        help="a recording folder, a trajectory file or a goldens folder",
    )
    show.add_argument(
        "--steps",
        metavar="A:B",
        help="print the records with A <= t < B as a table (the reset is t=0)",
    )
    show.add_argument(
        "--episode",
        type=int,
        default=0,
        metavar="N",
        help="the episode for --steps, numbered from 0 in the recording (default 0)",
    )
    show.add_argument(
        "--fields",
        metavar="LIST",
        help="with --steps: the columns, as comma-separated field patterns (e.g. obs[2],info.*); "
        "by default action, reward, flags, obs and info, a column per key of a dict",
    )
    show.add_argument("--all", action="store_true", help=_ALL_HELP)
    add_limit_option(show)
    return show


def run(args: argparse.Namespace) -> int:
    """Print the summary, or the records of ``--steps``."""
    path: Path = args.path
    limit: int = args.max_decompressed_size
    if args.fields is not None and args.steps is None:
        raise UsageError("--fields chooses the columns of --steps; add --steps A:B")
    if path.is_dir() and not checked(path).files:
        return _show_folder(args)
    files = files_of(path)
    if args.steps is not None:
        start, stop = _step_range(args.steps)
        columns = fields(args.fields) if args.fields is not None else None
        print_lines(
            format_steps(
                path, start, stop, episode=args.episode, fields=columns, max_decompressed_size=limit
            )
        )
        return EXIT_OK
    with RecordProgress(
        lambda: count_records(files, max_decompressed_size=limit), "reading"
    ) as bar:
        rows = MAX_LISTED_EPISODES if args.all else MAX_EPISODE_ROWS
        summary = summarize(path, advance=bar.advance, rows=rows, max_decompressed_size=limit)
    print_lines([*format_recording(summary, display=display), *_frame_lines(path, limit)])
    return EXIT_OK


def _frame_lines(path: Path, limit: int) -> list[str]:
    """The fields that hold frames (PNG files): how many, their shapes; none without frames."""
    fields, more = frame_fields(path, limit)
    if not fields:
        return []
    names = [field.name() for field in fields]
    width = max(11, *(len(name) + 1 for name in names))
    return [
        "",
        "  frames (PNG files; export them with gym-goldens frames):",
        *(
            f"    {name:<{width}} {field.describe()}"
            for name, field in zip(names, fields, strict=True)
        ),
        *([f"    and more fields, past the first {len(fields)}"] if more else []),
    ]


def _show_folder(args: argparse.Namespace) -> int:
    """A folder of recordings: a summary of each."""
    path: Path = args.path
    limit: int = args.max_decompressed_size
    if args.steps is not None:
        raise UsageError(
            f"{path} is a folder of recordings; give --steps one recording folder or "
            "trajectory file"
        )
    recordings = find_recording_folders(path, within=WALKED)
    if not recordings:
        raise UsageError(f"{path}: no recording (trajectory.jsonl) in this folder or below")
    files = [file for folder in recordings for file in recording_files(folder)]
    with RecordProgress(
        lambda: count_records(files, max_decompressed_size=limit), "reading"
    ) as bar:
        summaries = [
            summarize(folder, advance=bar.advance, max_decompressed_size=limit)
            for folder in recordings
        ]
    print_lines(format_folder(path, summaries, display=display))
    return EXIT_OK


def _reading(files: list[Path], limit: int) -> RecordProgress:
    """A progress bar over every record of ``files``."""
    return RecordProgress(lambda: count_records(files, max_decompressed_size=limit), "reading")


def _step_range(text: str) -> tuple[int, int | None]:
    start_text, colon, stop_text = text.partition(":")
    try:
        start = int(start_text) if start_text.strip() else 0
        if not colon:
            return start, start + 1
        stop = int(stop_text) if stop_text.strip() else None
    except ValueError:
        raise UsageError(f"--steps expects A:B (such as 10:20, :5 or 100:), got {text!r}") from None
    if start < 0 or (stop is not None and stop < start):
        raise UsageError(f"--steps expects 0 <= A <= B, got {text!r}")
    return start, stop
