"""Frames of a recording, written as PNG files by a worker thread.

A recorder that keeps frames (``render=True``, ``images="frames"``) hands each
record to :class:`FrameFiles` before it is encoded. Every image-like array
(the rule of :func:`~gym_goldens.format.frames.is_image_like`) of ``render``,
and with ``images="frames"`` of ``obs`` and ``info`` too, at any depth of
their dicts, lists and tuples, is replaced by its reference
(:class:`~gym_goldens.format.frames.FrameRef`): the file, named by episode,
step and field, the digest of its pixels and its shape. The digest is worked
out on the env's thread (the line needs it); a copy of the pixels (the env
may reuse its array) is queued for a worker thread, which encodes the PNG
(:func:`~gym_goldens.format.frames.encode_png`) and writes it in the
recording's ``frames`` folder. Pillow and zlib release the GIL while they
encode, so the env steps on while its frames are written.

The episode writer waits for the worker before it writes lines
(:meth:`FrameFiles.wait`): a line never reaches its file before the frames it
refers to, so a completed episode's frames are on disk before the next
episode starts, as its lines are. An error of the worker (a full disk) is
raised by that wait, in the env's thread. A step kept as a digest only
(``full_every``) gets references, which its digest covers, but no files.
"""

from __future__ import annotations

import os
import queue
import threading
from pathlib import Path
from typing import Any, Final

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
    is_image_like,
)

__all__ = ["IMAGES", "FrameFiles", "check_images", "image_like_or_error"]

IMAGES: Final = ("summary", "frames")
"""How image-like arrays of ``obs`` and ``info`` are kept: array summaries, or frames."""

_WORKERS: Final = 1
# The writes a worker may lag behind before the env waits: bounds the memory
# of frames queued (a few MB of Pong frames) on a machine slower to encode than to step.
_MAX_QUEUED: Final = 64
_NEW_FILE: Final = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
_NO_FOLLOW: Final = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
_OPTIONS: Final = orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY


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
        "_error",
        "_lock",
        "_pending",
        "_queue",
        "_threads",
        "folder",
        "images",
    )

    def __init__(self, folder: Path, encoder: Encoder, *, images: bool) -> None:
        self.folder = folder
        self.images = images
        self._encoder = encoder
        self._queue: queue.Queue[tuple[Path, np.ndarray[Any, Any]] | None] = queue.Queue(
            _MAX_QUEUED
        )
        self._threads: list[threading.Thread] = []
        self._lock = threading.Condition()
        self._pending = 0
        self._error: BaseException | None = None
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
        ref = FrameRef.of(frame, episode=episode, step=step, field=format_path(path))
        if write:
            self._submit(self.folder / ref.file, frame.copy())
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

    def _submit(self, path: Path, frame: np.ndarray[Any, Any]) -> None:
        if not self._threads:
            self._start()
        with self._lock:
            self._pending += 1
        self._queue.put((path, frame))

    def _start(self) -> None:
        (self.folder / FRAMES_DIR).mkdir(parents=True, exist_ok=True)
        for number in range(_WORKERS):
            thread = threading.Thread(
                target=self._work, name=f"gym-goldens-frames-{number}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            path, frame = item
            try:
                if self._error is None:
                    _write_png(path, encode_png(frame))
            except BaseException as error:  # raised in the env's thread, by wait()
                with self._lock:
                    if self._error is None:
                        self._error = error
            finally:
                with self._lock:
                    self._pending -= 1
                    if not self._pending:
                        self._lock.notify_all()

    def wait(self) -> None:
        """Return once every frame handed over is written; raise the worker's first error."""
        with self._lock:
            while self._pending:
                self._lock.wait()
            error, self._error = self._error, None
        if error is not None:
            raise error

    def stop(self) -> None:
        """Wait for the frames handed over, then end the worker (a next frame starts it again)."""
        try:
            self.wait()
        finally:
            threads, self._threads = self._threads, []
            for _ in threads:
                self._queue.put(None)
            for thread in threads:
                thread.join()


def _write_png(path: Path, data: bytes) -> None:
    """Write a frame's file in the recording's folder; a link in its place is not followed."""
    descriptor = os.open(path, _NEW_FILE | _NO_FOLLOW, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
    finally:
        os.close(descriptor)
