"""Deterministic JSON encoding of recorded values.

Every line gym-goldens writes is strict JSON (RFC 8259) with sorted keys, so the
same values always give the same bytes and goldens diff cleanly in git. Values
that plain JSON cannot hold are written as *tags*: objects with a single key
that starts with ``$``:

====================  ===============================================
``{"$float": "nan"}``   NaN (also ``"inf"`` and ``"-inf"``)
``{"$int": "123..."}``  an integer outside the 64-bit range
``{"$bytes": "..."}``   bytes, base64
``{"$array": {...}}``   a large array kept as a summary (see below)
``{"$set": [...]}``     a set, its items sorted by their encoding
``{"$object": "..."}``  an unsupported object, ``module.Class`` only
====================  ===============================================

Dict keys that are not strings become strings: ``3`` is ``"3"``, ``None`` is
``"null"``, an enum member its name, a tuple (or any other key) the compact JSON
of its encoding, ``(1, 2)`` is ``"[1,2]"``. A key that itself starts with ``$``
is written with one more ``$``. Two keys of one dict that become the same
string (``1`` and ``"1"``) keep only the last value, with a
:class:`~gym_goldens.errors.GoldensWarning`.
Unsupported objects never reach a file through ``repr()``: a repr often holds a
memory address, which would make a golden differ on every run. They are written
as their type name and a :class:`~gym_goldens.errors.GoldensWarning` names the
field, so a lossy recording is never silent.

Numpy arrays are written as nested lists; floats of every width are written as
the shortest decimal that reads back to the same value of that width
(``float32(0.1)`` is ``0.1``; ``float16`` as the shortest ``float32``). Named
tuples, such as a ``GraphInstance``, are written as objects keyed by their
field names. Arrays with more than ``max_array_size`` elements are written as a
summary: dtype, shape, an xxh3 digest of the contents, a few statistics and a
digest of each of up to 16 bands of rows, enough to tell that one element changed and
roughly where. ``max_array_size`` may differ by field (``{"obs.image": None}``).
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import enum
import functools
import json
import math
import re
import uuid
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Final

import numpy as np
import orjson
import xxhash

from gym_goldens.errors import GoldenFormatError, GoldensWarning, UnrecordableValueError
from gym_goldens.format.fields import (
    FieldPath,
    format_path,
    parse_pattern,
    pattern_matches,
    specificity,
    split_path,
)
from gym_goldens.format.limits import MAX_NESTING

__all__ = [
    "DEFAULT_MAX_ARRAY_SIZE",
    "ArraySizeSpec",
    "ArraySummary",
    "Encoder",
    "TaggedValue",
    "decode_line",
    "decode_value",
    "duplicated_key",
    "largest_field",
    "unrecordable",
]

DEFAULT_MAX_ARRAY_SIZE: Final = 4096
"""Arrays with more elements than this are stored as a summary by default."""

ArraySizeSpec = int | None | Mapping[str, int | None]
"""A size for every array (None: no limit), or a mapping from field patterns to sizes."""

_MAX_BANDS: Final = 16

_DUMPS_OPTIONS: Final = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_SORT_KEYS
# The fast path's: orjson writes a dataclass's attributes, not its fields (it
# leaves out "_x" fields and adds attributes set in __post_init__), so it
# hands dataclasses to the careful path.
_FAST_OPTIONS: Final = _DUMPS_OPTIONS | orjson.OPT_PASSTHROUGH_DATACLASS
_INT_MIN: Final = -(2**63)
_INT_LIMIT: Final = 2**64
_NATIVE_ARRAY_KINDS: Final = frozenset("biuf")
_NONFINITE_NAMES: Final = {math.inf: "inf", -math.inf: "-inf"}


@dataclasses.dataclass(frozen=True, eq=False)
class ArraySummary:
    """A large array as stored in a file: enough to detect any change.

    Two summaries are equal when their dtype, shape and digest are; the
    statistics and bands only help to describe a difference.

    Attributes:
        dtype: Numpy dtype name, such as ``"uint8"``.
        shape: The array's shape.
        digest: Of the contents: the xxh3-128 of the band digests, with
            ``-0.0`` written as ``0.0`` and every NaN as one NaN, so that
            arrays the float rule finds equal summarise alike.
        min: Smallest finite element (None when there is none).
        max: Largest finite element (None when there is none).
        mean: Mean of the finite elements (None when there is none).
        sum: Sum of the finite elements, an exact int for integer and bool
            arrays (None when there is none).
        bands: A digest of each of up to 16 equal bands of the array along
            its first axis, so that a change can be located: xxh3-64 (16 hex
            digits; None for 0-d arrays).
    """

    dtype: str
    shape: tuple[int, ...]
    digest: str
    min: float | None
    max: float | None
    mean: float | None
    sum: float | None = None
    bands: tuple[str, ...] | None = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArraySummary):
            return NotImplemented
        return (self.dtype, self.shape, self.digest) == (other.dtype, other.shape, other.digest)

    def __hash__(self) -> int:
        return hash((self.dtype, self.shape, self.digest))

    def band_rows(self, band: int) -> tuple[int, int]:
        """The first and last index along the first axis covered by ``band``."""
        count = len(self.bands or ())
        length = self.shape[0] if self.shape else 0
        # np.array_split gives the first (length % count) bands one more row.
        size, extra = divmod(length, count) if count else (0, 0)
        start = band * size + min(band, extra)
        return start, start + size + (1 if band < extra else 0) - 1

    @classmethod
    def of(
        cls,
        array: np.ndarray[Any, Any],
        *,
        encode: Callable[[Any], bytes] | None = None,
        statistics: bool = True,
    ) -> ArraySummary:
        """Summarise ``array``.

        Args:
            array: The array.
            encode: Encodes the items of an array of objects: their bytes
                are hashed, not the addresses the array holds (by default,
                a JSON line of them as :class:`Encoder` writes it).
            statistics: Work out min, max, mean and sum (None without);
                a frame's reference needs the digest alone.
        """
        canonical = np.ascontiguousarray(array)
        if canonical.dtype.byteorder == ">":
            canonical = canonical.astype(canonical.dtype.newbyteorder("<"))
        shape = tuple(canonical.shape)
        band_count = min(_MAX_BANDS, shape[0]) if shape and shape[0] else 0
        kind = canonical.dtype.kind
        bands_data: list[bytes] | list[memoryview]
        if canonical.dtype.hasobject:
            encode = encode or _encode_items
            bands_data = [encode(part) for part in _band_items(canonical, band_count)]
            data: Any = b"".join(bands_data)
        else:
            if kind in "fc":
                canonical_floats = _canonical_floats(canonical)
                # Its statistics are the same, but for the sign of a zero.
                canonical = canonical_floats if kind == "f" else canonical
                data = _buffer(canonical_floats)
            else:
                # The buffer itself, cut into bands: no copy of a large image.
                data = _buffer(canonical)
            bands_data = _band_bytes(data, shape, band_count)
        # One fast hash per band, the digest made of theirs: the array's
        # bytes are read once, and any change moves its band and so the digest.
        band_digests = [_XXH64(part) for part in (bands_data if shape else [data])]
        digest = _XXH128(b"".join(band_digests))
        bands = tuple(part.hex() for part in band_digests) if shape else None
        low, high, mean, total = _statistics(canonical) if statistics else (None,) * 4
        dtype = _dtype_name(canonical.dtype)
        return cls(dtype, shape, digest, low, high, mean, total, bands or None)

    def to_json(self) -> dict[str, Any]:
        """The ``$array`` tag's content."""
        content = {
            "dtype": self.dtype,
            "shape": list(self.shape),
            "min": self.min,
            "max": self.max,
            "mean": self.mean,
            "sum": _json_sum(self.sum),
            "bands": list(self.bands) if self.bands is not None else None,
        }
        content["digest"] = self.digest
        return content


