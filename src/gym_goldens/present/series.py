"""Numeric fields of recorded episodes as time series, and where two of them part.

Every numeric leaf of a record (``obs[2]``, ``action``, ``reward``,
``info.x_velocity``; the mean of an array stored as a summary) becomes a
:class:`Series` over the steps of an episode, with the reset record at
``t = 0``. :func:`compare_series` lines up a golden and an actual episode
leaf by leaf and finds the first step where each leaves its tolerance. The
plots of :mod:`gym_goldens.present.viz` are drawn from these; this module needs no
matplotlib.

Example:
    >>> import gymnasium as gym, tempfile
    >>> from gym_goldens import RecordTrajectory
    >>> out = tempfile.mkdtemp()
    >>> env = RecordTrajectory(gym.make("CartPole-v1"), out)
    >>> _ = env.reset(seed=0)
    >>> for t in range(3):
    ...     _ = env.step(t % 2)
    >>> env.close()
    >>> [(s.label, s.t.tolist()) for s in episode_series(out, ["reward"])]
    [('reward', [1, 2, 3])]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

import numpy as np

from gym_goldens.comparison.floats import arrays_allowed, arrays_match
from gym_goldens.comparison.result import Comparison, EpisodeComparison
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.agents import agent_of
from gym_goldens.format.codec import ArraySummary
from gym_goldens.format.fields import (
    STEP_VALUES,
    FieldPath,
    format_path,
    parse_pattern,
    pattern_matches,
)
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.format.reader import Episode, episode_lines, iter_records, missing_episode
from gym_goldens.present.text import MAX_DEPTH, escape

__all__ = [
    "DEFAULT_FIELDS",
    "MAX_ARRAY_ELEMENTS",
    "MAX_POINTS",
    "SERIES_FIELDS",
    "EpisodeSeries",
    "FieldComparison",
    "Series",
    "agent_label",
    "by_agent",
    "compare_series",
    "episode_holder",
    "episode_series",
    "read_episode_series",
    "value_divergences",
]

DEFAULT_FIELDS: Final = ("obs", "action", "reward")
"""The fields plotted when none are chosen."""

SERIES_FIELDS: Final = (*DEFAULT_FIELDS, *(f for f in STEP_VALUES if f not in DEFAULT_FIELDS))
"""The fields of a record that hold values (what ``fields=None`` chooses), those plotted
by default first."""

_MEAN: Final = "$mean"
# The steps, values and integer-ness of a leaf's values kept so far.
_Column = tuple[list[int], list[float], list[bool]]
_ADVANCE_EVERY: Final = 1000
MAX_POINTS: Final = 10_000
"""Series hold at most about this many steps: longer episodes keep every k-th step."""
MAX_ARRAY_ELEMENTS: Final = 64
"""Larger arrays are one series, their mean, unless a field pattern names their elements."""


@dataclasses.dataclass(frozen=True)
class Series:
    """One numeric leaf of the records of an episode, over time.

    Attributes:
        path: The leaf, such as ``("obs", 2)``; an array stored as a summary,
            or one of more than :data:`MAX_ARRAY_ELEMENTS` elements, gives
            ``(..., "$mean")``, the mean of its elements.
        t: The steps that hold the leaf (the reset record is ``t = 0``).
        values: Its values there, as floats.
        discrete: Whether every value was an int or a bool.
        stride: Every how many steps a step was kept: 1 for all of them;
            more in an episode too long to keep whole (see :data:`MAX_POINTS`).
    """

    path: FieldPath
    t: np.ndarray[Any, np.dtype[np.int64]]
    values: np.ndarray[Any, np.dtype[np.float64]]
    discrete: bool
    stride: int = 1

    @property
    def label(self) -> str:
        """The leaf as text: ``obs[2]``, ``info.x``, ``mean(obs.image)``."""
        return _label(self.path)


_Leaf = TypeVar("_Leaf", "Series", "FieldComparison")


@dataclasses.dataclass(frozen=True)
class FieldComparison:
    """Golden and actual values of one leaf, on the steps of either.

    Attributes:
        path: The leaf.
        t: Every step that holds the leaf on either side.
        golden: Golden values (NaN where the golden lacks the step).
        actual: Actual values (NaN where the actual recording lacks it).
        in_golden: Where the golden holds the step.
        in_actual: Where the actual recording holds the step.
        allowed: The largest difference the tolerance allows, per step.
        first: The first step, held by both sides, out of tolerance; None
            when the leaf matches wherever both hold it.
        discrete: Whether the values are ints or bools on both sides.
        first_unpaired: The first step held by one side only (one episode
            is longer, or the leaf appears on one side), or None.
    """

    path: FieldPath
    t: np.ndarray[Any, np.dtype[np.int64]]
    golden: np.ndarray[Any, np.dtype[np.float64]]
    actual: np.ndarray[Any, np.dtype[np.float64]]
    in_golden: np.ndarray[Any, np.dtype[np.bool_]]
    in_actual: np.ndarray[Any, np.dtype[np.bool_]]
    allowed: np.ndarray[Any, np.dtype[np.float64]]
    first: int | None
    discrete: bool
    first_unpaired: int | None = None

    @property
    def label(self) -> str:
        """The leaf as text."""
        return _label(self.path)

    @property
    def diverges(self) -> bool:
        """Whether the leaf leaves its tolerance somewhere both sides hold it."""
        return self.first is not None

    @property
    def differs(self) -> bool:
        """Whether it diverges, or a step is held by one side only."""
        return self.first is not None or self.first_unpaired is not None


def episode_series(
    recording: str | Path | Episode,
    fields: Sequence[str] | None = DEFAULT_FIELDS,
    *,
    episode: int = 0,
    advance: Callable[[int], None] | None = None,
    max_points: int = MAX_POINTS,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> list[Series]:
    """The numeric leaves of the chosen fields of one episode, over time.

    Args:
        recording: A recording folder or a recording file, or an
            :class:`~gym_goldens.format.reader.Episode` already read (then
            ``episode`` is not used).
        fields: Field patterns (``"obs"``, ``"obs[2]"``, ``"info.*"``); None
            for every field.
        episode: The episode, numbered from 0 in the recording (in the file,
            when ``recording`` is a file).
        advance: Called with the number of records read, now and then (for
            a progress bar).
        max_points: Keep at most about this many steps of each series; a
            longer episode keeps every k-th step (:attr:`Series.stride`).
        max_decompressed_size: What the compressed files of the recording
            may expand to, in bytes.

    Raises:
        GoldenFormatError: The recording cannot be read or has no such episode.
        ValueError: A field pattern is malformed.

    Example:
        >>> import gymnasium as gym, tempfile
        >>> from gym_goldens import RecordTrajectory
        >>> out = tempfile.mkdtemp()
        >>> env = RecordTrajectory(gym.make("CartPole-v1"), out)
        >>> for seed in (0, 1):
        ...     _ = env.reset(seed=seed); _ = env.step(0)
        >>> env.close()
        >>> [s.label for s in episode_series(out, ["reward"], episode=1)]
        ['reward']
    """
    found = read_episode_series(
        recording,
        episode,
        fields,
        advance,
        max_points=max_points,
        max_decompressed_size=max_decompressed_size,
    )
    assert found is not None  # only missing_ok reads give None
    return found.series


@dataclasses.dataclass(frozen=True)
class EpisodeSeries:
    """The series of one episode, and where they were read (for a plot's title).

    Attributes:
        series: Its numeric leaves over time.
        path: The file that holds it.
        header: Its header record, if it has one.
        lines: Its first and last line in the file (None when it was given
            as an Episode already read).
    """

    series: list[Series]
    path: Path
    header: dict[str, Any] | None
    lines: tuple[int, int] | None


def read_episode_series(
    recording: str | Path | Episode,
    episode: int,
    fields: Sequence[str] | None,
    advance: Callable[[int], None] | None,
    *,
    missing_ok: bool = False,
    max_points: int = MAX_POINTS,
    keep: tuple[int, int] | None = None,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> EpisodeSeries | None:
    """Read the series of one episode, with the file and lines they come from.

    Args:
        recording: As for :func:`episode_series`.
        episode: The episode, numbered from 0 in the recording (in the file,
            when ``recording`` is a file).
        fields: Field patterns; None for every field.
        advance: Called with the number of records read, now and then.
        missing_ok: Give None for an episode the recording does not have,
            instead of raising.
        max_points: Keep at most about this many steps of each series; a
            longer episode keeps every k-th step (:attr:`Series.stride`).
        keep: The first and last step kept whatever the stride (around a
            divergence, say).
        max_decompressed_size: What the compressed files of the recording
            may expand to, in bytes.

    Raises:
        GoldenFormatError: The recording cannot be read, or has no such
            episode (unless ``missing_ok``).
        ValueError: A field pattern is malformed.
    """
    # Patterns first: a typo is reported before a long file is read.
    selectors = [parse_pattern(field) for field in (fields or SERIES_FIELDS)]
    if isinstance(recording, Episode):
        numbered = ((None, record) for record in recording.records)
        series = _collect(
            numbered, recording.path, selectors, advance, max_points=max_points, keep=keep
        )
        return EpisodeSeries(series, recording.path, recording.header, None)
    found = episode_lines(recording, episode, max_decompressed_size=max_decompressed_size)
    if found is None:
        if missing_ok and episode >= 0:
            return None
        raise missing_episode(recording, episode, max_decompressed_size=max_decompressed_size)
    read = _EpisodeLines(*found)
    series = _collect(read, read.path, selectors, advance, max_points=max_points, keep=keep)
    return EpisodeSeries(series, read.path, read.header, (read.first, read.last))


class _EpisodeLines:
    """The records of an episode's lines in a file; what was read notes its header and lines.

    Attributes:
        path: The file.
        first: The number of the first line read (0 before any).
        last: That of the last line read.
        header: The header record, once read.
    """

    def __init__(self, path: Path, lines: Iterable[tuple[int, bytes]]) -> None:
        self.path = path
        self._lines = lines
        self.first = self.last = 0
        self.header: dict[str, Any] | None = None

    def __iter__(self) -> Iterator[tuple[int | None, dict[str, Any]]]:
        for number, record in iter_records(self.path, self._lines):
            self.first, self.last = self.first or number, number
            if self.header is None and record["event"] == "header":
                self.header = record
            yield number, record


def _collect(
    records: Iterable[tuple[int | None, dict[str, Any]]],
    path: Path,
    selectors: Sequence[FieldPath],
    advance: Callable[[int], None] | None,
    *,
    max_points: int = MAX_POINTS,
    keep: tuple[int, int] | None = None,
) -> list[Series]:
    """The series of the leaves that ``selectors`` choose in ``records``.

    Memory stays bounded however long the episode (see :class:`_Columns`):
    later records are read only at the stride kept so far.

    Args:
        records: ``(line number, record)`` of the episode's records (the
            number None when not known).
        path: Their file, for errors.
        selectors: The field patterns chosen.
        advance: Called with the number of records read, now and then.
        max_points: As for :func:`read_episode_series`.
        keep: Likewise.

    Raises:
        GoldenFormatError: A step's ``t`` is not the one after the step
            before it: the bound on memory counts on it (and a step number
            past any integer type would not fit the time axis).
    """
    tops = [key for key in SERIES_FIELDS if any(s[0] in (key, "*") for s in selectors)]
    columns = _Columns(selectors, max_points, keep)
    for t, record in _numbered_steps(_reported(records, advance), path):
        if columns.wants(t):
            leaves: list[tuple[FieldPath, float, bool]] = []
            for key in tops:
                if key in record:
                    _leaves(record[key], (key,), leaves, selectors)
            columns.add(t, leaves)
    return columns.series()


def _reported(
    records: Iterable[tuple[int | None, dict[str, Any]]], advance: Callable[[int], None] | None
) -> Iterator[tuple[int | None, dict[str, Any]]]:
    """``records``, with their count handed to ``advance`` now and then, and at the end."""
    if advance is None:
        yield from records
        return
    count = 0
    for item in records:
        count += 1
        if count % _ADVANCE_EVERY == 0:
            advance(_ADVANCE_EVERY)
        yield item
    if count % _ADVANCE_EVERY:
        advance(count % _ADVANCE_EVERY)


def _numbered_steps(
    records: Iterable[tuple[int | None, dict[str, Any]]], path: Path
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(t, record)`` of the reset (``t = 0``) and the steps of an episode; no header.

    Raises:
        GoldenFormatError: A step's ``t`` is not the one after the step before it.
    """
    previous = 0
    for number, record in records:
        event = record["event"]
        if event == "header":
            continue
        if event == "reset":
            t = previous = 0
        else:
            t = record["t"]
            if t != previous + 1:
                raise _out_of_order(path, number, t, previous)
            previous = t
        yield t, record


