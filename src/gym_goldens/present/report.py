"""Failure text: what a user reads when a trajectory diverges.

The most important comes first: the verdict and the golden file, the first
divergence with golden and actual values, the difference and the tolerance it
exceeded, then how much else differs, where the actual recording is, and the
command that updates the golden.

Each message is a :class:`Report`, built in parts (verdict, notes, details,
files, fix) by a function ending in ``_report`` and rendered once, where it
is shown; the ``format_`` functions render one at once. What a caller adds
(a note under the verdict, the plot beside the recording) goes into the
report's parts, never into its text.

The words for each difference, and the order fields are named in, are
those of :mod:`gym_goldens.present.differences`.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final, ParamSpec

from gym_goldens.comparison.evidence import Evidence
from gym_goldens.comparison.result import (
    NOISE_ATOL,
    NOISE_RTOL,
    Comparison,
    Difference,
    Divergence,
    EpisodeComparison,
)
from gym_goldens.errors import GoldenFormatError, UnsafeGoldenPathError
from gym_goldens.format.agents import agent_of
from gym_goldens.format.fields import format_path
from gym_goldens.format.header import versions_change
from gym_goldens.present.differences import (
    describe_array_delta,
    describe_difference,
    field_name,
    field_rank,
    first_differences,
    frames_only,
    header_lines,
    headline_order,
    is_dtypes,
    other_field_name,
    pixel_suggestion,
    plain_value,
    shown_value,
    type_name,
)
from gym_goldens.present.series import value_divergences
from gym_goldens.present.text import escape, python_string, short_repr

__all__ = [
    "NONDETERMINISM_FIX",
    "RECORDED_MODE",
    "REPLAY_MODE",
    "RenamedGolden",
    "Report",
    "actions_differ",
    "comparison_report",
    "failed_run_report",
    "format_comparison",
    "format_evidence",
    "format_missing",
    "format_nondeterminism",
    "format_unreadable",
    "mismatch_report",
    "missing_report",
    "noise_rule",
    "nondeterminism_report",
    "not_updated_report",
    "nothing_recorded_report",
    "refused_report",
    "unreadable_report",
    "unreadable_run_report",
    "unrecorded_run_report",
    "update_command",
]

_P = ParamSpec("_P")
_MAX_OTHER_FIELDS: Final = 6
# A golden this far from zero, relative to the difference, gets an rtol suggested;
# closer to zero, an atol.
_RTOL_SUGGESTED_BELOW: Final = 1e-3
_MAX_CHANGE_CHARS: Final = 40
# Fields that a gymnasium wrapper fills with wall-clock time, by the wrapper
# (the single and the vector RecordEpisodeStatistics share the name).
_WALL_CLOCK_FIELDS: Final[dict[tuple[str | int, ...], str]] = {
    ("info", "episode", "t"): "RecordEpisodeStatistics",
}


def update_command(nodeid: str | None) -> str:
    """The command that regenerates the golden of one test."""
    if nodeid is None:
        return "pytest --update-goldens"
    quoted = nodeid.replace('"', '\\"')
    return f'pytest --update-goldens "{quoted}"'


@dataclasses.dataclass(frozen=True)
class Report:
    """A message as data, in its parts; :meth:`render` writes it once.

    Rendered, the verdict is the first line and every other line is indented
    by two spaces under it, in the order of the attributes; a line's own
    leading spaces nest it further (the values under a first divergence).
    What is added to a report (a note, the plot beside a recording) goes
    into its part, never into the rendered text.

    Attributes:
        verdict: The first line: what failed, and where.
        notes: Under the verdict: how the recording was made, hints.
        details: What differs and how: the first divergence, the counts, the
            software that recorded each side.
        files: Where to look: the actual recording, the plot beside it.
        fix: The last line, what to do (``update with: pytest ...``); None
            when there is nothing to do.

    Example:
        >>> report = Report("golden mismatch: g.jsonl:3", fix="update with: pytest")
        >>> print(report.with_notes("mode: recorded").with_files("plot: d.png").render())
        golden mismatch: g.jsonl:3
          mode: recorded
          plot: d.png
          update with: pytest
    """

    verdict: str
    notes: tuple[str, ...] = ()
    details: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    fix: str | None = None

    def with_notes(self, *notes: str) -> Report:
        """The report with ``notes`` under the verdict, after the notes it has."""
        return dataclasses.replace(self, notes=(*self.notes, *notes))

    def with_files(self, *files: str) -> Report:
        """The report with more places to look (``plot: ...``), before its fix."""
        return dataclasses.replace(self, files=(*self.files, *files))

    @property
    def lines(self) -> list[str]:
        """The lines of the message, as :meth:`render` joins them."""
        fix = () if self.fix is None else (self.fix,)
        under = (*self.notes, *self.details, *self.files, *fix)
        return [self.verdict, *(f"  {line}" for line in under)]

    def render(self) -> str:
        """The message as text."""
        return "\n".join(self.lines)


def comparison_report(
    comparison: Comparison,
    *,
    title: str = "golden mismatch",
    nodeid: str | None = None,
    display: Any = str,
    fix: str | None = None,
    fix_label: str | None = "update with",
    suggest: bool = True,
) -> Report:
    """The report of a failed comparison.

    Args:
        comparison: A comparison that is not equal.
        title: The verdict, first on the first line.
        nodeid: The test, for the update command.
        display: Turns a path into the text shown (for example, relative
            to the current folder).
        fix: The last line; by default the update command.
        fix_label: What the last line is, before the colon; None for no last
            line (two recordings that are no golden have no fix to give).
        suggest: Suggest a tolerance that would accept the float differences
            of the first divergence (not for runs that should be identical).
    """
    differing = comparison.differing
    if not differing:
        return Report(f"{title}: none ({display(comparison.golden)} matches)")
    episode = differing[0]
    golden_file = episode.golden_path or comparison.golden
    # file:line, as editors and terminals open it: the golden's first differing record.
    at = episode.first.golden_line if episode.first and episode.golden_path else None
    details = [
        *_describe_episode(episode, comparison),
        *_episodes_differing(comparison),
        *_describe_versions(episode),
        *_describe_wall_clock(episode),
    ]
    if suggest and episode.first is not None:
        details += _suggestion(episode.first, episode.golden_header or episode.actual_header)
    return Report(
        f"{title}: {display(golden_file)}" + (f":{at}" if at is not None else ""),
        details=tuple(details),
        files=(f"actual recording: {display(comparison.actual)}",),
        fix=None if fix_label is None else f"{fix_label}: {fix or update_command(nodeid)}",
    )


def _episodes_differing(comparison: Comparison) -> list[str]:
    """How many episodes differ, and which, when the recordings hold more than one."""
    differing, count = comparison.differing, comparison.differing_count
    if comparison.episode_count <= 1 and count <= 1:
        return []
    if any(e.env is not None for e in differing):
        labels = [f"{e.env}/{e.index}" for e in differing]
        which = f"sub-env/episode {_index_list(labels, count)}"
    else:
        which = f"episodes {_index_list([e.index for e in differing], count)}"
    return [f"episodes differing: {count} of {comparison.episode_count} ({which})"]


RECORDED_MODE: Final = "mode: recorded (the test's own actions)"
"""The note of a test whose own actions drove the env."""

REPLAY_MODE: Final = (
    "mode: replay (the golden's own actions and reset seeds drove the env, "
    "so the dynamics changed, not the policy)"
)
"""The note of a test that replayed its golden's actions."""

