"""The pytest plugin costs nothing heavy at start-up.

An installed plugin loads in every pytest run of the user's environment, with
or without golden tests, so importing it must not import gymnasium, numpy,
deepdiff or matplotlib. Checked in a fresh interpreter (this one has them).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("gymnasium", "numpy", "deepdiff", "matplotlib", "orjson", "pettingzoo")

_PROBE = """
import sys
import {module}
print(",".join(sorted(name for name in {heavy!r} if name in sys.modules)))
"""


@pytest.mark.parametrize("module", ["gym_goldens", "gym_goldens.pytest_plugin"])
def test_importing_the_plugin_loads_nothing_heavy(module: str) -> None:
    probe = _PROBE.format(module=module, heavy=HEAVY)
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


# Each module pytest loads from a plugin costs more than a plain import: it
# goes through the assertion rewriting hook, which reads its cached bytecode
# ten times slower than the import system.
STARTUP_MODULES = (
    "gym_goldens",
    "gym_goldens.comparison",
    "gym_goldens.comparison.defaults",
    "gym_goldens.format",
    "gym_goldens.format.limits",
    "gym_goldens.plugin",
    "gym_goldens.plugin.session",
    "gym_goldens.plugin.settings",
    "gym_goldens.pytest_plugin",
)


def test_a_pytest_run_without_golden_tests_loads_nothing_heavy(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        f"""
        import sys

        def pytest_sessionfinish(session):
            loaded = sorted(name for name in {HEAVY!r} if name in sys.modules)
            ours = sorted(name for name in sys.modules if name.split(".")[0] == "gym_goldens")
            print("heavy modules:", ",".join(loaded) or "none")
            print("plugin modules:", ",".join(ours))
        """
    )
    pytester.makepyfile("def test_one():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest_subprocess("--collect-only", "-q", "-s")
    result.stdout.fnmatch_lines(
        ["heavy modules: none", f"plugin modules: {','.join(sorted(STARTUP_MODULES))}"]
    )


def test_the_defaults_written_out_for_start_up_are_the_defaults() -> None:
    from gym_goldens.format import codec
    from gym_goldens.plugin import settings
    from gym_goldens.record import frames

    assert settings.DEFAULT_MAX_ARRAY_SIZE == codec.DEFAULT_MAX_ARRAY_SIZE
    assert settings.IMAGES == frames.IMAGES


# Loaded only for what needs them: Pillow for frames, DeepDiff for a
# mismatch's fields, matplotlib for a failure's plot.
ONLY_WHEN_NEEDED = ("PIL", "deepdiff", "matplotlib")


def test_a_passing_golden_test_without_frames_loads_no_image_or_diff_library(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(
        f"""
        import sys

        def pytest_sessionfinish(session):
            loaded = sorted(name for name in {ONLY_WHEN_NEEDED!r} if name in sys.modules)
            print("loaded:", ",".join(loaded) or "none")
        """
    )
    pytester.makepyfile(
        """
        import gymnasium as gym

        def test_cartpole(record_trajectory):
            env = record_trajectory(gym.make("CartPole-v1"))
            env.reset(seed=0)
            for _ in range(20):
                env.step(0)
        """
    )
    pytester.runpytest_subprocess("--update-goldens").assert_outcomes(passed=1)
    result = pytester.runpytest_subprocess("-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*loaded: none"])
