"""``gym-goldens audit``: every registered env that matches checked for determinism.

See :mod:`gym_goldens.audit.survey`; the table is
:mod:`gym_goldens.present.table`'s. Exit 1 when an env is nondeterministic,
erred or failed ``check_env``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Final

from gym_goldens.audit.pettingzoo import select_pettingzoo
from gym_goldens.audit.registry import Selection, select_envs
from gym_goldens.audit.survey import DEFAULT_TIMEOUT, AuditSettings, audit_envs, audit_failed
from gym_goldens.cli._common import (
    EXIT_DIFFERENT,
    EXIT_OK,
    PROG,
    Subcommands,
    UsageError,
    display,
    print_lines,
)
from gym_goldens.cli._options import add_tolerance_options, tolerance
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.present.progress import Progress
from gym_goldens.present.table import audit_json, format_table
from gym_goldens.present.verdicts import AuditRow

__all__ = ["add_parser", "run"]

_TIMEOUT_HELP: Final = (
    f"stop the audit of an env that takes longer than this many seconds: an error row "
    f"(default {DEFAULT_TIMEOUT:g}; 0 for no limit)"
)


def add_parser(commands: Subcommands) -> argparse.ArgumentParser:
    """The parser of ``audit``."""
    audit = commands.add_parser(
        "audit",
        help="check every registered env that matches for determinism",
        description="Check the registered envs that match PATTERN for determinism: for each env "
        "and seed, the seeded random rollout runs twice in this process and once in a fresh "
        "process with another PYTHONHASHSEED, and the recordings are compared (exactly, unless "
        "--rtol/--atol say otherwise); then gymnasium's check_env runs on the unwrapped env. "
        "Envs are selected as registered_envs selects them. Exit 0 when every env that ran is "
        "deterministic and passed its check, 1 when one is not, errs or fails check_env, 2 on "
        "bad usage or when no env matches.",
    )
    _add_selection_options(audit)
    audit.add_argument(
        "--steps", type=int, default=100, metavar="N", help="steps of each rollout (default 100)"
    )
    audit.add_argument(
        "--seeds", default="0", metavar="LIST", help="comma-separated seeds (default 0)"
    )
    add_tolerance_options(
        audit,
        rtol="relative tolerance between runs, for all fields or a field pattern (repeatable; "
        "default 0: runs must be equal)",
        atol="absolute tolerance between runs, likewise (repeatable; default 0)",
        ignore="leave a field pattern out of the comparison, such as info.time (repeatable)",
    )
    audit.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="audit envs in N worker processes (default 1: in this process)",
    )
    audit.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS", help=_TIMEOUT_HELP
    )
    audit.add_argument(
        "--json", type=Path, metavar="FILE", help="also write the table as JSON to FILE, for CI"
    )
    audit.add_argument(
        "--api-test",
        action="store_true",
        help="with --pettingzoo: also run PettingZoo's api_test on each env",
    )
    audit.add_argument(
        "--no-check-env",
        dest="check_env",
        action="store_false",
        help="do not run gymnasium's check_env",
    )
    return audit


def _add_selection_options(audit: argparse.ArgumentParser) -> None:
    """The options that choose the envs: patterns, modules to import, exclusions."""
    audit.add_argument(
        "patterns",
        nargs="+",
        metavar="PATTERN",
        help="case-sensitive globs on env ids, namespace included (MiniGrid-*, Planted/*)",
    )
    audit.add_argument(
        "--import",
        dest="import_modules",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE first, to register its envs (repeatable; modules of the current "
        "folder import as with python -m)",
    )
    audit.add_argument(
        "--exclude", action="append", default=[], metavar="GLOB", help="leave ids out (repeatable)"
    )
    audit.add_argument(
        "--entry-point",
        metavar="GLOB",
        help="only ids whose entry point (module:Class) matches, e.g. 'minigrid.envs.wfc*'",
    )
    audit.add_argument(
        "--pettingzoo",
        action="store_true",
        help="the PATTERNs select PettingZoo's envs, by family/module (classic/*, "
        "classic/rps_v2), as pettingzoo_envs selects them; each env() (AEC) is audited",
    )


def run(args: argparse.Namespace) -> int:
    """Audit the envs selected; print the table (and write it as JSON with --json)."""
    settings = _settings(args)
    selection = _selection(args, settings)
    runs = sum(env.kind == "ok" for env in selection.envs)
    print(f"{PROG} audit: {settings.describe(len(selection.envs), runs)}", flush=True)
    started = time.perf_counter()
    with Progress(runs, "auditing", unit="envs", threshold=1) as bar:
        rows = audit_envs(selection, settings, jobs=args.jobs, advance=lambda _: bar.advance())
    seconds = time.perf_counter() - started
    left_out = {env.id: env.reason or "" for env in selection.left_out}
    code = EXIT_DIFFERENT if audit_failed(rows) else EXIT_OK
    print()
    print_lines(format_table(rows, left_out=left_out, seconds=seconds))
    if args.json is not None:
        _write_json(args, settings, rows, left_out=left_out, seconds=seconds, code=code)
    return code


def _selection(args: argparse.Namespace, settings: AuditSettings) -> Selection:
    """The envs the patterns select: registered Gymnasium envs, or PettingZoo's."""
    if settings.pettingzoo:
        return select_pettingzoo(*args.patterns, exclude=args.exclude)
    return select_envs(
        *args.patterns,
        exclude=args.exclude,
        entry_point=args.entry_point,
        import_modules=settings.import_modules,
        spell_imports=lambda modules: " ".join(f"--import {name}" for name in modules),
    )