_ACTIONS_DIFFER: Final = (
    "the actions differ at the first divergence: either the policy changed, or "
    "observations within tolerance fed back into it (a controller that reads them); "
    "to compare the dynamics alone, replay the golden's actions with "
    "record_trajectory(env, replay=True)"
)


def mismatch_report(
    comparison: Comparison,
    *,
    replay: bool,
    nodeid: str | None,
    display: Any = str,
    variant: str | None = None,
    hints: Sequence[str] = (),
) -> Report:
    """A test's golden mismatch: the comparison's report, with how the recording was made.

    Args:
        comparison: The test's recording against its golden, not equal.
        replay: Whether the golden's actions drove the env (else the test's own).
        nodeid: The test, for the update command.
        display: Turns a path into the text shown.
        variant: Which golden variant was compared, when the test keeps variants.
        hints: Signs of nondeterminism at the divergence (:func:`format_evidence`).
    """
    notes = [REPLAY_MODE if replay else RECORDED_MODE]
    if variant is not None:
        notes.append(variant)
    notes += hints
    if not replay and actions_differ(comparison):
        notes.append(_ACTIONS_DIFFER)
    title = "golden mismatch in replay mode" if replay else "golden mismatch"
    report = comparison_report(comparison, title=title, nodeid=nodeid, display=display)
    return report.with_notes(*notes)