_XXH64: Final = xxhash.xxh3_64_digest
_XXH128: Final = xxhash.xxh3_128_hexdigest
# Sums of arrays of 1-byte integers with fewer elements than this fit in int32
# (|sum| <= 255 * 2**23 < 2**31), which numpy adds up three times faster than int64.
_INT32_SUM_SIZE: Final = 2**23


@functools.lru_cache(maxsize=64)
def _dtype_name(dtype: np.dtype[Any]) -> str:
    """The name of a dtype; worked out by numpy in Python, a few microseconds each time."""
    return str(dtype)


def _statistics(
    array: np.ndarray[Any, Any],
) -> tuple[float | None, float | None, float | None, float | int | None]:
    """The min, max, mean and sum of the finite elements of a numeric array."""
    kind = array.dtype.kind
    if kind not in "biuf" or not array.size:
        return None, None, None, None
    finite = array[np.isfinite(array)] if kind == "f" else array
    if not finite.size:
        return None, None, None, None
    low, high = float(finite.min()), float(finite.max())
    total: float | int
    if kind == "f":
        # Finite values can sum past the largest float: the sum is then inf,
        # the env's data, not an error to warn about.
        with np.errstate(over="ignore"):
            total = float(finite.sum(dtype=np.float64))
    elif kind == "b":
        total = int(np.count_nonzero(finite))
    elif finite.dtype.itemsize == 1 and finite.size < _INT32_SUM_SIZE:
        total = int(finite.sum(dtype=np.int32))
    elif finite.dtype.itemsize < 8:
        # Exact: int64 holds the sum of 2**31 elements of 32 bits.
        total = int(finite.sum(dtype=np.int64))
    else:
        total = sum(finite.reshape(-1).tolist())  # Python ints: exact
    return low, high, total / finite.size, total


