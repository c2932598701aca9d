"""Benchmarks of pytest-gym-goldens: recording, comparison, memory, start-up, frames.

Run from the repository root::

    pip install -e ".[bench]"           # MuJoCo, Atari and Minari; rows skip without them
    python benchmarks/run.py            # the full run, about five minutes on 2 cores
    python benchmarks/run.py --quick    # smaller sizes, for a smoke test

Every verdict is a ratio of two figures measured in the same run, interleaved,
so that a busy machine slows both sides alike: the recorded and the bare env
take turns of 500 steps, the comparisons and pytest runs are repeated in
turns, and each ratio is a median over the turns. The recording rows show
the peers' ratios, measured in the same turns: the seed's recorder
(``json.dumps`` and a flush per step) and Minari's
``DataCollector(record_infos=True)``, and the floor under ours: a wrapper that
only builds each step's record, encodes it with one ``orjson.dumps`` and
appends it to a buffer (``floor.py``). A row whose env needs a package
that is missing is skipped, and says which and how to install it. Times are CPU times (user +
system) of the process that does the work, not wall-clock times, so that other
processes on a shared machine count as little as possible. Peak memory is the
peak resident set (VmHWM) of a fresh process. The script prints one table; it
does not fail when a target is missed.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import importlib
import importlib.util
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import orjson

from gym_goldens import RecordTrajectory, RecordVectorTrajectory, Tolerance, compare

try:  # the multi-agent row's env and floor are PettingZoo classes
    from pettingzoo import ParallelEnv
    from pettingzoo.utils.wrappers import BaseParallelWrapper
except ImportError:  # that row is skipped, and says why
    ParallelEnv = BaseParallelWrapper = object

from floor import (  # the same folder
    FLOOR_BUFFER_SIZE,
    FLOOR_DUMPS_OPTIONS,
    FloorRecorder,
    FloorVectorRecorder,
)

try:
    from gym_goldens.comparison.engine import _Comparer
    from gym_goldens.format.codec import Encoder
    from gym_goldens.format.lines import count_episodes, iter_episodes
    from gym_goldens.format.reader import recording_files
except ImportError:  # a checkout from before the layered package, to compare with
    from gym_goldens.codec import Encoder  # type: ignore[no-redef,import-not-found]
    from gym_goldens.reader import (  # type: ignore[no-redef,import-not-found]
        count_episodes,
        iter_episodes,
        recording_files,
    )

    _Comparer = None  # type: ignore[assignment,misc]

try:  # the comparer takes recordings resolved once, with the path rules checked
    from gym_goldens.format.paths import resolve_recording
except ImportError:  # a checkout from before that: its comparer takes paths

    def resolve_recording(path: Path) -> Path:  # type: ignore[misc]
        return path


@dataclasses.dataclass
class Row:
    """One line of the result table."""

    measurement: str
    figures: str
    ratio: str
    target: str
    met: bool | None
    seed: str = "-"
    minari: str = "-"
    floor: str = "-"

    @property
    def verdict(self) -> str:
        if self.met is None and self.figures.startswith("skipped"):
            return "skipped"
        return {True: "yes", False: "NO", None: "-"}[self.met]


# --- 1. recording overhead ---------------------------------------------------


class SeedRecorder(gym.Wrapper[Any, Any, Any, Any]):
    """The seed's approach: ``json.dumps`` of converted values and a flush per step."""

    def __init__(self, env: gym.Env[Any, Any], output_dir: Path) -> None:
        super().__init__(env)
        self.output_dir = output_dir
        output_dir.mkdir(parents=True, exist_ok=True)
        self._episode = -1
        self._t = 0
        self._file: Any = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        self._close_file()
        self._episode += 1
        self._t = 0
        path = self.output_dir / f"episode_{self._episode:05d}.jsonl"
        self._file = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed at episode end
        obs, info = self.env.reset(seed=seed, options=options)
        self._write(
            {
                "event": "reset",
                "episode": self._episode,
                "obs": _seed_jsonable(obs),
                "info": _seed_jsonable(info),
            }
        )
        return obs, info

    def step(self, action: Any) -> Any:
        result = self.env.step(action)
        obs, reward, terminated, truncated, info = result
        self._t += 1
        self._write(
            {
                "event": "step",
                "t": self._t,
                "action": _seed_jsonable(action),
                "obs": _seed_jsonable(obs),
                "reward": _seed_jsonable(reward),
                "terminated": bool(terminated),
                "truncated": bool(truncated),
                "info": _seed_jsonable(info),
            }
        )
        if terminated or truncated:
            self._close_file()
        return result

    def close(self) -> None:
        self._close_file()
        super().close()

    def _write(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record) + "\n")
        self._file.flush()

    def _close_file(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _seed_jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _seed_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_seed_jsonable(v) for v in value]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return repr(value)


RECORDING_CHUNK = 500
"""Steps each env takes in its turn: short enough that a slow spell of a shared
machine falls on every env alike, long enough to time with CPU clocks."""


def _step_chunk(env: gym.Env[Any, Any], actions: list[Any]) -> float:
    """CPU seconds for ``actions``, with a reset wherever an episode ends."""
    step, reset = env.step, env.reset
    start = time.process_time()
    for action in actions:
        _, _, terminated, truncated, _ = step(action)
        if terminated or truncated:
            reset()
    return time.process_time() - start


@dataclasses.dataclass(frozen=True)
class Case:
    """An env whose recording overhead is measured, and its target.

    Attributes:
        env_id: The registered env.
        above_floor: The most that the ratio of recorded to bare step time may
            exceed the floor's ratio (:class:`FloorRecorder`), measured in the
            same turns: the floor is the limit of a Python recorder of this
            format, so the target is a distance above it.
        needs: The module that registers the env (None for gymnasium's own).
        steps: Steps of a full run (a tenth with ``--quick``).
        peer_steps: The steps the peers record, when fewer: the seed's way
            writes a 210x160x3 frame as 350 kB of JSON a step.
        num_envs: For a vector env, its number of sub-envs.
        on_disk_too: Also record into a folder on disk, not only in memory.
    """

    env_id: str
    above_floor: float
    needs: str | None = None
    steps: int = 50_000
    peer_steps: int | None = None
    num_envs: int | None = None
    on_disk_too: bool = False


