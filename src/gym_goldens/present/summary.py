"""Summaries of recordings as text: what ``gym-goldens show`` prints.

A summary reads the recording file once, line by line, episode by episode, so
it works on long rollouts without holding them in memory: steps, return and
how each episode ended, plus the header (env, spaces, software) and the shape
of the recorded fields. What it keeps does not grow with the number of
episodes: totals, and the rows of the first ones. :func:`format_steps` prints
a range of steps of one episode as a table.

A recording is a folder holding ``trajectory.jsonl`` (every episode, each
opening with its header line) or that file alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final

from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.agents import episode_ended
from gym_goldens.format.codec import ArraySummary, TaggedValue
from gym_goldens.format.fields import ANY, FieldPath, format_path, parse_pattern
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.format.lines import iter_episodes
from gym_goldens.format.reader import (
    Lines,
    Return,
    add_reward,
    episode_lines,
    iter_records,
    missing_episode,
    no_recording_reason,
    recording_files,
)
from gym_goldens.present.text import MAX_DEPTH, counted, escape, escape_value, short_repr

__all__ = [
    "MAX_AGENT_RETURNS",
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
MAX_AGENT_RETURNS: Final = 8
"""The agents of a multi-agent recording whose returns ``gym-goldens show`` lists, the first
ones: a column each."""
_MAX_CELL: Final = 48
# A cell of a field chosen with --fields: cut only where a value has no place in a table.
_MAX_CHOSEN_CELL: Final = 400
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
        total_reward: The summed reward: a float, or one per objective for
            a vector reward.
        ending: ``terminated``, ``truncated`` or ``open`` (the recording
            stopped mid-episode). A multi-agent episode ends when no agent
            is left, as its last step's agents did (a parallel env's: any
            agent terminated, else truncated; an AEC env's: its acting
            agent); ``ended`` when none of them was.
        seed: The seed of its reset, from its header: None, an int of up to
            64 bits, or else its text cut to a table cell (so that a row
            takes the same memory whatever the file holds).
        line: The line of the file where the episode starts.
        agent_returns: A multi-agent episode's return of each agent, in the
            order of the header's ``possible_agents`` (the first
            :data:`MAX_AGENT_RETURNS`); its ``total_reward`` sums every agent's.
    """

    index: int
    path: Path
    steps: int
    total_reward: Return
    ending: str
    seed: int | str | None = None
    line: int = 1
    agent_returns: tuple[tuple[str, Return], ...] = ()


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
    total_reward: Return = 0.0
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
        self.reward: Return = 0.0
        self.header: dict[str, Any] | None = None
        self.first_step: dict[str, Any] | None = None
        self.reset: dict[str, Any] | None = None

    def add(self, index: int, path: Path, lines: Lines, advance: Advance | None) -> EpisodeSummary:
        """Read one episode: its row; the totals counted."""
        header = last = None
        steps = pending = first_line = 0
        total: Return = 0.0
        returns = _AgentReturns()
        for number, record in iter_records(path, lines):
            first_line = first_line or number
            event = record["event"]
            if event == "header":
                header = record
                returns = _AgentReturns(header)
            elif event == "reset":
                self.reset = self.reset or record
            else:
                steps += 1
                self.first_step = self.first_step or record
                reward = record.get("reward")
                if isinstance(reward, dict):
                    total = returns.add(total, reward)
                else:
                    total = add_reward(total, reward)
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
        self.reward = add_reward(self.reward, total)
        return EpisodeSummary(
            index,
            path,
            steps,
            total,
            _ending(last),
            _seed(header),
            first_line or 1,
            returns.by_agent(),
        )


class _AgentReturns:
    """The return of each agent of a multi-agent episode (of the first agents the header names)."""

    def __init__(self, header: dict[str, Any] | None = None) -> None:
        agents = (header or {}).get("possible_agents")
        named = agents[:MAX_AGENT_RETURNS] if isinstance(agents, list) else []
        # Keyed as the records write them: an agent id that is no string, as its text.
        self._returns: dict[str, Return] = {
            agent if isinstance(agent, str) else str(agent): 0.0 for agent in named
        }

    def add(self, total: Return, reward: dict[str, Any]) -> Return:
        """``total`` plus a step's rewards of every agent; each named agent's return counted."""
        returns = self._returns
        for agent, value in reward.items():
            total = add_reward(total, value)
            if agent in returns:
                returns[agent] = add_reward(returns[agent], value)
        return total

    def by_agent(self) -> tuple[tuple[str, Return], ...]:
        return tuple(self._returns.items())


