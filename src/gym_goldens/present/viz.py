"""Plots of recordings: time series of each field, golden and actual overlaid.

Every numeric leaf of a record is plotted over the steps of an episode (see
:mod:`gym_goldens.present.series`, which reads them). An episode is chosen by its
number in a recording (a folder holding ``trajectory.jsonl``, or that file).
:func:`plot_comparison` draws golden and actual on one axis per field and
their difference on an axis of its own below it, and marks the first step
where the field leaves its tolerance. A multi-agent episode (a PettingZoo env's)
is drawn as a panel per agent instead, each of the agent's fields a line of
it (golden solid, actual dashed, in one color). Infinite and NaN values leave gaps;
finite values beyond 1e300 (a simulation blowing up) are drawn at +-1e300,
where matplotlib can still scale an axis.

matplotlib is an optional extra (``pip install "pytest-gym-goldens[viz]"``).
It is imported on first use, and figures are drawn with the Agg backend
through :class:`matplotlib.figure.Figure`, never through ``pyplot``: no
window, no global figure state, safe in a test process.

Example:
    >>> import gymnasium as gym, tempfile
    >>> from gym_goldens import RecordTrajectory, rollout
    >>> out = tempfile.mkdtemp()
    >>> env = RecordTrajectory(gym.make("Pendulum-v1"), out)
    >>> _ = rollout(env, seed=0, steps=10); env.close()
    >>> figure = plot_recording(out, fields=["obs[0]", "reward"])
    >>> [axes.get_title(loc="left") for axes in figure.axes]
    ['obs[0]', 'reward']
"""

from __future__ import annotations

import dataclasses
import io
import textwrap
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from gym_goldens.comparison.engine import compare
from gym_goldens.comparison.result import Comparison, EpisodeComparison
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.errors import GoldenFormatError, GoldensError
from gym_goldens.format.fields import format_path
from gym_goldens.format.files import atomic_write_bytes
from gym_goldens.format.frames import encode_png
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.present.differences import field_rank
from gym_goldens.present.images import first_frame_difference, frame_triptych
from gym_goldens.present.series import (
    DEFAULT_FIELDS,
    SERIES_FIELDS,
    EpisodeSeries,
    FieldComparison,
    Series,
    agent_label,
    by_agent,
    compare_series,
    episode_holder,
    read_episode_series,
)
from gym_goldens.present.text import escape, escape_value, printable

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "MARKER_ID",
    "NothingToPlotError",
    "VizDependencyError",
    "figure_png",
    "plot_comparison",
    "plot_divergence",
    "plot_recording",
    "require_matplotlib",
    "save_figure",
    "write_divergence_plot",
]

INSTALL_HINT: Final = 'pip install "pytest-gym-goldens[viz]"'

MARKER_ID: Final = "first-divergence"
"""The ``gid`` of the lines that mark a field's first divergence."""

_GOLDEN_COLOR: Final = "#1f77b4"
_ACTUAL_COLOR: Final = "#ff7f0e"
_DIFF_COLOR: Final = "#6a3d9a"
# The fields of an agent's panel, one color each (the marker's red left out).
_FIELD_COLORS: Final = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
_MARKER_COLOR: Final = "#d62728"
_ONE_SIDED_COLOR: Final = "#d62728"
_MAX_TITLE_PATH: Final = 72
_MAX_TITLE_FIELDS: Final = 3
_MAX_AGENT_TITLE: Final = 48
# A legend entry longer than this is written on two lines, to stay inside the figure.
_LEGEND_CHARS: Final = 24
_DPI: Final = 100
# matplotlib's axis and tick arithmetic overflows near the largest float, so
# finite values beyond this are drawn at it (see _plottable).
_PLOT_LIMIT: Final = 1e300
# The steps kept on each side of a first divergence in a long episode.
_KEPT_AROUND: Final = 100
# A tolerance band narrower than this share of the largest difference is said in words.
_THIN_BAND: Final = 0.02
# Title lines are wrapped at this many characters, to stay inside the figure.
_TITLE_CHARS: Final = 105


class VizDependencyError(GoldensError, ImportError):
    """matplotlib, needed for plots, is not installed."""


class NothingToPlotError(GoldensError, ValueError):
    """The chosen fields hold no numbers to plot."""


def require_matplotlib() -> None:
    """Import matplotlib, or say how to install it.

    Raises:
        VizDependencyError: matplotlib is not installed.
    """
    try:
        # What matplotlib warns about while it loads (deprecations of its own
        # dependencies, as an older matplotlib with a newer pyparsing) is no
        # concern of the caller, and must not fail a run under -W error.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import matplotlib
            import matplotlib.backends.backend_agg
            import matplotlib.figure
    except ImportError:
        raise VizDependencyError(
            f"plots need matplotlib, which is not installed; install it with: {INSTALL_HINT}"
        ) from None
    del matplotlib


