"""The records of multi-agent envs: which agent a field belongs to, when an episode ended.

A recording of a PettingZoo env (see :mod:`gym_goldens.record.multiagent`)
keeps the record fields of a single env and keys the values of each by
agent: ``obs``, ``action``, ``reward``, ``terminated``, ``truncated`` and
``info`` are objects of one entry per agent (every acting agent of a
parallel env's step; the one acting agent of an AEC env's step), so the
field path of an agent's value names the agent second::

    obs.agent_2[0]              # agent_2's first observation element
    info.agent_1.winner         # an info key of agent_1
    dtypes.obs.agent_2          # the numpy type of agent_2's observation

Field patterns (tolerances, ``ignore``, ``max_array_size``) therefore
address agents as they address any key: ``ignore=["info.agent_1.*"]``,
``rtol={"obs.agent_2": 1e-4}``, ``ignore=["*.agent_3"]``. The header names
the agents in ``possible_agents``, which tells an agent's key from any other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from gym_goldens.format.fields import FieldPath

__all__ = ["AGENT_FIELDS", "agent_of", "episode_ended"]

AGENT_FIELDS: Final = frozenset({"obs", "action", "reward", "terminated", "truncated", "info"})
"""The record fields whose values a multi-agent record keys by agent."""


def agent_of(path: FieldPath, header: Mapping[str, Any] | None) -> str | None:
    """The agent a field of a multi-agent record belongs to; None for other fields and envs.

    Args:
        path: A field path, such as ``("obs", "agent_2", 0)`` (or the same
            path under ``dtypes``).
        header: The header of the episode; its ``possible_agents`` names the
            agents (as the keys are written: an agent id that is not a
            string, such as an int, as its text).

    Example:
        >>> agent_of(("obs", "agent_2", 0), {"possible_agents": ["agent_1", "agent_2"]})
        'agent_2'
        >>> agent_of(("obs", "position", 0), {"observation_space": {}}) is None
        True
    """
    if path[:1] == ("dtypes",):
        path = path[1:]
    if header is None or len(path) < 2 or path[0] not in AGENT_FIELDS:
        return None
    agents = header.get("possible_agents")
    if not isinstance(agents, list):
        return None
    key = path[1]
    written = {agent if isinstance(agent, str) else str(agent) for agent in agents}
    return key if isinstance(key, str) and key in written else None


def episode_ended(record: Mapping[str, Any]) -> bool:
    """Whether a step record ends its episode.

    A single env's episode ends at a step that terminated or truncated. A
    multi-agent env's (whose ``terminated`` is an object by agent) ends when
    no agent is left: its last step records ``"agents": []``.

    Example:
        >>> episode_ended({"terminated": False, "truncated": True})
        True
        >>> episode_ended({"terminated": {"a": True}, "truncated": {"a": False}})
        False
        >>> episode_ended({"terminated": {"a": True}, "truncated": {"a": False}, "agents": []})
        True
    """
    terminated = record.get("terminated")
    if isinstance(terminated, dict):
        return record.get("agents") == []
    return bool(terminated or record.get("truncated"))
