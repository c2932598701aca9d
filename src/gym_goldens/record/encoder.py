"""Frames encoded and written by a process of their own, shared by this process's recordings.

A recorder that keeps frames hands each one to this process's
:class:`FrameEncoder` (:func:`frame_encoder`). The frame's pixels are copied
into a ring of shared memory, and a request naming their place and the file
goes through a socket to a Python process of its own, started on the first
frame and kept until this one exits. That process works out the frame's
digest (:func:`~gym_goldens.format.frames.frame_digest`), encodes its PNG
(:func:`~gym_goldens.format.frames.encode_png`), writes the file, and replies
with the digest; the recorder puts the digests in its lines before it writes
them (:meth:`FrameEncoder.wait`).

Why a process, not a thread: an env that holds the interpreter lock through
its step (ALE's Atari envs do) leaves a thread no time to run beside it; the
two take turns, several times a frame (docs/performance.md, "Frames"). A
process encodes on a core of its own, whatever the env holds. Why shared
memory: a frame written into a pipe costs the env's thread as much as the
encoding saved (a CartPole render is 720 kB); a copy into memory the encoder
reads costs a tenth of that.

Linux only (an anonymous memory file, ``os.memfd_create``, passed to the
process), and only where ``sys.executable`` can start a Python: elsewhere
:func:`frame_encoder` gives None and the recorder's own worker thread
encodes. A frame too large for the ring goes through the socket.

Errors: one writing a frame (a full disk, a folder in its place) comes back
with it and is raised by :meth:`FrameEncoder.wait`, in the recorder's thread;
an encoder process that ended (killed) fails every recording still waiting on
it, and the next frame starts another; so does an exception raised midway
through a request or a reply (a Ctrl-C, a test's timeout), which kills it, the
stream being cut. A process forked from this one starts its own; a recording
begun before the fork fails in it, with the reason.

The protocol. A request is :data:`_REQUEST`: the recording's number, the
frame's place in the ring (:data:`_INLINE` when its pixels follow the
request), its height, width and channels (0 for a gray ``H x W`` frame) and
the length of the file's path, which follows (its bytes, as ``os.fsencode``
gives them). A reply is :data:`_REPLY`: the recording's number, 0 when the
file is written (the frame's digest follows, 32 hex digits), else an
``errno`` or -1 for an error of no ``errno`` (its text follows), and the
length of what follows. Both go in batches: requests once their frames hold
:data:`_BATCH_BYTES`, replies by :data:`_REPLY_BATCH` and
:data:`_REPLY_BATCH_BYTES`; and each side sends what it holds before it
waits for the other, so neither waits for what the other still holds.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import errno
import mmap
import os
import select
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Final

import numpy as np

from gym_goldens.format.frames import encode_png, frame_digest
from gym_goldens.record.fresh import StreamTail

__all__ = [
    "EncoderEndedError",
    "FrameEncoder",
    "RingPlaces",
    "frame_encoder",
    "running_frame_encoder",
    "serve",
    "write_frame_file",
]

_REQUEST: Final = struct.Struct("<QqIIII")
_REPLY: Final = struct.Struct("<QiI")
_WRITTEN: Final = 0
_NO_ERRNO: Final = -1
_INLINE: Final = -1
# The shared ring's bytes: 160 Pong frames, 23 CartPole renders; a frame past
# half of it goes through the socket. An anonymous memory file, not one in
# /dev/shm, so /dev/shm's size (64 MiB in a Docker container) is no limit.
_RING_SIZE: Final = 16 << 20
# The frames sent and not yet replied to, across recordings: bounds the
# replies the encoder may have to send (a few KiB, far under a socket's
# buffer, so it never waits to reply while this process waits to send).
_MAX_IN_FLIGHT: Final = 256
# Requests are sent once their frames hold this many bytes (a few Pong
# frames; fewer wake-ups of the encoder, while it never waits long for work),
# and always before this process waits for a reply.
_BATCH_BYTES: Final = 256 << 10
# How long this process, at its exit, lets the encoder finish the frames sent,
# then kills it. Briefly: a recorder writes a line only once its frames are
# written, so the frames still with the encoder at exit belong to lines no
# recorder will write; finishing them spares half-written files, nothing more.
_EXIT_WAIT: Final = 2.0
# The encoder's replies are sent in batches of this many frames', and always
# before it waits for requests: a write, and a read of this process's, a
# batch, not a frame (they were two-fifths of the env thread's cost of a Pong
# frame: docs/performance.md, "Frames").
_REPLY_BATCH: Final = 8
# ... or once the frames replied to hold an eighth of the ring: a frame of
# several MiB is replied to at once, its room in the ring free for the next.
_REPLY_BATCH_BYTES: Final = _RING_SIZE // 8
_READ_SIZE: Final = 1 << 16
# A reply's text: a path not in UTF-8 (a folder named in Latin-1) is carried
# byte for byte, as os.fsdecode gives it, not an error of the encoder's.
_TEXT: Final = ("utf-8", "surrogateescape")
_NEW_FILE: Final = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
_NO_FOLLOW: Final = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


class EncoderEndedError(RuntimeError):
    """The encoder process ended (killed) with frames sent to it: they are missing."""


class _Shared:
    """This process's encoder, once started (see :func:`frame_encoder`)."""

    encoder: FrameEncoder | None = None
    lock = threading.Lock()