def _canonical_floats(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """A copy of a float (or complex) array with ``-0.0`` as ``0.0`` and one NaN for every NaN.

    The copy is flat (and of floats for a complex array): its bytes are what
    is hashed; its values keep their order.

    The float rule finds ``-0.0`` equal to ``0.0`` and a NaN equal to any NaN,
    whatever its sign and payload; summaries of such arrays must be equal too.
    """
    parts = array.reshape(-1)
    if array.dtype.kind == "c":
        # Complex numbers as pairs of floats: each part is canonicalised.
        parts = parts.view(f"<f{array.dtype.itemsize // 2}")
    # Adding zero turns -0.0 into 0.0 and leaves every other number as it is.
    canonical: np.ndarray[Any, Any] = parts + parts.dtype.type(0)
    nan = np.isnan(canonical)
    if nan.any():
        canonical[nan] = np.nan
    return canonical


def _band_bytes(data: memoryview, shape: tuple[int, ...], count: int) -> list[memoryview]:
    """The bytes of each band of rows along the first axis, as ``numpy.array_split`` cuts them."""
    if not count:
        return []
    row = len(data) // shape[0]
    size, extra = divmod(shape[0], count)
    parts = []
    start = 0
    for band in range(count):
        end = start + (size + (band < extra)) * row
        parts.append(data[start:end])
        start = end
    return parts


def _band_items(array: np.ndarray[Any, Any], count: int) -> list[Any]:
    """The items of each band of rows of an array of objects (the whole array for 0-d)."""
    if not count:
        return [array.tolist()]
    return [part.tolist() for part in np.array_split(array, count, axis=0)]


def _encode_items(items: Any) -> bytes:
    """A JSON line of items as the default encoder writes them."""
    return orjson.dumps(Encoder(max_array_size=None).to_jsonable(items), option=_DUMPS_OPTIONS)


@dataclasses.dataclass(frozen=True)
class TaggedValue:
    """A tagged value read back as it was written (``$bytes``, ``$set``, ...)."""

    tag: str
    value: Any


class Encoder:
    """Encodes records as JSON lines, fast for the common case.

    The fast path hands the record to orjson as it is. Only when the result
    could be lossy (a ``null`` that may stand for NaN, a ``$`` key, a line long
    enough to hold a large array) or orjson refuses a type does the careful
    path walk the values. Both paths give the same bytes for the same values,
    whatever else is on the line: the careful path writes what orjson writes
    natively (an enum as its value, a datetime as its ISO string, a UUID as
    its string), and orjson is kept from writing dataclasses, whose fields the
    careful path writes.

    Args:
        max_array_size: Arrays with more elements are stored as a summary;
            None keeps every array in full. A mapping from field patterns
            (``"obs.image"``, ``"info.*.frame"``) to sizes sets the size by
            field; the most specific pattern wins, and other fields keep
            :data:`DEFAULT_MAX_ARRAY_SIZE`.

    Example:
        >>> import numpy as np
        >>> Encoder().encode({"obs": np.array([0.5, np.nan], dtype=np.float32)})
        b'{"obs":[0.5,{"$float":"nan"}]}'
    """

    def __init__(
        self,
        *,
        max_array_size: ArraySizeSpec = DEFAULT_MAX_ARRAY_SIZE,
    ) -> None:
        self.dumps_options = _FAST_OPTIONS
        self.max_array_size = max_array_size
        self._limits = _ArrayLimits(max_array_size)
        # Any array with more than N elements encodes to more than 2N bytes,
        # so a shorter line cannot hold one that needs summarising.
        smallest = self._limits.smallest
        self._fast_limit = math.inf if smallest is None else 2 * smallest
        self._smallest = math.inf if smallest is None else smallest
        self._warned: set[tuple[str, str]] = set()

    def encode(self, record: Mapping[str, Any]) -> bytes:
        """Encode one record as a JSON line, without the newline."""
        __tracebackhide__ = True
        if type(record) is dict and _large_obs(record.get("obs"), self._smallest):
            # An image would be written in full only to be summarised.
            line = self.encode_large_obs(record)
            if _DATETIME_TEXT.search(line):
                return self._encode_careful(record)  # see below
            return line
        try:
            line = orjson.dumps(record, option=self.dumps_options)
        except orjson.JSONEncodeError:
            return self._encode_careful(record)
        # The same test as the recorder's (see EpisodeWriter._line),
        # and a datetime64 that orjson may have cut to microseconds (or NaT it
        # wrote as a date), which the recorder finds from the numpy types.
        if (
            line.rpartition(b"null")[1]
            or line.partition(b"$")[1]
            or len(line) > self._fast_limit
            or _DATETIME_TEXT.search(line)
        ):
            return self._encode_careful(record)
        return line

    def encode_large_obs(self, record: dict[str, Any]) -> bytes:
        """Encode a record whose obs is a large array (an image): what :meth:`encode` does then.

        The obs is encoded first (summarised, or in full where its field's
        ``max_array_size`` says so) and handed to orjson as a fragment of
        JSON; the rest of the record takes the fast path, without a walk of
        its values. The obs's own JSON holds a known number of ``$`` (one,
        in ``{"$array": ...}``) and of ``null``: a line that holds more holds
        them in the rest of the record, which then takes the careful path, as
        does a line whose rest is long enough to hold another large array.
        """
        obs = record["obs"]
        if type(obs) is not np.ndarray:  # a dict of images: item by item
            return self._encode_careful(record)
        encoded = orjson.dumps(self._array(obs, "obs"), option=_DUMPS_OPTIONS)
        try:
            line = orjson.dumps(
                {**record, "obs": orjson.Fragment(encoded)}, option=self.dumps_options
            )
        except orjson.JSONEncodeError:
            return self._encode_careful(record)
        if (
            line.count(b"$") != encoded.count(b"$")
            or line.count(b"null") != encoded.count(b"null")
            or len(line) - len(encoded) > self._fast_limit
        ):
            return self._encode_careful(record)
        return line

    @property
    def fast_limit(self) -> float:
        """Lines longer than this take the careful path (they may hold a large array)."""
        return self._fast_limit

    def encode_careful(self, record: Mapping[str, Any]) -> bytes:
        """Encode one record by walking its values: what :meth:`encode` falls back to."""
        __tracebackhide__ = True
        return self._encode_careful(record)

    def to_jsonable(self, value: Any, path: str = "") -> Any:
        """Convert ``value`` to what orjson writes losslessly, tagging the rest."""
        kind = type(value)
        if value is None or kind is bool or kind is str:
            return value
        if kind is int:
            return value if _INT_MIN <= value < _INT_LIMIT else {"$int": str(value)}
        if kind is float:
            return value if math.isfinite(value) else _nonfinite(value)
        if isinstance(value, np.ndarray):
            return self._array(value, path)
        if kind is orjson.Fragment:
            return value
        if isinstance(value, np.generic):
            return self._numpy_scalar(value, path)
        if isinstance(value, Mapping):
            encoded = {
                self._key(key, path): self.to_jsonable(item, _join(path, key))
                for key, item in value.items()
            }
            if len(encoded) < len(value):
                self._warn_collision(value, path)
            return encoded
        if isinstance(value, tuple) and hasattr(kind, "_fields"):
            # A named tuple (GraphInstance, ...) reads better by field name.
            return self.to_jsonable(dict(zip(kind._fields, value, strict=True)), path)
        if isinstance(value, (list, tuple)):
            return [self.to_jsonable(item, f"{path}[{i}]") for i, item in enumerate(value)]
        return self._other(value, path)

    def _key(self, key: Any, path: str) -> str:
        if isinstance(key, str):
            # A str enum's name; another subclass's own str.
            text: str = key if type(key) is str else _str_key(key)
            return "$" + text if text.startswith("$") else text
        if isinstance(key, (bool, np.bool_)):
            return "true" if key else "false"
        if isinstance(key, (int, np.integer)):
            return str(int(key))
        if isinstance(key, enum.Enum):
            return key.name
        if key is None:
            return "null"
        if isinstance(key, (float, np.floating)):
            return repr(float(key))
        # A tuple (a grid cell, say) and anything else: its own encoding, as
        # compact JSON, so that keys stay apart and read back.
        encoded = self.to_jsonable(key, _join(path, key))
        return orjson.dumps(encoded, option=_DUMPS_OPTIONS).decode()

    def _warn_collision(self, mapping: Mapping[Any, Any], path: str) -> None:
        keys: dict[str, Any] = {}
        for key in mapping:
            written = self._key(key, path)
            if written in keys and (path, written) not in self._warned:
                self._warned.add((path, written))
                warnings.warn(
                    f"gym-goldens: {path or 'value'} has keys {_shown(keys[written])} and "
                    f"{_shown(key)}, "
                    f"both written as the same string {written!r}; only the value of the "
                    "last is recorded. Give them keys that differ as strings.",
                    GoldensWarning,
                    stacklevel=3,
                )
            keys.setdefault(written, key)

    def _encode_careful(self, record: Mapping[str, Any]) -> bytes:
        __tracebackhide__ = True  # a value the recorder refuses: the test's line, not ours
        try:
            return orjson.dumps(self.to_jsonable(record), option=_DUMPS_OPTIONS)
        except (RecursionError, orjson.JSONEncodeError) as error:
            # Nested too deeply, holding itself, or a string UTF-8 cannot write.
            reason = unrecordable(record) or f"the record cannot be written as JSON ({error})"
            raise UnrecordableValueError(reason) from None

    def _array(self, array: np.ndarray[Any, Any], path: str) -> Any:
        limit = self._limits.default if self._limits.uniform else self._limits.limit(path)
        if limit is not None and array.size > limit:
            # The items of an array of objects are hashed as they would be
            # written, not as the addresses the array holds.
            def encode(items: Any) -> bytes:
                return orjson.dumps(self.to_jsonable(items, path), option=_DUMPS_OPTIONS)

            summary = ArraySummary.of(array, encode=encode)
            return {"$array": summary.to_json()}
        if array.ndim == 0:
            return self.to_jsonable(array[()], path)
        if not array.dtype.isnative:
            # Big-endian (">f8"): written as its values; the dtypes field keeps
            # the byte order. orjson writes native arrays only.
            array = array.astype(array.dtype.newbyteorder("="))
        kind = array.dtype.kind
        if kind in _NATIVE_ARRAY_KINDS and array.dtype.itemsize <= 8:
            if kind == "f" and not np.isfinite(array).all():
                return _float_rows(array)
            return np.ascontiguousarray(array)
        if kind == "M" and _orjson_writes_datetimes(array):
            # As the fast path writes it: orjson takes the whole array.
            return orjson.Fragment(orjson.dumps(array, option=_DUMPS_OPTIONS))
        return [self.to_jsonable(item, f"{path}[{i}]") for i, item in enumerate(array)]

    def _numpy_scalar(self, value: np.generic, path: str) -> Any:
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.timedelta64):  # an integer to numpy, not to orjson
            return self._lost(value, path)
        if isinstance(value, np.integer):
            return value
        if isinstance(value, np.datetime64):
            if np.isnat(value):
                return "NaT"  # orjson writes it as a date (1970-01-01 in days) or refuses it
            if not _orjson_writes_datetimes(value):
                return str(value)  # numpy's ISO text, every digit of ns (or finer)
            return _native(value, str)
        if isinstance(value, np.floating):
            if not np.isfinite(value):
                return _nonfinite(float(value))
            return value if value.dtype.itemsize <= 8 else float(value)
        if isinstance(value, (np.str_, np.bytes_)):
            return self.to_jsonable(value.item(), path)
        return self._other(value, path)

    def _other(self, value: Any, path: str) -> Any:
        if isinstance(value, enum.Enum):
            # Its value, as orjson writes an enum: a change of member is seen.
            return self.to_jsonable(value.value, path)
        if isinstance(value, (datetime.date, datetime.time)):
            return _native(value, _isoformat)
        if isinstance(value, uuid.UUID):
            return _native(value, str)
        if isinstance(value, bool):
            return bool(value)
        if isinstance(value, int):
            return self.to_jsonable(int(value), path)
        if isinstance(value, float):
            return self.to_jsonable(float(value), path)
        if isinstance(value, str):
            return str.__str__(value)  # what orjson writes of a str subclass
        if isinstance(value, (bytes, bytearray, memoryview)):
            return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
        if isinstance(value, (set, frozenset)):
            items = [self.to_jsonable(item, f"{path}{{}}") for item in value]
            items.sort(key=lambda item: orjson.dumps(item, option=_DUMPS_OPTIONS))
            return {"$set": items}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            return self.to_jsonable(fields, path)
        return self._lost(value, path)

    def _lost(self, value: Any, path: str) -> dict[str, str]:
        """The ``$object`` tag of a value without an encoding, with a warning once per field."""
        name = _type_name(value)
        if (path, name) not in self._warned:
            self._warned.add((path, name))
            warnings.warn(
                f"gym-goldens: {path or 'value'} holds a {name}, which has no JSON encoding; "
                f'it is recorded as {{"$object": "{name}"}}, so changes to it are not '
                "detected. Convert it to numbers, strings, lists or dicts to record it.",
                GoldensWarning,
                stacklevel=3,
            )
        return {"$object": name}