class _Columns:
    """The values of each chosen leaf at the steps kept, in memory bounded by ``max_points``.

    When more than ``max_points`` steps are kept, only every other one stays
    (the stride doubles) and later steps are kept only at the stride; the
    steps of ``keep`` (first and last ``t``) are always kept.
    """

    def __init__(
        self, selectors: Sequence[FieldPath], max_points: int, keep: tuple[int, int] | None
    ) -> None:
        self._selectors = selectors
        self._max_points = max_points
        self._low, self._high = keep if keep is not None else (1, 0)
        self._stride = 1
        self._kept = 0
        self._columns: dict[FieldPath, _Column] = {}

    def wants(self, t: int) -> bool:
        """Whether step ``t`` is kept, at the stride so far."""
        return not t % self._stride or self._low <= t <= self._high

    def add(self, t: int, leaves: Iterable[tuple[FieldPath, float, bool]]) -> None:
        """Keep the values of step ``t``: ``(leaf, value, discrete)``, for the leaves chosen."""
        columns = self._columns
        for leaf, value, discrete in leaves:
            column = columns.get(leaf)
            if column is None:
                if not any(pattern_matches(s, leaf) for s in self._selectors):
                    continue
                column = columns[leaf] = ([], [], [])
            column[0].append(t)
            column[1].append(value)
            column[2].append(discrete)
        self._kept += 1
        if self._kept > self._max_points:
            self._stride *= 2
            self._kept = _thin(columns, self._stride, self._low, self._high)

    def series(self) -> list[Series]:
        """A series per leaf, in the order of the selectors that chose them."""
        return [
            Series(
                leaf,
                np.asarray(ts, dtype=np.int64),
                np.asarray(values, dtype=np.float64),
                all(flags),
                self._stride,
            )
            for leaf, (ts, values, flags) in _ordered(self._columns, self._selectors)
        ]