RECORDING_CASES = [
    Case("CartPole-v1", 0.15, on_disk_too=True),
    Case("FrozenLake-v1", 0.15),
    Case("Pendulum-v1", 0.10),
    Case("HalfCheetah-v5", 0.05, needs="mujoco", steps=20_000),
    Case("Hopper-v5", 0.05, needs="mujoco", steps=20_000),
    Case("ALE/Pong-v5", 0.05, needs="ale_py", steps=5_000, peer_steps=500),
]
VECTOR_CASES = [
    Case("CartPole-v1", 0.15, steps=20_000, num_envs=4),
    Case("HalfCheetah-v5", 0.15, needs="mujoco", steps=5_000, num_envs=4),
]
INSTALL_HINT = 'pip install -e ".[bench]"'
WARM_UP_STEPS = 50


def floor_target(case: Case) -> str:
    """The target cell of a recording row: a distance above the floor."""
    return f"<= floor + {case.above_floor:.2f}"


def floor_verdict(case: Case, ratio: float, floor: float) -> tuple[str, bool]:
    """The ratio cell (with its distance above the floor) and whether it meets the target."""
    above = ratio - floor
    return f"{ratio:.3f} ({above:+.3f} above the floor)", above <= case.above_floor


def missing_package(case: Case) -> str | None:
    """Why the env of ``case`` cannot be made here, or None when it can."""
    if case.needs is None:
        return None
    try:
        module = importlib.import_module(case.needs)
    except ImportError as error:
        return f"{case.needs} is not installed ({error}); {INSTALL_HINT}"
    if case.needs == "ale_py":
        gym.register_envs(module)
    return None


def make_peers(env_id: str, folder: Path) -> dict[str, Callable[[], gym.Env[Any, Any]] | str]:
    """The peers' recorders of ``env_id`` (or why one cannot be made), by column.

    Minari's ``DataCollector(record_infos=True)`` needs the same info keys at
    reset and at every step; where an env breaks that (MuJoCo's reset info
    has fewer keys), it is measured with ``record_infos=False`` and says so.
    """
    peers: dict[str, Callable[[], gym.Env[Any, Any]] | str] = {
        "seed": lambda: SeedRecorder(gym.make(env_id), folder / "seed")
    }
    try:
        from minari import DataCollector
    except ImportError as error:
        peers["minari"] = f"not installed ({error}); {INSTALL_HINT}"
        return peers
    os.environ["MINARI_DATASETS_PATH"] = str(folder / "minari")

    def minari(record_infos: bool = True) -> gym.Env[Any, Any]:
        return DataCollector(gym.make(env_id), record_infos=record_infos)  # type: ignore[no-any-return]

    peers["minari"] = minari
    return peers


def _warm_up(env: gym.Env[Any, Any], actions: list[Any]) -> None:
    """Reset and step a little: imports, caches and JIT compilation out of the timing."""
    env.reset(seed=0)
    _step_chunk(env, actions)
    env.reset(seed=0)


def bench_recording(case: Case, quick: bool, folders: dict[str, Path]) -> list[Row]:
    """Bare and recorded step times: ours into each folder, and the peers'.

    Every env (the bare one, ours into each folder, the seed's recorder and
    Minari's) steps the same actions, taking turns of ``RECORDING_CHUNK``
    steps in a rotating order, so that a slow spell of a shared machine slows
    all of them alike. The ratio is the median, over the turns, of recorded
    time / bare time of the same actions; the ratio of the totals is shown
    beside it. ``close()`` (the last write) counts in the last turn.
    """
    env_id = case.env_id
    title = f"record {env_id}"
    reason = missing_package(case)
    if reason is not None:
        return [Row(title, f"skipped: {reason}", "-", floor_target(case), None, "-", "-")]
    steps = case.steps // 10 if quick else case.steps
    peer_steps = min(case.peer_steps or steps, steps)
    sampler = gym.make(env_id)
    sampler.action_space.seed(0)
    actions = [sampler.action_space.sample() for _ in range(steps)]
    warm_up = actions[:WARM_UP_STEPS]
    envs: dict[str, gym.Env[Any, Any]] = {
        "bare": gym.make(env_id),
        "floor": FloorRecorder(gym.make(env_id)),
    }
    for place, folder in folders.items():
        envs[f"ours {place}"] = RecordTrajectory(gym.make(env_id), folder / env_id / "ours")
    # The peers record into the first folder (memory, when there is one).
    notes = _start_peers(envs, env_id, next(iter(folders.values())) / env_id, warm_up)
    for name, env in envs.items():
        if name not in ("seed", "minari"):
            _warm_up(env, warm_up)
    names = list(envs)
    times: dict[str, list[float]] = {name: [] for name in names}
    gc.collect()
    for turn, start in enumerate(range(0, steps, RECORDING_CHUNK)):
        chunk = actions[start : start + RECORDING_CHUNK]
        first = turn % len(names)
        for name in names[first:] + names[:first]:
            if name in ("seed", "minari") and start >= peer_steps:
                continue
            times[name].append(_step_chunk(envs[name], chunk))
    for name, env in envs.items():
        start_close = time.process_time()
        env.close()
        times[name][-1] += time.process_time() - start_close
    bare = times["bare"]
    bare_us = sum(bare) / steps * 1e6
    peers = _peer_cells(times, notes)
    floor = _median_ratio(times["floor"], bare)
    rows = []
    for place, folder in folders.items():
        episodes = count_episodes(folder / env_id / "ours" / "trajectory.jsonl")
        spent = times[f"ours {place}"]
        turn_ratios = sorted(t / b for t, b in zip(spent, bare, strict=True))
        ratio = statistics.median(turn_ratios)
        peer_note = f"; peers on the first {peer_steps:,} steps" if peer_steps < steps else ""
        figures = (
            f"bare {bare_us:.2f} us/step, recorded {sum(spent) / steps * 1e6:.2f} (ratio of "
            f"totals {sum(spent) / sum(bare):.2f}, middle half of turns "
            f"{turn_ratios[len(turn_ratios) // 4]:.2f} to "
            f"{turn_ratios[(3 * len(turn_ratios)) // 4]:.2f}); {steps:,} steps, "
            f"{steps / max(episodes, 1):.0f} steps/episode{peer_note}"
        )
        cell, met = floor_verdict(case, ratio, floor)
        rows.append(
            Row(
                f"{title}, {place}",
                figures,
                cell,
                floor_target(case),
                met,
                peers["seed"],
                peers["minari"],
                f"{floor:.3f}",
            )
        )
    for folder in folders.values():
        shutil.rmtree(folder / env_id.split("/")[0])
    return rows