def frame_encoder() -> FrameEncoder | None:
    """This process's encoder: the running one, else a new one; None where none can run.

    None off Linux, and where ``sys.executable`` is no Python to start: a
    frozen application's (the application itself), or none (an embedding one).

    Raises:
        OSError: The encoder process or its shared memory could not be made.
    """
    if not hasattr(os, "memfd_create") or not sys.executable or getattr(sys, "frozen", False):
        return None
    with _Shared.lock:
        if _Shared.encoder is None or not _Shared.encoder.alive:
            _Shared.encoder = FrameEncoder()
        return _Shared.encoder


def running_frame_encoder() -> FrameEncoder | None:
    """This process's encoder if one runs; none is started."""
    encoder = _Shared.encoder
    return encoder if encoder is not None and encoder.alive else None


def _forget_in_child() -> None:
    """In a forked child: the parent's encoder is the parent's (its socket closed here)."""
    # A thread of the parent may have held the lock (starting the encoder): the child's is free.
    _Shared.lock = threading.Lock()
    if _Shared.encoder is not None:
        _Shared.encoder.abandon()
        # A recording begun before the fork holds it still: its next frame says why it fails.
        _Shared.encoder._ended = (
            f"the frame encoder process (pid {_Shared.encoder.pid}) is that of the process "
            f"this one was forked from (pid {os.getppid()}), where the recording began; a "
            "forked process records its frames in recordings begun in it"
        )
    _Shared.encoder = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


