"""docs/guarantees.md stays true: the limits it gives are the code's."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from gym_goldens.format import lock
from gym_goldens.format.layout import TRAJECTORY_NAME, UPDATE_LOCK
from gym_goldens.format.limits import (
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    MAX_FRAME_PIXELS,
    MAX_LINE_BYTES,
    format_size,
)
from gym_goldens.plugin.settings import GoldensSettings
from gym_goldens.present import differences
from gym_goldens.present.text import MAX_DEPTH

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
