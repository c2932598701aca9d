"""PettingZoo envs under the plugin: goldens of parallel and AEC envs, checked per agent."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import pytest

pytest.importorskip("pettingzoo", reason="pettingzoo is not installed: pip install pettingzoo")

# Imported here, once: pytester drops what its runs import, and pygame (which
# the classic games import) would be imported again at every run.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # PettingZoo 1.27's env modules
    from pettingzoo.classic import connect_four_v3, rps_v2, tictactoe_v3  # noqa: F401

import gym_goldens.record.multiagent
import gym_goldens.record.multiagent_replay  # noqa: F401

ENVS = Path(__file__).parent.parent / "support" / "agent_envs.py"

PREAMBLE = """
import os
import importlib.util
import warnings

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from pettingzoo.classic import connect_four_v3, rps_v2, tictactoe_v3

from agent_envs import Drifters
from gym_goldens import rollout

SEED = int(os.environ.get("SEED", "0"))
GAIN = float(os.environ.get("GAIN", "1.0"))
SCALE = float(os.environ.get("SCALE", "1.0"))
"""

KINDS = """
def test_rps(record_trajectory):
    rollout(record_trajectory(rps_v2.parallel_env(max_cycles=4)), seed=0, steps=10)

def test_connect_four(record_trajectory):
    rollout(record_trajectory(connect_four_v3.env()), seed=1, steps=30)

def test_tictactoe(record_trajectory):
    rollout(record_trajectory(tictactoe_v3.env()), seed=2, steps=12)

def test_drifters(record_trajectory):
    rollout(record_trajectory(Drifters()), seed=0, steps=12)

def test_drifters_replayed(record_trajectory):
    rollout(record_trajectory(Drifters(), replay=True), seed=SEED, steps=12)

def test_connect_four_replayed(record_trajectory):
    rollout(record_trajectory(connect_four_v3.env(), replay=True), seed=SEED, steps=30)
"""

KNOBS = """
def test_regression(record_trajectory):
    rollout(record_trajectory(Drifters(agent_2_gain=GAIN)), seed=0, steps=6)

@pytest.mark.goldens(ignore=["info.agent_1.*"])
def test_ignored(record_trajectory):
    rollout(record_trajectory(Drifters(agent_1_info_scale=SCALE)), seed=0, steps=6)

@pytest.mark.goldens(rtol={"info.agent_1.distance": 0.5})
def test_tolerated(record_trajectory):
    rollout(record_trajectory(Drifters(agent_1_info_scale=SCALE)), seed=0, steps=6)

def test_strict(record_trajectory):
    rollout(record_trajectory(Drifters(agent_1_info_scale=SCALE)), seed=0, steps=6)

@pytest.mark.goldens(variant_by=["pettingzoo"])
def test_variant(record_trajectory):
    rollout(record_trajectory(Drifters(agent_2_gain=GAIN)), seed=0, steps=6)
