"""Summaries of recordings as text: what ``gym-goldens show`` prints.

A summary reads the recording file once, line by line, episode by episode, so
it works on long rollouts without holding them in memory: steps, return and
how each episode ended, plus the header (env, spaces, software) and the shape
of the recorded fields. What it keeps does not grow with the number of
episodes: totals, and the rows of the first ones. :func:`format_steps` prints
a range of steps of one episode as a table.

A recording is a folder holding ``trajectory.jsonl`` (every episode, each
opening with its header line) or that file alone; folders of format 1, a file
per episode (``episode_00000.jsonl``, ...), read the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final

from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.codec import ArraySummary, TaggedValue
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.format.lines import iter_episodes
from gym_goldens.format.reader import (
    Lines,
    episode_lines,
    iter_records,
    missing_episode,
    no_recording_reason,
    recording_files,
    reward_value,
)
from gym_goldens.present.text import MAX_DEPTH, escape, escape_value, short_repr

__all__ = [
    "MAX_EPISODE_ROWS",
    "MAX_LISTED_EPISODES",
    "EpisodeSummary",
    "RecordingSummary",
    "format_folder",
    "format_recording",
    "format_space",
    "format_steps",
    "summarize",
]

_STEP_FIELDS: Final = ("action", "obs", "reward", "terminated", "truncated", "info")
_INT_MIN: Final = -(2**63)
_INT_LIMIT: Final = 2**64

MAX_EPISODE_ROWS: Final = 40
"""The episodes ``gym-goldens show`` lists, the first ones."""

MAX_LISTED_EPISODES: Final = 100_000
"""The episodes ``gym-goldens show --all`` lists at most, the first ones: a row
each is kept in memory, so a recording of millions of episodes lists these."""
_MAX_CELL: Final = 48
_MAX_SHAPE: Final = 100
_MAX_BOUNDS: Final = 6

Advance = Callable[[int], None]


@dataclasses.dataclass(frozen=True)
class EpisodeSummary:
    """One episode of a recording, summarised: a row of ``gym-goldens show``.

    Attributes:
        index: The episode number (its place in the recording).
        path: The file that holds it.
        steps: Step records.
        total_reward: Sum of the scalar rewards.
        ending: ``terminated``, ``truncated`` or ``open`` (the recording
            stopped mid-episode).
        seed: The seed of its reset, from its header: None, an int of up to
            64 bits, or else its text cut to a table cell (so that a row
            takes the same memory whatever the file holds).
        line: The line of the file where the episode starts.
    """

    index: int
    path: Path
    steps: int
    total_reward: float
    ending: str
    seed: int | str | None = None
    line: int = 1


@dataclasses.dataclass(frozen=True)
class RecordingSummary:
    """A recording (a recording folder, or its file), summarised.

    What it keeps does not grow with the number of episodes: counts and sums
    of all of them, the first header, step and reset record, and a row for
    each of the first episodes.

    Attributes:
        path: The folder or file.
        episodes: The rows of the first episodes (as many as
            :func:`summarize` was asked for).
        episode_count: The episodes of the recording, all of them.
        steps: Steps over all episodes.
        total_reward: The sum of the returns of all episodes.
        header: The first episode's header.
        first_step: The first step record of the recording.
        reset: The first reset record of the recording.
    """

    path: Path
    episodes: tuple[EpisodeSummary, ...]
    episode_count: int = 0
    steps: int = 0
    total_reward: float = 0.0
    header: dict[str, Any] | None = None
    first_step: dict[str, Any] | None = None
    reset: dict[str, Any] | None = None


def summarize(
    path: str | Path,
    *,
    advance: Advance | None = None,
    rows: int = MAX_EPISODE_ROWS,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> RecordingSummary:
    """Summarise a recording folder or a recording file.

    Args:
        path: The folder or file.
        advance: Called with the number of records read, now and then (for
            a progress bar).
        rows: Keep the rows of this many episodes, the first ones (40, what
            ``show`` prints; ``show --all`` asks for
            :data:`MAX_LISTED_EPISODES`).
        max_decompressed_size: What the compressed files of the recording
            may expand to, in bytes.

    Raises:
        GoldenFormatError: A file cannot be read, or the folder holds no
            recording file.
    """
    files = recording_files(path)
    if not files:
        raise GoldenFormatError(path, no_recording_reason(path))
    totals = _Totals()
    kept: list[EpisodeSummary] = []
    episodes = iter_episodes(files, max_decompressed_size=max_decompressed_size)
    for index, (file, lines) in enumerate(episodes):
        episode = totals.add(index, file, lines, advance)
        if index < rows:
            kept.append(episode)
    return RecordingSummary(
        Path(path),
        tuple(kept),
        totals.episodes,
        totals.steps,
        totals.reward,
        totals.header,
        totals.first_step,
        totals.reset,
    )


class _Totals:
    """What a summary adds up over the episodes of a recording, and the first records of note."""

    def __init__(self) -> None:
        self.episodes = self.steps = 0
        self.reward = 0.0
        self.header: dict[str, Any] | None = None
        self.first_step: dict[str, Any] | None = None
        self.reset: dict[str, Any] | None = None

    def add(self, index: int, path: Path, lines: Lines, advance: Advance | None) -> EpisodeSummary:
        """Read one episode: its row; the totals counted."""
        header = last = None
        steps = pending = first_line = 0
        total = 0.0
        for number, record in iter_records(path, lines):
            first_line = first_line or number
            event = record["event"]
            if event == "header":
                header = record
            elif event == "reset":
                self.reset = self.reset or record
            else:
                steps += 1
                self.first_step = self.first_step or record
                total += reward_value(record.get("reward"))
            last = record
            pending += 1
            if advance is not None and pending >= 1000:
                advance(pending)
                pending = 0
        if advance is not None and pending:
            advance(pending)
        if index == 0:
            self.header = header
        self.episodes += 1
        self.steps += steps
        self.reward += total
        return EpisodeSummary(
            index, path, steps, total, _ending(last), _seed(header), first_line or 1
        )


def _ending(last: dict[str, Any] | None) -> str:
    if last is not None and last["event"] == "step":
        if last.get("terminated"):
            return "terminated"
        if last.get("truncated"):
            return "truncated"
    return "open"


def _seed(header: dict[str, Any] | None) -> int | str | None:
    """The seed of a header's reset, kept small (see :attr:`EpisodeSummary.seed`)."""
    reset = (header or {}).get("reset") or {}
    seed = reset.get("seed")
    if seed is None or (type(seed) is int and _INT_MIN <= seed < _INT_LIMIT):
        return seed
    return short_repr(seed, _MAX_CELL)


