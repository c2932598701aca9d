"""The table of gym-goldens audit, as text and as JSON."""

from __future__ import annotations

import json

from gym_goldens.format.codec import ArraySummary
from gym_goldens.present.table import audit_json, format_left_out, format_table, row_details
from gym_goldens.present.text import printable, uncoloured
from gym_goldens.present.verdicts import (
    CHECK_FAILED,
    DETERMINISTIC,
    ERROR,
    NONDETERMINISTIC,
    SKIPPED,
    AuditRow,
    RunDifference,
)

DIFFERENCE = RunDifference(
    seed=1,
    first="run 1",
    second="run 3",
    how="in a fresh process, PYTHONHASHSEED=1",
    episode=0,
    t=None,
    fields=(("info.tour[0]", "alpha", "kilo"), ("obs[0]", float("nan"), float("inf"))),
    report="nondeterministic: run 1 vs run 3: x.jsonl:2\n  first divergence: episode 0, reset",
)
ROWS = [
    AuditRow("A-v0", DETERMINISTIC, 200, 1.25, warnings=("WARN: careful",)),
    AuditRow("Bee/Long-Name-v1", NONDETERMINISTIC, 200, 0.5, difference=DIFFERENCE, recordings="r"),
    AuditRow("C-v0", SKIPPED, reason="Box2D is not installed"),
    AuditRow("D-v0", ERROR, 3, 0.01, reason="seed 0, run 1: at step 4: ValueError: no"),
    AuditRow("E-v0", CHECK_FAILED, 200, 2.0, check_failure="obs out of space"),
]


def test_one_row_per_env_and_the_reasons_under_it() -> None:
    assert format_table(ROWS, seconds=3.76) == [
        "env               verdict           steps  time",
        "A-v0              deterministic       200  1.2s",
        "    warning: WARN: careful",
        "Bee/Long-Name-v1  NONDETERMINISTIC    200  0.5s",
        "    nondeterministic: run 1 vs run 3: x.jsonl:2",
        "      first divergence: episode 0, reset",
        "    recordings kept in r",
        "C-v0              skipped               -  -",
        "    Box2D is not installed",
        "D-v0              error                 3  0.0s",
        "    seed 0, run 1: at step 4: ValueError: no",
        "E-v0              check failed        200  2.0s",
        "    check_env failed: obs out of space",
        "",
        "5 envs in 3.8s: 1 deterministic, 1 NONDETERMINISTIC, 1 check failed, 1 error, 1 skipped",
    ]


def test_ids_left_out_are_grouped_by_reason() -> None:
    left_out = {"Ant-v3": "moved", "Ant-v2": "moved", "Gym-v0": "needs shimmy"}
    assert format_table(ROWS[:1], left_out=left_out)[-3:] == [
        "left out 3 ids: deprecated or legacy, their entry points cannot load",
        "  Ant-v2, Ant-v3: moved",
        "  Gym-v0: needs shimmy",
    ]
    assert format_left_out({"X-v0": "gone"}, by="registered_envs") == [
        "registered_envs left out 1 id: deprecated or legacy, their entry points cannot load",
        "  X-v0: gone",
    ]


def test_text_from_envs_reaches_the_terminal_without_control_characters() -> None:
    assert uncoloured("\x1b[33mWARN: low\x1b[0m") == "WARN: low"
    assert uncoloured("bell\x07 and\rreturn\ttab") == "bell\\x07 and\\rreturn\\ttab"
    row = AuditRow("Evil\x1b]0;title\x07-v0", ERROR, reason="boom\x1b[2J\nsecond\x00 line")
    text = "\n".join(format_table([row]))
    assert "\x1b" not in text
    assert "\x07" not in text
    assert "    boom\n    second\\x00 line" in text


def test_the_table_escapes_as_every_message_does() -> None:
    # The table had a rule of its own, which let through what is not ASCII:
    # the right-to-left override (U+202E) and the C1 controls, among them the
    # one-byte CSI (U+009B) that some terminals obey as ESC [ does.
    row = AuditRow(
        "Evil\u202e0v-\u009b2J",
        ERROR,
        reason="boom\u009b2J\u200fnext",
        warnings=("\x1b[33mWARN: \u202eleft\x1b[0m",),
    )
    lines = format_table([row])
    assert lines[1].startswith("Evil\\u202e0v-\\x9b2J  error")
    assert "    boom\\x9b2J\\u200fnext" in lines
    assert "    warning: WARN: \\u202eleft" in lines
    assert all(line == printable(line) for line in lines)
    assert format_left_out({"X-v0": "gone\u202e"}) == [
        "left out 1 id: deprecated or legacy, their entry points cannot load",
        "  X-v0: gone\\u202e",
    ]