"""

GOLDENS = "goldens/test_kinds"


def _project(pytester: pytest.Pytester, name: str, tests: str) -> None:
    pytester.makepyfile(agent_envs=ENVS.read_text(), **{name: PREAMBLE + tests})


def test_goldens_of_every_kind_are_written_checked_replayed_and_kept_tidy(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(pytester, "test_kinds", KINDS)
    # An update runs each test twice in this process: both runs must agree.
    created = pytester.runpytest("--update-goldens")
    created.assert_outcomes(passed=6)
    created.stdout.fnmatch_lines(
        ["goldens: 6 created", f"  created: {GOLDENS}/test_connect_four/connect_four_v3"]
    )
    assert (pytester.path / GOLDENS / "test_rps" / "rps_v2" / "trajectory.jsonl").is_file()
    assert (pytester.path / GOLDENS / "test_drifters" / "drifters_v0").is_dir()

    # Other seeds: the replayed tests take the golden's actions and seeds, and
    # match; a test removed leaves a stale golden. Under xdist, as serially.
    monkeypatch.setenv("SEED", "7")
    pytester.makepyfile(test_kinds=PREAMBLE + KINDS.replace("def test_tictactoe", "def _gone"))
    checked = pytester.runpytest("-n", "2")
    checked.assert_outcomes(passed=5)
    checked.stdout.fnmatch_lines(
        ["stale goldens: 1 *", f"  stale: {GOLDENS}/test_tictactoe/tictactoe_v3"]
    )

    updated = pytester.runpytest("--update-goldens", "--prune-goldens")
    updated.assert_outcomes(passed=5)
    updated.stdout.fnmatch_lines(["goldens: 5 kept", "pruned goldens: 1 stale goldens deleted"])
    assert not (pytester.path / GOLDENS / "test_tictactoe").exists()

    subprocess_runs = pytester.runpytest(
        "--goldens-determinism=1",
        "--goldens-determinism-mode=subprocess",
        "-k",
        "drifters and not replayed",
    )
    subprocess_runs.assert_outcomes(passed=1, deselected=4)


def test_a_change_of_one_agent_fails_naming_the_agent(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(pytester, "test_knobs", KNOBS)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=5)

    # agent_2 moves further per action; agent_1 reports its distance 1% off.
    monkeypatch.setenv("GAIN", "1.5")
    monkeypatch.setenv("SCALE", "1.01")
    result = pytester.runpytest("-k", "not variant")
    result.assert_outcomes(passed=2, failed=2, deselected=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_regression _*",
            "golden mismatch: goldens/test_knobs/test_regression/drifters_v0/trajectory.jsonl:5",
            "  first divergence: episode 0, step t=3, agent agent_2, obs.agent_2[[]1[]]",
            "    golden * actual *",
            "*_ test_strict _*",
            "  first divergence: episode 0, reset, agent agent_1, info.agent_1.distance",
        ]
    )


NOISY = """
MARK
def test_noisy(record_trajectory):
    env = Drifters(agent_2_gain=GAIN, agent_1_info_scale=SCALE)
    rollout(record_trajectory(env), seed=0, steps=6)
"""


def test_the_suggested_tolerance_names_the_agent_and_accepts_that_noise_alone(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(pytester, "test_noisy", NOISY.replace("MARK", ""))
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)

    # agent_2 moves a hair further per action: float noise in agent_2's fields only.
    monkeypatch.setenv("GAIN", "1.00001")
    moved = pytester.runpytest()
    moved.assert_outcomes(failed=1)
    assert _suggested(moved).startswith('@pytest.mark.goldens(rtol={"obs.agent_2": ')

    # agent_1's info is a hair off: the suggestion applied, the test passes.
    monkeypatch.setenv("GAIN", "1.0")
    monkeypatch.setenv("SCALE", "1.00001")
    failed = pytester.runpytest()
    failed.assert_outcomes(failed=1)
    marker = _suggested(failed)
    assert marker == '@pytest.mark.goldens(rtol={"info.agent_1.distance": 0.0001})', marker
    _project(pytester, "test_noisy", NOISY.replace("MARK", marker))
    pytester.runpytest().assert_outcomes(passed=1)

    # A change beyond it fails: agent_1's info further off, or noise in another agent's fields.
    monkeypatch.setenv("SCALE", "1.01")
    further = pytester.runpytest()
    further.assert_outcomes(failed=1)
    further.stdout.fnmatch_lines(["  first divergence: * agent agent_1, info.agent_1.distance"])
    monkeypatch.setenv("SCALE", "1.00001")
    monkeypatch.setenv("GAIN", "1.00001")
    other = pytester.runpytest()
    other.assert_outcomes(failed=1)
    other.stdout.fnmatch_lines(["  first divergence: * agent agent_2, obs.agent_2[[]1[]]"])


def _suggested(result: pytest.RunResult) -> str:
    """The marker a failure suggests."""
    (line,) = [x for x in result.outlines if x.startswith("  suggested tolerance")]
    return line.partition("not a fix): ")[2]


def test_a_variant_golden_is_kept_for_another_pettingzoo_version(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(pytester, "test_knobs", KNOBS)
    pytester.runpytest("--update-goldens", "-k", "variant").assert_outcomes(passed=1, deselected=4)
    plain = pytester.path / "goldens" / "test_knobs" / "test_variant" / "drifters_v0"
    path = plain / "trajectory.jsonl"
    # As if another PettingZoo version had recorded the plain golden.
    path.write_bytes(path.read_bytes().replace(b'"pettingzoo":"', b'"pettingzoo":"0.'))
    monkeypatch.setenv("GAIN", "1.5")
    updated = pytester.runpytest("--update-goldens", "-k", "variant")
    updated.stdout.fnmatch_lines(["goldens: 1 created"])
    (variant,) = [entry.name for entry in plain.iterdir() if entry.is_dir()]
    assert variant.startswith("pettingzoo=")
    pytester.runpytest("-k", "variant").assert_outcomes(passed=1, deselected=4)


ZOO = """
import pytest
from gym_goldens import pettingzoo_envs, rollout

