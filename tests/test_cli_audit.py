"""gym-goldens audit: a determinism audit of a package's envs, without test code."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gym_goldens.audit.survey import fresh_hash_seed
from gym_goldens.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["audit", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def rows(out: str) -> dict[str, tuple[str, str, str]]:
    """``{env id: (verdict, steps, time)}`` of the table in ``out``."""
    pattern = re.compile(
        r"^(\S+) +(deterministic|NONDETERMINISTIC|check failed|error|skipped) +(\S+) +(\S+)$"
    )
    found = {}
    for line in out.splitlines():
        match = pattern.match(line)
        if match:
            found[match.group(1)] = (match.group(2), match.group(3), match.group(4))
    return found


def details(out: str, env_id: str) -> list[str]:
    """The lines under ``env_id``'s row, without their indentation."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{env_id} "))
    under = []
    for line in lines[start + 1 :]:
        if not line.startswith("    "):
            break
        under.append(line[4:])
    return under


def test_a_deterministic_package_passes(
    planted_package: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "Sound/*", "--import", "planted_envs", "--steps", "20")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == (
        "gym-goldens audit: 2 envs; seeds 0; 20 steps; each seed recorded twice in this process "
        f"and once in a fresh process (PYTHONHASHSEED={fresh_hash_seed()}), compared exactly; "
        "gymnasium's check_env on each unwrapped env"
    )
    assert lines[2] == "env                      verdict           steps  time"
    assert {env_id: row[:2] for env_id, row in rows(out).items()} == {
        "Sound/NewActionSpace-v0": ("deterministic", "20"),
        "Sound/Walker-v0": ("deterministic", "20"),
    }
    assert re.fullmatch(r"2 envs in \d+\.\ds: 2 deterministic", lines[-1])


def test_planted_faults_are_reported_and_exit_1(
    planted_package: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys,
        "Planted/*",
        "Loading/*",
        "--import",
        "planted_envs",
        "--exclude",
        "Loading/Broken*",
        "--steps",
        "20",
        "--json",
        "audit.json",
    )
    assert (code, err) == (1, "")
    table = rows(out)
    assert {env_id: row[0] for env_id, row in table.items()} == {
        "Loading/MissingDependency-v0": "skipped",
        "Loading/NeedsExtra-v0": "skipped",
        "Loading/Old-v1": "deterministic",
        "Planted/BadObservation-v0": "check failed",
        "Planted/Crashes-v0": "error",
        "Planted/GlobalRng-v0": "NONDETERMINISTIC",
        "Planted/HashOrder-v0": "NONDETERMINISTIC",
    }
    assert table["Planted/Crashes-v0"][1] == "4"
    assert table["Loading/NeedsExtra-v0"][1:] == ("-", "-")
    global_rng = details(out, "Planted/GlobalRng-v0")
    assert global_rng[0].startswith("nondeterministic: run 1 vs run 2: ")
    assert "  first divergence: episode 0, step t=1, obs[0]" in global_rng
    hash_order = details(out, "Planted/HashOrder-v0")
    assert hash_order[0].startswith("nondeterministic: run 1 vs run 3: ")
    assert any(
        line.startswith("  first divergence: episode 0, reset, info.tour[") for line in hash_order
    )
    assert details(out, "Loading/NeedsExtra-v0") == [
        'the walker needs its extra: pip install "planted[extra]"'
    ]
    assert details(out, "Planted/Crashes-v0")[0].startswith(
        "seed 0, run 1: at step 5: RuntimeError: the walker fell over (planted_envs.py:"
    )
    assert re.fullmatch(
        r"7 envs in \d+\.\ds: 1 deterministic, 2 NONDETERMINISTIC, 1 check failed, 1 error, "
        r"2 skipped",
        out.splitlines()[-5],
    )
    assert out.splitlines()[-4:] == [
        "left out 2 ids: deprecated or legacy, their entry points cannot load",
        "  Loading/Old-v0: out of date (Loading/Old-v1 is registered); planted_absent_dependency "
        "is not installed (No module named 'planted_absent_dependency')",
        "  Loading/VectorOnly-v0: registered for gymnasium.make_vec only (no entry_point)",
        "wrote audit.json",
    ]
    data = json.loads((planted_package / "audit.json").read_text())
    assert data["exit_code"] == 1
    assert data["counts"] == {
        "deterministic": 1,
        "NONDETERMINISTIC": 2,
        "check failed": 1,
        "error": 1,
        "skipped": 2,
    }
    assert data["settings"]["patterns"] == ["Planted/*", "Loading/*"]
    assert data["settings"]["exclude"] == ["Loading/Broken*"]
    assert data["settings"]["tolerance"] == "rtol=0, atol=0"
    assert [env["id"] for env in data["envs"]] == sorted(table)
    global_rng_json = next(env for env in data["envs"] if env["id"] == "Planted/GlobalRng-v0")
    assert global_rng_json["difference"]["runs"] == ["run 1", "run 2"]
    assert global_rng_json["difference"]["fields"][0]["field"] == "obs[0]"
    assert [entry["id"] for entry in data["left_out"]] == [
        "Loading/Old-v0",
        "Loading/VectorOnly-v0",
    ]


