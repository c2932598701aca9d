"""Summaries of multi-agent recordings: each agent's return, and how each episode ended."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pettingzoo", reason="pettingzoo is not installed: pip install pettingzoo")

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # PettingZoo 1.27's env modules
    from pettingzoo.classic import connect_four_v3

from gym_goldens import read_recording, rollout
from gym_goldens.format.reader import Episode
from gym_goldens.present.summary import format_recording, summarize
from gym_goldens.record.agent_recorders import record_agents
from tests.support.agent_envs import Drifters


def _record(env: Any, folder: Path, *, steps: int) -> list[Episode]:
    recorder = record_agents(env, folder)
    rollout(recorder, seed=0, steps=steps)
    recorder.close()
    return list(read_recording(folder))


def _returns(episode: Episode) -> dict[str, float]:
    """Each agent's summed reward, from the records themselves."""
    totals: dict[str, float] = {}
    for record in episode.steps:
        for agent, reward in record["reward"].items():
            totals[agent] = totals.get(agent, 0.0) + reward
    return totals


def test_a_parallel_recording_has_each_agents_return_and_ends_when_no_agent_is_left(
    tmp_path: Path,
) -> None:
    # Drifters: agent_1 leaves (terminated) at cycle 4; the others are truncated at 8.
    episodes = _record(Drifters(), tmp_path, steps=12)
    summary = summarize(tmp_path)
    first, second = summary.episodes
    assert (first.steps, first.ending) == (8, "truncated")
    assert (second.steps, second.ending) == (4, "open")
    for row, episode in zip(summary.episodes, episodes, strict=True):
        expected = _returns(episode)
        assert dict(row.agent_returns) == pytest.approx(expected)
        assert row.total_reward == pytest.approx(sum(expected.values()))
    text = "\n".join(format_recording(summary))
    assert "agents: agent_0, agent_1, agent_2 (parallel)" in text
    header = next(line for line in text.splitlines() if line.split()[:1] == ["episode"])
    assert header.split() == [
        "episode", "steps", "agent_0", "agent_1", "agent_2", "ended", "seed"
    ]  # fmt: skip
    row = next(line for line in text.splitlines() if line.split()[:2] == ["0", "8"])
    assert row.split()[2:5] == [f"{first.agent_returns[i][1]:.6g}" for i in range(3)]


def test_an_aec_recording_ends_as_its_last_acting_agent_did(tmp_path: Path) -> None:
    episodes = _record(connect_four_v3.env(), tmp_path, steps=30)
    summary = summarize(tmp_path)
    first = summary.episodes[0]
    assert episodes[0].complete
    assert not episodes[-1].complete
    assert first.ending == "terminated"
    assert summary.episodes[-1].ending == "open"
    # A game of connect four: one player won (1), the other lost (-1).
    assert sorted(value for _, value in first.agent_returns) == [-1, 1]
    assert dict(first.agent_returns) == _returns(episodes[0])
    assert "agents: player_0, player_1 (AEC)" in "\n".join(format_recording(summary))
