"""The lean path of parallel steps: every line as the careful encoder writes it.

A parallel step whose agents and numpy types are those of the step before
is written without working out its types (see
:meth:`gym_goldens.record.writer.EpisodeWriter.lean_step_record`). These
tests drive a scripted ``ParallelEnv`` through runs of such steps, broken
by the changes the lean path must leave to the full one (an agent's dtype
or shape, an agent that joins or leaves, flags that are not booleans, a
NaN, a None, a ``$`` key, an info that gains a key), and hold each step
line to the careful encoding of the record the format describes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pettingzoo", reason="pettingzoo is not installed: pip install pettingzoo")

from gymnasium import spaces
from pettingzoo import ParallelEnv

from gym_goldens.format import dtypes
from gym_goldens.format.codec import Encoder
from gym_goldens.record.multiagent import RecordParallelTrajectory

_AGENTS = ("a", "b", "$c")
# What a step may change: most steps change nothing, so that runs of lean steps form.
_CHANGES = (
    *["none"] * 40,
    "dtype",
    "shape",
    "scalar obs",
    "leave",
    "join",
    "nan",
    "none reward",
    "float32 reward",
    "int flag",
    "numpy flag",
    "info key",
    "dollar info",
    "info array",
    "python action",
    "array action",
    "action of another",
)


class Scripted(ParallelEnv):  # type: ignore[misc]
    """A parallel env that returns the steps of a script, then ends the episode."""

    metadata: dict[str, Any] = {"name": "scripted_v0", "render_modes": []}  # noqa: RUF012

    def __init__(self, steps: list[tuple[list[str], tuple[Any, ...]]]) -> None:
        self.possible_agents = list(_AGENTS)
        self.agents: list[str] = []
        self._steps = steps
        self._space = spaces.Box(-np.inf, np.inf, (2,), dtype=np.float32)

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._space

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return spaces.Discrete(3)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        self._t = 0
        self.agents = list(_AGENTS[:2])
        return {agent: np.zeros(2, np.float32) for agent in self.agents}, {
            agent: {} for agent in self.agents
        }

    def step(self, actions: dict[str, Any]) -> Any:
        after, result = self._steps[self._t]
        self._t += 1
        self.agents = list(after) if self._t < len(self._steps) else []
        return result


def _values(change: str, agents: list[str], t: int, value: float) -> tuple[Any, ...]:
    """The action and step result of ``agents`` at step ``t``, with ``change`` made to agent 0."""
    first = agents[0]
    obs = {agent: np.full(2, value + t, np.float32) for agent in agents}
    reward: dict[str, Any] = {agent: value for agent in agents}
    flags: dict[str, Any] = dict.fromkeys(agents, False)
    info: dict[str, Any] = {agent: {"x": 1.0} if agent == "b" else {} for agent in agents}
    action: dict[str, Any] = {agent: np.int64(t % 3) for agent in agents}
    changed = {
        "dtype": lambda: obs.update({first: obs[first].astype(np.float64)}),
        "shape": lambda: obs.update({first: np.zeros(3, np.float32)}),
        "scalar obs": lambda: obs.update({first: np.float32(value)}),
        "nan": lambda: obs.update({first: np.array([np.nan, 1], np.float32)}),
        "none reward": lambda: reward.update({first: None}),
        "float32 reward": lambda: reward.update({first: np.float32(value)}),
        "int flag": lambda: flags.update({first: 0}),
        "numpy flag": lambda: flags.update({first: np.False_}),
        "info key": lambda: info.update({first: {"y": 2}}),
        "dollar info": lambda: info.update({first: {"$y": 2}}),
        "info array": lambda: info.update({first: {"y": np.zeros(2, np.int8)}}),
        "python action": lambda: action.update({first: 1}),
        "array action": lambda: action.update({first: np.array([1, 2], np.int32)}),
        "action of another": lambda: action.update({"z": action.pop(first)}),
    }.get(change)
    if changed is not None:
        changed()
    return action, (obs, reward, flags, dict(flags), info)


@st.composite
def _scripts(draw: st.DrawFn) -> list[tuple[str, float]]:
    """Episodes of steps, each a change and a value."""
    value = st.sampled_from([0.5, -1.25, 3.0, 1e30])
    step = st.tuples(st.sampled_from(_CHANGES), value)
    return draw(st.lists(step, min_size=1, max_size=30))


def _episode(script: list[tuple[str, float]]) -> tuple[list[Any], list[Any]]:
    """The actions and the env's script of an episode: who is live after each step."""
    agents = list(_AGENTS[:2])
    actions, steps = [], []
    for t, (change, value) in enumerate(script, start=1):
        before = agents
        if change == "leave" and len(agents) > 1:
            agents = agents[:-1]
        elif change == "join" and len(agents) < len(_AGENTS):
            agents = [*agents, _AGENTS[len(agents)]]
        action, result = _values(change, before, t, value)
        actions.append(action)
        steps.append((agents, result))
    return actions, steps


def _expected_lines(steps: list[Any], actions: list[Any], encoder: Encoder) -> list[bytes]:
    """The step lines the format describes, each encoded by the careful encoder."""
    lines, last, live = [], {}, list(_AGENTS[:2])
    for t, ((live_after, result), action) in enumerate(zip(steps, actions, strict=True), start=1):
        obs, reward, terminated, truncated, info = result
        after = live_after if t < len(steps) else []
        record: dict[str, Any] = {"event": "step", "t": t, "action": action, "obs": obs}
        record["reward"] = reward
        record["terminated"] = {agent: bool(flag) for agent, flag in terminated.items()}
        record["truncated"] = {agent: bool(flag) for agent, flag in truncated.items()}
        record["info"] = info
        if after != live:
            record["agents"] = after
        live = after
        types = {
            agent: tuple(
                dtypes.signature(field.get(agent)) for field in (action, obs, reward, info)
            )
            for agent in {*obs, *action}
        }
        if any(last.get(agent) != found for agent, found in types.items()):
            parts = {"action": action, "obs": obs, "reward": reward, "info": info}
            record["dtypes"] = dtypes.to_json(dtypes.signature(parts))
        last.update(types)
        lines.append(encoder.encode_careful(record))
    return lines


def _recorded_steps(
    folder: Path, episodes: list[tuple[list[Any], list[Any]]], **storage: Any
) -> list[bytes]:
    recorder = RecordParallelTrajectory(Scripted([]), folder, **storage)
    for actions, steps in episodes:
        recorder.env._steps = steps
        recorder.reset(seed=0)
        for action in actions:
            recorder.step(action)
    recorder.close()
    lines = (folder / "trajectory.jsonl").read_bytes().splitlines()
    return [line for line in lines if line.startswith(b'{"action"')]


@settings(max_examples=150, deadline=None)
@given(scripts=st.lists(_scripts(), min_size=1, max_size=3))
def test_lean_steps_are_written_as_the_careful_encoder_writes_them(
    scripts: list[list[tuple[str, float]]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    episodes = [_episode(script) for script in scripts]
    folder = tmp_path_factory.mktemp("lean")
    recorded = _recorded_steps(folder / "lean", episodes)
    encoder = Encoder()
    expected = [
        line for actions, steps in episodes for line in _expected_lines(steps, actions, encoder)
    ]
    assert recorded == expected
    # flush_every leaves the lean path to every step: the same bytes.
    assert _recorded_steps(folder / "full", episodes, flush_every=1) == recorded
