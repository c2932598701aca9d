"""Recording vector envs: layout, every autoreset mode, info masks, comparison."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import orjson
import pytest
from gymnasium.spaces import Box
from gymnasium.vector import AutoresetMode

from gym_goldens import Recording, RecordVectorTrajectory, compare, read_recording
from gym_goldens.plugin.store import update_golden
from gym_goldens.present.report import format_comparison
from gym_goldens.record.vector import sub_env_info, sub_env_infos
from tests.support.envs import ScriptedEnv

NUM_ENVS = 4
STEPS = 120


def make_cartpoles(mode: AutoresetMode | None = None) -> gym.vector.VectorEnv[Any, Any, Any]:
    if mode is None:
        return gym.make_vec("CartPole-v1", num_envs=NUM_ENVS)  # the native CartPoleVectorEnv
    return gym.make_vec(
        "CartPole-v1",
        num_envs=NUM_ENVS,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": mode},
    )


def record_cartpoles(path: Path, mode: AutoresetMode | None = None, seed: int = 0) -> Recording:
    envs = RecordVectorTrajectory(make_cartpoles(mode), path)
    envs.action_space.seed(seed)
    envs.reset(seed=seed)
    for _ in range(STEPS):
        _, _, terminations, truncations, _ = envs.step(envs.action_space.sample())
        done = terminations | truncations
        if mode == AutoresetMode.DISABLED and done.any():
            envs.reset(options={"reset_mask": done})
    envs.close()
    return read_recording(path)


def assert_replays_like_single_envs(recording: Recording, seed: int) -> None:
    """Each sub-env's episodes are those of a single CartPole given the same actions."""
    for index, sub in enumerate(recording.envs):
        single = gym.make("CartPole-v1")
        for number, episode in enumerate(sub):
            obs, _ = single.reset(seed=seed + index if number == 0 else None)
            reset = episode.records[0]
            assert reset["event"] == "reset"
            assert reset["episode"] == number
            np.testing.assert_array_equal(np.float32(reset["obs"]), obs)
            for step in episode.steps:
                obs, reward, terminated, truncated, _ = single.step(step["action"])
                np.testing.assert_array_equal(np.float32(step["obs"]), obs)
                assert (step["reward"], step["terminated"], step["truncated"]) == (
                    reward,
                    terminated,
                    truncated,
                )
            if number < len(sub) - 1:
                assert episode.complete, f"sub-env {index} episode {number} did not end"


class TestLayout:
    def test_native_cartpole_vector_env(self, tmp_path: Path) -> None:
        recording = record_cartpoles(tmp_path)
        assert recording.is_vector
        assert sorted(p.name for p in tmp_path.iterdir()) == [f"env_{i}" for i in range(NUM_ENVS)]
        for index, sub in enumerate(recording.envs):
            episodes = list(sub)
            assert len(episodes) > 1
            # NextStep: every vector step is a step of the sub-env or its autoreset.
            steps = sum(len(episode.steps) for episode in episodes)
            assert steps + len(episodes) - 1 == STEPS
            header = episodes[0].header
            assert header is not None
            assert header["vector"] == {
                "autoreset_mode": "NextStep",
                "index": index,
                "num_envs": NUM_ENVS,
            }
            assert header["vectorization_mode"] == "vector_entry_point"
            assert header["observation_space"]["shape"] == [4]
            assert header["action_space"]["type"] == "Discrete"
            for episode in episodes[1:]:
                assert episode.header is not None
                assert episode.header["vector"]["index"] == index
                assert episode.header["reset"] == {"autoreset": True, "options": None, "seed": None}

    def test_episodes_iterate_with_their_sub_env(self, tmp_path: Path) -> None:
        recording = record_cartpoles(tmp_path, AutoresetMode.NEXT_STEP)
        labels = [(episode.env, episode.index) for episode in recording]
        assert labels[0] == (0, 0)
        assert {env for env, _ in labels} == set(range(NUM_ENVS))
        assert len(labels) == len(recording)
        assert recording.files == [
            tmp_path / f"env_{i}" / "trajectory.jsonl" for i in range(NUM_ENVS)
        ]
        with pytest.raises(TypeError, match=r"recording.envs\[i\]"):
            recording[0]

    def test_refuses_a_single_env(self, tmp_path: Path) -> None:
        with pytest.raises(TypeError, match=r"expects a gymnasium\.vector\.VectorEnv"):
            RecordVectorTrajectory(gym.make("CartPole-v1"), tmp_path)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", list(AutoresetMode), ids=lambda mode: mode.value)
