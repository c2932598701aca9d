"""The ``gym-goldens`` command: inspect, diff, plot, record and audit trajectories.

A thin argparse layer over the library, one module per command:
``show`` (:mod:`gym_goldens.present.summary`), ``diff``
(:func:`gym_goldens.compare` and the report the pytest plugin prints),
``plot`` (:mod:`gym_goldens.present.viz`), ``frames`` (frames as PNG
files and GIFs, :mod:`gym_goldens.present.images`), ``record``
(:mod:`gym_goldens.record.rollouts`) and ``audit``
(:mod:`gym_goldens.audit.survey`). Each module has ``add_parser(commands)``
and ``run(args) -> int``; a new command is a new module listed in
:data:`COMMANDS`. What they share is in ``_common`` (exit codes, usage
errors, output), ``_options`` (tolerance and size options) and
``_recordings`` (recordings named on the command line, a progress bar).

A recording is a folder holding ``trajectory.jsonl`` (every episode, one
after another) or that file alone; episodes are chosen by their number in it.
A golden of a pre-release format is refused with the command that rewrites it.

Exit codes: 0 success (``diff``: equal within tolerance), 1 ``diff`` found a
difference (``audit``: an env is nondeterministic, erred or failed
``check_env``), 2 unusable input (unreadable file, bad argument, missing
dependency, no env matches), with a one-line message on stderr and no traceback.

Recordings may come from anyone (goldens arrive in pull requests): what the
command prints from them is escaped (:mod:`gym_goldens.present.text`), and a
compressed recording may expand to 1 GiB at most (``--max-decompressed-size``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Final

import gym_goldens
from gym_goldens.cli import audit, diff, frames, plot, record, show
from gym_goldens.cli._common import EXIT_ERROR, PROG, Command, error, import_from_here
from gym_goldens.errors import GoldensError

__all__ = ["COMMANDS", "main"]

COMMANDS: Final[tuple[Command, ...]] = (show, diff, plot, frames, record, audit)
"""The commands, in the order ``--help`` lists them."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code.

    Example:
        >>> main(["diff", "no/such/golden", "no/such/actual"])
        2
    """
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse has printed the usage and the problem
        return exit_.code if isinstance(exit_.code, int) else EXIT_ERROR
    command: Callable[[argparse.Namespace], int] = args.run
    import_from_here()  # env ids (module:EnvId) and --import modules of this folder
    try:
        return command(args)
    except GoldensError as problem:
        error(str(problem))
        return EXIT_ERROR
    except OSError as problem:
        where = f"{problem.filename}: " if problem.filename else ""
        error(f"{where}{problem.strerror or problem}")
        return EXIT_ERROR
    except RecursionError:
        # What the readers and the report show is bounded in depth; this is
        # the guard for a part that is not, so that a hostile file still
        # gets a message and exit code 2, not a traceback.
        error("a recording holds values nested too deeply to be shown")
        return EXIT_ERROR
    except KeyboardInterrupt:
        error("interrupted", prefix="")
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Inspect, diff, plot and record Gymnasium trajectories and goldens.",
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {gym_goldens.__version__}"
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.add_parser(commands).set_defaults(run=command.run)
    return parser
