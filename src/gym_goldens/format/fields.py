"""Field paths and field patterns: how a part of a record is named.

A *field path* is where a value sits in a record, as a tuple of keys and
indices: ``("obs", 2)``, ``("info", "joints", 0, "angle")``; written as text,
``obs[2]`` and ``info.joints[0].angle``. A *field pattern* names fields the
same way, with ``*`` for any one key or index: ``"obs"``, ``"info.*.time"``,
``"obs[*]"``. A pattern selects the field it names and everything inside it.

Patterns set tolerances and ignored fields
(:class:`~gym_goldens.comparison.tolerance.Tolerance`), the array sizes kept in
full (``max_array_size``) and the fields that are plotted; they are parsed
and matched here only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

__all__ = [
    "ANY",
    "RECORD_FIELDS",
    "RESET_FIELDS",
    "RESET_VALUES",
    "STEP_FIELDS",
    "STEP_VALUES",
    "FieldPath",
    "format_path",
    "parse_pattern",
    "pattern_matches",
    "specificity",
    "split_path",
]

FieldPath = tuple[str | int, ...]
"""Keys and indices from the top of a record down to a value."""

ANY: Final = "*"
"""The segment of a pattern that stands for any one key or index."""

# The fields of the records, in the order docs/format.md lists them (a file
# writes keys sorted): the one list that readers, plots and reports take them from.
STEP_VALUES: Final = ("action", "obs", "reward", "terminated", "truncated", "info", "render")
"""The fields of a step record that hold what the env was given and gave back; ``render``
(the frame of ``env.render()``) only where frames are recorded."""

RESET_VALUES: Final = ("obs", "info", "render")
"""The fields of a reset record that hold what the env gave back; ``render`` only where
frames are recorded."""

STEP_FIELDS: Final = ("event", "t", *STEP_VALUES, "dtypes")
"""Every field of a step record written in full; ``dtypes`` only where the types change."""

RESET_FIELDS: Final = ("event", "episode", *RESET_VALUES, "dtypes")
"""Every field of a reset record; ``dtypes`` only when ``obs`` or ``info`` holds numpy values."""

RECORD_FIELDS: Final = frozenset(STEP_FIELDS + RESET_FIELDS) - {"event"} | {
    "agent",  # of multi-agent records (see gym_goldens.format.agents)
    "agents",
}
"""The fields of a record: what a pattern starts with."""

_SEGMENT: Final = re.compile(r"\[(\d+|\*)\]|\.?([^.\[\]]+)")


def split_path(text: str) -> FieldPath | None:
    """Split a path written as text into keys and indices; None when it is malformed.

    Example:
        >>> split_path("info.joints[2].angle")
        ('info', 'joints', 2, 'angle')
    """
    segments: list[str | int] = []
    position = 0
    for match in _SEGMENT.finditer(text):
        if match.start() != position:
            return None
        index, key = match.groups()
        if index is not None:
            segments.append(ANY if index == ANY else int(index))
        else:
            segments.append(key)
        position = match.end()
    if position != len(text) or not segments or text.startswith("."):
        return None
    return tuple(segments)


def parse_pattern(pattern: str) -> FieldPath:
    """Split a field pattern into keys, indices and wildcards.

    Example:
        >>> parse_pattern("info.*.time")
        ('info', '*', 'time')

    Raises:
        ValueError: The pattern is malformed or starts with an unknown field.
    """
    segments = split_path(pattern) if isinstance(pattern, str) else None
    if segments is None or not isinstance(segments[0], str):
        raise ValueError(
            f"malformed field pattern {pattern!r}; expected something like "
            '"obs", "info.x_velocity", "obs[2]" or "info.*.time"'
        )
    if segments[0] not in RECORD_FIELDS and segments[0] != ANY:
        raise ValueError(
            f"field pattern {pattern!r} starts with {segments[0]!r}, which is not a record field; "
            f"use one of {', '.join(sorted(RECORD_FIELDS))}"
        )
    return segments


def pattern_matches(pattern: FieldPath, path: FieldPath) -> bool:
    """Whether ``pattern`` selects ``path``: the field it names or one inside it.

    Example:
        >>> pattern_matches(("info", "*"), ("info", "x", 0))
        True
    """
    if len(pattern) > len(path):
        return False
    return all(wanted in (ANY, got) for wanted, got in zip(pattern, path, strict=False))


def specificity(pattern: FieldPath) -> tuple[int, int]:
    """A sort key: longer patterns, then those with fewer wildcards, are more specific."""
    return len(pattern), -pattern.count(ANY)


def format_path(path: Iterable[str | int]) -> str:
    """Write a field path as text.

    Example:
        >>> format_path(("info", "joints", 2, "angle"))
        'info.joints[2].angle'
    """
    text = ""
    for segment in path:
        if isinstance(segment, int):
            text += f"[{segment}]"
        else:
            text += f".{segment}" if text else str(segment)
    return text