def actions_differ(comparison: Comparison) -> bool:
    """Whether the actions differ at the first divergence the report shows."""
    first = comparison.differing[0].first if comparison.differing else None
    return first is not None and any(d.path[:1] == ("action",) for d in first.differences)


def nothing_recorded_report(name: str) -> Report:
    """A test whose env, recorded as ``name``, was never reset."""
    return Report(
        f"nothing recorded: the env recorded as {name!r} was never reset; "
        "call env.reset(seed=...) before stepping it"
    )


@dataclasses.dataclass(frozen=True)
class RenamedGolden:
    """A stale golden that a missing golden may have been, before a rename.

    Attributes:
        path: The stale golden's folder.
        missing: The missing golden's folder.
        kind: What they share: ``trajectory`` (the recording matches it),
            ``env`` (the same env id) or ``version`` (another version of the env).
        env: The env id the stale golden records.
        new_env: The env id of the recording.
        make_parent: The missing golden's parent folder must be made first.
        remove_empty: The missing golden's folder is there, empty, and must go first.
    """

    path: Path
    missing: Path
    kind: str
    env: str | None = None
    new_env: str | None = None
    make_parent: bool = False
    remove_empty: bool = False


def missing_report(
    golden_dir: Any,
    actual_dir: Any,
    *,
    nodeid: str | None,
    display: Any = str,
    renamed: Sequence[RenamedGolden] = (),
) -> Report:
    """The report of a test whose golden does not exist yet.

    ``renamed`` are the stale goldens it may have been (a test or env id
    renamed), each named with the ``git mv`` that keeps it.
    """
    renames = [line for stale in renamed for line in _describe_renamed(stale, display)]
    return Report(
        f"golden missing: {display(golden_dir)}",
        details=("no golden has been recorded for this trajectory yet", *renames),
        files=(f"actual recording: {display(actual_dir)}",),
        fix=f"create it with: {update_command(nodeid)}",
    )


def _describe_renamed(stale: RenamedGolden, display: Any) -> list[str]:
    old, new = display(stale.path), display(stale.missing)
    shares = {
        "trajectory": "holds the same trajectory",
        "env": f"records the same env, {escape(stale.env or '')}",
        "version": (
            f"records {escape(stale.env or '')}, another version of {escape(stale.new_env or '')}"
        ),
    }[stale.kind]
    move = f"git mv {shlex.quote(old)} {shlex.quote(new)}"
    if stale.remove_empty:
        move = f"rmdir {shlex.quote(new)} && {move}"
    elif stale.make_parent:
        move = f"mkdir -p {shlex.quote(display(stale.missing.parent))} && {move}"
    return [
        f"renamed? a golden that no test of this run uses {shares}: {escape(old)}",
        f"  keep it, and its history, with: {escape(move)}",
    ]


def unreadable_report(
    error: Exception, *, nodeid: str | None, actual_dir: Any = None, display: Any = str
) -> Report:
    """The report of a golden (or an actual recording) that cannot be read."""
    text = str(error)
    if isinstance(error, GoldenFormatError):
        where = display(error.path) if error.line is None else f"{display(error.path)}:{error.line}"
        text = f"{where}: {error.reason}"
    bad_path = getattr(error, "path", None)
    files = () if actual_dir is None else (f"actual recording: {display(actual_dir)}",)
    # The error may name the file as displayed (relative) or in full.
    if (
        actual_dir is not None
        and bad_path is not None
        and (_inside(bad_path, actual_dir) or _inside(bad_path, display(actual_dir)))
    ):
        return Report(
            f"recording unreadable: {text}",
            details=("the actual recording is damaged, not the golden; run the test again",),
            files=files,
        )
    return Report(
        f"golden unreadable: {text}",
        details=("the golden file was left as it is",),
        files=files,
        fix=f"regenerate it with: {update_command(nodeid)}",
    )


