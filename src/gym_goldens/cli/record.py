"""``gym-goldens record``: a seeded random rollout of a registered env recorded.

See :mod:`gym_goldens.record.rollouts`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from gym_goldens.cli._common import EXIT_OK, Subcommands, UsageError, display, print_lines
from gym_goldens.present.progress import Progress
from gym_goldens.present.text import counted
from gym_goldens.record.rollouts import record_rollout

__all__ = ["add_parser", "run"]


def add_parser(commands: Subcommands) -> argparse.ArgumentParser:
    """The parser of ``record``."""
    record = commands.add_parser(
        "record",
        help="record a seeded random rollout of a registered env",
        description="Record a seeded random rollout of any registered env (ids such as "
        "CartPole-v1, or module:EnvId to import the module that registers it).",
    )
    record.add_argument("env_id", metavar="ENV_ID", help="a registered env id, such as CartPole-v1")
    record.add_argument(
        "--seed", type=int, required=True, metavar="S", help="seeds the reset and the actions"
    )
    record.add_argument(
        "--steps", type=int, required=True, metavar="N", help="steps to record, over all episodes"
    )
    record.add_argument(
        "-o", "--output", type=Path, required=True, metavar="DIR", help="the recording folder"
    )
    record.add_argument(
        "--env-kwargs",
        default="{}",
        metavar="JSON",
        help="keyword arguments of gym.make, e.g. '{\"is_slippery\": false}'",
    )
    return record


def run(args: argparse.Namespace) -> int:
    """Record the rollout; print what was recorded and where."""
    kwargs = _env_kwargs(args.env_kwargs)
    if args.steps < 0:
        raise UsageError(f"--steps must be 0 or more, got {args.steps}")
    with Progress(args.steps, f"recording {args.env_id}") as bar:
        rollout = record_rollout(
            args.env_id,
            args.output,
            seed=args.seed,
            steps=args.steps,
            env_kwargs=kwargs,
            advance=bar.advance,
        )
    episodes = counted(rollout.episodes, "episode")
    print_lines(
        [
            f"recorded {rollout.steps:,} steps of {args.env_id} (seed {args.seed}) in "
            f"{episodes}: {display(rollout.output_dir)} ({rollout.status})"
        ]
    )
    return EXIT_OK


def _env_kwargs(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"--env-kwargs is not valid JSON ({error}): {text!r}") from None
    if not isinstance(value, dict):
        raise UsageError(
            f'--env-kwargs expects a JSON object such as {{"is_slippery": false}}, got {text!r}'
        )
    return value