class RingPlaces:
    """Where frames go in a ring of bytes, freed in the order they were placed.

    Each frame takes one stretch of the ring; a stretch never wraps, so a
    frame that does not fit before the end goes at the start, once the frames
    there are freed.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._stretches: collections.deque[tuple[int, int]] = collections.deque()
        self._wrapped = False  # whether the newest stretches start again at 0

    def place(self, length: int) -> int | None:
        """Where a frame of ``length`` bytes goes, now taken; None until enough is freed."""
        if not self._stretches:
            start = 0 if length <= self.size else None
        else:
            first, end = self._stretches[0][0], self._stretches[-1][1]
            if self._wrapped:
                start = end if end + length <= first else None
            elif end + length <= self.size:
                start = end
            elif length <= first:
                start, self._wrapped = 0, True
            else:
                start = None
        if start is not None:
            self._stretches.append((start, start + length))
        return start

    def free_oldest(self) -> None:
        """Free the oldest stretch taken."""
        start, _ = self._stretches.popleft()
        if not self._stretches or (self._wrapped and self._stretches[0][0] < start):
            self._wrapped = False


class _Pending:
    """The frames of one recording sent since its last wait: their digests as they come."""

    __slots__ = ("digests", "failure", "replied", "sent")

    def __init__(self) -> None:
        self.sent = 0
        self.replied = 0
        self.digests: list[str] = []
        self.failure: BaseException | None = None


class FrameEncoder:
    """A process that digests, encodes and writes frames for any recording of this one.

    Thread-safe: recorders in several threads share it. Each recording is a
    number of its own (:meth:`recording`); its frames' digests are kept for
    its :meth:`wait`, in the order they were sent.
    """

    def __init__(self) -> None:
        self._ring_file = os.memfd_create("gym-goldens-frames", getattr(os, "MFD_CLOEXEC", 0))
        try:
            # Its pages allocated now: a machine short of memory refuses the ring
            # here (and the thread encodes), where writing a page later would be a bus error.
            os.posix_fallocate(self._ring_file, 0, _RING_SIZE)
            self._ring = mmap.mmap(self._ring_file, _RING_SIZE)
            self._socket, theirs = socket.socketpair()
        except BaseException:
            os.close(self._ring_file)
            raise
        descriptors = (theirs.fileno(), self._ring_file)
        with theirs:
            self._process = subprocess.Popen(
                [sys.executable, "-c", _SERVE, _PACKAGE_ROOT, *map(str, descriptors)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=descriptors,
                # A session of its own: a Ctrl-C in the terminal is for this
                # process, which then ends the encoder's input, not for the encoder.
                start_new_session=True,
            )
        assert self._process.stderr is not None
        self._errors = StreamTail(self._process.stderr)
        self._owner = os.getpid()
        self._lock = threading.RLock()
        self._places = RingPlaces(_RING_SIZE)
        self._ring_bytes = np.frombuffer(self._ring, np.uint8)
        self._in_flight: collections.deque[tuple[int, bool]] = collections.deque()
        self._unsent = bytearray()
        self._unsent_bytes = 0  # the frames' of the requests held back
        self._replies = bytearray()
        self._recordings: dict[int, _Pending] = {}
        self._numbers = 0
        self._ended: str | None = None
        atexit.register(self.close)

    @property
    def pid(self) -> int:
        """The encoder process's id."""
        return self._process.pid

    @property
    def alive(self) -> bool:
        """Whether it can take frames: running, and this process's own."""
        return self._ended is None and self._owner == os.getpid() and self._process.poll() is None

    def recording(self) -> int:
        """A number for a new recording's frames."""
        with self._lock:
            self._numbers += 1
            self._recordings[self._numbers] = _Pending()
            return self._numbers

    def submit(self, recording: int, path: bytes, frame: np.ndarray[Any, Any]) -> None:
        """Send ``frame`` to be written at ``path``, a file it creates; the env may reuse its array.

        Raises:
            EncoderEndedError: The encoder process ended (the next frame starts another).
        """
        with self._lock:
            try:
                self._submit(recording, path, frame)
            except EncoderEndedError:
                raise
            except BaseException:
                self._cut()
                raise

    def _submit(self, recording: int, path: bytes, frame: np.ndarray[Any, Any]) -> None:
        self._raise_if_ended()
        while len(self._in_flight) >= _MAX_IN_FLIGHT:
            self._read_replies()
        start = self._place(frame.nbytes)
        height, width = frame.shape[:2]
        channels = frame.shape[2] if frame.ndim == 3 else 0
        head = _REQUEST.pack(recording, start, height, width, channels, len(path))
        self._recordings[recording].sent += 1
        self._in_flight.append((recording, start != _INLINE))
        if start == _INLINE:
            self._send(head + path)
            self._send(np.ascontiguousarray(frame).data.cast("B"))
            return
        self._ring_bytes[start : start + frame.nbytes].reshape(frame.shape)[...] = frame
        self._unsent += head + path
        self._unsent_bytes += frame.nbytes
        if self._unsent_bytes >= _BATCH_BYTES:
            self._send()

    def _place(self, length: int) -> int:
        """Where the next frame goes in the ring, once there is room; :data:`_INLINE` if too big."""
        if length > _RING_SIZE // 2:
            return _INLINE
        while (start := self._places.place(length)) is None:
            self._read_replies()
        return start

    def _send(self, data: bytes | memoryview = b"") -> None:
        """Send the requests held back, then ``data``; an encoder that ended raises."""
        try:
            if self._unsent:
                unsent, self._unsent, self._unsent_bytes = self._unsent, bytearray(), 0
                self._send_all(unsent)
            if data:
                self._send_all(data)
        except OSError:  # the encoder ended
            self._end()

    def _send_all(self, data: bytes | bytearray | memoryview) -> None:
        """Send ``data``, taking in the encoder's replies whenever the socket is full.

        The encoder sends its replies before it reads more requests, and an
        error's reply names its file: replies can fill their way of the
        socket while requests fill this one. Waiting only to send, this
        process would wait for ever on an encoder that waits to reply.
        """
        view = memoryview(data).cast("B")
        while view:
            try:
                view = view[self._socket.send(view, socket.MSG_DONTWAIT) :]
            except BlockingIOError:
                # poll, not select: past 1,024 files open, descriptors are past select's.
                poll = select.poll()
                poll.register(self._socket, select.POLLIN | select.POLLOUT)
                if any(events & select.POLLIN for _, events in poll.poll()):
                    chunk = self._socket.recv(_READ_SIZE)
                    if not chunk:
                        raise BrokenPipeError(
                            errno.EPIPE, "the encoder closed its socket"
                        ) from None
                    self._replies += chunk

    def wait(self, recording: int) -> list[str]:
        """The digests of ``recording``'s frames sent since the last wait, once all are written.

        Raises:
            OSError: A frame could not be written (its file named).
            RuntimeError: A frame could not be encoded, or the encoder process ended.
        """
        with self._lock:
            pending = self._recordings[recording]
            try:
                while pending.replied < pending.sent:
                    self._read_replies()
            except EncoderEndedError:
                pass  # then the failure is pending's own
            except BaseException:
                self._cut()
                raise
            digests, failure = pending.digests, pending.failure
            self._recordings[recording] = _Pending()
        if failure is not None:
            raise failure
        return digests

    def forget(self, recording: int) -> None:
        """Drop ``recording``'s count once it is done (its frames waited for)."""
        with self._lock:
            self._recordings.pop(recording, None)

    def _read_replies(self) -> None:
        """Take in the encoder's replies, waiting for one if none has come; count them.

        Every whole reply taken in is counted, not only the first: the
        encoder replies in batches (see :data:`_REPLY_BATCH`).
        """
        replies = self._replies
        while not _reply_length(replies):
            # Nothing taken in yet: what is held back goes first, or both would wait.
            self._send()
            self._receive()
        taken = 0
        while length := _reply_length(replies, taken):
            recording, code, _ = _REPLY.unpack_from(replies, taken)
            text = replies[taken + _REPLY.size : taken + length].decode(*_TEXT)
            taken += length
            self._count(recording, code, text)
        del replies[:taken]

    def _count(self, recording: int, code: int, text: str) -> None:
        """Count a reply: its frame's place in the ring freed, its digest or error kept."""
        _, in_ring = self._in_flight.popleft()
        if in_ring:
            self._places.free_oldest()
        pending = self._recordings.get(recording)
        if pending is None:
            return
        pending.replied += 1
        if code == _WRITTEN:
            pending.digests.append(text)
        elif pending.failure is None:
            pending.failure = _failure(code, text)

    def _receive(self) -> None:
        """Take in what the encoder sent; its end raises."""
        try:
            chunk = self._socket.recv(_READ_SIZE)
        except OSError:
            chunk = b""
        if not chunk:
            self._end()
        self._replies += chunk

    def _cut(self) -> None:
        """This process stopped midway talking to the encoder (a Ctrl-C, a test's timeout).

        An exception raised in this thread in the middle of a request or a
        reply (pytest-timeout's, say) leaves the socket's stream cut within
        a message and the ring's places out of step: the encoder is killed,
        and the next frame starts another.
        """
        if self._ended is None:
            self._process.kill()
            with contextlib.suppress(EncoderEndedError):
                self._end("was killed when this process stopped midway talking to it")

    def _end(self, how: str = "") -> None:
        """The encoder ended: every recording waiting on it fails with the reason, once.

        Raises:
            EncoderEndedError: Always: the reason.
        """
        with contextlib.suppress(OSError):
            self._socket.close()
        if self._ended is None:  # else the reason is known (the parent's, in a forked child)
            code = self._process.wait()
            output = self._errors.text().strip()
            self._ended = (
                f"the frame encoder process (pid {self.pid}) "
                f"{how or f'ended with exit code {code}'} before writing every frame sent; "
                "those frames are missing"
                + (f"; its last output:\n{output[-2000:]}" if output else "")
            )
        for pending in self._recordings.values():
            if pending.replied < pending.sent:
                pending.replied = pending.sent
                pending.failure = pending.failure or EncoderEndedError(self._ended)
        self._in_flight.clear()
        # Its ring and descriptors go now, not at this process's exit: each
        # encoder that ends (and is followed by another) would keep its own.
        self.abandon()
        atexit.unregister(self.close)
        self._raise_if_ended()

    def _raise_if_ended(self) -> None:
        if self._ended is not None:
            raise EncoderEndedError(self._ended)

    def close(self) -> None:
        """Let the encoder write the frames sent and end (at this process's exit)."""
        if self._owner != os.getpid():
            return
        deadline = time.monotonic() + _EXIT_WAIT
        # An encoder that ended unseen (killed) is found out sending: no frame awaits it now.
        with contextlib.suppress(OSError, EncoderEndedError), self._lock:
            self._send()
            self._socket.shutdown(socket.SHUT_WR)
            # Its replies taken in (and dropped) until it ends: left unread, they
            # could fill the socket (errors naming long paths), and the encoder
            # would wait to send them instead of writing the frames after them.
            poll = select.poll()
            poll.register(self._socket, select.POLLIN)
            while poll.poll(_remaining_ms(deadline)) and self._socket.recv(_READ_SIZE):
                pass
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(_remaining_ms(deadline) / 1000)
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self.abandon()

    def abandon(self) -> None:
        """Close this process's ends (in a forked child: the parent's encoder goes on)."""
        with contextlib.suppress(OSError):
            self._socket.close()
        self._ring_bytes = np.empty(0, np.uint8)  # a view of the ring keeps it from closing
        with contextlib.suppress(OSError, ValueError, BufferError):
            self._ring.close()
        # Closed once: a second close could close another file given its number since.
        ring_file, self._ring_file = self._ring_file, -1
        if ring_file >= 0:
            with contextlib.suppress(OSError):
                os.close(ring_file)