def test_no_match_exits_2_and_says_what_to_import(
    planted_package: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "Planted/*")
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        "gym-goldens: error: no registered env id matches 'Planted/*' "
        f"({err.split('(')[1].split(')')[0]})",
        "  gymnasium registers an env package's ids only when the package is imported: name the "
        "package that registers them, as in --import <the package>",
    ]
    code, _, err = run(capsys, "Ant-v2")
    assert code == 2
    assert err.startswith(
        "gym-goldens: error: every registered env id that matches 'Ant-v2' is left out"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["CartPole-v1", "--seeds", "0,x"], "--seeds expects comma-separated integers"),
        (["CartPole-v1", "--seeds", ","], "--seeds expects at least one seed"),
        (["CartPole-v1", "--jobs", "0"], "--jobs must be 1 or more, got 0"),
        (["CartPole-v1", "--steps", "-1"], "--steps must be 0 or more, got -1"),
        (["CartPole-v1", "--rtol", "obs=x"], "--rtol expects a number or FIELD=NUMBER"),
        (["CartPole-v1", "--import", "no_such_module"], "cannot import 'no_such_module'"),
    ],
)
def test_bad_usage_exits_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.startswith(f"gym-goldens: error: {message}"), err


def test_a_pattern_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys)
    assert code == 2
    assert "the following arguments are required: PATTERN" in err


def test_check_env_can_be_left_out(
    planted_package: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["Planted/BadObservation-v0", "--import", "planted_envs", "--steps", "10"]
    code, out, _ = run(capsys, *argv)
    assert code == 1
    assert details(out, "Planted/BadObservation-v0")[0] == (
        "check_env failed: The first element returned by `env.reset()` is not within the "
        "observation space."
    )
    code, out, _ = run(capsys, *argv, "--no-check-env")
    assert code == 0
    assert rows(out)["Planted/BadObservation-v0"][0] == "deterministic"
    assert "check_env" not in out


def test_tolerances_loosen_the_comparison(
    planted_package: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # check_env sees the global RNG too: left out here, so that only the runs are compared.
    argv = ["Planted/GlobalRng-v0", "--import", "planted_envs", "--steps", "10", "--no-check-env"]
    code, out, _ = run(capsys, *argv)
    assert code == 1
    code, out, _ = run(capsys, *argv, "--ignore", "obs,reward")
    assert code == 0, out
    assert "compared with rtol=0, atol=0, ignore=['obs', 'reward']" in out.splitlines()[0]
    code, out, _ = run(capsys, *argv, "--atol", "10")
    assert code == 0, out
    assert "compared with rtol=0, atol=10" in out.splitlines()[0]


def test_real_envs_over_seeds_with_their_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "CartPole-v1", "MountainCar-v0", "--seeds", "0,1", "--steps", "60")
    assert code == 0
    assert "seeds 0, 1; 60 steps" in out.splitlines()[0]
    assert {env_id: row[:2] for env_id, row in rows(out).items()} == {
        "CartPole-v1": ("deterministic", "120"),
        "MountainCar-v0": ("deterministic", "120"),
    }
    # gymnasium colours its warnings; they are listed without the colour codes.
    assert details(out, "CartPole-v1") == [
        "warning: WARN: A Box observation space minimum value is -infinity. This is probably too "
        "low.",
        "warning: WARN: A Box observation space maximum value is infinity. This is probably too "
        "high.",
    ]
    assert "\x1b" not in out


def test_toy_text_in_two_worker_processes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "*", "--entry-point", "gymnasium.envs.toy_text*", "--steps", "50", "--jobs", "2"
    )
    assert code == 0, out
    table = rows(out)
    assert {"Blackjack-v1", "FrozenLake-v1", "FrozenLake8x8-v1"} <= set(table)
    assert {row[0] for row in table.values()} == {"deterministic"}


class Terminal(io.StringIO):
    """A text stream that says it is a terminal, as a console's stderr does."""

    def isatty(self) -> bool:
        return True


