"""``gym-goldens diff``: a recording compared with its golden, the plugin's report printed.

Exit 0 when equal within tolerance, 1 when different.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gym_goldens.cli._common import (
    EXIT_DIFFERENT,
    EXIT_OK,
    PROG,
    Subcommands,
    display,
    print_lines,
)
from gym_goldens.cli._options import add_limit_option, add_tolerance_options, tolerance
from gym_goldens.cli._recordings import compare_recordings, diff_report
from gym_goldens.cli.frames import check_out_folder
from gym_goldens.comparison.result import Comparison
from gym_goldens.present.images import write_frame_diff
from gym_goldens.present.text import counted

__all__ = ["add_parser", "run"]


def add_parser(commands: Subcommands) -> argparse.ArgumentParser:
    """The parser of ``diff``."""
    diff = commands.add_parser(
        "diff",
        help="compare a recording with its golden",
        description="Compare ACTUAL with GOLDEN (recording folders or trajectory files; episodes "
        "are paired by their number) and print the report the pytest plugin prints. Exit 0 when "
        "equal within tolerance, 1 when different, 2 when an input cannot be read.",
    )
    diff.add_argument(
        "golden", type=Path, metavar="GOLDEN", help="the golden folder or trajectory file"
    )
    diff.add_argument(
        "actual", type=Path, metavar="ACTUAL", help="the recording to check, of the same kind"
    )
    add_tolerance_options(diff)
    diff.add_argument(
        "--images",
        type=Path,
        metavar="DIR",
        help="write golden.png, actual.png and diff.png of the first differing frame into DIR",
    )
    add_limit_option(diff)
    return diff


def run(args: argparse.Namespace) -> int:
    """Print whether ACTUAL matches GOLDEN, or the report of how it differs."""
    tol = tolerance(args)
    comparison = compare_recordings(args.golden, args.actual, tol, args.max_decompressed_size)
    if comparison.equal:
        count = comparison.episode_count
        print_lines(
            [
                f"equal: {display(args.actual)} matches {display(args.golden)} "
                f"({counted(count, 'episode')}; {tol.describe()})"
            ]
        )
        return EXIT_OK
    print_lines(
        [
            diff_report(comparison, args.golden),
            *_images(comparison, args.images),
            f"  plot it with: {PROG} plot {display(args.golden)} --vs {display(args.actual)}",
        ]
    )
    return EXIT_DIFFERENT


def _images(comparison: Comparison, folder: Path | None) -> list[str]:
    """With ``--images``: the three images of the first differing frame, written; their lines."""
    if folder is None:
        return []
    written = write_frame_diff(comparison, check_out_folder(folder, "--images"))
    if written is None:
        return ["  images: none written; no frame differs at the first divergence"]
    return [f"  {path.name}: {display(path)}" for path in written]