# What orjson writes of a datetime64 (and a datetime): an ISO date and time.
_DATETIME_TEXT: Final = re.compile(rb'"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d')
# The datetime64 units orjson writes exactly (it cuts ns to us, and refuses finer ones).
_ORJSON_UNITS: Final = frozenset({"Y", "M", "W", "D", "h", "m", "s", "ms", "us"})


def _orjson_writes_datetimes(value: np.datetime64 | np.ndarray[Any, Any]) -> bool:
    """Whether orjson writes a datetime64 (or an array of them) as it is: no NaT, no ns."""
    unit, _ = np.datetime_data(value.dtype)
    return unit in _ORJSON_UNITS and not np.isnat(value).any()


def unrecordable(record: Any) -> str | None:
    """Why a value cannot be written as a line a reader takes back, naming the field; or None.

    Nested deeper than :data:`~gym_goldens.format.limits.MAX_NESTING` levels
    (the value itself is the first), holding itself (a dict or list inside
    itself), or holding a string (or a key) with a lone surrogate, which
    UTF-8 cannot write. Walked without recursion: the value may nest deeper
    than Python recurses.

    Example:
        >>> loop = {"x": 1}
        >>> loop["me"] = loop
        >>> unrecordable({"info": {"loop": loop}}).split(":")[0]
        'info.loop.me refers to itself (to info.loop)'
    """
    todo: list[tuple[Any, FieldPath, int] | int] = [(record, (), 1)]
    inside: dict[int, FieldPath] = {}  # the dicts and lists the walk is in, by id
    while todo:
        item = todo.pop()
        if type(item) is int:
            del inside[item]
            continue
        value, path, depth = item  # type: ignore[misc]
        if isinstance(value, str):
            problem = _surrogate(value, path)
            if problem is not None:
                return problem
            continue
        if isinstance(value, Mapping):
            children = [(_key_segment(key), child) for key, child in value.items()]
            for key in value:
                problem = _surrogate(key, path) if isinstance(key, str) else None
                if problem is not None:
                    return problem.replace(" holds ", " has a key holding ", 1)
        elif isinstance(value, (list, tuple)):
            children = list(enumerate(value))
        else:
            continue
        if id(value) in inside:
            return (
                f"{_field(path)} refers to itself (to {_field(inside[id(value)])}): a recording "
                "holds values, not loops; record a copy without the loop"
            )
        if depth > MAX_NESTING:
            return (
                f"{_field(path)} is nested more than {MAX_NESTING} levels deep, the most a "
                "recording holds (what orjson writes): flatten it, or leave it out"
            )
        inside[id(value)] = path
        todo.append(id(value))
        todo += [(child, (*path, key), depth + 1) for key, child in reversed(children)]
    return None