def test_json_holds_every_row_with_its_difference() -> None:
    data = audit_json(
        ROWS,
        left_out={"Ant-v2": "moved"},
        settings={"seeds": [0, 1], "steps": 200},
        seconds=3.7512,
        exit_code=1,
    )
    # Valid JSON: no NaN or Infinity literals.
    text = json.dumps(data, allow_nan=False)
    assert json.loads(text) == data
    assert data["format"] == 1
    assert data["counts"] == {
        DETERMINISTIC: 1,
        NONDETERMINISTIC: 1,
        CHECK_FAILED: 1,
        ERROR: 1,
        SKIPPED: 1,
    }
    assert (data["seconds"], data["exit_code"]) == (3.751, 1)
    assert data["left_out"] == [{"id": "Ant-v2", "reason": "moved"}]
    assert data["settings"] == {"seeds": [0, 1], "steps": 200}
    row = data["envs"][1]
    assert row["id"] == "Bee/Long-Name-v1"
    assert row["difference"] == {
        "seed": 1,
        "runs": ["run 1", "run 3"],
        "how": "in a fresh process, PYTHONHASHSEED=1",
        "episode": 0,
        "t": None,
        "fields": [
            {"field": "info.tour[0]", "first": "alpha", "second": "kilo"},
            {"field": "obs[0]", "first": {"$float": "nan"}, "second": {"$float": "inf"}},
        ],
        "report": DIFFERENCE.report,
    }
    assert data["envs"][2] == {
        "id": "C-v0",
        "verdict": SKIPPED,
        "steps": None,
        "seconds": None,
        "reason": "Box2D is not installed",
        "difference": None,
        "check_failure": None,
        "warnings": [],
        "recordings": None,
        "nondeterministic_spec": False,
        "stderr": "",
    }


def test_json_writes_values_as_the_recording_format_does() -> None:
    summary = ArraySummary("float32", (64, 64), "ab" * 16, 0.0, 1.0, 0.5, float("inf"))
    difference = RunDifference(
        0, "run 1", "run 2", "here", 0, 3, (("obs", summary, [1.0, float("-inf")]),), "r"
    )
    data = audit_json(
        [AuditRow("A-v0", NONDETERMINISTIC, difference=difference)],
        left_out={},
        settings={},
        seconds=0.0,
        exit_code=1,
    )
    json.dumps(data, allow_nan=False)
    (field,) = data["envs"][0]["difference"]["fields"]
    assert field["first"] == {
        "$array": {
            "dtype": "float32",
            "shape": [64, 64],
            "digest": "ab" * 16,
            "min": 0.0,
            "max": 1.0,
            "mean": 0.5,
            "sum": {"$float": "inf"},
            "bands": None,
        }
    }
    assert field["second"] == [1.0, {"$float": "-inf"}]


def test_what_an_env_wrote_to_stderr_is_under_its_row() -> None:
    # MuJoCo's C library writes its warnings to stderr, past Python's warnings.
    mujoco = (
        "\x1b[33mWARNING: Nan, Inf or huge value in QACC at DOF 0.\x1b[0m\n"
        "The simulation is unstable.\n"
    )
    rows = [
        AuditRow("Hopper-v5", DETERMINISTIC, 100, 1.0, stderr=mujoco),
        AuditRow("Walker-v5", DETERMINISTIC, 100, 1.0),
    ]
    assert format_table(rows) == [
        "env        verdict           steps  time",
        "Hopper-v5  deterministic       100  1.0s",
        "    stderr (what the env wrote there):",
        "      WARNING: Nan, Inf or huge value in QACC at DOF 0.",
        "      The simulation is unstable.",
        "Walker-v5  deterministic       100  1.0s",
        "",
        "2 envs: 2 deterministic",
    ]
    data = audit_json(rows, left_out={}, settings={}, seconds=1.0, exit_code=0)
    assert data["envs"][0]["stderr"] == mujoco


def test_a_long_stderr_keeps_its_last_lines() -> None:
    noise = "".join(f"line {i}\n" for i in range(100))
    details = row_details(AuditRow("Loud-v0", DETERMINISTIC, 1, 0.1, stderr=noise))
    assert details[:2] == ["stderr (what the env wrote there):", "  ... (80 lines before)"]
    assert details[2] == "  line 80"
    assert details[-1] == "  line 99"


def test_a_warning_of_several_lines_stays_under_its_row() -> None:
    row = AuditRow("Go-v0", DETERMINISTIC, 1, 0.1, warnings=("deprecated;\nwill be removed",))
    lines = format_table([row])
    assert lines[2:4] == ["    warning: deprecated;", "    will be removed"]


def test_a_failed_api_test_is_named_under_its_row() -> None:
    row = AuditRow("classic/x_v0", CHECK_FAILED, 1, 0.1, check_failure="bad", check="api_test")
    assert row_details(row) == ["api_test failed: bad"]