def _ending(last: dict[str, Any] | None) -> str:
    if last is None or last["event"] != "step":
        return "open"
    terminated, truncated = last.get("terminated"), last.get("truncated")
    if isinstance(terminated, dict):
        # A multi-agent step: the episode ended when no agent was left, as they did.
        if not episode_ended(last):
            return "open"
        terminated = any(terminated.values())
        truncated = isinstance(truncated, dict) and any(truncated.values())
        if not (terminated or truncated):
            return "ended"
    if terminated:
        return "terminated"
    if truncated:
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
    lines = [
        f"recording: {display(summary.path)}",
        f"  episodes: {summary.episode_count}, steps: {summary.steps:,}",
        *_header_lines(summary.header or {}),
    ]
    step, reset = summary.first_step, summary.reset
    lines.append("  fields:")
    for field in _STEP_FIELDS:
        source = next((r for r in (step, reset) if r is not None and field in r), None)
        if source is not None:
            lines.append(f"    {field:<11} {_shape(source[field])}")
    lines.append("")
    rows = _episode_rows(summary.episodes)
    lines += ["  " + line for line in _table(rows, right=range(len(rows[0]) - 2))]
    return lines + _more_episodes(summary)


def _header_lines(header: dict[str, Any]) -> list[str]:
    """What the header says of the env and the software that recorded it."""
    if not header:
        return ["  (no header: a file in the original format)"]
    lines = []
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
    lines += _agents_line(header)
    versions = header.get("versions")
    if isinstance(versions, dict) and versions:
        lines.append(
            "  recorded with: "
            + ", ".join(f"{escape(k)} {escape_value(v)}" for k, v in sorted(versions.items()))
        )
    return lines


def _episode_rows(episodes: Sequence[EpisodeSummary]) -> list[list[str]]:
    """The table of episodes, its heading first; the numbers are right-aligned up to "ended".

    A multi-agent recording has a return column for each agent, named by the agent.
    """
    agents = [agent for agent, _ in episodes[0].agent_returns] if episodes else []
    returns = [_cell(agent, _MAX_CELL) for agent in agents] if agents else ["return"]
    rows = [["episode", "steps", *returns, "ended", "seed"]]
    for episode in episodes:
        by_agent = dict(episode.agent_returns)
        rows.append(
            [
                str(episode.index),
                f"{episode.steps:,}",
                *(
                    [_return(by_agent.get(agent, 0.0)) for agent in agents]
                    if agents
                    else [_return(episode.total_reward)]
                ),
                episode.ending,
                "-" if episode.seed is None else escape_value(episode.seed),
            ]
        )
    return rows


def _agents_line(header: dict[str, Any]) -> list[str]:
    """A multi-agent recording's agents, and whether they act at once or in turn."""
    agents = header.get("possible_agents")
    if not isinstance(agents, list):
        return []
    kind = header.get("agent_api")
    api = "parallel" if kind == "parallel" else "AEC" if kind == "aec" else "?"
    named = ", ".join(_cell(agent, _MAX_CELL) for agent in agents[:MAX_AGENT_RETURNS])
    more = f" and {len(agents) - MAX_AGENT_RETURNS} more" if len(agents) > MAX_AGENT_RETURNS else ""
    return [f"  agents: {named}{more} ({api})"]


def _more_episodes(summary: RecordingSummary) -> list[str]:
    """The line that counts the episodes a summary has no row for, if any."""
    more = summary.episode_count - len(summary.episodes)
    if more <= 0:
        return []
    listed = len(summary.episodes) >= MAX_LISTED_EPISODES
    how = f"--all lists the first {MAX_LISTED_EPISODES:,}" if listed else "show them all with --all"
    return [f"  ... {counted(more, 'more episode', 'more episodes')} ({how})"]


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
                _mean_return(summary.total_reward, count),
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
    fields: Sequence[str] | None = None,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> list[str]:
    """The records of one episode with ``start <= t < stop`` as a table.

    The reset record is ``t = 0``. By default the columns are the action,
    reward, flags, observation and info, a dict giving each of its keys a
    column of its own; ``fields`` chooses the columns by field pattern
    instead (``obs[2]``, ``info.*``), one per field they reach.

    Args:
        path: A recording folder or a recording file.
        start: The first step shown.
        stop: The step after the last one shown; None for the end.
        episode: The episode, numbered from 0 in the recording (in the file,
            when ``path`` is a file).
        fields: Field patterns of the columns; None for the default ones.
        max_decompressed_size: What the compressed files of the recording
            may expand to, in bytes.

    Raises:
        GoldenFormatError: The recording cannot be read or has no such episode.
        ValueError: A field pattern is malformed.
    """
    selectors = [parse_pattern(field) for field in fields] if fields else None
    limit = max_decompressed_size
    found = episode_lines(path, episode, max_decompressed_size=limit)
    if found is None:
        raise missing_episode(path, episode, max_decompressed_size=limit)
    file, lines = found
    selected, first_line = _records_between(file, lines, start, stop)
    if not selected:
        end = "the end" if stop is None else str(stop)
        return [
            f"no steps with {start} <= t < {end} in episode {episode} of {file} "
            f"(from line {first_line or 1})"
        ]
    columns = _default_columns(selected) if selectors is None else _chosen(selected, selectors)
    rows = [["t", *(column.label for column in columns)]]
    for record in selected:
        t = str(record["t"]) if record["event"] == "step" else "0 (reset)"
        rows.append([t, *(column.cell(record) for column in columns)])
    if selectors is not None:
        return _table(rows, right=(0,))
    return _table(rows, right=(0, 2)) + _cut_note(rows)


