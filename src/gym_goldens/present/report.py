"""Failure text: what a user reads when a trajectory diverges.

The most important comes first: the verdict and the golden file, the first
divergence with golden and actual values, the difference and the tolerance it
exceeded, then how much else differs, where the actual recording is, and the
command that updates the golden.

Every report names the fields that differ at the first divergence in one
order, :data:`FIELD_ORDER`: a change of numpy type first (it explains the
values), then ``action`` (the step's input: what follows from it comes
after), ``terminated``, ``truncated``, ``obs``, ``reward`` and ``info``;
within a field, in record order. The first is the headline.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from gym_goldens.comparison.arrays import ArrayDelta, summarise_like
from gym_goldens.comparison.result import Comparison, Difference, Divergence, EpisodeComparison
from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.codec import ArraySummary
from gym_goldens.format.dtypes import describe_change
from gym_goldens.format.fields import format_path
from gym_goldens.present.summary import format_space
from gym_goldens.present.text import escape, python_string, short_repr

__all__ = [
    "FIELD_ORDER",
    "NONDETERMINISM_FIX",
    "field_rank",
    "format_comparison",
    "format_missing",
    "format_nondeterminism",
    "format_unreadable",
    "update_command",
]

FIELD_ORDER: Final = ("dtypes", "action", "terminated", "truncated", "obs", "reward", "info")
"""The order in which reports name the fields that differ at a first divergence."""

_MAX_OTHER_FIELDS: Final = 6
# A golden this far from zero, relative to the difference, gets an rtol suggested;
# closer to zero, an atol.
_RTOL_SUGGESTED_BELOW: Final = 1e-3
_SPACE_FIELDS: Final = frozenset({"observation_space", "action_space"})
_MAX_VALUE_CHARS: Final = 80
_SCHEMES: Final = {"sha256": "SHA-256", "xxh3": "xxh3"}
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


def format_comparison(
    comparison: Comparison,
    *,
    title: str = "golden mismatch",
    nodeid: str | None = None,
    display: Any = str,
    fix: str | None = None,
    fix_label: str = "update with",
    suggest: bool = True,
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
        suggest: Suggest a tolerance that would accept the float differences
            of the first divergence (not for runs that should be identical).
    """
    differing = comparison.differing
    if not differing:
        return f"{title}: none ({display(comparison.golden)} matches)"
    episode = differing[0]
    golden_file = episode.golden_path or comparison.golden
    # file:line, as editors and terminals open it: the golden's first differing record.
    at = episode.first.golden_line if episode.first and episode.golden_path else None
    lines = [f"{title}: {display(golden_file)}" + (f":{at}" if at is not None else "")]
    lines += _describe_episode(episode)
    count = comparison.differing_count
    if comparison.episode_count > 1 or count > 1:
        if any(e.env is not None for e in differing):
            labels = [f"{e.env}/{e.index}" for e in differing]
            which = f"sub-env/episode {_index_list(labels, count)}"
        else:
            which = f"episodes {_index_list([e.index for e in differing], count)}"
        lines.append(f"  episodes differing: {count} of {comparison.episode_count} ({which})")
    lines += _describe_versions(episode)
    lines += _describe_wall_clock(episode)
    suggestion = suggested_tolerance(episode.first) if suggest and episode.first else None
    if suggestion is not None:
        lines.append(
            f"  suggested tolerance, from this record alone (judge it; it is not a fix): "
            f"{suggestion}"
        )
    actual_where = comparison.actual
    lines.append(f"  actual recording: {display(actual_where)}")
    lines.append(f"  {fix_label}: {fix or update_command(nodeid)}")
    return "\n".join(lines)


def format_missing(
    golden_dir: Any, actual_dir: Any, *, nodeid: str | None, display: Any = str
) -> str:
    """The message for a test whose golden does not exist yet."""
    return "\n".join(
        [
            f"golden missing: {display(golden_dir)}",
            "  no golden has been recorded for this trajectory yet",
            f"  actual recording: {display(actual_dir)}",
            f"  create it with: {update_command(nodeid)}",
        ]
    )