def _settings(args: argparse.Namespace) -> AuditSettings:
    """The audit's settings from its options, each checked."""
    if args.steps < 0:
        raise UsageError(f"--steps must be 0 or more, got {args.steps}")
    if args.jobs < 1:
        raise UsageError(f"--jobs must be 1 or more, got {args.jobs}")
    if not args.timeout >= 0:
        raise UsageError(f"--timeout must be 0 (no limit) or more seconds, got {args.timeout}")
    if args.api_test and not args.pettingzoo:
        raise UsageError("--api-test runs PettingZoo's api_test; add --pettingzoo")
    for option, given in (("--entry-point", args.entry_point), ("--import", args.import_modules)):
        if args.pettingzoo and given:
            raise UsageError(
                f"{option} applies to registered Gymnasium envs; PettingZoo's are chosen by "
                "family/module, such as classic/*"
            )
    return AuditSettings(
        seeds=_seeds(args.seeds),
        steps=args.steps,
        # The runs of one seed must be equal, unless --rtol, --atol or --ignore say otherwise.
        tolerance=tolerance(args, base=Tolerance(rtol=0.0, atol=0.0)),
        check_env=args.check_env and not args.pettingzoo,
        import_modules=tuple(args.import_modules),
        timeout=args.timeout or None,
        pettingzoo=args.pettingzoo,
        api_test=args.api_test,
    )


def _write_json(
    args: argparse.Namespace,
    settings: AuditSettings,
    rows: list[AuditRow],
    *,
    left_out: dict[str, str],
    seconds: float,
    code: int,
) -> None:
    """The table as JSON, with the options that made it, to ``--json``'s file."""
    options = {
        "patterns": args.patterns,
        "exclude": args.exclude,
        "entry_point": args.entry_point,
        "jobs": args.jobs,
        **settings.as_json(),
    }
    data = audit_json(rows, left_out=left_out, settings=options, seconds=seconds, exit_code=code)
    args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {display(args.json)}")


def _seeds(text: str) -> tuple[int, ...]:
    try:
        seeds = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise UsageError(
            f"--seeds expects comma-separated integers such as 0,1, got {text!r}"
        ) from None
    if not seeds:
        raise UsageError(f"--seeds expects at least one seed, such as 0, got {text!r}")
    return tuple(dict.fromkeys(seeds))
