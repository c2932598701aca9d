"""What a difference says about its cause: an iteration order, a wall clock.

A golden that fails may have caught a change, or an env that never gave the
same trajectory twice. Two kinds of evidence point to the second, and the
reports say so:

- **order**: at the first divergence, strings that the other side holds in
  another order (over the episode, the same strings in another sequence; or,
  in one record, a list of the same strings in another order). Iterating over
  a set of strings gives such orders: it follows ``PYTHONHASHSEED``, which
  differs between processes.
- **clock**: values on both sides that read as a Unix time (seconds since
  1970, in the years 2000 to 2100): ``time.time()``, which differs on every
  run, and which ``rtol=1e-6`` lets move by half an hour unnoticed.

Example:
    >>> is_unix_time(1.75e9), is_unix_time(0.25)
    (True, False)
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, Literal

from gym_goldens.comparison.result import Comparison, Difference, EpisodeComparison
from gym_goldens.errors import GoldenFormatError, UnsafeGoldenPathError
from gym_goldens.format.fields import FieldPath, format_path
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.format.reader import episode_lines, iter_records

__all__ = ["Evidence", "EvidenceKind", "is_unix_time", "nondeterminism_evidence"]

EvidenceKind = Literal["order", "clock"]

# 2000-01-01 and 2100-01-01, in seconds since 1970.
_UNIX_TIME_RANGE: Final = (946_684_800.0, 4_102_444_800.0)
# An episode is read this far for the order of its values, no further.
_MAX_RECORDS: Final = 100_000


@dataclasses.dataclass(frozen=True)
class Evidence:
    """One sign that a difference comes from nondeterminism.

    Attributes:
        kind: ``order`` (the same values in another order) or ``clock`` (a
            Unix time).
        field: The field, as a path (``info.visiting``).
        value: For a clock, the other side's value at the divergence.
    """

    kind: EvidenceKind
    path: FieldPath
    value: float | None = None

    @property
    def field(self) -> str:
        """The field as text: ``info.stamp``."""
        return format_path(self.path)


def is_unix_time(value: object) -> bool:
    """Whether ``value`` is a number that reads as a Unix time of the years 2000 to 2100."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    low, high = _UNIX_TIME_RANGE
    return low <= value <= high


def nondeterminism_evidence(
    comparison: Comparison, *, max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> tuple[Evidence, ...]:
    """The signs, at the first divergence of ``comparison``, that an env is nondeterministic.

    Clocks come from the values at the divergence; orders also read the
    diverging episode of both recordings again (only the fields in question
    are kept). An unreadable recording gives no order evidence.
    """
    episode = next(
        (found for found in comparison.differing if found.first and found.first.differences),
        None,
    )
    if episode is None or episode.first is None:
        return ()
    differences = episode.first.differences
    clocks = [
        Evidence("clock", difference.path, float(difference.actual))
        for difference in differences
        if is_unix_time(difference.golden) and is_unix_time(difference.actual)
    ]
    try:
        orders = _orders(comparison, episode, differences, max_decompressed_size)
    except (GoldenFormatError, UnsafeGoldenPathError):
        orders = []  # the comparison said what it could read
    return (*orders, *clocks)


def _orders(
    comparison: Comparison,
    episode: EpisodeComparison,
    differences: Sequence[Difference],
    limit: int,
) -> list[Evidence]:
    assert episode.first is not None
    strings = [d.path for d in differences if _is_string(d.golden) and _is_string(d.actual)]
    # A list of strings whose element differs: the same strings in another order?
    lists = list(dict.fromkeys(path[:-1] for path in strings if isinstance(path[-1], int)))
    if not strings and not lists:
        return []
    where = (episode.first.event, episode.first.t)
    golden = _values(_episode_records(comparison.golden, episode, "golden", limit), strings, lists)
    actual = _values(_episode_records(comparison.actual, episode, "actual", limit), strings, lists)
    found = [
        Evidence("order", path)
        for path in lists
        if _reordered(golden.at.get((where, path)), actual.at.get((where, path)))
    ]
    taken = {evidence.path for evidence in found}
    found += [
        Evidence("order", path)
        for path in strings
        if path[:-1] not in taken and _same_set(golden.series[path], actual.series[path])
    ]
    return found


@dataclasses.dataclass
class _Values:
    series: dict[FieldPath, list[Any]]
    at: dict[tuple[tuple[str, int | None], FieldPath], Any]


def _values(
    records: Iterable[dict[str, Any]], strings: Sequence[FieldPath], lists: Sequence[FieldPath]
) -> _Values:
    """The values of ``strings`` over the records, and the lists of ``lists`` in each record."""
    values = _Values({path: [] for path in strings}, {})
    for record in itertools.islice(records, _MAX_RECORDS):
        where = (str(record.get("event")), record.get("t"))
        for path in strings:
            value = _lookup(record, path)
            if value is not _MISSING:
                values.series[path].append(value)
        for path in lists:
            value = _lookup(record, path)
            if isinstance(value, list):
                values.at[(where, path)] = value
    return values


def _episode_records(
    recording: Path, episode: EpisodeComparison, side: str, limit: int
) -> Iterator[dict[str, Any]]:
    path = episode.golden_path if side == "golden" else episode.actual_path
    if path is None:
        return
    # The episodes of a vector recording are numbered by sub-env.
    source = recording if episode.env is None else path.parent
    found = episode_lines(source, episode.index, max_decompressed_size=limit)
    if found is None:
        return
    file, lines = found
    for _, record in iter_records(file, lines):
        if record.get("event") in ("reset", "step"):
            yield record


def _reordered(one: object, other: object) -> bool:
    """Whether two lists hold the same strings, more than one, in another order."""
    if not isinstance(one, list) or not isinstance(other, list) or one == other:
        return False
    if len(one) < 2 or not all(_is_string(value) for value in [*one, *other]):
        return False
    return sorted(one) == sorted(other)


def _same_set(golden: list[Any], actual: list[Any]) -> bool:
    """Whether two sequences of strings hold the same strings, more than one, in another order."""
    distinct = set(golden)
    return golden != actual and len(distinct) > 1 and distinct == set(actual)


def _is_string(value: object) -> bool:
    return isinstance(value, str)


class _Missing:
    pass


_MISSING: Final = _Missing()


def _lookup(record: dict[str, Any], path: FieldPath) -> Any:
    value: Any = record
    for segment in path:
        if isinstance(value, list) and isinstance(segment, int):
            found = 0 <= segment < len(value)
        else:
            found = isinstance(value, dict) and isinstance(segment, str) and segment in value
        if not found:
            return _MISSING
        value = value[segment]
    return value
