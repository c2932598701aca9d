"""The audit of a package's envs: three runs per seed compared, and gymnasium's check_env."""

from __future__ import annotations

import dataclasses
import fnmatch
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gym_goldens.audit.registry import select_envs
from gym_goldens.audit.survey import (
    AuditSettings,
    audit_envs,
    audit_failed,
    fresh_hash_seed,
)
from gym_goldens.present.verdicts import (
    CHECK_FAILED,
    DETERMINISTIC,
    ERROR,
    NONDETERMINISTIC,
    SKIPPED,
    AuditRow,
)
from gym_goldens.record.fresh import StreamTail
from tests.support import planted

PLANTED = AuditSettings(steps=30, import_modules=("planted_envs",))


@pytest.fixture(scope="module")
def planted_rows(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, AuditRow]]:
    """The audit of the planted package's Planted/* and Sound/* envs, once for the module."""
    folder = tmp_path_factory.mktemp("package")
    planted.install(folder)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        patch.syspath_prepend(str(folder))
        try:
            selection = select_envs("Planted/*", "Sound/*", import_modules=["planted_envs"])
            yield {row.env_id: row for row in audit_envs(selection, PLANTED)}
        finally:
            planted.forget()


def test_the_global_rng_in_step_shows_in_this_process(planted_rows: dict[str, AuditRow]) -> None:
    row = planted_rows["Planted/GlobalRng-v0"]
    assert row.verdict == NONDETERMINISTIC
    difference = row.difference
    assert difference is not None
    assert (difference.seed, difference.first, difference.second) == (0, "run 1", "run 2")
    assert difference.how == "in this process, on a fresh env from gym.make"
    assert (difference.episode, difference.t) == (0, 1)
    field, first, second = difference.fields[0]
    assert field == "obs[0]"
    assert isinstance(first, float)
    assert isinstance(second, float)
    assert first != second
    # The words of the pytest reports, with the two values.
    report = difference.report.splitlines()
    assert report[0].startswith("nondeterministic: run 1 vs run 2: ")
    assert "  first divergence: episode 0, step t=1, obs[0]" in report
    assert f"    golden {first!r}  actual {second!r}  |diff| " in "\n".join(report)
    # Kept, to be looked at: gym-goldens diff, plot.
    assert row.recordings is not None
    assert (Path(row.recordings) / "seed-0" / "run-2" / "trajectory.jsonl").is_file()


def test_set_order_in_reset_shows_only_in_a_fresh_process(
    planted_rows: dict[str, AuditRow],
) -> None:
    row = planted_rows["Planted/HashOrder-v0"]
    assert row.verdict == NONDETERMINISTIC
    difference = row.difference
    assert difference is not None
    assert (difference.first, difference.second) == ("run 1", "run 3")
    assert difference.how == f"in a fresh process, PYTHONHASHSEED={fresh_hash_seed()}"
    assert difference.t is None  # the reset record
    assert fnmatch.fnmatch(difference.fields[0][0], "info.tour[[]*[]]")
    assert "  only the fresh process differs: the usual cause is iterating over a set" in (
        difference.report
    )


def test_an_action_space_built_anew_in_reset_is_seeded(planted_rows: dict[str, AuditRow]) -> None:
    row = planted_rows["Sound/NewActionSpace-v0"]
    assert (row.verdict, row.difference, row.recordings) == (DETERMINISTIC, None, None)
    assert row.steps == 30
    assert row.seconds is not None


def test_a_deterministic_env_passes(planted_rows: dict[str, AuditRow]) -> None:
    row = planted_rows["Sound/Walker-v0"]
    assert (row.verdict, row.reason, row.check_failure, row.warnings) == (
        DETERMINISTIC,
        None,
        None,
        (),
    )
    assert not audit_failed([row, planted_rows["Sound/NewActionSpace-v0"]])


def test_check_env_failures_and_warnings(planted_rows: dict[str, AuditRow]) -> None:
    row = planted_rows["Planted/BadObservation-v0"]
    assert row.verdict == CHECK_FAILED
    assert row.difference is None
    assert row.check_failure == (
        "The first element returned by `env.reset()` is not within the observation space."
    )
    # Gymnasium's passive checker warned too, in colour on a terminal: listed without it.
    assert (
        "WARN: The obs returned by the `reset()` method is not within the observation space."
        in (row.warnings)
    )
    assert not any("\x1b" in text for text in row.warnings)
    assert audit_failed([row])


def test_an_error_says_where_and_how_far_the_run_got(planted_rows: dict[str, AuditRow]) -> None:
    row = planted_rows["Planted/Crashes-v0"]
    assert row.verdict == ERROR
    assert row.steps == 4
    assert row.reason is not None
    assert row.reason.startswith(
        "seed 0, run 1: at step 5: RuntimeError: the walker fell over (planted_envs.py:"
    )
    assert row.reason.endswith(" in step)")
    assert audit_failed([row])