def refused_report(error: Exception, *, actual_dir: str, nodeid: str | None) -> Report:
    """The report of a golden refused by the path check: nothing was read or written."""
    return Report(
        f"golden refused: {error}",
        details=("nothing was read from or written to it",),
        files=(f"actual recording: {actual_dir}",),
        fix=f"or remove the symlink and record the golden with: {update_command(nodeid)}",
    )


_NOT_UPDATED_FIX: Final = "fix or remove the golden, then run pytest --update-goldens again"
_NOT_WRITTEN_FIX: Final = (
    "free space or fix the permissions of the goldens dir, then run pytest --update-goldens again"
)


def not_updated_report(error: Exception, *, actual_dir: str, not_written: bool = False) -> Report:
    """The report of an update that left its golden as it was.

    Args:
        error: Why: the golden cannot be read, or cannot be written.
        actual_dir: The actual recording, as shown.
        not_written: The golden could not be written (a read-only folder, a
            full disk), rather than read.
    """
    return Report(
        f"golden not updated: {error}",
        details=("the golden was left as it is",),
        files=(f"actual recording: {actual_dir}",),
        fix=_NOT_WRITTEN_FIX if not_written else _NOT_UPDATED_FIX,
    )


def _inside(path: Any, folder: Any) -> bool:
    return Path(folder) in Path(path).parents or Path(path) == Path(folder)


def _episode_label(episode: EpisodeComparison) -> str:
    if episode.env is None:
        return f"episode {episode.index}"
    return f"sub-env {episode.env}, episode {episode.index}"


def _describe_episode(episode: EpisodeComparison, comparison: Comparison) -> list[str]:
    label = _episode_label(episode)
    if episode.actual_path is None:
        return [
            f"{label} is missing from the actual recording "
            f"(the golden episode has {_steps(episode.golden_steps)})"
        ]
    if episode.golden_path is None:
        return [
            f"{label} is not in the golden (the actual episode has {_steps(episode.actual_steps)})"
        ]
    lines = [f"header differs: {text}" for text in header_lines(episode)[:_MAX_OTHER_FIELDS]]
    first = episode.first
    if first is not None:
        where = "reset" if first.t is None else f"step t={first.t}"
        if first.differences:
            lines += _describe_first(first, episode, comparison, f"{label}, {where}")
        else:
            side = "golden" if first.actual_line is None else "actual recording"
            lines.append(f"first divergence: {label}, {where}: only the {side} has this step")
        lines.append(_describe_counts(episode))
    elif episode.header_differences:
        lines.append("the trajectory itself matches the golden: only the header differs")
    return lines


def _describe_first(
    first: Divergence, episode: EpisodeComparison, comparison: Comparison, where: str
) -> list[str]:
    """The fields of a first divergence: the headline, its values, the others."""
    # A change of dtype or shape explains the values that follow it.
    found = first_differences(first.differences)
    head, others = found.head, found.others
    agent = agent_of(head.path, episode.golden_header or episode.actual_header)
    if agent is not None:  # a multi-agent record: obs.agent_2[0] is agent_2's
        where += f", agent {escape(agent)}"
    if head.pixels is not None:  # a frame: its field, where, and its pixels, on one line
        lines = [f"first divergence: {field_name(head)} at {where}: {head.pixels.describe()}"]
    else:
        lines = [
            f"first divergence: {where}, {field_name(head)}",
            f"  {describe_difference(head, episode, found.numpy_types.get(head.path))}",
        ]
    only = frames_only(first.differences, first.event)
    if only is not None:
        lines.append(f"  {only}")
    if is_dtypes(head) and first.t is not None and None in (head.golden, head.actual):
        lines.append("  (a step without dtypes has the numpy types of the step before)")
    lines += [f"  {describe_array_delta(delta)}" for delta in first.arrays]
    if others:
        shown = ", ".join(other_field_name(d) for d in others[:_MAX_OTHER_FIELDS])
        more = len(others) - _MAX_OTHER_FIELDS
        lines.append(f"  also differ there: {shown}" + (f" (+{more} more)" if more > 0 else ""))
        lines += [
            f"  {field_name(d)}: {d.pixels.describe()}"
            for d in others[:_MAX_OTHER_FIELDS]
            if d.pixels is not None
        ]
    if is_dtypes(head):
        lines += _values_beyond_types(comparison, episode)
    return lines