def format_unreadable(
    error: Exception, *, nodeid: str | None, actual_dir: Any = None, display: Any = str
) -> str:
    """The message for a golden (or an actual recording) that cannot be read."""
    text = str(error)
    if isinstance(error, GoldenFormatError):
        where = display(error.path) if error.line is None else f"{display(error.path)}:{error.line}"
        text = f"{where}: {error.reason}"
    bad_path = getattr(error, "path", None)
    # The error may name the file as displayed (relative) or in full.
    if (
        actual_dir is not None
        and bad_path is not None
        and (_inside(bad_path, actual_dir) or _inside(bad_path, display(actual_dir)))
    ):
        return "\n".join(
            [
                f"recording unreadable: {text}",
                "  the actual recording is damaged, not the golden; run the test again",
                f"  actual recording: {display(actual_dir)}",
            ]
        )
    lines = [f"golden unreadable: {text}", "  the golden file was left as it is"]
    if actual_dir is not None:
        lines.append(f"  actual recording: {display(actual_dir)}")
    lines.append(f"  regenerate it with: {update_command(nodeid)}")
    return "\n".join(lines)


def _inside(path: Any, folder: Any) -> bool:
    return Path(folder) in Path(path).parents or Path(path) == Path(folder)


def _episode_label(episode: EpisodeComparison) -> str:
    if episode.env is None:
        return f"episode {episode.index}"
    return f"sub-env {episode.env}, episode {episode.index}"


def _describe_episode(episode: EpisodeComparison) -> list[str]:
    label = _episode_label(episode)
    if episode.actual_path is None:
        return [
            f"  {label} is missing from the actual recording "
            f"(the golden episode has {_steps(episode.golden_steps)})"
        ]
    if episode.golden_path is None:
        return [
            f"  {label} is not in the golden "
            f"(the actual episode has {_steps(episode.actual_steps)})"
        ]
    lines = [f"  header differs: {text}" for text in _header_lines(episode)[:_MAX_OTHER_FIELDS]]
    first = episode.first
    if first is not None:
        where = "reset" if first.t is None else f"step t={first.t}"
        if first.differences:
            # A change of dtype or shape explains the values that follow it.
            expanded = [part for d in first.differences for part in _expand_dtypes(d)]
            head, *others = _merge_dtypes(headline_order(expanded))
            lines.append(f"  first divergence: {label}, {where}, {_field(head)}")
            lines.append(f"    {_describe_difference(head, episode)}")
            if _is_dtypes(head) and first.t is not None and None in (head.golden, head.actual):
                lines.append("    (a step without dtypes has the numpy types of the step before)")
            lines += [f"    {_describe_array_delta(delta)}" for delta in first.arrays]
            if others:
                shown = ", ".join(_other_field(d) for d in others[:_MAX_OTHER_FIELDS])
                more = len(others) - _MAX_OTHER_FIELDS
                lines.append(
                    f"    also differ there: {shown}" + (f" (+{more} more)" if more > 0 else "")
                )
        else:
            side = "golden" if first.actual_line is None else "actual recording"
            lines.append(f"  first divergence: {label}, {where}: only the {side} has this step")
        lines.append(f"  {_describe_counts(episode)}")
    elif episode.header_differences:
        lines.append("  the trajectory itself matches the golden: only the header differs")
    return lines


def field_rank(path: Sequence[object]) -> int:
    """Where a field's top-level name comes in :data:`FIELD_ORDER` (unknown names last)."""
    field = path[0] if path else ""
    return FIELD_ORDER.index(field) if field in FIELD_ORDER else len(FIELD_ORDER)


def headline_order(differences: Sequence[Difference]) -> list[Difference]:
    """The differences in the order reports name them (:data:`FIELD_ORDER`), stable."""
    return sorted(differences, key=lambda difference: field_rank(difference.path))


def suggested_tolerance(first: Divergence) -> str | None:
    """A marker that would accept the float differences of a first divergence, or None.

    Computed from that record alone, by field: an ``rtol`` where the golden is
    far from zero, else an ``atol``, each the power of ten above the observed
    need. A suggestion to judge, not a fix: later steps may
    differ more, and a looser tolerance hides changes too.
    """
    needs: dict[str, dict[str, float]] = {"rtol": {}, "atol": {}}
    for difference in first.differences:
        golden, actual = difference.golden, difference.actual
        if difference.allowed is None or not isinstance(actual, float):
            continue
        gap = abs(actual - golden)
        if not math.isfinite(gap):
            continue
        field = _pattern_of(difference.path)
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


def _pattern_of(path: tuple[str | int, ...]) -> str:
    """The field a suggestion names: the record field, or the info key (``info.x``)."""
    if len(path) > 1 and path[0] == "info" and isinstance(path[1], str):
        return format_path(path[:2])
    return format_path(path[:1])


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


def _is_dtypes(difference: Difference) -> bool:
    return bool(difference.path) and difference.path[0] == "dtypes"