def _start_peers(
    envs: dict[str, gym.Env[Any, Any]], env_id: str, folder: Path, warm_up: list[Any]
) -> dict[str, str]:
    """Add the peers' recorders to ``envs``, warmed up; return a note per peer that needs one."""
    notes: dict[str, str] = {}
    for name, peer in make_peers(env_id, folder).items():
        if isinstance(peer, str):
            notes[name] = peer
            continue
        try:
            envs[name] = peer()
            _warm_up(envs[name], warm_up)
        except Exception as error:
            envs.pop(name, None)
            if name != "minari":
                raise
            # record_infos=True refuses infos whose keys change: measured without infos.
            notes[name] = f"record_infos=False; True raises {_reason(error)}"
            envs[name] = peer(record_infos=False)  # type: ignore[call-arg]
            _warm_up(envs[name], warm_up)
    return notes


def _peer_cells(times: dict[str, list[float]], notes: dict[str, str]) -> dict[str, str]:
    """Each peer's median ratio over its turns (with its note), or why it is missing."""
    cells: dict[str, str] = {}
    for name in ("seed", "minari"):
        if name in times:
            ratios = sorted(t / b for t, b in zip(times[name], times["bare"], strict=False))
            cells[name] = f"{statistics.median(ratios):.2f}"
            if name in notes:
                cells[name] += f" ({notes[name]})"
        else:
            cells[name] = notes.get(name, "-")
    return cells


def _median_ratio(spent: list[float], bare: list[float]) -> float:
    """The median over the turns of ``spent`` time / bare time."""
    return statistics.median(t / b for t, b in zip(spent, bare, strict=True))


def _reason(error: BaseException) -> str:
    """The first line of an error, short enough for a table cell."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {first[:60]}"


def bench_vector_recording(case: Case, quick: bool, folder: Path) -> list[Row]:
    """Bare and recorded step times of a sync vector env, in turns as for single envs."""
    env_id, num_envs = case.env_id, case.num_envs or 1
    title = f"record {env_id} x{num_envs}, sync vector env"
    peers = "- (records single envs)"
    reason = missing_package(case)
    if reason is not None:
        return [Row(title, f"skipped: {reason}", "-", floor_target(case), None, "-", "-")]
    steps = case.steps // 10 if quick else case.steps
    sampler = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync")
    sampler.action_space.seed(0)
    actions = [sampler.action_space.sample() for _ in range(steps)]
    bare = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync")
    ours = RecordVectorTrajectory(
        gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync"), folder / env_id
    )
    floor = FloorVectorRecorder(gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync"))
    envs = {"bare": bare, "floor": floor, "ours": ours}
    for env in envs.values():
        env.reset(seed=0)
        for action in actions[:WARM_UP_STEPS]:
            env.step(action)
    times: dict[str, list[float]] = {name: [] for name in envs}
    gc.collect()
    for turn, start in enumerate(range(0, steps, RECORDING_CHUNK)):
        chunk = actions[start : start + RECORDING_CHUNK]
        names = list(envs)
        first = turn % len(names)
        for name in names[first:] + names[:first]:
            step = envs[name].step
            began = time.process_time()
            for action in chunk:
                step(action)  # a vector env resets its sub-envs itself
            times[name].append(time.process_time() - began)
    for env in envs.values():
        env.close()
    ratios = sorted(o / b for o, b in zip(times["ours"], times["bare"], strict=True))
    ratio = statistics.median(ratios)
    bare_us = sum(times["bare"]) / steps * 1e6
    ours_us = sum(times["ours"]) / steps * 1e6
    shutil.rmtree(folder / env_id)
    floor = _median_ratio(times["floor"], times["bare"])
    cell, met = floor_verdict(case, ratio, floor)
    return [
        Row(
            title,
            f"bare {bare_us:.2f} us/vector step, recorded {ours_us:.2f} (middle half of turns "
            f"{ratios[len(ratios) // 4]:.2f} to {ratios[(3 * len(ratios)) // 4]:.2f}); "
            f"{steps:,} vector steps",
            cell,
            floor_target(case),
            met,
            peers,
            peers,
            f"{floor:.3f}",
        )
    ]


# --- 1c. multi-agent recording ------------------------------------------------


class SwarmEnv(ParallelEnv):  # type: ignore[misc,valid-type]
    """A swarm on a plane, PettingZoo's parallel API: the multi-agent row's env.

    Each agent accelerates by its action, and observes (as PettingZoo envs
    do, agent by agent) its position, its velocity, its offset from the
    swarm's centre and from its nearest neighbour (Box(8,) float32); it is
    rewarded for staying near the centre. The physics is vectorized over the
    agents. Episodes are truncated at ``max_cycles``.
    """

    metadata: dict[str, Any] = {"name": "swarm_v0", "render_modes": []}  # noqa: RUF012
    MOVES = np.array([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]], dtype=np.float64)

    def __init__(self, agents: int = 8, max_cycles: int = 200) -> None:
        self.possible_agents = [f"agent_{i}" for i in range(agents)]
        self.agents: list[str] = []
        self.max_cycles = max_cycles
        self._observation_space = gym.spaces.Box(-np.inf, np.inf, (8,), dtype=np.float32)
        self._action_space = gym.spaces.Discrete(5)

    def observation_space(self, agent: str) -> gym.Space[Any]:
        return self._observation_space

    def action_space(self, agent: str) -> gym.Space[Any]:
        return self._action_space

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        if seed is not None or not hasattr(self, "rng"):
            self.rng = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        self.cycle = 0
        self.position = self.rng.normal(size=(len(self.agents), 2))
        self.velocity = np.zeros_like(self.position)
        return self._observations(), {agent: {} for agent in self.agents}

    def step(self, actions: dict[str, Any]) -> Any:
        agents = self.agents
        moves = self.MOVES[[actions[agent] for agent in agents]]
        self.velocity = 0.9 * self.velocity + 0.1 * moves
        self.position = self.position + 0.1 * self.velocity
        offset = self.position - self.position.mean(axis=0)
        rewards = dict(zip(agents, (-np.linalg.norm(offset, axis=1)).tolist(), strict=True))
        self.cycle += 1
        ended = self.cycle >= self.max_cycles
        terminations = dict.fromkeys(agents, False)
        truncations = dict.fromkeys(agents, ended)
        infos = {agent: {} for agent in agents}
        observations = self._observations()
        if ended:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _observations(self) -> dict[str, np.ndarray]:
        centre = self.position.mean(axis=0)
        return {agent: self._observe(i, centre) for i, agent in enumerate(self.agents)}

    def _observe(self, index: int, centre: np.ndarray) -> np.ndarray:
        own = self.position[index]
        distances = np.linalg.norm(self.position - own, axis=1)
        distances[index] = np.inf
        nearest = self.position[distances.argmin()]
        parts = (own, self.velocity[index], own - centre, nearest - own)
        return np.concatenate(parts, dtype=np.float32)


class FloorAgentRecorder(BaseParallelWrapper):  # type: ignore[misc,valid-type]
    """A parallel env under the floor: each step's record built, dumped once and buffered.

    The record holds what ``step()`` returned, each field by agent as it
    came (the flags as given, not made booleans); nothing records resets,
    works out numpy types, notes the agents that come and go, or checks a
    line for NaN or None.
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self._buffer = bytearray()
        self._t = 0

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        self._t = 0
        return self.env.reset(seed=seed, options=options)

    def step(self, actions: dict[str, Any]) -> Any:
        result = self.env.step(actions)
        obs, rewards, terminations, truncations, infos = result
        self._t += 1
        record = {
            "event": "step",
            "t": self._t,
            "action": actions,
            "obs": obs,
            "reward": rewards,
            "terminated": terminations,
            "truncated": truncations,
            "info": infos,
        }
        self._buffer += orjson.dumps(record, option=FLOOR_DUMPS_OPTIONS)
        if len(self._buffer) >= FLOOR_BUFFER_SIZE:
            self._buffer = bytearray()
        return result