def _values_beyond_types(comparison: Comparison, episode: EpisodeComparison) -> list[str]:
    """The values that part after a change of type: it headlines, they must not hide."""
    try:
        parting = value_divergences(comparison, episode)
    except (GoldenFormatError, UnsafeGoldenPathError, OSError):
        return []  # the report stands without them; the files were read once already
    if not parting:
        return []
    parting.sort(key=lambda f: (f.first if f.first is not None else 0, field_rank(f.path)))
    shown = ", ".join(f"{f.label} (from t={f.first})" for f in parting[:_MAX_OTHER_FIELDS])
    more = len(parting) - _MAX_OTHER_FIELDS
    return [
        f"  values differ too, beyond the change of type: {shown}"
        + (f" (+{more} more)" if more > 0 else "")
    ]


def noise_rule() -> str:
    """The rule that tells numerical noise from a change, in words (docs/tolerances.md)."""
    return (
        f"a float of obs, reward or info within {NOISE_RTOL:.1%} of the golden, "
        f"or within {NOISE_ATOL:g} of it near zero"
    )


def _suggestion(first: Divergence, header: dict[str, Any] | None) -> list[str]:
    """The suggested tolerance, or why there is none: a change that is not noise."""
    if frames_only(first.differences, first.event) is not None:
        pixels = pixel_suggestion(first.differences)
        if pixels is None:
            return []
        return [f"suggested pixel tolerance, from this record alone (judge it): {pixels}"]
    differences = headline_order(first.differences)
    change = next((d for d in differences if not d.looks_like_noise), None)
    if change is not None:
        return [
            f"no tolerance suggested: {_change_words(change)} is a change, not numerical noise",
            f"  (noise: {noise_rule()})",
        ]
    marker = suggested_tolerance(first, header)
    if marker is None:
        return []
    return [f"suggested tolerance, from this record alone (judge it; it is not a fix): {marker}"]


def _change_words(difference: Difference) -> str:
    """``reward 0.99 -> 1.99``: a difference, golden to actual, in a few words."""
    golden, actual = difference.golden, difference.actual
    golden_text, actual_text = (short_repr(v, _MAX_CHANGE_CHARS) for v in (golden, actual))
    if is_dtypes(difference):
        before, after = (_numpy_type_words(golden), _numpy_type_words(actual))
    elif difference.kind == "missing":
        before, after = golden_text, "(missing)"
    elif difference.kind == "extra":
        before, after = "(missing)", actual_text
    elif difference.kind == "length":
        before, after = f"{golden} items", f"{actual} items"
    elif difference.kind == "type":
        before, after = (
            f"{golden_text} ({type_name(golden)})",
            f"{actual_text} ({type_name(actual)})",
        )
    else:
        before, after = golden_text, actual_text
    return f"{field_name(difference)} {before} -> {after}"


def _numpy_type_words(leaf: Any) -> str:
    if leaf is None:
        return "(no numpy type)"
    return escape(leaf) if isinstance(leaf, str) else "(numpy types)"