def _out_of_order(path: Path, line: int | None, t: int, previous: int) -> GoldenFormatError:
    after = "the reset" if previous == 0 else f"t={previous}"
    return GoldenFormatError(
        path,
        f"step t={t} follows {after}; the steps of an episode are numbered 1, 2, 3, ..., so "
        "this file is damaged",
        line=line,
    )


def _thin(
    columns: dict[FieldPath, _Column],
    stride: int,
    low: int,
    high: int,
) -> int:
    """Keep the steps at ``stride`` (and those from ``low`` to ``high``); the most left."""
    most = 0
    for ts, values, flags in columns.values():
        chosen = [i for i, t in enumerate(ts) if not t % stride or low <= t <= high]
        ts[:] = [ts[i] for i in chosen]
        values[:] = [values[i] for i in chosen]
        flags[:] = [flags[i] for i in chosen]
        most = max(most, len(ts))
    return most


def compare_series(
    golden: Sequence[Series], actual: Sequence[Series], tolerance: Tolerance | None = None
) -> list[FieldComparison]:
    """Line up golden and actual series leaf by leaf and find where they part.

    A step matches as in :func:`gym_goldens.compare`: within
    ``atol + rtol * |golden|``, NaN matching NaN; ints and bools exactly;
    ignored fields are left out. A step held by one side only diverges.
    Series kept at different strides (episodes of other lengths) are
    compared at the larger one.
    """
    tolerance = tolerance or Tolerance()
    stride = max((series.stride for series in [*golden, *actual]), default=1)
    golden_by_path = {series.path: _at_stride(series, stride) for series in golden}
    actual_by_path = {series.path: _at_stride(series, stride) for series in actual}
    found = []
    for path in dict.fromkeys([*golden_by_path, *actual_by_path]):
        rtol, atol, ignored = _tolerance_at(tolerance, path)
        if not ignored:
            golden_series, actual_series = golden_by_path.get(path), actual_by_path.get(path)
            found.append(_compare_one(path, golden_series, actual_series, rtol, atol))
    return found


