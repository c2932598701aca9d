"""The recorder's fast paths write what the careful encoder writes, and its flush policy."""

from __future__ import annotations

import datetime
import enum
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gym_goldens import compare
from gym_goldens.errors import UnrecordableValueError, UnsafeGoldenPathError
from gym_goldens.format import dtypes
from gym_goldens.format.codec import DEFAULT_MAX_ARRAY_SIZE, ArraySummary, Encoder
from gym_goldens.format.header import FORMAT_NAME, FORMAT_VERSION, describe_env
from gym_goldens.format.limits import MAX_LINE_BYTES
from gym_goldens.format.lines import iter_episodes, iter_lines
from gym_goldens.format.reader import read_recording
from gym_goldens.record.single import RecordTrajectory
from gym_goldens.record.writer import Storage
from tests.support.envs import ScriptedEnv, run


class _Recorded(gym.Wrapper[Any, Any, Any, Any]):
    """Keeps what the env returned, to build the expected records."""

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self.steps: list[tuple[Any, tuple[Any, ...]]] = []

    def step(self, action: Any) -> Any:
        result = self.env.step(action)
        self.steps.append((action, result))
        return result


@pytest.mark.parametrize("env_id", ["CartPole-v1", "FrozenLake-v1", "Pendulum-v1", "Blackjack-v1"])
def test_recorded_lines_are_the_careful_encoding(tmp_path: Path, env_id: str) -> None:
    inner = _Recorded(gym.make(env_id))
    env = RecordTrajectory(inner, tmp_path)
    env.action_space.seed(1)
    obs, info = env.reset(seed=3)
    while not inner.steps or not (inner.steps[-1][1][2] or inner.steps[-1][1][3]):
        env.step(env.action_space.sample())
    env.close()

    encoder = Encoder()
    header = {
        "event": "header",
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "reset": {"seed": 3, "options": None},
        "storage": Storage(DEFAULT_MAX_ARRAY_SIZE).header,
        **describe_env(inner),
    }
    reset = {"event": "reset", "episode": 0, "obs": obs, "info": info}
    reset_types = dtypes.signature({"obs": obs, "info": info})
    if reset_types is not None:
        reset["dtypes"] = dtypes.to_json(reset_types)
    expected = [encoder.encode_careful(header), encoder.encode_careful(reset)]
    expected += _careful_steps(encoder, inner.steps)
    assert [raw for _, raw in iter_lines(tmp_path / "trajectory.jsonl")] == expected


@pytest.mark.parametrize("env_id", ["CartPole-v1", "FrozenLake-v1"])
def test_step_1_of_every_episode_names_its_numpy_types(tmp_path: Path, env_id: str) -> None:
    # Step 1 of a later episode takes the lean path when its types are those of
    # the last step before it; it must still write them, as every step 1 does.
    inner = _Recorded(gym.make(env_id))
    env = RecordTrajectory(inner, tmp_path)
    env.action_space.seed(1)
    env.reset(seed=3)
    ends: list[int] = []
    while len(ends) < 3:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            ends.append(len(inner.steps))
            env.reset()
    env.close()

    encoder = Encoder()
    expected = []
    for start, end in zip([0, *ends], ends, strict=False):
        expected += _careful_steps(encoder, inner.steps[start:end])
    lines = iter_lines(tmp_path / "trajectory.jsonl")
    assert [raw for _, raw in lines if b'"event":"step"' in raw] == expected


def _careful_steps(encoder: Encoder, steps: list[tuple[Any, tuple[Any, ...]]]) -> list[bytes]:
    """The step lines as the careful encoder writes them, with a full walk of the types."""
    lines = []
    previous = None
    for t, (action, (obs, reward, terminated, truncated, info)) in enumerate(steps, 1):
        record = {
            "event": "step",
            "t": t,
            "action": action,
            "obs": obs,
            "reward": reward,
            "terminated": bool(terminated),
            "truncated": bool(truncated),
            "info": info,
        }
        types = {
            "action": dtypes.signature(action),
            "obs": dtypes.signature(obs),
            "reward": dtypes.signature(reward),
            "info": dtypes.signature(info),
        }
        if types != previous:
            previous = types
            typed = {key: found for key, found in types.items() if found is not None}
            if typed:
                record["dtypes"] = dtypes.to_json(typed)
        lines.append(encoder.encode_careful(record))
    return lines