ENVS = pettingzoo_envs("classic/rps_v2", "classic/tictactoe_v3", "classic/chess_v6")

@pytest.mark.parametrize("env_module", ENVS)
def test_classic(record_trajectory, env_module):
    rollout(record_trajectory(env_module.env()), seed=0, steps=10)
"""


def test_pettingzoo_envs_parametrize_golden_tests_and_skip_the_envs_missing_an_extra(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_zoo=ZOO)
    has_chess = importlib.util.find_spec("chess") is not None
    result = pytester.runpytest("--update-goldens", "-rs")
    result.assert_outcomes(passed=3 if has_chess else 2, skipped=0 if has_chess else 1)
    result.stdout.fnmatch_lines(
        [
            "goldens: * created",
            "  created: goldens/test_zoo/test_classic[[]classic%2Frps_v2[]]/rps_v2",
            "  created: goldens/test_zoo/test_classic[[]classic%2Ftictactoe_v3[]]/tictactoe_v3",
        ]
    )
    if not has_chess:
        result.stdout.fnmatch_lines(
            ["SKIPPED [[]1[]] *chess is not installed *pip install 'pettingzoo[[]classic[]]'"]
        )
    checked = pytester.runpytest("--goldens-strict")
    checked.assert_outcomes(passed=3 if has_chess else 2, skipped=0 if has_chess else 1)
    assert "stale" not in checked.stdout.str()


def test_a_golden_action_an_agent_cannot_take_names_its_file_and_line_not_our_code(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester, "test_kinds", KINDS)
    pytester.runpytest("--update-goldens", "-k", "drifters_replayed").assert_outcomes(
        passed=1, deselected=5
    )
    golden = pytester.path / GOLDENS / "test_drifters_replayed" / "drifters_v0" / "trajectory.jsonl"
    lines = golden.read_bytes().split(b"\n")
    # The second episode's first step: agent_0 "moves" left, which Discrete(5) cannot take.
    second = [i for i, line in enumerate(lines) if b'"event":"header"' in line][1]
    step = second + 2
    assert b'"action":{"agent_0":' in lines[step]
    lines[step] = lines[step].replace(b'"action":{"agent_0":', b'"action":{"agent_0":"left","x":')
    golden.write_bytes(b"\n".join(lines))

    result = pytester.runpytest("-k", "drifters_replayed")
    result.assert_outcomes(failed=1, deselected=5)
    result.stdout.fnmatch_lines(
        [
            f"E *GoldenFormatError: */{GOLDENS}/test_drifters_replayed/drifters_v0/"
            f"trajectory.jsonl:{step + 1}: the golden's action of agent 'agent_0' at episode 1, "
            "step t=1 ('left') does not fit the env's action space of that agent: ValueError: *"
        ]
    )
    assert "gym_goldens/" not in result.stdout.str()
