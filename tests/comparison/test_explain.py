"""The explanation (DeepDiff) against the comparison's own checks, on random trajectories.

:func:`gym_goldens.comparison.engine.compare` skips byte-identical files and lines and
checks the rest with compiled checks and the walk; the slow engine here parses
every record of both recordings and asks DeepDiff (through
:func:`gym_goldens.comparison.explain.explain`) about every pair. They must agree on
every verdict, every count, every differing path and every word of the failure
message.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gym_goldens.comparison.arrays import array_deltas
from gym_goldens.comparison.engine import compare
from gym_goldens.comparison.explain import explain, header_differences
from gym_goldens.comparison.result import Comparison, Divergence, EpisodeComparison
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.comparison.walk import values_match
from gym_goldens.format.codec import Encoder
from gym_goldens.format.header import FORMAT_VERSION
from gym_goldens.format.reader import iter_lines, parse_record
from gym_goldens.present.report import format_comparison

TOLERANCES = [
    Tolerance(),
    Tolerance.build(rtol={"obs": 1e-2}, atol={"reward": 0.5}),
    Tolerance.build(ignore=["info.a", "obs[1]"]),
    Tolerance.build(rtol={"info.*.b": 0.1}, ignore=["action"]),
    Tolerance.build(rtol=0.0, atol=0.0),
]

_KEYS = st.sampled_from(["a", "b", "c", "$d", "__e"])
_LEAVES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, 1.0, -2.5, math.nan, math.inf]),
    st.integers(-3, 3),
    st.booleans(),
    st.none(),
    st.sampled_from(["x", "y", ""]),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=8,
)


@st.composite
def _changed(draw: st.DrawFn, value: Any) -> Any:
    """``value`` with a few random changes: noise, new values, keys and lengths."""
    choice = draw(st.integers(0, 9))
    if choice < 5:
        return _noisy(draw, value)
    if choice == 5:
        return draw(_VALUES)
    if isinstance(value, dict):
        if choice == 6 and value:
            return {k: v for k, v in value.items() if k != draw(st.sampled_from(sorted(value)))}
        if choice == 7:
            return {**value, draw(_KEYS): draw(_VALUES)}
    if isinstance(value, list):
        if choice == 6 and value:
            return value[:-1]
        if choice == 7:
            return [*value, draw(_LEAVES)]
    return _noisy(draw, value)


def _noisy(draw: st.DrawFn, value: Any) -> Any:
    if isinstance(value, float):
        scale = draw(st.sampled_from([1.0, 1 + 1e-9, 1 + 1e-3, 1 + 0.05, 2.0]))
        return value * scale
    if isinstance(value, list):
        return [draw(_changed(item)) for item in value]
    if isinstance(value, dict):
        return {key: draw(_changed(item)) for key, item in value.items()}
    return value


def _record(t: int | None, draw: st.DrawFn, episode: int) -> dict[str, Any]:
    obs = draw(st.lists(st.floats(-10, 10), min_size=2, max_size=3))
    info = draw(st.dictionaries(_KEYS, _VALUES, max_size=3))
    # Format 1.1 records carry the numpy types, on the reset and when they change.
    types = draw(st.sampled_from([None, {"obs": "float32[2]"}, {"action": "int64", "obs": "f[3]"}]))
    if t is None:
        record = {"event": "reset", "episode": episode, "obs": obs, "info": info}
    else:
        record = {
            "event": "step",
            "t": t,
            "action": draw(_VALUES),
            "obs": obs,
            "reward": draw(st.floats(-2, 2)),
            "terminated": False,
            "truncated": draw(st.booleans()),
            "info": info,
        }
    if types is not None:
        record["dtypes"] = types
    return record


def _changed_record(draw: st.DrawFn, record: dict[str, Any]) -> dict[str, Any]:
    if draw(st.booleans()):
        return record
    fields = {key: value for key, value in record.items() if key not in ("event", "t")}
    changed = draw(_changed(fields))
    if not isinstance(changed, dict):
        return record
    return {"event": record["event"], **({"t": record["t"]} if "t" in record else {}), **changed}


def _header(episode: int, space: Any, version: str = FORMAT_VERSION) -> dict[str, Any]:
    return {
        "event": "header",
        "format": "gym-goldens",
        "version": version,
        "reset": {"seed": episode, "options": None},
        "observation_space": space,
        "action_space": {"type": "Discrete", "n": 2},
    }


@st.composite
def trajectories(draw: st.DrawFn) -> tuple[list[list[dict[str, Any]]], list[list[dict[str, Any]]]]:
    """A golden trajectory (episodes of records) and an actual one derived from it."""
    golden: list[list[dict[str, Any]]] = []
    version = FORMAT_VERSION
    for episode in range(draw(st.integers(1, 3))):
        steps = draw(st.integers(0, 4))
        records = [_header(episode, {"type": "Box", "shape": [2]}, version)]
        records += [_record(t or None, draw, episode) for t in range(steps + 1)]
        golden.append(records)
    actual: list[list[dict[str, Any]]] = []
    for records in golden:
        copied = [_changed_record(draw, record) for record in records[1:]]
        header = records[0]
        if draw(st.integers(0, 9)) == 0:
            header = _header(header["reset"]["seed"], {"type": "Box", "shape": [3]}, version)
        length = draw(
            st.sampled_from([len(copied), len(copied), max(len(copied) - 1, 1), len(copied) + 1])
        )
        while len(copied) < length:
            copied.append(_record(len(copied), draw, 0))
        actual.append([header, *copied[:length]])
    episodes = draw(st.sampled_from([len(actual), len(actual), len(actual) - 1, len(actual) + 1]))
    actual = (actual + golden)[:episodes] if episodes else actual[:1]
    return golden, actual


def _write(folder: Path, episodes: list[list[dict[str, Any]]]) -> Path:
    folder.mkdir(parents=True)
    encoder = Encoder()
    lines = [encoder.encode(record) for records in episodes for record in records]
    (folder / "trajectory.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return folder


_Numbered = list[tuple[int, dict[str, Any]]]


def _read(path: Path) -> list[_Numbered]:
    """Every record of a file, parsed, split into episodes at each header record."""
    episodes: list[_Numbered] = []
    for number, raw in iter_lines(path):
        record = parse_record(raw, path, number)
        if record["event"] == "header" or not episodes:
            episodes.append([])
        episodes[-1].append((number, record))
    return episodes


def _slow_episode(
    index: int,
    golden: Path,
    actual: Path,
    *,
    golden_records: _Numbered | None,
    actual_records: _Numbered | None,
    tolerance: Tolerance,
) -> EpisodeComparison:
    """Compare one episode the slow way: parse everything, DeepDiff every pair."""
    if golden_records is None or actual_records is None:
        present = golden_records or actual_records or []
        steps = sum(1 for _, record in present if record["event"] == "step")
        return EpisodeComparison(
            index,
            golden if golden_records else None,
            actual if actual_records else None,
            golden_steps=steps if golden_records else 0,
            actual_steps=steps if actual_records else 0,
            differing_records=steps + 1,
        )
    golden_records, actual_records = list(golden_records), list(actual_records)
    golden_header = golden_records.pop(0)[1]
    actual_header = actual_records.pop(0)[1]
    found_in_header = header_differences(golden_header, actual_header)
    root = tolerance.tree()
    differing = 0
    first = None
    types_differ = False  # a record without dtypes has the types of the last one with them
    for (golden_line, g), (actual_line, a) in zip(golden_records, actual_records, strict=False):
        found = explain(g, a, root)
        golden_types, actual_types = g.get("dtypes"), a.get("dtypes")
        if golden_types is not None or actual_types is not None:
            types_differ = (
                golden_types is None
                or actual_types is None
                or bool(explain({"dtypes": golden_types}, {"dtypes": actual_types}, root))
            )
        differing += bool(found) or types_differ
        if found and first is None:
            explanation = (tuple(found), array_deltas(g, a, [d.path for d in found], root))
            first = Divergence(
                g["event"], g.get("t"), golden_line, actual_line, lambda e=explanation: e
            )
    longer, shorter = sorted([golden_records, actual_records], key=len, reverse=True)
    extra = longer[len(shorter) :]
    if first is None and extra:
        line, record = extra[0]
        side = "golden" if longer is golden_records else "actual"
        first = Divergence(
            record["event"],
            record["t"],
            line if side == "golden" else None,
            line if side == "actual" else None,
        )
    steps = [
        sum(1 for _, r in records if r["event"] == "step")
        for records in (golden_records, actual_records)
    ]
    return EpisodeComparison(
        index,
        golden,
        actual,
        golden_steps=steps[0],
        actual_steps=steps[1],
        differing_records=differing + len(extra),
        first=first,
        header_differences=found_in_header,
        golden_header=golden_header,
        actual_header=actual_header,
    )


def _slow_compare(golden: Path, actual: Path, tolerance: Tolerance) -> Comparison:
    golden_file, actual_file = golden / "trajectory.jsonl", actual / "trajectory.jsonl"
    pairs = itertools.zip_longest(_read(golden_file), _read(actual_file))
    episodes = tuple(
        _slow_episode(
            i, golden_file, actual_file, golden_records=g, actual_records=a, tolerance=tolerance
        )
        for i, (g, a) in enumerate(pairs)
    )
    return Comparison(golden, actual, tolerance, episodes)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=trajectories(), tolerance=st.sampled_from(TOLERANCES))
def test_fast_and_slow_engines_agree(
    tmp_path_factory: pytest.TempPathFactory,
    data: tuple[list[list[dict[str, Any]]], list[list[dict[str, Any]]]],
    tolerance: Tolerance,
) -> None:
    folder = tmp_path_factory.mktemp("engines")
    golden = _write(folder / "golden", data[0])
    actual = _write(folder / "actual", data[1])

    fast = compare(golden, actual, tolerance)
    slow = _slow_compare(golden, actual, tolerance)

    assert fast.equal == slow.equal
    for fast_episode, slow_episode in zip(fast.episodes, slow.episodes, strict=True):
        assert fast_episode.equal == slow_episode.equal
        assert fast_episode.differing_records == slow_episode.differing_records
        # repr: exact for floats, and NaN inside a value compares equal to itself.
        assert repr(fast_episode.first) == repr(slow_episode.first)
        if fast_episode.first is not None and slow_episode.first is not None:
            assert repr(fast_episode.first.differences) == repr(slow_episode.first.differences)
            assert repr(fast_episode.first.arrays) == repr(slow_episode.first.arrays)
        assert repr(fast_episode.header_differences) == repr(slow_episode.header_differences)
        if fast_episode.golden_steps is not None:  # None: identical files, not counted
            assert fast_episode.golden_steps == slow_episode.golden_steps
            assert fast_episode.actual_steps == slow_episode.actual_steps
    assert format_comparison(fast, nodeid="t.py::t") == format_comparison(slow, nodeid="t.py::t")


@settings(max_examples=300, deadline=None)
@given(golden=_VALUES, data=st.data(), tolerance=st.sampled_from(TOLERANCES))
def test_the_explanation_agrees_with_the_walk(
    golden: Any, data: st.DataObject, tolerance: Tolerance
) -> None:
    actual = data.draw(_changed(golden))
    record_golden = {"obs": golden, "info": {"a": golden, "z": {"b": golden}}}
    record_actual = {"obs": actual, "info": {"a": actual, "z": {"b": actual}}}
    root = tolerance.tree()

    found = explain(record_golden, record_actual, root)

    assert values_match(record_golden, record_actual, root) == (not found)


def test_tagged_values_are_reported_whole(tmp_path: Path) -> None:
    import numpy as np

    from gym_goldens.format.codec import decode_line

    encoder = Encoder(max_array_size=4)
    golden = decode_line(encoder.encode({"obs": np.arange(10.0), "info": {"s": {1, 2}}}))
    actual = decode_line(encoder.encode({"obs": np.arange(10.0) + 1, "info": {"s": {1, 3}}}))
    root = Tolerance().tree()
    found = explain(golden, actual, root)
    assert [(d.field, d.kind, type(d.golden).__name__) for d in found] == [
        ("info.s", "value", "TaggedValue"),
        ("obs", "value", "ArraySummary"),
    ]
    assert not values_match(golden, actual, root)


@pytest.mark.parametrize(
    ("golden", "actual"),
    [([0], [0.0]), ([1], [True]), ({"x": [0.0]}, {"x": [False]}), ([[2]], [[2.0]])],
)
def test_a_change_of_type_is_a_difference_even_when_python_says_equal(
    golden: Any, actual: Any
) -> None:
    root = Tolerance().tree()
    assert golden == actual  # what Python says
    assert not values_match({"obs": golden}, {"obs": actual}, root)
    assert [d.kind for d in explain({"obs": golden}, {"obs": actual}, root)] == ["type"]


def test_a_longer_golden_episode_counts_every_extra_step(tmp_path: Path) -> None:
    records = [_header(0, {}), {"event": "reset", "episode": 0, "obs": [0.0], "info": {}}]
    records += [
        {
            "event": "step",
            "t": t,
            "action": 0,
            "obs": [float(t)],
            "reward": 0.0,
            "terminated": False,
            "truncated": False,
            "info": {},
        }
        for t in range(1, 6)
    ]
    golden = _write(tmp_path / "golden", [records])
    actual = _write(tmp_path / "actual", [records[:4]])  # two steps of five
    (episode,) = compare(golden, actual).episodes
    assert (episode.golden_steps, episode.actual_steps) == (5, 2)
    assert episode.differing_records == 3
    assert episode.first is not None
    assert (episode.first.t, episode.first.golden_line, episode.first.actual_line) == (3, 5, None)


_NUMBERS = st.one_of(
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=16, max_size=40),
    st.lists(st.integers(-5, 5), min_size=16, max_size=40),
    st.lists(st.lists(st.floats(-3, 3), min_size=2, max_size=2), min_size=16, max_size=20),
)


@settings(max_examples=200, deadline=None)
@given(golden=_NUMBERS, data=st.data(), tolerance=st.sampled_from(TOLERANCES))
def test_long_arrays_are_explained_as_element_by_element(
    golden: list[Any], data: st.DataObject, tolerance: Tolerance
) -> None:
    # Long lists of numbers are compared as numpy arrays, not by DeepDiff's
    # walk of every element: the same differences either way.
    actual = data.draw(_changed(golden))
    root = tolerance.tree()
    record_golden, record_actual = {"obs": golden}, {"obs": actual}
    as_arrays = explain(record_golden, record_actual, root)
    by_element = explain(record_golden, record_actual, root, _arrays=False)
    assert repr(as_arrays) == repr(by_element)
    assert values_match(record_golden, record_actual, root) == (not as_arrays)


def test_an_infinity_against_a_number_is_counted_once_and_first(tmp_path: Path) -> None:
    # The first lines and the array statistics apply one rule: obs[0] (inf
    # against 0) and obs[1] (1 against 2) differ, obs[2] matches.
    header = _header(0, {"type": "Box", "shape": [3]}, FORMAT_VERSION)
    golden = [header, {"event": "reset", "episode": 0, "obs": [math.inf, 1.0, 3.0], "info": {}}]
    actual = [header, {"event": "reset", "episode": 0, "obs": [0.0, 2.0, 3.0], "info": {}}]
    comparison = compare(_write(tmp_path / "g", [golden]), _write(tmp_path / "a", [actual]))
    (episode,) = comparison.episodes
    assert episode.first is not None
    assert [d.field for d in episode.first.differences] == ["obs[0]", "obs[1]"]
    (delta,) = episode.first.arrays
    assert (delta.differing, delta.first, delta.max_abs) == (2, (0,), math.inf)
    assert "obs: 2 of 3 elements differ (66.7%), largest |diff| inf, first at [0]" in (
        format_comparison(comparison)
    )


class _CountedKey(str):
    """A dict key that counts how often it is compared with another."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _CountedKey.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_explaining_many_differing_keys_takes_work_linear_in_their_number() -> None:
    # The order of the differences was worked out key by key, list by list:
    # 40,000 differing info keys took 20 s. The keys are compared a bounded
    # number of times each (the golden's and the actual's are other objects).
    keys = 200
    golden = {"info": {_CountedKey(f"k{i}"): float(i) for i in range(keys)}}
    actual = {"info": {_CountedKey(f"k{i}"): float(i) + 1 for i in range(keys)}}
    _CountedKey.compared = 0

    found = explain(golden, actual, Tolerance().tree(), limit=keys)

    assert [d.field for d in found] == [f"info.k{i}" for i in range(keys)]
    assert _CountedKey.compared <= 10 * keys
