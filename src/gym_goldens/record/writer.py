"""The one episode writer: the lines of a recording, buffered per episode.

:class:`EpisodeWriter` writes the trajectory file of one env, or of one
sub-env of a vector env: each episode's header line (built by
:class:`HeaderLines`), its reset record and a step record per step. Both
recorders (:class:`~gym_goldens.record.single.RecordTrajectory` and
:class:`~gym_goldens.record.vector.RecordVectorTrajectory`) hand it what the
env returned; it encodes, buffers and writes.

Flush policy: lines are buffered in memory during an episode and appended to
the file with one write when the episode ends (terminated or truncated), on
the next reset, on ``flush()`` and ``close()``, and when the env raises. A
completed episode is therefore handed to the operating system before the
next one starts: if the process then dies (even by a segfault or SIGKILL),
every completed episode is on disk and only the episode in progress is lost.
The buffer is also written whenever it holds 4 MiB, so that memory stays
near that however long an episode runs; ``flush_every=N`` also writes it
every N lines (steps), for per-step durability of long episodes at the cost
of a write every N steps. After a crash in the middle of such an episode, its
first part is in the file, and the reader reports it as incomplete (see
:attr:`gym_goldens.format.reader.Episode.complete`). The file stays open
between episodes: an append costs a few microseconds where creating a file
per episode costs tens to hundreds.

The step loop does as little as it can: one dict, one ``orjson.dumps`` (the
careful encoder only when that line may be lossy) and an append to one
``bytearray``, which holds the lines compactly (each ``bytes`` that orjson
returns holds a few kB of memory); the header, which does not change between
episodes, is encoded once, and the numpy types of a step are worked out in
full only when a cheap key of them changes (:class:`StepTypes`), which
MuJoCo's info of ``np.float64`` values does not.
"""

from __future__ import annotations

import dataclasses
import errno
import gzip
import hashlib
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import numpy as np
import orjson

from gym_goldens.errors import UnrecordableValueError
from gym_goldens.format import dtypes

# The codec's own dumps options: the step loop inlines Encoder.encode.
from gym_goldens.format.codec import (
    _DUMPS_OPTIONS,
    DEFAULT_MAX_ARRAY_SIZE,
    ArraySizeSpec,
    Encoder,
    _large_obs,
    largest_field,
    unrecordable,
)
from gym_goldens.format.fields import format_path
from gym_goldens.format.header import FORMAT_NAME, FORMAT_VERSION
from gym_goldens.format.limits import MAX_LINE_BYTES, format_size
from gym_goldens.record.frames import FrameFiles, check_images

__all__ = [
    "EpisodeWriter",
    "HeaderLines",
    "StepTypes",
    "Storage",
    "TrajectoryFile",
    "digest_record",
]

_DIGEST_BYTES: Final = 8
_GZIP_LEVEL: Final = 6
_DUMPS: Final = orjson.dumps
_NDARRAY: Final = np.ndarray
# The most kinds of reset (by type of obs) whose dtypes field is kept.
_MAX_CACHED: Final = 64
_MAX_CACHED_HEADERS: Final = 256
# Types whose numpy type, if any, their type alone gives: Python values (none)
# and numpy numbers (their dtype). Strings and bytes of numpy carry a length.
_SIMPLE_TYPES: Final = frozenset(
    {float, int, bool, str, bytes, type(None)}
    | {kind for kind in np.sctypeDict.values() if issubclass(kind, (np.number, np.bool_))}
)
# A step or reset without a frame of env.render().
_NO_RENDER: Final[Any] = object()
# The info part of a step key for an info of plain Python values only
# (FrozenLake's {"prob": 1.0}): their keys are not in it, as building it
# would cost more than looking for "$" in the line (see EpisodeWriter.step).
_PLAIN_INFO: Final = (type(None),)
_PLAIN_TYPES: Final = frozenset({float, int, bool, str, bytes, type(None)})
_ALL_PLAIN: Final = _PLAIN_TYPES.issuperset
# Not the key of any step: the next step is recorded in full (see EpisodeWriter.step).
_IN_FULL: Final[Any] = object()
# The buffer is written when it holds this much, however long the episode, so
# that a long episode costs memory near what is buffered, not what it writes.
_WRITE_SIZE: Final = 4 * 1024 * 1024
# Never through a link: a trajectory file is written in its recording's folder
# only. Binary: on Windows os.open's default text mode writes a newline as
# CRLF, and would change the bytes of a gzip member.
_OPEN_FLAGS: Final = (
    getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
)
_NEW_FILE: Final = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _OPEN_FLAGS
_APPEND: Final = os.O_WRONLY | os.O_CREAT | os.O_APPEND | _OPEN_FLAGS


