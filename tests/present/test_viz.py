"""Plots of recordings: the data on the axes, the divergence marker, the pixels.

Recordings hold every episode in one ``trajectory.jsonl``; an episode is
chosen by its number in it.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import orjson
import pytest

from gym_goldens import RecordTrajectory, RecordVectorTrajectory, compare
from gym_goldens.errors import GoldensError
from gym_goldens.format.reader import read_recording
from gym_goldens.present.viz import (
    MARKER_ID,
    NothingToPlotError,
    VizDependencyError,
    figure_png,
    plot_comparison,
    plot_divergence,
    plot_recording,
    save_figure,
)
from tests.support.envs import ScriptedEnv, run
from tests.support.recordings import perturb, record_extremes, record_gauge

MARKER_RGB = (0xD6, 0x27, 0x28)


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


def test_the_title_names_the_first_diverging_field(tmp_path: Path) -> None:
    record_gauge(tmp_path / "g")
    record_gauge(tmp_path / "d", drift=1e-3)
    figure = plot_comparison(tmp_path / "g", tmp_path / "d", fields=["info"])
    assert "first divergence at t=6 (info.energy)" in figure.get_suptitle()


def test_values_near_the_largest_float_are_drawn(tmp_path: Path) -> None:
    # A simulation blowing up: values near 1e308 made matplotlib's axis
    # arithmetic overflow, and the plot failed with OverflowError.
    golden = record_extremes(tmp_path / "g", sign=1.0)
    actual = record_extremes(tmp_path / "a", sign=-1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figures = [plot_comparison(golden, actual, fields=["obs"]), plot_recording(golden)]
        images = [figure_png(figure) for figure in figures]
    assert all(image.startswith(b"\x89PNG") for image in images)
    top = figures[0].axes[2]  # obs[1]: golden and actual lines
    drawn = np.concatenate([line.get_ydata() for line in top.get_lines()[:2]])
    assert np.nanmax(np.abs(drawn)) == 1e300


def _cartpole(path: Path, *, gravity: float = 9.8, length: int = 60) -> Path:
    """CartPole kept upright by a controller, for ``length`` steps at most."""
    env = RecordTrajectory(gym.make("CartPole-v1", max_episode_steps=length), path)
    env.unwrapped.gravity = gravity  # type: ignore[attr-defined]
    obs, _ = env.reset(seed=0)
    for _ in range(length):
        obs, _, terminated, truncated, _ = env.step(int(obs[2] + 0.5 * obs[3] > 0))
        if terminated or truncated:
            break
    env.close()
    return path


def test_the_title_starts_inside_the_figure_however_long_the_paths(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*(["a-rather-long-folder-name"] * 6))
    golden, actual = _cartpole(deep / "golden"), _cartpole(deep / "actual", gravity=9.81)
    figure = plot_divergence(compare(golden, actual))
    assert figure is not None
    title = figure._suptitle  # the figure's title Text
    assert title.get_ha() == "left"
    assert title.get_position()[0] > 0  # from the left edge of the axes, not centred past it
    assert all(len(line) <= 105 for line in title.get_text().splitlines())


def test_fields_that_differ_only_where_one_episode_ended_do_not_fill_the_plot(
    tmp_path: Path,
) -> None:
    # The same dynamics, a shorter time limit: only "truncated" diverges; obs,
    # action and reward differ only where the golden goes on alone.
    golden, actual = _cartpole(tmp_path / "golden"), _cartpole(tmp_path / "actual", length=40)
    figure = plot_divergence(compare(golden, actual))
    assert figure is not None
    titles = [axes.get_title(loc="left") for axes in figure.axes if axes.get_title(loc="left")]
    assert titles == ["truncated"]


def test_a_tolerance_band_too_thin_to_see_is_said_in_words(tmp_path: Path) -> None:
    golden, actual = _cartpole(tmp_path / "golden"), _cartpole(tmp_path / "actual", gravity=9.81)
    figure = plot_divergence(compare(golden, actual))
    assert figure is not None
    legends = [text.get_text() for axes in figure.axes for text in axes.get_legend().get_texts()]
    assert any(
        text.startswith("tolerance \N{PLUS-MINUS SIGN}") and "too thin to see here" in text
        for text in legends
    )


def test_fields_parting_at_the_same_step_come_in_the_order_the_reports_name_them(
    tmp_path: Path,
) -> None:
    # Sorted by name, info.speed came before obs, and the plot's title named
    # another first divergence than the failure message.
    space = gym.spaces.Box(-10.0, 10.0, (1,), np.float64)

    def record(out: Path, *, shift: float) -> Path:
        observations = [np.array([0.0]), np.array([1.0 + shift]), np.array([2.0 + shift])]
        infos = [{}, {"speed": 1.0 + shift}, {"speed": 2.0 + shift}]
        env = ScriptedEnv(space, observations, rewards=[1.0 + shift, 1.0], infos=infos)
        run(RecordTrajectory(env, out), [0, 0])
        return out

    comparison = compare(record(tmp_path / "g", shift=0.0), record(tmp_path / "a", shift=0.5))
    figure = plot_divergence(comparison)
    assert figure is not None
    titles = [axes.get_title(loc="left") for axes in figure.axes if axes.get_title(loc="left")]
    assert titles == ["obs[0]", "reward", "info.speed"]
    assert "first divergence at t=1 (obs[0])" in figure.get_suptitle()


def test_two_runs_are_named_as_runs(tmp_path: Path) -> None:
    golden, actual = _cartpole(tmp_path / "golden"), _cartpole(tmp_path / "actual", gravity=9.81)
    figure = plot_divergence(compare(golden, actual), sides=("run 1", "run 2"))
    assert figure is not None
    assert "run 1 vs run 2" in figure.get_suptitle()
    legends = {text.get_text() for axes in figure.axes for text in axes.get_legend().get_texts()}
    assert {"run 1", "run 2", "run 2 \N{MINUS SIGN} run 1"} <= legends
    assert not any("golden" in text or "actual" in text for text in legends)


def test_a_renamed_info_key_is_named_in_the_title_not_a_change_of_length(tmp_path: Path) -> None:
    space = gym.spaces.Box(-10.0, 10.0, (1,), np.float64)

    def record(out: Path, key: str) -> Path:
        observations = [np.array([float(t)]) for t in range(4)]
        infos = [{key: np.float64(t / 2)} for t in range(4)]
        run(RecordTrajectory(ScriptedEnv(space, observations, infos=infos), out), [0, 0, 0])
        return out

    golden = record(tmp_path / "g", "dist_to_dock")
    actual = record(tmp_path / "a", "distance_to_dock")
    figure = plot_divergence(compare(golden, actual))
    assert figure is not None
    title = figure.get_suptitle().replace("\n  ", " ")
    assert "lengths differ" not in title
    assert (
        "golden vs actual: info.dist_to_dock only in golden, info.distance_to_dock only in "
        "actual; no divergence within tolerance where both have a field"
    ) in title
    titles = [axes.get_title(loc="left") for axes in figure.axes if axes.get_title(loc="left")]
    assert titles == ["info.dist_to_dock", "info.distance_to_dock"]


def test_rewards_are_drawn_as_steps_like_actions(golden: Path, actual: Path) -> None:
    # A reward is paid for a step: a line between two steps would draw rewards never paid.
    for figure in (plot_recording(golden), plot_comparison(golden, actual)):
        styles = {
            axes.get_title(loc="left"): {line.get_drawstyle() for line in axes.get_lines()}
            for axes in figure.axes
            if axes.get_title(loc="left") in ("reward", "action", "obs[0]")
        }
        assert styles["reward"] == {"steps-post"}
        assert styles["action"] == {"steps-post"}
        assert styles["obs[0]"] == {"default"}


def test_runs_named_with_where_they_ran_keep_their_legends_inside_the_figure(
    tmp_path: Path,
) -> None:
    golden, actual = _cartpole(tmp_path / "golden"), _cartpole(tmp_path / "actual", gravity=9.81)
    sides = ("run 1 (this process)", "run 2 (subprocess)")
    figure = plot_divergence(compare(golden, actual), sides=sides)
    assert figure is not None
    assert "run 1 (this process) vs run 2 (subprocess)" in figure.get_suptitle()
    figure_png(figure)  # drawn, so that the legends have their places
    width = figure.bbox.width
    for axes in figure.axes:
        legend = axes.get_legend()
        assert legend.get_window_extent().x1 <= width, [t.get_text() for t in legend.get_texts()]