def suggested_tolerance(first: Divergence, header: dict[str, Any] | None = None) -> str | None:
    """A marker that would accept the float differences of a first divergence, or None.

    Computed from that record alone, by field (by agent's field, such as
    ``obs.agent_2``, in a multi-agent recording, whose ``header`` names the
    agents): an ``rtol`` where the golden is
    far from zero, else an ``atol``, each the power of ten above the observed
    need. Only differences that look like numerical noise count
    (:attr:`~gym_goldens.comparison.result.Difference.looks_like_noise`); the
    report suggests nothing when another difference is there. A suggestion to
    judge, not a fix: later steps may differ more, and a looser tolerance
    hides changes too.
    """
    needs: dict[str, dict[str, float]] = {"rtol": {}, "atol": {}}
    for difference in first.differences:
        golden, actual = difference.golden, difference.actual
        if not difference.looks_like_noise:
            continue
        gap = abs(actual - golden)
        if not math.isfinite(gap):
            continue
        field = _pattern_of(difference.path, header)
        if golden != 0 and gap / abs(golden) < _RTOL_SUGGESTED_BELOW:
            kind, need = "rtol", gap / abs(golden)
        else:
            kind, need = "atol", gap
        needs[kind][field] = max(needs[kind].get(field, 0.0), _round_up(need))
    parts = [
        f"{kind}={{{', '.join(f'{field!r}: {value:g}' for field, value in sorted(by.items()))}}}"
        for kind, by in needs.items()
        if by
    ]
    return f"@pytest.mark.goldens({', '.join(parts)})".replace("'", '"') if parts else None


def _pattern_of(path: tuple[str | int, ...], header: dict[str, Any] | None) -> str:
    """The field a suggestion names: the record field, or the info key (``info.x``).

    A multi-agent record's fields are an agent's: ``obs.agent_2``, ``info.agent_2.x``.
    """
    at = 2 if agent_of(path, header) is not None else 1  # past the agent's key
    if len(path) > at and path[0] == "info" and isinstance(path[at], str):
        return format_path(path[: at + 1])
    return format_path(path[:at])


def _round_up(value: float) -> float:
    """The power of ten above ``value``: 6.7e-07 -> 1e-06, 1e-09 -> 1e-08 (some headroom)."""
    if value <= 0:
        return 0.0
    return float(f"1e{math.floor(math.log10(value)) + 1}")


def _steps(count: int | None) -> str:
    return "1 step" if count == 1 else f"{count} steps"


def _describe_counts(episode: EpisodeComparison) -> str:
    golden_steps, actual_steps = episode.golden_steps, episode.actual_steps
    first = episode.first
    # The reset record comes first, so when it differs it is the first divergence.
    reset_differs = first is not None and first.event == "reset"
    steps = episode.differing_records - int(reset_differs)
    text = "reset record differs; " if reset_differs else ""
    text += f"steps differing: {steps} of {max(golden_steps or 0, actual_steps or 0)}"
    if first is not None and first.t is not None:
        text += f" (from t={first.t})"
    text += f"; episode length {golden_steps} vs {actual_steps} (golden vs actual)"
    return text


def _describe_wall_clock(episode: EpisodeComparison) -> list[str]:
    """A note when the first divergence is a field a wrapper fills with wall-clock time."""
    if episode.first is None:
        return []
    wrappers = set((episode.golden_header or {}).get("wrappers") or ())
    wrappers |= set((episode.actual_header or {}).get("wrappers") or ())
    for difference in episode.first.differences:
        wrapper = _WALL_CLOCK_FIELDS.get(difference.path)
        if wrapper is None:
            continue
        field = format_path(difference.path)
        if wrapper in wrappers:
            said = f"{field} is the episode's wall-clock time, added by gymnasium's {wrapper}"
        else:
            # Sub-envs of a vector env may be wrapped where the header cannot see.
            said = f"{field} is where gymnasium's {wrapper} puts the episode's wall-clock time"
        return [
            f"note: {said};",
            "  it differs on every run and no update makes it match: leave it out with",
            f"  @pytest.mark.goldens(ignore=[{python_string(field)}])",
        ]
    return []