def largest_field(value: Any) -> tuple[FieldPath, int]:
    """The field of a parsed record that holds most of its line, and the bytes it takes.

    Followed down while one item holds most of its container: ``info.text``
    for a record whose info holds a 20 MiB string.
    """
    path: FieldPath = ()
    size = len(orjson.dumps(value))
    while isinstance(value, (dict, list)) and value:
        items = value.items() if isinstance(value, dict) else enumerate(value)
        sizes = [(len(orjson.dumps(item)), key, item) for key, item in items]
        biggest, key, item = max(sizes, key=lambda entry: entry[0])
        if biggest * 2 < size:
            break
        path, size, value = (*path, key), biggest, item
    return path, size


def _key_segment(key: Any) -> str | int:
    return key if isinstance(key, str) else str(key)


def _surrogate(text: str, path: FieldPath) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return (
            f"{_field(path)} holds a lone surrogate ({text[error.start]!r}), which UTF-8 cannot "
            "write: decode the bytes it came from with errors='replace', or leave it out"
        )
    return None


def _field(path: FieldPath) -> str:
    """A field path as text, its first segments only when it is long."""
    shown = format_path(path[:_SHOWN_SEGMENTS]) or "the record"
    return shown + ("..." if len(path) > _SHOWN_SEGMENTS else "")