def test_a_progress_bar_on_a_terminal_only(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert run(capsys, "Acrobot-v1", "--steps", "5", "--no-check-env")[0] == 0
    assert terminal.getvalue().startswith("\rauditing [")
    assert "1/1 envs" in terminal.getvalue()
    assert terminal.getvalue().endswith("\r\x1b[K")
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert run(capsys, "Acrobot-v1", "--steps", "5", "--no-check-env")[0] == 0
    assert sys.stderr.getvalue() == ""


def test_the_command_run_from_a_package_root(planted_package: Path) -> None:
    # The console script imports the package from the current folder, and so
    # does its fresh process, which hashes strings with another seed.
    script = Path(sys.executable).parent / "gym-goldens"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONHASHSEED"] = "7"
    done = subprocess.run(
        [str(script), "audit", "Planted/HashOrder-v0", "--import", "planted_envs", "--steps", "5"],
        cwd=planted_package,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "(PYTHONHASHSEED=8), compared exactly" in done.stdout
    assert "  run 3: in a fresh process, PYTHONHASHSEED=8" in done.stdout


def test_an_env_whose_reward_is_a_vector_is_audited(capsys: pytest.CaptureFixture[str]) -> None:
    import tests.support.vector_reward_envs as module

    code, out, _ = run(capsys, module.CHAIN, "--import", module.__name__, "--steps", "30")
    assert rows(out)[module.CHAIN][:2] == ("deterministic", "30"), out
    assert code == 0


def test_a_mo_gymnasium_env_is_audited(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip(
        "mo_gymnasium", reason="mo-gymnasium is not installed: pip install mo-gymnasium"
    )
    code, out, _ = run(capsys, "deep-sea-treasure-v0", "--import", "mo_gymnasium", "--steps", "30")
    assert rows(out)["deep-sea-treasure-v0"][:2] == ("deterministic", "30"), out
    assert code == 0


def test_an_env_that_hangs_is_an_error_row_after_the_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Only the env that hangs: another env's audit, a fresh process included, may itself take
    # more than a second on a busy machine (tests/audit/test_survey.py audits Garbage-v0).
    argv = ["Stuck/Sleeps-v0", "--import", "tests.audit.stuck_envs"]
    report = tmp_path / "audit.json"
    code, out, err = run(
        capsys, *argv, "--steps", "5", "--no-check-env", "--timeout", "1", "--json", str(report)
    )
    assert (code, err) == (1, "")
    table = rows(out)
    assert table["Stuck/Sleeps-v0"][0] == "error"
    assert details(out, "Stuck/Sleeps-v0")[0].startswith(
        "stopped after 1 s, the time the audit of an env may take (--timeout), during seed 0, "
        "run 1 (in this process)"
    )
    assert json.loads(report.read_text())["settings"]["timeout"] == 1.0
    code, out, err = run(capsys, "CartPole-v1", "--timeout", "-1")
    assert (code, out) == (2, "")
    assert err.startswith("gym-goldens: error: --timeout must be 0 (no limit) or more seconds")


def test_pettingzoo_envs_are_audited_with_api_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("pettingzoo", reason="pettingzoo is not installed")
    report = tmp_path / "audit.json"
    argv = ["--pettingzoo", "classic/rps_v2", "classic/tictactoe_v3", "--api-test"]
    code, out, err = run(capsys, *argv, "--steps", "30", "--json", str(report))
    assert (code, err) == (0, ""), out
    assert out.splitlines()[0].endswith("compared exactly; PettingZoo's api_test on each env")
    assert {env_id: row[:2] for env_id, row in rows(out).items()} == {
        "classic/rps_v2": ("deterministic", "30"),
        "classic/tictactoe_v3": ("deterministic", "30"),
    }
    # api_test's own progress lines stay out of the table; its warnings are listed.
    assert "API test" not in out
    # Only the envs' own warnings: not PettingZoo's deprecation of what api_test imports.
    for name in ("classic/rps_v2", "classic/tictactoe_v3"):
        assert details(out, name) == ["warning: Observation numpy array is all zeros."]
    settings = json.loads(report.read_text())["settings"]
    assert (settings["pettingzoo"], settings["api_test"], settings["check_env"]) == (
        True,
        True,
        False,
    )


def test_pettingzoo_names_that_match_nothing_are_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("pettingzoo", reason="pettingzoo is not installed")
    code, out, err = run(capsys, "--pettingzoo", "classic/no_such_v1")
    assert (code, out) == (2, "")
    assert "no PettingZoo env matches 'classic/no_such_v1'" in err
    assert "classic (" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["CartPole-v1", "--api-test"], "--api-test runs PettingZoo's api_test; add --pettingzoo"),
        (
            ["--pettingzoo", "classic/*", "--entry-point", "x*"],
            "--entry-point applies to registered Gymnasium envs; PettingZoo's are chosen by "
            "family/module, such as classic/*",
        ),
        (["--pettingzoo", "classic/*", "--import", "planted_envs"], "--import applies to"),
    ],
)
def test_pettingzoo_options_used_apart_are_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert message in err


def test_what_an_env_writes_to_stderr_is_shown_under_its_row(
    capfd: pytest.CaptureFixture[str],
) -> None:
    # Garbage-v0 writes to file descriptor 2 at each reset, as MuJoCo's warnings are written.
    code = main(["audit", "Stuck/Garbage-v0", "--import", "tests.audit.stuck_envs", "--steps", "5"])
    out, err = capfd.readouterr()
    assert code == 0
    assert rows(out)["Stuck/Garbage-v0"][0] == "deterministic"
    under = details(out, "Stuck/Garbage-v0")
    assert "stderr (what the env wrote there):" in under
    assert err == ""  # none of it amid the table, nor anywhere else
