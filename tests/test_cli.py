"""The gym-goldens command: every subcommand's output and exit codes.

Recordings are folders holding one ``trajectory.jsonl`` with every episode;
folders of format 1 (a file per episode) still show and diff.
"""

from __future__ import annotations

import base64
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import orjson
import pytest

from gym_goldens import RecordTrajectory, compare
from gym_goldens.cli import main
from gym_goldens.format.header import FORMAT_VERSION
from gym_goldens.format.reader import read_recording
from tests.support.envs import ImageEnv
from tests.support.legacy import write_format_1
from tests.support.recordings import perturb, record_cartpole


def second_header(recording: Path) -> int:
    """The index, in the lines of ``trajectory.jsonl``, of episode 1's header."""
    return read_recording(recording)[1].line - 1


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_cartpole(tmp_path_factory.mktemp("goldens") / "CartPole-v1", steps=40)


@pytest.fixture(scope="module")
def actual(golden: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return perturb(
        golden, tmp_path_factory.mktemp("actual") / "CartPole-v1", index=2, from_t=17, delta=0.01
    )


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return code, out, err


# show


def test_show_summarises_a_recording(golden: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "show", golden)
    assert (code, err) == (0, "")
    episodes = list(read_recording(golden))
    assert f"episodes: 2, steps: {sum(len(e.steps) for e in episodes)}" in out
    assert "env: CartPole-v1" in out
    assert (
        "observation space: Box([-4.8 -inf -0.418879 -inf], [4.8 inf 0.418879 inf], (4,), float32)"
        in out
    )
    assert "action space: Discrete(2)" in out
    assert re.search(r"^ +obs +float\[4\]$", out, re.MULTILINE)
    assert re.search(r"^ +action +int$", out, re.MULTILINE)
    assert re.search(r"^ +episode +steps +return +ended +seed$", out, re.MULTILINE)
    for episode in episodes:
        ended = "terminated" if episode.steps[-1]["terminated"] else "open"
        row = rf"^ +{episode.index} +{len(episode.steps)} +{episode.total_reward:g} +{ended} +"
        assert re.search(row, out, re.MULTILINE), row


def test_show_reads_a_trajectory_file(golden: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert [p.name for p in golden.iterdir()] == ["trajectory.jsonl"]
    code, out, _ = run(capsys, "show", golden / "trajectory.jsonl")
    assert code == 0
    assert f"recording: {golden / 'trajectory.jsonl'}" in out
    assert "episodes: 2, steps: 50" in out
    assert re.search(r"^ +1 +10 +10 +open +-$", out, re.MULTILINE)


def test_show_lists_the_recordings_of_a_goldens_folder(
    golden: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(golden, tmp_path / "goldens" / "tests" / "test_a" / "CartPole-v1")
    shutil.copytree(golden, tmp_path / "goldens" / "tests" / "test_b[1]" / "CartPole-v1")
    code, out, _ = run(capsys, "show", tmp_path / "goldens")
    assert code == 0
    steps = 2 * sum(len(e.steps) for e in read_recording(golden))
    assert f"recordings: 2, episodes: 4, steps: {steps}" in out
    assert re.search(r"^ +tests/test_a/CartPole-v1 +CartPole-v1 +2 ", out, re.MULTILINE)
    assert re.search(r"^ +tests/test_b\[1\]/CartPole-v1 +CartPole-v1 +2 ", out, re.MULTILINE)


def test_show_steps_prints_a_table(golden: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", golden, "--steps", "0:3")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["t", "action", "reward", "term", "trunc", "obs"]
    assert len(lines) == 4
    episode = read_recording(golden)[0]
    assert lines[1].lstrip().startswith("0 (reset)")
    assert f"{episode.records[0]['obs'][0]:.6g}" in lines[1]
    assert lines[3].split()[:5] == ["2", str(episode.steps[1]["action"]), "1", "-", "-"]


def test_show_steps_with_fields_prints_those_columns(
    golden: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "show", golden, "--steps", "1:3", "--fields", "obs[2],action")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["t", "obs[2]", "action"]
    steps = read_recording(golden)[0].steps
    assert lines[1].split() == ["1", f"{steps[0]['obs'][2]:.6g}", str(steps[0]["action"])]
    assert len(lines) == 3
    code, _, err = run(capsys, "show", golden, "--steps", "1:3", "--fields", "velocity")
    assert code == 2
    assert "--fields: field pattern 'velocity' starts with 'velocity'" in err
    code, _, err = run(capsys, "show", golden, "--fields", "obs")
    assert code == 2
    assert "--fields chooses the columns of --steps" in err


def test_show_one_step_of_another_episode(golden: Path, capsys: pytest.CaptureFixture[str]) -> None:
    last = read_recording(golden)[1].steps[-1]
    for path in (golden, golden / "trajectory.jsonl"):
        code, out, _ = run(capsys, "show", path, "--steps", "10", "--episode", "1")
        assert code == 0
        lines = out.splitlines()
        assert len(lines) == 2
        assert lines[1].split()[:3] == ["10", str(last["action"]), "1"]
        assert lines[1].split()[3] == ("yes" if last["terminated"] else "-")
    # Episode 0 has a step 10 too, with its own action and observation.
    _, first, _ = run(capsys, "show", golden, "--steps", "10")
    assert first.splitlines()[1] != lines[1]


def test_show_all_lists_every_episode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = RecordTrajectory(gym.make("FrozenLake-v1", is_slippery=False), tmp_path / "lake")
    for seed in range(41):
        env.reset(seed=seed)
        env.step(0)  # one step per episode
    env.close()
    _, short, _ = run(capsys, "show", tmp_path / "lake")
    assert "... 1 more episode (show them all with --all)" in short
    _, every, _ = run(capsys, "show", tmp_path / "lake", "--all")
    assert "more episode" not in every
    assert re.search(r"^ +40 +1 +0 +open +40$", every, re.MULTILINE)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--steps", "x:y"], "--steps expects A:B"),
        (["--steps", "5:2"], "--steps expects 0 <= A <= B"),
        (
            ["--steps", "0:2", "--episode", "7"],
            "there is no episode 7; this recording has episodes 0 to 1",
        ),
        (["--steps", "0:2", "--episode", "-1"], "there is no episode -1"),
    ],
)
def test_show_refuses_bad_arguments(
    golden: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "show", golden, *argv)
    assert (code, out) == (2, "")
    assert err.startswith("gym-goldens: error: ")
    assert message in err


def test_show_steps_needs_one_recording(
    golden: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(golden, tmp_path / "goldens" / "t" / "CartPole-v1")
    code, _, err = run(capsys, "show", tmp_path / "goldens", "--steps", "0:2")
    assert code == 2
    assert "is a folder of recordings; give --steps one recording folder or trajectory file" in err


def test_show_unreadable_input_exits_2_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "show", tmp_path / "nowhere")
    assert (code, out) == (2, "")
    assert err == f"gym-goldens: error: {tmp_path / 'nowhere'}: no such file or folder\n"
    code, _, err = run(capsys, "show", tmp_path)
    assert code == 2
    assert "no recording (trajectory.jsonl) in this folder or below" in err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "trajectory.jsonl").write_text(
        '{"event": "reset", "obs": [1]}\n{"event": "step", "t": 1,\n'
    )
    code, _, err = run(capsys, "show", bad)
    assert code == 2
    assert f"{bad / 'trajectory.jsonl'}:2: invalid JSON" in err
    assert "Traceback" not in err


def test_show_refuses_a_folder_of_both_layouts(
    golden: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    both = tmp_path / "both"
    shutil.copytree(golden, both)
    write_format_1(golden, tmp_path / "old")
    shutil.copy(tmp_path / "old" / "episode_00000.jsonl", both)
    code, out, err = run(capsys, "show", both)
    assert (code, out) == (2, "")
    assert "holds both trajectory.jsonl and episode files of format 1" in err
    assert "keep one" in err


# diff


def test_diff_of_equal_recordings_exits_0(golden: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "diff", golden, golden)
    assert (code, err) == (0, "")
    assert out.startswith("equal: ")
    assert "(2 episodes; rtol=1e-06, atol=1e-12)" in out


def test_diff_prints_the_plugin_report_and_exits_1(
    golden: Path, actual: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "diff", golden, actual)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"golden mismatch: {golden / 'trajectory.jsonl'}")
    assert lines[1] == "  first divergence: episode 0, step t=17, obs[2]"
    assert "steps differing: 24 of 40 (from t=17)" in out
    assert f"actual recording: {actual}" in out
    assert lines[-1] == f"  plot it with: gym-goldens plot {golden} --vs {actual}"


def test_diff_of_two_recordings_made_by_hand_gives_no_update_command(
    golden: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = shutil.copytree(golden, tmp_path / "runs" / "before")
    second = perturb(first, tmp_path / "runs" / "after", index=2, from_t=17, delta=0.01)
    code, out, _ = run(capsys, "diff", first, second)
    assert code == 1
    assert "first divergence: episode 0, step t=17, obs[2]" in out
    assert "update" not in out
    # Under a goldens folder, as the plugin writes them, the update command is there.
    golden_copy = shutil.copytree(golden, tmp_path / "goldens" / "tests" / "test_cart" / "cart")
    _, out, _ = run(capsys, "diff", golden_copy, second)
    assert "  update with: pytest --update-goldens, in the project the golden belongs to" in out


def test_diff_of_summaries_of_two_format_versions_says_so_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, version in [("golden", "2.0"), ("actual", FORMAT_VERSION)]:
        env = RecordTrajectory(ImageEnv(length=3), tmp_path / name, format_version=version)
        env.reset(seed=0)
        for _ in range(3):
            env.step(0)
        env.close()
    code, out, err = run(capsys, "diff", tmp_path / "golden", tmp_path / "actual")
    assert (code, err) == (1, "")
    assert "summaries of different format versions (golden 2.0, SHA-256; actual 2.1" in out
    assert "Record the golden again in format 2.1" in out


@pytest.mark.parametrize(
    "options",
    [
        ["--atol", "obs[2]=0.02"],
        ["--atol", "0.02"],
        ["--ignore", "obs"],
        ["--ignore", "reward,obs[2]"],
    ],
)
def test_diff_takes_tolerances_and_ignored_fields(
    golden: Path, actual: Path, options: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "diff", golden, actual, *options)
    assert code == 0, out
    assert out.startswith("equal: ")


def test_diff_tolerance_for_another_field_does_not_help(
    golden: Path, actual: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "diff", golden, actual, "--atol", "obs[1]=1", "--ignore", "reward")[0] == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--rtol", "lots"], "--rtol expects a number or FIELD=NUMBER, got 'lots'"),
        (["--atol", "obs=-1"], "must be a non-negative number"),
        (["--ignore", "observation"], "not a record field"),
    ],
)
def test_diff_refuses_bad_tolerances(
    golden: Path, options: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "diff", golden, golden, *options)
    assert (code, out) == (2, "")
    assert message in err


