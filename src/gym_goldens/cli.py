"""The ``gym-goldens`` command: inspect, diff, plot and record trajectories.

A thin argparse layer over the library: ``show`` (:mod:`gym_goldens.present.summary`),
``diff`` (:func:`gym_goldens.compare` and the report the pytest plugin
prints), ``plot`` (:mod:`gym_goldens.present.viz`), ``record``
(:mod:`gym_goldens.record.rollouts`) and ``audit`` (:mod:`gym_goldens.audit.survey`).

A recording is a folder holding ``trajectory.jsonl`` (every episode, one
after another) or that file alone; episodes are chosen by their number in it.
Folders of format 1, a file per episode, read the same way.

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
import itertools
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import gym_goldens
from gym_goldens.audit.registry import select_envs
from gym_goldens.audit.survey import DEFAULT_TIMEOUT, AuditSettings, audit_envs, audit_failed
from gym_goldens.comparison.defaults import DEFAULT_ATOL, DEFAULT_RTOL
from gym_goldens.comparison.engine import compare
from gym_goldens.comparison.result import Comparison, EpisodeComparison
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.errors import GoldensError
from gym_goldens.format.fields import parse_pattern
from gym_goldens.format.files import atomic_write_bytes
from gym_goldens.format.layout import is_trajectory_file_name
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE, format_size, parse_size
from gym_goldens.format.paths import (
    GoldenFolder,
    find_recording_folders,
    resolve_golden,
    symlink_error,
)
from gym_goldens.format.reader import count_episode_records, count_records, recording_files
from gym_goldens.present import viz
from gym_goldens.present.html import Mismatch, render_page, write_page
from gym_goldens.present.progress import Progress, is_terminal
from gym_goldens.present.report import format_comparison
from gym_goldens.present.summary import (
    MAX_EPISODE_ROWS,
    MAX_LISTED_EPISODES,
    format_folder,
    format_recording,
    format_steps,
    summarize,
)
from gym_goldens.present.table import audit_json, format_table
from gym_goldens.present.text import counted, printable
from gym_goldens.record.rollouts import record_rollout

__all__ = ["main"]

_PROG: Final = "gym-goldens"
_MAX_HTML_EPISODES: Final = 5
_EXIT_OK: Final = 0
_EXIT_DIFFERENT: Final = 1
_EXIT_ERROR: Final = 2
_FIX: Final = "pytest --update-goldens, in the project the golden belongs to"
# Where a symlink met is not followed (one named on the command line is).
_WALKED: Final = "a folder named on its command line"
# The folder goldens live in by default: a diff against a recording below one gets the update
# command; two recordings made by hand get none.
_GOLDENS: Final = "goldens"
_ALL_HELP: Final = f"list every episode (the first {MAX_LISTED_EPISODES:,} of a longer recording)"


class _UsageError(GoldensError, ValueError):
    """An argument that cannot be used, with the reason."""


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
        return exit_.code if isinstance(exit_.code, int) else _EXIT_ERROR
    command: Callable[[argparse.Namespace], int] = args.run
    try:
        return command(args)
    except GoldensError as error:
        _error(str(error))
        return _EXIT_ERROR
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        _error(f"{where}{error.strerror or error}")
        return _EXIT_ERROR
    except RecursionError:
        # What the readers and the report show is bounded in depth; this is
        # the guard for a part that is not, so that a hostile file still
        # gets a message and exit code 2, not a traceback.
        _error("a recording holds values nested too deeply to be shown")
        return _EXIT_ERROR
    except KeyboardInterrupt:
        _error("interrupted", prefix="")
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_PROG,
        description="Inspect, diff, plot and record Gymnasium trajectories and goldens.",
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {gym_goldens.__version__}"
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)

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
    _add_limit_option(show)
    show.set_defaults(run=_show)

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
    _add_tolerance_options(diff)
    _add_limit_option(diff)
    diff.set_defaults(run=_diff)

    plot = commands.add_parser(
        "plot",
        help="plot the fields of a recording over time, or golden vs actual",
        description="Plot each field of an episode over time. With --vs, overlay golden (PATH) and "
        "actual (OTHER), mark each field's first divergence and plot their difference. Needs "
        'matplotlib: pip install "pytest-gym-goldens[viz]".',
    )
    plot.add_argument(
        "path",
        type=Path,
        metavar="PATH",
        help="a recording folder or a trajectory file (the golden, with --vs)",
    )
    plot.add_argument(
        "--vs", type=Path, metavar="OTHER", help="the actual recording to compare with PATH"
    )
    plot.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="FILE",
        help="out.png (or .svg, .pdf) for the figure; out.html for a page with the report and "
        "figures (default: <recording name>.png)",
    )
    plot.add_argument(
        "--fields",
        default="obs,action,reward",
        metavar="LIST",
        help="comma-separated field patterns (default obs,action,reward; e.g. obs[2],info.x)",
    )
    plot.add_argument(
        "--episode",
        type=int,
        metavar="N",
        help="the episode, numbered from 0 in the recording (default: the first that differs, "
        "else 0)",
    )
    _add_tolerance_options(plot)
    _add_limit_option(plot)
    plot.set_defaults(run=_plot)

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
    record.set_defaults(run=_record)
    _add_audit_command(commands)
    return parser


def _add_limit_option(parser: argparse.ArgumentParser) -> None:
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


def _add_tolerance_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rtol",
        action="append",
        default=[],
        metavar="[FIELD=]X",
        help="relative tolerance, for all fields or a field pattern "
        f"(repeatable; default {DEFAULT_RTOL:g})",
    )
    parser.add_argument(
        "--atol",
        action="append",
        default=[],
        metavar="[FIELD=]X",
        help="absolute tolerance, for all fields or a field pattern "
        f"(repeatable; default {DEFAULT_ATOL:g})",
    )
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="FIELD",
        help="leave a field pattern out (repeatable)",
    )


# Commands


def _show(args: argparse.Namespace) -> int:
    path: Path = args.path
    limit: int = args.max_decompressed_size
    if args.fields is not None and args.steps is None:
        raise _UsageError("--fields chooses the columns of --steps; add --steps A:B")
    if path.is_dir() and not _checked(path).files:
        if args.steps is not None:
            raise _UsageError(
                f"{path} is a folder of recordings; give --steps one recording folder or "
                "trajectory file"
            )
        recordings = find_recording_folders(path, within=_WALKED)
        if not recordings:
            raise _UsageError(f"{path}: no recording (trajectory.jsonl) in this folder or below")
        files = [file for folder in recordings for file in recording_files(folder)]
        with _RecordProgress(
            lambda: count_records(files, max_decompressed_size=limit), "reading"
        ) as bar:
            summaries = [
                summarize(folder, advance=bar.advance, max_decompressed_size=limit)
                for folder in recordings
            ]
        _print_lines(format_folder(path, summaries, display=_display))
        return _EXIT_OK
    files = _recording_files(path)
    if args.steps is not None:
        start, stop = _step_range(args.steps)
        fields = _fields(args.fields) if args.fields is not None else None
        _print_lines(
            format_steps(
                path, start, stop, episode=args.episode, fields=fields, max_decompressed_size=limit
            )
        )
        return _EXIT_OK
    with _RecordProgress(
        lambda: count_records(files, max_decompressed_size=limit), "reading"
    ) as bar:
        rows = MAX_LISTED_EPISODES if args.all else MAX_EPISODE_ROWS
        summary = summarize(path, advance=bar.advance, rows=rows, max_decompressed_size=limit)
    _print_lines(format_recording(summary, display=_display))
    return _EXIT_OK


def _diff(args: argparse.Namespace) -> int:
    tolerance = _tolerance(args)
    comparison = _compare(args.golden, args.actual, tolerance, args.max_decompressed_size)
    if comparison.equal:
        count = comparison.episode_count
        _print_lines(
            [
                f"equal: {_display(args.actual)} matches {_display(args.golden)} "
                f"({counted(count, 'episode')}; {tolerance.describe()})"
            ]
        )
        return _EXIT_OK
    _print_lines(
        [
            _report(comparison, args.golden),
            f"  plot it with: {_PROG} plot {_display(args.golden)} --vs {_display(args.actual)}",
        ]
    )
    return _EXIT_DIFFERENT


def _report(comparison: Comparison, golden: Path) -> str:
    """The report of a diff; the update command only for a golden (a path under goldens/)."""
    is_golden = _GOLDENS in golden.absolute().parts[:-1]
    return format_comparison(
        comparison, display=_display, fix=_FIX, fix_label="update with" if is_golden else None
    )


def _plot(args: argparse.Namespace) -> int:
    viz.require_matplotlib()
    limit: int = args.max_decompressed_size
    fields = _fields(args.fields)
    output: Path = args.output or _default_output(args.path)
    html = output.suffix.lower() in (".html", ".htm")
    if args.vs is None:
        if args.rtol or args.atol or args.ignore:
            raise _UsageError("--rtol, --atol and --ignore apply to a comparison; add --vs OTHER")
        episode = args.episode or 0
        files = _recording_files(args.path)
        with _RecordProgress(lambda: _chosen_sizes([files], [episode], limit), "reading") as bar:
            figure = viz.plot_recording(
                args.path,
                episode=episode,
                fields=fields,
                advance=bar.advance,
                max_decompressed_size=limit,
            )
        if html:
            _write_html(
                output,
                f"{_display(args.path)}: episode {episode}",
                [],
                [(f"episode {episode}", "", figure)],
            )
        else:
            _save_figure(figure, output, typed=args.output is not None)
        _print_lines([f"wrote {_display(output)}"])
        return _EXIT_OK
    tolerance = _tolerance(args)
    comparison = _compare(args.path, args.vs, tolerance, limit)
    # Differing episodes are plotted as the comparison found them (with their
    # sub-env, in a vector recording); --episode picks one by its number.
    episodes: list[int | EpisodeComparison]
    if args.episode is not None:
        episodes = [args.episode]
    elif comparison.differing:
        episodes = list(comparison.differing[: _MAX_HTML_EPISODES if html else 1])
    else:
        episodes = [0]
    numbers = [e if isinstance(e, int) else e.index for e in episodes]
    sides = [_recording_files(args.path), _recording_files(args.vs)]
    with _RecordProgress(lambda: _chosen_sizes(sides, numbers, limit), "reading") as bar:
        figures = [
            viz.plot_comparison(
                args.path,
                args.vs,
                episode=e,
                fields=fields,
                tolerance=tolerance,
                comparison=comparison,
                display=_display,
                advance=bar.advance,
                max_decompressed_size=limit,
            )
            for e in episodes
        ]
    if html:
        verdict = (
            "equal within tolerance"
            if comparison.equal
            else counted(comparison.differing_count, "episode differs", "episodes differ")
        )
        text = (
            _report(comparison, args.path)
            if not comparison.equal
            else f"equal: {_display(args.vs)} matches {_display(args.path)}"
        )
        intro = [
            f"golden: {_display(args.path)}",
            f"actual: {_display(args.vs)}",
            f"{verdict}; {tolerance.describe()}",
        ]
        sections = [
            (_episode_heading(e), text if i == 0 else "", f)
            for i, (e, f) in enumerate(zip(episodes, figures, strict=True))
        ]
        _write_html(output, "gym-goldens: golden vs actual", intro, sections)
    else:
        _save_figure(figures[0], output, typed=args.output is not None)
    _print_lines([f"wrote {_display(output)}"])
    return _EXIT_OK


def _record(args: argparse.Namespace) -> int:
    _import_from_here()
    kwargs = _env_kwargs(args.env_kwargs)
    if args.steps < 0:
        raise _UsageError(f"--steps must be 0 or more, got {args.steps}")
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
    _print_lines(
        [
            f"recorded {rollout.steps:,} steps of {args.env_id} (seed {args.seed}) in "
            f"{episodes}: {_display(rollout.output_dir)} ({rollout.status})"
        ]
    )
    return _EXIT_OK


# gym-goldens audit

_TIMEOUT_HELP: Final = (
    f"stop the audit of an env that takes longer than this many seconds: an error row "
    f"(default {DEFAULT_TIMEOUT:g}; 0 for no limit)"
)


def _add_audit_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
        "--steps", type=int, default=100, metavar="N", help="steps of each rollout (default 100)"
    )
    audit.add_argument(
        "--seeds", default="0", metavar="LIST", help="comma-separated seeds (default 0)"
    )
    audit.add_argument(
        "--rtol",
        action="append",
        default=[],
        metavar="[FIELD=]X",
        help="relative tolerance between runs, for all fields or a field pattern (repeatable; "
        "default 0: runs must be equal)",
    )
    audit.add_argument(
        "--atol",
        action="append",
        default=[],
        metavar="[FIELD=]X",
        help="absolute tolerance between runs, likewise (repeatable; default 0)",
    )
    audit.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="FIELD",
        help="leave a field pattern out of the comparison, such as info.time (repeatable)",
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
        "--no-check-env",
        dest="check_env",
        action="store_false",
        help="do not run gymnasium's check_env",
    )
    audit.set_defaults(run=_audit)


def _audit(args: argparse.Namespace) -> int:
    _import_from_here()
    if args.steps < 0:
        raise _UsageError(f"--steps must be 0 or more, got {args.steps}")
    if args.jobs < 1:
        raise _UsageError(f"--jobs must be 1 or more, got {args.jobs}")
    if not args.timeout >= 0:
        raise _UsageError(f"--timeout must be 0 (no limit) or more seconds, got {args.timeout}")
    settings = AuditSettings(
        seeds=_seeds(args.seeds),
        steps=args.steps,
        tolerance=_audit_tolerance(args),
        check_env=args.check_env,
        import_modules=tuple(args.import_modules),
        timeout=args.timeout or None,
    )
    selection = select_envs(
        *args.patterns,
        exclude=args.exclude,
        entry_point=args.entry_point,
        import_modules=settings.import_modules,
        spell_imports=lambda modules: " ".join(f"--import {name}" for name in modules),
    )
    runs = sum(env.kind == "ok" for env in selection.envs)
    print(f"{_PROG} audit: {settings.describe(len(selection.envs), runs)}", flush=True)
    started = time.perf_counter()
    with Progress(runs, "auditing", unit="envs", threshold=1) as bar:
        rows = audit_envs(selection, settings, jobs=args.jobs, advance=lambda _: bar.advance())
    seconds = time.perf_counter() - started
    left_out = {env.id: env.reason or "" for env in selection.left_out}
    code = _EXIT_DIFFERENT if audit_failed(rows) else _EXIT_OK
    print()
    _print_lines(format_table(rows, left_out=left_out, seconds=seconds))
    if args.json is not None:
        options = {
            "patterns": args.patterns,
            "exclude": args.exclude,
            "entry_point": args.entry_point,
            "jobs": args.jobs,
            **settings.as_json(),
        }
        data = audit_json(
            rows, left_out=left_out, settings=options, seconds=seconds, exit_code=code
        )
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {_display(args.json)}")
    return code


def _seeds(text: str) -> tuple[int, ...]:
    try:
        seeds = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise _UsageError(
            f"--seeds expects comma-separated integers such as 0,1, got {text!r}"
        ) from None
    if not seeds:
        raise _UsageError(f"--seeds expects at least one seed, such as 0, got {text!r}")
    return tuple(dict.fromkeys(seeds))


def _audit_tolerance(args: argparse.Namespace) -> Tolerance:
    """The runs of one seed must be equal, unless --rtol, --atol or --ignore say otherwise."""
    return _tolerance(args, base=Tolerance(rtol=0.0, atol=0.0))


# Helpers


def _import_from_here() -> None:
    """Let ``module:EnvId`` import a module of the current folder, as ``python -m`` does."""
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)


def _compare(golden: Path, actual: Path, tolerance: Tolerance, limit: int) -> Comparison:
    sides = [_recording_files(golden), _recording_files(actual)]
    for path, files in zip((golden, actual), sides, strict=True):
        if not files:
            raise _UsageError(f"{path}: no recording (trajectory.jsonl) in this folder")
    with _RecordProgress(
        lambda: sum(_episode_sizes(sides, limit)),
        "comparing",
        units=lambda: _episode_sizes(sides, limit),
    ) as bar:
        return compare(
            golden,
            actual,
            tolerance,
            progress=lambda _: bar.advance_unit(),
            max_decompressed_size=limit,
        )


def _recording_files(path: Path) -> list[Path]:
    """The files of a recording; of every sub-env, in order, for a vector env's.

    A path typed on the command line may be a symlink; no symlink inside a
    folder it names is followed.
    """
    if not path.is_dir():
        return recording_files(path)
    golden = _checked(path)
    return list(golden.files) or [file for env in golden.envs for file in env.files]


def _checked(folder: Path) -> GoldenFolder:
    """A recording folder typed on the command line, checked: no symlink inside it followed."""
    return resolve_golden(folder, folder, within=_WALKED)


def _episode_sizes(sides: Sequence[Sequence[Path]], limit: int) -> Iterator[int]:
    """The records of each episode, over the recordings' files, read as they are asked for.

    Episodes of the same number in each recording are one unit of work.
    """
    counts = [count_episode_records(files, max_decompressed_size=limit) for files in sides]
    return map(sum, itertools.zip_longest(*counts, fillvalue=0))


def _chosen_sizes(sides: Sequence[Sequence[Path]], episodes: Sequence[int], limit: int) -> int:
    """The records of the chosen episodes, over the recordings' files, all together."""
    wanted = set(episodes)
    sizes = itertools.islice(_episode_sizes(sides, limit), max(episodes, default=-1) + 1)
    return sum(size for index, size in enumerate(sizes) if index in wanted)