def _describe_versions(episode: EpisodeComparison) -> list[str]:
    golden = (episode.golden_header or {}).get("versions") or {}
    actual = (episode.actual_header or {}).get("versions") or {}
    golden_platform = (episode.golden_header or {}).get("platform") or {}
    actual_platform = (episode.actual_header or {}).get("platform") or {}
    change = versions_change(
        golden if isinstance(golden, dict) else {}, actual if isinstance(actual, dict) else {}
    )
    changed = [
        f"{escape(name)} {plain_value(old)} -> {plain_value(new)}"
        for name, old, new in change.changed
    ]
    changed += [
        f"{escape(name)} {plain_value(golden_platform.get(name, '-'))} -> "
        f"{plain_value(actual_platform.get(name, '-'))}"
        for name in sorted(set(golden_platform) | set(actual_platform))
        if golden_platform.get(name) != actual_platform.get(name)
    ]
    # Software only one side names was added or removed (pygame for pygame-ce).
    parts = [", ".join(changed)] if changed else []
    for label, named in [("added", change.added), ("removed", change.removed)]:
        if named:
            parts.append(
                f"{label}: " + ", ".join(f"{escape(n)} {plain_value(v)}" for n, v in named)
            )
    lines = []
    if parts and golden and actual:
        lines.append(f"recorded with other software (golden -> actual): {'; '.join(parts)}")
    golden_mode = (episode.golden_header or {}).get("vectorization_mode")
    actual_mode = (episode.actual_header or {}).get("vectorization_mode")
    if golden_mode and actual_mode and golden_mode != actual_mode:
        lines.append(
            "recorded with another vectorization mode (golden -> actual): "
            f"{plain_value(golden_mode)} -> {plain_value(actual_mode)}; a vector env of its own "
            "may not match sync or async vectorization"
        )
    golden_storage = (episode.golden_header or {}).get("storage")
    actual_storage = (episode.actual_header or {}).get("storage")
    if golden_storage and actual_storage and golden_storage != actual_storage:
        settings = [
            f"{escape(name)} {shown_value(golden_storage.get(name))} -> "
            f"{shown_value(actual_storage.get(name))}"
            for name in sorted(set(golden_storage) | set(actual_storage))
            if golden_storage.get(name) != actual_storage.get(name)
        ]
        lines.append(
            f"recorded with other storage settings (golden -> actual): {', '.join(settings)}"
        )
    return lines


def _index_list(indices: Sequence[int | str], count: int) -> str:
    """The first ten of ``count`` indices (of which ``indices`` are the first kept)."""
    shown = ", ".join(str(i) for i in indices[:10])
    return shown + (f", ... ({count - 10} more)" if count > 10 else "")


NONDETERMINISM_FIX: Final = (
    "draw every random number from self.np_random (seeded by reset(seed=...)), "
    "reset all state in reset(), keep wall-clock time out of obs and info (or ignore it), "
    "and do not iterate over sets of strings"
)
"""The advice closing every nondeterminism report."""

_CLOCK_WORDS: Final = ("time", "clock", "elapsed", "duration", "fps", "timestamp")


def nondeterminism_report(
    comparison: Comparison,
    *,
    first: str = "run 1",
    second: str = "run 2",
    notes: Sequence[str] = (),
    display: Any = str,
) -> Report:
    """The report of two runs that should have matched.

    It is the golden-mismatch report, headed ``nondeterministic: run 1 vs
    run 2``, with the first run in the golden's place.

    Args:
        comparison: The comparison of the two runs' recordings.
        first: The name of the run compared against.
        second: The name of the run that differs.
        notes: Lines added under the heading, such as how a run was made.
        display: Turns a path into the text shown.
    """
    report = comparison_report(
        comparison,
        title=f"nondeterministic: {first} vs {second}",
        display=display,
        fix=NONDETERMINISM_FIX,
        fix_label="make it deterministic",
        suggest=False,
    )
    shown = f"{first} is shown as golden, {second} as actual"
    return report.with_notes(shown, *notes, *_hints(comparison))


def failed_run_report(failed: str, passed: str, *, how: str) -> Report:
    """A run of a determinism check that failed where the checked one passed.

    Args:
        failed: The run that failed (``run 2 (subprocess)``).
        passed: The run that passed.
        how: How the failed run ran, and how it failed.
    """
    return Report(f"nondeterministic: {failed} failed, {passed} passed", details=(how,))


