"""Plain runs against goldens: mismatch, tiny changes, missing and corrupt goldens."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

GOLDEN = Path("goldens/test_cp/test_cartpole/CartPole-v1")


def _message_lines(result: pytest.RunResult) -> list[str]:
    """The failure text of the only failing test, as printed."""
    out = result.stdout.lines
    start = next(i for i, line in enumerate(out) if line.startswith("golden "))
    end = next(i for i in range(start, len(out)) if out[i].startswith(("---", "===")))
    return out[start:end]


def test_perturbed_cartpole_fails_in_the_call_phase_with_the_message(
    pytester: pytest.Pytester, cartpole_test: Callable[..., Path]
) -> None:
    cartpole_test()
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    cartpole_test(gravity=9.81)

    reprec = pytester.inline_run()
    reprec.assertoutcome(failed=1)
    (failure,) = reprec.getfailures()
    assert failure.when == "call"  # an assertion failure of the test, not a teardown error
    assert failure.longrepr is not None

    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    lines = _message_lines(result)
    golden_file = GOLDEN / "trajectory.jsonl"
    # file:line of the first differing record: the reset is line 2, step t is line t + 2.
    step = re.fullmatch(r"  first divergence: episode 0, step t=(\d+), .*", lines[2])
    assert step is not None, lines
    assert lines[0] == f"golden mismatch: {golden_file}:{int(step.group(1)) + 2}"
    assert lines[1] == "  mode: recorded (the test's own actions)"
    del lines[1]
    assert re.fullmatch(r"  first divergence: episode 0, step t=(\d+), obs\[\d\]", lines[1]), lines
    match = re.fullmatch(
        r"    golden (\S+)  actual (\S+)  \|diff\| (\S+) > tol (\S+) \(rtol 1e-06, atol 1e-12\)",
        lines[2],
    )
    assert match, lines
    golden, actual, diff, tol = (float(g) for g in match.groups())
    assert golden != actual
    assert diff == pytest.approx(abs(actual - golden), rel=0.1)
    assert tol == pytest.approx(1e-12 + 1e-6 * abs(golden), rel=0.1)
    assert diff > tol
    counts = next(line for line in lines if "steps differing" in line)
    assert re.fullmatch(
        r"  steps differing: \d+ of \d+ \(from t=\d+\); "
        r"episode length \d+ vs \d+ \(golden vs actual\)",
        counts,
    ), counts
    actual_line = next(line for line in lines if line.startswith("  actual recording: "))
    actual_dir = Path(actual_line.removeprefix("  actual recording: "))
    assert actual_dir.name == "CartPole-v1"
    assert (actual_dir / "trajectory.jsonl").is_file()  # there to inspect or copy
    assert lines[-1] == '  update with: pytest --update-goldens "test_cp.py::test_cartpole"'
    result.stdout.fnmatch_lines(["goldens: 1 mismatched"])
    # The message is the whole report: no traceback into the plugin.
    result.stdout.no_fnmatch_line("*gym_goldens/*.py*")


def test_relative_change_of_1e_9_passes_by_default_and_fails_exactly(
    pytester: pytest.Pytester, scaled_test: Callable[..., Path]
) -> None:
    scaled_test(1.0)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    scaled_test(1 + 1e-9)
    pytester.runpytest().assert_outcomes(passed=1)

    scaled_test(1 + 1e-9, kwargs=", rtol=0, atol=0")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    lines = _message_lines(result)
    assert lines[1] == "  mode: recorded (the test's own actions)"
    del lines[1]
    assert lines[1] == "  first divergence: episode 0, reset, obs[0]"
    assert "(rtol 0, atol 0)" in lines[2]
    assert any(line.startswith("  reset record differs; steps differing: ") for line in lines)

    scaled_test(1 + 1e-9, marker="@pytest.mark.goldens(rtol=0, atol=0)")
    pytester.runpytest().assert_outcomes(failed=1)


def test_missing_golden_fails_with_the_path_and_writes_nothing(
    pytester: pytest.Pytester, cartpole_test: Callable[..., Path]
) -> None:
    cartpole_test()
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"golden missing: {GOLDEN}",
            "  no golden has been recorded for this trajectory yet",
            "  actual recording: */CartPole-v1",
            '  create it with: pytest --update-goldens "test_cp.py::test_cartpole"',
        ]
    )
    result.stdout.fnmatch_lines(
        ["goldens: 1 missing", "  record the missing goldens with: pytest --update-goldens"]
    )
    assert not (pytester.path / "goldens").exists()


def test_golden_folder_without_episodes_counts_as_missing(
    pytester: pytest.Pytester, cartpole_test: Callable[..., Path]
) -> None:
    cartpole_test()
    (pytester.path / GOLDEN).mkdir(parents=True)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"golden missing: {GOLDEN}"])
    assert list((pytester.path / GOLDEN).iterdir()) == []


@pytest.mark.parametrize(
    ("corrupt", "line", "reason"),
    [
        (lambda lines: lines.__setitem__(4, b"{not json"), 5, "invalid JSON"),
        (lambda lines: lines.__setitem__(-1, lines[-1][:25]), None, "invalid JSON"),
        (lambda lines: lines.__setitem__(2, b'{"event": "jump"}'), 3, 'expected "event" to be'),
        (lambda lines: lines.__setitem__(0, b"[1, 2, 3]"), 1, "expected a JSON object"),
    ],
    ids=["invalid-json", "truncated", "wrong-event", "wrong-structure"],
)
def test_corrupt_golden_fails_naming_file_and_line_and_stays(
    pytester: pytest.Pytester,
    cartpole_test: Callable[..., Path],
    files_under: Callable[[Path], dict[Path, tuple[bytes, int]]],
    *,
    corrupt: Callable[[list[bytes]], None],
    line: int | None,
    reason: str,
) -> None:
    cartpole_test()
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    path = pytester.path / GOLDEN / "trajectory.jsonl"
    lines = path.read_bytes().splitlines()
    corrupt(lines)
    path.write_bytes(b"\n".join(lines))  # no final newline, as an interrupted write leaves it
    expected_line = line if line is not None else len(lines)
    before = files_under(pytester.path / "goldens")

    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"golden unreadable: {GOLDEN / path.name}:{expected_line}: {reason}*",
            "  the golden file was left as it is",
            "  actual recording: */CartPole-v1",
            '  regenerate it with: pytest --update-goldens "test_cp.py::test_cartpole"',
        ]
    )
    result.stdout.no_fnmatch_line("*Traceback*")
    assert files_under(pytester.path / "goldens") == before


EPISODE_STATISTICS_TEST = """
import gymnasium as gym
import pytest
from gymnasium.wrappers import RecordEpisodeStatistics
from gymnasium.wrappers.vector import RecordEpisodeStatistics as RecordVectorStatistics