class _RecordProgress:
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
        self._bar.advance(count)

    def advance_unit(self) -> None:
        """Count the next unit of work done."""
        self._bar.advance(next(self._units, 0))

    def __enter__(self) -> _RecordProgress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._bar.close()


def _tolerance(args: argparse.Namespace, base: Tolerance | None = None) -> Tolerance:
    """``base`` (the defaults if None) refined by --rtol, --atol and --ignore."""
    tolerance = base or Tolerance()
    try:
        for spec in args.rtol:
            tolerance = tolerance.refine(rtol=_tolerance_spec("rtol", spec))
        for spec in args.atol:
            tolerance = tolerance.refine(atol=_tolerance_spec("atol", spec))
        ignored = [p.strip() for item in args.ignore for p in item.split(",") if p.strip()]
        return tolerance.refine(ignore=ignored)
    except (TypeError, ValueError) as error:
        raise _UsageError(str(error)) from None


def _tolerance_spec(name: str, spec: str) -> float | dict[str, float]:
    pattern, _, number = spec.rpartition("=")
    try:
        value = float(number)
    except ValueError:
        raise _UsageError(f"--{name} expects a number or FIELD=NUMBER, got {spec!r}") from None
    return {pattern: value} if pattern else value


def _fields(text: str) -> list[str]:
    fields = [field.strip() for field in text.split(",") if field.strip()]
    if not fields:
        raise _UsageError("--fields needs at least one field, such as obs,reward")
    for field in fields:
        try:
            parse_pattern(field)
        except ValueError as error:
            raise _UsageError(f"--fields: {error}") from None
    return fields