def _expand_dtypes(difference: Difference) -> list[Difference]:
    """Split a difference of ``dtypes`` structures into one per typed value."""
    if not _is_dtypes(difference) or (
        isinstance(difference.golden, str) and isinstance(difference.actual, str)
    ):
        return [difference]
    golden = dict(_typed_leaves(difference.golden, ()))
    actual = dict(_typed_leaves(difference.actual, ()))
    return [
        Difference((*difference.path, *path), "value", golden.get(path), actual.get(path))
        for path in [*golden, *(p for p in actual if p not in golden)]
        if golden.get(path) != actual.get(path)
    ] or [difference]


def _typed_leaves(
    mirror: Any, path: tuple[str | int, ...]
) -> list[tuple[tuple[str | int, ...], str]]:
    if isinstance(mirror, str):
        return [(path, mirror)]
    if isinstance(mirror, dict):
        return [leaf for key, item in mirror.items() for leaf in _typed_leaves(item, (*path, key))]
    if isinstance(mirror, list):
        return [leaf for i, item in enumerate(mirror) for leaf in _typed_leaves(item, (*path, i))]
    return []


def _merge_dtypes(differences: list[Difference]) -> list[Difference]:
    """Drop a field's value differences when its dtype or shape changed."""
    changed = [d.path[1:] for d in differences if _is_dtypes(d)]
    return [
        d
        for d in differences
        if _is_dtypes(d) or not any(d.path[: len(p)] == p and p for p in changed)
    ]


def _field(difference: Difference) -> str:
    if _is_dtypes(difference):
        return escape(format_path(difference.path[1:])) or "record"
    return escape(difference.field) or "record"


def _other_field(difference: Difference) -> str:
    return f"{_field(difference)} (numpy type)" if _is_dtypes(difference) else _field(difference)