MULTIAGENT_TARGET = 1.3
MULTIAGENT_STEPS = 20_000


def _step_agents(env: Any, actions: list[dict[str, Any]]) -> float:
    """CPU seconds for the parallel ``actions``, with a reset wherever an episode ends."""
    step, reset = env.step, env.reset
    start = time.process_time()
    for chosen in actions:
        step(chosen)
        if not env.agents:
            reset()
    return time.process_time() - start


def bench_multiagent_recording(quick: bool, folder: Path) -> list[Row]:
    """Bare, floor and recorded step times of an 8-agent ParallelEnv, in turns as for others."""
    title = "record a PettingZoo ParallelEnv, 8 agents, Box(8,) obs"
    target = f"<= {MULTIAGENT_TARGET:.2f}"
    if ParallelEnv is object:
        reason = f"pettingzoo is not installed; {INSTALL_HINT} or pip install pettingzoo"
        return [Row(title, f"skipped: {reason}", "-", target, None)]
    from gym_goldens.record.multiagent import RecordParallelTrajectory

    steps = MULTIAGENT_STEPS // 10 if quick else MULTIAGENT_STEPS
    space = gym.spaces.Discrete(5, seed=0)
    agents = SwarmEnv().possible_agents
    actions = [{agent: space.sample() for agent in agents} for _ in range(steps)]
    envs = {
        "bare": SwarmEnv(),
        "floor": FloorAgentRecorder(SwarmEnv()),
        "ours": RecordParallelTrajectory(SwarmEnv(), folder / "swarm"),
    }
    for env in envs.values():
        env.reset(seed=0)
        _step_agents(env, actions[:WARM_UP_STEPS])
        env.reset(seed=0)
    times: dict[str, list[float]] = {name: [] for name in envs}
    gc.collect()
    for turn, start in enumerate(range(0, steps, RECORDING_CHUNK)):
        chunk = actions[start : start + RECORDING_CHUNK]
        names = list(envs)
        first = turn % len(names)
        for name in names[first:] + names[:first]:
            times[name].append(_step_agents(envs[name], chunk))
    for name, env in envs.items():
        began = time.process_time()
        env.close()
        times[name][-1] += time.process_time() - began
    ratios = sorted(o / b for o, b in zip(times["ours"], times["bare"], strict=True))
    ratio = statistics.median(ratios)
    bare_us = sum(times["bare"]) / steps * 1e6
    ours_us = sum(times["ours"]) / steps * 1e6
    shutil.rmtree(folder / "swarm")
    figures = (
        f"bare {bare_us:.2f} us/step, recorded {ours_us:.2f} (middle half of turns "
        f"{ratios[len(ratios) // 4]:.2f} to {ratios[(3 * len(ratios)) // 4]:.2f}); "
        f"{steps:,} steps of every agent, 200 steps/episode"
    )
    floor = f"{_median_ratio(times['floor'], times['bare']):.3f}"
    peers = "- (records single envs)"
    return [
        Row(title, figures, f"{ratio:.3f}", target, ratio <= MULTIAGENT_TARGET, peers, peers, floor)
    ]