IGNORE = {ignore}


@pytest.mark.goldens(ignore=IGNORE)
def test_single(record_trajectory):
    env = record_trajectory(RecordEpisodeStatistics(gym.make("CartPole-v1")))
    env.action_space.seed(0)
    env.reset(seed=0)
    for _ in range(60):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()


@pytest.mark.goldens(ignore=IGNORE)
def test_vector(record_trajectory):
    envs = record_trajectory(RecordVectorStatistics(gym.make_vec("CartPole-v1", 2)))
    envs.action_space.seed(0)
    envs.reset(seed=0)
    for _ in range(60):
        envs.step(envs.action_space.sample())


@pytest.mark.goldens(ignore=IGNORE)
def test_wrapped_sub_envs(record_trajectory):
    make = lambda: RecordEpisodeStatistics(gym.make("CartPole-v1"))
    envs = record_trajectory(gym.vector.SyncVectorEnv([make, make]), "cartpoles")
    envs.action_space.seed(0)
    envs.reset(seed=0)
    for _ in range(60):
        envs.step(envs.action_space.sample())
"""


def test_wall_clock_time_of_episode_statistics_is_named_with_the_fix(
    pytester: pytest.Pytester,
) -> None:
    # RecordEpisodeStatistics puts the episode's wall-clock time in info.episode.t:
    # different on every run, so the usual fix, an update, cannot help.
    pytester.makepyfile(test_stats=EPISODE_STATISTICS_TEST.format(ignore="[]"))
    # Recorded once: recorded twice, as updates are, the clock would not be written at all.
    pytester.runpytest("--update-goldens", "--update-goldens-once").assert_outcomes(passed=3)
    result = pytester.runpytest()
    result.assert_outcomes(failed=3)
    fix = [
        "    it differs on every run and no update makes it match: leave it out with",
        '    @pytest.mark.goldens(ignore=["info.episode.t"])',
    ]
    seen = "  note: info.episode.t is the episode's wall-clock time, added by gymnasium's "
    unseen = "  note: info.episode.t is where gymnasium's RecordEpisodeStatistics puts "
    lines = result.stdout.lines
    notes = [line for i, line in enumerate(lines) if lines[i + 1 : i + 3] == fix]
    # The wrapper is in the header of the single and the vector env; the
    # sub-envs of a SyncVectorEnv are wrapped out of the header's sight.
    assert [note.startswith(seen) for note in notes] == [True, True, False]
    assert notes[2].startswith(unseen)
    # The fix the note gives works for all three.
    pytester.makepyfile(test_stats=EPISODE_STATISTICS_TEST.format(ignore='["info.episode.t"]'))
    pytester.runpytest().assert_outcomes(passed=3)


AT_REST_TEST = """
import gymnasium as gym
import numpy as np
import pytest

