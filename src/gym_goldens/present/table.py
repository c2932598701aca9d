"""The table of ``gym-goldens audit``: one row per env, as text and as JSON.

Each row gives the env id, the verdict, the steps recorded in one run (over
all seeds) and the time the env took; the lines under a row say why: the
nondeterminism report (the words of the pytest reports), the error, the
skip reason, the ``check_env`` failure, the warnings. Colour codes are
stripped and other control characters escaped (see
:func:`~gym_goldens.present.text.uncoloured`): the text came from envs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from gym_goldens.format.codec import ArraySummary
from gym_goldens.present.text import counted, uncoloured
from gym_goldens.present.verdicts import NONDETERMINISTIC, VERDICTS, AuditRow

__all__ = ["audit_json", "format_left_out", "format_table", "row_details"]

JSON_FORMAT: Final = 1
"""The version of the layout of ``--json``; raised when a key changes meaning."""

_INDENT: Final = "    "
_MAX_JSON_FIELDS: Final = 20
_MAX_STDERR_LINES: Final = 20


def row_details(row: AuditRow) -> list[str]:
    """The lines shown under a row: why it has its verdict, its warnings, its stderr."""
    lines: list[str] = []
    if row.reason is not None:
        lines += row.reason.splitlines()
    if row.difference is not None:
        lines += row.difference.report.splitlines()
    if row.nondeterministic_spec and row.verdict == NONDETERMINISTIC:
        lines.append("its spec says nondeterministic=True: gymnasium expects as much")
    if row.recordings is not None:
        lines.append(f"recordings kept in {row.recordings}")
    if row.check_failure is not None:
        lines += f"{row.check} failed: {row.check_failure}".splitlines()
    lines += [line for text in row.warnings for line in f"warning: {text}".splitlines()]
    lines += _stderr_lines(row.stderr)
    return lines


def _stderr_lines(stderr: str) -> list[str]:
    """What an env wrote to stderr, its last lines, under a heading."""
    written = [line for line in stderr.splitlines() if line.strip()]
    if not written:
        return []
    lines = ["stderr (what the env wrote there):"]
    if len(written) > _MAX_STDERR_LINES:
        lines.append(f"  ... ({len(written) - _MAX_STDERR_LINES} lines before)")
    return lines + [f"  {line}" for line in written[-_MAX_STDERR_LINES:]]


def format_table(
    rows: Sequence[AuditRow],
    *,
    left_out: Mapping[str, str] | None = None,
    seconds: float | None = None,
) -> list[str]:
    """The table of an audit, its counts and the ids left out, as lines.

    Example:
        >>> from gym_goldens.present.verdicts import DETERMINISTIC
        >>> for line in format_table([AuditRow("CartPole-v1", DETERMINISTIC, 100, 0.52)]):
        ...     print(line)
        env          verdict           steps  time
        CartPole-v1  deterministic       100  0.5s
        <BLANKLINE>
        1 env: 1 deterministic
    """
    width = max([len("env"), *(len(uncoloured(row.env_id)) for row in rows)])
    verdict_width = max(len(v) for v in VERDICTS)
    lines = [f"{'env':<{width}}  {'verdict':<{verdict_width}}  steps  time".rstrip()]
    for row in rows:
        steps = "-" if row.steps is None else str(row.steps)
        time = "-" if row.seconds is None else f"{row.seconds:.1f}s"
        lines.append(
            f"{uncoloured(row.env_id):<{width}}  {row.verdict:<{verdict_width}}  {steps:>5}  {time}"
        )
        lines += [f"{_INDENT}{uncoloured(line)}" for line in row_details(row)]
    counts = _counts(rows)
    shown = ", ".join(f"{count} {verdict}" for verdict, count in counts.items() if count)
    took = "" if seconds is None else f" in {seconds:.1f}s"
    noun = "env" if len(rows) == 1 else "envs"
    lines += ["", f"{len(rows)} {noun}{took}: {shown}"]
    if left_out:
        lines += format_left_out(left_out)
    return lines


def format_left_out(left_out: Mapping[str, str], *, by: str = "") -> list[str]:
    """The ids left out as deprecated or legacy, grouped by reason.

    Args:
        left_out: Each id with the reason.
        by: Who left them out, to start the heading (``registered_envs``).

    Example:
        >>> print("\\n".join(format_left_out({"Ant-v2": "moved", "Ant-v3": "moved"})))
        left out 2 ids: deprecated or legacy, their entry points cannot load
          Ant-v2, Ant-v3: moved
    """
    groups: dict[str, list[str]] = {}
    for env_id, reason in sorted(left_out.items()):
        groups.setdefault(reason, []).append(env_id)
    count = len(left_out)
    heading = f"{by} left out" if by else "left out"
    lines = [
        f"{heading} {counted(count, 'id')}: deprecated or legacy, their entry points cannot load"
    ]
    lines += [f"  {', '.join(ids)}: {uncoloured(reason)}" for reason, ids in groups.items()]
    return lines


def audit_json(
    rows: Sequence[AuditRow],
    *,
    left_out: Mapping[str, str],
    settings: Mapping[str, Any],
    seconds: float,
    exit_code: int,
) -> dict[str, Any]:
    """The audit as JSON-ready data, for CI (``--json``); see docs/audit.md."""
    return {
        "format": JSON_FORMAT,
        "settings": _jsonable(settings),
        "envs": [_row_json(row) for row in rows],
        "left_out": [{"id": env_id, "reason": left_out[env_id]} for env_id in sorted(left_out)],
        "counts": _counts(rows),
        "seconds": round(seconds, 3),
        "exit_code": exit_code,
    }


def _counts(rows: Iterable[AuditRow]) -> dict[str, int]:
    counts = dict.fromkeys(VERDICTS, 0)
    for row in rows:
        counts[row.verdict] = counts.get(row.verdict, 0) + 1
    return counts


def _row_json(row: AuditRow) -> dict[str, Any]:
    difference = row.difference
    return {
        "id": row.env_id,
        "verdict": row.verdict,
        "steps": row.steps,
        "seconds": None if row.seconds is None else round(row.seconds, 3),
        "reason": row.reason,
        "difference": None
        if difference is None
        else {
            "seed": difference.seed,
            "runs": [difference.first, difference.second],
            "how": difference.how,
            "episode": difference.episode,
            "t": difference.t,
            "fields": [
                {"field": field, "first": _jsonable(first), "second": _jsonable(second)}
                for field, first, second in difference.fields[:_MAX_JSON_FIELDS]
            ],
            "report": difference.report,
        },
        "check_failure": row.check_failure,
        "warnings": list(row.warnings),
        "recordings": row.recordings,
        "nondeterministic_spec": row.nondeterministic_spec,
        "stderr": row.stderr,
    }


def _jsonable(value: Any) -> Any:
    """``value`` as the recording format writes it (``$float``, ``$array``); else as text."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return {"$float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if isinstance(value, ArraySummary):
        return {"$array": _jsonable(value.to_json())}
    if isinstance(value, Mapping):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    return repr(value)
