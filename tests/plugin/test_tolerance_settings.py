"""Tolerances and ignored fields from ini, the ``goldens`` marker and the fixture."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

# The golden is recorded unscaled; the run scales observations by 1 + 1e-4,
# which passes under rtol 2e-4 and fails under rtol 5e-5.
LOOSE, TIGHT = "2e-4", "5e-5"


@pytest.mark.parametrize(
    ("ini", "marker", "fixture", "passes"),
    [
        (LOOSE, None, None, True),
        (TIGHT, None, None, False),
        (LOOSE, TIGHT, None, False),  # the marker overrides ini
        (TIGHT, LOOSE, None, True),
        (TIGHT, LOOSE, TIGHT, False),  # the fixture overrides the marker
        (LOOSE, TIGHT, LOOSE, True),
        (TIGHT, f'{{"obs": {LOOSE}}}', None, True),  # a mapping refines the field it names
        (TIGHT, f'{{"obs": {LOOSE}}}', '{"reward": 1.0}', True),  # ...and keeps the others
        (LOOSE, f'{{"reward": {LOOSE}}}', f'{{"obs": {TIGHT}}}', False),
        (LOOSE, f'{{"obs": {TIGHT}}}', LOOSE, True),  # a number replaces every field
    ],
)
def test_fixture_overrides_marker_overrides_ini(
    pytester: pytest.Pytester,
    scaled_test: Callable[..., Path],
    *,
    ini: str,
    marker: str | None,
    fixture: str | None,
    passes: bool,
) -> None:
    pytester.makeini(f"[pytest]\ngoldens_rtol = {ini}\ngoldens_atol = 0\n")
    scaled_test(1.0)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    scaled_test(
        1 + 1e-4,
        marker=f"@pytest.mark.goldens(rtol={marker})" if marker else "",
        kwargs=f", rtol={fixture}" if fixture else "",
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1 if passes else 0, failed=0 if passes else 1)


ENV_WITH_CLOCK = """
import time

import gymnasium as gym
import pytest

# Time since the run began, not perf_counter() itself: on Linux that counts from
# boot, and 12 hours up it is within rtol=1e-6 of the run before for 45 ms.
STARTED = time.perf_counter()


class WallClock(gym.Wrapper):
    \"\"\"Adds the wall-clock time to info, a value no golden can hold.\"\"\"

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return obs, {{**info, "wall_time": time.perf_counter() - STARTED, "seen": 1}}

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        info = {{**info, "wall_time": time.perf_counter() - STARTED, "seen": {seen}}}
        return obs, reward, terminated, truncated, info


{marker}
def test_clock(record_trajectory):
    env = record_trajectory(WallClock(gym.make("MountainCar-v0")){kwargs})
    env.reset(seed=0)
    for _ in range(20):
        env.step(2)
"""


@pytest.mark.parametrize(
    ("marker", "kwargs"),
    [
        ('@pytest.mark.goldens(ignore=["info.wall_time"])', ""),
        ("", ', ignore=["info.wall_time"]'),
        ('@pytest.mark.goldens(ignore="info.wall_time")', ""),
    ],
    ids=["marker", "fixture", "marker-one-string"],
)
def test_ignored_fields_are_not_compared(
    pytester: pytest.Pytester, marker: str, kwargs: str
) -> None:
    pytester.makepyfile(test_clock=ENV_WITH_CLOCK.format(marker="", kwargs="", seen=1))
    # Recorded once: recorded twice, as updates are, the clock would not be written at all.
    pytester.runpytest("--update-goldens", "--update-goldens-once").assert_outcomes(passed=1)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["  first divergence: episode 0, reset, info.wall_time"])

    pytester.makepyfile(test_clock=ENV_WITH_CLOCK.format(marker=marker, kwargs=kwargs, seen=1))
    pytester.runpytest().assert_outcomes(passed=1)
    # Other info fields are still compared.
    pytester.makepyfile(test_clock=ENV_WITH_CLOCK.format(marker=marker, kwargs=kwargs, seen=2))
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["  first divergence: episode 0, step t=1, info.seen"])


def test_strict_markers_accepts_the_marker(
    pytester: pytest.Pytester, scaled_test: Callable[..., Path]
) -> None:
    scaled_test(marker="@pytest.mark.goldens(rtol=1e-5)")
    result = pytester.runpytest("--strict-markers", "--update-goldens")
    result.assert_outcomes(passed=1)
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.goldens(rtol=None, atol=None, ignore=(), variant_by=(), "
            "update_once=False, images=None, pixel_atol=None, max_diff_pixels=None, "
            "max_diff_pixel_ratio=None):*"
        ]
    )


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("@pytest.mark.goldens(rtol=-1)", "rtol must be a non-negative number, got -1"),
        (
            "@pytest.mark.goldens(tol=1e-3)",
            "got unknown arguments ['tol']; "
            "it takes ['atol', 'ignore', 'images', 'max_diff_pixel_ratio', 'max_diff_pixels', "
            "'pixel_atol', 'rtol', 'update_once', 'variant_by']",
        ),
        (
            '@pytest.mark.goldens(ignore=["observation"])',
            "'observation', which is not a record field",
        ),
    ],
)
def test_bad_marker_arguments_say_what_was_expected(
    pytester: pytest.Pytester, scaled_test: Callable[..., Path], marker: str, message: str
) -> None:
    scaled_test(marker=marker)
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*ERROR at setup of test_scaled*"])
    lines = result.stdout.lines
    error = lines[lines.index(next(line for line in lines if "ERROR at setup" in line)) + 1]
    assert error.startswith("@pytest.mark.goldens")
    assert message in error
    result.stdout.no_fnmatch_line("*During handling*")
    result.stdout.no_fnmatch_line("*gym_goldens/*.py*")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("goldens_rtol = tight", "ini goldens_rtol must be a number, got 'tight'"),
        ("goldens_atol = -1", "ini goldens_atol must be a non-negative number, got '-1'"),
    ],
)
def test_bad_ini_tolerance_is_a_usage_error(
    pytester: pytest.Pytester, line: str, message: str
) -> None:
    pytester.makeini(f"[pytest]\n{line}\n")
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])