def test_diff_sees_a_golden_one_step_longer(
    golden: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shorter = tmp_path / "shorter"
    shutil.copytree(golden, shorter)
    path = shorter / "trajectory.jsonl"  # its last line is episode 1's last step
    path.write_bytes(b"\n".join(path.read_bytes().splitlines()[:-1]) + b"\n")
    code, out, _ = run(capsys, "diff", golden, shorter)
    assert code == 1
    assert "first divergence: episode 1, step t=10: only the golden has this step" in out
    assert "episode length 10 vs 9 (golden vs actual)" in out
    code, out, _ = run(capsys, "diff", shorter, golden)
    assert code == 1
    assert "first divergence: episode 1, step t=10: only the actual recording has this step" in out


def test_diff_pairs_the_episodes_of_the_file_by_number(
    golden: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Episode 0 loses its last step, in the middle of the file; episode 1 is intact.
    shorter = tmp_path / "shorter"
    shorter.mkdir()
    lines = (golden / "trajectory.jsonl").read_bytes().splitlines()
    second = second_header(golden)
    kept = lines[: second - 1] + lines[second:]
    (shorter / "trajectory.jsonl").write_bytes(b"\n".join(kept) + b"\n")
    code, out, _ = run(capsys, "diff", golden, shorter)
    assert code == 1
    assert "first divergence: episode 0, step t=40: only the golden has this step" in out
    assert "episodes differing: 1 of 2 (episodes 0)" in out


def test_diff_compares_trajectory_files(
    golden: Path, actual: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "diff", golden / "trajectory.jsonl", actual / "trajectory.jsonl")
    assert code == 1
    assert "first divergence: episode 0, step t=17, obs[2]" in out
    assert "episodes differing: 1 of 2 (episodes 0)" in out
    code, out, _ = run(capsys, "diff", golden / "trajectory.jsonl", golden / "trajectory.jsonl")
    assert (code, out.split(":")[0]) == (0, "equal")
    assert "(2 episodes;" in out


def test_a_folder_of_format_1_still_shows_and_diffs(
    golden: Path, actual: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old_golden = write_format_1(golden, tmp_path / "old-golden")
    old_actual = write_format_1(actual, tmp_path / "old-actual")
    assert sorted(p.name for p in old_golden.iterdir()) == [
        "episode_00000.jsonl",
        "episode_00001.jsonl",
    ]
    code, out, _ = run(capsys, "show", old_golden)
    assert code == 0
    assert "episodes: 2, steps: 50" in out
    assert re.search(r"^ +1 +10 +10 +open +-$", out, re.MULTILINE)
    _, old_steps, _ = run(capsys, "show", old_golden, "--steps", "3:6", "--episode", "1")
    _, new_steps, _ = run(capsys, "show", golden, "--steps", "3:6", "--episode", "1")
    assert len(old_steps.splitlines()) == 4
    assert old_steps == new_steps
    code, out, _ = run(capsys, "diff", old_golden, old_actual)
    assert code == 1
    assert out.startswith(f"golden mismatch: {old_golden / 'episode_00000.jsonl'}")
    assert "first divergence: episode 0, step t=17, obs[2]" in out
    # An old golden still matches the same recording written in format 2.
    code, out, _ = run(capsys, "diff", old_golden, golden)
    assert (code, out.split(":")[0]) == (0, "equal")
    assert "(2 episodes;" in out


def test_diff_counts_missing_episodes(
    golden: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fewer = tmp_path / "fewer"
    fewer.mkdir()
    lines = (golden / "trajectory.jsonl").read_bytes().splitlines()
    (fewer / "trajectory.jsonl").write_bytes(b"\n".join(lines[: second_header(golden)]) + b"\n")
    code, out, _ = run(capsys, "diff", golden, fewer)
    assert code == 1
    assert "episode 1 is missing from the actual recording (the golden episode has 10 steps)" in out


def test_diff_of_unreadable_input_exits_2(
    golden: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "diff", golden, tmp_path / "missing")
    assert (code, out) == (2, "")
    assert err == f"gym-goldens: error: {tmp_path / 'missing'}: no such file or folder\n"
    broken = tmp_path / "broken"
    shutil.copytree(golden, broken)
    path = broken / "trajectory.jsonl"
    lines = path.read_bytes().splitlines()
    lines[4] = b'{"event": "step", "t": 3, "obs": [1, 2'
    path.write_bytes(b"\n".join(lines) + b"\n")
    code, out, err = run(capsys, "diff", golden, broken)
    assert (code, out) == (2, "")
    assert f"{path}:5: invalid JSON" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run(capsys, "diff", golden, empty)
    assert code == 2
    assert f"{empty}: no recording (trajectory.jsonl) in this folder" in err


# plot


def test_plot_writes_a_png_named_after_the_recording(
    golden: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "plot", golden)
    assert (code, out, err) == (0, "wrote CartPole-v1.png\n", "")
    assert (tmp_path / "CartPole-v1.png").read_bytes().startswith(b"\x89PNG")
    (tmp_path / "CartPole-v1.png").unlink()
    # A trajectory file is named after its recording folder too.
    code, out, _ = run(capsys, "plot", golden / "trajectory.jsonl", "--episode", "1")
    assert (code, out) == (0, "wrote CartPole-v1.png\n")
    assert (tmp_path / "CartPole-v1.png").read_bytes().startswith(b"\x89PNG")


def test_plot_vs_writes_the_comparison(
    golden: Path, actual: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import matplotlib.image

    out_file = tmp_path / "out" / "cmp.png"
    code, out, _ = run(
        capsys, "plot", golden, "--vs", actual, "-o", out_file, "--fields", "obs[2],reward"
    )
    assert (code, out) == (0, f"wrote {out_file}\n")
    image = matplotlib.image.imread(out_file)
    assert image[:, :, :3].std() > 0.05  # not a blank canvas
    red = (abs(image[:, :, 0] - 0xD6 / 255) < 0.1) & (image[:, :, 1] < 0.3) & (image[:, :, 2] < 0.3)
    assert red.sum() > 100  # the divergence marker is drawn


def test_plot_html_embeds_the_report_and_the_figure(
    golden: Path, actual: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "cmp.html"
    code, _, _ = run(capsys, "plot", golden, "--vs", actual, "-o", page)
    assert code == 0
    text = page.read_text(encoding="utf-8")
    assert "first divergence: episode 0, step t=17, obs[2]" in text
    (encoded,) = re.findall(r'src="data:image/png;base64,([^"]+)"', text)
    assert base64.b64decode(encoded).startswith(b"\x89PNG")
    assert "<script" not in text
    assert "1 episode differs; rtol=1e-06, atol=1e-12" in text


def test_plot_html_of_one_recording(
    golden: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "one.html"
    assert run(capsys, "plot", golden, "--episode", "1", "-o", page)[0] == 0
    text = page.read_text(encoding="utf-8")
    assert "episode 1" in text
    assert len(re.findall(r"data:image/png;base64,", text)) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--fields", "observation"], "--fields: field pattern 'observation'"),
        (["--fields", ","], "--fields needs at least one field"),
        (["--fields", "info"], "no numbers to plot in info"),
        (["--rtol", "0.1"], "--rtol, --atol and --ignore apply to a comparison; add --vs OTHER"),
        (["--episode", "5"], "there is no episode 5; this recording has episodes 0 to 1"),
    ],
)
def test_plot_refuses_bad_arguments(
    golden: Path, tmp_path: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "plot", golden, "-o", tmp_path / "x.png", *argv)
    assert (code, out) == (2, "")
    assert message in err
    assert not (tmp_path / "x.png").exists()


def test_plot_without_matplotlib_says_how_to_install_it(
    golden: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, out, err = run(capsys, "plot", golden, "-o", tmp_path / "x.png")
    assert (code, out) == (2, "")
    assert 'install it with: pip install "pytest-gym-goldens[viz]"' in err


# record


def test_record_writes_a_seeded_rollout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "record", "CartPole-v1", "--seed", "3", "--steps", "120", "-o", tmp_path / "a"
    )
    assert (code, err) == (0, "")
    recording = list(read_recording(tmp_path / "a"))
    assert sum(len(e.steps) for e in recording) == 120
    assert recording[0].header is not None
    assert recording[0].header["reset"]["seed"] == 3
    assert all(e.records[0]["event"] == "reset" and e.steps for e in recording)
    where, n = tmp_path / "a", len(recording)
    assert out == f"recorded 120 steps of CartPole-v1 (seed 3) in {n} episodes: {where} (created)\n"


def test_record_is_deterministic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("a", "b"):
        assert (
            run(
                capsys,
                "record",
                "Pendulum-v1",
                "--seed",
                "5",
                "--steps",
                "30",
                "-o",
                tmp_path / name,
            )[0]
            == 0
        )
    assert compare(tmp_path / "a", tmp_path / "b").equal
    _, out, _ = run(
        capsys, "record", "Pendulum-v1", "--seed", "5", "--steps", "30", "-o", tmp_path / "a"
    )
    assert out.endswith("(unchanged)\n")
    _, out, _ = run(
        capsys, "record", "Pendulum-v1", "--seed", "6", "--steps", "30", "-o", tmp_path / "a"
    )
    assert out.endswith("(updated)\n")
    assert not compare(tmp_path / "a", tmp_path / "b").equal


def test_record_replaces_a_longer_recording_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "record", "CartPole-v1", "--seed", "0", "--steps", "200", "-o", tmp_path / "r")
    before = len(read_recording(tmp_path / "r"))
    run(capsys, "record", "CartPole-v1", "--seed", "0", "--steps", "5", "-o", tmp_path / "r")
    after = read_recording(tmp_path / "r")
    assert before > 1
    assert len(after) == 1
    assert len(after[0].steps) == 5
    assert [p.name for p in tmp_path.iterdir()] == ["r"]  # no scratch folder left behind


def test_record_passes_env_kwargs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["record", "FrozenLake-v1", "--seed", "1", "--steps", "20", "-o", tmp_path / "lake"]
    assert run(capsys, *argv, "--env-kwargs", '{"is_slippery": false, "map_name": "8x8"}')[0] == 0
    header = read_recording(tmp_path / "lake")[0].header
    assert header is not None
    assert header["env"]["kwargs"] == {"is_slippery": False, "map_name": "8x8"}
    assert header["observation_space"]["n"] == 64


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["NoSuchEnv-v0"], "cannot make env 'NoSuchEnv-v0'"),
        (["FrozenLake-v1", "--env-kwargs", "{oops"], "--env-kwargs is not valid JSON"),
        (["FrozenLake-v1", "--env-kwargs", "[1, 2]"], "--env-kwargs expects a JSON object"),
        (
            ["FrozenLake-v1", "--env-kwargs", '{"slippery": true}'],
            "check the --env-kwargs ['slippery']",
        ),
    ],
)
def test_record_refuses_what_it_cannot_make(
    tmp_path: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, "record", *argv[:1], "--seed", "0", "--steps", "5", "-o", tmp_path / "r", *argv[1:]
    )
    assert (code, out) == (2, "")
    assert message in err
    assert not (tmp_path / "r").exists()


def test_record_refuses_negative_steps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        capsys, "record", "CartPole-v1", "--seed", "0", "--steps", "-1", "-o", tmp_path / "r"
    )
    assert code == 2
    assert "--steps must be 0 or more, got -1" in err


