"""One difference of a comparison in words: values, arrays kept as summaries, types, headers.

The failure messages of :mod:`gym_goldens.present.report` are made of these.
Every report names the fields that differ at the first divergence in one
order, :data:`FIELD_ORDER`: a change of numpy type first (it explains the
values), then ``action`` (the step's input: what follows from it comes
after), ``terminated``, ``truncated``, ``obs``, ``reward`` and ``info``;
within a field, in record order. The first is the headline.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Final

from gym_goldens.comparison.arrays import ArrayDelta, summarise_like
from gym_goldens.comparison.result import Difference, EpisodeComparison
from gym_goldens.format.codec import ArraySummary, TaggedValue
from gym_goldens.format.dtypes import describe_change
from gym_goldens.format.fields import RESET_VALUES, STEP_VALUES, FieldPath, format_path
from gym_goldens.format.frames import FRAME_TAG, StoredFrame, format_shape
from gym_goldens.present.summary import format_space
from gym_goldens.present.text import distinct_numbers, escape, python_string, short_repr

__all__ = [
    "FIELD_ORDER",
    "FirstDifferences",
    "describe_array_delta",
    "describe_difference",
    "field_name",
    "field_rank",
    "first_differences",
    "frames_only",
    "header_lines",
    "headline_order",
    "is_dtypes",
    "other_field_name",
    "pixel_suggestion",
    "plain_value",
    "shown_value",
    "type_name",
]

# Named first: a change of type explains the values; the action is the step's
# input; the end of an episode explains what follows it.
_NAMED_FIRST: Final = ("dtypes", "action", "terminated", "truncated")
FIELD_ORDER: Final = (*_NAMED_FIRST, *(f for f in STEP_VALUES if f not in _NAMED_FIRST))
"""The order in which reports name the fields that differ at a first divergence."""

_SPACE_FIELDS: Final = frozenset({"observation_space", "action_space"})
_MAX_VALUE_CHARS: Final = 80


@dataclasses.dataclass(frozen=True)
class FirstDifferences:
    """The differences of a first divergence, as a report names them.

    Attributes:
        head: The headline: the first in :data:`FIELD_ORDER`.
        others: The rest, in that order.
        numpy_types: The numpy type of each key found on one side only
            that had one (its ``dtypes`` entry folded into the key's going).
    """

    head: Difference
    others: tuple[Difference, ...]
    numpy_types: dict[FieldPath, str]


def first_differences(differences: Sequence[Difference]) -> FirstDifferences:
    """The differences of a first divergence, in the order and the parts a report names.

    A difference of ``dtypes`` is split into one per typed value; a value
    whose dtype or shape changed is named by that change alone (it explains
    the values).
    """
    expanded = [part for d in differences for part in _expand_dtypes(d)]
    expanded, numpy_types = _one_sided_types(expanded)
    head, *others = _merge_dtypes(headline_order(expanded))
    return FirstDifferences(head, tuple(others), numpy_types)


def is_dtypes(difference: Difference) -> bool:
    return bool(difference.path) and difference.path[0] == "dtypes"


def _expand_dtypes(difference: Difference) -> list[Difference]:
    """Split a difference of ``dtypes`` structures into one per typed value."""
    if not is_dtypes(difference) or (
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


def _one_sided_types(
    differences: list[Difference],
) -> tuple[list[Difference], dict[tuple[str | int, ...], str]]:
    """Fold the numpy type of a key found on one side only into that key's difference.

    A key removed (or added) that held a numpy value has its ``dtypes`` entry
    removed with it: that is no change of type, but part of the key's going.
    Returns the differences without those entries, and the numpy type of
    each one-sided key that had one.
    """
    one_sided = [d.path for d in differences if d.kind in ("missing", "extra")]
    kept: list[Difference] = []
    types: dict[tuple[str | int, ...], str] = {}
    for difference in differences:
        path = difference.path[1:]
        owner = next((p for p in one_sided if is_dtypes(difference) and path[: len(p)] == p), None)
        if owner is None:
            kept.append(difference)
            continue
        numpy_type = difference.golden if difference.golden is not None else difference.actual
        if owner == path and isinstance(numpy_type, str):
            types[owner] = numpy_type
    return kept, types


def _merge_dtypes(differences: list[Difference]) -> list[Difference]:
    """Drop a field's value differences when its dtype or shape changed."""
    changed = [d.path[1:] for d in differences if is_dtypes(d)]
    return [
        d
        for d in differences
        if is_dtypes(d) or not any(d.path[: len(p)] == p and p for p in changed)
    ]


def field_name(difference: Difference) -> str:
    if is_dtypes(difference):
        return escape(format_path(difference.path[1:])) or "record"
    return escape(difference.field) or "record"


def other_field_name(difference: Difference) -> str:
    if is_dtypes(difference):
        return f"{field_name(difference)} (numpy type)"
    if difference.kind == "missing":
        return f"{field_name(difference)} (not in the actual recording)"
    if difference.kind == "extra":
        return f"{field_name(difference)} (not in the golden)"
    return field_name(difference)


def describe_difference(
    difference: Difference, episode: EpisodeComparison | None = None, numpy_type: str | None = None
) -> str:
    """One difference in words; ``numpy_type`` is that of a key found on one side only."""
    golden, actual = difference.golden, difference.actual
    typed = f" ({escape(numpy_type)})" if numpy_type is not None else ""
    if is_dtypes(difference):
        return escape(describe_change(golden, actual))
    if difference.pixels is not None:
        return difference.pixels.describe()
    if isinstance(golden, StoredFrame) or isinstance(actual, StoredFrame):
        return _describe_frame_against(golden, actual)
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
            f"golden {shown_value(golden)} ({type_name(golden)})  "
            f"actual {shown_value(actual)} ({type_name(actual)}): the type changed"
        )
    if difference.kind == "length":
        return f"golden has {golden} items, actual has {actual}: the shape changed"
    if difference.kind == "missing":
        return f"golden {shown_value(golden)}{typed}, missing from the actual recording"
    if difference.kind == "extra":
        return f"not in the golden, actual {shown_value(actual)}{typed}"

    if isinstance(golden, ArraySummary) and isinstance(actual, ArraySummary):
        return _describe_arrays(golden, actual)
    allowed = difference.allowed
    if allowed is not None and isinstance(actual, float):
        delta = abs(actual - golden)
        shown_delta, shown_allowed = distinct_numbers(delta, allowed)
        text = (
            f"golden {golden!r}  actual {actual!r}  |diff| {shown_delta} > tol {shown_allowed} "
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
    return f"golden {shown_value(golden)}  actual {shown_value(actual)}"


def _describe_frame_against(golden: Any, actual: Any) -> str:
    """A frame against a value of another kind: an array summary, or not an image at all."""
    if isinstance(golden, StoredFrame):
        frame, other, side = golden, actual, "golden"
    else:
        frame, other, side = actual, golden, "actual recording"
    if isinstance(other, ArraySummary):
        held = "actual recording" if side == "golden" else "golden"
        return (
            f'the {held} keeps this image as a summary (images="summary"), the {side} as a '
            "frame: they compare by digest, and the digests differ. Record both with "
            'images="frames" to compare their pixels'
        )
    return (
        f"golden {shown_value(golden)}  actual {shown_value(actual)}: "
        f"the {side} holds a frame {format_shape(frame.ref.shape)}, the other no image"
    )


def frames_only(differences: Sequence[Difference], event: str) -> str | None:
    """``only render differs: obs, action, reward, terminated, truncated and info match``.

    None unless frames alone differ at the record (of ``event``, ``step`` or
    ``reset``). The fields that match are the record's values, ``obs`` first
    (``render`` only when it differs: most records have none).
    """
    if not differences or not all(_is_frame_difference(d) for d in differences):
        return None
    differing = list(dict.fromkeys(escape(str(d.path[0])) for d in differences))
    values = RESET_VALUES if event == "reset" else STEP_VALUES
    matching = list(
        dict.fromkeys(f for f in ("obs", *values) if f not in differing and f != "render")
    )
    verb = "differs" if len(differing) == 1 else "differ"
    agrees = "matches" if len(matching) == 1 else "match"  # a reset's info alone
    return f"only {_and(differing)} {verb}: {_and(matching)} {agrees}"


def pixel_suggestion(differences: Sequence[Difference]) -> str | None:
    """The pixel tolerances that would accept the frames of a record, as a marker; or None.

    None unless every difference is of two frames of one shape compared by
    their pixels. Each frame's field gets the ``max_diff_pixels`` that
    covers its differing pixels, or the ``pixel_atol`` that covers its
    largest channel difference: either accepts the record.
    """
    if not differences or any(d.pixels is None or not d.pixels.shape_matches for d in differences):
        return None
    counts = {format_path(d.path): d.pixels.differing for d in differences if d.pixels}
    largest = {format_path(d.path): d.pixels.largest_difference for d in differences if d.pixels}
    return (
        f"@pytest.mark.goldens(max_diff_pixels={_pattern_dict(counts)}) "
        f"or @pytest.mark.goldens(pixel_atol={_pattern_dict(largest)})"
    )


def _pattern_dict(values: dict[str, int]) -> str:
    return "{" + ", ".join(f"{python_string(k)}: {v}" for k, v in values.items()) + "}"


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _is_frame_difference(difference: Difference) -> bool:
    return difference.pixels is not None or any(
        isinstance(value, StoredFrame) for value in (difference.golden, difference.actual)
    )


def _describe_arrays(golden: ArraySummary, actual: ArraySummary) -> str:
    changes = []
    if golden.dtype != actual.dtype:
        changes.append(f"dtype changed {plain_value(golden.dtype)} -> {plain_value(actual.dtype)}")
    if golden.shape != actual.shape:
        changes.append(f"shape changed {plain_value(golden.shape)} -> {plain_value(actual.shape)}")
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
        f"array {plain_value(golden.dtype)}{plain_value(list(golden.shape))} (stored as a summary) "
        "changed: " + "; ".join(details) + ". Store it in full (max_array_size) to see each element"
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


def describe_array_delta(delta: ArrayDelta) -> str:
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


def header_lines(episode: EpisodeComparison) -> list[str]:
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
                    f"{plain_value(before)} -> {plain_value(after)}"
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
    return (
        f"{field}: golden {shown_value(difference.golden)}, actual {shown_value(difference.actual)}"
    )


def shown_value(value: Any) -> str:
    """A value from a file, as its repr: escaped, and short however large or deep it is.

    A frame is named by its shape and file.
    """
    if isinstance(value, StoredFrame):
        return f"a frame {format_shape(value.ref.shape)} ({escape(value.ref.file)})"
    if isinstance(value, TaggedValue) and value.tag == FRAME_TAG:
        return "a frame"
    return short_repr(value, _MAX_VALUE_CHARS)


def plain_value(value: Any) -> str:
    """A value from a file shown as it reads: a string without its quotes, escaped."""
    return escape(value) if isinstance(value, str) else shown_value(value)


def type_name(value: Any) -> str:
    names = {float: "float", int: "int", bool: "bool", str: "str", list: "list", dict: "dict"}
    return names.get(type(value), type(value).__name__)


def field_rank(path: Sequence[object]) -> int:
    """Where a field's top-level name comes in :data:`FIELD_ORDER` (unknown names last)."""
    field = path[0] if path else ""
    return FIELD_ORDER.index(field) if field in FIELD_ORDER else len(FIELD_ORDER)


def headline_order(differences: Sequence[Difference]) -> list[Difference]:
    """The differences in the order reports name them (:data:`FIELD_ORDER`), stable."""
    return sorted(differences, key=lambda difference: field_rank(difference.path))
