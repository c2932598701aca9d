"""PettingZoo envs told apart, named and described, without importing PettingZoo.

The recorders, rollouts and the pytest plugin take Gymnasium and PettingZoo
envs alike. They ask :func:`agent_api` which API an env has: the classes of
the env (PettingZoo's ``AECEnv`` and ``ParallelEnv``, which every PettingZoo
env and wrapper derives from) are looked up by module and name, so that
PettingZoo is imported only when one of its envs is recorded or replayed
(:mod:`gym_goldens.record.agent_recorders`), never for a Gymnasium env or at
pytest's start-up.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, Literal

from gym_goldens.format.header import describe_space, platform_facts, recorded_versions

__all__ = [
    "AgentApi",
    "agent_api",
    "agent_env_name",
    "describe_agent_env",
]

AgentApi = Literal["parallel", "aec"]
"""The two APIs of PettingZoo: every agent acts at each step, or one agent at a time."""

_ENV_MODULE: Final = "pettingzoo.utils.env"
_APIS: Final[dict[str, AgentApi]] = {"ParallelEnv": "parallel", "AECEnv": "aec"}
# Where PettingZoo's wrappers keep the env they wrap: BaseWrapper and
# BaseParallelWrapper in env, the conversions between the APIs in aec_env and par_env.
_INNER: Final = ("env", "aec_env", "par_env")


def agent_api(env: object) -> AgentApi | None:
    """``"parallel"`` or ``"aec"`` for a PettingZoo env (or wrapper); None for anything else.

    Example:
        >>> import gymnasium as gym
        >>> agent_api(gym.make("CartPole-v1")) is None
        True
    """
    for kind in type(env).__mro__:
        if kind.__module__ == _ENV_MODULE and kind.__name__ in _APIS:
            return _APIS[kind.__name__]
    return None


def agent_env_name(env: Any) -> str:
    """The name of a PettingZoo env: ``metadata["name"]`` (``rps_v2``), else its class name."""
    metadata = getattr(env, "metadata", None)
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if isinstance(name, str) and name.strip():
        return name
    return type(getattr(env, "unwrapped", env)).__name__


def describe_agent_env(env: Any, *, versions_of: Iterable[str] = ()) -> dict[str, Any]:
    """The parts of a multi-agent recording's header that do not change between episodes.

    ``agent_api``, ``possible_agents`` and each agent's spaces are compared;
    ``env``, ``wrappers``, ``versions`` and ``platform`` are informational.

    Args:
        env: A PettingZoo env or wrapper (see :func:`agent_api`).
        versions_of: As for :func:`~gym_goldens.format.header.describe_env`.
    """
    agents = list(env.possible_agents)
    unwrapped = getattr(env, "unwrapped", env)
    return {
        "env": {
            "id": None,
            "name": agent_env_name(env),
            "class": f"{type(unwrapped).__module__}.{type(unwrapped).__qualname__}",
        },
        "wrappers": _wrappers(env),
        "agent_api": agent_api(env),
        "possible_agents": agents,
        "observation_spaces": {
            agent: describe_space(env.observation_space(agent)) for agent in agents
        },
        "action_spaces": {agent: describe_space(env.action_space(agent)) for agent in agents},
        "versions": recorded_versions(env, versions_of),
        "platform": platform_facts(),
    }


def _wrappers(env: Any) -> list[str]:
    """The class names of the wrapper stack, outermost first."""
    names: list[str] = []
    inner: Any = env
    while True:
        # The instance's own attributes only: PettingZoo's wrappers forward
        # any other name to the env they wrap.
        attributes = vars(inner) if hasattr(inner, "__dict__") else {}
        wrapped = next(
            (attributes[name] for name in _INNER if agent_api(attributes.get(name)) is not None),
            None,
        )
        if wrapped is None or len(names) > 100:
            return names
        names.append(type(inner).__name__)
        inner = wrapped