def test_record_draws_no_progress_bar_off_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, _, err = run(
        capsys, "record", "CartPole-v1", "--seed", "0", "--steps", "50", "-o", tmp_path / "r"
    )
    assert err == ""


# argparse and the console script


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: gym-goldens" in capsys.readouterr().err
    assert main(["record", "CartPole-v1"]) == 2
    assert (
        "the following arguments are required: --seed, --steps, -o/--output"
        in capsys.readouterr().err
    )
    assert main(["--help"]) == 0
    assert "show" in capsys.readouterr().out


def test_console_script_and_module_run(golden: Path, actual: Path) -> None:
    script = Path(sys.executable).parent / "gym-goldens"
    assert script.exists(), "install the package (pip install -e .) to get the console script"
    shown = subprocess.run([script, "show", golden], capture_output=True, text=True, check=False)
    assert shown.returncode == 0, shown.stderr
    assert "env: CartPole-v1" in shown.stdout
    compared = subprocess.run(
        [sys.executable, "-m", "gym_goldens", "diff", golden, actual],
        capture_output=True,
        text=True,
        check=False,
    )
    assert compared.returncode == 1
    assert "first divergence: episode 0, step t=17, obs[2]" in compared.stdout
    missing = subprocess.run(
        [script, "diff", golden, "nowhere"], capture_output=True, text=True, check=False
    )
    assert missing.returncode == 2
    assert missing.stderr == "gym-goldens: error: nowhere: no such file or folder\n"