def test_the_header_follows_the_seed_of_each_reset(tmp_path: Path) -> None:
    env = RecordTrajectory(gym.make("CartPole-v1"), tmp_path)
    for seed in [5, None, 5, 6]:
        env.reset(seed=seed)
    env.reset(seed=7, options={"low": -0.1})
    env.close()
    headers = [episode.header for episode in read_recording(tmp_path)]
    resets = [header["reset"] for header in headers if header is not None]
    assert resets == [
        {"seed": 5, "options": None},
        {"seed": None, "options": None},
        {"seed": 5, "options": None},
        {"seed": 6, "options": None},
        {"seed": 7, "options": {"low": -0.1}},
    ]


_FLOATS = st.floats(allow_nan=True, allow_infinity=True)
_INFO = st.dictionaries(
    st.sampled_from(["x", "$cost", "name", "1"]),
    st.one_of(_FLOATS, st.none(), st.integers(-(2**70), 2**70), st.text(max_size=3)),
    max_size=3,
)
_ARRAYS = hnp.arrays(
    st.sampled_from([np.float32, np.float64, np.int64, np.uint8, np.bool_]),
    hnp.array_shapes(max_dims=2, max_side=4),
)


@settings(max_examples=200, deadline=None)
@given(obs=_ARRAYS, reward=st.one_of(_FLOATS, st.integers(-3, 3)), info=_INFO)
def test_fast_and_careful_encodings_agree(
    obs: np.ndarray[Any, Any], reward: Any, info: dict[str, Any]
) -> None:
    encoder = Encoder(max_array_size=8)
    record = {"event": "step", "t": 1, "obs": obs, "reward": reward, "info": info}
    assert encoder.encode(record) == encoder.encode_careful(record)


class _Mode(enum.Enum):
    A = "x"
    B = "y"


def test_the_recorder_writes_enums_datetimes_and_uuids_as_the_careful_encoder(
    tmp_path: Path,
) -> None:
    # The step loop's own fast path, beside a None (careful) and without one (fast).
    moment = datetime.datetime(2024, 5, 1, 12, 30, tzinfo=datetime.timezone.utc)
    infos = [
        {},
        {"mode": _Mode.A, "when": moment, "id": uuid.UUID(int=1)},
        {"mode": _Mode.B, "when": moment.date(), "id": uuid.UUID(int=2), "gap": None},
        {"mode": _Mode.A, "stamp": np.datetime64("2024-05-01T12:30:00")},
    ]
    inner = _Recorded(ScriptedEnv(spaces.Discrete(2), [0, 1, 0, 1], infos=infos))
    env = RecordTrajectory(inner, tmp_path)
    env.reset(seed=0)
    for _ in range(3):
        env.step(0)
    env.close()
    written = [raw for _, raw in iter_lines(tmp_path / "trajectory.jsonl")][2:]
    assert written == _careful_steps(Encoder(), inner.steps)
    assert b'"mode":"y"' in written[1]
    assert b'"when":"2024-05-01"' in written[1]


def _run(tmp_path: Path, body: str) -> None:
    script = textwrap.dedent(
        """
        import os, sys
        import gymnasium as gym
        from gym_goldens import RecordTrajectory
        out = sys.argv[1]
        """
    ) + textwrap.dedent(body)
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=False)


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_completed_episodes_survive_a_crash_of_the_process(tmp_path: Path, compress: bool) -> None:
    # os._exit: no close(), no atexit, no finally - like a segfault or SIGKILL.
    # Compressed: each episode is a complete gzip member, so it reads back too.
    _run(
        tmp_path,
        f"""
        env = RecordTrajectory(gym.make("CartPole-v1"), out, compress={compress})
        env.reset(seed=0)
        episodes = 0
        while True:
            _, _, terminated, truncated, _ = env.step(0)
            if terminated or truncated:
                episodes += 1
                if episodes == 2:
                    env.reset()
                    env.step(0)
                    os._exit(1)
                env.reset()
        """,
    )
    recording = read_recording(tmp_path)
    assert [episode.complete for episode in recording] == [True, True]


