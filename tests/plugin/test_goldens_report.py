"""--goldens-report=DIR: one HTML page with every mismatch, in and out of xdist."""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

import pytest

from tests.support.suites import CONTROLLED_CARTPOLE_TEST

SUITE = (
    CONTROLLED_CARTPOLE_TEST.replace("{steps}", "30")
    + """
import numpy as np
import pytest

@pytest.mark.parametrize("label", ["<b>&co"])
def test_pendulum(record_trajectory, label):
    env = gym.make("Pendulum-v1")
    env.unwrapped.g = GRAVITY
    env = record_trajectory(env)
    env.reset(seed=1)
    for t in range(30):
        env.step(np.array([np.sin(t / 5)], dtype=np.float32))

def test_lake(record_trajectory):
    env = record_trajectory(gym.make("FrozenLake-v1"))
    env.reset(seed=0)
    env.step(1)
"""
)

NEW_TEST = """
import gymnasium as gym

def test_new(record_trajectory):
    env = record_trajectory(gym.make("MountainCar-v0"))
    env.reset(seed=0)
    env.step(2)
"""


@pytest.fixture
def drifted(pytester: pytest.Pytester) -> pytest.Pytester:
    """A suite whose goldens were recorded with other dynamics, and one test without a golden."""
    pytester.makepyfile(test_envs=SUITE.format(gravity="9.8"))
    pytester.runpytest("--update-goldens").assert_outcomes(passed=3)
    pytester.makepyfile(test_envs=SUITE.format(gravity="10.5"), test_new=NEW_TEST)
    return pytester


def sections(page: str) -> dict[str, str]:
    found = re.findall(r'<section id="m\d+">(.*?)</section>', page, re.DOTALL)
    return {html.unescape(re.search(r'<a href="#m\d+">(.*?)</a>', s).group(1)): s for s in found}  # type: ignore[union-attr]


def embedded_pngs(section: str) -> list[bytes]:
    return [
        base64.b64decode(data)
        for data in re.findall(r'src="data:image/png;base64,([^"]+)"', section)
    ]


def check_page(path: Path) -> None:
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>gym-goldens: 3 golden mismatches</title>" in page
    assert "4 tests ran" in page
    found = sections(page)
    assert list(found) == [
        "test_envs.py::test_cartpole",
        "test_envs.py::test_pendulum[<b>&co]",
        "test_new.py::test_new",
    ]
    cartpole = found["test_envs.py::test_cartpole"]
    assert "first divergence: episode 0, step t=1, obs[1]" in cartpole
    assert "<dd>goldens/test_envs/test_cartpole/CartPole-v1</dd>" in cartpole
    (png,) = embedded_pngs(cartpole)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(png) > 10_000
    pendulum = found["test_envs.py::test_pendulum[<b>&co]"]
    assert "test_pendulum[&lt;b&gt;&amp;co]" in pendulum  # escaped, never markup
    assert "<b>&co" not in page
    assert len(embedded_pngs(pendulum)) == 1
    missing = found["test_new.py::test_new"]
    assert '<span class="status missing">missing</span>' in missing
    assert "golden missing: goldens/test_new/test_new/MountainCar-v0" in missing
    assert embedded_pngs(missing) == []
    # Self-contained: no script, no link to another file.
    assert not re.search(r"<script|<link|src=\"(?!data:)", page)


def test_the_report_holds_every_mismatch_with_its_plot(drifted: pytest.Pytester) -> None:
    result = drifted.runpytest("--goldens-report=report")
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines(["*- gym-goldens report: report/index.html -*"])
    check_page(drifted.path / "report" / "index.html")


def test_the_report_gathers_mismatches_from_xdist_workers(drifted: pytest.Pytester) -> None:
    result = drifted.runpytest("--goldens-report=report", "-n", "2")
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines(["*- gym-goldens report: report/index.html -*"])
    check_page(drifted.path / "report" / "index.html")
    assert [p.name for p in (drifted.path / "report").iterdir()] == ["index.html"]


def test_when_everything_matches_the_report_says_so(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_envs=SUITE.format(gravity="9.8"))
    pytester.runpytest("--update-goldens").assert_outcomes(passed=3)
    result = pytester.runpytest("--goldens-report", "out/ci")
    result.assert_outcomes(passed=3)
    page = (pytester.path / "out" / "ci" / "index.html").read_text(encoding="utf-8")
    assert "<title>gym-goldens: 0 golden mismatches</title>" in page
    assert "Every recorded trajectory matched its golden." in page
    assert "<section" not in page


def test_no_report_without_the_option(drifted: pytest.Pytester) -> None:
    result = drifted.runpytest()
    result.assert_outcomes(passed=1, failed=3)
    assert not any("gym-goldens report" in line for line in result.outlines)
    assert not list(drifted.path.glob("**/index.html"))