# This package's folder, first on the encoder's path while it imports this
# module: the package of this process, wherever it is imported from (a
# checkout's src/ by pytest's pythonpath), and nothing else put first.
_PACKAGE_ROOT: Final = str(Path(__file__).resolve().parents[2])
_SERVE: Final = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from gym_goldens.record.encoder import serve; del sys.path[0]; serve(*sys.argv[2:])"
)


def _remaining_ms(deadline: float) -> int:
    """The milliseconds left until ``deadline`` (of :func:`time.monotonic`), 0 past it."""
    return max(round((deadline - time.monotonic()) * 1000), 0)


def _reply_length(replies: bytearray, start: int = 0) -> int:
    """The length of the whole reply at ``start`` of ``replies``; 0 until it has all come."""
    if len(replies) - start < _REPLY.size:
        return 0
    length: int = _REPLY.size + _REPLY.unpack_from(replies, start)[2]
    return length if len(replies) - start >= length else 0


def _failure(code: int, text: str) -> BaseException:
    """The error a reply tells of: an ``OSError`` of its ``errno`` and file, else a RuntimeError."""
    if code == _NO_ERRNO:
        return RuntimeError(text)
    message, _, file = text.partition("\0")
    return OSError(code, message, file)


def serve(socket_fd: str, ring_fd: str) -> None:
    """The encoder process's loop: requests read, frames digested, encoded, written, replied to.

    It ends at the end of its socket, once the frames asked for are written.
    """
    connection = socket.socket(fileno=int(socket_fd))
    ring = mmap.mmap(int(ring_fd), _RING_SIZE)
    received = bytearray()
    replies = bytearray()
    while True:
        # Replies held back until a batch is made or the requests received are
        # done: a recorder waits for a reply (its room in the ring, its
        # episode's digests) only once it has sent every request it holds.
        # Frames of several MiB end a batch sooner, or a few would hold the ring.
        held = held_bytes = 0
        while (request := _take_request(received, connection, ring)) is not None:
            replies += _handle(*request)
            held += 1
            held_bytes += request[2].nbytes
            if held >= _REPLY_BATCH or held_bytes >= _REPLY_BATCH_BYTES:
                connection.sendall(replies)
                replies.clear()
                held = held_bytes = 0
        if replies:
            connection.sendall(replies)
            replies.clear()
        chunk = connection.recv(_READ_SIZE)
        if not chunk:
            return
        received += chunk