def test_flush_every_keeps_the_steps_of_a_crashed_episode(tmp_path: Path) -> None:
    _run(
        tmp_path,
        """
        env = RecordTrajectory(gym.make("Pendulum-v1"), out, flush_every=10)
        env.reset(seed=0)
        for _ in range(57):
            env.step(env.action_space.sample())
        os._exit(1)
        """,
    )
    (episode,) = read_recording(tmp_path)
    assert not episode.complete
    # At most the last flush_every - 1 lines were still buffered.
    assert 57 - 10 < len(episode.steps) < 57
    assert [step["t"] for step in episode.steps] == list(range(1, len(episode.steps) + 1))


_PEAK_RSS_SCRIPT = """
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


def _peak_rss_mib(folder: Path, steps: int) -> float:
    """The peak resident set of a fresh process that records one episode of ``steps`` steps."""
    output = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS_SCRIPT, str(folder), str(steps)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return int(output.split()[-1]) / 1024


@pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="reads the peak resident set from /proc (Linux)"
)
def test_a_long_episode_takes_memory_near_what_it_writes(tmp_path: Path) -> None:
    # 50,000 Pendulum steps are about 8 MB of lines. Kept as one bytes object
    # per line, as orjson returns them, they took about 4 kB each (200 MB).
    small = _peak_rss_mib(tmp_path / "small", 1_000)
    large = _peak_rss_mib(tmp_path / "large", 50_000)
    written = (tmp_path / "large" / "trajectory.jsonl").stat().st_size / 2**20
    assert written > 5
    assert large - small < 30, f"peak RSS {small:.0f} MiB at 1,000 steps, {large:.0f} MiB at 50,000"


def test_an_episode_is_on_disk_when_it_ends(tmp_path: Path) -> None:
    env = RecordTrajectory(gym.make("FrozenLake-v1", is_slippery=False), tmp_path)
    env.reset(seed=0)
    for action in [1, 1, 2, 1, 2, 2]:  # down, down, right, down, right, right: the goal
        _, _, terminated, _, _ = env.step(action)
        if terminated:
            break
    assert terminated
    (episode,) = read_recording(tmp_path)  # before close()
    assert episode.complete
    env.close()


_OBS = st.sampled_from(
    [
        np.zeros(2, np.float32),
        np.ones(2, np.float64),
        np.zeros(3, np.float32),
        np.zeros((1, 2), np.float32),
        [0.5, 1.0],
        {"a": np.zeros(2, np.float32)},
        3,
    ]
)
_REWARDS = st.sampled_from([0.0, 1, np.float32(0.5), np.float64(1.5), True])
_INFOS = st.sampled_from(
    [{}, {"p": 1.0}, {"p": 1.0, "q": "x"}, {"p": np.float32(1.0)}, {"n": [np.int8(1)]}]
)
_ACTIONS = st.sampled_from([0, np.int64(1), np.array([0.5], np.float32), np.str_("go")])


@settings(max_examples=150, deadline=None)
@given(
    episodes=st.lists(
        st.lists(st.tuples(_ACTIONS, _OBS, _REWARDS, _INFOS), min_size=1, max_size=6),
        min_size=1,
        max_size=3,
    ),
    first=st.tuples(_OBS, _INFOS),
)
def test_types_that_change_between_steps_and_episodes_are_written_as_walked(
    tmp_path_factory: pytest.TempPathFactory,
    episodes: list[list[tuple[Any, Any, Any, dict[str, Any]]]],
    first: tuple[Any, dict[str, Any]],
) -> None:
    # The recorder skips the walk of the types while a cheap key of them stays
    # the same, also across episodes; the lines must be those of a full walk.
    folder = tmp_path_factory.mktemp("types")
    written, expected = _recorded_and_careful(folder, episodes, first, Encoder())
    assert written == expected


_LEAN_OBS = st.sampled_from(
    [
        np.zeros(2, np.float32),
        np.array([np.nan, 1.0], np.float32),
        np.array([np.inf, 1.0], np.float32),
        np.zeros(2, np.float64),
        np.zeros(5, np.float32),  # past max_array_size=4: a summary
    ]
)
_LEAN_REWARDS = st.sampled_from([0.0, float("nan"), np.float64(1.5), np.float32(-np.inf)])
_LEAN_INFOS = st.sampled_from(
    [
        {},
        {"p": 1.0},
        {"$p": 1.0},
        {"p": None},
        {"p": float("nan")},
        {"p": 2**70},
        {"p": np.float32(1.0)},
        {"x": np.float64(0.5), "$c": np.float64(1.0)},
        {"x": np.float64(0.5), "c": np.float64(1.0)},
        {"x": np.float64(0.5), "c": np.float32(1.0)},
    ]
)
_LEAN_ACTIONS = st.sampled_from([0, np.int64(1), np.zeros(5, np.float32), np.zeros(1, np.float32)])


@settings(max_examples=200, deadline=None)
@given(
    episodes=st.lists(
        st.lists(
            st.tuples(_LEAN_ACTIONS, _LEAN_OBS, _LEAN_REWARDS, _LEAN_INFOS), min_size=1, max_size=12
        ),
        min_size=1,
        max_size=3,
    ),
    first=st.tuples(_LEAN_OBS, _LEAN_INFOS),
)
def test_steps_like_the_step_before_are_written_as_the_careful_encoder_writes_them(
    tmp_path_factory: pytest.TempPathFactory,
    episodes: list[list[tuple[Any, Any, Any, dict[str, Any]]]],
    first: tuple[Any, dict[str, Any]],
) -> None:
    # A step of the types and info keys of the step before takes the lean path,
    # which looks for null alone (and for "$" in an info of plain values): a
    # NaN, a None, a "$" key, a big int, a new numpy type or a large array at
    # any step must still be written as the careful encoder writes it.
    folder = tmp_path_factory.mktemp("lean")
    written, expected = _recorded_and_careful(
        folder, episodes, first, Encoder(max_array_size=4), max_array_size=4
    )
    assert written == expected


def _recorded_and_careful(
    folder: Path,
    episodes: list[list[tuple[Any, Any, Any, dict[str, Any]]]],
    first: tuple[Any, dict[str, Any]],
    encoder: Encoder,
    **options: Any,
) -> tuple[list[list[bytes]], list[list[bytes]]]:
    """The lines recorded of scripted episodes (header left out), and the careful ones."""
    expected: list[list[bytes]] = []
    envs = []
    for steps in episodes:
        observations = [first[0], *(obs for _, obs, _, _ in steps)]
        infos = [first[1], *(info for _, _, _, info in steps)]
        rewards = [reward for _, _, reward, _ in steps]
        envs.append(ScriptedEnv(spaces.Discrete(2), observations, rewards=rewards, infos=infos))
        reset = {"event": "reset", "episode": len(expected), "obs": first[0], "info": first[1]}
        reset_types = dtypes.signature({"obs": first[0], "info": first[1]})
        if reset_types is not None:
            reset["dtypes"] = dtypes.to_json(reset_types)
        results = [
            (action, (obs, reward, False, t == len(steps), info))
            for t, (action, obs, reward, info) in enumerate(steps, 1)
        ]
        expected.append([encoder.encode_careful(reset), *_careful_steps(encoder, results)])
    env = RecordTrajectory(_Switching(envs), folder, **options)
    for steps in episodes:
        env.reset(seed=0)
        for action, *_ in steps:
            env.step(action)
    env.close()
    on_disk = [
        [raw for _, raw in episode_lines]
        for _, episode_lines in iter_episodes([folder / "trajectory.jsonl"])
    ]
    return [written[1:] for written in on_disk], expected


class _Switching(gym.Env[Any, Any]):
    """Each reset moves on to the next scripted env: a new script per episode."""

    def __init__(self, envs: list[ScriptedEnv]) -> None:
        self.envs = envs
        self.current = -1
        self.observation_space = envs[0].observation_space
        self.action_space = envs[0].action_space

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        self.current += 1
        return self.envs[self.current].reset(seed=seed)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        return self.envs[self.current].step(action)


def _reset_and_step(env: gym.Env[Any, Any]) -> None:
    env.reset(seed=0)
    env.step(0)


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def _looping_dict() -> dict[str, Any]:
    loop: dict[str, Any] = {"x": 1}
    loop["me"] = {"again": loop}
    return loop


def _looping_list() -> list[Any]:
    loop: list[Any] = [1]
    loop.append(loop)
    return loop


@pytest.mark.parametrize(
    ("info", "reason"),
    [
        ({"deep": _nested(300)}, "info.deep.a.a.a.a... is nested more than 254 levels deep"),
        ({"deep": _nested(3000)}, "info.deep.a.a.a.a... is nested more than 254 levels deep"),
        ({"loop": _looping_dict()}, "info.loop.me.again refers to itself (to info.loop)"),
        ({"loop": _looping_list()}, "info.loop[1] refers to itself (to info.loop)"),
        ({"text": "a\ud800b"}, "info.text holds a lone surrogate ('\\ud800')"),
    ],
    ids=["300 levels", "3000 levels", "dict loop", "list loop", "surrogate"],
)
@pytest.mark.parametrize("at", ["reset", "step"])
def test_a_value_a_recording_cannot_hold_is_refused_when_recorded_naming_the_field(
    tmp_path: Path, info: dict[str, Any], reason: str, at: str
) -> None:
    infos = [info, {}] if at == "reset" else [{}, info]
    env = RecordTrajectory(ScriptedEnv(spaces.Discrete(2), [0, 1], infos=infos), tmp_path)
    with pytest.raises(UnrecordableValueError) as raised:
        _reset_and_step(env)
    env.close()

    assert str(raised.value).startswith(reason), str(raised.value)
    assert isinstance(raised.value, ValueError)
    # What was recorded before it reads back.
    episodes = read_recording(tmp_path)
    assert len(episodes[0].records) == (0 if at == "reset" else 1)


def test_a_record_past_the_line_limit_is_refused_when_recorded_with_the_limit(
    tmp_path: Path,
) -> None:
    # A reader refuses a line over 16 MiB: the recorder must not write one
    # (an update then called the test nondeterministic, its golden unreadable).
    infos = [{}, {"n": 1}, {"text": "x" * (MAX_LINE_BYTES + 1)}]
    env = RecordTrajectory(ScriptedEnv(spaces.Discrete(2), [0, 1, 2], infos=infos), tmp_path)
    env.reset(seed=0)
    env.step(0)
    with pytest.raises(UnrecordableValueError) as raised:
        env.step(0)
    env.close()

    assert str(raised.value) == (
        "the record of step t=2 is 16,777,326 bytes, longer than 16 MiB, the longest line a "
        "reader accepts: info.text holds 16,777,219 bytes of it; store a large array as a "
        "summary (max_array_size), or leave the field out"
    )
    (episode,) = read_recording(tmp_path)
    assert [record.get("t") for record in episode.records] == [None, 1]


def test_big_endian_arrays_are_recorded_with_their_byte_order_and_compared(
    tmp_path: Path,
) -> None:
    big = np.arange(3, dtype=">f8")
    infos = [{}, {"x": big, "n": np.arange(2, dtype=">i4")}]
    obs = [np.zeros(2, ">f4"), np.linspace(0, 1, 5000, dtype=">f8")]  # the second, a summary
    space = spaces.Box(-1, 1, (2,), dtype=np.float32)
    for name in ("golden", "actual"):
        env = RecordTrajectory(ScriptedEnv(space, obs, infos=infos), tmp_path / name)
        run(env, [0])
    step = read_recording(tmp_path / "golden")[0].steps[0]
    assert step["info"] == {"x": [0.0, 1.0, 2.0], "n": [0, 1]}
    assert step["dtypes"]["info"] == {"x": ">f8[3]", "n": ">i4[2]"}
    assert step["obs"] == ArraySummary.of(np.linspace(0, 1, 5000))
    assert compare(tmp_path / "golden", tmp_path / "actual").equal
    # Native arrays of the same values: the byte order is a change of dtype.
    infos[1] = {"x": big.astype("<f8"), "n": np.arange(2, dtype="<i4")}
    run(RecordTrajectory(ScriptedEnv(space, obs, infos=infos), tmp_path / "native"), [0])
    (episode,) = compare(tmp_path / "golden", tmp_path / "native").differing
    assert episode.first is not None
    assert [d.field for d in episode.first.differences] == ["dtypes.info.n", "dtypes.info.x"]


def test_datetime64_keeps_nanoseconds_and_nat_is_written_as_nat(tmp_path: Path) -> None:
    moment = np.datetime64("2024-01-01T00:00:00.123456789", "ns")
    values = {
        "ns": moment,
        "ns_array": np.array([moment, np.datetime64("NaT", "ns")]),
        "day_nat": np.datetime64("NaT", "D"),
        "day_array": np.array(["2024-01-02", "NaT"], dtype="datetime64[D]"),
        "us": np.datetime64("2024-01-01T00:00:00.123456", "us"),
    }
    infos = [dict(values), dict(values)]
    env = RecordTrajectory(ScriptedEnv(spaces.Discrete(2), [0, 1], infos=infos), tmp_path)
    run(env, [0])

    lines = [raw for _, raw in iter_lines(tmp_path / "trajectory.jsonl")][1:]
    for line in lines:  # the reset's, then the step's
        assert b'"ns":"2024-01-01T00:00:00.123456789"' in line
        assert b'"ns_array":["2024-01-01T00:00:00.123456789","NaT"]' in line
        assert b'"day_nat":"NaT"' in line
        assert b'"day_array":["2024-01-02T00:00:00","NaT"]' in line
        assert b'"us":"2024-01-01T00:00:00.123456"' in line  # as orjson writes it, as before
        assert b"1970-01-01" not in line
        assert b"1677-09-21" not in line
    record = {"event": "step", "t": 1, "info": values}
    assert Encoder().encode(record) == Encoder().encode_careful(record)


def test_a_trajectory_file_that_is_a_symlink_is_refused_not_written_through(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("kept\n")
    folder = tmp_path / "recording"
    folder.mkdir()
    (folder / "trajectory.jsonl").symlink_to(outside)
    env = RecordTrajectory(gym.make("CartPole-v1"), folder)
    env.reset(seed=0)
    with pytest.raises(UnsafeGoldenPathError, match=r"trajectory\.jsonl.*symlink"):
        _step_to_the_episode_end(env)
    env.close()
    assert outside.read_text() == "kept\n"


def _step_to_the_episode_end(env: gym.Env[Any, Any]) -> None:
    while not any(env.step(0)[2:4]):
        pass


def test_a_trajectory_file_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    # A file-size limit makes the write fail as a full disk does, with an
    # error of its own that names no file.
    script = textwrap.dedent(
        """
        import resource, sys
        import gymnasium as gym
        from gym_goldens import RecordTrajectory
        resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))
        env = RecordTrajectory(gym.make("CartPole-v1"), sys.argv[1])
        env.reset(seed=0)
        try:
            for _ in range(5):
                while not any(env.step(0)[2:4]):
                    pass
                env.reset()
        except OSError as error:
            print(error)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert str(tmp_path / "trajectory.jsonl") in done.stdout
