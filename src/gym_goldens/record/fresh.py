"""Recordings made by a fresh Python process, with another ``PYTHONHASHSEED``.

One process hashes strings one way from start to end, so two recordings made
in it agree on the order of a set of strings however that order depends on
the hash seed; and state an earlier run left in a module is there for the
next. A fresh interpreter with another ``PYTHONHASHSEED`` shows both. Every
check that records in a fresh process starts it here:

- the pytest plugin: the goldens ``--update-goldens`` is about to write,
  re-recorded by one ``python -m pytest`` for the session (per pytest-xdist
  worker), and the runs of ``--goldens-determinism-mode=subprocess``;
- ``gym-goldens audit``: run 3 of every env, by a :class:`FreshWorker` that
  records env after env (one interpreter start for many envs), replaced when
  an env ends it or runs out of time.

Example:
    >>> process = FreshProcess(["-c", "print(hash('a') == hash('a'))"])
    >>> process.wait().output.strip()
    'True'
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, Final

__all__ = [
    "HASH_SEED_RANGE",
    "MAX_OUTPUT_TAIL",
    "Finished",
    "FreshProcess",
    "FreshWorker",
    "StreamTail",
    "file_tail",
    "other_hash_seed",
    "serve",
]

HASH_SEED_RANGE: Final = 2**32
"""``PYTHONHASHSEED`` takes 0 to 2**32 - 1."""

MAX_OUTPUT_TAIL: Final = 64 * 1024
"""The bytes of a fresh process's output kept: its end; the rest is read and dropped."""
_READ_SIZE: Final = 64 * 1024
_STREAM_END_WAIT: Final = 5.0
# Variables that would make a child pytest think it is a pytest-xdist worker,
# or in the middle of the parent's test.
_DROPPED: Final = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_CURRENT_TEST")


def other_hash_seed(offset: int = 1, parent: str | None = None) -> int:
    """A ``PYTHONHASHSEED`` other than this process's.

    Args:
        offset: Which one (1, 2, ...): several fresh processes get several seeds.
        parent: This process's ``PYTHONHASHSEED``; read from the environment
            when None.

    Returns:
        This process's seed plus ``offset`` (modulo 2**32) when it is set to
        a number; else ``offset`` (this process then hashes with a random seed).

    Example:
        >>> other_hash_seed(1, "7"), other_hash_seed(2, ""), other_hash_seed(1, "4294967295")
        (8, 2, 0)
    """
    if parent is None:
        parent = os.environ.get("PYTHONHASHSEED", "")
    if parent.isdigit():
        return (int(parent) + offset) % HASH_SEED_RANGE
    return offset % HASH_SEED_RANGE


@dataclasses.dataclass(frozen=True)
class Finished:
    """A fresh process that ended.

    Attributes:
        returncode: Its exit code.
        output: What it printed (stdout and stderr, or stderr alone).
    """

    returncode: int
    output: str

    def tail(self, count: int) -> list[str]:
        """The last ``count`` lines of its output, with ``...`` first when there were more."""
        lines = self.output.rstrip().splitlines()
        return ["...", *lines[-count:]] if len(lines) > count else lines


class FreshProcess:
    """``python ARGS`` started now, with another ``PYTHONHASHSEED``.

    It starts at once, so that its interpreter's start-up can overlap with
    work done meanwhile. Its output is read as it comes, and only its end is
    kept (:data:`MAX_OUTPUT_TAIL`): an env may write hundreds of MB, or bytes
    that are not UTF-8.

    Args:
        args: The interpreter's arguments (``["-m", "pytest", ...]``).
        offset: Which other hash seed (see :func:`other_hash_seed`).
        cwd: Where it runs.
        stdout: Keep its stdout too (else only stderr, and stdout is dropped).
    """

    def __init__(
        self,
        args: Sequence[str],
        *,
        offset: int = 1,
        cwd: Path | None = None,
        stdout: bool = True,
    ) -> None:
        self.hash_seed = other_hash_seed(offset)
        self._process = subprocess.Popen(
            [sys.executable, *args],
            cwd=cwd,
            env=_environment(self.hash_seed),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if stdout else subprocess.DEVNULL,
            stderr=subprocess.STDOUT if stdout else subprocess.PIPE,
        )
        stream = self._process.stdout if stdout else self._process.stderr
        assert stream is not None
        self._output = StreamTail(stream)

    @property
    def note(self) -> str:
        """How it ran, for messages: ``in a fresh process, PYTHONHASHSEED=8``."""
        return f"in a fresh process, PYTHONHASHSEED={self.hash_seed}"

    def wait(self, timeout: float | None = None) -> Finished:
        """Wait for it to end, ``timeout`` seconds at most.

        Raises:
            subprocess.TimeoutExpired: It did not end in time (it goes on: :meth:`stop` it).
        """
        code = self._process.wait(timeout)
        return Finished(code, self._output.text())

    def stop(self) -> None:
        """End it, unless it ended (nothing is left running when a caller gives up)."""
        if self._process.returncode is None:
            self._process.kill()
            self._process.wait()


def _environment(hash_seed: int) -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if key not in _DROPPED}
    environment["PYTHONHASHSEED"] = str(hash_seed)
    return environment


