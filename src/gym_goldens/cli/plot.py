"""``gym-goldens plot``: the fields of a recording over time, or golden against actual.

See :mod:`gym_goldens.present.viz` (matplotlib, optional); an ``.html``
output is a page with the report and the figures
(:mod:`gym_goldens.present.html`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Final

from gym_goldens.cli._common import EXIT_OK, Subcommands, UsageError, display, print_lines
from gym_goldens.cli._options import add_limit_option, add_tolerance_options, fields, tolerance
from gym_goldens.cli._recordings import (
    RecordProgress,
    chosen_sizes,
    compare_recordings,
    diff_report,
    files_of,
)
from gym_goldens.comparison.result import Comparison, EpisodeComparison
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.format.files import atomic_write_bytes
from gym_goldens.format.layout import is_trajectory_file_name
from gym_goldens.format.paths import symlink_error
from gym_goldens.present import viz
from gym_goldens.present.html import Mismatch, render_page, write_page
from gym_goldens.present.text import counted

__all__ = ["add_parser", "run"]

_MAX_HTML_EPISODES: Final = 5


def add_parser(commands: Subcommands) -> argparse.ArgumentParser:
    """The parser of ``plot``."""
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
    add_tolerance_options(plot)
    add_limit_option(plot)
    return plot


def run(args: argparse.Namespace) -> int:
    """Write the figure, or the page, and say where."""
    viz.require_matplotlib()
    patterns = fields(args.fields)
    output: Path = args.output or _default_output(args.path)
    if args.vs is None:
        if args.rtol or args.atol or args.ignore:
            raise UsageError("--rtol, --atol and --ignore apply to a comparison; add --vs OTHER")
        _plot_recording(args, patterns, output)
    else:
        _plot_comparison(args, patterns, output)
    print_lines([f"wrote {display(output)}"])
    return EXIT_OK


def _is_html(output: Path) -> bool:
    return output.suffix.lower() in (".html", ".htm")


def _plot_recording(args: argparse.Namespace, patterns: list[str], output: Path) -> None:
    """The fields of one episode of PATH over time."""
    limit: int = args.max_decompressed_size
    episode = args.episode or 0
    files = files_of(args.path)
    with RecordProgress(lambda: chosen_sizes([files], [episode], limit), "reading") as bar:
        figure = viz.plot_recording(
            args.path,
            episode=episode,
            fields=patterns,
            advance=bar.advance,
            max_decompressed_size=limit,
        )
    if _is_html(output):
        title = f"{display(args.path)}: episode {episode}"
        _write_html(output, title, [], [(f"episode {episode}", "", figure)])
    else:
        _save_figure(figure, output, typed=args.output is not None)


def _plot_comparison(args: argparse.Namespace, patterns: list[str], output: Path) -> None:
    """PATH (the golden) against OTHER (--vs): the chosen or first differing episodes."""
    limit: int = args.max_decompressed_size
    tol = tolerance(args)
    comparison = compare_recordings(args.path, args.vs, tol, limit)
    html = _is_html(output)
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
    sides = [files_of(args.path), files_of(args.vs)]
    with RecordProgress(lambda: chosen_sizes(sides, numbers, limit), "reading") as bar:
        figures = [
            viz.plot_comparison(
                args.path,
                args.vs,
                episode=e,
                fields=patterns,
                tolerance=tol,
                comparison=comparison,
                display=display,
                advance=bar.advance,
                max_decompressed_size=limit,
            )
            for e in episodes
        ]
    if html:
        _write_comparison_page(
            args, output, comparison, tol, list(zip(episodes, figures, strict=True))
        )
    else:
        _save_figure(figures[0], output, typed=args.output is not None)


def _write_comparison_page(
    args: argparse.Namespace,
    output: Path,
    comparison: Comparison,
    tol: Tolerance,
    plotted: list[tuple[int | EpisodeComparison, Any]],
) -> None:
    """A page: the verdict and the report, then a figure per episode plotted."""
    verdict = (
        "equal within tolerance"
        if comparison.equal
        else counted(comparison.differing_count, "episode differs", "episodes differ")
    )
    text = (
        diff_report(comparison, args.path)
        if not comparison.equal
        else f"equal: {display(args.vs)} matches {display(args.path)}"
    )
    intro = [
        f"golden: {display(args.path)}",
        f"actual: {display(args.vs)}",
        f"{verdict}; {tol.describe()}",
    ]
    sections = [
        (_episode_heading(e), text if i == 0 else "", f) for i, (e, f) in enumerate(plotted)
    ]
    _write_html(output, "gym-goldens: golden vs actual", intro, sections)


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
