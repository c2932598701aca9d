"""Options more than one command takes, and their values checked.

An option's value that cannot be used is a :class:`UsageError` naming the
option and the form it expects.
"""

from __future__ import annotations

import argparse
from typing import Final

from gym_goldens.cli._common import UsageError
from gym_goldens.comparison.defaults import DEFAULT_ATOL, DEFAULT_RTOL
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.format.fields import parse_pattern
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE, format_size, parse_size

__all__ = ["add_limit_option", "add_tolerance_options", "fields", "tolerance"]

_RTOL_HELP: Final = (
    f"relative tolerance, for all fields or a field pattern (repeatable; default {DEFAULT_RTOL:g})"
)
_ATOL_HELP: Final = (
    f"absolute tolerance, for all fields or a field pattern (repeatable; default {DEFAULT_ATOL:g})"
)
_IGNORE_HELP: Final = "leave a field pattern out (repeatable)"


def add_limit_option(parser: argparse.ArgumentParser) -> None:
    """``--max-decompressed-size``: the most a compressed recording may expand to."""
    parser.add_argument(
        "--max-decompressed-size",
        type=_size,
        default=DEFAULT_MAX_DECOMPRESSED_SIZE,
        metavar="SIZE",
        help="the most a compressed recording (.jsonl.gz) may expand to when read, such as "
        f"512MiB or 4GiB (default {format_size(DEFAULT_MAX_DECOMPRESSED_SIZE)}); a larger one "
        "is refused",
    )


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_tolerance_options(
    parser: argparse.ArgumentParser,
    *,
    rtol: str = _RTOL_HELP,
    atol: str = _ATOL_HELP,
    ignore: str = _IGNORE_HELP,
) -> None:
    """``--rtol``, ``--atol`` and ``--ignore``, with their help (the comparison's by default)."""
    for name, help_ in (("--rtol", rtol), ("--atol", atol)):
        parser.add_argument(name, action="append", default=[], metavar="[FIELD=]X", help=help_)
    parser.add_argument("--ignore", action="append", default=[], metavar="FIELD", help=ignore)


def tolerance(args: argparse.Namespace, base: Tolerance | None = None) -> Tolerance:
    """``base`` (the defaults if None) refined by --rtol, --atol and --ignore."""
    result = base or Tolerance()
    try:
        for spec in args.rtol:
            result = result.refine(rtol=_tolerance_spec("rtol", spec))
        for spec in args.atol:
            result = result.refine(atol=_tolerance_spec("atol", spec))
        ignored = [p.strip() for item in args.ignore for p in item.split(",") if p.strip()]
        return result.refine(ignore=ignored)
    except (TypeError, ValueError) as error:
        raise UsageError(str(error)) from None


def _tolerance_spec(name: str, spec: str) -> float | dict[str, float]:
    pattern, _, number = spec.rpartition("=")
    try:
        value = float(number)
    except ValueError:
        raise UsageError(f"--{name} expects a number or FIELD=NUMBER, got {spec!r}") from None
    return {pattern: value} if pattern else value


def fields(text: str) -> list[str]:
    """The field patterns of ``--fields``, each checked."""
    patterns = [field.strip() for field in text.split(",") if field.strip()]
    if not patterns:
        raise UsageError("--fields needs at least one field, such as obs,reward")
    for pattern in patterns:
        try:
            parse_pattern(pattern)
        except ValueError as error:
            raise UsageError(f"--fields: {error}") from None
    return patterns
