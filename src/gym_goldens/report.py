"""Failure text: what a user reads when a trajectory diverges.

The most important comes first: the verdict and the golden file, the first
divergence with golden and actual values, the difference and the tolerance it
exceeded, then how much else differs, where the actual recording is, and the
command that updates the golden.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Final

from gym_goldens.codec import ArraySummary
from gym_goldens.diff import Comparison, Difference, EpisodeComparison, format_path

__all__ = [
    "SummaryReport",
    "format_comparison",
    "format_missing",
    "format_unreadable",
    "update_command",
]

_MAX_OTHER_FIELDS: Final = 6
_MAX_VALUE_CHARS: Final = 80


def update_command(nodeid: str | None) -> str:
    """The command that regenerates the golden of one test."""
    if nodeid is None:
        return "pytest --update-goldens"
    quoted = nodeid.replace('"', '\\"')
    return f'pytest --update-goldens "{quoted}"'


def format_comparison(
    comparison: Comparison,
    *,
    title: str = "golden mismatch",
    nodeid: str | None = None,
    display: Any = str,
    fix: str | None = None,
    fix_label: str = "update with",
) -> str:
    """Describe a failed comparison.

    Args:
        comparison: A comparison that is not equal.
        title: The verdict, first on the first line.
        nodeid: The test, for the update command.
        display: Turns a path into the text shown (for example, relative
            to the current folder).
        fix: The last line; by default the update command.
        fix_label: What the last line is, before the colon.
    """
    differing = comparison.differing
    if not differing:
        return f"{title}: none ({display(comparison.golden)} matches)"
    episode = differing[0]
    golden_file = episode.golden_path or comparison.golden
    lines = [f"{title}: {display(golden_file)}"]
    lines += _describe_episode(episode)
    if len(comparison.episodes) > 1 or len(differing) > 1:
        lines.append(
            f"  episodes differing: {len(differing)} of {len(comparison.episodes)} "
            f"(episodes {_index_list([e.index for e in differing])})"
        )
    lines += _describe_versions(episode)
    actual_where = comparison.actual
    lines.append(f"  actual recording: {display(actual_where)}")
    lines.append(f"  {fix_label}: {fix or update_command(nodeid)}")
    return "\n".join(lines)


def format_missing(golden_dir: Any, actual_dir: Any, *, nodeid: str | None, display: Any = str) -> str:
    """The message for a test whose golden does not exist yet."""
    return "\n".join(
        [
            f"golden missing: {display(golden_dir)}",
            "  no golden has been recorded for this trajectory yet",
            f"  actual recording: {display(actual_dir)}",
            f"  create it with: {update_command(nodeid)}",
        ]
    )


def format_unreadable(error: Exception, *, nodeid: str | None, actual_dir: Any = None, display: Any = str) -> str:
    """The message for a golden that cannot be read."""
    lines = [f"golden unreadable: {error}", "  the golden file was left as it is"]
    if actual_dir is not None:
        lines.append(f"  actual recording: {display(actual_dir)}")
    lines.append(f"  regenerate it with: {update_command(nodeid)}")
    return "\n".join(lines)


def _describe_episode(episode: EpisodeComparison) -> list[str]:
    if episode.actual_path is None:
        return [
            f"  episode {episode.index} is missing from the actual recording "
            f"(the golden episode has {episode.golden_steps} steps)"
        ]
    if episode.golden_path is None:
        return [
            f"  episode {episode.index} is not in the golden "
            f"(the actual episode has {episode.actual_steps} steps)"
        ]
    lines: list[str] = []
    for difference in episode.header_differences[:_MAX_OTHER_FIELDS]:
        lines.append(f"  header differs: {_describe_header_difference(difference)}")
    first = episode.first
    if first is not None:
        where = "reset" if first.t is None else f"step t={first.t}"
        if first.differences:
            head, *others = first.differences
            lines.append(f"  first divergence: episode {episode.index}, {where}, {head.field or 'record'}")
            lines.append(f"    {_describe_difference(head)}")
            if others:
                shown = ", ".join(d.field or "record" for d in others[:_MAX_OTHER_FIELDS])
                more = len(others) - _MAX_OTHER_FIELDS
                lines.append(f"    also differ there: {shown}" + (f" (+{more} more)" if more > 0 else ""))
        else:
            side = "golden" if first.actual_line is None else "actual recording"
            lines.append(
                f"  first divergence: episode {episode.index}, {where}: only the {side} has this step"
            )
    lines.append(f"  {_describe_counts(episode)}")
    return lines


def _describe_counts(episode: EpisodeComparison) -> str:
    golden_steps, actual_steps = episode.golden_steps, episode.actual_steps
    total = max(golden_steps or 0, actual_steps or 0) + 1
    text = f"records differing: {episode.differing_records} of {total} (reset + steps)"
    if episode.first is not None and episode.first.t is not None:
        text += f", from t={episode.first.t}"
    text += f"; episode length {golden_steps} vs {actual_steps} (golden vs actual)"
    return text


def _describe_difference(difference: Difference) -> str:
    golden, actual = difference.golden, difference.actual
    if difference.kind == "type":
        return (
            f"golden {_value(golden)} ({_type(golden)})  actual {_value(actual)} ({_type(actual)}): "
            "the type changed"
        )
    if difference.kind == "length":
        return f"golden has {golden} items, actual has {actual}: the shape changed"
    if difference.kind == "missing":
        return f"golden {_value(golden)}, missing from the actual recording"
    if difference.kind == "extra":
        return f"not in the golden, actual {_value(actual)}"
    if isinstance(golden, ArraySummary) and isinstance(actual, ArraySummary):
        return _describe_arrays(golden, actual)
    allowed = difference.allowed
    if allowed is not None and isinstance(actual, float):
        delta = abs(actual - golden)
        return (
            f"golden {golden!r}  actual {actual!r}  |diff| {delta:.1e} > tol {allowed:.1e} "
            f"(rtol {difference.rtol:g}, atol {difference.atol:g})"
        )
    return f"golden {_value(golden)}  actual {_value(actual)}"


def _describe_arrays(golden: ArraySummary, actual: ArraySummary) -> str:
    changes = []
    if golden.dtype != actual.dtype:
        changes.append(f"dtype {golden.dtype} -> {actual.dtype}")
    if golden.shape != actual.shape:
        changes.append(f"shape {golden.shape} -> {actual.shape}")
    if not changes:
        changes.append(
            f"contents changed (sha256 {golden.sha256[:12]} -> {actual.sha256[:12]}; "
            f"mean {golden.mean!r} -> {actual.mean!r})"
        )
    return "array " + ", ".join(changes)


def _describe_header_difference(difference: Difference) -> str:
    field = format_path(difference.path)
    return f"{field}: golden {_value(difference.golden)}, actual {_value(difference.actual)}"


def _describe_versions(episode: EpisodeComparison) -> list[str]:
    golden = (episode.golden_header or {}).get("versions") or {}
    actual = (episode.actual_header or {}).get("versions") or {}
    golden_platform = (episode.golden_header or {}).get("platform") or {}
    actual_platform = (episode.actual_header or {}).get("platform") or {}
    changed = [
        f"{name} {golden.get(name, '-')} -> {actual.get(name, '-')}"
        for name in sorted(set(golden) | set(actual))
        if golden.get(name) != actual.get(name)
    ]
    changed += [
        f"{name} {golden_platform.get(name, '-')} -> {actual_platform.get(name, '-')}"
        for name in sorted(set(golden_platform) | set(actual_platform))
        if golden_platform.get(name) != actual_platform.get(name)
    ]
    if not changed or not golden or not actual:
        return []
    return [f"  recorded with other software (golden -> actual): {', '.join(changed)}"]


def _value(value: Any) -> str:
    text = repr(value)
    if len(text) > _MAX_VALUE_CHARS:
        text = text[: _MAX_VALUE_CHARS - 3] + "..."
    return text


def _type(value: Any) -> str:
    names = {float: "float", int: "int", bool: "bool", str: "str", list: "list", dict: "dict"}
    return names.get(type(value), type(value).__name__)


def _index_list(indices: Sequence[int]) -> str:
    shown = ", ".join(str(i) for i in indices[:10])
    return shown + (f", ... ({len(indices) - 10} more)" if len(indices) > 10 else "")


@dataclasses.dataclass
class SummaryReport:
    """What the session did with goldens, as data; the summary hook prints ``lines``."""

    created: list[str] = dataclasses.field(default_factory=list)
    updated: list[str] = dataclasses.field(default_factory=list)
    unchanged: list[str] = dataclasses.field(default_factory=list)
    passed: list[str] = dataclasses.field(default_factory=list)
    failed: list[str] = dataclasses.field(default_factory=list)
    missing: list[str] = dataclasses.field(default_factory=list)
    nondeterministic: list[str] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)

    def add(self, status: str, golden: str) -> None:
        """Count one golden under ``status``."""
        getattr(self, status).append(golden)

    @property
    def lines(self) -> list[str]:
        """The summary lines; empty when no golden was touched."""
        counts = [
            (len(self.passed), "matched"),
            (len(self.failed), "mismatched"),
            (len(self.missing), "missing"),
            (len(self.nondeterministic), "nondeterministic"),
            (len(self.created), "created"),
            (len(self.updated), "updated"),
            (len(self.unchanged), "unchanged"),
        ]
        parts = [f"{count} {label}" for count, label in counts if count]
        lines: list[str] = []
        if parts:
            lines.append("goldens: " + ", ".join(parts))
        for label, paths in [
            ("created", self.created),
            ("updated", self.updated),
            ("nondeterministic", self.nondeterministic),
        ]:
            lines += [f"  {label}: {path}" for path in sorted(paths)]
        if self.missing:
            lines.append("  record the missing goldens with: pytest --update-goldens")
        lines += self.warnings
        return lines