_SHOWN_SEGMENTS: Final = 6


def _native(value: Any, fallback: Callable[[Any], str]) -> Any:
    """A value as orjson writes it natively (a datetime, a UUID), else its ``fallback`` string.

    The fast path writes such values as orjson does; the careful path must
    write the same bytes. A value orjson refuses (a tzinfo it does not know,
    NaT) failed the fast path too, and is written as the fallback string.
    """
    try:
        return orjson.Fragment(orjson.dumps(value, option=_DUMPS_OPTIONS))
    except orjson.JSONEncodeError:
        return fallback(value)


def _str_key(key: str) -> str:
    return str(key.name) if isinstance(key, enum.Enum) else str.__str__(key)


def _isoformat(value: datetime.date | datetime.time) -> str:
    return value.isoformat()


def _large_obs(obs: Any, size: float) -> bool:
    """Whether an observation (or an item of a dict observation) is a large array."""
    if type(obs) is np.ndarray:
        return bool(obs.size > size)
    if type(obs) is dict:
        return any(type(item) is np.ndarray and item.size > size for item in obs.values())
    return False


class _ArrayLimits:
    """The summary threshold of each field, from an :data:`ArraySizeSpec`."""

    def __init__(self, spec: ArraySizeSpec) -> None:
        self.default: int | None = DEFAULT_MAX_ARRAY_SIZE
        self.patterns: list[tuple[FieldPath, int | None]] = []
        if spec is None or isinstance(spec, int):
            _check_size("max_array_size", spec)
            self.default = spec
        elif isinstance(spec, Mapping):
            for pattern, size in spec.items():
                _check_size(f"max_array_size[{pattern!r}]", size)
                try:
                    self.patterns.append((parse_pattern(pattern), size))
                except ValueError as error:
                    raise ValueError(f"max_array_size: {error}") from None
            # The most specific pattern wins: it is tried first.
            self.patterns.sort(key=lambda item: specificity(item[0]), reverse=True)
        else:
            raise TypeError(
                "max_array_size must be an int, None or a mapping of field patterns to sizes, "
                f"got {type(spec).__name__} {spec!r}"
            )
        self.uniform = not self.patterns
        sizes = [self.default, *(size for _, size in self.patterns)]
        finite = [size for size in sizes if size is not None]
        self.smallest: int | None = min(finite) if finite else None
        self._cache: dict[str, int | None] = {}

    def limit(self, path: str) -> int | None:
        """The threshold of the array at ``path`` (``obs.image``, ``info.frames[0]``)."""
        if path in self._cache:
            return self._cache[path]
        segments = split_path(path) or ()
        found = self.default
        for pattern, size in self.patterns:
            if pattern_matches(pattern, segments):
                found = size
                break
        self._cache[path] = found
        return found


