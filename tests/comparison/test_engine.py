"""Tests of the comparison (``gym_goldens.comparison.engine``)."""

from __future__ import annotations

import copy
import math
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from gymnasium import spaces
from hypothesis import given, settings
from hypothesis import strategies as st

from gym_goldens import GoldenFormatError, RecordTrajectory, Tolerance, compare, read_recording
from gym_goldens.comparison.explain import explain
from gym_goldens.comparison.result import Difference
from gym_goldens.comparison.walk import values_match
from gym_goldens.errors import UnsafeGoldenPathError
from gym_goldens.format.fields import format_path
from gym_goldens.present.report import format_comparison
from tests.support.bombs import episode_bomb, header_line
from tests.support.envs import ScriptedEnv, record_scaled_cartpole, run


def _record(path: Path, **kwargs: Any) -> Path:
    return Path(record_scaled_cartpole(path, **kwargs))


def _node(tolerance: Tolerance | None = None) -> Any:
    return (tolerance or Tolerance()).tree()


def _explained(golden: Any, actual: Any, tolerance: Tolerance | None = None) -> list[Difference]:
    return explain(golden, actual, _node(tolerance))


def test_identical_recordings_arevalues_match(tmp_path: Path) -> None:
    result = compare(_record(tmp_path / "g", resets=3), _record(tmp_path / "a", resets=3))
    assert result.equal
    assert bool(result)
    assert len(result.episodes) == 3
    assert result.differing == []


def test_float_tolerance_is_atol_plus_rtol_times_golden() -> None:
    tolerance = Tolerance(rtol=1e-3, atol=1e-6)
    golden = 2.0
    allowed = 1e-6 + 1e-3 * 2.0
    assert values_match(golden, golden + 0.99 * allowed, _node(tolerance))
    assert values_match(golden, golden - 0.99 * allowed, _node(tolerance))
    assert not values_match(golden, golden + 1.01 * allowed, _node(tolerance))
    # Relative to the golden, not the actual value.
    assert not values_match(1.0, 1.0 + 1.5e-3, _node(tolerance))
    assert values_match(-1000.0, -1000.9, _node(tolerance))
    (difference,) = _explained(golden, golden + 1.01 * allowed, tolerance)
    assert difference.kind == "value"
    assert difference.allowed == pytest.approx(allowed, rel=1e-12)
    assert (difference.rtol, difference.atol) == (1e-3, 1e-6)


def test_zero_tolerance_means_exact() -> None:
    exact = Tolerance(rtol=0.0, atol=0.0)
    assert values_match(0.1, 0.1, _node(exact))
    assert not values_match(0.1, math.nextafter(0.1, 1.0), _node(exact))


def test_nan_matches_nan_and_infinities_match_only_themselves() -> None:
    loose = _node(Tolerance(rtol=1.0, atol=math.inf))
    assert values_match([math.nan], [math.nan], _node())
    assert not values_match(math.nan, 0.0, loose)
    assert not values_match(0.0, math.nan, loose)
    assert values_match(math.inf, math.inf, _node())
    assert values_match(-math.inf, -math.inf, _node())
    assert not values_match(math.inf, -math.inf, loose)
    assert not values_match(math.inf, 1e308, loose)
    # An actual infinity is out of any tolerance of a finite golden, an
    # infinite atol too (numpy 2's isclose takes it in there, numpy 1's not:
    # the verdict must not depend on the numpy installed).
    assert not values_match(1e308, math.inf, _node(Tolerance(rtol=1.0, atol=1e300)))
    assert not values_match(1e308, math.inf, loose)
    assert not values_match(math.inf, math.nan, loose)
    assert _explained(math.nan, 1.0)[0].kind == "value"


def test_ints_bools_strings_compare_exactly() -> None:
    loose = Tolerance(rtol=1.0, atol=10.0)
    assert not values_match(1, 2, _node(loose))
    assert not values_match(10**30, 10**30 + 1, _node(loose))
    assert not values_match(True, False, _node(loose))
    assert not values_match("left", "right", _node(loose))
    assert values_match({"s": "x", "n": 3, "b": True}, {"s": "x", "n": 3, "b": True}, _node())
    assert [d.kind for d in _explained(1, 2, loose)] == ["value"]