def plot_recording(
    path: str | Path,
    *,
    episode: int = 0,
    fields: Sequence[str] | None = DEFAULT_FIELDS,
    max_fields: int = 12,
    advance: Callable[[int], None] | None = None,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> Figure:
    """Plot the chosen fields of one episode of a recording, one axis per leaf.

    Args:
        path: A recording folder or a recording file.
        episode: The episode, numbered from 0 in the recording (in the file,
            when ``path`` is a file).
        fields: Field patterns; None for every field.
        max_fields: Plot at most this many leaves (the first ones).
        advance: Called with the number of records read, now and then.
        max_decompressed_size: What the compressed files of the recording
            may expand to, in bytes.

    Raises:
        VizDependencyError: matplotlib is not installed.
        NothingToPlotError: The fields hold no numbers.
        GoldenFormatError: The recording cannot be read or lacks the episode.
    """
    require_matplotlib()
    found = read_episode_series(
        path, episode, fields, advance, max_decompressed_size=max_decompressed_size
    )
    assert found is not None  # only missing_ok reads give None
    series = found.series
    if not series:
        raise NothingToPlotError(_nothing_message(found, episode, fields))
    groups = by_agent(series, found.header)
    if groups is not None:
        return _plot_agents(found, groups, f"{_name([found], path)}: episode {episode}", max_fields)
    shown = series[:max_fields]
    title = f"{_name([found], path)}: episode {episode}"
    if len(shown) < len(series):
        title += f" (first {len(shown)} of {len(series)} fields; choose with --fields)"
    title = title_lines(f"{title}\n{_where(found, str)}")
    layout = _Layout(head=_title_room(title), right=0.3)
    axes_list = [layout.add(1.3, gap=0.32) for _ in shown]
    layout.figure()
    for axes, item in zip(axes_list, shown, strict=True):
        _draw_series(axes, item.t, item.values, steps=_stepwise(item), color=_GOLDEN_COLOR)
        axes.set_title(item.label, loc="left", fontsize=10, fontweight="bold")
        axes.grid(alpha=0.3)
        _integer_steps(axes)
    return _finish(layout, axes_list, title)


def _plot_agents(
    found: EpisodeSeries, groups: list[tuple[str, list[Series]]], heading: str, max_fields: int
) -> Figure:
    """A multi-agent episode: a panel per agent, each of its fields a line."""
    shown = [(agent, leaves[:max_fields]) for agent, leaves in groups[:max_fields]]
    title = f"{heading}, a panel per agent"
    if sum(len(leaves) for _, leaves in shown) < len(found.series):
        title += (
            f" (the first {len(shown)} of {len(groups)} agents, at most {max_fields} fields "
            "each; choose with --fields)"
        )
    title = title_lines(f"{title}\n{_where(found, str)}")
    layout = _Layout(head=_title_room(title), right=2.0)
    axes_list = [layout.add(1.6, gap=0.32) for _ in shown]
    layout.figure()
    for axes, (agent, leaves) in zip(axes_list, shown, strict=True):
        for color, leaf in zip(_colors(len(leaves)), leaves, strict=True):
            label = agent_label(leaf.path) if agent else leaf.label
            _draw_series(axes, leaf.t, leaf.values, steps=_stepwise(leaf), color=color, label=label)
        _agent_title(axes, agent)
        axes.grid(alpha=0.3)
        _integer_steps(axes)
        _legend(axes)
    return _finish(layout, axes_list, title)


def _finish(layout: _Layout, axes_list: Sequence[Axes], title: str) -> Figure:
    """A column of axes of one episode: steps labelled at the foot, under the title."""
    for axes in axes_list[:-1]:
        axes.tick_params(labelbottom=False)
    axes_list[-1].set_xlabel("t (step; reset at 0)")
    layout.title(title)
    return layout.figure()


def plot_comparison(
    golden: str | Path,
    actual: str | Path,
    *,
    episode: int | EpisodeComparison | None = None,
    fields: Sequence[str] | None = DEFAULT_FIELDS,
    tolerance: Tolerance | None = None,
    only_divergent: bool = False,
    max_fields: int = 8,
    comparison: Comparison | None = None,
    display: Callable[[Path], str] = str,
    advance: Callable[[int], None] | None = None,
    sides: tuple[str, str] = ("golden", "actual"),
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> Figure:
    """Plot golden and actual for one episode, with their difference.

    For each leaf: golden (solid) and actual (dashed) on one axis, actual
    minus golden on the axis below with the tolerance band, and a red line at
    the first step out of tolerance. Diverging leaves come first, earliest
    divergence first.

    Args:
        golden: The golden recording (folder or recording file).
        actual: The actual recording, of the same kind.
        episode: The episode number (in the recording, or in the file when
            the recordings are files), or an episode of
            ``comparison.episodes``, which also finds the sub-env of a vector
            recording; by default the first episode that differs.
        fields: Field patterns; None for every field.
        tolerance: The tolerance that decides what diverges.
        only_divergent: Plot only the leaves that diverge.
        max_fields: Plot at most this many leaves.
        comparison: The result of ``compare(golden, actual, tolerance)`` if
            it is at hand (it picks the episode).
        display: Turns a path into the text shown in the title.
        advance: Called with the number of records read, now and then.
        sides: What the two recordings are called in the title and legends,
            such as ``("run 1", "run 2")`` for two runs of a determinism check.
        max_decompressed_size: What the compressed files of each recording
            may expand to, in bytes.

    Raises:
        VizDependencyError: matplotlib is not installed.
        NothingToPlotError: Nothing to plot in the chosen fields.
        GoldenFormatError: A recording cannot be read.
    """
    require_matplotlib()
    tolerance = tolerance or (comparison.tolerance if comparison is not None else Tolerance())
    if episode is None:
        episode = _first_differing(golden, actual, tolerance, comparison, max_decompressed_size)
    place = _EpisodePlace.of(golden, actual, episode)
    found = place.read(fields, advance, max_decompressed_size)
    compared = compare_series(*_series_of(found), tolerance)
    diverging, chosen = _chosen_fields(compared, only_divergent=only_divergent, label=place.label)
    panels = _panels(chosen, found, max_fields)
    shown = [field for _, fields in panels for field in fields]
    heading = f"{_name(found, golden)}, {place.label}"
    title = _comparison_title(heading, found, (diverging, shown, chosen), display, sides)
    return _draw_comparison(panels, title, sides)


def _panels(
    chosen: list[FieldComparison],
    found: tuple[EpisodeSeries | None, EpisodeSeries | None],
    max_fields: int,
) -> list[tuple[str | None, list[FieldComparison]]]:
    """The panels of a comparison plot: a field each, or an agent each (a multi-agent episode).

    An agent's panel holds its first ``max_fields`` fields, and at most ``max_fields``
    agents are drawn, the diverging ones first (``chosen`` is in that order).
    """
    header = next((one.header for one in found if one is not None and one.header), None)
    groups = by_agent(chosen, header)
    if groups is None:
        return [(None, [field]) for field in chosen[:max_fields]]
    return [(agent, fields[:max_fields]) for agent, fields in groups[:max_fields]]


def _first_differing(
    golden: str | Path,
    actual: str | Path,
    tolerance: Tolerance,
    comparison: Comparison | None,
    max_decompressed_size: int,
) -> EpisodeComparison | int:
    """The first episode that differs (0 when none does), by ``comparison`` or a new one."""
    comparison = comparison or compare(
        golden, actual, tolerance, max_decompressed_size=max_decompressed_size
    )
    return comparison.differing[0] if comparison.differing else 0


@dataclasses.dataclass(frozen=True)
class _EpisodePlace:
    """Where one episode is in a golden and an actual recording, and what to read of it.

    Attributes:
        golden: The golden recording as given (an error names it).
        index: Its number in the recordings (in the file, or in a sub-env's folder).
        label: ``episode 3``, ``sub-env 1, episode 0``: how titles name it.
        sources: The recording of each side that numbers it so; None for a
            side that does not have it.
        keep: The steps kept whatever the stride (around its first divergence).
    """

    golden: str | Path
    index: int
    label: str
    sources: tuple[Path | None, Path | None]
    keep: tuple[int, int] | None = None

    @classmethod
    def of(
        cls, golden: str | Path, actual: str | Path, episode: int | EpisodeComparison
    ) -> _EpisodePlace:
        """The place of an episode given by number, or found by a comparison."""
        if not isinstance(episode, EpisodeComparison):
            return cls(golden, episode, f"episode {episode}", (Path(golden), Path(actual)))
        keep = None
        if episode.first is not None:
            # Every step around the first divergence, whatever is thinned out elsewhere.
            t = episode.first.t or 0
            keep = (max(t - _KEPT_AROUND, 0), t + _KEPT_AROUND)
        # The file that holds the episode: in a vector recording, a sub-env's.
        sources = (
            episode_holder(golden, episode.golden_path),
            episode_holder(actual, episode.actual_path),
        )
        return cls(golden, episode.index, _episode_label(episode), sources, keep)

    def read(
        self,
        fields: Sequence[str] | None,
        advance: Callable[[int], None] | None,
        max_decompressed_size: int,
    ) -> tuple[EpisodeSeries | None, EpisodeSeries | None]:
        """The series of each side; None for a side without the episode.

        Raises:
            GoldenFormatError: Neither side has the episode, or a recording
                cannot be read.
        """
        golden, actual = (
            read_episode_series(
                source,
                self.index,
                fields,
                advance,
                missing_ok=True,
                keep=self.keep,
                max_decompressed_size=max_decompressed_size,
            )
            if source is not None
            else None
            for source in self.sources
        )
        if golden is None and actual is None:
            raise GoldenFormatError(self.golden, f"neither recording has {self.label}")
        return golden, actual


def _series_of(
    found: tuple[EpisodeSeries | None, EpisodeSeries | None],
) -> tuple[list[Series], list[Series]]:
    """The series of each side: none for a side without the episode."""
    golden, actual = found
    return (golden.series if golden else []), (actual.series if actual else [])


def _chosen_fields(
    compared: Sequence[FieldComparison], *, only_divergent: bool, label: str
) -> tuple[list[FieldComparison], list[FieldComparison]]:
    """The diverging fields, and the fields to draw: the diverging ones first.

    Diverging fields come earliest first; at the same step, in the order the
    text reports name them. Fields that differ only where one episode has
    ended are no divergence: under ``only_divergent`` they are drawn only
    when nothing diverges (a change of episode length alone).

    Raises:
        NothingToPlotError: No field to draw (in the episode ``label`` names).
    """
    diverging = sorted(
        (f for f in compared if f.diverges),
        key=lambda f: (f.first if f.first is not None else 0, field_rank(f.path)),
    )
    unpaired = [f for f in compared if not f.diverges and f.differs]
    if only_divergent:
        chosen = diverging or unpaired
    else:
        chosen = [*diverging, *unpaired, *(f for f in compared if not f.differs)]
    if not chosen:
        what = "diverging numeric fields" if only_divergent else "numeric fields"
        raise NothingToPlotError(f"no {what} to plot in {label}")
    return diverging, chosen


def _draw_comparison(
    panels: Sequence[tuple[str | None, Sequence[FieldComparison]]],
    title: str,
    sides: tuple[str, str],
) -> Figure:
    """The figure of a comparison: per panel, its values, then their difference below.

    A panel is a field, or (named by its agent) the fields of an agent.
    """
    layout = _Layout(head=_title_room(title), right=2.0)
    # Per panel: its values, then their difference just below, then room for
    # the tick labels and the next panel's title.
    pairs = [
        (layout.add(1.35 if agent is None else 1.8, gap=0.6), layout.add(0.6, gap=0.2))
        for agent, _ in panels
    ]
    figure = layout.figure()
    for (top, bottom), (agent, fields) in zip(pairs, panels, strict=True):
        top.tick_params(labelbottom=False)
        if agent is None:
            _draw_field(top, bottom, fields[0], sides)
        else:
            _draw_agent(top, bottom, agent, fields, sides)
    pairs[-1][1].set_xlabel("t (step; reset at 0)", fontsize=8)
    layout.title(title)
    return figure


def plot_divergence(
    comparison: Comparison,
    *,
    max_fields: int = 6,
    display: Callable[[Path], str] = str,
    sides: tuple[str, str] = ("golden", "actual"),
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> Figure | None:
    """Plot the diverging fields of the first differing episode of a comparison.

    ``sides`` names the two recordings, as for :func:`plot_comparison`;
    ``max_decompressed_size`` is what the compressed files of each recording
    may expand to, in bytes.

    Returns:
        The figure, or None when the comparison is equal or no numeric
        field diverges (a change of a string, say).

    Raises:
        VizDependencyError: matplotlib is not installed.
    """
    if comparison.equal:
        return None
    episode = comparison.differing[0]
    try:
        return plot_comparison(
            comparison.golden,
            comparison.actual,
            episode=episode,
            fields=_divergent_fields(episode, max_fields),
            only_divergent=True,
            max_fields=max_fields,
            comparison=comparison,
            display=display,
            sides=sides,
            max_decompressed_size=max_decompressed_size,
        )
    except NothingToPlotError:
        return None


def _divergent_fields(episode: EpisodeComparison, limit: int) -> list[str] | None:
    """The fields that differ at an episode's first divergence; None for every field.

    None when no field is named, or when one changed its numpy type: the
    values that part after it may be in any field. Otherwise only they are
    read: the other leaves of a long record (an image kept in full) would
    cost time and memory for panels that are not drawn.
    """
    first = episode.first
    if first is None or not first.differences:
        return None
    fields: list[str] = []
    for difference in first.differences:
        if difference.path[:1] == ("dtypes",):
            # A change of type: the values that part may be in any field.
            return None
        if difference.path and difference.path[0] in SERIES_FIELDS:
            fields.append(format_path(difference.path))
    return list(dict.fromkeys(fields))[:limit] or None


def write_divergence_plot(
    comparison: Comparison,
    path: str | Path,
    *,
    display: Callable[[Path], str] = str,
    sides: tuple[str, str] = ("golden", "actual"),
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> Path | None:
    """Write :func:`plot_divergence` as PNG to ``path``, if there is anything to plot.

    The keywords are those of :func:`plot_divergence`. When a frame differs
    at the first divergence, golden, actual and diff are drawn above the
    plot (:func:`~gym_goldens.present.images.frame_triptych`); without
    matplotlib, they alone.

    Returns:
        ``path``, or None when no numeric field or frame diverges.

    Raises:
        VizDependencyError: matplotlib is not installed (and no frame differs).
    """
    frame = first_frame_difference(comparison)
    try:
        figure = plot_divergence(
            comparison, display=display, sides=sides, max_decompressed_size=max_decompressed_size
        )
    except VizDependencyError:
        if frame is None:
            raise
        figure = None
    if frame is None:
        return None if figure is None else save_figure(figure, path)
    pictures = [frame_triptych(frame, sides)]
    if figure is not None:
        from PIL import Image  # imported on a failure's frames only: a passing suite never loads it

        with Image.open(io.BytesIO(figure_png(figure))) as plotted:
            pictures.append(np.asarray(plotted.convert("RGB")))
    target = Path(path)
    atomic_write_bytes(target, encode_png(_stacked(pictures)))
    return target


def _stacked(pictures: Sequence[np.ndarray[Any, Any]]) -> np.ndarray[Any, Any]:
    """RGB pictures one above the other, left-aligned on white."""
    width = max(picture.shape[1] for picture in pictures)
    height = sum(picture.shape[0] for picture in pictures)
    canvas = np.full((height, width, 3), 255, np.uint8)
    top = 0
    for picture in pictures:
        canvas[top : top + picture.shape[0], : picture.shape[1]] = picture
        top += picture.shape[0]
    return canvas


def save_figure(figure: Figure, path: str | Path) -> Path:
    """Write a figure as PNG (or any format matplotlib knows by suffix)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(target, dpi=_DPI)
    return target


def figure_png(figure: Figure) -> bytes:
    """A figure as PNG bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=_DPI)
    return buffer.getvalue()


class _Layout:
    """A column of axes placed in inches, top to bottom, sharing one x axis.

    Placing axes by hand costs nothing at draw time, where a layout engine
    would spend as long as the drawing itself on a figure of a dozen axes.

    Args:
        head: Room above the first axes, for the title.
        right: Room right of the axes, for legends.
    """

    _WIDTH: Final = 10.0
    _LEFT: Final = 1.0
    _FOOT: Final = 0.55

    def __init__(self, head: float, right: float) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self._figure = Figure(figsize=(self._WIDTH, 1.0))
        FigureCanvasAgg(self._figure)
        self._head = head
        self._right = right
        self._rows: list[tuple[Axes, float, float]] = []
        self._used = head

    def add(self, height: float, *, gap: float) -> Axes:
        """Add axes ``height`` inches tall, ``gap`` inches below the previous ones."""
        self._used += gap if self._rows else 0.0
        axes = self._figure.add_axes((0.0, 0.0, 1.0, 1.0))
        if self._rows:
            axes.sharex(self._rows[0][0])
        self._rows.append((axes, self._used, height))
        self._used += height
        return axes

    def figure(self) -> Figure:
        """Size the figure to its axes and place them."""
        total = self._used + self._FOOT
        self._figure.set_size_inches(self._WIDTH, total)
        width = (self._WIDTH - self._LEFT - self._right) / self._WIDTH
        for axes, top, height in self._rows:
            bottom = total - top - height
            axes.set_position((self._LEFT / self._WIDTH, bottom / total, width, height / total))
        return self._figure

    def title(self, text: str) -> None:
        """The title, from the left edge of the axes, in the room left at the top.

        Long lines are wrapped (see :func:`title_lines`): a centred line
        wider than the figure would lose its start at the left edge.
        """
        height = self._figure.get_size_inches()[1]
        # Ids, keys and paths from the files are in it: no control character reaches it.
        self._figure.suptitle(
            printable(text),
            x=self._LEFT / self._WIDTH,
            y=1 - 0.1 / height,
            ha="left",
            va="top",
            fontsize=11,
        )


def _draw_field(top: Axes, bottom: Axes, item: FieldComparison, sides: tuple[str, str]) -> None:
    """One field: both sides' values on ``top``, their difference on ``bottom``."""
    stepwise = _stepwise(item)
    _draw_sides(top, item, sides, stepwise=stepwise)
    _draw_difference(bottom, item, sides, stepwise=stepwise)
    for axes in (top, bottom):
        axes.grid(alpha=0.3)
        axes.tick_params(labelsize=8)
        _integer_steps(axes)
        _shade_one_sided(axes, item, sides)
    if item.first is not None:
        _mark_first_divergence(top, bottom, item.first)
    for axes in (top, bottom):
        axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)


def _draw_sides(
    axes: Axes, item: FieldComparison, sides: tuple[str, str], *, stepwise: bool
) -> None:
    """Golden (solid) and actual (dashed), where each has the field, under the field's name."""
    golden_name, actual_name = sides
    golden_t, golden_values = item.t[item.in_golden], item.golden[item.in_golden]
    actual_t, actual_values = item.t[item.in_actual], item.actual[item.in_actual]
    _draw_series(
        axes, golden_t, golden_values, steps=stepwise, color=_GOLDEN_COLOR, label=golden_name
    )
    _draw_series(
        axes,
        actual_t,
        actual_values,
        steps=stepwise,
        color=_ACTUAL_COLOR,
        style="--",
        label=actual_name,
    )
    axes.set_title(item.label, loc="left", fontsize=10, fontweight="bold")


def _draw_difference(
    axes: Axes, item: FieldComparison, sides: tuple[str, str], *, stepwise: bool
) -> None:
    """Actual minus golden where both have the step, in the band the tolerance allows."""
    label, two_lines = _difference_names(sides)
    difference, both, allowed = _difference(item)
    axes.fill_between(
        item.t,
        -allowed,
        allowed,
        where=both,
        color="0.6",
        alpha=0.35,
        linewidth=0,
        label=_band_label(allowed[both], difference[both]),
    )
    axes.axhline(0.0, color="0.5", linewidth=0.6)
    _draw_series(
        axes,
        item.t,
        difference,
        steps=stepwise,
        color=_DIFF_COLOR,
        # Long run names (run 2 (subprocess)) would run past the figure's edge on one line.
        label=label if len(label) <= _LEGEND_CHARS else two_lines,
    )
    flat = not np.any(np.nan_to_num(np.where(both, difference, 0.0))) and not np.any(
        item.allowed[both]
    )
    if flat:
        # Nothing to scale to: keep matplotlib from zooming in on rounding noise.
        axes.set_ylim(-1.0, 1.0)
    axes.set_ylabel(two_lines, fontsize=8)


def _difference_names(sides: tuple[str, str]) -> tuple[str, str]:
    """``actual - golden``, on one line and on two."""
    golden_name, actual_name = sides
    label = f"{actual_name} \N{MINUS SIGN} {golden_name}"
    return label, label.replace(" \N{MINUS SIGN}", "\n\N{MINUS SIGN}", 1)


def _difference(item: FieldComparison) -> tuple[np.ndarray[Any, Any], ...]:
    """Actual minus golden (NaN where a side lacks the step), where both have it, the band."""
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, a gap like NaN itself
        difference = _plottable(item.actual) - _plottable(item.golden)
    both = item.in_golden & item.in_actual
    return np.where(both, difference, np.nan), both, _plottable(item.allowed)


def _draw_agent(
    top: Axes, bottom: Axes, agent: str, fields: Sequence[FieldComparison], sides: tuple[str, str]
) -> None:
    """An agent's panel: each field's golden (solid) and actual (dashed) in one color on
    ``top``, their differences on ``bottom`` within the tolerance band."""
    golden_name, actual_name = sides
    label, two_lines = _difference_names(sides)
    for color, item in zip(_colors(len(fields)), fields, strict=True):
        name = agent_label(item.path) if agent else item.label
        stepwise = _stepwise(item)
        golden, actual = item.in_golden, item.in_actual
        for side, where, values, style in (
            (golden_name, golden, item.golden, "-"),
            (actual_name, actual, item.actual, "--"),
        ):
            _draw_series(
                top,
                item.t[where],
                values[where],
                steps=stepwise,
                color=color,
                style=style,
                label=f"{name} ({side})",
            )
        difference, both, allowed = _difference(item)
        bottom.fill_between(
            item.t, -allowed, allowed, where=both, color="0.6", alpha=0.3, linewidth=0,
            label="tolerance",
        )  # fmt: skip
        _draw_series(bottom, item.t, difference, steps=stepwise, color=color, label=name)
        for axes in (top, bottom):
            _shade_one_sided(axes, item, sides)
    bottom.axhline(0.0, color="0.5", linewidth=0.6)
    bottom.set_ylabel(two_lines if len(label) > _LEGEND_CHARS else label, fontsize=8)
    _agent_title(top, agent)
    firsts = [item.first for item in fields if item.first is not None]
    if firsts:
        _mark_first_divergence(top, bottom, min(firsts))
    for axes in (top, bottom):
        axes.grid(alpha=0.3)
        axes.tick_params(labelsize=8)
        _integer_steps(axes)
        _legend(axes)


def _agent_title(axes: Axes, agent: str) -> None:
    # An agent's name comes from the file: escaped, and cut to fit a panel.
    name = escape(agent)
    name = name if len(name) <= _MAX_AGENT_TITLE else name[: _MAX_AGENT_TITLE - 1] + "…"
    axes.set_title(name or "(no agent)", loc="left", fontsize=10, fontweight="bold")


def _colors(count: int) -> list[str]:
    """A color for each of ``count`` fields, repeating when there are more fields than colors."""
    return [_FIELD_COLORS[i % len(_FIELD_COLORS)] for i in range(count)]


def _legend(axes: Axes) -> None:
    """The legend right of the axes, each entry once (every field has a tolerance band)."""
    handles, labels = axes.get_legend_handles_labels()
    entries = dict(zip(labels, handles, strict=True))
    axes.legend(
        list(entries.values()),
        list(entries),
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
        fontsize=7,
        frameon=False,
    )


def _mark_first_divergence(top: Axes, bottom: Axes, first: int) -> None:
    """A red line at the first step out of tolerance, named on the values' axes."""
    for axes in (top, bottom):
        axes.axvline(
            first,
            color=_MARKER_COLOR,
            linestyle=(0, (4, 2)),
            linewidth=1.4,
            gid=MARKER_ID,
            label=f"first divergence, t={first}",
        )
    top.annotate(
        f"t={first}",
        xy=(first, 1.0),
        xycoords=("data", "axes fraction"),
        xytext=(3, -3),
        textcoords="offset points",
        va="top",
        color=_MARKER_COLOR,
        fontsize=8,
    )
    top.set_title(f"out of tolerance from t={first}", loc="right", fontsize=8, color=_MARKER_COLOR)


def _stepwise(item: Series | FieldComparison) -> bool:
    """Whether a field is drawn as steps: ints and bools, and rewards (paid per step)."""
    return item.discrete or item.path[:1] == ("reward",)


def _band_label(allowed: np.ndarray[Any, Any], difference: np.ndarray[Any, Any]) -> str:
    """The legend entry of the tolerance band, with its width where it is too thin to see.

    In the legend, not on the axes: a note there would hide the lines it crosses.
    """
    finite = difference[np.isfinite(difference)]
    widest = float(np.max(allowed)) if allowed.size else 0.0
    largest = float(np.max(np.abs(finite))) if finite.size else 0.0
    if largest > 0 and 0 < widest < _THIN_BAND * largest:
        return f"tolerance \N{PLUS-MINUS SIGN}{widest:.1e}\n(too thin to see here)"
    return "tolerance"


def _integer_steps(axes: Axes) -> None:
    from matplotlib.ticker import MaxNLocator

    axes.xaxis.set_major_locator(MaxNLocator(integer=True))


def _draw_series(
    axes: Axes,
    t: np.ndarray[Any, Any],
    values: np.ndarray[Any, Any],
    *,
    steps: bool,
    color: str,
    style: str = "-",
    label: str | None = None,
) -> None:
    axes.plot(
        t,
        _plottable(values),
        color=color,
        linestyle=style,
        linewidth=1.5,
        drawstyle="steps-post" if steps else "default",
        label=label,
        marker="." if len(t) <= 1 else None,
    )


def _plottable(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``values`` with finite ones beyond +-_PLOT_LIMIT at the limit; inf and NaN stay gaps."""
    return np.where(np.isfinite(values), np.clip(values, -_PLOT_LIMIT, _PLOT_LIMIT), values)


def _shade_one_sided(axes: Axes, item: FieldComparison, sides: tuple[str, str]) -> None:
    one_sided = item.in_golden ^ item.in_actual
    if not one_sided.any():
        return
    start = int(item.t[one_sided].min())
    end = int(item.t[one_sided].max())
    side = sides[0] if item.in_golden[one_sided].all() else sides[1]
    axes.axvspan(
        start - 0.5,
        end + 0.5,
        color=_ONE_SIDED_COLOR,
        alpha=0.08,
        linewidth=0,
        label=f"only in {side}",
    )


def _comparison_title(
    heading: str,
    found: tuple[EpisodeSeries | None, EpisodeSeries | None],
    fields: tuple[Sequence[FieldComparison], Sequence[FieldComparison], Sequence[FieldComparison]],
    display: Callable[[Path], str],
    sides: tuple[str, str],
) -> str:
    """The figure title; ``found`` are the golden's and actual's series, ``fields``
    the diverging, shown and chosen ones."""
    diverging, shown, chosen = fields
    verdicts = _one_sided_fields(chosen, sides)
    if diverging:
        head = diverging[0]
        verdicts.insert(
            0,
            f"first divergence at t={head.first} ({head.label}); "
            + ("1 field diverges" if len(diverging) == 1 else f"{len(diverging)} fields diverge"),
        )
    else:
        where = "where both have a field" if verdicts else "where both have the step"
        verdicts.append(f"no divergence within tolerance {where}")
    lengths = [_last_step(one) for one in found]
    if None not in lengths and lengths[0] != lengths[1]:
        verdicts.append(f"the lengths differ ({lengths[0]} vs {lengths[1]} steps)")
    lines = [f"{heading}: {sides[0]} vs {sides[1]}: {'; '.join(verdicts)}"]
    if len(shown) < len(chosen):
        lines[0] += f" (first {len(shown)} of {len(chosen)} fields shown)"
    stride = max((s.stride for one in found if one for s in one.series), default=1)
    if stride > 1:
        lines[0] += f" (every {stride}th step drawn, every step around the first divergence)"
    for side, one in zip(sides, found, strict=True):
        lines.append(f"{side}: {_where(one, display) if one else '(no such episode)'}")
    return title_lines("\n".join(lines))


def _one_sided_fields(chosen: Sequence[FieldComparison], sides: tuple[str, str]) -> list[str]:
    """``info.x only in golden``: the fields one side never has (a key renamed or removed)."""
    said = []
    for side, has_it in zip(sides, ("in_golden", "in_actual"), strict=True):
        other = "in_actual" if has_it == "in_golden" else "in_golden"
        labels = [
            f.label for f in chosen if getattr(f, has_it).any() and not getattr(f, other).any()
        ]
        if labels:
            more = (
                f" (+{len(labels) - _MAX_TITLE_FIELDS} more)"
                if len(labels) > _MAX_TITLE_FIELDS
                else ""
            )
            said.append(f"{', '.join(labels[:_MAX_TITLE_FIELDS])}{more} only in {side}")
    return [", ".join(said)] if said else []


def _last_step(found: EpisodeSeries | None) -> int | None:
    """The last step of an episode's series: its length (0 for a bare reset)."""
    if found is None:
        return None
    return max((int(series.t[-1]) for series in found.series if series.t.size), default=0)


def title_lines(text: str) -> str:
    """A title with every line wrapped to fit the figure's width."""
    return "\n".join(
        "\n".join(textwrap.wrap(line, _TITLE_CHARS, subsequent_indent="  ") or [""])
        for line in text.splitlines()
    )


def _title_room(title: str) -> float:
    """Inches of room above the axes for a title of this many lines."""
    return 0.25 + 0.22 * (title.count("\n") + 1)


def _episode_label(episode: EpisodeComparison) -> str:
    if episode.env is None:
        return f"episode {episode.index}"
    return f"sub-env {episode.env}, episode {episode.index}"


def _name(found: Sequence[EpisodeSeries | None], given: str | Path) -> str:
    """The env's id (from a header), else the name of the recording folder."""
    for item in found:
        env = ((item.header if item else None) or {}).get("env")
        name = env.get("id") or env.get("class") if isinstance(env, dict) else None
        if name:
            return escape_value(name)
    given_path = Path(given)
    return given_path.name if given_path.is_dir() else given_path.parent.name


def _where(found: EpisodeSeries, display: Callable[[Path], str]) -> str:
    """The file of an episode and its lines there."""
    where = _short(display(found.path))
    if found.lines is not None:
        first, last = found.lines
        where += f", line {first}" if first == last else f", lines {first}-{last}"
    return where


def _short(path: Path | str) -> str:
    text = str(path)
    return text if len(text) <= _MAX_TITLE_PATH else "…" + text[-(_MAX_TITLE_PATH - 1) :]


def _nothing_message(found: EpisodeSeries, episode: int, fields: Sequence[str] | None) -> str:
    chosen = ", ".join(fields) if fields else "any field"
    return (
        f"{_where(found, str)}: no numbers to plot in {chosen} (episode {episode}); "
        "choose numeric fields with --fields (obs, action, reward, info...)"
    )
