"""Tests of the deterministic JSON encoding (``gym_goldens.format.codec``)."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import math
import subprocess
import sys
import uuid
import warnings
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gym_goldens.errors import GoldenFormatError, GoldensWarning
from gym_goldens.format.codec import ArraySummary, Encoder, TaggedValue, decode_line


class Color(enum.Enum):
    RED = 1


class Opaque:
    """A type the codec knows nothing about; its repr holds a memory address."""


def _strict_json(line: bytes) -> Any:
    """Parse with the standard library, which refuses NaN unless asked."""

    def refuse(name: str) -> Any:
        raise AssertionError(f"non-strict JSON constant {name} in {line!r}")

    return json.loads(line, parse_constant=refuse)


def test_same_values_give_same_bytes_whatever_the_key_order() -> None:
    first = {"obs": [1.0, 2.5], "info": {"b": 1, "a": 2}, "reward": 1.0}
    second = {"reward": 1.0, "info": {"a": 2, "b": 1}, "obs": [1.0, 2.5]}
    assert Encoder().encode(first) == Encoder().encode(second)
    assert Encoder().encode(first) == b'{"info":{"a":2,"b":1},"obs":[1.0,2.5],"reward":1.0}'


def test_floats_are_shortest_round_trip_at_their_width() -> None:
    line = Encoder().encode(
        {"f32": np.float32(0.1), "arr": np.array([0.1, 1 / 3], dtype=np.float32), "f64": 0.1}
    )
    assert line == b'{"arr":[0.1,0.33333334],"f32":0.1,"f64":0.1}'
    assert np.float32(_strict_json(line)["arr"][1]) == np.float32(1 / 3)


@pytest.mark.parametrize(
    ("value", "tag"),
    [(math.nan, "nan"), (math.inf, "inf"), (-math.inf, "-inf")],
)
def test_non_finite_floats_round_trip_as_tags(value: float, tag: str) -> None:
    encoder = Encoder()
    for container in (value, np.float32(value), np.array([1.0, value]), [value]):
        line = encoder.encode({"x": container})
        assert f'{{"$float":"{tag}"}}'.encode() in line
        _strict_json(line)
    decoded = decode_line(encoder.encode({"x": value, "arr": np.array([0.5, value])}))
    for got in (decoded["x"], decoded["arr"][1]):
        assert (math.isnan(got) and math.isnan(value)) or got == value
    assert decoded["arr"][0] == 0.5


def test_other_tags_round_trip() -> None:
    encoder = Encoder()
    record = {
        "big": 2**70,
        "neg": -(2**64),
        "bytes": b"\x00\xff",
        "set": {"b", "a"},
        "enum": Color.RED,
        "$dollar": 1,
    }
    decoded = decode_line(encoder.encode(record))
    assert decoded["big"] == 2**70
    assert decoded["neg"] == -(2**64)
    assert decoded["bytes"] == TaggedValue("$bytes", "AP8=")
    assert decoded["set"] == TaggedValue("$set", ("a", "b"))
    assert decoded["enum"] == 1  # its value, as the fast path writes it
    assert decoded["$dollar"] == 1


def test_large_arrays_are_summaries_that_see_one_element_change() -> None:
    encoder = Encoder(max_array_size=10)
    image = np.zeros((4, 4), dtype=np.uint8)
    changed = image.copy()
    changed[2, 3] = 1
    first = decode_line(encoder.encode({"obs": image}))["obs"]
    second = decode_line(encoder.encode({"obs": changed}))["obs"]
    assert isinstance(first, ArraySummary)
    assert (first.dtype, first.shape) == ("uint8", (4, 4))
    assert first.digest != second.digest
    assert Encoder(max_array_size=None).encode({"obs": image}).count(b"0") == 16


def test_unknown_type_is_a_stable_object_tag_and_warns_naming_the_key() -> None:
    encoder = Encoder()
    with pytest.warns(GoldensWarning, match=r"info\.handle holds a .*Opaque") as caught:
        line = encoder.encode({"info": {"handle": Opaque()}})
    assert line == f'{{"info":{{"handle":{{"$object":"{__name__}.Opaque"}}}}}}'.encode()
    assert b"0x" not in line
    assert "0x" not in str(caught[0].message)
    # Another instance (another address) gives the same bytes, and warns once per key.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert encoder.encode({"info": {"handle": Opaque()}}) == line


def test_no_per_process_value_reaches_the_bytes() -> None:
    # Set order and object reprs change between processes; the encoding must not.
    script = (
        "import sys, warnings; warnings.simplefilter('ignore')\n"
        "from gym_goldens.format.codec import Encoder\n"
        "class Opaque: pass\n"
        "sys.stdout.write(Encoder().encode({'s': {'x', 'y', 'zz', 'w'}, 'o': Opaque()}).decode())\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert outputs == {'{"o":{"$object":"__main__.Opaque"},"s":{"$set":["w","x","y","zz"]}}'}


def test_decode_line_names_file_and_line_of_invalid_json() -> None:
    with pytest.raises(GoldenFormatError, match=r"^golden\.jsonl:7: invalid JSON") as info:
        decode_line(b'{"event": "st', path="golden.jsonl", line=7)
    assert (info.value.path, info.value.line) == ("golden.jsonl", 7)


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.binary(max_size=4),
    st.sampled_from([np.float32(1.5), np.float32("nan"), np.int64(-3), np.bool_(True)]),
)
_arrays = hnp.arrays(
    dtype=st.sampled_from([np.float32, np.float64, np.int32, np.uint8, np.bool_]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
)
_keys = st.text(max_size=6) | st.sampled_from(["$x", "$$y", "null", "obs"])
_values = st.recursive(
    _scalars | _arrays,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(_keys, children, max_size=4)
        | st.tuples(children, children)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(value=_values, max_array_size=st.sampled_from([None, 3, 4096]))
def test_fast_and_careful_paths_give_identical_bytes(
    value: Any, max_array_size: int | None
) -> None:
    encoder = Encoder(max_array_size=max_array_size)
    record = {"obs": value}
    careful = orjson.dumps(
        encoder.to_jsonable(record), option=orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY
    )
    assert encoder.encode(record) == careful
    assert encoder.encode(record) == encoder.encode(record)
    _strict_json(careful)


class Mode(enum.Enum):
    A = "x"
    B = 2
    C = (1, None)


class Level(enum.IntEnum):
    LOW = 1


class Tone(str, enum.Enum):
    HIGH = "$high"


@dataclasses.dataclass
class Pose:
    x: float
    _hidden: int = 3

    def __post_init__(self) -> None:
        self.derived = self.x * 2  # an attribute, not a field


_UTC = datetime.timezone.utc
_datetimes = st.datetimes(timezones=st.none() | st.just(_UTC))
# Values orjson writes natively that the careful path once wrote otherwise.
_native_values = st.one_of(
    st.sampled_from([*Mode, *Level, *Tone]),
    _datetimes,
    _datetimes.map(lambda moment: moment.date()),
    _datetimes.map(lambda moment: moment.timetz()),
    st.uuids(),
    _datetimes.map(lambda moment: np.datetime64(moment.replace(tzinfo=None), "us")),
    st.sampled_from(["2024-05-01", "NaT"]).map(np.datetime64),
    st.builds(Pose, st.floats(-1e3, 1e3)),
)
_with_natives = st.recursive(
    _scalars | _native_values,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_keys, children, max_size=3),
    max_leaves=6,
)
_beside = st.sampled_from([None, math.nan, math.inf, {"$tag": 1}, 1.5])


@settings(max_examples=300, deadline=None)
@given(value=_with_natives, other=_beside)
def test_a_value_is_written_alike_whatever_else_is_on_its_line(value: Any, other: Any) -> None:
    # A None, a NaN or a "$" key sends the line down the careful path; the
    # value's bytes must not change with it.
    encoder = Encoder()
    alone = encoder.encode({"a": value})
    beside = encoder.encode({"a": value, "b": other})
    written_other = encoder.encode({"b": other})[len(b'{"b":') : -1]
    assert beside == alone[:-1] + b',"b":' + written_other + b"}"
    assert encoder.encode({"a": value}) == encoder.encode_careful({"a": value})


def test_enums_datetimes_and_uuids_are_written_as_orjson_writes_them() -> None:
    moment = datetime.datetime(2024, 5, 1, 12, 30, 0, 250000, tzinfo=_UTC)
    record = {
        "mode": Mode.A,
        "level": Level.LOW,
        "tone": Tone.HIGH,
        "when": moment,
        "day": moment.date(),
        "id": uuid.UUID(int=5),
        "stamp": np.datetime64("2024-05-01T12:30:00"),
        "pose": Pose(0.5),
        "none": None,
    }
    expected = (
        b'{"day":"2024-05-01","id":"00000000-0000-0000-0000-000000000005","level":1,'
        b'"mode":"x","none":null,"pose":{"_hidden":3,"x":0.5},"stamp":"2024-05-01T12:30:00",'
        b'"tone":"$high","when":"2024-05-01T12:30:00.250000+00:00"}'
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is lost, nothing to warn about
        assert Encoder().encode(record) == expected
        del record["none"]
        assert Encoder().encode(record) == expected.replace(b'"none":null,', b"")


def test_a_datetime_that_moves_is_a_change_beside_a_none() -> None:
    encoder = Encoder()
    before = encoder.encode({"when": datetime.datetime(2024, 5, 1), "x": None})
    after = encoder.encode({"when": datetime.datetime(2024, 5, 2), "x": None})
    assert before != after


def test_timedeltas_and_str_enum_keys_are_written_not_raised() -> None:
    with pytest.warns(GoldensWarning, match="numpy.timedelta64"):
        line = Encoder().encode({"wait": np.timedelta64(5, "s")})
    assert line == b'{"wait":{"$object":"numpy.timedelta64"}}'
    assert Encoder().encode({"by": {Tone.HIGH: 1}}) == b'{"by":{"HIGH":1}}'


def test_tuple_keys_are_written_as_their_json_and_stay_apart() -> None:
    grid = {(0, 1): 5, (1, 0): 7, (2, "x"): None}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # lossless: nothing to warn about
        line = Encoder().encode({"info": {"visits": grid}})
    assert orjson.loads(line)["info"]["visits"] == {"[0,1]": 5, "[1,0]": 7, '[2,"x"]': None}


def test_keys_that_become_the_same_string_warn_naming_the_field() -> None:
    # 1 and "1" are both written as "1": one value would vanish without a word.
    with pytest.warns(GoldensWarning, match=r"info\.counts has keys 1 and '1'.*the same string"):
        line = Encoder().encode({"info": {"counts": {1: "int", "1": "str"}}})
    assert len(orjson.loads(line)["info"]["counts"]) == 1
