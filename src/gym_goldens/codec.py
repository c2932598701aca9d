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
``{"$enum": "..."}``    an enum member, ``module.Class.NAME``
``{"$object": "..."}``  an unsupported object, ``module.Class`` only
====================  ===============================================

A dict key that itself starts with ``$`` is written with one more ``$``.
Unsupported objects never reach a file through ``repr()``: a repr often holds a
memory address, which would make a golden differ on every run. They are written
as their type name and a :class:`~gym_goldens.errors.GoldensWarning` names the
field, so a lossy recording is never silent.

Numpy arrays are written as nested lists; floats of every width are written as
the shortest decimal that reads back to the same value of that width
(``float32(0.1)`` is ``0.1``). Arrays with more than ``max_array_size``
elements are written as a summary: dtype, shape, a SHA-256 of the contents and
a few statistics, enough to tell that one element changed.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import hashlib
import math
import warnings
from collections.abc import Mapping
from typing import Any, Final

import numpy as np
import orjson

from gym_goldens.errors import GoldenFormatError, GoldensWarning

__all__ = [
    "DEFAULT_MAX_ARRAY_SIZE",
    "ArraySummary",
    "Encoder",
    "TaggedValue",
    "decode_line",
    "decode_value",
]

DEFAULT_MAX_ARRAY_SIZE: Final = 4096
"""Arrays with more elements than this are stored as a summary by default."""

_DUMPS_OPTIONS: Final = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_SORT_KEYS
_INT_MIN: Final = -(2**63)
_INT_LIMIT: Final = 2**64
_NATIVE_ARRAY_KINDS: Final = frozenset("biuf")
_NONFINITE_NAMES: Final = {math.inf: "inf", -math.inf: "-inf"}


