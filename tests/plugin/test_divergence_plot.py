"""On a golden mismatch the plugin plots the diverging fields next to the recording."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.suites import CONTROLLED_CARTPOLE_TEST

CARTPOLE_TEST = CONTROLLED_CARTPOLE_TEST.replace("{steps}", "40")

PHASE_TEST = """
import gymnasium as gym

class PhaseEnv(gym.Env):
    observation_space = gym.spaces.Discrete(3)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return 0, {{}}

    def step(self, action):
        return 1, 0.0, False, False, {{"phase": "{phase}"}}

def test_phase(record_trajectory):
    env = record_trajectory(PhaseEnv(), "phase")
    env.reset(seed=0)
    for _ in range(5):
        env.step(0)
"""


def mismatch(
    pytester: pytest.Pytester, template: str, before: dict[str, str], after: dict[str, str]
) -> pytest.RunResult:
    pytester.makepyfile(test_env=template.format(**before))
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    pytester.makepyfile(test_env=template.format(**after))
    return pytester.runpytest()


def plot_path(result: pytest.RunResult) -> Path:
    (line,) = [line for line in result.outlines if line.strip().startswith("plot: ")]
    return Path(line.split("plot: ", 1)[1])


def test_a_mismatch_writes_a_plot_and_names_it(pytester: pytest.Pytester) -> None:
    result = mismatch(pytester, CARTPOLE_TEST, {"gravity": "9.8"}, {"gravity": "9.81"})
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "golden mismatch: goldens/test_env/test_cartpole/CartPole-v1/trajectory.jsonl*",
            "  first divergence: episode 0, step t=1, obs[1]",
            "  actual recording: */test_cartpole0/CartPole-v1",
            "  plot: */test_cartpole0/CartPole-v1/divergence.png",
            '  update with: pytest --update-goldens "test_env.py::test_cartpole"',
        ]
    )
    path = plot_path(result)
    assert path.parent.name == "CartPole-v1"
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "divergence.png",
        "trajectory.jsonl",
    ]


def test_the_plot_shows_the_divergence(pytester: pytest.Pytester) -> None:
    import matplotlib.image
    import numpy as np

    result = mismatch(pytester, CARTPOLE_TEST, {"gravity": "9.8"}, {"gravity": "12.0"})
    image = matplotlib.image.imread(plot_path(result))[:, :, :3]
    height, width, _ = image.shape
    assert (width, height) > (500, 500)
    red = np.all(np.abs(image - np.array([0xD6, 0x27, 0x28]) / 255) < 0.12, axis=2)
    # The observations part at t=1 of 40: their marker lines sit at the left of the axes.
    columns = np.flatnonzero(red.sum(axis=0) > height * 0.05)
    assert columns.size
    assert columns.min() < width * 0.2
    # Golden (blue) and actual (orange) are both drawn.
    blue = np.all(np.abs(image - np.array([0x1F, 0x77, 0xB4]) / 255) < 0.1, axis=2)
    orange = np.all(np.abs(image - np.array([0xFF, 0x7F, 0x0E]) / 255) < 0.1, axis=2)
    assert blue.sum() > 200
    assert orange.sum() > 200


def test_no_plot_when_no_number_diverges(pytester: pytest.Pytester) -> None:
    result = mismatch(pytester, PHASE_TEST, {"phase": "a"}, {"phase": "b"})
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["  first divergence: episode 0, step t=1, info.phase"])
    assert not any("plot:" in line for line in result.outlines)
    # In-process runs keep their tmp_path folders in <pytester.path>/../basetemp.
    recorded = list(pytester.path.parent.joinpath("basetemp").glob("**/phase/trajectory.jsonl"))
    assert recorded
    assert not list(pytester.path.parent.joinpath("basetemp").glob("**/phase/divergence.png"))


def test_no_plot_for_a_passing_test(pytester: pytest.Pytester) -> None:
    result = mismatch(pytester, CARTPOLE_TEST, {"gravity": "9.8"}, {"gravity": "9.8"})
    result.assert_outcomes(passed=1)
    assert not any("divergence.png" in line for line in result.outlines)


def test_without_matplotlib_the_mismatch_is_reported_as_before(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import sys

        sys.modules["matplotlib"] = None  # as if it were not installed
        """
    )
    pytester.makepyfile(test_env=CARTPOLE_TEST.format(gravity="9.8"))
    pytester.runpytest_subprocess("--update-goldens").assert_outcomes(passed=1)
    pytester.makepyfile(test_env=CARTPOLE_TEST.format(gravity="9.81"))
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "  actual recording: */CartPole-v1",
            '  update with: pytest --update-goldens "test_env.py::test_cartpole"',
        ]
    )
    message = [line for line in result.outlines if line.startswith("  ")]
    assert len(message) >= 5
    assert not any(line.strip().startswith("plot:") for line in message)
    assert not any(
        re.search(r"Traceback|ImportError", line) for line in result.outlines + result.errlines
    )


def test_warnings_while_plotting_stay_out_of_the_run(pytester: pytest.Pytester) -> None:
    # As an older matplotlib does with a newer pyparsing: deprecation warnings
    # while it draws, which a suite run with -W error would turn into errors.
    pytester.makeconftest(
        """
        import warnings

        with warnings.catch_warnings():  # an older matplotlib warns on import
            warnings.simplefilter("ignore")
            from matplotlib.figure import Figure

        drawn = Figure.savefig

        def savefig(self, *args, **kwargs):
            warnings.warn("parseString deprecated", DeprecationWarning)
            return drawn(self, *args, **kwargs)

        Figure.savefig = savefig
        """
    )
    pytester.makepyfile(test_env=CARTPOLE_TEST.format(gravity="9.8"))
    pytester.runpytest_subprocess("--update-goldens").assert_outcomes(passed=1)
    pytester.makepyfile(test_env=CARTPOLE_TEST.format(gravity="9.81"))
    result = pytester.runpytest_subprocess("-W", "error::DeprecationWarning")
    result.assert_outcomes(failed=1)
    assert plot_path(result).is_file()
    assert "not drawn" not in result.stdout.str()
    assert "parseString" not in result.stdout.str()


def test_a_nondeterministic_test_gets_a_plot_of_where_its_runs_part(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        determinism_envs=(
            Path(__file__).parent.parent / "support" / "determinism_envs.py"
        ).read_text(),
        test_noise="""
        from determinism_envs import UnseededNumpyEnv
        from gym_goldens import rollout

        def test_noise(record_trajectory):
            rollout(record_trajectory(UnseededNumpyEnv(), "noisy"), seed=0, steps=20)
        """,
    )
    result = pytester.runpytest("--goldens-determinism=1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["nondeterministic: run 1 vs run 2: *", "  plot: */noisy/divergence.png"]
    )
    assert plot_path(result).is_file()