# --- 2. comparison throughput ------------------------------------------------

COMPARE_TARGET = 2.5
"""The most comparing may cost, as a multiple of parsing every line of both files."""


def record_pendulum(path: Path, steps: int) -> None:
    """A Pendulum-v1 rollout of ``steps`` steps (episodes of 200)."""
    env = RecordTrajectory(gym.make("Pendulum-v1"), path)
    env.action_space.seed(0)
    env.reset(seed=0)
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    env.close()


def add_noise(source: Path, target: Path, relative: float = 1e-9) -> None:
    """Copy a recording, multiplying every float of obs and reward by ``1 + relative``.

    Every step line changes, so no byte-level shortcut applies, yet every value
    stays well within the default tolerance (rtol 1e-6).
    """
    target.mkdir(parents=True, exist_ok=True)
    encoder = Encoder()
    scale = 1.0 + relative
    for path in recording_files(source):
        lines = []
        for raw in path.read_bytes().splitlines():
            record = orjson.loads(raw)
            if record["event"] in ("reset", "step"):
                record["obs"] = [x * scale for x in record["obs"]]
                if "reward" in record:
                    record["reward"] *= scale
            lines.append(encoder.encode(record))
        (target / path.name).write_bytes(b"\n".join(lines) + b"\n")


def replicate(source: Path, target: Path, copies: int) -> None:
    """Make a longer recording: the episodes of ``source``, ``copies`` times over."""
    target.mkdir(parents=True, exist_ok=True)
    (source_file,) = recording_files(source)
    data = source_file.read_bytes()
    with open(target / source_file.name, "wb") as handle:
        for _ in range(copies):
            handle.write(data)


def _parse_only(golden: Path, actual: Path) -> int:
    """Read and parse every line of both recordings with orjson; the floor."""
    count = 0
    for folder in (golden, actual):
        for path in recording_files(folder):
            with open(path, "rb") as handle:
                for raw in handle:
                    orjson.loads(raw)
                    count += 1
    return count


def _timed(functions: list[Callable[[], Any]], repeats: int) -> list[list[float]]:
    """CPU seconds of each function in each round.

    The functions run in turns, starting with another one in each round, so
    that none always runs first (or always after the same one).
    """
    times: list[list[float]] = [[] for _ in functions]
    for round_number in range(repeats):
        for offset in range(len(functions)):
            index = (round_number + offset) % len(functions)
            gc.collect()
            start = time.process_time()
            functions[index]()
            times[index].append(time.process_time() - start)
    return times


def _round_ratio(numerators: list[float], denominators: list[float]) -> float:
    """The median over rounds of the ratio of two figures of the same round."""
    return statistics.median(a / b for a, b in zip(numerators, denominators, strict=True))


def _records(path: Path) -> Iterator[list[dict[str, Any]]]:
    for _, lines in iter_episodes(recording_files(path)):
        yield [orjson.loads(raw) for _, raw in lines]


def bench_compare(steps: int, deepdiff_episodes: int, repeats: int, work: Path) -> list[Row]:
    from deepdiff import DeepDiff

    golden, actual = work / "cmp-golden", work / "cmp-actual"
    record_pendulum(actual, steps)
    add_noise(actual, golden)
    tolerance = Tolerance()
    result = compare(golden, actual, tolerance)
    assert result.equal, "the noisy copy should match within tolerance"

    # DeepDiff over the same parsed records, episode by episode, on the first
    # episodes only (it is too slow for all of them), then scaled to all.
    pairs = list(zip(_records(golden), _records(actual), strict=True))[:deepdiff_episodes]
    sample_records = sum(len(g) for g, _ in pairs)
    total_records = sum(1 for _ in _parse_iter(golden))

    def run_deepdiff() -> None:
        for g, a in pairs:
            found = DeepDiff(g, a, math_epsilon=1e-6)
            assert not found, found

    def walk_only() -> None:
        # The comparison with its compiled checks turned off: what they buy.
        if _Comparer is not None:
            _Comparer(tolerance, compile_checks=False).compare(
                resolve_recording(golden), resolve_recording(actual)
            )

    # All four in turns, so that a busy spell of the machine hits each.
    ours_times, parse_times, deepdiff_times, walk_times = _timed(
        [
            lambda: compare(golden, actual, tolerance),
            lambda: _parse_only(golden, actual),
            run_deepdiff,
            walk_only,
        ],
        repeats,
    )
    ours, parse, deepdiff_sample = (
        statistics.median(times) for times in (ours_times, parse_times, deepdiff_times)
    )
    scale = total_records / sample_records
    deepdiff_total = deepdiff_sample * scale
    # Each verdict from the ratios of the same round: a slow spell weighs on both sides.
    faster = _round_ratio(deepdiff_times, ours_times) * scale
    over_parse = _round_ratio(ours_times, parse_times)
    rate = total_records / ours
    return [
        Row(
            f"compare {steps:,} steps vs DeepDiff",
            f"ours {ours:.2f} s ({rate:,.0f} records/s); DeepDiff(math_epsilon=1e-6) "
            f"{deepdiff_total:.0f} s, extrapolated from {sample_records:,} records "
            f"({deepdiff_sample:.2f} s)",
            f"{faster:.0f}x faster",
            # No verdict: the ratio moves with DeepDiff's own speed.
            "context",
            None,
        ),
        Row(
            f"compare {steps:,} steps vs parse only",
            f"ours {ours:.2f} s; orjson.loads of every line of both files {parse:.2f} s",
            f"{over_parse:.2f}",
            f"<= {COMPARE_TARGET:.2f}",
            over_parse <= COMPARE_TARGET,
        ),
        *(
            [
                Row(
                    f"compare {steps:,} steps: compiled checks vs the walk alone",
                    f"ours {ours:.2f} s; with the compiled checks turned off "
                    f"{statistics.median(walk_times):.2f} s",
                    f"{_round_ratio(walk_times, ours_times):.2f}x faster",
                    "> 1.2x faster (or they go)",
                    _round_ratio(walk_times, ours_times) > 1.2,
                )
            ]
            if _Comparer is not None
            else []
        ),
    ]


