"""Frames of a recording, written as PNG files beside it while the env steps on.

A recorder that keeps frames (``render=True``, ``images="frames"``) hands each
record to :class:`FrameFiles` before it is encoded. Every image-like array
(the rule of :func:`~gym_goldens.format.frames.is_image_like`) of ``render``,
and with ``images="frames"`` of ``obs`` and ``info`` too, at any depth of
their dicts, lists and tuples, is replaced by its reference
(:class:`~gym_goldens.format.frames.FrameRef`): the file, named by episode,
step and field, the digest of its pixels and its shape. The pixels go to this
process's encoder process (:mod:`gym_goldens.record.encoder`; on Linux) or a
worker thread of the recording (elsewhere), which works out the digest,
encodes the PNG (:func:`~gym_goldens.format.frames.encode_png`) and writes it
in the recording's ``frames`` folder. Meanwhile the line holds a placeholder
of the digest, of its length.

The episode writer settles its lines before it writes them
(:meth:`FrameFiles.settle`): it waits for their frames and puts the digests
in. So a line never reaches its file before the frames it refers to, and a
completed episode's frames are on disk before the next episode starts, as its
lines are. An error writing a frame (a full disk) is raised there, in the
env's thread. A step kept as a digest only (``full_every``) gets references,
with their digests worked out at once, which the step's digest covers, but no files.
"""

from __future__ import annotations

import os
import queue
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import orjson

from gym_goldens.format.codec import Encoder
from gym_goldens.format.fields import FieldPath, format_path
from gym_goldens.format.frames import (
    FRAME_TAG,
    FRAMES_DIR,
    FrameRef,
    encode_png,
    format_shape,
    frame_digest,
    frame_filename,
    is_image_like,
)

if TYPE_CHECKING:
    from gym_goldens.record.encoder import FrameEncoder

__all__ = ["IMAGES", "FrameFiles", "check_images", "image_like_or_error"]

IMAGES: Final = ("summary", "frames")
"""How image-like arrays of ``obs`` and ``info`` are kept: array summaries, or frames."""

PENDING_DIGEST: Final = "pending"
"""How the placeholder of a digest still to come starts: not hex, so no reader takes it for one."""
_DIGEST_LENGTH: Final = 32
# What comes before a reference's digest in a line (its keys sorted).
_DIGEST_KEY: Final = b'{"$frame":{"digest":"'
# The writes a worker may lag behind before the env waits: bounds the memory
# of frames queued (a few MB of Pong frames) on a machine slower to encode than to step.
_MAX_QUEUED: Final = 64
_OPTIONS: Final = orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY
_PLAIN: Final = frozenset({int, float, bool, str, type(None), np.int64, np.float64, np.float32})


def check_images(images: object) -> str:
    """``images``, checked: ``"summary"`` or ``"frames"``.

    Raises:
        ValueError: Another value.
    """
    if images not in IMAGES:
        raise ValueError(
            f'images must be "summary" (image-like arrays of obs and info kept as summaries) or '
            f'"frames" (kept as PNG files), got {images!r}'
        )
    return str(images)


def image_like_or_error(frame: object, env: object) -> np.ndarray[Any, Any]:
    """What ``env.render()`` returned, checked to be one image-like frame.

    Raises:
        TypeError: Not an image-like array (None, a list of frames, a float image).
    """
    if isinstance(frame, np.ndarray) and is_image_like(frame):
        return frame
    found = (
        f"an array of dtype {frame.dtype} and shape {format_shape(frame.shape) or '()'}"
        if isinstance(frame, np.ndarray)
        else f"{type(frame).__name__} {frame!r:.60}"
    )
    raise TypeError(
        f"render: {type(env).__name__}.render() returned {found}; frames are uint8 arrays "
        '(H x W, or H x W x 1, 3 or 4), which render_mode="rgb_array" gives'
    )