def test_type_and_length_changes_are_differences() -> None:
    assert not values_match(1, 1.0, _node())
    assert not values_match(True, 1, _node())
    assert not values_match(None, 0.0, _node())
    assert not values_match([1.0, 2.0], [1.0, 2.0, 3.0], _node())
    assert not values_match([[1.0, 2.0]], [[1.0], [2.0]], _node())
    assert not values_match({"a": 1}, {"a": 1, "b": 2}, _node())
    found = _explained(
        {"obs": [1.0, 2.0], "info": {"a": 1}}, {"obs": [1.0], "info": {"a": 1.0, "b": 0}}
    )
    assert [(d.field, d.kind) for d in found] == [
        ("obs", "length"),
        ("info.a", "type"),
        ("info.b", "extra"),
    ]
    assert (found[0].golden, found[0].actual) == (2, 1)
    missing = _explained({"info": {"a": 1}}, {"info": {}})
    assert [(d.field, d.kind, d.golden) for d in missing] == [("info.a", "missing", 1)]


def test_ignored_fields_are_left_out() -> None:
    tolerance = Tolerance.build(ignore=["info.wall_time", "obs[1]"])
    golden = {"obs": [1.0, 2.0], "info": {"wall_time": 1.0, "x": 1}}
    actual = {"obs": [1.0, 99.0], "info": {"wall_time": 5.0, "x": 1}}
    assert values_match(golden, actual, _node(tolerance))
    assert _explained(golden, actual, tolerance) == []
    assert values_match({"info": {"x": 1}}, {"info": {"x": 1, "wall_time": 3.0}}, _node(tolerance))
    actual["info"]["x"] = 2
    assert [d.field for d in _explained(golden, actual, tolerance)] == ["info.x"]


def test_first_divergence_names_episode_step_and_field(tmp_path: Path) -> None:
    golden = _record(tmp_path / "g", steps=100, resets=2)
    actual = _record(tmp_path / "a", steps=100, resets=2, gravity=9.81)
    result = compare(golden, actual)
    assert not result.equal
    assert [e.index for e in result.differing] == [0, 1]
    episode = result.differing[0]
    assert episode.golden_path == golden / "trajectory.jsonl"
    assert episode.first is not None
    assert (episode.first.event, episode.first.t) == ("step", 1)
    assert episode.first.golden_line == 3  # header, reset, then step 1
    assert episode.first.differences[0].path == ("obs", 1)
    assert episode.first.differences[0].kind == "value"
    assert episode.differing_records >= 1
    assert episode.golden_steps == len(read_recording(golden)[0].steps)
    assert episode.actual_steps == len(read_recording(actual)[0].steps)


def test_tiny_relative_change_passes_default_and_fails_exact(tmp_path: Path) -> None:
    golden = _record(tmp_path / "g")
    actual = _record(tmp_path / "a", factor=1 + 1e-9)
    assert compare(golden, actual).equal
    exact = compare(golden, actual, Tolerance(rtol=0.0, atol=0.0))
    assert not exact.equal
    assert exact.differing[0].first is not None
    assert exact.differing[0].first.event == "reset"


def test_a_different_number_of_steps_is_a_difference(tmp_path: Path) -> None:
    golden = _record(tmp_path / "g", steps=8)
    actual = _record(tmp_path / "a", steps=5)
    result = compare(golden, actual)
    (episode,) = result.differing
    assert (episode.golden_steps, episode.actual_steps) == (8, 5)
    assert episode.differing_records == 3
    assert episode.first is not None
    assert (episode.first.t, episode.first.actual_line, episode.first.differences) == (6, None, ())
    assert episode.first.golden_line == 8
    reverse = compare(actual, golden).differing[0]
    assert (reverse.golden_steps, reverse.actual_steps) == (5, 8)
    assert reverse.first is not None
    assert reverse.first.golden_line is None


def test_a_different_number_of_episodes_is_a_difference(tmp_path: Path) -> None:
    golden = _record(tmp_path / "g", steps=5, resets=3)
    actual = _record(tmp_path / "a", steps=5, resets=2)
    result = compare(golden, actual)
    (episode,) = result.differing
    assert (episode.index, episode.actual_path) == (2, None)
    assert (episode.golden_steps, episode.actual_steps) == (5, 0)
    extra = compare(actual, golden).differing[0]
    assert (extra.index, extra.golden_path) == (2, None)


def test_compared_header_fields_differ_and_informational_ones_do_not(tmp_path: Path) -> None:
    golden = _record(tmp_path / "g", steps=3)
    actual = _record(tmp_path / "a", steps=3)
    path = actual / "trajectory.jsonl"
    header, *rest = path.read_bytes().splitlines()
    parsed = orjson.loads(header)
    parsed["versions"]["numpy"] = "0.0.1"
    parsed["platform"]["machine"] = "elsewhere"
    path.write_bytes(b"\n".join([orjson.dumps(parsed), *rest]) + b"\n")
    assert compare(golden, actual).equal
    parsed["action_space"]["n"] = 3
    path.write_bytes(b"\n".join([orjson.dumps(parsed), *rest]) + b"\n")
    (episode,) = compare(golden, actual).differing
    assert [d.field for d in episode.header_differences] == ["action_space.n"]
    assert episode.first is None