def _records_between(
    file: Path, lines: Lines, start: int, stop: int | None
) -> tuple[list[dict[str, Any]], int]:
    """The reset and step records with ``start <= t < stop``, and the episode's first line."""
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
    return selected, first_line


def _cut_note(rows: Sequence[Sequence[str]]) -> list[str]:
    """A line that says how to see whole the first column whose cells were cut, if any."""
    cut = next(
        (
            rows[0][i]
            for row in rows[1:]
            for i, cell in enumerate(row)
            if len(cell) == _MAX_CELL and cell.endswith("...")
        ),
        None,
    )
    if cut is None:
        return []
    return [
        f"(cells are cut at {_MAX_CELL} characters: show a field whole with --fields, "
        f"such as --fields {cut})"
    ]


@dataclasses.dataclass(frozen=True)
class _Column:
    """A column of a step table: its heading, and the field its cells show.

    Attributes:
        label: The heading.
        path: The field, from the top of a record.
        limit: Cells longer than this are cut.
        steps_only: Empty on the reset record (action, reward, flags).
        flag: A bool shown as ``yes`` or ``-``.
    """

    label: str
    path: FieldPath
    limit: int = _MAX_CELL
    steps_only: bool = False
    flag: bool = False

    def cell(self, record: dict[str, Any]) -> str:
        """This column's cell of ``record``; empty where the record lacks the field."""
        if self.steps_only and record["event"] != "step":
            return ""
        value: Any = record
        for segment in self.path:
            in_dict = isinstance(value, dict) and segment in value
            in_list = isinstance(value, list) and isinstance(segment, int) and segment < len(value)
            if not (in_dict or in_list):
                return ""
            value = value[segment]
        return _flag(value) if self.flag else _cell(value, self.limit)


def _default_columns(records: Sequence[dict[str, Any]]) -> list[_Column]:
    """Action, reward, flags, then obs and info: a dict gives each key a column."""
    columns = [
        _Column("action", ("action",), steps_only=True),
        _Column("reward", ("reward",), steps_only=True),
        _Column("term", ("terminated",), steps_only=True, flag=True),
        _Column("trunc", ("truncated",), steps_only=True, flag=True),
    ]
    for field in ("obs", "info"):
        keys = _dict_keys([record.get(field) for record in records])
        if keys is None:
            columns.append(_Column(field, (field,)))
        else:
            columns += [_Column(f"{field}.{escape(key)}", (field, key)) for key in keys]
    return columns


def _dict_keys(values: Sequence[Any]) -> list[str] | None:
    """The keys of values that are all dicts (or absent), in order; None when one is not."""
    if not all(value is None or isinstance(value, dict) for value in values):
        return None
    return list(dict.fromkeys(key for value in values if value for key in value))


def _chosen(records: Sequence[dict[str, Any]], selectors: Sequence[FieldPath]) -> list[_Column]:
    """One column per field the patterns reach in ``records``, pattern by pattern."""
    paths: dict[FieldPath, None] = {}
    for selector in selectors:
        for record in records:
            paths.update(dict.fromkeys(_reached(record, selector, ())))
    return [_Column(escape(format_path(path)), path, _MAX_CHOSEN_CELL) for path in paths]


def _reached(value: Any, pattern: FieldPath, path: FieldPath) -> Iterator[FieldPath]:
    """The paths in ``value`` that ``pattern`` names, its wildcards filled in."""
    if not pattern:
        yield path
        return
    segment, rest = pattern[0], pattern[1:]
    if isinstance(value, dict):
        keys = list(value) if segment == ANY else [segment] if segment in value else []
        for key in keys:
            yield from _reached(value[key], rest, (*path, key))
    elif isinstance(value, list):
        if segment == ANY:
            indices = list(range(len(value)))
        else:
            indices = [segment] if isinstance(segment, int) and segment < len(value) else []
        for index in indices:
            yield from _reached(value[index], rest, (*path, index))


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
        return f"MultiDiscrete({_elements(description.get('nvec'))})"
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
    return _elements(value)


def _elements(value: Any) -> str:
    """Every element, as numpy writes an array: ``[3 2]``, cut short after a few."""
    flat = list(_flatten(value))
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


def _return(total: Return) -> str:
    """A return: a number, or one per objective in brackets (``[5, -1.25]``)."""
    if isinstance(total, tuple):
        return "[" + ", ".join(_number(part) for part in total) + "]"
    return _number(total)


def _mean_return(total: Return, count: int) -> str:
    """The mean return of ``count`` episodes whose returns add up to ``total``, per objective."""
    if not count:
        return "-"
    if isinstance(total, tuple):
        return _return(tuple(part / count for part in total))
    return _number(total / count)


def _flag(value: Any) -> str:
    return "yes" if value else "-"


def _cell(value: Any, limit: int = _MAX_CELL) -> str:
    text = _compact(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