class FrameFiles:
    """The frames of one recording folder: references in the lines, PNG files beside them.

    A frame to be written gets a reference whose digest is a placeholder
    (:data:`PENDING_DIGEST` and a number, as long as a digest): the encoder
    works the digest out beside the env, and :meth:`settle` puts it in the
    lines before they are written. A frame kept as a digest only gets its
    digest at once.

    Args:
        folder: The recording's folder; frames go in its ``frames`` folder.
        encoder: The recording's encoder, for records that hold references.
        images: Whether image-like arrays of ``obs`` and ``info`` are stored
            as frames too (``images="frames"``); ``render`` always is.
    """

    __slots__ = (
        "_changed",
        "_changed_bytes",
        "_encoder",
        "_fields",
        "_folder",
        "_pending",
        "_sent",
        "_sink",
        "folder",
        "images",
    )

    def __init__(self, folder: Path, encoder: Encoder, *, images: bool) -> None:
        self.folder = folder
        self.images = images
        self._encoder = encoder
        self._sink: _ProcessSink | _ThreadSink | None = None  # made by the first frame written
        self._pending: list[bytes] = []  # the placeholders of the frames handed over, in order
        self._folder = os.fsencode(folder) + os.sep.encode()
        self._fields: dict[FieldPath, str] = {}  # each field's path, written as text
        self._sent = 0
        self._changed = 0
        self._changed_bytes = 0

    def replace(self, record: dict[str, Any], episode: int, step: int, *, write: bool) -> bool:
        """Replace the frames of ``record`` by their references; whether it held any.

        Args:
            record: The record about to be encoded; its ``obs``, ``info`` and
                ``render`` are replaced, never changed in place.
            episode: The episode's index.
            step: The step, 0 for the reset.
            write: Whether the frames are written (not for a step kept as a
                digest only).
        """
        self._changed = self._changed_bytes = 0
        for field in ("render", "obs", "info") if self.images else ("render",):
            if field in record:
                record[field] = self._refs(record[field], (field,), episode, step, write)
        return self._changed > 0

    def _refs(self, value: Any, path: FieldPath, episode: int, step: int, write: bool) -> Any:
        """``value`` with its frames replaced by their references (itself when it has none)."""
        kind = type(value)
        if kind is np.ndarray:
            if is_image_like(value):
                return self._reference(value, path, episode, step, write)
            return value
        if isinstance(value, dict):
            replaced: dict[Any, Any] | None = None
            for key, item in value.items():
                if type(item) in _PLAIN:  # no frame in it: the info of most envs, at every step
                    continue
                new = self._refs(item, (*path, str(key)), episode, step, write)
                if new is not item:
                    replaced = replaced if replaced is not None else dict(value)
                    replaced[key] = new
            return value if replaced is None else replaced
        if kind is list or kind is tuple:
            items = [
                self._refs(item, (*path, index), episode, step, write)
                for index, item in enumerate(value)
            ]
            if any(new is not old for new, old in zip(items, value, strict=True)):
                return items
        return value

    def _reference(
        self, frame: np.ndarray[Any, Any], path: FieldPath, episode: int, step: int, write: bool
    ) -> orjson.Fragment:
        field = self._fields.get(path)
        if field is None:
            field = self._fields[path] = format_path(path)
        if write:
            self._sent += 1
            placeholder = f"{PENDING_DIGEST}{self._sent:0{_DIGEST_LENGTH - len(PENDING_DIGEST)}d}"
            ref = FrameRef(frame_filename(episode, step, field), placeholder, tuple(frame.shape))
            self._submit(ref.file, frame)
            self._pending.append(_DIGEST_KEY + placeholder.encode())
        else:
            ref = FrameRef.of(frame, episode=episode, step=step, field=field)
        encoded = orjson.dumps({FRAME_TAG: ref.to_json()}, option=_OPTIONS)
        self._changed += 1
        self._changed_bytes += len(encoded)
        return orjson.Fragment(encoded)

    def encode(self, record: dict[str, Any]) -> bytes:
        """The JSON line of a record whose frames :meth:`replace` replaced.

        The encoder's fast path, which a ``$`` sends to the careful one: here
        the references' own ``$`` are counted, so that only a record that
        holds another goes the careful way (or one with a ``null``, or long
        enough to hold a large array).
        """
        encoder = self._encoder
        try:
            line = orjson.dumps(record, option=encoder.dumps_options)
        except orjson.JSONEncodeError:
            return encoder.encode_careful(record)
        if (
            line.count(b"$") != self._changed
            or line.partition(b"null")[1]
            or len(line) - self._changed_bytes > encoder.fast_limit
        ):
            return encoder.encode_careful(record)
        return line

    def _submit(self, file: str, frame: np.ndarray[Any, Any]) -> None:
        """Hand over ``frame``, to be written at ``file`` of the recording's folder."""
        if self._sink is not None and not self._pending and not self._sink.alive:
            # Its encoder ended (another recording found out) owing this one nothing.
            self.stop()
        if self._sink is None:
            folder = self.folder / FRAMES_DIR
            if folder.is_symlink():  # its files would be written wherever it leads
                from gym_goldens.format.paths import symlink_error  # the readers' module: rare here

                raise symlink_error(folder, within="a recording's folder")
            folder.mkdir(parents=True, exist_ok=True)
            self._sink = _ProcessSink.started() or _ThreadSink()
        # A path of bytes, joined by hand: a Path's join costs more than the rest of the hand-over.
        self._sink.submit(self._folder + os.fsencode(file), frame)

    def settle(self, lines: bytearray) -> None:
        """Wait for the frames handed over, then put their digests in ``lines``, in place.

        ``lines`` holds the lines of those frames not yet written, in order (a
        line left out, that could not be recorded, has its placeholders
        left out with it).

        Raises:
            OSError: A frame could not be written (its file named).
            RuntimeError: A frame could not be encoded, or the encoder process ended.
                Either way, the next frame goes to a sink of its own.
        """
        if self._sink is None or not self._pending:
            return
        pending, self._pending = self._pending, []
        try:
            digests = self._sink.wait()
        except Exception:
            self.stop()  # the next frame gets a sink afresh (an encoder, if this one ended)
            raise
        # A line's frames were handed over in the order render, obs, info, and
        # its keys are sorted: each is looked for from the start of the line
        # of the one before (lines come in order).
        line_start = 0
        for placeholder, digest in zip(pending, digests, strict=True):
            found = lines.find(placeholder, line_start)
            if found >= 0:
                line_start = lines.rfind(b"\n", 0, found) + 1
                at = found + len(_DIGEST_KEY)
                lines[at : at + len(digest)] = digest.encode()

    def stop(self) -> None:
        """Wait for the frames handed over; a thread of this recording's ends."""
        sink, self._sink = self._sink, None
        if sink is not None:
            sink.stop()