def test_unreadable_golden_names_file_and_line(tmp_path: Path) -> None:
    golden = _record(tmp_path / "g", steps=5)
    actual = _record(tmp_path / "a", steps=5)
    path = golden / "trajectory.jsonl"
    lines = path.read_bytes().splitlines()
    lines[3] = lines[3][:20]
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(GoldenFormatError, match="invalid JSON") as info:
        compare(golden, actual)
    assert (info.value.path, info.value.line) == (str(path), 4)
    with pytest.raises(GoldenFormatError, match="no such file or folder"):
        compare(tmp_path / "nowhere", actual)


def test_compare_follows_no_symlink_inside_a_recording_folder(tmp_path: Path) -> None:
    # A recording folder whose file is a link to another recording: each path
    # given is resolved once, by the one path check, which follows no link in it.
    actual = _record(tmp_path / "a", steps=5)
    golden = tmp_path / "g"
    golden.mkdir()
    link = golden / "trajectory.jsonl"
    link.symlink_to(actual / "trajectory.jsonl")
    with pytest.raises(UnsafeGoldenPathError, match=f"^{re.escape(str(link))}: a symlink"):
        compare(golden, actual)
    # A path given is the caller's choice: a recording file may be a link itself.
    assert compare(link, actual / "trajectory.jsonl").equal


def test_format_path() -> None:
    assert format_path(("obs", 2)) == "obs[2]"
    assert format_path(("info", "x_velocity")) == "info.x_velocity"
    assert format_path(("obs", 0, 1)) == "obs[0][1]"
    assert format_path(()) == ""


# Random values as they come out of JSON, and tolerances over the same keys.
_KEYS = st.sampled_from(["obs", "info", "reward", "a", "b"])
_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, 1.0, 1.0 + 1e-9, 1.0 + 1e-5, -1.0, "x", "y"]),
)
_json = st.recursive(
    _leaves,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_KEYS, children, max_size=3),
    max_leaves=10,
)
_patterns = st.sampled_from(
    ["obs", "obs[0]", "obs[*]", "info.a", "info.*.b", "reward", "*.a", "info[1]"]
)
_tolerances = st.builds(
    Tolerance.build,
    rtol=st.one_of(
        st.sampled_from([0.0, 1e-6, 1e-3]),
        st.dictionaries(_patterns, st.sampled_from([0.0, 1e-4, 1.0]), max_size=2),
    ),
    atol=st.one_of(
        st.sampled_from([0.0, 1e-12, 1e-3]),
        st.dictionaries(_patterns, st.sampled_from([0.0, 1e-4]), max_size=2),
    ),
    ignore=st.lists(_patterns, max_size=2),
)


@st.composite
def _pairs(draw: st.DrawFn) -> tuple[Any, Any]:
    golden = draw(st.dictionaries(_KEYS, _json, max_size=4))
    how = draw(st.sampled_from(["same", "other", "mutate"]))
    if how == "same":
        return golden, copy.deepcopy(golden)
    if how == "other":
        return golden, draw(st.dictionaries(_KEYS, _json, max_size=4))
    return golden, _mutate(copy.deepcopy(golden), draw)


def _mutate(value: Any, draw: st.DrawFn) -> Any:
    if isinstance(value, dict):
        return {key: _mutate(item, draw) for key, item in value.items()}
    if isinstance(value, list):
        return [_mutate(item, draw) for item in value]
    if isinstance(value, float) and draw(st.booleans()):
        return value * draw(st.sampled_from([1 + 1e-9, 1 + 1e-5, 1.1, -1.0]))
    if type(value) is int and draw(st.booleans()):
        return float(value)  # equal as numbers, a change of type all the same
    if type(value) is bool and draw(st.booleans()):
        return int(value)
    return value


@settings(max_examples=500, deadline=None)
@given(pair=_pairs(), tolerance=_tolerances)
def test_equal_agrees_with_explain(pair: tuple[Any, Any], tolerance: Tolerance) -> None:
    golden, actual = pair
    node = tolerance.tree()
    found = explain(golden, actual, node)
    assert values_match(golden, actual, node) == (not found), found
    # And both agree with the tolerance of each reported field.
    for difference in found:
        if difference.kind == "value" and difference.rtol is not None:
            assert (difference.rtol, difference.atol) == tolerance.for_path(difference.path)