# progress


class Terminal(io.StringIO):
    """A text stream that says it is a terminal, as a console's stderr does."""

    def isatty(self) -> bool:
        return True


def test_long_operations_draw_a_progress_bar_on_a_terminal(
    golden: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = (golden / "trajectory.jsonl").read_bytes().splitlines()
    header, reset, step = lines[0], lines[1], orjson.loads(lines[2])
    steps = [orjson.dumps({**step, "t": t}, option=orjson.OPT_SORT_KEYS) for t in range(1, 100_001)]
    long_run = tmp_path / "long"
    long_run.mkdir()
    (long_run / "trajectory.jsonl").write_bytes(b"\n".join([header, reset, *steps]) + b"\n")
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    code, out, _ = run(capsys, "show", long_run)
    assert code == 0
    assert "episodes: 1, steps: 100,000" in out
    assert terminal.getvalue().startswith("\rreading [")
    assert terminal.getvalue().endswith("\r\x1b[K")
    terminal.seek(0)
    terminal.truncate()
    assert run(capsys, "diff", long_run, long_run)[0] == 0
    assert "\rcomparing [" in terminal.getvalue()
    terminal.seek(0)
    terminal.truncate()
    assert run(capsys, "plot", long_run, "-o", tmp_path / "long.png", "--fields", "reward")[0] == 0
    assert "\rreading [" in terminal.getvalue()
    # The same work off a terminal draws nothing.
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert run(capsys, "show", long_run)[0] == 0
    assert sys.stderr.getvalue() == ""


def test_record_imports_a_module_of_the_current_folder_as_python_m_does(tmp_path: Path) -> None:
    # A package's root, with the module that registers its envs.
    (tmp_path / "my_envs.py").write_text(
        "import gymnasium as gym\n"
        "gym.register('MyCartPole-v0', entry_point='gymnasium.envs.classic_control:CartPoleEnv')\n"
    )
    script = Path(sys.executable).parent / "gym-goldens"
    arguments = ["record", "my_envs:MyCartPole-v0", "--seed", "0", "--steps", "5", "-o", "out"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for command in ([str(script)], [sys.executable, "-m", "gym_goldens"]):
        done = subprocess.run(
            [*command, *arguments],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "recorded 5 steps of my_envs:MyCartPole-v0" in done.stdout