def format_recording(
    summary: RecordingSummary, *, display: Callable[[Path], str] = str
) -> list[str]:
    """The text of ``gym-goldens show`` for one recording: a row for each episode it kept."""
    episodes = summary.episodes
    header = summary.header or {}
    lines = [
        f"recording: {display(summary.path)}",
        f"  episodes: {summary.episode_count}, steps: {summary.steps:,}",
    ]
    env = header.get("env")
    if isinstance(env, dict):
        name = escape_value(env.get("id") or env.get("class") or "?")
        kwargs = env.get("kwargs")
        if isinstance(kwargs, dict) and kwargs:
            name += " " + ", ".join(
                f"{escape(key)}={short_repr(value, _MAX_CELL)}" for key, value in kwargs.items()
            )
        lines.append(f"  env: {name}")
    wrappers = header.get("wrappers")
    if isinstance(wrappers, list) and wrappers:
        lines.append(f"  wrappers: {' > '.join(escape_value(w) for w in wrappers)}")
    for key in ("observation_space", "action_space"):
        if isinstance(header.get(key), dict):
            lines.append(f"  {key.replace('_', ' ')}: {format_space(header[key])}")
    versions = header.get("versions")
    if isinstance(versions, dict) and versions:
        lines.append(
            "  recorded with: "
            + ", ".join(f"{escape(k)} {escape_value(v)}" for k, v in sorted(versions.items()))
        )
    if not header:
        lines.append("  (no header: a file in the original format)")
    step, reset = summary.first_step, summary.reset
    lines.append("  fields:")
    for field in _STEP_FIELDS:
        source = next((r for r in (step, reset) if r is not None and field in r), None)
        if source is not None:
            lines.append(f"    {field:<11} {_shape(source[field])}")
    lines.append("")
    rows = [["episode", "steps", "return", "ended", "seed"]]
    for episode in episodes:
        seed = episode.seed
        rows.append(
            [
                str(episode.index),
                f"{episode.steps:,}",
                _number(episode.total_reward),
                episode.ending,
                "-" if seed is None else escape_value(seed),
            ]
        )
    lines += ["  " + line for line in _table(rows, right=(0, 1, 2))]
    return lines + _more_episodes(summary)