@pytest.mark.parametrize("compress", [False, True])
def test_a_comparison_keeps_counts_and_a_bounded_sample_of_its_episodes(
    tmp_path: Path, compress: bool
) -> None:
    # 3,000 header-only episodes: all but the first are missing from the actual.
    header = header_line(tmp_path / "recorded")
    golden = episode_bomb(tmp_path / "golden", header, 3000, compress=compress)
    actual = episode_bomb(tmp_path / "actual", header, 1, compress=compress)

    comparison = compare(golden, actual)

    assert (comparison.episode_count, comparison.differing_count) == (3000, 2999)
    assert not comparison.equal
    # The first 1,000 episodes, and the first 1,000 that differ: not one per episode.
    assert len(comparison.episodes) == 1001
    assert [e.index for e in comparison.differing] == list(range(1, 1001))
    assert "episodes differing: 2999 of 3000 (episodes 1, 2, 3" in format_comparison(comparison)
    assert "(2989 more)" in format_comparison(comparison)
    same = compare(golden, golden)
    assert (same.episode_count, same.differing_count, len(same.episodes)) == (3000, 0, 1000)
    assert same.equal


def test_a_golden_that_names_a_key_twice_is_malformed_not_a_match(tmp_path: Path) -> None:
    # The env gives k1 and k2; the golden names k1 twice, in the same skeleton
    # (keys that differ only in digits): read as {"k1": 5.0}, k2 went unchecked.
    infos = [{}, {"k1": 5.0, "k2": 5.0}, {"k1": 5.0, "k2": 5.0}]
    env = ScriptedEnv(spaces.Box(-1, 1, (1,)), [np.zeros(1, np.float32)] * 3, infos=infos)
    actual = tmp_path / "actual"
    run(RecordTrajectory(env, actual), [0, 0])
    golden = Path(shutil.copytree(actual, tmp_path / "golden"))
    path = golden / "trajectory.jsonl"
    lines = path.read_bytes().split(b"\n")
    assert b'"info":{"k1":5.0,"k2":5.0}' in lines[3]
    lines[3] = lines[3].replace(b'"k2":5.0', b'"k1":5.0')
    lines[2] = lines[2].replace(b'"reward":0.0', b'"reward":0.5')  # an earlier difference
    path.write_bytes(b"\n".join(lines))

    with pytest.raises(GoldenFormatError) as raised:
        compare(golden, actual)

    assert str(raised.value).startswith(f"{path}:4: the key 'info.k1' is named twice in one object")
    # The walk of the comparison finds the difference too, where the first one was.
    lines[2] = lines[2].replace(b'"reward":0.5', b'"reward":0.0')
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(GoldenFormatError, match=r"'info\.k1' is named twice"):
        compare(golden, actual)


def test_a_golden_without_headers_is_refused_as_a_pre_release_format(tmp_path: Path) -> None:
    # Format 1.0 wrote episodes without a header record.
    actual = _record(tmp_path / "actual")
    golden = tmp_path / "golden"
    golden.mkdir()
    lines = (actual / "trajectory.jsonl").read_bytes().splitlines(keepends=True)
    (golden / "trajectory.jsonl").write_bytes(b"".join(lines[1:]))
    with pytest.raises(GoldenFormatError) as caught:
        compare(golden, actual)
    assert caught.value.reason == (
        "recorded by a pre-release format (1.0): rewrite it with pytest --update-goldens-all"
    )


def test_a_comparison_of_more_layouts_than_it_keeps_checks_for_judges_each_line(
    tmp_path: Path,
) -> None:
    # 700 steps, each of its own layout (an info key of another length): the
    # compiled checks kept for the layouts met are dropped on the way, and
    # every line is still judged, the one out of tolerance among them.
    steps = 700
    infos = [{}] + [{"k" * t: 1.0} for t in range(1, steps + 1)]
    env = ScriptedEnv(spaces.Box(-1, 1, (1,)), [np.zeros(1, np.float32)] * (steps + 1), infos=infos)
    actual = tmp_path / "actual"
    run(RecordTrajectory(env, actual), [0] * steps)
    golden = Path(shutil.copytree(actual, tmp_path / "golden"))
    path = golden / "trajectory.jsonl"
    lines = path.read_bytes().split(b"\n")
    for index, line in enumerate(lines):
        if b'"event":"step"' in line:
            t = int(orjson.loads(line)["t"])
            scale = b"1.0000000001" if t != 650 else b"1.001"  # within rtol 1e-6, but t 650
            lines[index] = line.replace(b"1.0}", scale + b"}")
    path.write_bytes(b"\n".join(lines))

    comparison = compare(golden, actual)

    (episode,) = comparison.episodes
    assert episode.differing_records == 1
    assert episode.first is not None
    assert episode.first.t == 650
    assert [d.path for d in episode.first.differences] == [("info", "k" * 650)]