def _take_request(
    received: bytearray, connection: socket.socket, ring: mmap.mmap
) -> tuple[int, bytes, np.ndarray[Any, Any]] | None:
    """The next whole request of ``received``, taken out of it; None until one is whole.

    A frame sent inline is read from the connection to its end here.
    """
    if len(received) < _REQUEST.size:
        return None
    recording, start, height, width, channels, length = _REQUEST.unpack_from(received)
    if len(received) < _REQUEST.size + length:
        return None
    path = bytes(received[_REQUEST.size : _REQUEST.size + length])
    del received[: _REQUEST.size + length]
    shape = (height, width, channels) if channels else (height, width)
    size = height * width * max(channels, 1)
    if start != _INLINE:
        return recording, path, np.frombuffer(ring, np.uint8, size, start).reshape(shape)
    while len(received) < size:
        chunk = connection.recv(max(_READ_SIZE, size - len(received)))
        if not chunk:
            raise SystemExit(0)
        received += chunk
    pixels = np.frombuffer(bytes(received[:size]), np.uint8).reshape(shape)
    del received[:size]
    return recording, path, pixels


def _handle(recording: int, path: bytes, pixels: np.ndarray[Any, Any]) -> bytes:
    """Digest, encode and write one frame; the reply."""
    try:
        digest = frame_digest(pixels)
        write_frame_file(path, encode_png(pixels))
    except OSError as error:
        code = error.errno if error.errno else _NO_ERRNO
        text = f"{error.strerror or error}\0{os.fsdecode(path)}".encode(*_TEXT)
    except Exception as error:  # an error of the encoder's own, told to the recording
        code = _NO_ERRNO
        text = f"the frame {os.fsdecode(path)} could not be encoded: {error!r}".encode(*_TEXT)
    else:
        code, text = _WRITTEN, digest.encode()
    return _REPLY.pack(recording, code, len(text)) + text


def write_frame_file(path: bytes, data: bytes) -> None:
    """Write a frame's file in the recording's folder; a link in its place is not followed.

    The encoder's, and the worker thread's where there is none.

    Raises:
        OSError: It could not be written; the error names the file (as text).
    """
    try:
        descriptor = os.open(path, _NEW_FILE | _NO_FOLLOW, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view) :]
        finally:
            os.close(descriptor)
    except OSError as error:  # a full disk's names no file, a bytes path's a bytes one
        raise OSError(error.errno, error.strerror, os.fsdecode(path)) from None