def _more_episodes(summary: RecordingSummary) -> list[str]:
    """The line that counts the episodes a summary has no row for, if any."""
    more = summary.episode_count - len(summary.episodes)
    if more <= 0:
        return []
    listed = len(summary.episodes) >= MAX_LISTED_EPISODES
    how = f"--all lists the first {MAX_LISTED_EPISODES:,}" if listed else "show them all with --all"
    return [f"  ... {more} more episodes ({how})"]


def format_folder(
    root: Path, summaries: Sequence[RecordingSummary], *, display: Callable[[Path], str] = str
) -> list[str]:
    """The text of ``gym-goldens show`` for a folder of recordings (a goldens folder)."""
    episodes = sum(s.episode_count for s in summaries)
    steps = sum(s.steps for s in summaries)
    lines = [
        f"goldens folder: {display(root)}",
        f"  recordings: {len(summaries)}, episodes: {episodes:,}, steps: {steps:,}",
        "",
    ]
    rows = [["recording", "env", "episodes", "steps", "mean return"]]
    for summary in summaries:
        env = (summary.header or {}).get("env") or {}
        count = summary.episode_count
        rows.append(
            [
                escape(str(summary.path.relative_to(root))) if summary.path != root else ".",
                escape_value(env.get("id") or env.get("class") or "?"),
                str(count),
                f"{summary.steps:,}",
                _number(summary.total_reward / count) if count else "-",
            ]
        )
    lines += ["  " + line for line in _table(rows, right=(2, 3, 4))]
    lines.append("")
    lines.append("  show one of them with: gym-goldens show <folder>/<recording>")
    return lines


