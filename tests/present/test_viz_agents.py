"""Plots of multi-agent recordings: a panel per agent, holding that agent's fields."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pettingzoo", reason="pettingzoo is not installed: pip install pettingzoo")
pytest.importorskip("matplotlib", reason="matplotlib is not installed: pip install matplotlib")

from gym_goldens import compare, rollout
from gym_goldens.present.viz import MARKER_ID, plot_comparison, plot_divergence, plot_recording
from gym_goldens.record.agent_recorders import record_agents
from tests.support.agent_envs import Drifters


def _record(env: Any, folder: Path) -> Path:
    recorder = record_agents(env, folder)
    rollout(recorder, seed=0, steps=8)
    recorder.close()
    return folder


def _panels(figure: Any) -> dict[str, list[str]]:
    """Each titled axes of a figure: the labels of its lines."""
    return {
        axes.get_title(loc="left"): [
            str(line.get_label()) for line in axes.get_lines() if line.get_gid() != MARKER_ID
        ]
        for axes in figure.axes
        if axes.get_title(loc="left")
    }


def test_a_recording_is_drawn_as_a_panel_per_agent(tmp_path: Path) -> None:
    figure = plot_recording(_record(Drifters(), tmp_path / "golden"))
    panels = _panels(figure)
    assert list(panels) == ["agent_0", "agent_1", "agent_2"]
    # Each agent's own fields, named without the agent.
    assert panels["agent_2"] == ["obs[0]", "obs[1]", "action", "reward"]
    (agent_2,) = [axes for axes in figure.axes if axes.get_title(loc="left") == "agent_2"]
    # agent_2 joins at step 2 (its obs in that step's record), then acts until step 8.
    obs_0 = next(line for line in agent_2.get_lines() if line.get_label() == "obs[0]")
    assert list(obs_0.get_xdata()) == [2, 3, 4, 5, 6, 7, 8]


def test_an_agent_of_a_long_or_odd_name_gets_a_short_escaped_title(tmp_path: Path) -> None:
    folder = _record(Drifters(), tmp_path / "golden")
    trajectory = folder / "trajectory.jsonl"
    long = "z" * 10_000
    text = trajectory.read_text().replace('"agent_0"', f'"{long}"')
    trajectory.write_text(text.replace('"agent_1"', '"ag\\u001b[31m\\nX"'))
    titles = list(_panels(plot_recording(folder)))
    assert titles[1:] == ["ag\\x1b[31m\\nX", "agent_2"]
    assert titles[0].startswith("zzz")
    assert len(titles[0]) <= 48


def test_a_divergence_is_drawn_in_the_panel_of_its_agent(tmp_path: Path) -> None:
    golden = _record(Drifters(), tmp_path / "golden")
    actual = _record(Drifters(agent_2_gain=1.5), tmp_path / "actual")
    figure = plot_divergence(compare(golden, actual))
    assert figure is not None
    # One agent diverges: its values and, below, their difference; no other agent's panel.
    titles = [axes.get_title(loc="left") for axes in figure.axes]
    assert titles == ["agent_2", ""]
    top, bottom = figure.axes
    assert "obs[1] (golden)" in _panels(figure)["agent_2"]
    markers = [line for line in top.get_lines() + bottom.get_lines() if line.get_gid() == MARKER_ID]
    assert [list(line.get_xdata()) for line in markers] == [[3, 3], [3, 3]]
    assert "t=3" in top.get_title(loc="right")


def test_a_comparison_of_every_field_has_a_panel_per_agent_diverging_ones_first(
    tmp_path: Path,
) -> None:
    golden = _record(Drifters(), tmp_path / "golden")
    actual = _record(Drifters(agent_2_gain=1.5), tmp_path / "actual")
    figure = plot_comparison(golden, actual, fields=["obs", "reward"])
    titles = [axes.get_title(loc="left") for axes in figure.axes]
    assert titles == ["agent_2", "", "agent_0", "", "agent_1", ""]