def _describe_difference(difference: Difference, episode: EpisodeComparison | None = None) -> str:
    golden, actual = difference.golden, difference.actual
    if _is_dtypes(difference):
        return escape(describe_change(golden, actual))
    if difference.path == ("digest",):
        every = _full_every(episode)
        kept = f"every {every}th step" if every else "some steps"
        return (
            f"this step differs from the golden's; only its digest is stored ({kept} "
            "is kept in full, with step 1 and the last step), and digests are compared exactly"
        )
    if (
        difference.kind == "type"
        and isinstance(golden, ArraySummary | list)
        and (isinstance(actual, ArraySummary | list))
    ):
        mixed = _describe_mixed_storage(golden, actual)
        if mixed is not None:
            return mixed
    if difference.kind == "type":
        return (
            f"golden {_value(golden)} ({_type(golden)})  "
            f"actual {_value(actual)} ({_type(actual)}): the type changed"
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
        text = (
            f"golden {golden!r}  actual {actual!r}  |diff| {delta:.1e} > tol {allowed:.1e} "
            f"(rtol {difference.rtol:g}, atol {difference.atol:g})"
        )
        if golden == 0:
            text += "; the golden is 0.0 here, so only atol applies"
        elif abs(golden) < delta:
            text += (
                f"; the golden is {golden:.1e} here, smaller than the difference: "
                "only atol can accept it"
            )
        return text
    return f"golden {_value(golden)}  actual {_value(actual)}"


def _describe_arrays(golden: ArraySummary, actual: ArraySummary) -> str:
    if golden.scheme != actual.scheme:
        return _describe_other_versions(golden, actual)
    changes = []
    if golden.dtype != actual.dtype:
        changes.append(f"dtype changed {_plain(golden.dtype)} -> {_plain(actual.dtype)}")
    if golden.shape != actual.shape:
        changes.append(f"shape changed {_plain(golden.shape)} -> {_plain(actual.shape)}")
    if changes:
        return "array " + ", ".join(changes)
    details = []
    where = _changed_rows(golden, actual)
    if where:
        details.append(where)
    if golden.sum is not None and actual.sum is not None and golden.sum != actual.sum:
        change = actual.sum - golden.sum
        details.append(f"sum {_number(golden.sum)} -> {_number(actual.sum)} ({change:+.6g})")
    for name in ("min", "max"):
        before, after = getattr(golden, name), getattr(actual, name)
        if before != after:
            details.append(f"{name} {_number(before)} -> {_number(after)}")
    if not details:
        details.append(f"mean {golden.mean!r} -> {actual.mean!r}")
    return (
        f"array {_plain(golden.dtype)}{_plain(list(golden.shape))} (stored as a summary) "
        "changed: " + "; ".join(details) + ". Store it in full (max_array_size) to see each element"
    )


def _describe_other_versions(golden: ArraySummary, actual: ArraySummary) -> str:
    """Two summaries whose digests are of two algorithms: never equal, and why."""
    older = "golden" if golden.version < actual.version else "actual recording"
    return (
        f"array {golden.dtype}{list(golden.shape)} is stored as summaries of different format "
        f"versions (golden {golden.version}, {_SCHEMES[golden.scheme]}; actual "
        f"{actual.version}, {_SCHEMES[actual.scheme]}), whose digests cannot be compared, so "
        f"it may or may not have changed. Record the {older} again in format "
        f"{max(golden.version, actual.version)} (a golden: pytest --update-goldens), or record "
        f'the other with format_version="{min(golden.version, actual.version)}"'
    )


def _number(value: float | None) -> str:
    # Statistics of integer arrays are stored as floats: show 132, not 132.0.
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


def _describe_mixed_storage(golden: Any, actual: Any) -> str | None:
    """An array stored as a summary on one side and in full on the other."""
    if isinstance(golden, ArraySummary) and isinstance(actual, list):
        side, summary, full = "golden", golden, summarise_like(golden, actual)
        pair = (summary, full) if full is not None else None
    elif isinstance(actual, ArraySummary) and isinstance(golden, list):
        side, summary, full = "actual recording", actual, summarise_like(actual, golden)
        pair = (full, summary) if full is not None else None
    else:
        return None
    if pair is None:
        return None
    described = _describe_arrays(*pair).removesuffix(
        ". Store it in full (max_array_size) to see each element"
    )
    return f"{described} (the {side} holds a summary only: its elements are not known)"


def _changed_rows(golden: ArraySummary, actual: ArraySummary) -> str | None:
    if not golden.bands or not actual.bands or len(golden.bands) != len(actual.bands):
        return None
    changed = [i for i, (g, a) in enumerate(zip(golden.bands, actual.bands, strict=True)) if g != a]
    if not changed:
        return None
    first, _ = golden.band_rows(changed[0])
    _, last = golden.band_rows(changed[-1])
    noun = "rows" if len(golden.shape) > 1 else "elements"
    bands = f"{len(changed)} of {len(golden.bands)} bands"
    return f"{noun} {first}-{last} of {golden.shape[0]} ({bands})"


def _describe_array_delta(delta: ArrayDelta) -> str:
    share = 100.0 * delta.differing / delta.size
    index = ", ".join(str(i) for i in delta.first)
    field = escape(format_path(delta.path)) or "record"
    return (
        f"{field}: {delta.differing} of {delta.size} elements "
        f"differ ({share:.3g}%), largest |diff| {delta.max_abs:.6g}, first at [{index}]"
    )


def _full_every(episode: EpisodeComparison | None) -> int | None:
    header = (episode.golden_header if episode else None) or {}
    storage = header.get("storage") or {}
    every = storage.get("full_every")
    return every if isinstance(every, int) else None


def _header_lines(episode: EpisodeComparison) -> list[str]:
    """Header differences in words: one line per changed space, in gymnasium's notation."""
    golden, actual = episode.golden_header or {}, episode.actual_header or {}
    lines: list[str] = []
    spaces_done: set[str] = set()
    for difference in episode.header_differences:
        path = difference.path
        space = path[0] if path else None
        if space in _SPACE_FIELDS and isinstance(space, str):
            if space in spaces_done:
                continue
            spaces_done.add(space)
            before, after = golden.get(space), actual.get(space)
            if isinstance(before, dict) and isinstance(after, dict):
                shown = format_space(before), format_space(after)
                if shown[0] != shown[1]:
                    details = _type_changes(space, episode)
                    lines.append(f"{space}: {shown[0]} -> {shown[1]}{details}")
                    continue
            # Written alike (bounds cut short, say): each part that differs.
            lines += [
                _describe_header_difference(d)
                for d in episode.header_differences
                if d.path[:1] == (space,)
            ]
            continue
        lines.append(_describe_header_difference(difference))
    return lines


def _type_changes(space: str, episode: EpisodeComparison) -> str:
    """The dtype and shape changes inside a space, in words: what a reader looks for first."""
    found: dict[tuple[str | int, ...], str] = {}
    for difference in episode.header_differences:
        path = difference.path
        if path[:1] != (space,):
            continue
        for depth, segment in enumerate(path):
            if segment in ("dtype", "shape"):
                key = path[: depth + 1]
                before = _lookup(episode.golden_header, key)
                after = _lookup(episode.actual_header, key)
                if isinstance(before, list) and isinstance(after, list):
                    before, after = tuple(before), tuple(after)
                where = escape(format_path(key[1:-1]))
                text = (
                    f"{where + ' ' if where else ''}{segment} changed "
                    f"{_plain(before)} -> {_plain(after)}"
                )
                found.setdefault(key, text)
                break
    return f" ({'; '.join(found.values())})" if found else ""


def _lookup(value: Any, path: tuple[str | int, ...]) -> Any:
    for segment in path:
        try:
            value = value[segment]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def _describe_header_difference(difference: Difference) -> str:
    path = difference.path
    field = escape(format_path(path))
    if isinstance(difference.golden, ArraySummary) and isinstance(difference.actual, ArraySummary):
        return f"{field}: {_describe_arrays(difference.golden, difference.actual)}"
    return f"{field}: golden {_value(difference.golden)}, actual {_value(difference.actual)}"


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
            f"  note: {said};",
            "    it differs on every run and no update makes it match: leave it out with",
            f"    @pytest.mark.goldens(ignore=[{python_string(field)}])",
        ]
    return []