class TestAutoresetModes:
    def test_sub_envs_replay_like_single_envs(self, tmp_path: Path, mode: AutoresetMode) -> None:
        recording = record_cartpoles(tmp_path, mode, seed=3)
        assert all(len(sub) > 1 for sub in recording.envs)
        assert_replays_like_single_envs(recording, seed=3)
        header = recording.envs[0][0].header
        assert header is not None
        assert header["vector"]["autoreset_mode"] == mode.value
        assert header["vectorization_mode"] == "sync"

    def test_recording_again_matches(self, tmp_path: Path, mode: AutoresetMode) -> None:
        record_cartpoles(tmp_path / "golden", mode)
        record_cartpoles(tmp_path / "actual", mode)
        assert compare(tmp_path / "golden", tmp_path / "actual").equal


def test_same_step_records_the_final_observation(tmp_path: Path) -> None:
    recording = record_cartpoles(tmp_path, AutoresetMode.SAME_STEP)
    for sub in recording.envs:
        for episode in list(sub)[:-1]:
            last = episode.steps[-1]
            # The last observation is the one that ended the episode, not the next reset.
            x, _, angle, _ = last["obs"]
            assert last["truncated"] or abs(x) > 2.4 or abs(angle) > 0.2095
            assert "final_obs" not in last["info"]


def test_disabled_mode_records_masked_resets_only(tmp_path: Path) -> None:
    recording = record_cartpoles(tmp_path, AutoresetMode.DISABLED)
    later = recording.envs[0][1].header
    assert later is not None
    # The mask is the vector env's business; the sub-env saw no other option.
    assert later["reset"] == {"options": {}, "seed": None}


def test_native_and_sync_differ_and_the_header_says_why(tmp_path: Path) -> None:
    record_cartpoles(tmp_path / "golden")
    record_cartpoles(tmp_path / "actual", AutoresetMode.NEXT_STEP)
    comparison = compare(tmp_path / "golden", tmp_path / "actual")
    assert not comparison.equal
    message = format_comparison(comparison, nodeid="test_v.py::test_cartpoles")
    assert (
        "recorded with another vectorization mode (golden -> actual): vector_entry_point -> sync"
        in message
    )
    assert "header differs" not in message
    assert "first divergence: sub-env 0, episode 0, reset, obs" in message


def test_a_divergence_names_the_sub_env(tmp_path: Path) -> None:
    record_cartpoles(tmp_path / "golden", AutoresetMode.NEXT_STEP)
    record_cartpoles(tmp_path / "actual", AutoresetMode.NEXT_STEP)
    # Change one observation of sub-env 2, episode 1: the 4th line of that episode.
    path = tmp_path / "actual" / "env_2" / "trajectory.jsonl"
    lines = path.read_bytes().splitlines()
    target = read_recording(tmp_path / "actual").envs[2][1].line - 1 + 3
    record = orjson.loads(lines[target])
    record["obs"][0] += 0.5
    lines[target] = orjson.dumps(record, option=orjson.OPT_SORT_KEYS)
    path.write_bytes(b"\n".join(lines) + b"\n")
    comparison = compare(tmp_path / "golden", tmp_path / "actual")
    (differing,) = comparison.differing
    assert (differing.env, differing.index) == (2, 1)
    message = format_comparison(comparison)
    assert "first divergence: sub-env 2, episode 1, step t=2, obs[0]" in message