NOISE = {noise!r}

class AtRest(gym.Env):
    # A body at rest: its velocity is exactly 0.0, and a solver adds noise to it.
    observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([1.0, 0.0]), {{}}

    def step(self, action):
        self.t += 1
        noise = NOISE * (1 + (self.t % 3))
        return np.array([1.0 + self.t, noise]), 0.0, False, self.t >= 20, {{}}

{marker}
def test_at_rest(record_trajectory):
    env = record_trajectory(AtRest(), "at-rest")
    env.reset(seed=0)
    for _ in range(20):
        env.step(0)
"""


def test_noise_at_zero_says_only_atol_applies_and_suggests_an_atol_that_works(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_rest=AT_REST_TEST.format(noise=0.0, marker=""))
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    pytester.makepyfile(test_rest=AT_REST_TEST.format(noise=1e-9, marker=""))
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "  first divergence: episode 0, step t=1, obs[1]",
            "    golden 0.0  actual 2e-09  |diff| 2.0e-09 > tol 1.0e-12 (rtol 1e-06, atol 1e-12); "
            "the golden is 0.0 here, so only atol applies",
            "  suggested tolerance, from this record alone (judge it; it is not a fix): "
            '@pytest.mark.goldens(atol={"obs": 1e-08})',
        ]
    )
    suggested = '@pytest.mark.goldens(atol={"obs": 1e-08})'
    pytester.makepyfile(test_rest=AT_REST_TEST.format(noise=1e-9, marker=suggested))
    pytester.runpytest().assert_outcomes(passed=1)


DOCK_TEST = """
import gymnasium as gym
import numpy as np
import pytest

KEY, REWARD, TURN = {key!r}, {reward!r}, {turn!r}


class DockEnv(gym.Env):
    # A boat going to its dock; info says how far it is, as a numpy float.
    observation_space = gym.spaces.Box(-10.0, 10.0, (2,), np.float64)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.x = 1.0
        return np.array([self.x, 1.0]), {{KEY: np.float64(self.x / 2)}}

    def step(self, action):
        self.x += 0.25 if action else -0.125
        info = {{KEY: np.float64(abs(self.x) / 2)}}
        return np.array([self.x, 1.0]), REWARD, False, False, info

{marker}
def test_dock(record_trajectory):
    env = record_trajectory(DockEnv(), "dock")
    env.reset(seed=0)
    for t in range(10):
        env.step(int(t % 2 == 0) if t != TURN else int(t % 2 != 0))
"""


def _dock(
    pytester: pytest.Pytester, *, key: str = "dist_to_dock", reward: float = 0.99, turn: int = -1
) -> None:
    pytester.makepyfile(test_dock=DOCK_TEST.format(key=key, reward=reward, turn=turn, marker=""))


def test_a_renamed_info_key_of_a_numpy_value_is_named_as_removed_and_added(
    pytester: pytest.Pytester,
) -> None:
    _dock(pytester)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    _dock(pytester, key="distance_to_dock")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "  first divergence: episode 0, reset, info.dist_to_dock",
            "    golden 0.5 (float64), missing from the actual recording",
            "    also differ there: info.distance_to_dock (not in the golden)",
        ]
    )
    result.stdout.no_fnmatch_line("*numpy type changed*")


def test_a_doubled_reward_is_called_a_change_and_gets_no_tolerance(
    pytester: pytest.Pytester,
) -> None:
    _dock(pytester, reward=0.99)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    _dock(pytester, reward=1.99)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "  first divergence: episode 0, step t=1, reward",
            "  no tolerance suggested: reward 0.99 -> 1.99 is a change, not numerical noise",
            "    (noise: a float of obs, reward or info within 0.1% of the golden, or within 1e-06 "
            "of it near zero)",
        ]
    )
    result.stdout.no_fnmatch_line("*suggested tolerance*")
    result.stdout.no_fnmatch_line("*@pytest.mark.goldens(*")


def test_a_changed_action_is_called_a_change_and_gets_no_tolerance(
    pytester: pytest.Pytester,
) -> None:
    _dock(pytester)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    _dock(pytester, turn=3)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "  first divergence: episode 0, step t=4, action",
            "    golden 0  actual 1",
            "    also differ there: obs[[]0], info.dist_to_dock",
            "  no tolerance suggested: action 0 -> 1 is a change, not numerical noise",
            "    (noise: *)",
        ]
    )
    result.stdout.no_fnmatch_line("*suggested tolerance*")