def _check_size(name: str, size: object) -> None:
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
        raise ValueError(f"{name} must be None or a non-negative int, got {size!r}")


def decode_line(raw: bytes | str, *, path: object = "<recording>", line: int | None = None) -> Any:
    """Parse one JSON line and turn its tags back into values.

    Raises:
        GoldenFormatError: The line is not valid JSON.
    """
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        # orjson counts lines within the one line it was given; say the column only.
        reason = f"invalid JSON at column {exc.colno}: {exc.msg}"
        raise GoldenFormatError(path, reason, line=line) from None
    tagged = b'"$' in raw if isinstance(raw, bytes) else '"$' in raw
    return decode_value(value) if tagged else value


def duplicated_key(raw: bytes) -> FieldPath | None:
    """Where a JSON line names one key twice in one object, or None when it does not.

    A parser keeps one of the two values, so a line such as
    ``{"k1": 5.0, "k1": 5.0}`` reads as one key where the line holds two: a
    golden could hide a field from the comparison that way. The recorder
    never writes a key twice. The keys of the line are counted against those
    orjson writes back, and only a line where they differ is read again key
    by key; a line too deep for that is not looked into.

    Example:
        >>> duplicated_key(b'{"info":{"k1":5.0,"k1":5.0}}'), duplicated_key(b'{"k1":5.0}')
        (('info', 'k1'), None)
    """
    try:
        if raw.count(b'":') == orjson.dumps(orjson.loads(raw)).count(b'":'):
            return None
    except orjson.JSONEncodeError:
        pass  # nested deeper than orjson writes: read key by key
    except orjson.JSONDecodeError:
        return None
    try:
        return _repeated_key(json.loads(raw, object_pairs_hook=_Pairs), ())
    except (ValueError, RecursionError):
        return None