class TestInfoMasks:
    def make_envs(self) -> gym.vector.VectorEnv[Any, Any, Any]:
        space = Box(-1.0, 1.0, (1,), dtype=np.float32)
        observations = [np.zeros(1, dtype=np.float32)] * 4

        def make(index: int) -> gym.Env[Any, Any]:
            # Sub-env 1 reports "hit" (and a nested "stats" dict) on step 2 only.
            infos: list[dict[str, Any]] = [{}, {}, {}, {}]
            if index == 1:
                infos[2] = {"hit": 7, "stats": {"energy": 0.5}}
            return ScriptedEnv(space, observations, infos=infos)

        return gym.vector.SyncVectorEnv([lambda i=i: make(i) for i in range(3)])

    def test_each_sub_env_keeps_its_own_keys(self, tmp_path: Path) -> None:
        envs = RecordVectorTrajectory(self.make_envs(), tmp_path)
        envs.reset(seed=0)
        _, _, _, _, infos = envs.step(np.array([0, 0, 0]))
        _, _, _, _, infos = envs.step(np.array([0, 0, 0]))
        assert list(infos["_hit"]) == [False, True, False]
        envs.close()
        recording = read_recording(tmp_path)
        infos_by_env = [[step["info"] for step in sub[0].steps] for sub in recording.envs]
        assert infos_by_env[0] == [{}, {}]
        assert infos_by_env[1] == [{}, {"hit": 7, "stats": {"energy": 0.5}}]
        assert recording.envs[1][0].steps[1]["dtypes"]["info"] == {
            "hit": "int64",
            "stats": {"energy": "float64"},
        }

    def test_sub_env_info_unbatches_nested_masks(self) -> None:
        infos = {
            "x": np.array([1.0, 2.0]),
            "_x": np.array([True, False]),
            "episode": {"r": np.array([0.0, 5.0]), "_r": np.array([False, True])},
            "_episode": np.array([False, True]),
        }
        assert sub_env_info(infos, 0) == {"x": 1.0}
        assert sub_env_info(infos, 1) == {"episode": {"r": 5.0}}

    def test_sub_env_infos_keep_numpy_types_key_order_and_short_masks(self) -> None:
        # Every mask set (each info built at once) and some unset (key by key)
        # give the same items, of the same numpy types, in the order of the keys.
        full = {
            "x": np.array([1.0, 2.0, 3.0], np.float32),
            "_x": np.array([True, True, True]),
            "rows": np.zeros((3, 2), np.int8),
            "same": 7,
        }
        split = sub_env_infos(full, 3)
        assert [list(info) for info in split] == [["x", "rows", "same"]] * 3
        assert [type(info["x"]) for info in split] == [np.float32] * 3
        assert [info["rows"].dtype for info in split] == [np.int8] * 3
        assert [info["same"] for info in split] == [7, 7, 7]
        short = {**full, "_x": np.array([True, False])}  # no flag for sub-env 2
        assert [list(info) for info in sub_env_infos(short, 3)] == [
            ["x", "rows", "same"],
            ["rows", "same"],
            ["rows", "same"],
        ]


class TestGoldenUpdates:
    def test_vector_goldens_are_created_kept_and_pruned(self, tmp_path: Path) -> None:
        record_cartpoles(tmp_path / "run1", AutoresetMode.NEXT_STEP)
        golden = tmp_path / "golden"
        assert update_golden(tmp_path / "run1", golden).status == "created"
        assert compare(golden, tmp_path / "run1").equal
        assert update_golden(tmp_path / "run1", golden).status == "unchanged"

        fewer = RecordVectorTrajectory(
            gym.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync"), tmp_path / "run2"
        )
        fewer.reset(seed=0)
        fewer.step(np.array([0, 1]))
        fewer.close()
        update = update_golden(tmp_path / "run2", golden)
        assert update.status == "updated"
        assert sorted(p.name for p in golden.iterdir()) == ["env_0", "env_1"]
        assert compare(golden, tmp_path / "run2").equal

    def test_a_missing_sub_env_is_reported(self, tmp_path: Path) -> None:
        record_cartpoles(tmp_path / "golden", AutoresetMode.NEXT_STEP)
        record_cartpoles(tmp_path / "actual", AutoresetMode.NEXT_STEP)
        for episode in (tmp_path / "actual" / "env_3").iterdir():
            episode.unlink()
        (tmp_path / "actual" / "env_3").rmdir()
        comparison = compare(tmp_path / "golden", tmp_path / "actual")
        missing = comparison.differing
        assert {episode.env for episode in missing} == {3}
        assert "sub-env 3, episode 0 is missing from the actual recording" in format_comparison(
            comparison
        )


def test_tuple_observations_split_per_sub_env(tmp_path: Path) -> None:
    envs = RecordVectorTrajectory(
        gym.make_vec("Blackjack-v1", num_envs=2, vectorization_mode="sync"), tmp_path
    )
    obs, _ = envs.reset(seed=5)
    envs.step(np.array([0, 0]))
    envs.close()
    recording = read_recording(tmp_path)
    for index, sub in enumerate(recording.envs):
        assert sub[0].records[0]["obs"] == [int(part[index]) for part in obs]
        assert sub[0].steps[0]["terminated"] is True  # sticking ends a hand