class _ProcessSink:
    """A recording's frames in this process's encoder (:mod:`gym_goldens.record.encoder`)."""

    __slots__ = ("_encoder", "_recording")

    def __init__(self, encoder: FrameEncoder) -> None:
        self._encoder = encoder
        self._recording = encoder.recording()

    @classmethod
    def started(cls) -> _ProcessSink | None:
        """The sink, its encoder started if need be; None where there is none or it cannot start."""
        # Imported here: a recording that keeps no frames never loads it.
        from gym_goldens.record.encoder import frame_encoder

        try:
            encoder = frame_encoder()
        except OSError:  # no process or shared memory to be had: the thread does it
            return None
        return cls(encoder) if encoder is not None else None

    @property
    def alive(self) -> bool:
        return self._encoder.alive

    def submit(self, path: bytes, frame: np.ndarray[Any, Any]) -> None:
        self._encoder.submit(self._recording, path, frame)

    def wait(self) -> list[str]:
        return self._encoder.wait(self._recording)

    def stop(self) -> None:
        try:
            self.wait()
        finally:
            self._encoder.forget(self._recording)


class _ThreadSink:
    """A recording's frames digested, encoded and written by a worker thread of its own.

    Pillow and zlib release the GIL while they encode, so an env that lets go
    of it (CartPole's pygame render does; ALE does not) steps on meanwhile.
    """

    __slots__ = ("_digests", "_error", "_lock", "_pending", "_queue", "_thread")

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[bytes, np.ndarray[Any, Any]] | None] = queue.Queue(
            _MAX_QUEUED
        )
        self._lock = threading.Condition()
        self._pending = 0
        self._digests: list[str] = []
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._work, name="gym-goldens-frames", daemon=True)
        self._thread.start()

    @property
    def alive(self) -> bool:
        return True

    def submit(self, path: bytes, frame: np.ndarray[Any, Any]) -> None:
        with self._lock:
            self._pending += 1
        self._queue.put((path, frame.copy()))  # the env may reuse its array

    def _work(self) -> None:
        # Imported here: a recording that keeps no frames need not load the encoder module.
        from gym_goldens.record.encoder import write_frame_file

        while (item := self._queue.get()) is not None:
            path, frame = item
            try:
                if self._error is None:
                    digest = frame_digest(frame)
                    write_frame_file(path, encode_png(frame))
                    self._digests.append(digest)
            except BaseException as error:  # raised in the env's thread, by wait()
                with self._lock:
                    if self._error is None:
                        self._error = error
            finally:
                with self._lock:
                    self._pending -= 1
                    if not self._pending:
                        self._lock.notify_all()

    def wait(self) -> list[str]:
        """The digests of the frames handed over since the last wait, once all are written."""
        with self._lock:
            while self._pending:
                self._lock.wait()
            error, self._error = self._error, None
            digests, self._digests = self._digests, []
        if error is not None:
            raise error
        return digests

    def stop(self) -> None:
        try:
            self.wait()
        finally:
            self._queue.put(None)
            self._thread.join()