def test_ids_that_cannot_run_are_rows_without_running(planted_package: Path) -> None:
    selection = select_envs("Loading/*", import_modules=["planted_envs"])
    rows = {row.env_id: row for row in audit_envs(selection, PLANTED)}
    assert list(rows) == [
        "Loading/Broken-v0",
        "Loading/BrokenSubmodule-v0",
        "Loading/MissingDependency-v0",
        "Loading/NeedsExtra-v0",
        "Loading/Old-v1",
    ]
    assert rows["Loading/Broken-v0"].verdict == ERROR
    assert rows["Loading/Broken-v0"].reason == (
        "its entry point failed to load: AttributeError: module 'planted_envs' has no attribute "
        "'NoSuchWalker'"
    )
    missing = rows["Loading/MissingDependency-v0"]
    assert (missing.verdict, missing.steps, missing.seconds) == (SKIPPED, None, None)
    # Its entry point loads; making it meets the missing dependency: skipped all the same.
    assert rows["Loading/NeedsExtra-v0"].verdict == SKIPPED
    assert rows["Loading/NeedsExtra-v0"].reason == (
        'the walker needs its extra: pip install "planted[extra]"'
    )
    assert rows["Loading/Old-v1"].verdict == DETERMINISTIC


def test_workers_register_the_envs_themselves(planted_package: Path) -> None:
    selection = select_envs(
        "Planted/GlobalRng-v0", "Planted/HashOrder-v0", "Sound/*", import_modules=["planted_envs"]
    )
    seen: list[str] = []
    rows = audit_envs(selection, PLANTED, jobs=2, advance=lambda row: seen.append(row.env_id))
    assert [(row.env_id, row.verdict) for row in rows] == [
        ("Planted/GlobalRng-v0", NONDETERMINISTIC),
        ("Planted/HashOrder-v0", NONDETERMINISTIC),
        ("Sound/NewActionSpace-v0", DETERMINISTIC),
        ("Sound/Walker-v0", DETERMINISTIC),
    ]
    assert sorted(seen) == [row.env_id for row in rows]
    hash_order = rows[1].difference
    assert hash_order is not None
    assert hash_order.second == "run 3"


def test_an_env_that_ends_its_worker_is_the_only_error(planted_package: Path) -> None:
    selection = select_envs("Dying/*", "Sound/Walker-v0", import_modules=["planted_envs"])
    settings = dataclasses.replace(PLANTED, steps=5, check_env=False)
    rows = audit_envs(selection, settings, jobs=2)
    assert [(row.env_id, row.verdict) for row in rows] == [
        ("Dying/Exits-v0", ERROR),
        ("Sound/Walker-v0", DETERMINISTIC),
    ]
    assert rows[0].reason == (
        "its worker process died while auditing it: the env ended the interpreter "
        "(a crash in native code, or os._exit)"
    )


def test_classic_control_is_deterministic_over_seeds() -> None:
    selection = select_envs(entry_point="gymnasium.envs.classic_control*")
    rows = audit_envs(selection, AuditSettings(seeds=(0, 1), steps=40))
    assert [(row.env_id, row.verdict, row.steps) for row in rows] == [
        (env.id, DETERMINISTIC, 80) for env in selection.envs
    ]
    cartpole = next(row for row in rows if row.env_id == "CartPole-v1")
    assert (
        "WARN: A Box observation space minimum value is -infinity. This is probably too low."
        in (cartpole.warnings)
    )


def test_a_representative_subset_of_minigrid_is_deterministic() -> None:
    pytest.importorskip("minigrid", reason="minigrid is not installed: pip install minigrid")
    selection = select_envs(
        "MiniGrid-Empty-Random-5x5-v0",
        "MiniGrid-DoorKey-5x5-v0",
        "MiniGrid-Dynamic-Obstacles-5x5-v0",
        "MiniGrid-KeyCorridorS3R1-v0",
        import_modules=["minigrid"],
    )
    settings = AuditSettings(steps=40, import_modules=("minigrid",))
    rows = audit_envs(selection, settings, jobs=2)
    assert [(row.env_id, row.verdict) for row in rows] == [
        (env.id, DETERMINISTIC) for env in selection.envs
    ]


def test_the_fresh_process_hashes_with_another_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONHASHSEED", "41")
    assert fresh_hash_seed() == 42
    monkeypatch.setenv("PYTHONHASHSEED", str(2**32 - 1))
    assert fresh_hash_seed() == 0
    monkeypatch.setenv("PYTHONHASHSEED", "random")
    assert fresh_hash_seed() == 1
    monkeypatch.delenv("PYTHONHASHSEED")
    assert fresh_hash_seed() == 1


STUCK = AuditSettings(steps=5, check_env=False, import_modules=("tests.audit.stuck_envs",))


def _audit(*patterns: str, **settings: Any) -> dict[str, AuditRow]:
    selection = select_envs(*patterns, import_modules=list(STUCK.import_modules))
    rows = audit_envs(selection, dataclasses.replace(STUCK, **settings))
    return {row.env_id: row for row in rows}


