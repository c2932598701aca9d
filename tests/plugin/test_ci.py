"""Running in CI: --update-goldens with CI set warns in the summary."""

from __future__ import annotations

from pathlib import Path

import pytest

TEST = """
import gymnasium as gym
from gym_goldens import rollout

def test_cartpole(record_trajectory):
    rollout(record_trajectory(gym.make("CartPole-v1")), seed=0, steps=10)
"""

WARNING = (
    "warning: --update-goldens ran with CI set: goldens written in CI are usually a mistake; "
    "regenerate them locally, review the diff and commit it"
)


@pytest.mark.parametrize("value", ["true", "1", "yes"])
def test_update_in_ci_warns(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("CI", value)
    pytester.makepyfile(TEST)
    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["goldens: 1 created", "*created: *", WARNING])


@pytest.mark.parametrize("value", [None, "", "false", "0"])
def test_no_warning_outside_ci(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    pytester.makepyfile(TEST)
    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*--update-goldens ran with CI set*")


def test_checking_in_ci_does_not_warn(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(TEST)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*--update-goldens ran with CI set*")


ROOT = Path(__file__).parent.parent.parent
WORKFLOW = ROOT / "examples" / "ci" / "github-actions.yml"


def _workflow_pytest_options() -> list[str]:
    text = WORKFLOW.read_text()
    command = text[text.index("python -m pytest") : text.index("- name: Upload")]
    return command.split()[3:]


def test_the_readme_shows_the_example_workflow() -> None:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("```yaml\nname: goldens\n") + len("```yaml\n")
    shown = readme[start : readme.index("```", start)]
    example = WORKFLOW.read_text()
    assert example.endswith(shown)
    assert all(line.startswith("#") or not line for line in example[: -len(shown)].splitlines())


def test_the_workflow_command_passes_on_deterministic_goldens(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(TEST)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    options = _workflow_pytest_options()
    assert "--goldens-determinism=1" in options
    result = pytester.runpytest(*options)
    assert result.ret == pytest.ExitCode.OK
    assert (pytester.path / "goldens-artifacts" / "junit.xml").is_file()
    assert [p.name for p in (pytester.path / "goldens-artifacts").iterdir()] == ["junit.xml"]


def test_the_workflow_command_fails_with_exit_code_1_and_keeps_the_recordings(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import gymnasium as gym
        import numpy as np
        from gym_goldens import rollout

        def test_unseeded(record_trajectory):
            env = record_trajectory(gym.make("CartPole-v1"))
            rollout(env, seed=0, steps=40, policy=lambda obs: int(np.random.randint(2)))
        """
    )
    result = pytester.runpytest(*_workflow_pytest_options())
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    kept = (
        pytester.path
        / "goldens-artifacts"
        / "test_the_workflow_command_fails_with_exit_code_1_and_keeps_the_recordings"
    )
    assert (kept / "test_unseeded" / "CartPole-v1" / "report.txt").is_file()