def _describe_versions(episode: EpisodeComparison) -> list[str]:
    golden = (episode.golden_header or {}).get("versions") or {}
    actual = (episode.actual_header or {}).get("versions") or {}
    golden_platform = (episode.golden_header or {}).get("platform") or {}
    actual_platform = (episode.actual_header or {}).get("platform") or {}
    # A name the golden does not have is not a change: older goldens recorded
    # fewer versions (the env's own distribution came later).
    changed = [
        f"{escape(name)} {_plain(golden[name])} -> {_plain(actual.get(name, '-'))}"
        for name in sorted(golden)
        if golden[name] != actual.get(name)
    ]
    changed += [
        f"{escape(name)} {_plain(golden_platform.get(name, '-'))} -> "
        f"{_plain(actual_platform.get(name, '-'))}"
        for name in sorted(set(golden_platform) | set(actual_platform))
        if golden_platform.get(name) != actual_platform.get(name)
    ]
    lines = []
    if changed and golden and actual:
        lines.append(f"  recorded with other software (golden -> actual): {', '.join(changed)}")
    golden_mode = (episode.golden_header or {}).get("vectorization_mode")
    actual_mode = (episode.actual_header or {}).get("vectorization_mode")
    if golden_mode and actual_mode and golden_mode != actual_mode:
        lines.append(
            "  recorded with another vectorization mode (golden -> actual): "
            f"{_plain(golden_mode)} -> {_plain(actual_mode)}; a vector env of its own may not "
            "match sync or async vectorization"
        )
    golden_storage = (episode.golden_header or {}).get("storage")
    actual_storage = (episode.actual_header or {}).get("storage")
    if golden_storage and actual_storage and golden_storage != actual_storage:
        settings = [
            f"{escape(name)} {_value(golden_storage.get(name))} -> "
            f"{_value(actual_storage.get(name))}"
            for name in sorted(set(golden_storage) | set(actual_storage))
            if golden_storage.get(name) != actual_storage.get(name)
        ]
        lines.append(
            f"  recorded with other storage settings (golden -> actual): {', '.join(settings)}"
        )
    return lines


def _value(value: Any) -> str:
    """A value from a file, as its repr: escaped, and short however large or deep it is."""
    return short_repr(value, _MAX_VALUE_CHARS)


def _plain(value: Any) -> str:
    """A value from a file shown as it reads: a string without its quotes, escaped."""
    return escape(value) if isinstance(value, str) else _value(value)


def _type(value: Any) -> str:
    names = {float: "float", int: "int", bool: "bool", str: "str", list: "list", dict: "dict"}
    return names.get(type(value), type(value).__name__)


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


def format_nondeterminism(
    comparison: Comparison,
    *,
    first: str = "run 1",
    second: str = "run 2",
    notes: Sequence[str] = (),
    display: Any = str,
) -> str:
    """The failure text for two runs that should have matched.

    It is the golden-mismatch report, headed ``nondeterministic: run 1 vs
    run 2``, with the first run in the golden's place.

    Args:
        comparison: The comparison of the two runs' recordings.
        first: The name of the run compared against.
        second: The name of the run that differs.
        notes: Lines added under the heading, such as how a run was made.
        display: Turns a path into the text shown.
    """
    text = format_comparison(
        comparison,
        title=f"nondeterministic: {first} vs {second}",
        display=display,
        fix=NONDETERMINISM_FIX,
        fix_label="make it deterministic",
        suggest=False,
    )
    head, _, rest = text.partition("\n")
    added = [f"  {first} is shown as golden, {second} as actual", *notes, *_hints(comparison)]
    lines = [head, *(f"  {line}" if not line.startswith("  ") else line for line in added)]
    return "\n".join([*lines, rest] if rest else lines)


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