def test_sync_and_async_vectorization_record_the_same(tmp_path: Path) -> None:
    for mode in ("sync", "async"):
        # forkserver: fork() in a process with threads (an xdist worker's) can deadlock.
        options = {"context": "forkserver"} if mode == "async" else {}
        vector = gym.make_vec(
            "CartPole-v1", num_envs=2, vectorization_mode=mode, vector_kwargs=options
        )
        envs = RecordVectorTrajectory(vector, tmp_path / mode)
        envs.action_space.seed(1)
        envs.reset(seed=1)
        for _ in range(40):
            envs.step(envs.action_space.sample())
        envs.close()
    header = read_recording(tmp_path / "async").envs[1][0].header
    assert header is not None
    assert header["vectorization_mode"] == "async"
    assert compare(tmp_path / "sync", tmp_path / "async").equal


class TestReading:
    def test_sub_env_folders_must_be_numbered_from_zero(self, tmp_path: Path) -> None:
        from gym_goldens import GoldenFormatError

        record_cartpoles(tmp_path, AutoresetMode.NEXT_STEP)
        (tmp_path / "env_1").rename(tmp_path / "env_7")
        with pytest.raises(GoldenFormatError, match="expected sub-env folders env_0 to env_3"):
            read_recording(tmp_path)

    def test_a_vector_golden_is_recorded_when_a_sub_env_holds_a_file(self, tmp_path: Path) -> None:
        from gym_goldens.format.paths import resolve_golden

        assert not resolve_golden(tmp_path, tmp_path / "nothing").recorded
        (tmp_path / "env_0").mkdir()
        assert not resolve_golden(tmp_path, tmp_path).recorded
        record_cartpoles(tmp_path, AutoresetMode.NEXT_STEP)
        golden = resolve_golden(tmp_path, tmp_path)
        assert golden.recorded
        envs = range(len(golden.envs))
        assert [env.env for env in golden.envs] == list(envs)
        assert golden.all_files == tuple(tmp_path / f"env_{i}" / "trajectory.jsonl" for i in envs)


def test_dtypes_are_written_on_step_1_and_where_they_change(tmp_path: Path) -> None:
    # The info value's numpy type changes from step to step (float64, float32,
    # float32, float64), so every step is walked and only changes are written.
    infos: list[dict[str, Any]] = [{}, {"v": 1.0}, {"v": np.float32(2)}, {"v": np.float32(3)}]
    infos.append({"v": 4.0})

    def make() -> gym.Env[Any, Any]:
        observations = [np.full(2, t / 10, dtype=np.float32) for t in range(5)]
        return ScriptedEnv(Box(0, 1, (2,), np.float32), observations, infos=infos)

    envs = RecordVectorTrajectory(gym.vector.SyncVectorEnv([make, make]), tmp_path)
    envs.reset(seed=0)
    for _ in range(9):  # two episodes of 4 steps and the autoreset between them
        envs.step(np.array([0, 1]))
    envs.close()
    for sub in read_recording(tmp_path).envs:
        assert len(sub) == 2
        for episode in sub:
            written = [step.get("dtypes") for step in episode.steps]
            assert [field is not None for field in written] == [True, True, False, True]
            assert written[0] == {
                "action": "int64",
                "info": {"v": "float64"},
                "obs": "float32[2]",
                "reward": "float64",
            }
            assert written[1] == {**written[0], "info": {"v": "float32"}}
            assert written[3] == written[0]


@pytest.mark.parametrize("flush_every", [1, 3, 4])
def test_flush_every_writes_each_sub_env_when_it_holds_that_many_lines(
    tmp_path: Path, flush_every: int
) -> None:
    pendulums = gym.make_vec("Pendulum-v1", num_envs=2, vectorization_mode="sync")
    envs = RecordVectorTrajectory(pendulums, tmp_path, flush_every=flush_every)
    paths = envs.paths
    envs.action_space.seed(0)
    envs.reset(seed=0)
    on_disk, buffered = 0, 2  # per sub-env: the header and reset lines
    for action in [*["step"] * 6, "flush", *["step"] * 5]:
        if action == "flush":
            envs.flush()
            on_disk, buffered = on_disk + buffered, 0
        else:
            envs.step(envs.action_space.sample())
            buffered += 1
            if buffered >= flush_every:
                on_disk, buffered = on_disk + buffered, 0
        for path in paths:
            written = len(path.read_bytes().splitlines()) if path.exists() else 0
            assert written == on_disk, (action, path)
    envs.close()
    assert [len(path.read_bytes().splitlines()) for path in paths] == [on_disk + buffered] * 2
