"""Recordings made by a fresh Python process, with another ``PYTHONHASHSEED``.

One process hashes strings one way from start to end, so two recordings made
in it agree on the order of a set of strings however that order depends on
the hash seed; and state an earlier run left in a module is there for the
next. A fresh interpreter with another ``PYTHONHASHSEED`` shows both. Every
check that records in a fresh process starts it here:

- the pytest plugin: the goldens ``--update-goldens`` is about to write,
  re-recorded by one ``python -m pytest`` for the session (per pytest-xdist
  worker), and the runs of ``--goldens-determinism-mode=subprocess``;
- ``gym-goldens audit``: run 3 of every env.

Example:
    >>> process = FreshProcess(["-c", "print(hash('a') == hash('a'))"])
    >>> process.wait().output.strip()
    'True'
"""

from __future__ import annotations

import collections
import dataclasses
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Final

__all__ = [
    "HASH_SEED_RANGE",
    "MAX_OUTPUT_TAIL",
    "Finished",
    "FreshProcess",
    "StreamTail",
    "other_hash_seed",
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
        environment = {key: value for key, value in os.environ.items() if key not in _DROPPED}
        environment["PYTHONHASHSEED"] = str(self.hash_seed)
        self._process = subprocess.Popen(
            [sys.executable, *args],
            cwd=cwd,
            env=environment,
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