def value_divergences(
    comparison: Comparison,
    episode: EpisodeComparison,
    *,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> list[FieldComparison]:
    """The numeric leaves of a differing episode whose values leave their tolerance.

    What a first divergence that is a change of numpy type hides: the values
    that part later, in this field or another one. The episode is read
    again, both sides, every field (large arrays as their mean).
    """
    found = [
        read_episode_series(
            holder,
            episode.index,
            None,
            None,
            missing_ok=True,
            max_decompressed_size=max_decompressed_size,
        )
        if holder is not None
        else None
        for holder in (
            episode_holder(comparison.golden, episode.golden_path),
            episode_holder(comparison.actual, episode.actual_path),
        )
    ]
    golden, actual = (one.series if one is not None else [] for one in found)
    return [f for f in compare_series(golden, actual, comparison.tolerance) if f.diverges]


def episode_holder(recording: str | Path, file: Path | None) -> Path | None:
    """The recording in which an episode of a comparison has its number.

    The recording itself when it is a file; else the folder of the file that
    holds the episode (the recording folder, or a sub-env's folder).
    """
    if file is None:
        return None
    given = Path(recording)
    return given if given.is_file() else file.parent


def _at_stride(series: Series, stride: int) -> Series:
    """The series with only its steps at ``stride`` (and those it kept around a divergence)."""
    if series.stride == stride:
        return series
    kept = series.t % stride == 0
    # The steps a series keeps whatever its stride are kept here too.
    kept |= np.isin(series.t, series.t[series.t % series.stride != 0])
    return dataclasses.replace(series, t=series.t[kept], values=series.values[kept], stride=stride)


def _compare_one(
    path: FieldPath, golden: Series | None, actual: Series | None, rtol: float, atol: float
) -> FieldComparison:
    golden_t = golden.t if golden is not None else np.empty(0, dtype=np.int64)
    actual_t = actual.t if actual is not None else np.empty(0, dtype=np.int64)
    grid = np.union1d(golden_t, actual_t)
    golden_values = np.full(grid.shape, np.nan)
    actual_values = np.full(grid.shape, np.nan)
    in_golden = np.zeros(grid.shape, dtype=bool)
    in_actual = np.zeros(grid.shape, dtype=bool)
    if golden is not None:
        index = np.searchsorted(grid, golden.t)
        golden_values[index] = golden.values
        in_golden[index] = True
    if actual is not None:
        index = np.searchsorted(grid, actual.t)
        actual_values[index] = actual.values
        in_actual[index] = True
    discrete = (golden is None or golden.discrete) and (actual is None or actual.discrete)
    if discrete:
        rtol = atol = 0.0  # ints and bools match exactly
    # The band drawn around the golden: the largest difference that matches.
    finite_golden = np.nan_to_num(golden_values, nan=0.0, posinf=0.0, neginf=0.0)
    allowed = arrays_allowed(finite_golden, rtol, atol)
    both = in_golden & in_actual
    misses = np.flatnonzero(both & ~arrays_match(golden_values, actual_values, rtol, atol))
    first = int(grid[misses[0]]) if misses.size else None
    unpaired = np.flatnonzero(~both)
    first_unpaired = int(grid[unpaired[0]]) if unpaired.size else None
    return FieldComparison(
        path,
        grid,
        golden_values,
        actual_values,
        in_golden,
        in_actual,
        allowed,
        first,
        discrete,
        first_unpaired,
    )


def _tolerance_at(tolerance: Tolerance, path: FieldPath) -> tuple[float, float, bool]:
    node = tolerance.tree()
    for segment in path:
        if segment == _MEAN:
            break
        node = node.child(segment)
        if node.ignored:
            return node.rtol, node.atol, True
    return node.rtol, node.atol, node.ignored


def _leaves(
    value: Any,
    path: FieldPath,
    out: list[tuple[FieldPath, float, bool]],
    selectors: Sequence[FieldPath],
) -> None:
    kind = type(value)
    if kind is float:
        out.append((path, value, False))
    elif kind is int or kind is bool:
        try:
            out.append((path, float(value), True))
        except OverflowError:  # an int beyond float range has no place on an axis
            return
    elif len(path) > MAX_DEPTH:
        return  # too deep for a plot's labels; real records nest a few levels
    elif kind is list:
        named = _named_inside(path, selectors)
        if named is None and _size(value) > MAX_ARRAY_ELEMENTS:
            mean = _mean(value)
            if mean is not None:
                # An image kept in full: one series, not one per pixel.
                out.append(((*path, _MEAN), mean, False))
                return
        indices = range(len(value)) if named is None else [i for i in named if i < len(value)]
        for index in indices:
            _leaves(value[index], (*path, index), out, selectors)
    elif kind is dict:
        for key, item in value.items():
            _leaves(item, (*path, key), out, selectors)
    elif isinstance(value, ArraySummary) and value.mean is not None:
        out.append(((*path, _MEAN), float(value.mean), False))


def _named_inside(path: FieldPath, selectors: Sequence[FieldPath]) -> list[int] | None:
    """The indices of a list at ``path`` that patterns name one by one; None for all of them."""
    depth = len(path)
    named: set[int] = set()
    for selector in selectors:
        if len(selector) <= depth or not pattern_matches(selector[:depth], path):
            if pattern_matches(selector, path):
                return None  # the pattern chooses the whole list
            continue
        segment = selector[depth]
        if not isinstance(segment, int):
            return None  # obs[*] or a key: every item
        named.add(segment)
    return sorted(named) if named else None


def _size(value: list[Any]) -> int:
    """The number of leaves of nested lists, counted along the first item of each level."""
    size = 1
    while type(value) is list:
        size *= len(value)
        if not value:
            break
        value = value[0]
    return size


def _mean(value: list[Any]) -> float | None:
    try:
        array = np.asarray(value, dtype=np.float64)
    except (ValueError, TypeError, OverflowError):
        return None  # not an array of numbers
    with np.errstate(invalid="ignore", over="ignore"):
        return float(array.mean()) if array.size else None


def _ordered(
    columns: dict[FieldPath, _Column],
    selectors: Sequence[FieldPath],
) -> Iterable[tuple[FieldPath, _Column]]:
    """Leaves in the order of the selectors that chose them, then as found."""

    def rank(leaf: FieldPath) -> int:
        return next(i for i, selector in enumerate(selectors) if pattern_matches(selector, leaf))

    return sorted(columns.items(), key=lambda item: rank(item[0]))


def _label(path: FieldPath) -> str:
    # Keys come from the file: escaped, as in every text shown.
    if path and path[-1] == _MEAN:
        return f"mean({escape(format_path(path[:-1]))})"
    return escape(format_path(path))


def by_agent(
    leaves: Sequence[_Leaf], header: dict[str, Any] | None
) -> list[tuple[str, list[_Leaf]]] | None:
    """The leaves of a multi-agent episode by agent; None for a single env's.

    Agents come in the order of their first leaf (the diverging ones first,
    when the leaves are so ordered), and their leaves in the order given.
    Which key is an agent's is told by the header's ``possible_agents``; a
    leaf of no agent (none in a multi-agent record's value fields) is in the
    group ``""``.

    Example:
        >>> leaf = Series(("obs", "a1", 0), np.array([1]), np.array([0.5]), False)
        >>> [(agent, [agent_label(s.path) for s in found]) for agent, found in
        ...  by_agent([leaf], {"possible_agents": ["a0", "a1"]})]
        [('a1', ['obs[0]'])]
    """
    if header is None or not isinstance(header.get("possible_agents"), list):
        return None
    groups: dict[str, list[_Leaf]] = {}
    for leaf in leaves:
        groups.setdefault(agent_of(leaf.path, header) or "", []).append(leaf)
    return list(groups.items())


def agent_label(path: FieldPath) -> str:
    """An agent's leaf as text without the agent: ``obs[2]`` for ``obs.agent_1[2]``."""
    return _label((path[0], *path[2:]) if len(path) > 1 else path)