class FreshWorker:
    """``python ARGS`` started now, with another ``PYTHONHASHSEED``, serving request after request.

    The process runs :func:`serve`: each request (a JSON object) goes to it as
    a line on its stdin, and its reply comes back as a line on its stdout.
    One interpreter start then serves many requests: the audit's run 3 of
    env after env. Its own stderr (what it writes outside a request: an import
    that fails at its start) is read as it comes, its end kept; what it writes
    during a request goes to the request's ``stderr`` file (see :func:`serve`).

    Args:
        args: The interpreter's arguments (``["-c", CODE, ...]``, CODE calling :func:`serve`).
        offset: Which other hash seed (see :func:`other_hash_seed`).
    """

    def __init__(self, args: Sequence[str], *, offset: int = 1) -> None:
        self.hash_seed = other_hash_seed(offset)
        self._process = subprocess.Popen(
            [sys.executable, *args],
            env=_environment(self.hash_seed),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self._process.stderr is not None
        self._errors = StreamTail(self._process.stderr)
        self._replies: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self._process.stdout
        assert stream is not None
        with stream:
            for line in stream:
                self._replies.put(line)
        self._replies.put(None)  # it ended

    @property
    def note(self) -> str:
        """How it runs, for messages: ``in a fresh process, PYTHONHASHSEED=8``."""
        return f"in a fresh process, PYTHONHASHSEED={self.hash_seed}"

    @property
    def alive(self) -> bool:
        """Whether it still runs."""
        return self._process.poll() is None

    def ask(self, request: dict[str, Any]) -> None:
        """Send it a request; its reply comes from :meth:`answer`."""
        stream = self._process.stdin
        assert stream is not None
        try:
            stream.write(json.dumps(request).encode() + b"\n")
            stream.flush()
        except OSError:  # it ended: answer() says so
            pass

    def answer(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The reply to the request sent; None when it ended instead (see :meth:`finished`).

        Raises:
            subprocess.TimeoutExpired: No reply within ``timeout`` seconds (it
                goes on: :meth:`stop` it).
        """
        try:
            line = self._replies.get(timeout=timeout)
        except queue.Empty:
            raise subprocess.TimeoutExpired(self._process.args, timeout or 0.0) from None
        if line is None:
            return None
        reply: dict[str, Any] = json.loads(line)
        return reply

    def finished(self) -> Finished:
        """Its exit code and the end of its own stderr, once it ended."""
        return Finished(self._process.wait(), self._errors.text())

    def stop(self) -> None:
        """End it now, whatever it does."""
        if self._process.returncode is None:
            self._process.kill()
            self._process.wait()
        if self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()

    def close(self, timeout: float = _STREAM_END_WAIT) -> None:
        """Let it end (its stdin closed); end it if it does not within ``timeout`` seconds."""
        if self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout)
        self.stop()


def serve(
    handle: Callable[[dict[str, Any]], dict[str, Any]], setup: Callable[[], None] = lambda: None
) -> int:
    """The loop of a :class:`FreshWorker`'s process: each request on stdin handled; the exit code.

    Replies go to the stdout it started with; what ``setup`` (run first) and
    ``handle`` write to file descriptor 1 is dropped (a module or an env that
    prints must not break a reply), and what ``handle`` writes to file
    descriptor 2 goes to the file the request names as ``stderr`` (appended),
    so that each request's output stays its own even when the process dies in
    the middle of it.
    """
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    setup()
    saved = os.dup(2)
    for line in sys.stdin:
        request: dict[str, Any] = json.loads(line)
        with open(request["stderr"], "ab") as sink:
            sys.stderr.flush()
            os.dup2(sink.fileno(), 2)
            try:
                reply = handle(request)
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    return 0


def file_tail(path: Path, size: int = MAX_OUTPUT_TAIL) -> str:
    """The last ``size`` bytes of a file, as text (as :meth:`StreamTail.text`); empty if none."""
    try:
        with path.open("rb") as file:
            end = file.seek(0, os.SEEK_END)
            file.seek(max(end - size, 0))
            return file.read().decode("utf-8", "replace")
    except OSError:
        return ""


class StreamTail:
    """The end of a binary stream (a process's output), read to its end by a thread of its own.

    However much the stream holds, at most ``size`` bytes of it are kept (and
    one read more while it is read): a process that writes hundreds of MB
    costs no more memory than one that writes a line.

    Args:
        stream: The stream; it is read to its end, then closed.
        size: The bytes of its end to keep.
    """

    def __init__(self, stream: IO[bytes], size: int = MAX_OUTPUT_TAIL) -> None:
        self.size = size
        self.total = 0  # the bytes read
        self._chunks: collections.deque[bytes] = collections.deque()
        self._kept = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[bytes]) -> None:
        with stream:
            while chunk := os.read(stream.fileno(), _READ_SIZE):
                with self._lock:
                    self.total += len(chunk)
                    self._chunks.append(chunk)
                    self._kept += len(chunk)
                    while self._kept - len(self._chunks[0]) >= self.size:
                        self._kept -= len(self._chunks.popleft())

    @property
    def kept(self) -> int:
        """The bytes held now: at most ``size`` and one read."""
        return self._kept

    def text(self, timeout: float = _STREAM_END_WAIT) -> str:
        """The last ``size`` bytes, as text, once the stream ended (or after ``timeout`` s).

        Bytes that are not UTF-8 are replaced (U+FFFD); a character cut at
        the start is too. The stream outlives its process when a process it
        started holds it: its end is then what was read within ``timeout``.
        """
        self._thread.join(timeout)
        with self._lock:
            data = b"".join(self._chunks)
        return data[-self.size :].decode("utf-8", "replace")
