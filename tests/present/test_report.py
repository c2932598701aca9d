"""Tests of the failure text and the summary (``gym_goldens.present.report``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import orjson

from gym_goldens import GoldenFormatError, RecordTrajectory, Tolerance, compare, read_recording
from gym_goldens.plugin.session import SummaryReport
from gym_goldens.present.report import (
    RECORDED_MODE,
    REPLAY_MODE,
    Report,
    failed_run_report,
    format_comparison,
    format_missing,
    format_nondeterminism,
    format_unreadable,
    mismatch_report,
    missing_report,
    nondeterminism_report,
    not_updated_report,
    nothing_recorded_report,
    refused_report,
    unreadable_run_report,
    unrecorded_run_report,
    update_command,
)
from tests.support.envs import record_scaled_cartpole


def _record(path: Path, **kwargs: Any) -> Path:
    """The scaled CartPole of the report tests: 40 steps, the action changing every 3rd."""
    kwargs.setdefault("steps", 40)
    return Path(record_scaled_cartpole(path, action=lambda t: (t // 3) % 2, **kwargs))


def test_mismatch_message_has_the_issue_shape(tmp_path: Path) -> None:
    golden = _record(tmp_path / "golden", steps=20, resets=2)
    actual = _record(tmp_path / "actual", steps=20, resets=2, gravity=9.81)
    text = format_comparison(compare(golden, actual), nodeid="tests/test_envs.py::test_cartpole")
    lines = text.splitlines()
    assert lines[0] == f"golden mismatch: {golden / 'trajectory.jsonl'}:3"
    assert lines[1] == "  first divergence: episode 0, step t=1, obs[1]"
    assert re.fullmatch(
        r"    golden (\S+)  actual (\S+)  \|diff\| \S+ > tol \S+ \(rtol 1e-06, atol 1e-12\)",
        lines[2],
    ), lines[2]
    assert re.fullmatch(
        r"    obs: 2 of 4 elements differ \(50%\), largest \|diff\| \S+, first at \[1\]", lines[3]
    ), lines[3]
    assert lines[4] == "    also differ there: obs[3]"
    assert re.fullmatch(
        r"  steps differing: (\d+) of 20 \(from t=1\); "
        r"episode length 20 vs 20 \(golden vs actual\)",
        lines[5],
    ), lines[5]
    assert lines[6] == "  episodes differing: 2 of 2 (episodes 0, 1)"
    assert lines[7] == (
        "  suggested tolerance, from this record alone (judge it; it is not a fix): "
        '@pytest.mark.goldens(rtol={"obs": 0.0001})'
    )
    assert lines[8] == f"  actual recording: {actual}"
    assert lines[9] == '  update with: pytest --update-goldens "tests/test_envs.py::test_cartpole"'
    assert len(lines) == 10


def test_golden_and_actual_values_and_diff_are_the_real_ones(tmp_path: Path) -> None:
    golden = _record(tmp_path / "golden", steps=5)
    actual = _record(tmp_path / "actual", steps=5, gravity=9.81)
    comparison = compare(golden, actual)
    first = comparison.differing[0].first
    assert first is not None
    head = first.differences[0]
    text = format_comparison(comparison)
    assert (
        f"golden {head.golden!r}  actual {head.actual!r}  "
        f"|diff| {abs(head.actual - head.golden):.1e}" in text
    )
    assert f"> tol {1e-12 + 1e-6 * abs(head.golden):.1e}" in text


def test_reset_difference_is_said_separately_from_steps(tmp_path: Path) -> None:
    golden = _record(tmp_path / "golden", steps=10)
    actual = _record(tmp_path / "actual", steps=10, factor=1 + 1e-9)
    text = format_comparison(compare(golden, actual, Tolerance(rtol=0.0, atol=0.0)))
    assert "  first divergence: episode 0, reset, obs[0]\n" in text
    assert "  reset record differs; steps differing: 10 of 10; episode length 10 vs 10" in text
    assert "episodes differing" not in text


def test_length_difference_counts_the_missing_steps(tmp_path: Path) -> None:
    golden = _record(tmp_path / "golden", steps=12)
    actual = _record(tmp_path / "actual", steps=9)
    text = format_comparison(compare(golden, actual))
    assert "  first divergence: episode 0, step t=10: only the golden has this step\n" in text
    assert (
        "  steps differing: 3 of 12 (from t=10); episode length 12 vs 9 (golden vs actual)" in text
    )
    reverse = format_comparison(compare(actual, golden))
    assert "step t=10: only the actual recording has this step" in reverse
    assert "episode length 9 vs 12" in reverse


def test_missing_and_extra_episodes_are_named(tmp_path: Path) -> None:
    golden = _record(tmp_path / "golden", steps=4, resets=3)
    actual = _record(tmp_path / "actual", steps=4, resets=1)
    text = format_comparison(compare(golden, actual))
    assert text.startswith(f"golden mismatch: {golden / 'trajectory.jsonl'}\n")
    assert (
        "  episode 1 is missing from the actual recording (the golden episode has 4 steps)" in text
    )
    assert "  episodes differing: 2 of 3 (episodes 1, 2)" in text
    assert "episode 1 is not in the golden (the actual episode has 4 steps)" in format_comparison(
        compare(actual, golden)
    )


def _rewrite_record(path: Path, line: int, change: Any) -> None:
    lines = path.read_bytes().splitlines()
    record = orjson.loads(lines[line])
    change(record)
    lines[line] = orjson.dumps(record)
    path.write_bytes(b"\n".join(lines) + b"\n")


def test_type_header_and_version_differences_are_described(tmp_path: Path) -> None:
    golden = _record(tmp_path / "golden", steps=3)
    actual = _record(tmp_path / "actual", steps=3)
    episode = actual / "trajectory.jsonl"
    _rewrite_record(episode, 2, lambda r: r.update(reward=1))
    _rewrite_record(episode, 0, lambda r: r["observation_space"].update(shape=[5]))
    _rewrite_record(episode, 0, lambda r: r["versions"].update(numpy="0.0.1"))
    text = format_comparison(compare(golden, actual))
    assert (
        "  header differs: observation_space: Box(-inf, inf, (4,), float64) -> "
        "Box(-inf, inf, (5,), float64) (shape changed (4,) -> (5,))"
    ) in text
    assert "  first divergence: episode 0, step t=1, reward\n" in text
    assert "    golden 1.0 (float)  actual 1 (int): the type changed" in text
    assert re.search(
        r"recorded with other software \(golden -> actual\): numpy \S+ -> 0\.0\.1", text
    )


class ImageEnv(gym.Env[np.ndarray, int]):
    """An 8x8 image observation whose pixel (0, 0) is ``pixel``."""

    observation_space = gym.spaces.Box(0, 255, shape=(8, 8), dtype=np.uint8)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, pixel: int) -> None:
        self.image = np.zeros((8, 8), dtype=np.uint8)
        self.image[0, 0] = pixel

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        return self.image.copy(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        return self.image.copy(), 0.0, True, False, {}


def test_array_summaries_say_what_changed(tmp_path: Path) -> None:
    def record(path: Path, pixel: int) -> Path:
        env = RecordTrajectory(ImageEnv(pixel), path, max_array_size=16)
        env.reset(seed=0)
        env.step(0)
        env.close()
        return path

    text = format_comparison(compare(record(tmp_path / "g", 0), record(tmp_path / "a", 1)))
    assert "  first divergence: episode 0, reset, obs\n" in text
    assert re.search(
        r"    array uint8\[8, 8\] \(stored as a summary\) changed: "
        r"rows 0-0 of 8 .*sum 0 -> 1 \(\+1\)",
        text,
    )


def test_missing_and_unreadable_messages_name_path_and_fix(tmp_path: Path) -> None:
    missing = format_missing(
        tmp_path / "goldens" / "env", tmp_path / "actual", nodeid="t.py::test_x"
    )
    assert missing.splitlines() == [
        f"golden missing: {tmp_path / 'goldens' / 'env'}",
        "  no golden has been recorded for this trajectory yet",
        f"  actual recording: {tmp_path / 'actual'}",
        '  create it with: pytest --update-goldens "t.py::test_x"',
    ]
    error = GoldenFormatError(tmp_path / "trajectory.jsonl", "invalid JSON (x)", line=3)
    unreadable = format_unreadable(error, nodeid="t.py::test_x")
    assert unreadable.splitlines() == [
        f"golden unreadable: {tmp_path / 'trajectory.jsonl'}:3: invalid JSON (x)",
        "  the golden file was left as it is",
        '  regenerate it with: pytest --update-goldens "t.py::test_x"',
    ]


def test_update_command_quotes_the_node_id() -> None:
    assert update_command(None) == "pytest --update-goldens"
    assert (
        update_command('t.py::test_x[say "hi"]')
        == 'pytest --update-goldens "t.py::test_x[say \\"hi\\"]"'
    )


def test_summary_is_empty_when_nothing_happened() -> None:
    assert SummaryReport().lines == []


def test_summary_counts_and_lists_written_goldens() -> None:
    report = SummaryReport()
    report.add("created", "goldens/t/test_b/env")
    report.add("created", "goldens/t/test_a/env")
    report.add("updated", "goldens/t/test_c/env")
    report.add("unchanged", "goldens/t/test_d/env")
    assert report.lines == [
        "goldens: 2 created, 1 updated, 1 kept",
        "  created: goldens/t/test_a/env",
        "  created: goldens/t/test_b/env",
        "  updated: goldens/t/test_c/env",
        "  kept: goldens/t/test_d/env",
        "  kept: they still match within the test's tolerance, in this format and storage; "
        "rewrite them anyway with --update-goldens-all",
    ]
    checked = SummaryReport()
    checked.add("passed", "g1")
    checked.add("failed", "g2")
    checked.add("missing", "g3")
    assert checked.lines == [
        "goldens: 1 matched, 1 mismatched, 1 missing",
        "  record the missing goldens with: pytest --update-goldens",
        "  the recordings and plots of these failures are in pytest's temporary folders, "
        "which it deletes after three more runs: keep them with --goldens-artifacts=DIR",
    ]
    checked.keeps_artifacts = True
    assert checked.lines[-1] == "  record the missing goldens with: pytest --update-goldens"


def test_a_version_the_golden_does_not_name_is_added(tmp_path: Path) -> None:
    # Software only one side names is added (or removed), never "-"; a version
    # both name, and that moved, is a change.
    golden = _record(tmp_path / "golden", steps=3)
    actual = _record(tmp_path / "actual", steps=3)
    episode = actual / "trajectory.jsonl"
    _rewrite_record(episode, 2, lambda r: r.update(reward=2.0))
    _rewrite_record(episode, 0, lambda r: r["versions"].update({"highway-env": "1.12.1"}))
    text = format_comparison(compare(golden, actual))
    assert "recorded with other software (golden -> actual): added: highway-env 1.12.1" in text
    _rewrite_record(
        golden / "trajectory.jsonl", 0, lambda r: r["versions"].update({"highway-env": "1.9"})
    )
    text = format_comparison(compare(golden, actual))
    assert "recorded with other software (golden -> actual): highway-env 1.9 -> 1.12.1" in text


def test_a_changed_space_is_one_line_and_the_trajectory_is_said_to_match(tmp_path: Path) -> None:
    golden = _record(tmp_path / "golden", steps=3)
    actual = _record(tmp_path / "actual", steps=3)
    lines = (actual / "trajectory.jsonl").read_bytes().splitlines()
    header = orjson.loads(lines[0])
    header["action_space"] = {"type": "Discrete", "dtype": "int64", "shape": [], "n": 3, "start": 0}
    lines[0] = orjson.dumps(header, option=orjson.OPT_SORT_KEYS)
    (actual / "trajectory.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    text = format_comparison(compare(golden, actual))
    assert text.splitlines()[1:3] == [
        "  header differs: action_space: Discrete(2) -> Discrete(3)",
        "  the trajectory itself matches the golden: only the header differs",
    ]
    assert "steps differing" not in text


def test_every_report_names_the_fields_of_a_first_divergence_in_one_order(
    tmp_path: Path,
) -> None:
    # A termination change headlines "terminated", before the reward it brings.
    golden = _record(tmp_path / "golden", steps=5)
    actual = _record(tmp_path / "actual", steps=5)
    _rewrite_record(actual / "trajectory.jsonl", 3, lambda r: r.update(terminated=True, reward=0.0))
    comparison = compare(golden, actual)
    for text in (
        format_comparison(comparison),
        format_nondeterminism(comparison),
    ):
        assert "first divergence: episode 0, step t=2, terminated" in text
        assert "also differ there: reward" in text


def test_the_noise_rule_of_the_messages_is_the_one_the_docs_state() -> None:
    from gym_goldens.comparison.result import NOISE_ATOL, NOISE_RTOL
    from gym_goldens.present.report import noise_rule

    docs = (Path(__file__).parents[2] / "docs" / "tolerances.md").read_text(encoding="utf-8")
    assert f"> noise: {noise_rule()}\n" in docs
    assert f"with `rtol={NOISE_RTOL:g}` and `atol={NOISE_ATOL:g}`" in docs


def test_a_difference_just_past_its_tolerance_shows_digits_that_tell_them_apart(
    tmp_path: Path,
) -> None:
    from tests.support.envs import ScriptedEnv, run

    space = gym.spaces.Box(-1.0, 1.0, (1,), np.float64)

    def record(out: Path, shift: float) -> Path:
        observations = [np.array([0.266]), np.array([0.266 + shift])]
        run(RecordTrajectory(ScriptedEnv(space, observations), out), [0])
        return out

    text = format_comparison(compare(record(tmp_path / "g", 0.0), record(tmp_path / "a", 2.71e-7)))
    assert "|diff| 2.71e-07 > tol 2.66e-07 (rtol 1e-06, atol 1e-12)" in text


def _scaled_cartpole(out: Path, *, factor: float | None, gravity: float = 9.8) -> Path:
    """CartPole, its observations as float32 (``factor`` None) or times ``factor`` as float64."""
    from tests.support.envs import ScaleObs

    env = gym.make("CartPole-v1")
    env.unwrapped.gravity = gravity  # type: ignore[attr-defined]
    recorder = RecordTrajectory(env if factor is None else ScaleObs(env, factor), out)
    recorder.reset(seed=0)
    for t in range(30):
        _, _, terminated, _, _ = recorder.step((t // 3) % 2)
        if terminated:
            break
    recorder.close()
    return out


def test_every_step_with_the_new_numpy_type_counts_as_differing(tmp_path: Path) -> None:
    # The same values as float64: each step has the new type, though only the
    # reset and the first step write it (a step without dtypes keeps the one before).
    golden = _scaled_cartpole(tmp_path / "golden", factor=None)
    actual = _scaled_cartpole(tmp_path / "actual", factor=1.0)
    text = format_comparison(compare(golden, actual))
    assert "  first divergence: episode 0, reset, obs" in text
    assert "    dtype changed float32 -> float64" in text
    steps = len(read_recording(golden)[0].steps)
    assert f"  reset record differs; steps differing: {steps} of {steps}; episode length" in text


def _typed_and_paid(out: Path, *, dtype: Any, pay: float) -> Path:
    """Six steps of a scripted env: observations of ``dtype``, rewards ``pay`` from step 3 on."""
    from tests.support.envs import ScriptedEnv, run

    space = gym.spaces.Box(-10.0, 10.0, (2,), dtype)
    observations = [np.array([0.5 * t, 1.0], dtype=dtype) for t in range(7)]
    rewards = [1.0, 1.0, pay, pay, pay, pay]
    run(RecordTrajectory(ScriptedEnv(space, observations, rewards=rewards), out), [0] * 6)
    return out


def test_a_dtype_change_with_a_physics_change_names_every_diverging_field(tmp_path: Path) -> None:
    golden = _typed_and_paid(tmp_path / "golden", dtype=np.float32, pay=1.0)
    actual = _typed_and_paid(tmp_path / "actual", dtype=np.float64, pay=2.0)
    comparison = compare(golden, actual)
    lines = format_comparison(comparison).splitlines()
    assert lines[2:4] == [
        "  first divergence: episode 0, reset, obs",
        "    dtype changed float32 -> float64",
    ]
    assert lines[4] == "    values differ too, beyond the change of type: reward (from t=3)"
    from gym_goldens.present.viz import plot_divergence

    figure = plot_divergence(comparison)
    assert figure is not None
    titles = [axes.get_title(loc="left") for axes in figure.axes if axes.get_title(loc="left")]
    assert titles == ["reward"]
    assert "first divergence at t=3 (reward)" in figure.get_suptitle()


def test_a_report_is_data_rendered_once_in_the_order_of_its_parts() -> None:
    report = Report(
        "verdict: g.jsonl:3",
        notes=("note",),
        details=("first divergence", "  its values"),
        files=("actual recording: a",),
        fix="update with: pytest",
    )
    added = report.with_files("plot: d.png").with_notes("another note")
    assert added.render().splitlines() == [
        "verdict: g.jsonl:3",
        "  note",
        "  another note",
        "  first divergence",
        "    its values",
        "  actual recording: a",
        "  plot: d.png",
        "  update with: pytest",
    ]
    assert report.files == ("actual recording: a",)  # what it was built from is left as it was
    assert Report("verdict").render() == "verdict"


def test_a_mismatch_says_how_the_recording_was_made_and_what_differing_actions_mean(
    tmp_path: Path,
) -> None:
    golden = _record(tmp_path / "golden", steps=8)
    actual = Path(record_scaled_cartpole(tmp_path / "actual", steps=8, action=lambda t: 1))
    comparison = compare(golden, actual)
    recorded = mismatch_report(comparison, replay=False, nodeid="t.py::t", variant="variant: x")
    lines = recorded.with_files("plot: d.png").render().splitlines()
    assert lines[0].startswith("golden mismatch: ")
    assert lines[1:3] == [f"  {RECORDED_MODE}", "  variant: x"]
    assert lines[3].startswith("  the actions differ at the first divergence: ")
    assert lines[-3:] == [
        f"  actual recording: {actual}",
        "  plot: d.png",
        '  update with: pytest --update-goldens "t.py::t"',
    ]
    # The same comparison, as format_comparison words it, is what the notes go under.
    assert lines[4:-2] == format_comparison(comparison, nodeid="t.py::t").splitlines()[1:-1]
    replayed = mismatch_report(comparison, replay=True, nodeid="t.py::t").render().splitlines()
    assert replayed[0].startswith("golden mismatch in replay mode: ")
    assert replayed[1] == f"  {REPLAY_MODE}"
    assert not any("the actions differ" in line for line in replayed)


def test_a_nondeterminism_report_takes_a_plot_before_its_fix(tmp_path: Path) -> None:
    golden = _record(tmp_path / "golden", steps=8)
    actual = _record(tmp_path / "actual", steps=8, gravity=9.81)
    comparison = compare(golden, actual)
    report = nondeterminism_report(comparison, notes=["run 1: here", "run 2: there"])
    lines = report.with_files("plot: d.png").render().splitlines()
    assert lines[1:4] == [
        "  run 1 is shown as golden, run 2 as actual",
        "  run 1: here",
        "  run 2: there",
    ]
    assert lines[-2] == "  plot: d.png"
    assert lines[-1].startswith("  make it deterministic: ")
    assert report.render() == format_nondeterminism(
        comparison, notes=["run 1: here", "run 2: there"]
    )


def test_the_messages_of_a_test_that_is_not_compared_are_reports_too(tmp_path: Path) -> None:
    assert missing_report("g", "a", nodeid=None).with_notes("variant: x").lines == [
        "golden missing: g",
        "  variant: x",
        "  no golden has been recorded for this trajectory yet",
        "  actual recording: a",
        "  create it with: pytest --update-goldens",
    ]
    assert nothing_recorded_report("CartPole-v1").render() == (
        "nothing recorded: the env recorded as 'CartPole-v1' was never reset; "
        "call env.reset(seed=...) before stepping it"
    )
    assert refused_report(ValueError("g: a symlink"), actual_dir="a", nodeid="t.py::t").lines == [
        "golden refused: g: a symlink",
        "  nothing was read from or written to it",
        "  actual recording: a",
        '  or remove the symlink and record the golden with: pytest --update-goldens "t.py::t"',
    ]
    unreadable = not_updated_report(ValueError("g: bad"), actual_dir="a").lines
    assert unreadable[0] == "golden not updated: g: bad"
    assert unreadable[-1] == "  fix or remove the golden, then run pytest --update-goldens again"
    unwritable = not_updated_report(ValueError("g: full"), actual_dir="a", not_written=True)
    assert unwritable.lines[-1] == (
        "  free space or fix the permissions of the goldens dir, "
        "then run pytest --update-goldens again"
    )


def test_the_runs_of_a_determinism_check_that_cannot_be_compared_are_reported() -> None:
    failed = failed_run_report("run 2", "run 1", how="run 2: in a subprocess; exited:\n    boom")
    assert failed.render() == (
        "nondeterministic: run 2 failed, run 1 passed\n  run 2: in a subprocess; exited:\n    boom"
    )
    unrecorded = unrecorded_run_report(
        "CartPole-v1", missing="run 2", present="run 1", runs=["run 1: here", "run 2: there"]
    )
    assert unrecorded.lines == [
        "nondeterministic: run 2 did not record 'CartPole-v1', run 1 did",
        "  run 1: here",
        "  run 2: there",
    ]
    assert unreadable_run_report(ValueError("x.jsonl: bad")).render() == (
        "nondeterministic: a run's recording is unreadable: x.jsonl: bad"
    )
