"""PettingZoo envs recorded, rolled out and replayed: records keyed by agent."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

pytest.importorskip("pettingzoo", reason="pettingzoo is not installed: pip install pettingzoo")

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # PettingZoo 1.27's env modules
    from pettingzoo.classic import connect_four_v3, rps_v2, tictactoe_v3

from gym_goldens import compare, read_recording, rollout
from gym_goldens.format.codec import Encoder
from gym_goldens.format.reader import Episode
from gym_goldens.record.agent_recorders import record_agents, replay_agents
from gym_goldens.record.agents import agent_api
from gym_goldens.record.multiagent import RecordAECTrajectory, RecordParallelTrajectory
from gym_goldens.record.writer import EpisodeWriter
from tests.support.agent_envs import Drifters
from tests.support.bombs import replay_peak


def _record(env: Any, folder: Path, *, seed: int = 0, steps: int = 12) -> list[Episode]:
    recorder = record_agents(env, folder)
    rollout(recorder, seed=seed, steps=steps)
    recorder.close()
    return list(read_recording(folder))


def test_pettingzoo_envs_and_their_wrappers_are_told_apart_from_gymnasium_envs() -> None:
    import gymnasium as gym

    assert agent_api(rps_v2.parallel_env()) == "parallel"
    assert agent_api(Drifters()) == "parallel"
    assert agent_api(connect_four_v3.env()) == "aec"  # OrderEnforcingWrapper(...)
    assert agent_api(connect_four_v3.raw_env()) == "aec"
    assert agent_api(gym.make("CartPole-v1")) is None
    assert agent_api(object()) is None


def test_a_parallel_step_holds_every_agents_values_and_the_agents_that_come_and_go(
    tmp_path: Path,
) -> None:
    # Drifters: agent_2 joins at cycle 2, agent_1 leaves at cycle 4, all truncate at 8.
    first, second = _record(Drifters(), tmp_path, steps=12)
    assert first.header is not None
    assert first.header["agent_api"] == "parallel"
    assert first.header["possible_agents"] == ["agent_0", "agent_1", "agent_2"]
    assert first.header["observation_spaces"]["agent_2"]["type"] == "Box"
    assert first.header["action_spaces"]["agent_0"] == {
        "type": "Discrete",
        "dtype": "int64",
        "shape": [],
        "n": 5,
        "start": 0,
    }
    reset, *steps = first.records
    assert reset["agents"] == ["agent_0", "agent_1"]
    assert sorted(reset["obs"]) == ["agent_0", "agent_1"]
    assert sorted(steps[0]["action"]) == ["agent_0", "agent_1"]
    assert steps[0]["terminated"] == {"agent_0": False, "agent_1": False}
    assert steps[0]["info"]["agent_1"]["cycle"] == 1
    changes = {step["t"]: step["agents"] for step in steps if "agents" in step}
    assert changes == {
        2: ["agent_0", "agent_1", "agent_2"],
        4: ["agent_0", "agent_2"],
        8: [],
    }
    assert steps[3]["terminated"]["agent_1"] is True
    assert sorted(steps[4]["action"]) == ["agent_0", "agent_2"]
    assert first.complete
    assert not second.complete  # cut off after 4 of its 8 steps, though agent_1 terminated
    rewards = [value for step in first.steps for value in step["reward"].values()]
    assert first.total_reward == pytest.approx(sum(rewards)) != 0


def test_an_aec_step_is_the_acting_agents_with_what_last_gave_it(tmp_path: Path) -> None:
    env = record_agents(connect_four_v3.env(), tmp_path)
    env.reset(seed=0)
    board = env.observe("player_0")["observation"].copy()
    env.step(3)
    env.step(4)
    env.close()
    (episode,) = read_recording(tmp_path)
    assert episode.header is not None
    assert episode.header["agent_api"] == "aec"
    reset, first, second = episode.records
    assert sorted(reset["obs"]) == ["player_0", "player_1"]
    assert first["agent"] == "player_0"
    assert first["action"] == {"player_0": 3}
    assert first["obs"]["player_0"]["observation"] == board.tolist()
    assert first["reward"] == {"player_0": 0}
    assert first["terminated"] == {"player_0": False}
    assert second["agent"] == "player_1"
    assert second["action"] == {"player_1": 4}
    # player_1 sees player_0's piece: the observation of its own turn.
    assert second["obs"]["player_1"]["observation"][5][3] == [0, 1]


def test_numpy_types_are_written_on_each_agents_first_step_only(tmp_path: Path) -> None:
    (episode, *_) = _record(tictactoe_v3.env(), tmp_path, steps=6)
    typed = [step["t"] for step in episode.steps if "dtypes" in step]
    assert typed == [1, 2]
    assert episode.steps[0]["dtypes"]["obs"]["player_1"] == {
        "action_mask": "int8[9]",
        "observation": "int8[3,3,2]",
    }


def test_rollouts_repeat_by_seed_and_seed_each_agents_space_as_documented(
    tmp_path: Path,
) -> None:
    for folder, seed in [("a", 3), ("b", 3), ("c", 4)]:
        _record(Drifters(), tmp_path / folder, seed=seed)
    assert compare(tmp_path / "a", tmp_path / "b").equal
    assert not compare(tmp_path / "a", tmp_path / "c").equal
    first_step = read_recording(tmp_path / "a")[0].steps[0]
    for index, agent in enumerate(["agent_0", "agent_1"]):
        space = Drifters().action_space(agent)
        space.seed(int(np.random.SeedSequence([3, index]).generate_state(1)[0]))
        assert first_step["action"][agent] == space.sample()


def test_rollouts_take_masked_actions_and_step_done_aec_agents_with_none(tmp_path: Path) -> None:
    episodes = _record(connect_four_v3.env(), tmp_path, seed=5, steps=200)
    assert len(episodes) > 3
    for episode in episodes:
        for step in episode.steps:
            agent = step["agent"]
            action = step["action"][agent]
            if step["terminated"][agent] or step["truncated"][agent]:
                assert action is None
            else:
                assert step["obs"][agent]["action_mask"][action] == 1
        assert episode.complete or episode is episodes[-1]


class _MaskedInInfo(Drifters):
    """Drifters whose info lets agent_0 take action 2 only."""

    def _infos(self, agents: list[str]) -> dict[str, dict[str, Any]]:
        infos = super()._infos(agents)
        if "agent_0" in infos:
            infos["agent_0"]["action_mask"] = np.array([0, 0, 1, 0, 0], dtype=np.int8)
        return infos


def test_rollouts_take_the_action_mask_of_an_info(tmp_path: Path) -> None:
    episodes = _record(_MaskedInInfo(), tmp_path, steps=12)
    actions = [step["action"]["agent_0"] for e in episodes for step in e.steps]
    assert set(actions) == {2}
    others = [step["action"].get("agent_1") for step in episodes[0].steps]
    assert len(set(others)) > 1


@pytest.mark.parametrize(
    "make_env",
    [Drifters, lambda: rps_v2.parallel_env(max_cycles=5), connect_four_v3.env],
    ids=["drifters", "rps", "connect_four"],
)
def test_replaying_a_golden_records_it_again_whatever_the_seed(
    make_env: Any, tmp_path: Path
) -> None:
    _record(make_env(), tmp_path / "golden", seed=0, steps=30)
    replayed = replay_agents(
        record_agents(make_env(), tmp_path / "replay"),
        tmp_path / "golden",
        max_decompressed_size=1 << 30,
    )
    rollout(replayed, seed=9, steps=30)
    replayed.close()
    assert compare(tmp_path / "golden", tmp_path / "replay").equal
    _record(make_env(), tmp_path / "other", seed=9, steps=30)
    assert not compare(tmp_path / "golden", tmp_path / "other").equal


def test_the_recorders_refuse_the_other_api_and_a_step_before_reset(tmp_path: Path) -> None:
    import gymnasium as gym

    with pytest.raises(TypeError, match="expects a PettingZoo ParallelEnv"):
        RecordParallelTrajectory(connect_four_v3.env(), tmp_path)
    with pytest.raises(TypeError, match="expects a PettingZoo AECEnv"):
        RecordAECTrajectory(Drifters(), tmp_path)
    with pytest.raises(gym.error.ResetNeeded, match="call reset"):
        RecordParallelTrajectory(Drifters(), tmp_path).step({})


def test_gymnasium_envs_never_import_pettingzoo() -> None:
    probe = (
        "import sys, gymnasium as gym\n"
        "from gym_goldens import rollout\n"
        "from gym_goldens.plugin.check import TrajectoryChecks\n"
        "rollout(gym.make('CartPole-v1'), seed=0, steps=5)\n"
        "print('pettingzoo' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


_FLOATS = st.floats(allow_nan=True, allow_infinity=True)
_INFO = st.dictionaries(
    st.sampled_from(["x", "$cost", "name"]),
    st.one_of(_FLOATS, st.none(), st.integers(-(2**70), 2**70), st.text(max_size=3)),
    max_size=3,
)
_ARRAYS = hnp.arrays(
    st.sampled_from([np.float32, np.float64, np.int64, np.uint8]),
    hnp.array_shapes(max_dims=2, max_side=4),
)


@settings(max_examples=100, deadline=None)
@given(obs=_ARRAYS, other=_ARRAYS, reward=st.one_of(_FLOATS, st.integers(-3, 3)), info=_INFO)
def test_the_step_lines_of_agents_are_the_careful_encoding(
    obs: np.ndarray[Any, Any], other: np.ndarray[Any, Any], reward: Any, info: dict[str, Any]
) -> None:
    # The writer's fast path for multi-agent steps, also where it keeps a
    # step's types (retyped=False): what the careful encoder writes.
    encoder = Encoder(max_array_size=8)
    fields = {
        "action": {"a": 1, "b": None},
        "obs": {"a": obs, "b": other},
        "reward": {"a": reward, "b": 0.5},
        "terminated": {"a": False, "b": True},
        "truncated": {"a": False, "b": False},
        "info": {"a": info, "b": {}},
    }
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trajectory.jsonl"
        writer = EpisodeWriter(path, encoder, compress=False, flush_every=None, full_every=None)
        writer.begin(b'{"event":"header"}')
        writer.step_record(dict(fields), done=False, retyped=True)
        writer.step_record(dict(fields), done=True, retyped=False)
        lines = path.read_bytes().splitlines()
    expected = [encoder.encode_careful({"event": "step", "t": t, **fields}) for t in (1, 2)]
    assert lines[1:] == expected


def test_storage_options_apply_to_multi_agent_recordings(tmp_path: Path) -> None:
    recorder = record_agents(
        Drifters(), tmp_path / "a", compress=True, full_every=3, max_array_size={"obs.agent_0": 1}
    )
    rollout(recorder, seed=0, steps=8)
    recorder.close()
    assert (tmp_path / "a" / "trajectory.jsonl.gz").is_file()
    steps = read_recording(tmp_path / "a")[0].steps
    assert [step["t"] for step in steps if "digest" in step] == [2, 4, 5, 7]
    assert type(steps[0]["obs"]["agent_0"]).__name__ == "ArraySummary"
    assert isinstance(steps[0]["obs"]["agent_1"], list)
    plain = record_agents(
        Drifters(), tmp_path / "b", full_every=3, max_array_size={"obs.agent_0": 1}
    )
    rollout(plain, seed=0, steps=8)
    plain.close()
    assert compare(tmp_path / "a", tmp_path / "b").equal


def test_a_replay_keeps_one_episode_of_its_golden_however_many_it_holds(tmp_path: Path) -> None:
    """What a multi-agent replay holds does not grow with the golden's episodes."""
    _record(Drifters(), tmp_path / "real", steps=3)
    with (tmp_path / "real" / "trajectory.jsonl").open("rb") as handle:
        header = handle.readline()

    def peak(episodes: int) -> int:
        return replay_peak(
            tmp_path,
            header,
            episodes,
            lambda bomb: replay_agents(Drifters(), bomb, max_decompressed_size=1 << 30),
        )

    small, large = peak(1_000), peak(20_000)
    # Twenty times the episodes: holding each one would take about twenty times the memory.
    assert large < 2 * small, f"{small:,} bytes for 1,000 episodes, {large:,} for 20,000"