def format_steps(
    path: str | Path,
    start: int,
    stop: int | None,
    *,
    episode: int = 0,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> list[str]:
    """The records of one episode with ``start <= t < stop`` as a table.

    The reset record is ``t = 0``.

    Args:
        path: A recording folder or a recording file.
        start: The first step shown.
        stop: The step after the last one shown; None for the end.
        episode: The episode, numbered from 0 in the recording (in the file,
            when ``path`` is a file).
        max_decompressed_size: What the compressed files of the recording
            may expand to, in bytes.

    Raises:
        GoldenFormatError: The recording cannot be read or has no such episode.
    """
    limit = max_decompressed_size
    found = episode_lines(path, episode, max_decompressed_size=limit)
    if found is None:
        raise missing_episode(path, episode, max_decompressed_size=limit)
    file, lines = found
    selected: list[dict[str, Any]] = []
    first_line = 0
    for number, record in iter_records(file, lines):
        first_line = first_line or number
        if record["event"] == "header":
            continue
        t = 0 if record["event"] == "reset" else record["t"]
        if stop is not None and t >= stop:
            break
        if t >= start:
            selected.append(record)
    if not selected:
        end = "the end" if stop is None else str(stop)
        return [
            f"no steps with {start} <= t < {end} in episode {episode} of {file} "
            f"(from line {first_line or 1})"
        ]
    with_info = any(record.get("info") for record in selected)
    rows = [["t", "action", "reward", "term", "trunc", "obs"] + (["info"] if with_info else [])]
    for record in selected:
        is_step = record["event"] == "step"
        row = [
            str(record["t"]) if is_step else "0 (reset)",
            _cell(record.get("action")) if is_step else "",
            _cell(record.get("reward")) if is_step else "",
            _flag(record.get("terminated")) if is_step else "",
            _flag(record.get("truncated")) if is_step else "",
            _cell(record.get("obs")),
        ]
        if with_info:
            row.append(_cell(record.get("info")))
        rows.append(row)
    return _table(rows, right=(0, 2))


def format_space(description: Any, depth: int = 0) -> str:
    """A space description from a header (a dict), written like Gymnasium's repr.

    What came from the file is escaped, and spaces nested deeper than
    :data:`~gym_goldens.present.text.MAX_DEPTH` are written ``...``.

    Example:
        >>> format_space({"type": "Discrete", "n": 3, "start": 1})
        'Discrete(3, start=1)'
    """
    if not isinstance(description, dict):
        return escape_value(description)
    if depth >= MAX_DEPTH:
        return "..."
    kind = escape_value(description.get("type", "?"))
    inner = depth + 1
    if kind == "Box":
        shape = description.get("shape") or ()
        shape = tuple(shape) if isinstance(shape, list) else shape
        return (
            f"Box({_bounds(description.get('low'))}, {_bounds(description.get('high'))}, "
            f"{short_repr(shape, _MAX_CELL)}, {escape_value(description.get('dtype'))})"
        )
    if kind == "Discrete":
        start = description.get("start", 0)
        start_text = f", start={_cell(start)})" if start else ")"
        return f"Discrete({_cell(description.get('n'))}" + start_text
    if kind == "MultiDiscrete":
        return f"MultiDiscrete({_bounds(description.get('nvec'))})"
    if kind == "MultiBinary":
        return f"MultiBinary({_cell(description.get('n'))})"
    if kind == "Dict":
        spaces = description.get("spaces") or {}
        items = spaces.items() if isinstance(spaces, dict) else []
        return "Dict(" + ", ".join(f"{escape(k)}: {format_space(v, inner)}" for k, v in items) + ")"
    if kind in ("Tuple", "OneOf"):
        spaces = description.get("spaces") or []
        return f"{kind}(" + ", ".join(format_space(v, inner) for v in spaces) + ")"
    if kind == "Text":
        low, high = _cell(description.get("min_length")), _cell(description.get("max_length"))
        return f"Text({low}..{high} chars)"
    if kind == "Sequence":
        return f"Sequence({format_space(description.get('feature_space') or {}, inner)})"
    if kind == "Graph":
        node = format_space(description.get("node_space") or {}, inner)
        edge = description.get("edge_space")
        return f"Graph(nodes {node}" + (f", edges {format_space(edge, inner)})" if edge else ")")
    return kind


def _bounds(value: Any) -> str:
    flat = list(_flatten(value))
    if flat and all(item == flat[0] for item in flat):
        return _number(flat[0])  # one number stands for all, as gymnasium writes it
    if len(flat) > _MAX_BOUNDS:
        return "[" + " ".join(_number(v) for v in flat[:_MAX_BOUNDS]) + " ...]"
    return "[" + " ".join(_number(v) for v in flat) + "]"


def _flatten(value: Any, depth: int = 0) -> Iterator[Any]:
    if isinstance(value, list):
        if depth >= MAX_DEPTH:
            yield "..."
            return
        for item in value:
            yield from _flatten(item, depth + 1)
    elif value is not None:
        yield value


def _shape(value: Any) -> str:
    text = _shape_of(value)
    return text if len(text) <= _MAX_SHAPE else text[: _MAX_SHAPE - 3] + "..."


def _shape_of(value: Any, depth: int = 0) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float, str)):
        return type(value).__name__
    if isinstance(value, ArraySummary):
        shape = short_repr(value.shape, _MAX_SHAPE)
        return f"{escape_value(value.dtype)} array {shape} (stored as a summary)"
    if isinstance(value, TaggedValue):
        return escape(value.tag.lstrip("$"))
    if depth >= MAX_DEPTH:
        return "..."
    if isinstance(value, dict):
        items = (f"{escape(key)}: {_shape_of(item, depth + 1)}" for key, item in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list):
        dims: list[int] = []
        inner: Any = value
        while isinstance(inner, list):
            dims.append(len(inner))
            if not inner or len(dims) > MAX_DEPTH:
                break
            kinds = {_shape_of(item, depth + len(dims)) for item in inner}
            if len(kinds) != 1:
                return f"list[{len(value)}] of mixed"
            inner = inner[0]
        element = _shape_of(inner, depth + len(dims)) if not isinstance(inner, list) else "?"
        return f"{element}[{', '.join(str(d) for d in dims)}]"
    return type(value).__name__


def _number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return short_repr(value, _MAX_CELL)
    if isinstance(value, int):
        return short_repr(value, _MAX_CELL)  # an int of 10^5 digits is not written out
    return f"{value:.6g}"


def _flag(value: Any) -> str:
    return "yes" if value else "-"


def _cell(value: Any) -> str:
    text = _compact(value)
    return text if len(text) <= _MAX_CELL else text[: _MAX_CELL - 3] + "..."


def _compact(value: Any, depth: int = 0) -> str:
    if isinstance(value, (list, dict)) and depth >= MAX_DEPTH:
        return "[...]" if isinstance(value, list) else "{...}"
    if isinstance(value, list):
        return "[" + ", ".join(_compact(item, depth + 1) for item in value) + "]"
    if isinstance(value, dict):
        items = (f"{escape(key)}: {_compact(item, depth + 1)}" for key, item in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, ArraySummary):
        shape = short_repr(value.shape, _MAX_CELL)
        return f"<{escape_value(value.dtype)} {shape} mean {_number(value.mean)}>"
    if isinstance(value, float):
        return _number(value)
    if value is None:
        return "null"
    if isinstance(value, str):
        return escape(value)
    return short_repr(value, _MAX_CELL)


def _table(rows: Sequence[Sequence[str]], *, right: Sequence[int] = ()) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.rjust(width) if i in right else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return lines