class _Pairs(list):  # type: ignore[type-arg]
    """A JSON object read as its key-value pairs, in order."""


def _repeated_key(value: Any, path: FieldPath) -> FieldPath | None:
    if isinstance(value, _Pairs):
        seen: set[str] = set()
        for key, _ in value:
            if key in seen:
                return (*path, key)
            seen.add(key)
        items: Any = ((key, item) for key, item in value)
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _repeated_key(item, (*path, key))
        if found is not None:
            return found
    return None


def decode_value(value: Any) -> Any:
    """Turn the tags in a parsed JSON value back into values."""
    kind = type(value)
    if kind is list:
        return [decode_value(item) for item in value]
    if kind is not dict:
        return value
    if len(value) == 1:
        ((key, content),) = value.items()
        if key.startswith("$") and not key.startswith("$$"):
            return _decode_tag(key, content)
    return {
        (key[1:] if key.startswith("$$") else key): decode_value(item)
        for key, item in value.items()
    }


def _decode_tag(tag: str, content: Any) -> Any:
    if tag == "$float" and content in ("nan", "inf", "-inf"):
        return float(content)
    if tag == "$int" and isinstance(content, str):
        try:
            return int(content)
        except ValueError:
            pass  # not digits, or more than Python converts: kept as a tag
    if tag == "$array" and isinstance(content, dict):
        try:
            return ArraySummary(
                dtype=str(content["dtype"]),
                shape=tuple(int(n) for n in content["shape"]),
                digest=str(content["digest"]),
                min=content.get("min"),
                max=content.get("max"),
                mean=content.get("mean"),
                sum=content.get("sum"),
                bands=tuple(str(b) for b in content["bands"]) if content.get("bands") else None,
            )
        except (KeyError, TypeError, ValueError):
            pass
    return TaggedValue(tag, _freeze(decode_value(content)))


def _freeze(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_freeze(item) for item in value)
    if isinstance(value, dict):
        return tuple(sorted((key, _freeze(item)) for key, item in value.items()))
    return value


def _buffer(array: np.ndarray[Any, Any]) -> memoryview:
    """The bytes of a C-contiguous array, without copying them."""
    if array.dtype.hasobject or not array.size:
        return memoryview(array.tobytes())
    return memoryview(array.reshape(-1).view(np.uint8))  # type: ignore[arg-type]


def _json_sum(total: object) -> object:
    """An exact sum that JSON can hold; one beyond 64 bits (of a large int64 array) as a float."""
    if isinstance(total, int) and not _INT_MIN <= total < _INT_LIMIT:
        return float(total)
    return total


def _nonfinite(value: float) -> dict[str, str]:
    return {"$float": _NONFINITE_NAMES.get(value, "nan")}


def _float_rows(array: np.ndarray[Any, Any]) -> list[Any]:
    if array.ndim > 1:
        return [_float_rows(row) for row in array]
    # Iterating keeps numpy scalars, which orjson writes at their own width.
    return [item if np.isfinite(item) else _nonfinite(float(item)) for item in array]


def _shown(key: Any) -> str:
    """A key for a message: its repr, or its type where a repr may hold an address."""
    plain = isinstance(key, (str, int, float, tuple, enum.Enum)) or key is None
    return repr(key) if plain else f"a {_type_name(key)}"


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _type_name(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"