def _step_range(text: str) -> tuple[int, int | None]:
    start_text, colon, stop_text = text.partition(":")
    try:
        start = int(start_text) if start_text.strip() else 0
        if not colon:
            return start, start + 1
        stop = int(stop_text) if stop_text.strip() else None
    except ValueError:
        raise _UsageError(
            f"--steps expects A:B (such as 10:20, :5 or 100:), got {text!r}"
        ) from None
    if start < 0 or (stop is not None and stop < start):
        raise _UsageError(f"--steps expects 0 <= A <= B, got {text!r}")
    return start, stop


def _env_kwargs(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise _UsageError(f"--env-kwargs is not valid JSON ({error}): {text!r}") from None
    if not isinstance(value, dict):
        raise _UsageError(
            f'--env-kwargs expects a JSON object such as {{"is_slippery": false}}, got {text!r}'
        )
    return value


def _write_html(
    output: Path, title: str, intro: list[str], sections: list[tuple[str, str, Any]]
) -> None:
    entries = [
        Mismatch(title=heading, status="", message=text, plot_png=viz.figure_png(figure))
        for heading, text, figure in sections
    ]
    page = render_page(title, intro, entries, empty="nothing to plot")
    write_page(output.resolve(), page)


def _episode_heading(episode: int | EpisodeComparison) -> str:
    if isinstance(episode, int):
        return f"episode {episode}"
    if episode.env is None:
        return f"episode {episode.index}"
    return f"sub-env {episode.env}, episode {episode.index}"


def _default_output(recording: Path) -> Path:
    """``<name>.png`` in the working folder: refused when a symlink stands by that name."""
    output = Path(f"{_stem(recording)}.png")
    if output.is_symlink():
        raise symlink_error(
            output, "the working folder", "remove it, or name the output with -o FILE"
        )
    return output


def _save_figure(figure: Any, output: Path, *, typed: bool) -> None:
    """Save a plot: where it was typed, as matplotlib writes; by default, never through a link.

    The default output is written as goldens are: to a temporary file made
    exclusively beside it, renamed into place.
    """
    if typed:
        viz.save_figure(figure, output)
    else:
        atomic_write_bytes(output, viz.figure_png(figure))


def _stem(path: Path) -> str:
    """The name of a recording: its folder's, for the trajectory file in it."""
    target = path.resolve()
    if is_trajectory_file_name(target.name):
        target = target.parent
    name = target.name
    for suffix in (".gz", ".jsonl"):
        name = name.removesuffix(suffix)
    return name or "recording"


def _display(path: Path | str) -> str:
    target = Path(path)
    try:
        return str(target.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(target)


def _print_lines(lines: Sequence[str]) -> None:
    # The parts that came from the files are escaped where the text was put
    # together; this guard leaves no control character for any part missed.
    print(printable("\n".join(lines)))


def _error(message: str, *, prefix: str = "error: ") -> None:
    print(f"{_PROG}: {prefix}{printable(message)}", file=sys.stderr)
