"""What the plugin writes beside the goldens never goes through a planted link or falls over.

``--goldens-report=DIR`` and ``--goldens-artifacts=DIR`` write into folders a
pull request can fill in advance: with a link where a temporary file will be
created, a file where a folder should be, a folder where ``index.html``
should be. None is followed or written through, and none turns into a
traceback: the session says what it could not write, and the failure text
of the mismatch stays whole.
"""

from __future__ import annotations

import os

import pytest

import gym_goldens.comparison.engine
import gym_goldens.plugin.check
import gym_goldens.plugin.htmlreport
import gym_goldens.present.report  # noqa: F401

TESTS = """
import os

import gymnasium as gym
from gym_goldens import rollout


def test_cartpole(record_trajectory):
    env = record_trajectory(gym.make("CartPole-v1"))
    rollout(env, seed=int(os.environ.get("SEED", "0")), steps=10)
"""


@pytest.fixture
def drifted(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """One test whose golden no longer matches."""
    pytester.makepyfile(test_envs=TESTS)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    monkeypatch.setenv("SEED", "3")
    return pytester


def assert_no_traceback(result: pytest.RunResult) -> None:
    text = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in text
    assert "Traceback" not in text
    assert "gym_goldens/" not in text


def test_the_report_never_writes_through_a_planted_temporary_file(
    drifted: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # The name the report's temporary file had: a pull request can commit a
    # link by that name for every process id (pytester runs in this process).
    victim = tmp_path_factory.mktemp("outside") / "victim.txt"
    victim.write_text("keep me")
    report = drifted.path / "rep"
    report.mkdir()
    (report / f".index.html.{os.getpid()}.tmp").symlink_to(victim)

    result = drifted.runpytest("--goldens-report=rep")

    result.assert_outcomes(failed=1)
    assert victim.read_text() == "keep me"
    assert (report / "index.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert not (report / "index.html").is_symlink()


def test_a_folder_where_the_report_goes_is_a_clean_note(drifted: pytest.Pytester) -> None:
    (drifted.path / "rep" / "index.html").mkdir(parents=True)

    result = drifted.runpytest("--goldens-report=rep")

    result.assert_outcomes(failed=1)
    assert_no_traceback(result)
    result.stdout.fnmatch_lines(
        [
            "golden mismatch: goldens/test_envs/test_cartpole/CartPole-v1/trajectory.jsonl:*",
            "*gym-goldens report not written: rep/index.html: *",
        ]
    )


@pytest.mark.parametrize("in_the_way", ["test_envs", "test_envs/test_cartpole/CartPole-v1"])
def test_a_file_where_an_artifact_folder_goes_is_a_clean_note(
    drifted: pytest.Pytester, in_the_way: str
) -> None:
    blocker = drifted.path / "out" / in_the_way
    blocker.parent.mkdir(parents=True)
    blocker.write_text("a file, not a folder")

    result = drifted.runpytest("--goldens-artifacts=out")

    result.assert_outcomes(failed=1)
    assert_no_traceback(result)
    result.stdout.fnmatch_lines(
        [
            "golden mismatch: goldens/test_envs/test_cartpole/CartPole-v1/trajectory.jsonl:*",
            "*first divergence: *",
            f"*artifacts not saved: out/{in_the_way}: expected a folder, found a file*",
        ]
    )
    assert blocker.read_text() == "a file, not a folder"
