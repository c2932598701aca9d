"""What every command shares: its name, exit codes, usage errors, output.

Exit codes: 0 success (``diff``: equal within tolerance), 1 ``diff`` found a
difference (``audit``: an env failed), 2 unusable input, with a one-line
message on stderr and no traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final, Protocol, TypeAlias

from gym_goldens.errors import GoldensError
from gym_goldens.present.text import printable

__all__ = [
    "EXIT_DIFFERENT",
    "EXIT_ERROR",
    "EXIT_OK",
    "PROG",
    "Command",
    "Subcommands",
    "UsageError",
    "display",
    "error",
    "import_from_here",
    "print_lines",
]

PROG: Final = "gym-goldens"
EXIT_OK: Final = 0
EXIT_DIFFERENT: Final = 1
EXIT_ERROR: Final = 2

Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What ``add_subparsers`` returns: a command's parser is added to it."""


class Command(Protocol):
    """A module of one command: its parser and what it does."""

    def add_parser(self, commands: Subcommands) -> argparse.ArgumentParser:
        """Add the command's parser, with its options, to ``commands``."""

    def run(self, args: argparse.Namespace) -> int:
        """Do what the command line asks; return the exit code."""


class UsageError(GoldensError, ValueError):
    """An argument that cannot be used, with the reason."""


def import_from_here() -> None:
    """Let ``module:EnvId`` import a module of the current folder, as ``python -m`` does."""
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)


def display(path: Path | str) -> str:
    """A path as the user reads it: relative to the working folder when below it."""
    target = Path(path)
    try:
        return str(target.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(target)


def print_lines(lines: Sequence[str]) -> None:
    """Print lines to stdout, no control character left."""
    # The parts that came from the files are escaped where the text was put
    # together; this guard leaves no control character for any part missed.
    print(printable("\n".join(lines)))


def error(message: str, *, prefix: str = "error: ") -> None:
    """Print a one-line message to stderr, after the command's name."""
    print(f"{PROG}: {prefix}{printable(message)}", file=sys.stderr)