def unrecorded_run_report(name: str, *, missing: str, present: str, runs: Sequence[str]) -> Report:
    """A recording that one run of a determinism check made and another did not.

    Args:
        name: The recording's name in the test.
        missing: The run that did not record it.
        present: The run that did.
        runs: How each of the two ran, a line each.
    """
    verdict = f"nondeterministic: {missing} did not record {name!r}, {present} did"
    return Report(verdict, details=tuple(runs))


def unreadable_run_report(error: Exception) -> Report:
    """A run of a determinism check whose recording cannot be read."""
    return Report(f"nondeterministic: a run's recording is unreadable: {error}")


def _hints(comparison: Comparison) -> list[str]:
    """What the first divergence suggests, in the words of a reviewer."""
    differing = comparison.differing
    first = differing[0].first if differing else None
    if first is None:
        return []
    hints: list[str] = []
    if first.event == "reset":
        in_info = [d.field for d in first.differences if d.path[:1] == ("info",)]
        if in_info and len(in_info) == len(first.differences):
            # The observation matches: the env seeds its state, but puts
            # something unseeded in reset()'s info (highway-env samples a space
            # it builds in reset() and never seeds).
            hints.append(
                f"hint: the runs part in reset()'s info ({escape(in_info[0])}) while the first "
                "observation matches: the env puts an unseeded value in its reset info, such as "
                "a sample of a space it never seeds; if it is no part of the dynamics, leave it "
                f"out with @pytest.mark.goldens(ignore=[{python_string(in_info[0])}])"
            )
        else:
            hints.append(
                "hint: the runs part at the first observation, so reset(seed=...) does not seed "
                "everything: look for np.random, random or an RNG made outside reset()"
            )
    clocks = [
        d.field
        for d in first.differences
        if any(word in str(part).lower() for part in d.path for word in _CLOCK_WORDS)
    ]
    if clocks:
        hints.append(
            f"hint: {escape(clocks[0])} looks like a clock: keep wall-clock time out of the "
            f"recording, or leave it out of the comparison with ignore=[{python_string(clocks[0])}]"
        )
    return hints


def format_evidence(
    evidence: Sequence[Evidence], *, golden: str = "the golden", named_clocks: bool = True
) -> list[str]:
    """Hint lines for the signs of nondeterminism at a divergence (see ``comparison.evidence``).

    Args:
        evidence: The signs found.
        golden: The side the values are compared against: ``the golden``, ``run 1``.
        named_clocks: Also hint at a clock whose field is named like one, which
            the hints of :func:`format_nondeterminism` name already (False there).
    """
    lines = []
    for sign in evidence:
        field = escape(sign.field)
        if sign.kind == "order":
            lines.append(
                f"hint: {field} holds {golden}'s values in another order: an iteration order? "
                "Iterating over a set of strings follows PYTHONHASHSEED, which differs between "
                "processes: iterate over sorted(...) instead"
            )
        elif named_clocks or not any(word in sign.field.lower() for word in _CLOCK_WORDS):
            when = _date(sign.value)
            lines.append(
                f"hint: {field} holds values like a Unix time ({when}): a clock? leave it out "
                f"of the comparison with @pytest.mark.goldens(ignore=[{python_string(sign.field)}])"
            )
    return lines


def _date(seconds: float | None) -> str:
    if seconds is None:
        return "seconds since 1970"
    moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)
    return f"{seconds:.10g} s, {moment:%Y-%m-%d %H:%M} UTC"


def _rendered(build: Callable[_P, Report], name: str) -> Callable[_P, str]:
    """A function that takes the arguments of ``build`` and gives its report as text."""

    def render(*args: _P.args, **kwargs: _P.kwargs) -> str:
        return build(*args, **kwargs).render()

    render.__name__ = render.__qualname__ = name
    render.__doc__ = f"The text of :func:`{build.__name__}`, which takes the same arguments."
    return render


# The text of each message, for callers that show it at once (one signature, the builder's).
format_comparison: Final = _rendered(comparison_report, "format_comparison")
format_missing: Final = _rendered(missing_report, "format_missing")
format_unreadable: Final = _rendered(unreadable_report, "format_unreadable")
format_nondeterminism: Final = _rendered(nondeterminism_report, "format_nondeterminism")