def test_an_env_that_hangs_is_stopped_at_the_timeout_an_error_row() -> None:
    rows = _audit("Stuck/Sleeps-v0", "Stuck/SleepsFresh-v0", timeout=2.0)
    for env_id, where in [
        ("Stuck/Sleeps-v0", "seed 0, run 1 (in this process)"),
        ("Stuck/SleepsFresh-v0", f"run 3 (in a fresh process, PYTHONHASHSEED={fresh_hash_seed()})"),
    ]:
        row = rows[env_id]
        assert row.verdict == ERROR
        assert row.reason == (
            "stopped after 2 s, the time the audit of an env may take (--timeout), during "
            f"{where}: it hangs, or needs a longer --timeout"
        )
        assert row.seconds is not None
        assert row.seconds < 30
    assert rows["Stuck/SleepsFresh-v0"].steps == 5  # its runs in this process were done


def _fresh_pids(path: Path) -> dict[str, int]:
    lines = (line.split() for line in path.read_text().splitlines())
    return {env_id: int(pid) for env_id, pid in lines}


def test_one_fresh_process_records_env_after_env_and_is_replaced_when_one_ends_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STUCK_PIDS", str(tmp_path / "pids"))
    rows = _audit("Stuck/Batch*", timeout=3.0)
    assert {env_id: row.verdict for env_id, row in rows.items()} == {
        "Stuck/Batch1-v0": DETERMINISTIC,
        "Stuck/Batch2-v0": DETERMINISTIC,
        "Stuck/Batch3-v0": ERROR,
        "Stuck/Batch4-v0": DETERMINISTIC,
        "Stuck/Batch5-v0": ERROR,
        "Stuck/Batch6-v0": DETERMINISTIC,
    }
    pids = _fresh_pids(tmp_path / "pids")
    # One interpreter for the envs before the one that ended it; another after
    # it, until the env that hung; a third after that.
    assert pids["Stuck/Batch1-v0"] == pids["Stuck/Batch2-v0"]
    assert len({pids["Stuck/Batch2-v0"], pids["Stuck/Batch4-v0"], pids["Stuck/Batch6-v0"]}) == 3
    # Each env's reason holds what it wrote itself, not what the envs before it wrote.
    ended = rows["Stuck/Batch3-v0"].reason
    assert ended == (
        f"run 3, in a fresh process (PYTHONHASHSEED={fresh_hash_seed()}), failed (exit code 5):\n"
        "the end of the fresh process"
    )
    assert rows["Stuck/Batch5-v0"].reason == (
        "stopped after 3 s, the time the audit of an env may take (--timeout), during "
        f"run 3 (in a fresh process, PYTHONHASHSEED={fresh_hash_seed()}): it hangs, or needs a "
        "longer --timeout"
    )


def test_each_worker_keeps_one_fresh_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STUCK_PIDS", str(tmp_path / "pids"))
    selection = select_envs(
        "Stuck/Batch1-v0",
        "Stuck/Batch2-v0",
        "Stuck/Batch4-v0",
        "Stuck/Batch6-v0",
        import_modules=list(STUCK.import_modules),
    )
    rows = audit_envs(selection, STUCK, jobs=2)
    assert [row.verdict for row in rows] == [DETERMINISTIC] * 4
    # Four envs, two workers: at most two fresh interpreters, not one per env.
    assert len(_fresh_pids(tmp_path / "pids")) == 4
    assert len(set(_fresh_pids(tmp_path / "pids").values())) <= 2


def test_stderr_that_is_not_utf8_is_read_and_shown_escaped() -> None:
    rows = _audit("Stuck/Garbage-v0", "Stuck/GarbageFails-v0")
    assert rows["Stuck/Garbage-v0"].verdict == DETERMINISTIC
    failed = rows["Stuck/GarbageFails-v0"]
    assert failed.verdict == ERROR
    assert failed.reason is not None
    assert failed.reason.startswith(
        f"run 3, in a fresh process (PYTHONHASHSEED={fresh_hash_seed()}), failed (exit code 3):\n"
    )
    assert "\ufffd\ufffd bytes that are not UTF-8 \ufffd\ufffd" in failed.reason


def test_a_flood_of_stderr_keeps_its_end_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLOOD_BYTES", str(8 << 20))
    tracemalloc.start()
    try:
        rows = _audit("Stuck/Floods-v0")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    row = rows["Stuck/Floods-v0"]
    assert row.verdict == ERROR
    assert row.reason is not None
    assert row.reason.endswith("\nthe last words")
    # The verdict's line, "..." for the lines left out, and the last twelve.
    assert len(row.reason.splitlines()) <= 14
    # 8 MB went through: the tail kept is 64 KiB, not the stream.
    assert peak < 4 << 20


def test_a_stream_tail_keeps_a_bounded_end_of_any_stream() -> None:
    script = "import os\nfor i in range(2000): os.write(2, b'%05d' % i + b'x' * 4090 + b'\\n')"
    with subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE) as process:
        assert process.stderr is not None
        tail = StreamTail(process.stderr, size=10_000)
        sizes = []
        while process.poll() is None:
            sizes.append(tail.kept)
        text = tail.text()
    assert tail.total == 2000 * 4096
    assert max([*sizes, tail.kept]) <= 10_000 + 64 * 1024
    assert len(text) == 10_000
    assert text.endswith("01999" + "x" * 4090 + "\n")
