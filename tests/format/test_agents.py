"""Multi-agent records: the agent of a field path, the end of an episode, agent patterns."""

from __future__ import annotations

from pathlib import Path

import pytest

from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.format.agents import agent_of, episode_ended
from gym_goldens.format.fields import parse_pattern

HEADER = {"possible_agents": ["agent_0", "agent_2", 7]}


@pytest.mark.parametrize(
    ("path", "agent"),
    [
        (("obs", "agent_2", 0), "agent_2"),
        (("info", "agent_0", "winner"), "agent_0"),
        (("dtypes", "obs", "agent_2"), "agent_2"),
        (("reward", "7"), "7"),  # an int agent id, as its key is written
        (("obs", "position", 0), None),  # a dict observation's key, not an agent
        (("agent",), None),
        (("t",), None),
    ],
)
def test_the_agent_of_a_field_path(path: tuple[str | int, ...], agent: str | None) -> None:
    assert agent_of(path, HEADER) == agent


def test_a_single_envs_fields_belong_to_no_agent() -> None:
    assert agent_of(("obs", "agent_2", 0), {"observation_space": {}}) is None
    assert agent_of(("obs", "agent_2", 0), None) is None


def test_a_multi_agent_episode_ends_when_no_agent_is_left() -> None:
    flags = {"terminated": {"a": True, "b": True}, "truncated": {"a": False, "b": False}}
    assert not episode_ended(flags)  # the last agent's None step has not been recorded
    assert episode_ended({**flags, "agents": []})
    assert not episode_ended({**flags, "agents": ["b"]})
    assert episode_ended({"terminated": True, "truncated": False})
    assert not episode_ended({"terminated": False, "truncated": False})


def test_patterns_name_agents_and_the_agent_fields() -> None:
    assert parse_pattern("info.agent_1.*") == ("info", "agent_1", "*")
    assert parse_pattern("agents") == ("agents",)
    assert parse_pattern("agent") == ("agent",)
    Tolerance().refine(rtol={"obs.agent_2": 1e-3}, ignore=["agents", "info.agent_1.*"])


def test_every_field_of_a_multi_agent_recording_is_documented(tmp_path: Path) -> None:
    pytest.importorskip("pettingzoo", reason="pettingzoo is not installed: pip install pettingzoo")
    from gym_goldens import read_recording, rollout
    from gym_goldens.record.agent_recorders import record_agents
    from tests.support.agent_envs import Drifters

    text = (Path(__file__).parents[2] / "docs" / "format.md").read_text()
    section = text[text.index("### Multi-agent envs") :]
    fields: set[str] = set()
    for env in (Drifters(), _aec_env()):
        recorder = record_agents(env, tmp_path / type(env).__name__)
        rollout(recorder, seed=0, steps=10)
        recorder.close()
        for episode in read_recording(tmp_path / type(env).__name__):
            fields |= set(episode.header or {})
            for record in episode.records:
                fields |= set(record)
    assert not [field for field in sorted(fields) if f"`{field}`" not in text]
    for field in ("agent_api", "possible_agents", "observation_spaces", "agents", "agent"):
        assert f"`{field}`" in section


def _aec_env() -> object:
    from pettingzoo.utils.conversions import parallel_to_aec

    from tests.support.agent_envs import Drifters

    return parallel_to_aec(Drifters(join_at=None))
