"""docs/guarantees.md stays true: the limits it gives are the code's."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from gym_goldens.audit import survey
from gym_goldens.comparison.result import MAX_KEPT_EPISODES
from gym_goldens.format import lock
from gym_goldens.format.layout import TRAJECTORY_NAME, UPDATE_LOCK
from gym_goldens.format.limits import (
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    MAX_FRAME_PIXELS,
    MAX_LINE_BYTES,
    MAX_NESTING,
    format_size,
)
from gym_goldens.plugin.settings import GoldensSettings
from gym_goldens.present import differences
from gym_goldens.present.summary import MAX_EPISODE_ROWS, MAX_LISTED_EPISODES
from gym_goldens.present.text import MAX_DEPTH
from gym_goldens.record import fresh

GUARANTEES = Path(__file__).parents[1] / "docs" / "guarantees.md"


def limits_table() -> dict[str, tuple[str, str]]:
    """The rows of the limits table: what, to (limit, past it)."""
    section = GUARANTEES.read_text().split("## Limits", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (.+?) \| (.+?) \| (.+?) \|$", section, flags=re.MULTILINE)
    return {what: (limit, past) for what, limit, past in rows[2:]}


def test_the_limits_table_gives_the_limits_of_the_code() -> None:
    table = limits_table()
    assert table["a line (one record)"][0] == format_size(MAX_LINE_BYTES)
    decompressed = table["what a compressed recording (`.jsonl.gz`) expands to when read"]
    assert decompressed[0].startswith(format_size(DEFAULT_MAX_DECOMPRESSED_SIZE) + ",")
    assert GoldensSettings.max_decompressed_size == DEFAULT_MAX_DECOMPRESSED_SIZE
    assert table["nesting of JSON values"][0] == "1024 levels (orjson's)"
    side = int(MAX_FRAME_PIXELS**0.5)
    frame = table["a frame (a PNG file of a recording)"][0]
    assert frame == f"{MAX_FRAME_PIXELS:,} pixels ({side} x {side})"
    decoded = table["what the frames of a recording decode to, in one comparison"][0]
    assert decoded.startswith(format_size(DEFAULT_MAX_DECOMPRESSED_SIZE) + ",")
    shown = table["values shown in a failure message"][0]
    assert shown == f"{differences._MAX_VALUE_CHARS} characters, {MAX_DEPTH} levels of nesting"
    assert table["fields in a plot"][0].startswith(f"{MAX_DEPTH} levels of nesting")


def test_the_update_lock_is_the_code_s_and_so_is_its_wait() -> None:
    limit, past = limits_table()["waiting for another update of the same golden"]
    assert limit == f"{lock._WAIT / 60:g} minutes"
    assert f"still holds its lock {UPDATE_LOCK} after {lock._WAIT:.0f} s" in past
    text = GUARANTEES.read_text()
    assert f"`{UPDATE_LOCK}` in its folder" in text
    assert f"readers take `{TRAJECTORY_NAME}`" in text


def test_orjson_reads_1024_levels_and_no_more() -> None:
    assert orjson.loads(b"[" * 1024 + b"]" * 1024) is not None
    # orjson's words changed over its releases; the limit did not.
    with pytest.raises(orjson.JSONDecodeError, match=r"(depth limit|recursion depth) exceeded"):
        orjson.loads(b"[" * 1025 + b"]" * 1025)


def test_the_limits_of_hostile_values_and_files_are_those_of_the_code() -> None:
    table = limits_table()
    kept = table["episodes a comparison keeps (`compare`, the pytest report, `gym-goldens diff`)"]
    assert (
        kept[0]
        == f"the first {MAX_KEPT_EPISODES:,}, and the first {MAX_KEPT_EPISODES:,} that differ"
    )
    listed = table["episodes `gym-goldens show` lists"][0]
    assert listed == f"{MAX_EPISODE_ROWS}; with `--all`, the first {MAX_LISTED_EPISODES:,}"
    nesting = table["nesting of a value the recorder writes"][0]
    assert nesting.startswith(f"{MAX_NESTING} levels")
    assert table["a record the recorder writes"][0].startswith(format_size(MAX_LINE_BYTES))
    timeout = table["the audit of one env (`gym-goldens audit`)"][0]
    assert timeout == f"{survey.DEFAULT_TIMEOUT:g} s (`--timeout SECONDS`)"
    tail = table["what `gym-goldens audit` keeps of a fresh process's stderr"][0]
    assert tail == f"its last {format_size(fresh.MAX_OUTPUT_TAIL)}"


def test_orjson_writes_the_nesting_limit_and_no_more() -> None:
    def nested(levels: int) -> object:
        value: object = 1
        for _ in range(levels):
            value = [value]
        return value

    assert orjson.dumps(nested(MAX_NESTING))
    with pytest.raises(orjson.JSONEncodeError, match="Recursion limit"):
        orjson.dumps(nested(MAX_NESTING + 1))