def _parse_iter(path: Path) -> Iterator[bytes]:
    for file in recording_files(path):
        yield from file.read_bytes().splitlines()


# --- 3. memory -----------------------------------------------------------------

_MEMORY_SCRIPT = textwrap.dedent(
    """
    import re, sys
    from pathlib import Path
    from gym_goldens import compare
    result = compare(sys.argv[1], sys.argv[2])
    assert result.equal
    # VmHWM: the peak resident set of this process (ru_maxrss may carry the
    # parent's peak across exec).
    print(re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text()).group(1))
    """
)


def _peak_rss_mib(golden: Path, actual: Path) -> float:
    output = subprocess.run(
        [sys.executable, "-c", _MEMORY_SCRIPT, str(golden), str(actual)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return int(output.split()[-1]) / 1024


def bench_memory(small_steps: int, large_steps: int, work: Path) -> list[Row]:
    base_actual, base_golden = work / "mem-actual", work / "mem-golden"
    record_pendulum(base_actual, small_steps)
    add_noise(base_actual, base_golden)
    copies = large_steps // small_steps
    big_actual, big_golden = work / "mem-actual-big", work / "mem-golden-big"
    replicate(base_actual, big_actual, copies)
    replicate(base_golden, big_golden, copies)
    small = statistics.median(_peak_rss_mib(base_golden, base_actual) for _ in range(3))
    large = _peak_rss_mib(big_golden, big_actual)
    growth = large - small
    return [
        Row(
            "compare peak memory",
            f"peak RSS {small:.1f} MiB at {small_steps:,} steps, {large:.1f} MiB at "
            f"{large_steps:,} steps (the {small_steps:,}-step recording copied {copies}x)",
            f"{growth:+.1f} MiB",
            "< 50 MiB growth",
            growth < 50,
        )
    ]


_RECORDING_MEMORY_SCRIPT = textwrap.dedent(
    """
    import re, sys
    from pathlib import Path
    import gymnasium as gym
    from gym_goldens import RecordTrajectory
    steps = int(sys.argv[2])
    env = RecordTrajectory(gym.make("Pendulum-v1", max_episode_steps=steps + 1), sys.argv[1])
    env.action_space.seed(0)
    env.reset(seed=0)
    for _ in range(steps):
        env.step(env.action_space.sample())
    env.close()
    print(re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text()).group(1))
    """
)


def _recording_peak_rss_mib(folder: Path, steps: int) -> float:
    output = subprocess.run(
        [sys.executable, "-c", _RECORDING_MEMORY_SCRIPT, str(folder), str(steps)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return int(output.split()[-1]) / 1024


def bench_recording_memory(small_steps: int, large_steps: int, work: Path) -> list[Row]:
    """Peak memory of fresh processes that record one Pendulum episode, short and long."""
    small = statistics.median(
        _recording_peak_rss_mib(work / f"rec-small-{i}", small_steps) for i in range(3)
    )
    large = _recording_peak_rss_mib(work / "rec-large", large_steps)
    size = (work / "rec-large" / "trajectory.jsonl").stat().st_size / 2**20
    growth = large - small
    return [
        Row(
            f"record one {large_steps:,}-step episode, peak memory",
            f"Pendulum-v1: peak RSS {small:.1f} MiB for a {small_steps:,}-step episode, "
            f"{large:.1f} MiB for a {large_steps:,}-step one ({size:.0f} MiB of lines)",
            f"{large:.0f} MiB, {growth:+.1f} MiB",
            "< 400 MiB, < 100 MiB growth",
            large < 400 and growth < 100,
        )
    ]


# --- 4. start-up -----------------------------------------------------------------


def bench_startup(runs: int, work: Path) -> list[Row]:
    suite = work / "startup-suite"
    suite.mkdir()
    (suite / "pytest.ini").write_text("[pytest]\n")
    for module in range(20):
        tests = "\n".join(f"def test_{i}():\n    assert {i} == {i}\n" for i in range(10))
        (suite / f"test_module_{module}.py").write_text(tests)
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    times: dict[str, list[float]] = {"with": [], "without": []}
    order = [("with", []), ("without", ["-p", "no:gym_goldens"])]
    for run in range(runs + 1):
        # Each side runs first in every other round: no order effect in the ratios.
        for name, extra in order if run % 2 else order[::-1]:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([*command, *extra], cwd=suite, check=True, capture_output=True, env=env)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if run:  # the first round warms the file cache and the bytecode
                spent = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                times[name].append(spent)
    with_plugin = statistics.median(times["with"]) * 1e3
    without = statistics.median(times["without"]) * 1e3
    # Each run with the plugin against the run without it just after it: a
    # slow spell then weighs on both sides of a ratio.
    ratio = statistics.median(a / b for a, b in zip(times["with"], times["without"], strict=True))
    return [
        Row(
            "pytest start-up",
            f"--collect-only -q of 200 tests: {with_plugin:.0f} ms CPU with the plugin, "
            f"{without:.0f} ms with -p no:gym_goldens (medians of {runs}; the ratio is "
            "the median of the ratios of the two runs of each round)",
            f"{ratio:.3f}",
            "<= 1.05",
            ratio <= 1.05,
        )
    ]


# --- 5. a golden suite as a whole, and the audit of a package --------------------

_SUITE_TESTS = 100
_SUITE_STEPS = 200
_SUITE_BODY = """
import gymnasium as gym
import pytest
{imports}

@pytest.mark.parametrize("seed", range({tests}))
def test_cartpole({arguments}):
    env = {env}
    env.reset(seed=seed)
    env.action_space.seed(seed)
    for _ in range({steps}):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    env.close()
"""


# The suite's test files: the golden tests, the bare ones (the target's
# yardstick), and the floors under the golden ones, each without the plugin:
# pytest's tmp_path alone, the floor recorder (floor.py) writing its lines
# to a file there, our recorder writing there.
_SUITE_FILES = [
    ("golden", "", "record_trajectory, seed", 'record_trajectory(gym.make("CartPole-v1"))'),
    ("bare", "", "seed", 'gym.make("CartPole-v1")'),
    ("tmp_path", "", "tmp_path, seed", 'gym.make("CartPole-v1")'),
    (
        "floor",
        "from floor import FloorRecorder",
        "tmp_path, seed",
        'FloorRecorder(gym.make("CartPole-v1"), tmp_path / "trajectory.jsonl")',
    ),
    (
        "recorder",
        "from gym_goldens import RecordTrajectory",
        "tmp_path, seed",
        'RecordTrajectory(gym.make("CartPole-v1"), tmp_path)',
    ),
]
_WITHOUT_PLUGIN = ["-p", "no:gym_goldens"]


def _suite(work: Path) -> tuple[Path, dict[str, str]]:
    """A suite of CartPole tests: a test file for each of :data:`_SUITE_FILES`."""
    suite = work / "golden-suite"
    suite.mkdir()
    (suite / "pytest.ini").write_text("[pytest]\n")
    for name, imports, arguments, env in _SUITE_FILES:
        body = _SUITE_BODY.format(
            imports=imports, tests=_SUITE_TESTS, arguments=arguments, env=env, steps=_SUITE_STEPS
        )
        (suite / f"test_{name}.py").write_text(body)
    # As a user's runs: bytecode cached, and pytest's temporary folders of
    # their own (the 3 last runs kept), not those of other runs on the machine.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTEST_DEBUG_TEMPROOT"] = str(work / "suite-temp")
    (work / "suite-temp").mkdir()
    # floor.py, for the floor's tests.
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(Path(__file__).resolve().parent), os.environ.get("PYTHONPATH")])
    )
    return suite, env


def _paired_cpu(
    sides: list[tuple[str, list[str]]],
    runs: int,
    suite: Path,
    env: dict[str, str],
    before: Callable[[], None] = lambda: None,
) -> dict[str, list[float]]:
    """The CPU seconds of whole pytest processes (children included), the two sides in turns."""
    times: dict[str, list[float]] = {name: [] for name, _ in sides}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    for run in range(runs + 1):
        # Each side runs first in every other round: no order effect in the ratios.
        for name, extra in sides if run % 2 else sides[::-1]:
            before()
            used = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([*command, *extra], cwd=suite, check=True, capture_output=True, env=env)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if run:  # the first round warms the file cache and the bytecode
                spent = after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime
                times[name].append(spent)
    return times


def _pair_ratio(times: dict[str, list[float]], first: str, second: str) -> float:
    # Each run against the other side's run of the same round: a slow spell
    # then weighs on both sides of a ratio.
    return statistics.median(a / b for a, b in zip(times[first], times[second], strict=True))


def bench_suite(runs: int, work: Path) -> list[Row]:
    suite, env = _suite(work)
    goldens = suite / "goldens"
    update = ["--update-goldens", "test_golden.py"]
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *update],
        cwd=suite,
        check=True,
        capture_output=True,
        env=env,
    )
    checked = _paired_cpu(
        [
            (name, [*([] if name == "golden" else _WITHOUT_PLUGIN), f"test_{name}.py"])
            for name, *_ in _SUITE_FILES
        ],
        runs,
        suite,
        env,
    )
    created = _paired_cpu(
        [("fresh", update), ("once", [*update, "--update-goldens-once"])],
        max(runs // 2, 2),
        suite,
        env,
        before=lambda: shutil.rmtree(goldens, ignore_errors=True),
    )
    suite_ratio = _pair_ratio(checked, "golden", "bare")
    update_ratio = _pair_ratio(created, "fresh", "once")
    ms = {name: statistics.median(values) * 1e3 for name, values in (checked | created).items()}
    size = f"{_SUITE_TESTS} CartPole tests of {_SUITE_STEPS} steps"
    return [
        Row(
            "golden suite",
            f"{size}: {ms['golden']:.0f} ms CPU checked against their goldens, "
            f"{ms['bare']:.0f} ms stepping the bare env under -p no:gym_goldens (whole pytest "
            f"processes, medians of {runs}; the ratio is the median of each round's ratio)",
            f"{suite_ratio:.3f}",
            "<= 1.25",
            suite_ratio <= 1.25,
        ),
        *_suite_floor_rows(checked, ms),
        Row(
            "goldens created",
            f"{size}, their 100 goldens created: {ms['fresh']:.0f} ms CPU with --update-goldens "
            f"(recorded twice here and once more by a fresh pytest), {ms['once']:.0f} ms with "
            f"--update-goldens-once (whole processes with their children, medians of "
            f"{max(runs // 2, 2)})",
            f"{update_ratio:.3f}",
            "<= 1.5",
            update_ratio <= 1.5,
        ),
    ]


def _suite_floor_rows(times: dict[str, list[float]], ms: dict[str, float]) -> list[Row]:
    """The floors under the golden suite, each against the bare suite: where its cost goes."""
    what = {
        "tmp_path": "pytest's tmp_path alone (the folder the design card records in)",
        "floor": "tmp_path and the floor recorder (floor.py), its lines written to one file "
        "there at the end of each test: the least a recorder of this format does",
        "recorder": "tmp_path and our RecordTrajectory writing there, without the plugin "
        "(no golden found, read or compared)",
    }
    return [
        Row(
            f"golden suite, the floor under it: {description}",
            f"{ms[name]:.0f} ms CPU, against {ms['bare']:.0f} ms bare (the golden suite's "
            f"{ms['golden']:.0f} ms)",
            f"{_pair_ratio(times, name, 'bare'):.3f}",
            "-",
            None,
        )
        for name, description in what.items()
    ]


_AUDIT_BEFORE = "63 s for the 82 envs before the fresh process was reused (issue 28)"


def bench_audit(quick: bool, work: Path) -> list[Row]:
    if importlib.util.find_spec("minigrid") is None:
        return [Row("audit of MiniGrid", "skipped: pip install minigrid", "-", "-", None)]
    pattern = "MiniGrid-Empty-*" if quick else "MiniGrid-*"
    report = work / "audit.json"
    command = [sys.executable, "-m", "gym_goldens", "audit", pattern, "--steps", "100"]
    command += ["--jobs", "2", "--import", "minigrid", "--json", str(report)]
    started = time.perf_counter()
    subprocess.run(command, capture_output=True, check=False, cwd=work)
    seconds = time.perf_counter() - started
    envs = len(json.loads(report.read_text())["envs"])
    met = None if quick else seconds <= 30.0
    return [
        Row(
            "audit of MiniGrid",
            f'gym-goldens audit "{pattern}" --steps 100 --jobs 2 --import minigrid: {envs} envs '
            f"in {seconds:.1f} s wall ({os.cpu_count()} cores; a parallel job, so wall time); "
            f"{_AUDIT_BEFORE}",
            f"{seconds:.1f} s",
            "<= 30 s",
            met,
        )
    ]


# --- 6. frames -------------------------------------------------------------------


def bench_pixels(quick: bool, tmpfs: Path) -> list[Row]:
    """The rows of frames (``pixels.py``): its script run in a process of its own.

    Its own process, as it is when run alone: the frames it holds and the
    encoder process it starts are measured apart from the rows before.
    """
    command = [sys.executable, str(Path(__file__).with_name("pixels.py")), "--json"]
    command += ["--tmpfs", str(tmpfs), *(["--quick"] if quick else [])]
    try:
        output = subprocess.run(command, capture_output=True, check=True, text=True).stdout
    except subprocess.CalledProcessError as error:
        last = (error.stderr or "").strip().splitlines()[-1:] or ["no output"]
        return [Row("frames (benchmarks/pixels.py)", f"failed: {last[0]}", "-", "-", False)]
    return [
        Row(row["measurement"], row["figures"], row["ratio"], row["target"], row["met"])
        for row in json.loads(output)
    ]


# --- the table -------------------------------------------------------------------


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import deepdiff

    return (
        f"{os.cpu_count()} cores, {model}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}, numpy {np.__version__}, "
        f"orjson {orjson.__version__}, gymnasium {gym.__version__}, deepdiff {deepdiff.__version__}"
    )


def print_table(rows: list[Row]) -> None:
    headers = (
        "measurement",
        "ratio",
        "target",
        "met",
        "floor",
        "seed's recorder",
        "Minari",
        "figures",
    )
    cells = [
        (r.measurement, r.ratio, r.target, r.verdict, r.floor, r.seed, r.minari, r.figures)
        for r in rows
    ]
    print("| " + " | ".join(headers) + " |")
    print("|" + "|".join(" --- " for _ in headers) + "|")
    for row in cells:
        print("| " + " | ".join(row) + " |")


def _selected(cases: list[Case], env_ids: list[str] | None) -> list[Case]:
    """The cases of these envs (every case when none is named)."""
    return [case for case in cases if env_ids is None or case.env_id in env_ids]


MEASUREMENTS = (
    "recording",
    "vector",
    "multiagent",
    "compare",
    "memory",
    "startup",
    "suite",
    "audit",
    "pixels",
)
"""The groups of rows, in the order of the table: ``--only`` names some, the full run all."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke test")
    parser.add_argument(
        "--only",
        choices=MEASUREMENTS,
        action="append",
        help="run only these measurements (repeatable)",
    )
    parser.add_argument(
        "--env",
        action="append",
        metavar="ENV_ID",
        help="record only these envs, such as ALE/Pong-v5 (repeatable)",
    )
    parser.add_argument(
        "--tmpfs",
        type=Path,
        default=Path("/dev/shm"),
        help="a memory-backed folder, to measure recording without the disk (default /dev/shm)",
    )
    args = parser.parse_args(argv)
    known = {case.env_id for case in RECORDING_CASES + VECTOR_CASES}
    unknown = sorted(set(args.env or ()) - known)
    if unknown:
        parser.error(
            f"--env {', '.join(unknown)}: not measured here; one of {', '.join(sorted(known))}"
        )
    quick = args.quick
    only = set(args.only or MEASUREMENTS)
    started = time.perf_counter()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="gym-goldens-bench-") as tmp:
        work = Path(tmp)
        if "recording" in only:
            with tempfile.TemporaryDirectory(
                dir=args.tmpfs if args.tmpfs.is_dir() else tmp
            ) as fast:
                # Into memory: the recorder's own cost. CartPole into a folder on disk too.
                place = "tmpfs" if args.tmpfs.is_dir() else "disk"
                for case in _selected(RECORDING_CASES, args.env):
                    folders = {place: Path(fast)}
                    if case.on_disk_too and place != "disk":
                        folders["disk"] = work / "disk"
                    rows += bench_recording(case, quick, folders)
        if "vector" in only:
            for case in _selected(VECTOR_CASES, args.env):
                rows += bench_vector_recording(case, quick, work)
        if "multiagent" in only:
            # Into memory, as the single envs: the recorder's own cost.
            with tempfile.TemporaryDirectory(
                dir=args.tmpfs if args.tmpfs.is_dir() else tmp
            ) as fast:
                rows += bench_multiagent_recording(quick, Path(fast))
        if "compare" in only:
            steps, episodes, rounds = (10_000, 5, 3) if quick else (100_000, 10, 7)
            rows += bench_compare(steps, episodes, rounds, work)
        if "memory" in only:
            rows += bench_recording_memory(1_000, 50_000 if quick else 200_000, work)
            rows += bench_memory(10_000, 100_000 if quick else 1_000_000, work)
        if "startup" in only:
            rows += bench_startup(5 if quick else 40, work)
        if "suite" in only:
            rows += bench_suite(3 if quick else 10, work)
        if "audit" in only:
            rows += bench_audit(quick, work)
        if "pixels" in only:
            rows += bench_pixels(quick, args.tmpfs)
    print(f"machine: {machine()}")
    print(f"command: python benchmarks/run.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    print()
    print_table(rows)
    print()
    print(f"total time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
