"""Tests of tolerance settings and field patterns (``gym_goldens.comparison.tolerance``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from gym_goldens import Tolerance
from gym_goldens.comparison.defaults import DEFAULT_ATOL, DEFAULT_RTOL
from gym_goldens.format.fields import parse_pattern


def _ignored(tolerance: Tolerance, path: Sequence[str | int]) -> bool:
    node = tolerance.tree()
    for segment in path:
        node = node.child(segment)
    return node.ignored


def test_defaults_are_those_of_pytest_approx() -> None:
    assert (DEFAULT_RTOL, DEFAULT_ATOL) == (1e-6, 1e-12)
    assert Tolerance().for_path(("obs", 0)) == (1e-6, 1e-12)
    # The same verdicts as pytest.approx on either side of the bound.
    assert pytest.approx(1.0) == 1.0 + 0.9e-6
    assert pytest.approx(1.0) != 1.0 + 1.1e-6


@pytest.mark.parametrize(
    ("pattern", "segments"),
    [
        ("obs", ("obs",)),
        ("obs[2]", ("obs", 2)),
        ("obs.image", ("obs", "image")),
        ("info.x_velocity", ("info", "x_velocity")),
        ("info.joints[2].angle", ("info", "joints", 2, "angle")),
        ("info.*.time", ("info", "*", "time")),
        ("obs[*]", ("obs", "*")),
        ("*.time", ("*", "time")),
    ],
)
def test_patterns_parse(pattern: str, segments: tuple[str | int, ...]) -> None:
    assert parse_pattern(pattern) == segments


@pytest.mark.parametrize("pattern", ["", "obs[", "obs..x", "[2]", "obs[x]", ".obs", "obs]"])
def test_malformed_patterns_are_refused_with_examples(pattern: str) -> None:
    with pytest.raises(ValueError, match=r"malformed field pattern .*expected something like"):
        parse_pattern(pattern)


def test_pattern_must_start_with_a_record_field() -> None:
    with pytest.raises(ValueError, match=r"'observation' .* not a record field; use one of action"):
        Tolerance.build(rtol={"observation": 1e-3})


def test_most_specific_pattern_wins_whatever_the_order() -> None:
    for rtol in ({"obs": 1e-3, "obs[2]": 1e-9}, {"obs[2]": 1e-9, "obs": 1e-3}):
        tolerance = Tolerance.build(rtol=rtol, atol={"reward": 0.5})
        assert tolerance.for_path(("obs", 2)) == (1e-9, 1e-12)
        assert tolerance.for_path(("obs", 1)) == (1e-3, 1e-12)
        assert tolerance.for_path(("reward",)) == (1e-6, 0.5)
        assert tolerance.for_path(("info", "x")) == (1e-6, 1e-12)


def test_nested_keys_and_wildcards() -> None:
    tolerance = Tolerance.build(
        rtol={"info.*.time": 0.1, "info.arm.time": 0.2, "obs.image": 1e-2, "obs[*]": 1e-4}
    )
    assert tolerance.for_path(("info", "leg", "time")) == (0.1, 1e-12)
    assert tolerance.for_path(("info", "arm", "time")) == (0.2, 1e-12)
    assert tolerance.for_path(("info", "leg", "speed")) == (1e-6, 1e-12)
    assert tolerance.for_path(("obs", "image", 3, 4)) == (1e-2, 1e-12)
    assert tolerance.for_path(("obs", 7)) == (1e-4, 1e-12)


def test_a_wildcard_reaches_keys_that_other_patterns_name() -> None:
    tolerance = Tolerance.build(
        rtol={"info.arm": 1e-3, "info.leg.speed": 1e-2}, ignore=["info.*.time"]
    )
    assert _ignored(tolerance, ("info", "arm", "time"))
    assert _ignored(tolerance, ("info", "leg", "time"))
    assert _ignored(tolerance, ("info", "head", "time"))
    assert not _ignored(tolerance, ("info", "arm", "speed"))
    assert tolerance.for_path(("info", "arm", "speed")) == (1e-3, 1e-12)
    assert tolerance.for_path(("info", "leg", "speed")) == (1e-2, 1e-12)


def test_ignore_covers_the_field_and_everything_below() -> None:
    tolerance = Tolerance.build(ignore=["info.wall_time", "obs[1]"])
    assert _ignored(tolerance, ("info", "wall_time"))
    assert _ignored(tolerance, ("info", "wall_time", "sec"))
    assert _ignored(tolerance, ("obs", 1))
    assert not _ignored(tolerance, ("obs", 0))
    assert not _ignored(tolerance, ("info", "x"))


def test_layering_a_number_replaces_every_field() -> None:
    base = Tolerance.build(rtol={"obs": 1e-3}, atol=1e-9)
    layered = base.refine(rtol=1e-2)
    assert layered.for_path(("obs", 0)) == (1e-2, 1e-9)
    assert layered.field_rtol == {}
    assert base.for_path(("obs", 0)) == (1e-3, 1e-9)  # the base is a value, unchanged


def test_layering_a_mapping_refines_and_keeps_the_rest() -> None:
    base = Tolerance.build(rtol={"obs": 1e-3, "reward": 1e-4}, ignore=["info.a"])
    layered = base.refine(rtol={"obs": 1e-5}, ignore="info.b")
    assert layered.for_path(("obs", 0))[0] == 1e-5
    assert layered.for_path(("reward",))[0] == 1e-4
    assert layered.for_path(("action",))[0] == 1e-6
    assert layered.ignore == ("info.a", "info.b")
    assert layered.refine().ignore == ("info.a", "info.b")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"rtol": -1.0}, ValueError, "rtol must be a non-negative number, got -1.0"),
        ({"atol": math.nan}, ValueError, "atol must be a non-negative number"),
        ({"rtol": "1e-3"}, TypeError, "rtol must be a number or a mapping .* got str '1e-3'"),
        ({"rtol": True}, TypeError, "got bool True"),
        ({"atol": {"obs": -2}}, ValueError, r"atol\['obs'\] must be a non-negative number"),
        ({"rtol": {1: 0.1}}, TypeError, "rtol keys must be field patterns"),
        ({"ignore": ["obs["]}, ValueError, "malformed field pattern"),
    ],
)
def test_bad_settings_say_what_was_expected(
    kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        Tolerance.build(**kwargs)  # type: ignore[arg-type]


def test_describe_lists_every_setting() -> None:
    text = Tolerance.build(rtol={"obs": 1e-4}, atol=0.0, ignore=["info.t"]).describe()
    assert text == "rtol=1e-06, atol=0, rtol[obs]=0.0001, ignore=['info.t']"


def test_tolerance_is_a_frozen_value() -> None:
    assert Tolerance.build(rtol=1e-3) == Tolerance(rtol=1e-3)
    with pytest.raises(AttributeError):
        Tolerance().rtol = 1.0  # type: ignore[misc]