def digest_record(t: int, line: bytes) -> bytes:
    """The record that stands for step ``t`` when only its digest is kept."""
    digest = hashlib.blake2b(line, digest_size=_DIGEST_BYTES).hexdigest()
    return b'{"digest":"%s","event":"step","t":%d}' % (digest.encode("ascii"), t)


@dataclasses.dataclass(frozen=True)
class Storage:
    """How a recording keeps its steps: the storage options of both recorders, checked.

    Attributes:
        max_array_size: Arrays with more elements are stored as a summary;
            None keeps every array in full; a mapping from field patterns to
            sizes sets it by field.
        flush_every: Also write the buffer whenever it holds this many lines.
        compress: Write ``trajectory.jsonl.gz``.
        full_every: Keep only step 1, every ``full_every``-th step and the
            last step of an episode in full, and a digest of the others.
        images: ``"summary"``: image-like arrays of obs and info are kept
            as arrays (summaries when large); ``"frames"``: as PNG files
            (see :mod:`gym_goldens.record.frames`).

    Raises:
        ValueError: ``flush_every`` or ``full_every`` is not None or a
            positive int, ``max_array_size`` is not a valid size, or
            ``images`` is not ``"summary"`` or ``"frames"``.
        TypeError: ``max_array_size`` is of another type.
    """

    max_array_size: ArraySizeSpec = DEFAULT_MAX_ARRAY_SIZE
    flush_every: int | None = None
    compress: bool = False
    full_every: int | None = None
    images: str = "summary"

    def __post_init__(self) -> None:
        check_images(self.images)
        for name in ("flush_every", "full_every"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ValueError(f"{name} must be None or a positive int, got {value!r}")
        self.encoder()  # refuses a bad size now, not at a step

    @property
    def header(self) -> dict[str, Any]:
        """The ``storage`` header field: how arrays and steps were kept."""
        header: dict[str, Any] = {
            "max_array_size": self.max_array_size,
            "full_every": self.full_every,
        }
        if self.images != "summary":  # the headers of earlier goldens stay as they were
            header["images"] = self.images
        return header

    def encoder(self) -> Encoder:
        """A new encoder of this storage's arrays."""
        return Encoder(max_array_size=self.max_array_size)

    def writer(self, path: Path, encoder: Encoder, *, render: bool = False) -> EpisodeWriter:
        """The episode writer of the trajectory file ``path`` (frames of ``render`` with it)."""
        keeps_frames = render or self.images == "frames"
        frames = FrameFiles(path.parent, encoder, images=self.images == "frames")
        return EpisodeWriter(
            path,
            encoder,
            compress=self.compress,
            flush_every=self.flush_every,
            full_every=self.full_every,
            frames=frames if keeps_frames else None,
        )


class StepTypes:
    """The numpy types of the steps of one recording, worked out only when they may change.

    Walking every value of a step for its numpy type costs more than encoding
    a small step, so the writer walks them (:meth:`walk`) only when a cheap
    key of the step differs from :attr:`key`. The key holds the types of
    action, obs and reward (with the dtype and shape of array ones), and the
    keys of the info dict with the types of their values, in one tuple (built
    at every step by :meth:`EpisodeWriter.step`). It stands for the numpy
    types when each of those types gives the numpy type of its value alone:
    an array (whose dtype and shape are in the key), a Python value (which
    has none) or a numpy number (whose type is its dtype), as MuJoCo's
    ``np.float64`` info values are. Otherwise (an array or a dict inside info, an info that is not a
    dict) :attr:`key` is None and every step is walked.

    Args:
        smallest: The size of the smallest array that may be summarised.

    Attributes:
        key: The key that stands for the last walked types, or None.
        field: The ``dtypes`` record field of those types (None when nothing
            has a numpy type).
        careful: Whether orjson must not write such a record itself
            (:func:`~gym_goldens.format.dtypes.needs_careful_path`).
        lean: Whether a record of the key's types needs only the search for
            ``null`` after orjson wrote it: the key names every dict key of
            the record (none starts with ``$``) and no array is large enough
            to be summarised (see :meth:`EpisodeWriter.step`).
    """

    __slots__ = ("_smallest", "_types", "careful", "field", "key", "lean")

    def __init__(self, smallest: float = math.inf) -> None:
        self.key: tuple[Any, ...] | None = None
        self.field: Any = None
        self.careful = False
        self.lean = False
        self._smallest = smallest
        self._types: Any = None

    def walk(
        self, action: Any, obs: Any, reward: Any, info: Any, key: tuple[Any, ...] | None
    ) -> bool:
        """Work out the types of a step in full; whether they changed since the last walk.

        ``key`` is the step's key (None for none: a reset's).

        Raises:
            UnrecordableValueError: A value is too deep to walk, or holds itself.
        """
        __tracebackhide__ = True
        try:
            types = (
                dtypes.signature(action),
                dtypes.signature(obs),
                dtypes.signature(reward),
                dtypes.signature(info),
            )
        except RecursionError:
            raise _unrecordable({"action": action, "obs": obs, "info": info}) from None
        changed: bool = types != self._types
        if changed:
            self._types = types
            fields = zip(("action", "obs", "reward", "info"), types, strict=True)
            typed = {name: found for name, found in fields if found is not None}
            self.field = dtypes.to_json(typed) if typed else None
            self.careful = any(map(dtypes.needs_careful_path, types))
        self.key = key if key is not None and _stands_for_types(key) else None
        self.lean = self.key is not None and not self.careful and _lean(self.key, self._smallest)
        return changed


def step_key(action: Any, obs: Any, reward: Any, info: Any) -> tuple[Any, ...]:
    """The key of a step's numpy types (see :class:`StepTypes`).

    The types of action, obs and reward (the dtype and shape of an array);
    of an info dict, ``()`` when empty, ``_PLAIN_INFO`` when its values are
    plain Python values, else its keys and the types of its values; None
    for an info that is not a dict.
    """
    action_key: Any = type(action)
    if action_key is _NDARRAY:
        action_key = (action.dtype, action.shape)
    obs_key: Any = type(obs)
    if obs_key is _NDARRAY:
        obs_key = (obs.dtype, obs.shape)
    info_key: Any = None
    if type(info) is dict:
        info_key = (
            ()
            if not info
            else _PLAIN_INFO
            if _ALL_PLAIN(map(type, info.values()))
            else (*info, *map(type, info.values()))
        )
    return (action_key, obs_key, type(reward), info_key)


def _stands_for_types(key: tuple[Any, ...]) -> bool:
    """Whether a step key gives the numpy types of every value of its step."""
    action_key, obs_key, reward_type, info_key = key
    return (
        (type(action_key) is tuple or action_key in _SIMPLE_TYPES)
        and (type(obs_key) is tuple or obs_key in _SIMPLE_TYPES)
        and reward_type in _SIMPLE_TYPES
        and info_key is not None
        and all(kind in _SIMPLE_TYPES for kind in info_key[len(info_key) // 2 :])
    )


def _lean(key: tuple[Any, ...], smallest: float) -> bool:
    """Whether a key that stands for its types also vouches for the dict keys and array sizes.

    Its info keys are all strings, none starting with ``$`` (which the careful
    path escapes), or its info holds plain values only (whose keys the step
    looks for in its line), and neither action nor obs is an array of more
    than ``smallest`` items (which may be summarised).
    """
    action_key, obs_key, _, info_key = key
    arrays = [part[1] for part in (action_key, obs_key) if type(part) is tuple]
    names = () if info_key is _PLAIN_INFO else info_key[: len(info_key) // 2]
    return all(type(name) is str and name[:1] != "$" for name in names) and all(
        math.prod(shape) <= smallest for shape in arrays
    )


class TrajectoryFile:
    """The file of one recording, written in pieces.

    The first write creates the file (replacing an older one); later writes
    append to it, also after :meth:`close`. Writes are os-level calls,
    unbuffered: a file object costs more than the write itself, and what was
    written has reached the operating system. A compressed file gets one
    complete gzip member per write (with a fixed timestamp, so the same lines
    give the same bytes), so that what was written reads back even if the
    process dies before the next write.

    Args:
        path: The trajectory file.
        compress: Whether it is gzip-compressed (``.jsonl.gz``).
    """

    __slots__ = ("_compress", "_fd", "_started", "path")

    def __init__(self, path: str, *, compress: bool) -> None:
        self.path = path
        self._compress = compress
        self._fd: int | None = None
        self._started = False

    def write(self, data: bytes | bytearray) -> None:
        """Append ``data``: whole lines, each ending in a newline.

        Raises:
            UnsafeGoldenPathError: The file is a symlink (not followed).
            OSError: It could not be written (a full disk); the error names it.
        """
        if self._compress:
            data = gzip.compress(data, compresslevel=_GZIP_LEVEL, mtime=0)
        try:
            if self._fd is None:
                self._fd = self._open()
            written = os.write(self._fd, data)
            if written < len(data):
                # A short write (a signal, a nearly full disk): the rest goes after it.
                view = memoryview(data)[written:]
                while view:
                    view = view[os.write(self._fd, view) :]
        except OSError as error:  # a full disk's names no file
            raise OSError(error.errno, error.strerror, self.path) from None

    def _open(self) -> int:
        try:
            descriptor = os.open(self.path, _APPEND if self._started else _NEW_FILE, 0o666)
        except OSError as error:
            if error.errno == errno.ELOOP and os.path.islink(self.path):
                from gym_goldens.format.paths import symlink_error  # rare: not loaded up front

                raise symlink_error(
                    Path(self.path),
                    within="a recording's folder",
                    fix="remove the link, or record into another folder",
                ) from None
            raise
        self._started = True
        return descriptor

    def close(self) -> None:
        """Close the handle; a later write appends."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


class HeaderLines:
    """The header lines of a recording's episodes, encoded once for each kind of reset.

    Every field but ``reset`` (and a vector sub-env's ``index``) is the same
    at every episode: they are encoded once, and a header line is one
    ``orjson.dumps`` of already encoded parts, which gives the bytes the
    careful encoder would. Headers of ``reset()`` and ``reset(seed=n)`` are
    kept whole.

    Args:
        describe: Gives the fields that do not change between episodes
            (:func:`~gym_goldens.format.header.describe_env` or
            :func:`~gym_goldens.format.header.describe_vector_env`); called
            at the first episode, when the env's spaces are final.
        storage: The ``storage`` field (:attr:`Storage.header`).
        encoder: The recording's encoder.
    """

    __slots__ = ("_cache", "_describe", "_encode", "_fields", "_storage", "_vector")

    def __init__(
        self, describe: Callable[[], dict[str, Any]], storage: dict[str, Any], encoder: Encoder
    ) -> None:
        self._describe = describe
        self._storage = storage
        self._encode = encoder.encode
        self._fields: dict[str, Any] | None = None
        self._vector: dict[str, Any] | None = None
        self._cache: dict[tuple[int | None, Any, bool], bytes] = {}

    def line(
        self, seed: Any, options: Any, *, autoreset: bool = False, index: int | None = None
    ) -> bytes:
        """The header line of an episode reset with ``seed`` and ``options``.

        Args:
            seed: The reset's seed.
            options: The reset's options.
            autoreset: Whether a vector env reset the sub-env by itself.
            index: The sub-env's index, for a sub-env of a vector env.
        """
        __tracebackhide__ = True
        key = (index, seed, autoreset)
        cacheable = options is None and (seed is None or type(seed) is int)
        cached = self._cache.get(key) if cacheable else None
        if cached is not None:
            return cached
        encode = self._encode
        if self._fields is None:
            description = self._describe()
            self._vector = description.get("vector")
            self._fields = {
                "event": "header",
                "format": FORMAT_NAME,
                "version": FORMAT_VERSION,
                "storage": orjson.Fragment(encode(self._storage)),
                **{
                    name: orjson.Fragment(encode(value))
                    for name, value in description.items()
                    if name != "vector"
                },
            }
        reset: dict[str, Any] = {"seed": seed, "options": options}
        if autoreset:
            reset["autoreset"] = True
        fields = {**self._fields, "reset": orjson.Fragment(encode(reset))}
        if self._vector is not None:
            fields["vector"] = orjson.Fragment(encode({**self._vector, "index": index}))
        # Every value is a string or already encoded, so one dumps gives the
        # same bytes as the careful path, without walking the header again.
        line = _DUMPS(fields, option=_DUMPS_OPTIONS)
        if cacheable and len(self._cache) < _MAX_CACHED_HEADERS:
            self._cache[key] = line
        return line


_FAST: Final = 0
_LARGE_OBS: Final = 1
_CAREFUL: Final = 2


def _unrecordable(record: Any) -> UnrecordableValueError:
    """The error for a record whose types cannot be walked: too deep, or holding itself."""
    return UnrecordableValueError(
        unrecordable(record) or "the record is nested too deeply to be walked: flatten it"
    )


def _long_line(data: bytearray) -> tuple[int, int] | None:
    """Where the first line longer than a reader accepts starts and ends in ``data``."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        if end - start > MAX_LINE_BYTES:
            return start, end
        start = end + 1
    return None


def _too_long(line: bytes) -> str:
    """Why a line cannot be recorded: its size, the limit, and the field that takes most of it."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        record = None
    what = "the header" if isinstance(record, dict) and record.get("event") == "header" else ""
    if isinstance(record, dict) and not what:
        what = f"the record of step t={record['t']}" if "t" in record else "the reset record"
    path, size = largest_field(record)
    return (
        f"{what or 'a record'} is {len(line):,} bytes, longer than {format_size(MAX_LINE_BYTES)}, "
        f"the longest line a reader accepts: {format_path(path) or 'it'} holds {size:,} bytes "
        "of it; store a large array as a summary (max_array_size), or leave the field out"
    )


class EpisodeWriter:
    """The trajectory file of one env (or sub-env), written episode by episode.

    Args:
        path: The trajectory file; its folder is made at the first episode.
        encoder: Encodes the records (``max_array_size`` and the careful path).
        compress: Whether the file is gzip-compressed.
        flush_every: Also write the buffer whenever it holds this many lines.
        full_every: Keep only step 1, every ``full_every``-th step and the last
            step of an episode in full, and a digest of the others.
        frames: Writes the frames of the records, or None when none are kept.
    """

    __slots__ = (
        "_buffer",
        "_careful",
        "_encode_large_obs",
        "_encoder",
        "_fast_limit",
        "_file",
        "_flush_limit",
        "_folder_made",
        "_frames",
        "_last_reset",
        "_lean_key",
        "_may_be_lean",
        "_options",
        "_plain_first",
        "_render",
        "_reset_kinds",
        "_reset_types",
        "_route",
        "_smallest_array",
        "_step_types",
        "_t",
        "_write_at",
        "active",
        "episode_count",
        "full_every",
        "path",
    )

    def __init__(
        self,
        path: Path,
        encoder: Encoder,
        *,
        compress: bool,
        flush_every: int | None,
        full_every: int | None,
        frames: FrameFiles | None = None,
    ) -> None:
        self.path = path
        self._frames = frames
        self._render: Any = _NO_RENDER
        self.full_every = full_every
        self.episode_count = 0
        # Whether an episode is in progress (begun, not ended by end()).
        self.active = False
        self._file = TrajectoryFile(str(path), compress=compress)
        self._folder_made = False
        self._encoder = encoder
        self._careful = encoder.encode_careful
        self._encode_large_obs = encoder.encode_large_obs
        # orjson ends the line with its newline: no second append per step.
        self._options = encoder.dumps_options | orjson.OPT_APPEND_NEWLINE
        self._fast_limit = encoder.fast_limit
        # The smallest array that may be summarised (see Encoder.encode).
        limit = encoder.fast_limit
        self._smallest_array = limit / 2 if limit != float("inf") else limit
        self._flush_limit = flush_every if flush_every is not None else math.inf
        # The lines not yet written, each ending in a newline, in one compact
        # buffer: the bytes objects orjson returns hold several kB each.
        self._buffer = bytearray()
        self._t = 0
        # The step whose line makes the buffer hold flush_every lines: a
        # comparison with t, where counting lines would cost a store per step.
        self._write_at = self._flush_limit
        # They outlive an episode: step 1 of the next one writes the field again.
        self._step_types = StepTypes(self._smallest_array)
        self._reset_types = StepTypes(self._smallest_array)
        self._reset_kinds: dict[Any, tuple[Any, int]] = {}
        # The key and kind of the last cacheable reset (see _reset_kind).
        self._last_reset: tuple[Any, tuple[Any, int]] = (_IN_FULL, (None, _FAST))
        # How each step is encoded, worked out when its types are: the fast
        # path, 1 for a large obs (an image), 2 the careful path (a datetime64).
        self._route = _FAST
        # Whether the storage lets a step take the lean path (see step), and
        # the key of the steps that take it (_IN_FULL: none).
        self._may_be_lean = frames is None and full_every is None and flush_every is None
        self._lean_key: Any = _IN_FULL
        # Whether the step looks at an info as plain values first, as step_key
        # does: not when the lean key's info holds its keys and types.
        self._plain_first = True

    def begin(self, header: bytes) -> None:
        """Start an episode with its header line; an unfinished one is written as it is."""
        __tracebackhide__ = True  # a value the recorder refuses: the test's line, not ours
        if self._buffer:
            self.write_buffer()
        if not self._folder_made:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._folder_made = True
        self.active = True
        self.episode_count += 1
        self._t = 0
        if len(header) >= MAX_LINE_BYTES:  # with its newline, longer than the limit
            raise UnrecordableValueError(_too_long(header))
        buffer = self._buffer
        buffer += header
        buffer += b"\n"
        self._write_at = self._flush_limit - 1

    def reset(self, obs: Any, info: Any) -> None:
        """Record the reset that begins the episode."""
        __tracebackhide__ = True
        episode = self.episode_count - 1
        record = {"event": "reset", "episode": episode, "obs": obs, "info": info}
        field, route = self._reset_kind(obs, info)
        if field is not None:
            record["dtypes"] = field
        if self._render is not _NO_RENDER:
            record["render"], self._render = self._render, _NO_RENDER
        frames = self._frames
        if frames is not None and frames.replace(record, episode, 0, write=True):
            self._add(frames.encode(record) + b"\n")
        else:
            self._add(self._line(record, route))

    def _reset_kind(self, obs: Any, info: Any) -> tuple[Any, int]:
        """The dtypes field of a reset record and its route (see _route_of).

        Kept by the type of obs (its dtype and shape for an array) where that
        and an info of plain Python values give them; walked otherwise.
        """
        __tracebackhide__ = True
        key: Any = type(obs)
        if key is _NDARRAY:
            key = (obs.dtype, obs.shape)
        plain = type(info) is dict and (not info or _ALL_PLAIN(map(type, info.values())))
        last_key, last_kind = self._last_reset
        if plain and key == last_key:  # the kind of the reset before: no lookup
            return last_kind
        cacheable = plain and (type(key) is tuple or key in _SIMPLE_TYPES)
        kind = self._reset_kinds.get(key) if cacheable else None
        if kind is None:
            types = self._reset_types
            types.walk(None, obs, None, info, None)
            kind = (types.field, self._route_of(obs, types))
            if cacheable and len(self._reset_kinds) < _MAX_CACHED:
                self._reset_kinds[key] = kind
        if cacheable:
            self._last_reset = (key, kind)
        return kind

    def _add(self, line: bytes) -> None:
        """Buffer a header or reset line, ending in its newline."""
        __tracebackhide__ = True
        if len(line) > MAX_LINE_BYTES:
            raise UnrecordableValueError(_too_long(line[:-1]))
        self._buffer += line
        self._write_at -= 1

    # Positional, as gymnasium's step returns them: keywords cost time at every step.
    def step(  # noqa: PLR0917
        self, action: Any, obs: Any, reward: Any, terminated: bool, truncated: bool, info: Any
    ) -> None:
        """Record one step; an episode that ends is written.

        A step whose key (see :class:`StepTypes`) is the lean key, of the step
        before, takes the lean path: one ``orjson.dumps``, a search for ``null``
        (NaN, infinity or None) and an append. Others: :meth:`_step_in_full`.
        """
        __tracebackhide__ = True
        self._t = t = self._t + 1
        record = {
            "event": "step",
            "t": t,
            "action": action,
            "obs": obs,
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "info": info,
        }
        # The key, built here: a call would cost as much. An info is looked at as
        # the lean key's was; a key of the wrong kind differs from it all the same.
        action_key: Any = type(action)
        if action_key is _NDARRAY:
            action_key = (action.dtype, action.shape)
        obs_key: Any = type(obs)
        if obs_key is _NDARRAY:
            obs_key = (obs.dtype, obs.shape)
        info_key: Any = None  # None: not a dict
        if type(info) is dict:
            info_key = () if not info else _PLAIN_INFO if self._plain_first else None
            if info_key is _PLAIN_INFO:
                for value in info.values():  # a loop: all() or a set costs more
                    if type(value) not in _PLAIN_TYPES:
                        info_key = None
                        break
            if info_key is None:
                info_key = (*info, *map(type, info.values()))
        key = (action_key, obs_key, type(reward), info_key)
        if key != self._lean_key:
            if not self._plain_first:
                key = step_key(action, obs, reward, info)
            self._step_in_full(record, key, terminated or truncated)
            return
        if t == 1 and self._step_types.field is not None:
            # Step 1 of an episode writes the numpy types, whatever the step before.
            record["dtypes"] = self._step_types.field
        try:
            line = _DUMPS(record, option=self._options)
        except orjson.JSONEncodeError:  # an int past 64 bits, a lone surrogate
            line = self._careful(record) + b"\n"
        else:
            # rpartition(), not find() or "in": it costs least, also on long lines.
            if line.rpartition(b"null")[1] or (info_key is _PLAIN_INFO and line.partition(b"$")[1]):
                line = self._careful(record) + b"\n"
        buffer = self._buffer
        buffer += line
        if terminated or truncated or len(buffer) >= _WRITE_SIZE:
            self.write_buffer()

    def _step_in_full(self, record: dict[str, Any], key: tuple[Any, ...], done: bool) -> None:
        """Record a step that the lean path does not take: types walked where they may change."""
        __tracebackhide__ = True
        t = self._t
        step_types = self._step_types
        # The numpy types are written when they change (in practice on step 1),
        # walked in full only when the key of them changes (see StepTypes).
        if key != step_types.key:
            obs = record["obs"]
            changed = step_types.walk(record["action"], obs, record["reward"], record["info"], key)
            if changed and step_types.field is not None:
                record["dtypes"] = step_types.field
            self._route = self._route_of(obs, step_types)
        if t == 1 and step_types.field is not None:
            # Step 1 of an episode writes them, whatever the last step before.
            record["dtypes"] = step_types.field
        if self._frames is not None and self._framed(record, done):
            line = self._frames.encode(record) + b"\n"
        else:
            line = self._line(record, self._route)
        self._append_step(line, t, done)
        lean = self._may_be_lean and step_types.lean and self._route == _FAST
        lean_key: Any = step_types.key if lean else _IN_FULL
        self._lean_key = lean_key
        self._plain_first = lean_key is _IN_FULL or lean_key[3] is _PLAIN_INFO

    def _append_step(self, line: bytes, t: int, done: bool) -> None:
        """Buffer the line of step ``t`` (a digest, where full_every says so); write at the end."""
        __tracebackhide__ = True
        if self.full_every is not None and t % self.full_every and t != 1 and not done:
            line = digest_record(t, line[:-1]) + b"\n"
        buffer = self._buffer
        buffer += line
        if done or t >= self._write_at or len(buffer) >= _WRITE_SIZE:
            self.write_buffer()

    def _line(self, record: dict[str, Any], route: int) -> bytes:
        """The line of a record by its route (see _route_of), with its newline.

        Encoder.encode, without its look for a large obs, which the route
        holds: orjson's line, unless it may be lossy (a ``null`` that may
        stand for NaN, a ``$`` key, a line long enough to hold a large array).
        """
        __tracebackhide__ = True
        if route:  # an image, or a datetime64
            encode = self._encode_large_obs if route == _LARGE_OBS else self._careful
            return encode(record) + b"\n"
        try:
            line = _DUMPS(record, option=self._options)
        except orjson.JSONEncodeError:
            return self._careful(record) + b"\n"
        # Any "$" (not only '"$') is a false alarm at worst: the careful path
        # gives the same bytes.
        if line.rpartition(b"null")[1] or line.partition(b"$")[1] or len(line) > self._fast_limit:
            return self._careful(record) + b"\n"
        return line

    def reset_record(self, fields: dict[str, Any]) -> None:
        """Record the reset that begins the episode, of fields another recorder built.

        The multi-agent recorders' (:mod:`gym_goldens.record.multiagent`):
        ``fields`` holds every field but ``event`` and ``episode``.
        """
        record = {"event": "reset", "episode": self.episode_count - 1, **fields}
        self._add(self._encoder.encode(record) + b"\n")

    def step_record(self, fields: dict[str, Any], *, done: bool, retyped: bool = True) -> bool:
        """Record one step of fields another recorder built; an episode that ends is written.

        The multi-agent recorders' (:mod:`gym_goldens.record.multiagent`):
        ``fields`` holds every field but ``event`` and ``t``, its ``dtypes``
        included where they are written; ``done`` (no agent is left) ends the
        episode as ``terminated or truncated`` does in :meth:`step`;
        ``retyped`` says that the numpy types may differ from the step
        before's, so that ``obs`` is looked through for large arrays again.

        Returns:
            Whether the storage and the route of this step's types let a
            step of the same types take :meth:`lean_step_record`.
        """
        self._t = t = self._t + 1
        record = {"event": "step", "t": t, **fields}
        if retyped or t == 1:
            self._route = _LARGE_OBS if _large_obs(fields["obs"], self._smallest_array) else _FAST
        line = self._line(record, self._route)
        self._append_step(line, t, done)
        return self._may_be_lean and self._route == _FAST

    # Positional, as a PettingZoo parallel step returns them: keywords cost time at every step.
    def lean_step_record(  # noqa: PLR0917
        self, action: Any, obs: Any, reward: Any, terminated: Any, truncated: Any, info: Any
    ) -> None:
        """Record a multi-agent step that :meth:`step_record` would record as it is, at less cost.

        The lean path of the multi-agent recorders, for a step whose agents
        and numpy types they found to be those of a step :meth:`step_record`
        said may be followed so (see its return value): no ``agents`` or
        ``dtypes`` field to write, an episode that goes on, and the route of
        those types. The line is step_record's (:meth:`_line`): orjson's,
        unless the search for ``null`` and ``$`` sends it to the careful path.
        """
        self._t = t = self._t + 1
        record = {
            "event": "step",
            "t": t,
            "action": action,
            "obs": obs,
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "info": info,
        }
        # _line's fast route, inlined: a call costs as much as a search.
        try:
            line = _DUMPS(record, option=self._options)
        except orjson.JSONEncodeError:
            line = self._careful(record) + b"\n"
        else:
            if (
                line.rpartition(b"null")[1]
                or line.partition(b"$")[1]
                or len(line) > self._fast_limit
            ):
                line = self._careful(record) + b"\n"
        buffer = self._buffer
        buffer += line
        if len(buffer) >= _WRITE_SIZE:
            self.write_buffer()

    def _route_of(self, obs: Any, step_types: StepTypes) -> int:
        """How the steps of these types are encoded.

        The careful path for what orjson must not write itself (a datetime64,
        a value of the other byte order: see dtypes.needs_careful_path); an
        image would be written in full only to be summarised.
        """
        if step_types.careful:
            return _CAREFUL
        return _LARGE_OBS if _large_obs(obs, self._smallest_array) else _FAST

    def render(self, frame: Any) -> None:
        """Record ``frame``, of ``env.render()``, in the field ``render`` of the next record."""
        self._render = frame

    def _framed(self, record: dict[str, Any], done: bool) -> bool:
        """Whether the step record holds frames, which are replaced by their references."""
        assert self._frames is not None
        if self._render is not _NO_RENDER:
            record["render"], self._render = self._render, _NO_RENDER
        t = self._t
        # A step kept as a digest only (full_every) gets references, but no files.
        written = self.full_every is None or not t % self.full_every or t == 1 or done
        return self._frames.replace(record, self.episode_count - 1, t, write=written)

    @property
    def t(self) -> int:
        """The last step recorded in the episode (0 at its reset)."""
        return self._t

    @property
    def buffered(self) -> int:
        """The lines that wait in memory, not yet handed to the operating system."""
        return self._buffer.count(b"\n")

    def write_buffer(self) -> None:
        """Write what is buffered; recording goes on.

        Raises:
            UnrecordableValueError: A line is longer than a reader accepts
                (16 MiB); the lines before it are written, not it.
            OSError: A frame could not be written (:meth:`FrameFiles.settle`);
                the lines buffered are dropped and the episode ends.
        """
        __tracebackhide__ = True
        self._write_at = self._t + self._flush_limit
        if self._buffer:
            if self._frames is not None:
                # No line reaches the file before its frames, nor without their digests.
                try:
                    self._frames.settle(self._buffer)
                except BaseException:
                    # Frames missing: their lines are dropped, and with them the episode.
                    self._buffer = bytearray()
                    self.active = False
                    raise
            data, self._buffer = self._buffer, bytearray()
            # Only a buffer past the limit can hold a line past it: checked then alone.
            long_line = _long_line(data) if len(data) > MAX_LINE_BYTES else None
            if long_line is not None:
                start, end = long_line
                self._file.write(data[:start])
                raise UnrecordableValueError(_too_long(bytes(data[start:end])))
            self._file.write(data)

    def end(self) -> None:
        """Write what is buffered and close the file; the next episode needs a begin."""
        __tracebackhide__ = True
        self.active = False
        try:
            self.write_buffer()
        finally:
            try:
                self._file.close()
            finally:
                if self._frames is not None:
                    self._frames.stop()
