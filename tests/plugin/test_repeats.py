"""Helpers of the determinism runs: hash seeds, passed-through options, run comparison."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

from gym_goldens import RecordTrajectory, Tolerance, rollout
from gym_goldens.plugin.fresh import passed_through as _passed_through
from gym_goldens.plugin.repeats import Nondeterminism, Run, find_nondeterminism
from gym_goldens.record.fresh import other_hash_seed


@pytest.mark.parametrize(
    ("parent", "number", "seed"),
    [("", 2, 1), ("random", 3, 2), ("0", 2, 1), ("7", 2, 8), ("4294967295", 2, 0)],
)
def test_each_subprocess_hashes_with_another_seed(parent: str, number: int, seed: int) -> None:
    assert other_hash_seed(number - 1, parent) == seed
    if parent.isdigit():
        assert seed != int(parent)


def test_plugin_and_ini_options_are_passed_through() -> None:
    args = [
        "tests",
        "-p",
        "no:randomly",
        "-pxdist",
        "-o",
        "a=1",
        "-ob=2",
        "--override-ini=c=3",
        "-k",
        "x",
        "-v",
    ]
    assert _passed_through(args) == [
        "-p",
        "no:randomly",
        "-pxdist",
        "-o",
        "a=1",
        "-ob=2",
        "--override-ini=c=3",
    ]


def _record(folder: Path, seed: int) -> Path:
    env = RecordTrajectory(gym.make("CartPole-v1"), folder)
    rollout(env, seed=seed, steps=20)
    env.close()
    return folder


def test_runs_that_match_are_not_reported(tmp_path: Path) -> None:
    this = _record(tmp_path / "this", 0)
    runs = [Run(1, "first", {"cart": _record(tmp_path / "one", 0)}), Run(2, "checked")]
    assert find_nondeterminism([("cart", this, Tolerance())], runs) == {}


def test_the_first_run_that_differs_is_reported_with_its_folder(tmp_path: Path) -> None:
    this = _record(tmp_path / "this", 0)
    other = _record(tmp_path / "other", 1)
    runs = [Run(3, "checked"), Run(2, "second", {"cart": other}), Run(1, "first", {"cart": this})]
    found = find_nondeterminism([("cart", this, Tolerance())], runs)
    message, kept = found["cart"].message, found["cart"].other_runs
    assert message is not None
    assert message.startswith("nondeterministic: run 1 vs run 2: ")
    assert "  run 1: first\n  run 2: second\n" in message
    assert kept == (("run-1", this), ("run-2", other))


def test_a_run_without_the_recording_is_reported(tmp_path: Path) -> None:
    this = _record(tmp_path / "this", 0)
    runs = [Run(1, "in a child", {}), Run(2, "checked")]
    message = find_nondeterminism([("cart", this, Tolerance())], runs)["cart"].message
    assert message == (
        "nondeterministic: run 1 did not record 'cart', run 2 did\n"
        "  run 1: in a child\n"
        "  run 2: checked"
    )


def test_a_failed_run_is_reported_once(tmp_path: Path) -> None:
    this = _record(tmp_path / "this", 0)
    runs = [Run(1, "in a child", {}, "its call failed:\n    boom"), Run(2, "checked")]
    found = find_nondeterminism([("a", this, Tolerance()), ("b", this, Tolerance())], runs)
    assert found["a"].message == (
        "nondeterministic: run 1 failed, run 2 passed\n"
        "  run 1: in a child; its call failed:\n"
        "    boom"
    )
    assert found["b"] == Nondeterminism(None)


def _record_scaled(folder: Path, factor: float) -> Path:
    env = gym.make("CartPole-v1")
    scaled = gym.wrappers.TransformObservation(env, lambda obs: obs * factor, env.observation_space)
    recorder = RecordTrajectory(scaled, folder)
    rollout(recorder, seed=0, steps=20)
    recorder.close()
    return folder


def test_exact_runs_that_differ_within_tolerance_say_so(tmp_path: Path) -> None:
    this = _record_scaled(tmp_path / "this", 1.0)
    other = _record_scaled(tmp_path / "other", 1.0 + 5e-7)
    runs = [Run(1, "first", {"cart": other}), Run(2, "checked")]
    assert find_nondeterminism([("cart", this, Tolerance())], runs) == {}
    message = find_nondeterminism([("cart", this, Tolerance())], runs, exact=True)["cart"].message
    assert message is not None
    assert (
        "  the runs differ within the test's tolerance, but two recordings on one machine must "
        "agree exactly: obs[0], obs[1], obs[2] and 1 more differ\n"
        "  if obs[0] is no part of the dynamics, leave it out of the comparison with "
        '@pytest.mark.goldens(ignore=["obs[0]"])\n'
    ) in message


def test_exact_runs_keep_the_ignored_fields_out(tmp_path: Path) -> None:
    this = _record_scaled(tmp_path / "this", 1.0)
    other = _record_scaled(tmp_path / "other", 1.0 + 5e-7)
    runs = [Run(1, "first", {"cart": other}), Run(2, "checked")]
    ignored = Tolerance(ignore=("obs",))
    assert find_nondeterminism([("cart", this, ignored)], runs, exact=True) == {}