@dataclasses.dataclass(frozen=True)
class ArraySummary:
    """A large array as stored in a file: enough to detect any change.

    Attributes:
        dtype: Numpy dtype name, such as ``"uint8"``.
        shape: The array's shape.
        sha256: Digest of the little-endian, C-ordered contents.
        min: Smallest finite element (None when there is none).
        max: Largest finite element (None when there is none).
        mean: Mean of the finite elements (None when there is none).
    """

    dtype: str
    shape: tuple[int, ...]
    sha256: str
    min: float | None
    max: float | None
    mean: float | None

    @classmethod
    def of(cls, array: np.ndarray[Any, Any]) -> ArraySummary:
        """Summarise ``array``."""
        canonical = np.ascontiguousarray(array)
        if canonical.dtype.byteorder == ">":
            canonical = canonical.astype(canonical.dtype.newbyteorder("<"))
        digest = hashlib.sha256(canonical.tobytes()).hexdigest()
        low = high = mean = None
        if canonical.dtype.kind in "biuf" and canonical.size:
            finite = canonical[np.isfinite(canonical)] if canonical.dtype.kind == "f" else canonical
            if finite.size:
                low, high = float(finite.min()), float(finite.max())
                mean = float(finite.mean(dtype=np.float64))
        return cls(str(canonical.dtype), tuple(canonical.shape), digest, low, high, mean)

    def to_json(self) -> dict[str, Any]:
        """The ``$array`` tag's content."""
        return {
            "dtype": self.dtype,
            "shape": list(self.shape),
            "sha256": self.sha256,
            "min": self.min,
            "max": self.max,
            "mean": self.mean,
        }


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
    path walk the values. Both paths give the same bytes for the same values.

    Args:
        max_array_size: Arrays with more elements are stored as a summary;
            None keeps every array in full.

    Example:
        >>> import numpy as np
        >>> Encoder().encode({"obs": np.array([0.5, np.nan], dtype=np.float32)})
        b'{"obs":[0.5,{"$float":"nan"}]}'
    """

    def __init__(self, *, max_array_size: int | None = DEFAULT_MAX_ARRAY_SIZE) -> None:
        self.max_array_size = max_array_size
        # Any array with more than N elements encodes to more than 2N bytes,
        # so a shorter line cannot hold one that needs summarising.
        self._fast_limit = math.inf if max_array_size is None else 2 * max_array_size
        self._warned: set[tuple[str, str]] = set()

    def encode(self, record: Mapping[str, Any]) -> bytes:
        """Encode one record as a JSON line, without the newline."""
        try:
            line = orjson.dumps(record, option=_DUMPS_OPTIONS)
        except orjson.JSONEncodeError:
            return self._encode_careful(record)
        if b"null" in line or b'"$' in line or len(line) > self._fast_limit:
            return self._encode_careful(record)
        return line

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
            return {
                _key(key, path): self.to_jsonable(item, _join(path, key))
                for key, item in value.items()
            }
        if isinstance(value, (list, tuple)):
            return [self.to_jsonable(item, f"{path}[{i}]") for i, item in enumerate(value)]
        return self._other(value, path)

    def _encode_careful(self, record: Mapping[str, Any]) -> bytes:
        return orjson.dumps(self.to_jsonable(record), option=_DUMPS_OPTIONS)

    def _array(self, array: np.ndarray[Any, Any], path: str) -> Any:
        if self.max_array_size is not None and array.size > self.max_array_size:
            return {"$array": ArraySummary.of(array).to_json()}
        if array.ndim == 0:
            return self.to_jsonable(array[()], path)
        kind = array.dtype.kind
        if kind in _NATIVE_ARRAY_KINDS and array.dtype.itemsize <= 8:
            if kind == "f" and not np.isfinite(array).all():
                return _float_rows(array)
            return np.ascontiguousarray(array)
        return [self.to_jsonable(item, f"{path}[{i}]") for i, item in enumerate(array)]

    def _numpy_scalar(self, value: np.generic, path: str) -> Any:
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.integer):
            return value
        if isinstance(value, np.floating):
            if not np.isfinite(value):
                return _nonfinite(float(value))
            return value if value.dtype.itemsize <= 8 else float(value)
        if isinstance(value, (np.str_, np.bytes_)):
            return self.to_jsonable(value.item(), path)
        return self._other(value, path)

    def _other(self, value: Any, path: str) -> Any:
        if isinstance(value, enum.Enum):
            return {"$enum": f"{_type_name(value)}.{value.name}"}
        if isinstance(value, bool):
            return bool(value)
        if isinstance(value, int):
            return self.to_jsonable(int(value), path)
        if isinstance(value, float):
            return self.to_jsonable(float(value), path)
        if isinstance(value, str):
            return str(value)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
        if isinstance(value, (set, frozenset)):
            items = [self.to_jsonable(item, f"{path}{{}}") for item in value]
            items.sort(key=lambda item: orjson.dumps(item, option=_DUMPS_OPTIONS))
            return {"$set": items}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            return self.to_jsonable(fields, path)
        name = _type_name(value)
        if (path, name) not in self._warned:
            self._warned.add((path, name))
            warnings.warn(
                f"gym-goldens: {path or 'value'} holds a {name}, which has no JSON encoding; "
                f'it is recorded as {{"$object": "{name}"}}, so changes to it are not '
                "detected. Convert it to numbers, strings, lists or dicts to record it.",
                GoldensWarning,
                stacklevel=2,
            )
        return {"$object": name}


def decode_line(raw: bytes | str, *, path: object = "<recording>", line: int | None = None) -> Any:
    """Parse one JSON line and turn its tags back into values.

    Raises:
        GoldenFormatError: The line is not valid JSON.
    """
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise GoldenFormatError(path, f"invalid JSON ({exc})", line=line) from None
    if (b'"$' if isinstance(raw, bytes) else '"$') in raw:
        return decode_value(value)
    return value


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
                sha256=str(content["sha256"]),
                min=content.get("min"),
                max=content.get("max"),
                mean=content.get("mean"),
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


def _nonfinite(value: float) -> dict[str, str]:
    return {"$float": _NONFINITE_NAMES.get(value, "nan")}


def _float_rows(array: np.ndarray[Any, Any]) -> list[Any]:
    if array.ndim > 1:
        return [_float_rows(row) for row in array]
    # Iterating keeps numpy scalars, which orjson writes at their own width.
    return [item if np.isfinite(item) else _nonfinite(float(item)) for item in array]


def _key(key: Any, path: str) -> str:
    if isinstance(key, str):
        return "$" + key if key.startswith("$") else key
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
    return _type_name(key)


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _type_name(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"
