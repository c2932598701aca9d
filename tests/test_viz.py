"""Plots of recordings: the data on the axes, the divergence marker, the pixels.

Recordings hold every episode in one ``trajectory.jsonl``; an episode is
chosen by its number in it.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import orjson
import pytest

from gym_goldens import RecordTrajectory, RecordVectorTrajectory, Tolerance, compare
from gym_goldens.errors import GoldensError
from gym_goldens.reader import read_recording
from gym_goldens.viz import (
    MARKER_ID,
    NothingToPlotError,
    VizDependencyError,
    compare_series,
    episode_series,
    figure_png,
    plot_comparison,
    plot_divergence,
    plot_recording,
    save_figure,
)
from tests.legacy import write_format_1

MARKER_RGB = (0xD6, 0x27, 0x28)


def record_cartpole(out: Path, *, steps: int = 60, seed: int = 0) -> Path:
    """Two episodes: ``steps`` steps of a pole kept upright, then ten random steps."""
    env = RecordTrajectory(gym.make("CartPole-v1"), out)
    env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    for _ in range(steps):
        obs, _, terminated, _, _ = env.step(int(obs[2] + 0.5 * obs[3] > 0))
        assert not terminated
    env.reset()
    for _ in range(10):
        env.step(env.action_space.sample())
    env.close()
    return out


def perturb(
    golden: Path, actual: Path, *, index: int, from_t: int, delta: float, episode: int = 0
) -> Path:
    """Copy a recording, adding ``delta`` to obs[index] of one episode from step ``from_t`` on."""
    shutil.copytree(golden, actual)
    path = actual / "trajectory.jsonl"
    lines = path.read_bytes().splitlines()
    current = -1
    for number, raw in enumerate(lines):
        record = orjson.loads(raw)
        current += record["event"] == "header"
        if current == episode and record["event"] == "step" and record["t"] >= from_t:
            record["obs"][index] += delta
            lines[number] = orjson.dumps(record, option=orjson.OPT_SORT_KEYS)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return actual


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_cartpole(tmp_path_factory.mktemp("golden") / "CartPole-v1")


@pytest.fixture(scope="module")
def actual(golden: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return perturb(
        golden, tmp_path_factory.mktemp("actual") / "CartPole-v1", index=2, from_t=17, delta=0.01
    )


def test_episode_series_holds_the_recorded_values(golden: Path) -> None:
    episode = read_recording(golden)[0]
    series = {s.label: s for s in episode_series(golden)}
    assert list(series) == ["obs[0]", "obs[1]", "obs[2]", "obs[3]", "action", "reward"]
    steps = episode.steps
    reset = episode.records[0]
    assert series["obs[1]"].t.tolist() == list(range(len(steps) + 1))
    assert series["obs[1]"].values.tolist() == [reset["obs"][1]] + [s["obs"][1] for s in steps]
    assert series["action"].t.tolist() == [s["t"] for s in steps]
    assert series["action"].values.tolist() == [float(s["action"]) for s in steps]
    assert series["action"].discrete
    assert not series["obs[1]"].discrete


def test_episode_series_reads_the_episode_asked_for(golden: Path) -> None:
    first, second = read_recording(golden)
    assert (len(first.steps), len(second.steps)) == (60, 10)
    for source in (golden, golden / "trajectory.jsonl", second):
        (action,) = episode_series(source, ["action"], episode=1)
        assert action.t.tolist() == list(range(1, 11))
        assert action.values.tolist() == [float(s["action"]) for s in second.steps]
    with pytest.raises(GoldensError, match="there is no episode 2; this recording has episodes 0"):
        episode_series(golden, episode=2)


def test_an_episode_already_read_gives_the_same_series(golden: Path) -> None:
    from_file = episode_series(golden, None)
    from_episode = episode_series(read_recording(golden)[0], None)
    assert [s.label for s in from_file] == [s.label for s in from_episode]
    for a, b in zip(from_file, from_episode, strict=True):
        assert np.array_equal(a.t, b.t)
        assert np.array_equal(a.values, b.values, equal_nan=True)


def test_episode_series_selects_fields_by_pattern(golden: Path) -> None:
    labels = [s.label for s in episode_series(golden, ["reward", "obs[3]", "terminated"])]
    assert labels == ["reward", "obs[3]", "terminated"]
    with pytest.raises(ValueError, match="not a record field"):
        episode_series(golden, ["observation"])


def test_compare_series_finds_the_first_step_out_of_tolerance(golden: Path, actual: Path) -> None:
    fields = {f.label: f for f in compare_series(episode_series(golden), episode_series(actual))}
    assert fields["obs[2]"].first == 17
    assert [label for label, f in fields.items() if f.diverges] == ["obs[2]"]
    difference = fields["obs[2]"].actual - fields["obs[2]"].golden
    assert np.allclose(difference[fields["obs[2]"].t >= 17], 0.01)
    assert np.all(difference[fields["obs[2]"].t < 17] == 0)
    # The next episode of the file was left alone.
    later = compare_series(episode_series(golden, episode=1), episode_series(actual, episode=1))
    assert not any(f.diverges for f in later)


def test_compare_series_honours_tolerance_and_ignore(golden: Path, actual: Path) -> None:
    golden_series = episode_series(golden)
    actual_series = episode_series(actual)
    loose = compare_series(golden_series, actual_series, Tolerance.build(atol={"obs[2]": 0.02}))
    assert not any(f.diverges for f in loose)
    ignored = compare_series(golden_series, actual_series, Tolerance.build(ignore=["obs"]))
    assert [f.label for f in ignored] == ["action", "reward"]


def test_a_step_held_by_one_side_diverges(golden: Path, tmp_path: Path) -> None:
    shorter = tmp_path / "shorter"
    shorter.mkdir()
    lines = (golden / "trajectory.jsonl").read_bytes().splitlines()
    second = read_recording(golden)[1].line - 1  # the index of episode 1's header line
    # Episode 0 loses its last five steps; episode 1 follows it in the file as before.
    kept = lines[: second - 5] + lines[second:]
    (shorter / "trajectory.jsonl").write_bytes(b"\n".join(kept) + b"\n")
    last_common = second - 5 - 2  # header and reset lines are not steps
    fields = compare_series(episode_series(golden), episode_series(shorter))
    assert {f.first for f in fields} == {last_common + 1}
    later = compare_series(episode_series(golden, episode=1), episode_series(shorter, episode=1))
    assert not any(f.diverges for f in later)


def test_comparison_figure_marks_the_first_divergence(golden: Path, actual: Path) -> None:
    figure = plot_comparison(golden, actual)
    markers = [
        line for axes in figure.axes for line in axes.get_lines() if line.get_gid() == MARKER_ID
    ]
    # One field diverges; it is marked on its value axis and its difference axis.
    assert len(markers) == 2
    assert all(list(line.get_xdata()) == [17, 17] for line in markers)
    top = next(axes for axes in figure.axes if axes.get_title(loc="left") == "obs[2]")
    assert "t=17" in top.get_title(loc="right")
    assert "first divergence at t=17 (obs[2])" in figure.get_suptitle()
    # The title names the file of each side and the lines the episode takes there.
    last = read_recording(golden)[1].line - 1
    title = figure.get_suptitle().splitlines()
    assert title[0].startswith("CartPole-v1, episode 0: golden vs actual")
    assert title[1].startswith("golden: ")
    assert title[1].endswith(f"trajectory.jsonl, lines 1-{last}")
    assert title[2].startswith("actual: ")
    assert title[2].endswith(f"trajectory.jsonl, lines 1-{last}")


def test_comparison_figure_draws_golden_actual_and_their_difference(
    golden: Path, actual: Path
) -> None:
    figure = plot_comparison(golden, actual, fields=["obs[2]"])
    top, bottom = figure.axes
    lines = {line.get_label(): line for line in top.get_lines()}
    golden_y = np.asarray(lines["golden"].get_ydata())
    actual_y = np.asarray(lines["actual"].get_ydata())
    assert np.allclose(actual_y[17:] - golden_y[17:], 0.01)
    assert np.array_equal(actual_y[:17], golden_y[:17])
    label = "actual \N{MINUS SIGN} golden"
    (difference,) = [line for line in bottom.get_lines() if line.get_label() == label]
    values = np.asarray(difference.get_ydata())
    assert np.allclose(values[17:], 0.01)
    assert np.all(values[:17] == 0)


def test_the_marker_is_drawn_where_the_divergence_is(golden: Path, actual: Path) -> None:
    figure = plot_comparison(golden, actual, fields=["obs[2]"])
    figure.canvas.draw()
    pixels = np.asarray(figure.canvas.buffer_rgba())[:, :, :3].astype(int)
    top = figure.axes[0]
    x0, y0, x1, y1 = top.bbox.extents
    height = pixels.shape[0]
    inside = pixels[int(height - y1) + 2 : int(height - y0) - 2, int(x0) + 2 : int(x1) - 2]
    red = np.all(np.abs(inside - MARKER_RGB) <= 40, axis=2)
    column = int(np.argmax(red.sum(axis=0))) + int(x0) + 2
    expected = top.transData.transform((17, 0))[0]
    assert red.sum() > 50
    assert abs(column - expected) <= 2
    # Nothing red at the start of the episode, before the divergence.
    before = int(top.transData.transform((10, 0))[0]) - int(x0) - 2
    assert not red[:, :before].any()


def test_png_bytes_are_an_image_of_the_figure(golden: Path, actual: Path, tmp_path: Path) -> None:
    import matplotlib.image

    figure = plot_comparison(golden, actual, fields=["obs[2]", "reward"])
    data = figure_png(figure)
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    path = save_figure(figure, tmp_path / "plot.png")
    image = matplotlib.image.imread(path)
    width, height = figure.get_size_inches() * 100
    assert image.shape[:2] == (round(height), round(width))
    assert image[:, :, :3].std() > 0.05  # not a blank canvas


def test_plot_divergence_plots_only_diverging_fields(golden: Path, actual: Path) -> None:
    figure = plot_divergence(compare(golden, actual))
    assert figure is not None
    titles = [a.get_title(loc="left") for a in figure.axes if a.get_title(loc="left")]
    assert titles == ["obs[2]"]


def test_plot_divergence_is_none_when_equal(golden: Path) -> None:
    assert plot_divergence(compare(golden, golden)) is None


def test_plot_divergence_plots_the_episode_the_comparison_found(
    golden: Path, tmp_path: Path
) -> None:
    later = perturb(golden, tmp_path / "later", index=1, from_t=4, delta=0.5, episode=1)
    comparison = compare(golden, later)
    assert [e.index for e in comparison.differing] == [1]
    figure = plot_divergence(comparison)
    assert figure is not None
    title = figure.get_suptitle()
    assert title.startswith("CartPole-v1, episode 1: golden vs actual: first divergence at t=4")
    start = read_recording(golden)[1].line
    assert f"trajectory.jsonl, lines {start}-{start + 11}" in title  # header, reset, 10 steps
    markers = [
        line for axes in figure.axes for line in axes.get_lines() if line.get_gid() == MARKER_ID
    ]
    assert markers
    assert all(list(line.get_xdata()) == [4, 4] for line in markers)


def test_plot_divergence_finds_the_sub_env_of_a_vector_recording(tmp_path: Path) -> None:
    for name in ("golden", "actual"):
        envs = RecordVectorTrajectory(gym.make_vec("CartPole-v1", num_envs=2), tmp_path / name)
        envs.reset(seed=0)
        for _ in range(8):
            envs.step(np.array([0, 1]))
        envs.close()
    path = tmp_path / "actual" / "env_1" / "trajectory.jsonl"
    lines = path.read_bytes().splitlines()
    for number, raw in enumerate(lines):
        record = orjson.loads(raw)
        if record["event"] == "step" and record["t"] >= 5:
            record["reward"] = 2.0
            lines[number] = orjson.dumps(record, option=orjson.OPT_SORT_KEYS)
    path.write_bytes(b"\n".join(lines) + b"\n")
    comparison = compare(tmp_path / "golden", tmp_path / "actual")
    assert [(e.env, e.index) for e in comparison.differing] == [(1, 0)]
    figure = plot_divergence(comparison)
    assert figure is not None
    title = figure.get_suptitle()
    assert "sub-env 1, episode 0: golden vs actual: first divergence at t=5 (reward)" in title
    assert "env_1/trajectory.jsonl" in title
    assert [a.get_title(loc="left") for a in figure.axes if a.get_title(loc="left")] == ["reward"]


def test_a_folder_of_format_1_still_plots(golden: Path, actual: Path, tmp_path: Path) -> None:
    old_golden = write_format_1(golden, tmp_path / "old-golden")
    old_actual = write_format_1(actual, tmp_path / "old-actual")
    figure = plot_comparison(old_golden, old_actual, fields=["obs[2]"])
    assert "first divergence at t=17 (obs[2])" in figure.get_suptitle()
    assert "episode_00000.jsonl, lines 1-62" in figure.get_suptitle()
    (action,) = episode_series(old_golden, ["action"], episode=1)
    assert action.values.tolist() == [float(s["action"]) for s in read_recording(golden)[1].steps]


def test_plot_recording_draws_each_field(golden: Path) -> None:
    figure = plot_recording(golden, episode=1, fields=["obs", "action"])
    titles = [axes.get_title(loc="left") for axes in figure.axes]
    assert titles == ["obs[0]", "obs[1]", "obs[2]", "obs[3]", "action"]
    episode = read_recording(golden)[1]
    (line,) = figure.axes[4].get_lines()
    assert list(line.get_ydata()) == [float(s["action"]) for s in episode.steps]


def test_plot_recording_caps_the_number_of_fields(golden: Path) -> None:
    figure = plot_recording(golden, fields=None, max_fields=3)
    assert len(figure.axes) == 3
    assert "first 3 of" in figure.get_suptitle()


def test_nothing_to_plot_says_so(golden: Path) -> None:
    with pytest.raises(NothingToPlotError, match="no numbers to plot in info"):
        plot_recording(golden, fields=["info"])


def test_a_missing_episode_is_an_error(golden: Path) -> None:
    with pytest.raises(
        GoldensError, match="there is no episode 99; this recording has episodes 0 to 1"
    ):
        plot_recording(golden, episode=99)
    with pytest.raises(GoldensError, match="there is no episode -1"):
        plot_recording(golden, episode=-1)


def test_plot_recording_titles_the_episode_and_its_lines(golden: Path) -> None:
    figure = plot_recording(golden / "trajectory.jsonl", episode=1, fields=["reward"])
    start = read_recording(golden)[1].line
    name, where = figure.get_suptitle().splitlines()
    assert name == "CartPole-v1: episode 1"
    assert where.endswith(f"trajectory.jsonl, lines {start}-{start + 11}")


def test_arrays_stored_as_summaries_plot_their_mean(tmp_path: Path) -> None:
    env = RecordTrajectory(gym.make("CartPole-v1"), tmp_path / "rec", max_array_size=2)
    env.reset(seed=0)
    env.step(1)
    env.close()
    (series,) = episode_series(tmp_path / "rec", ["obs"])
    episode = read_recording(tmp_path / "rec")[0]
    assert series.label == "mean(obs)"
    assert series.values.tolist() == [episode.records[0]["obs"].mean, episode.steps[0]["obs"].mean]


def test_without_matplotlib_the_error_says_how_to_install_it(
    golden: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(
        VizDependencyError, match=r'pip install "pytest-gym-goldens\[viz\]"'
    ) as info:
        plot_recording(golden)
    assert isinstance(info.value, ImportError)
    assert isinstance(info.value, GoldensError)


class GaugeEnv(gym.Env[dict[str, object], int]):
    """Dict observations, a float and a string in info, and a NaN once."""

    observation_space = gym.spaces.Dict(
        {"pos": gym.spaces.Box(-1.0, 1.0, (2,)), "mode": gym.spaces.Discrete(3)}
    )
    action_space = gym.spaces.Discrete(2)

    def __init__(self, drift: float = 0.0) -> None:
        self.drift = drift
        self.t = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, object] | None = None
    ) -> tuple[dict[str, object], dict[str, object]]:
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {"energy": 1.0, "tag": "start"}

    def step(self, action: int) -> tuple[dict[str, object], float, bool, bool, dict[str, object]]:
        self.t += 1
        energy = (
            float("nan")
            if self.t == 3
            else 1.0 - self.t / 10 + (self.drift if self.t >= 6 else 0.0)
        )
        return self._obs(), 0.5, False, False, {"energy": energy, "tag": "run"}

    def _obs(self) -> dict[str, object]:
        pos = np.array([self.t / 10, -self.t / 10], dtype=np.float32)
        return {"pos": pos, "mode": self.t % 3}


def record_gauge(out: Path, drift: float = 0.0) -> Path:
    env = RecordTrajectory(GaugeEnv(drift), out)
    env.reset(seed=0)
    for _ in range(8):
        env.step(0)
    env.close()
    return out


def test_nested_fields_become_one_series_per_number(tmp_path: Path) -> None:
    path = record_gauge(tmp_path / "g")
    series = {s.label: s for s in episode_series(path, ["obs", "info"])}
    assert list(series) == ["obs.mode", "obs.pos[0]", "obs.pos[1]", "info.energy"]
    assert series["obs.mode"].discrete
    assert series["obs.mode"].values.tolist() == [t % 3 for t in range(9)]
    assert np.isnan(series["info.energy"].values[3])


def test_nan_matches_nan_and_a_drift_is_found(tmp_path: Path) -> None:
    golden = record_gauge(tmp_path / "g")
    same = record_gauge(tmp_path / "s")
    drifted = record_gauge(tmp_path / "d", drift=1e-3)
    fields = ["obs", "info"]
    assert not any(
        f.diverges
        for f in compare_series(episode_series(golden, fields), episode_series(same, fields))
    )
    found = compare_series(episode_series(golden, fields), episode_series(drifted, fields))
    assert [(f.label, f.first) for f in found if f.diverges] == [("info.energy", 6)]
    figure = plot_comparison(tmp_path / "g", tmp_path / "d", fields=["info"])
    assert "first divergence at t=6 (info.energy)" in figure.get_suptitle()
