"""The frame encoder process: frames digested, encoded and written beside the env, on Linux."""

from __future__ import annotations

import contextlib
import gzip
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gym_goldens
from gym_goldens import RecordTrajectory, read_recording
from gym_goldens.errors import UnsafeGoldenPathError
from gym_goldens.format.codec import TaggedValue
from gym_goldens.format.frames import FrameRef, decode_png, frame_digest
from gym_goldens.record.encoder import EncoderEndedError, RingPlaces, _Shared, frame_encoder
from tests.support.frames import PaintedEnv, pong_frame

needs_encoder_process = pytest.mark.skipif(
    not hasattr(os, "memfd_create"),
    reason="the frame encoder process runs on Linux (os.memfd_create); elsewhere a thread does",
)


Stored = list[tuple[FrameRef, np.ndarray[Any, Any]]]


def stored_frames(folder: Path, field: str = "render") -> Stored:
    """Each reference of ``field`` in the recording of ``folder``, with its file's pixels."""
    found = []
    for episode in read_recording(folder):
        for record in episode.records:
            value = record.get(field)
            if isinstance(value, TaggedValue):
                ref = FrameRef.from_tagged(value, path=folder)
                data = (folder / ref.file).read_bytes()
                found.append((ref, decode_png(data, path=ref.file, expected_shape=ref.shape)))
    return found


def assert_frames_are(folder: Path, expected: list[np.ndarray[Any, Any]]) -> None:
    """The recording of ``folder`` refers to ``expected``, in order, by their digests."""
    assert [ref.digest for ref, _ in stored_frames(folder)] == [
        frame_digest(frame) for frame in expected
    ]


def record_painted(folder: Path, steps: int, **options: Any) -> list[np.ndarray[Any, Any]]:
    """Record ``steps`` steps of a PaintedEnv with its frames; the frames it rendered."""
    recorder = RecordTrajectory(PaintedEnv(length=steps + 1), folder, render=True, **options)
    expected = record_episode(recorder, steps, length=steps + 1, action=1)
    recorder.close()
    return expected


def record_episode(
    recorder: RecordTrajectory[Any, int], steps: int, *, length: int, action: int = 0
) -> list[np.ndarray[Any, Any]]:
    """Record ``steps`` steps from a reset (seed 1) of a PaintedEnv of ``length``, recorded.

    Returns:
        The frames the same env rendered beside it: those the recording must hold.
    """
    shown = PaintedEnv(length=length)
    recorder.reset(seed=1)
    shown.reset(seed=1)
    expected = [shown.render()]
    for _ in range(steps):
        recorder.step(action)
        shown.step(action)
        expected.append(shown.render())
    return expected


def step_on(recorder: RecordTrajectory[Any, int], steps: int) -> None:
    for _ in range(steps):
        recorder.step(0)


# The ring: where frames go.


@given(st.lists(st.tuples(st.integers(1, 40), st.booleans()), max_size=200))
def test_the_ring_never_gives_two_frames_in_flight_the_same_bytes(
    moves: list[tuple[int, bool]],
) -> None:
    ring = RingPlaces(100)
    live: list[tuple[int, int]] = []
    for length, free_first in moves:
        if free_first and live:
            ring.free_oldest()
            live.pop(0)
        start = ring.place(length)
        if start is None:
            # Full for this frame: freeing the oldest eventually makes room.
            while start is None and live:
                ring.free_oldest()
                live.pop(0)
                start = ring.place(length)
        assert start is not None
        assert start >= 0
        assert start + length <= ring.size
        for other_start, other_end in live:
            assert start + length <= other_start or other_end <= start
        live.append((start, start + length))


def test_the_ring_wraps_to_its_start_once_the_frames_there_are_freed() -> None:
    ring = RingPlaces(100)
    assert [ring.place(40), ring.place(40)] == [0, 40]
    assert ring.place(40) is None  # 20 left at the end, the start still taken
    ring.free_oldest()
    assert ring.place(40) == 0  # wrapped
    assert ring.place(10) is None  # between the newest (0..40) and the oldest (40..80): none
    ring.free_oldest()
    assert ring.place(10) == 40


# The process.


@needs_encoder_process
def test_frames_are_encoded_by_a_process_of_their_own(tmp_path: Path) -> None:
    expected = record_painted(tmp_path, 40)
    encoder = frame_encoder()
    assert encoder is not None
    assert encoder.alive
    assert encoder.pid != os.getpid()
    stored = stored_frames(tmp_path)
    assert len(stored) == len(expected)
    for (ref, pixels), frame in zip(stored, expected, strict=True):
        assert ref.digest == frame_digest(frame)
        np.testing.assert_array_equal(pixels, frame)


def test_where_there_is_no_encoder_process_a_thread_stores_the_same_frames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record_painted(tmp_path / "process", 12)
    # As on macOS and Windows: no anonymous memory file to share, so no process.
    monkeypatch.delattr(os, "memfd_create", raising=False)
    threads_before = threading.active_count()
    record_painted(tmp_path / "thread", 12)
    assert threading.active_count() == threads_before  # its thread ended with the recording
    by_process, by_thread = stored_frames(tmp_path / "process"), stored_frames(tmp_path / "thread")
    assert [ref for ref, _ in by_thread] == [ref for ref, _ in by_process]
    for (_, one), (_, other) in zip(by_thread, by_process, strict=True):
        np.testing.assert_array_equal(one, other)
    names = sorted(os.listdir(tmp_path / "thread" / "frames"))
    assert names == sorted(os.listdir(tmp_path / "process" / "frames"))


def test_a_frame_the_thread_could_not_write_is_named_as_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(os, "memfd_create", raising=False)  # the worker thread writes
    in_the_way = tmp_path / "frames" / "e00000_t000001_render.png"
    in_the_way.mkdir(parents=True)  # a folder where step 1's frame goes
    recorder = RecordTrajectory(PaintedEnv(length=3), tmp_path, render=True)
    recorder.reset(seed=0)
    with pytest.raises(IsADirectoryError) as raised:
        step_on(recorder, 3)
    recorder.close()
    assert raised.value.filename == str(in_the_way)


@needs_encoder_process
def test_a_frame_too_large_for_the_ring_goes_through_the_socket(tmp_path: Path) -> None:
    # 2,200 x 1,400 x 3 is 9.2 MB: past half of the ring.
    large = np.zeros((2200, 1400, 3), np.uint8)
    large[100:300, 200:900] = (250, 20, 40)
    frames = [pong_frame(t) for t in range(3)]
    encoder = frame_encoder()
    assert encoder is not None
    recording = encoder.recording()
    paths = [tmp_path / name for name in ("a.png", "large.png", "b.png", "c.png")]
    for path, frame in zip(paths, [frames[0], large, *frames[1:]], strict=True):
        encoder.submit(recording, os.fsencode(path), frame)
    digests = encoder.wait(recording)
    encoder.forget(recording)
    for path, frame, digest in zip(paths, [frames[0], large, *frames[1:]], digests, strict=True):
        assert digest == frame_digest(frame)
        decoded = decode_png(path.read_bytes(), path=path.name, expected_shape=frame.shape)
        np.testing.assert_array_equal(decoded, frame)


@needs_encoder_process
def test_frames_just_below_and_above_half_the_ring_mixed_with_tiny_ones(tmp_path: Path) -> None:
    # 2048 x 4095 is just below half of the 16 MiB ring (it wraps round it),
    # 2048 x 4097 just above (it goes through the socket).
    shapes = [(2048, 4095), (8, 8), (2048, 4097), (9, 9, 3), (2048, 4095), (2048, 4095), (8, 8)]
    frames = []
    for number, shape in enumerate(shapes):
        frame = np.full(shape, number * 30, np.uint8)
        frame[number, : number + 1] = 255
        frames.append(frame)
    encoder = frame_encoder()
    assert encoder is not None
    recording = encoder.recording()
    paths = [tmp_path / f"{number}.png" for number in range(len(frames))]
    for path, frame in zip(paths, frames, strict=True):
        encoder.submit(recording, os.fsencode(path), frame)
    digests = encoder.wait(recording)
    encoder.forget(recording)
    assert digests == [frame_digest(frame) for frame in frames]
    for path, frame in zip(paths, frames, strict=True):
        decoded = decode_png(path.read_bytes(), path=path.name, expected_shape=frame.shape)
        np.testing.assert_array_equal(decoded, frame)


@needs_encoder_process
def test_recordings_in_threads_share_the_process_and_each_gets_its_own_frames(
    tmp_path: Path,
) -> None:
    expected: dict[int, list[np.ndarray[Any, Any]]] = {}

    def record(number: int) -> None:
        expected[number] = record_painted(tmp_path / str(number), 30 + number)

    threads = [threading.Thread(target=record, args=(number,)) for number in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for number, frames in expected.items():
        stored = stored_frames(tmp_path / str(number))
        assert [ref.digest for ref, _ in stored] == [frame_digest(frame) for frame in frames]


@needs_encoder_process
@pytest.mark.parametrize("read_size", [1, 7, 50])
def test_replies_taken_in_a_few_bytes_at_a_time_are_each_counted_whole_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read_size: int
) -> None:
    # The encoder replies in batches, and every whole reply taken in is
    # counted: one cut anywhere (in its head, its digest, an error's path)
    # waits for its rest. Two recordings' digests, an error's longer each time.
    monkeypatch.setattr("gym_goldens.record.encoder._READ_SIZE", read_size)
    encoder = frame_encoder()
    assert encoder is not None
    first, second, failing = (encoder.recording() for _ in range(3))
    expected: dict[int, list[str]] = {first: [], second: []}
    missing = [tmp_path / ("missing" * (t + 1)) / f"{t}.png" for t in range(0, 60, 10)]
    for t in range(60):
        recording = (first, second)[t % 2]
        encoder.submit(recording, os.fsencode(tmp_path / f"{t}.png"), pong_frame(t))
        expected[recording].append(frame_digest(pong_frame(t)))
        if t % 10 == 0:
            encoder.submit(failing, os.fsencode(missing[t // 10]), pong_frame(t))
    with pytest.raises(FileNotFoundError) as raised:
        encoder.wait(failing)  # the other recordings' replies are taken in meanwhile
    assert raised.value.filename == str(missing[0])
    assert encoder.wait(first) == expected[first]
    assert encoder.wait(second) == expected[second]
    for recording in (first, second, failing):
        encoder.forget(recording)


@needs_encoder_process
def test_an_encoder_that_was_killed_fails_the_recording_then_another_starts(
    tmp_path: Path,
) -> None:
    recorder = RecordTrajectory(PaintedEnv(length=5), tmp_path / "killed", render=True)
    recorder.reset(seed=0)
    recorder.step(0)
    encoder = frame_encoder()
    assert encoder is not None
    os.kill(encoder.pid, signal.SIGKILL)
    for _ in range(3):  # frames handed over to the ended process, or failing at once
        with contextlib.suppress(RuntimeError):
            recorder.step(0)
    with pytest.raises(RuntimeError, match=r"frame encoder process \(pid \d+\) ended with exit"):
        recorder.step(0)  # step 5 ends the episode: its lines wait for its frames
    recorder.close()
    expected = record_painted(tmp_path / "after", 6)
    restarted = frame_encoder()
    assert restarted is not None
    assert restarted.pid != encoder.pid
    assert_frames_are(tmp_path / "after", expected)


def ring_files() -> int:
    """The descriptors this process holds of encoders' shared memory."""
    found = 0
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed by now
            found += "gym-goldens-frames" in os.readlink(f"/proc/self/fd/{name}")
    return found


@needs_encoder_process
def test_an_encoder_that_ended_lets_go_of_its_shared_memory(tmp_path: Path) -> None:
    record_painted(tmp_path / "first", 2)
    held = ring_files()  # the running encoder's
    for number in range(4):
        recorder = RecordTrajectory(PaintedEnv(length=3), tmp_path / str(number), render=True)
        recorder.reset(seed=0)
        encoder = frame_encoder()
        assert encoder is not None
        os.kill(encoder.pid, signal.SIGKILL)
        with pytest.raises(RuntimeError, match="frame encoder process"):
            step_on(recorder, 3)
        recorder.close()
    record_painted(tmp_path / "last", 2)
    assert ring_files() == held


@needs_encoder_process
@pytest.mark.skipif(sys.platform != "linux", reason="fork")
def test_a_forked_process_starts_an_encoder_of_its_own(tmp_path: Path) -> None:
    record_painted(tmp_path / "parent", 3)
    parent_encoder = frame_encoder()
    assert parent_encoder is not None
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's outcome is its exit code
        try:
            record_painted(tmp_path / "child", 3)
            own = frame_encoder()
            ok = own is not None and own.pid != parent_encoder.pid
            os._exit(0 if ok and len(stored_frames(tmp_path / "child")) == 4 else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert parent_encoder.alive  # the child left the parent's encoder alone
    record_painted(tmp_path / "parent again", 3)
    assert frame_encoder() is parent_encoder


@needs_encoder_process
@pytest.mark.skipif(sys.platform != "linux", reason="fork")
def test_a_fork_while_the_encoder_starts_leaves_the_child_free_to_start_its_own(
    tmp_path: Path,
) -> None:
    with _Shared.lock:  # held, as by another thread starting this process's encoder
        child = os.fork()
        if child == 0:  # pragma: no cover - the child's outcome is its exit code
            signal.alarm(30)  # a child waiting for ever on the lock ends, failing the test
            try:
                record_painted(tmp_path / "child", 3)
                os._exit(0 if len(stored_frames(tmp_path / "child")) == 4 else 1)
            except BaseException:
                os._exit(2)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@needs_encoder_process
@pytest.mark.skipif(sys.platform != "linux", reason="fork")
def test_a_recording_begun_before_a_fork_fails_clearly_in_the_child(tmp_path: Path) -> None:
    recorder = RecordTrajectory(PaintedEnv(length=6), tmp_path / "parent", render=True)
    recorder.reset(seed=0)
    recorder.step(0)
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's outcome is its exit code
        try:
            step_on(recorder, 5)
            os._exit(1)
        except EncoderEndedError as error:
            with contextlib.suppress(EncoderEndedError):
                recorder.close()  # its frames sent before the fork are the parent's
            os._exit(0 if "forked from" in str(error) else 2)
        except BaseException:
            os._exit(3)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    step_on(recorder, 5)  # the parent's recording goes on
    recorder.close()
    assert len(stored_frames(tmp_path / "parent")) == 7


@needs_encoder_process
def test_a_recording_begun_before_a_fork_leaves_the_child_s_own_files_open(
    tmp_path: Path,
) -> None:
    # The child closes its copy of the parent's ring once; a file it opens
    # next may take the ring's number, and must not be closed a second time.
    recorder = RecordTrajectory(PaintedEnv(length=6), tmp_path, render=True)
    recorder.reset(seed=0)
    recorder.step(0)
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's outcome is its exit code
        try:
            held = [os.open(os.devnull, os.O_RDONLY) for _ in range(8)]
            with contextlib.suppress(EncoderEndedError):
                step_on(recorder, 5)
            with contextlib.suppress(EncoderEndedError):
                recorder.close()
            for descriptor in held:
                os.fstat(descriptor)
            os._exit(0)
        except OSError:
            os._exit(1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    recorder.close()


@pytest.mark.parametrize(
    "options",
    [{"compress": True}, {"flush_every": 3}, {"full_every": 4}],
    ids=["compressed", "flushed-mid-episode", "full-every-4"],
)
def test_every_line_written_holds_its_frames_digests_whatever_the_storage(
    tmp_path: Path, options: dict[str, Any]
) -> None:
    # The digests come from the encoder after the lines are made: each way of
    # writing lines (gzip, a buffer flushed mid-episode, steps kept as digests)
    # must put them in before the lines are written.
    record_painted(tmp_path, 20, **options)
    data = b"".join(path.read_bytes() for path in tmp_path.glob("trajectory.jsonl*"))
    assert b"pending" not in (gzip.decompress(data) if options.get("compress") else data)
    stored = stored_frames(tmp_path)
    assert stored
    for ref, pixels in stored:
        assert ref.digest == frame_digest(pixels)


# Attacks: errors, hangs, links.


def test_lines_whose_frames_could_not_be_written_never_reach_the_file(tmp_path: Path) -> None:
    (tmp_path / "frames" / "e00000_t000002_render.png").mkdir(parents=True)  # in the way
    recorder = RecordTrajectory(PaintedEnv(length=10), tmp_path, render=True)
    recorder.reset(seed=0)
    step_on(recorder, 3)
    with pytest.raises(IsADirectoryError, match=r"frames/e00000_t000002_render\.png"):
        recorder.close()
    recorder.close()  # closed twice: the lines held back are not written now either
    trajectory = tmp_path / "trajectory.jsonl"
    assert b"pending" not in (trajectory.read_bytes() if trajectory.exists() else b"")


def test_after_a_frame_error_the_episode_ends_and_the_next_one_is_recorded(
    tmp_path: Path,
) -> None:
    recorder = RecordTrajectory(PaintedEnv(length=4), tmp_path, render=True, flush_every=2)
    in_the_way = tmp_path / "frames" / "e00000_t000000_render.png"
    in_the_way.mkdir(parents=True)  # a folder where the reset's frame goes
    recorder.reset(seed=0)
    with pytest.raises(IsADirectoryError, match=r"frames/e00000_t000000_render\.png"):
        step_on(recorder, 4)
    with pytest.raises(gym.error.ResetNeeded):
        recorder.step(0)  # the lines of the episode were dropped with their frames
    expected = record_episode(recorder, 4, length=4)
    recorder.close()
    data = (tmp_path / "trajectory.jsonl").read_bytes()
    assert b"pending" not in data
    assert_frames_are(tmp_path, expected)


@needs_encoder_process
def test_after_the_encoder_was_killed_the_same_recorder_records_its_next_episode(
    tmp_path: Path,
) -> None:
    recorder = RecordTrajectory(PaintedEnv(length=4), tmp_path, render=True)
    recorder.reset(seed=0)
    encoder = frame_encoder()
    assert encoder is not None
    os.kill(encoder.pid, signal.SIGKILL)
    with pytest.raises(RuntimeError, match=r"frame encoder process \(pid \d+\) ended"):
        step_on(recorder, 4)
    expected = record_episode(recorder, 4, length=4)
    recorder.close()
    assert_frames_are(tmp_path, expected)


@needs_encoder_process
def test_a_recorder_owed_nothing_by_an_encoder_that_ended_goes_on_with_another(
    tmp_path: Path,
) -> None:
    # The first is owed its frames when the encoder is killed; the second,
    # which writes each step's line at once, is owed none after a step.
    first = RecordTrajectory(PaintedEnv(length=2), tmp_path / "first", render=True)
    second = RecordTrajectory(PaintedEnv(length=4), tmp_path / "second", render=True, flush_every=1)
    shown = PaintedEnv(length=4)
    for recorder in (first, second, shown):
        recorder.reset(seed=0)
    expected = [shown.render()]
    first.step(0)
    second.step(0)
    shown.step(0)
    expected.append(shown.render())
    encoder = frame_encoder()
    assert encoder is not None
    os.kill(encoder.pid, signal.SIGKILL)
    with pytest.raises(RuntimeError, match=r"frame encoder process \(pid \d+\) ended"):
        first.step(0)  # the end of its episode: it waits for its frames, and finds the end
    for _ in range(3):
        second.step(0)  # owed nothing: it must not keep the encoder that ended
        shown.step(0)
        expected.append(shown.render())
    first.close()
    second.close()
    assert_frames_are(tmp_path / "second", expected)


@needs_encoder_process
def test_a_frame_that_fails_in_a_folder_named_in_latin_1_fails_its_recording_alone(
    tmp_path: Path,
) -> None:
    # A folder whose name is not UTF-8 (made on an older system): the error's
    # reply names the file as the thread's error does, and making that reply
    # must not end the encoder: the other recording's frames are written.
    folder = tmp_path / os.fsdecode("caf\xe9".encode("latin-1"))
    in_the_way = folder / "frames" / "e00000_t000002_render.png"
    in_the_way.mkdir(parents=True)
    failing = RecordTrajectory(PaintedEnv(length=4), folder, render=True)
    other = RecordTrajectory(PaintedEnv(length=4), tmp_path / "other", render=True)
    shown = PaintedEnv(length=4)
    for env in (failing, other, shown):
        env.reset(seed=0)
    expected = [shown.render()]
    for _ in range(4):
        other.step(0)
        shown.step(0)
        expected.append(shown.render())
    step_on(failing, 3)
    with pytest.raises(IsADirectoryError) as raised:
        failing.step(0)  # the end of its episode: its lines wait for its frames
    assert raised.value.filename == str(in_the_way)
    failing.close()
    other.close()
    assert_frames_are(tmp_path / "other", expected)


def run_python(script: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a Python process of its own, this checkout's package first; never hang."""
    root = Path(__file__).resolve().parents[2]
    package = Path(gym_goldens.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(package), str(root)])}
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
        timeout=timeout,  # a guard against a hang, not a measure: it takes about a second
        check=False,
    )


@pytest.mark.parametrize("descriptors", [0, 1100], ids=["few-files-open", "1100-files-open"])
def test_frames_that_all_fail_to_be_written_in_a_long_folder_do_not_hang(
    tmp_path: Path, descriptors: int
) -> None:
    # Each error's reply names its file: 256 of them in a folder of a 1,000
    # character path fill the socket's buffer both ways, while this process
    # sends its held-back requests and the encoder sends its replies. With
    # 1,100 files open, the socket's descriptor is past select()'s 1,024.
    folder = tmp_path.joinpath(*["x" * 200] * 5)
    script = (
        "import os, resource, shutil, sys\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        f"wanted = {descriptors} + 64\n"
        "if soft < wanted:\n"
        "    resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))\n"
        f"held = [os.open(os.devnull, os.O_RDONLY) for _ in range({descriptors})]\n"
        "from pathlib import Path\n"
        "from gym_goldens import RecordTrajectory\n"
        "from tests.support.frames import PaintedEnv\n"
        "folder = Path(sys.argv[1])\n"
        "recorder = RecordTrajectory(PaintedEnv(length=600), folder, render=True)\n"
        "recorder.reset(seed=0)\n"
        "shutil.rmtree(folder / 'frames')\n"
        "(folder / 'frames').write_bytes(b'')\n"
        "try:\n"
        "    for _ in range(600):\n"
        "        recorder.step(0)\n"
        "except OSError as error:\n"
        "    print(error.strerror)\n"
    )
    result = run_python(script, str(folder))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Not a directory"


def test_a_process_that_exits_without_closing_its_recorder_does_not_hang(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from gym_goldens import RecordTrajectory\n"
        "from tests.support.frames import PaintedEnv\n"
        "recorder = RecordTrajectory(PaintedEnv(length=1000), sys.argv[1], render=True)\n"
        "recorder.reset(seed=0)\n"
        "for _ in range(300):\n"
        "    recorder.step(0)\n"
    )
    result = run_python(script, str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


@needs_encoder_process
def test_at_the_exit_frames_sent_after_errors_naming_long_paths_are_written(
    tmp_path: Path,
) -> None:
    # Frames left in flight at the exit (a recording not closed): the replies
    # of 250 errors, each naming a path of 3,900 characters, fill the socket
    # long before the encoder gets to the frames sent after them.
    missing = tmp_path.joinpath(*["x" * 250] * 15)
    script = (
        "import os, sys\n"
        "import numpy as np\n"
        "from gym_goldens.record.encoder import frame_encoder\n"
        "encoder = frame_encoder()\n"
        "recording = encoder.recording()\n"
        "frame = np.zeros((16, 16), np.uint8)\n"
        "for number in range(250):\n"
        "    encoder.submit(recording, os.fsencode(sys.argv[1] + f'/{number}.png'), frame)\n"
        "for number in range(5):\n"
        "    encoder.submit(recording, os.fsencode(sys.argv[2] + f'/{number}.png'), frame)\n"
    )
    result = run_python(script, str(missing), str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(tmp_path)) == [f"{number}.png" for number in range(5)]


@needs_encoder_process
def test_a_process_whose_encoder_was_killed_exits_without_a_traceback(tmp_path: Path) -> None:
    # A frame held back (its request not sent yet) when the encoder was killed
    # unseen (out of memory): at the exit, sending it finds the end.
    script = (
        "import os, signal, sys\n"
        "import numpy as np\n"
        "from gym_goldens.record.encoder import frame_encoder\n"
        "encoder = frame_encoder()\n"
        "frame = np.zeros((16, 16), np.uint8)\n"
        "encoder.submit(encoder.recording(), os.fsencode(sys.argv[1] + '/0.png'), frame)\n"
        "os.kill(encoder.pid, signal.SIGKILL)\n"
        "os.waitid(os.P_PID, encoder.pid, os.WEXITED | os.WNOWAIT)\n"
    )
    result = run_python(script, str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


@needs_encoder_process
def test_a_frame_interrupted_midway_cuts_the_encoder_and_the_next_frames_are_written(
    tmp_path: Path,
) -> None:
    # An exception raised while a frame is sent (a Ctrl-C, pytest-timeout's)
    # cuts the socket's stream within a request: the encoder must not read
    # the next frames' requests as the rest of it (it waited for ever).
    script = (
        "import contextlib, os, signal, sys\n"
        "from pathlib import Path\n"
        "import numpy as np\n"
        "from gym_goldens.format.frames import frame_digest\n"
        "from gym_goldens.record.encoder import frame_encoder\n"
        "class Interrupted(Exception): pass\n"
        "def interrupt(*_): raise Interrupted\n"
        "signal.signal(signal.SIGALRM, interrupt)\n"
        "folder = Path(sys.argv[1])\n"
        "encoder = frame_encoder()\n"
        "os.kill(encoder.pid, signal.SIGSTOP)  # the large frame's send waits, interrupted\n"
        "signal.setitimer(signal.ITIMER_REAL, 0.1)\n"
        "large = np.zeros((2200, 1400, 3), np.uint8)\n"
        "try:\n"
        "    encoder.submit(encoder.recording(), os.fsencode(folder / 'large.png'), large)\n"
        "except Interrupted:\n"
        "    print('interrupted')\n"
        "with contextlib.suppress(ProcessLookupError):\n"
        "    os.kill(encoder.pid, signal.SIGCONT)\n"
        "encoder = frame_encoder()\n"
        "recording = encoder.recording()\n"
        "frames = [np.full((48, 64, 3), t, np.uint8) for t in range(5)]\n"
        "for t, frame in enumerate(frames):\n"
        "    encoder.submit(recording, os.fsencode(folder / f'{t}.png'), frame)\n"
        "print(encoder.wait(recording) == [frame_digest(frame) for frame in frames])\n"
    )
    result = run_python(script, str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["interrupted", "True"]
    assert sorted(os.listdir(tmp_path)) == [f"{t}.png" for t in range(5)]


def test_a_frames_folder_that_is_a_symlink_is_refused_not_written_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "recording").mkdir()
    (tmp_path / "recording" / "frames").symlink_to(elsewhere)
    recorder = RecordTrajectory(PaintedEnv(length=3), tmp_path / "recording", render=True)
    with pytest.raises(
        UnsafeGoldenPathError, match=r"recording/frames: a symlink \(to .*elsewhere"
    ):
        recorder.reset(seed=0)
    recorder.close()
    assert list(elsewhere.iterdir()) == []


@needs_encoder_process
def test_a_process_whose_encoder_is_stopped_exits_without_waiting_for_it(tmp_path: Path) -> None:
    # Frames still with the encoder at exit belong to lines no recorder will
    # write (lines wait for their frames): an encoder that does not finish
    # them (stopped, swapped out) is not waited for as if they mattered.
    script = (
        "import os, signal, sys\n"
        "from gym_goldens import RecordTrajectory\n"
        "from gym_goldens.record.encoder import running_frame_encoder\n"
        "from tests.support.frames import PaintedEnv\n"
        "recorder = RecordTrajectory(PaintedEnv(length=1000), sys.argv[1], render=True)\n"
        "recorder.reset(seed=0)\n"
        "encoder = running_frame_encoder()\n"
        "print(encoder.pid, flush=True)\n"
        "os.kill(encoder.pid, signal.SIGSTOP)\n"
        "for _ in range(50):\n"
        "    recorder.step(0)\n"
    )
    try:
        result = run_python(script, str(tmp_path), timeout=15)
    except subprocess.TimeoutExpired as error:
        output = error.stdout.decode() if isinstance(error.stdout, bytes) else error.stdout or ""
        _kill(output)
        pytest.fail("the process waited for its stopped encoder at exit")
    _kill(result.stdout)
    assert result.returncode == 0, result.stderr


def _kill(printed: str) -> None:
    """Kill the encoder whose id was printed first, if it is still there (stopped)."""
    if printed.split():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(printed.split(maxsplit=1)[0]), signal.SIGKILL)


@pytest.mark.parametrize(
    "setting", ["sys.frozen = True", "sys.executable = None"], ids=["frozen", "no-interpreter"]
)
def test_where_sys_executable_is_no_python_to_start_a_thread_stores_the_frames(
    tmp_path: Path, setting: str
) -> None:
    # A frozen application's executable is the application itself, and an
    # embedding one may have none: the encoder process is not started from them.
    script = (
        "import sys\n"
        f"{setting}\n"
        "from pathlib import Path\n"
        "from gym_goldens import RecordTrajectory\n"
        "from gym_goldens.record.encoder import running_frame_encoder\n"
        "from tests.support.frames import PaintedEnv\n"
        "recorder = RecordTrajectory(PaintedEnv(length=20), sys.argv[1], render=True)\n"
        "recorder.reset(seed=0)\n"
        "for _ in range(5):\n"
        "    recorder.step(0)\n"
        "recorder.close()\n"
        "print(running_frame_encoder() is None, len(list(Path(sys.argv[1], 'frames').iterdir())))\n"
    )
    result = run_python(script, str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "6"]


@needs_encoder_process
def test_a_large_frame_is_replied_to_at_once_not_held_for_a_batch(tmp_path: Path) -> None:
    # Replies come in batches of 8 frames, but a few frames of several MiB fill
    # the ring: each such frame's reply goes at once, so its room is free for
    # the next frame while the encoder works on the others. The frame after it
    # is written into a FIFO, whose opening waits for a reader: the encoder is
    # held there until this test reads it, after the first frame's reply.
    encoder = frame_encoder()
    assert encoder is not None
    first, second = encoder.recording(), encoder.recording()
    large = np.full((1024, 1024, 3), 7, np.uint8)  # 3 MiB: 5 of them fill the ring
    fifo = tmp_path / "held.png"
    os.mkfifo(fifo)
    encoder.submit(first, os.fsencode(tmp_path / "first.png"), large)
    encoder.submit(second, os.fsencode(fifo), large)
    waited: list[list[str]] = []
    waiter = threading.Thread(target=lambda: waited.append(encoder.wait(first)), daemon=True)
    waiter.start()
    waiter.join(timeout=20)  # a guard against a hang, not a measure
    released = not waiter.is_alive()
    reader = os.open(fifo, os.O_RDONLY)  # lets the encoder write the second frame
    with os.fdopen(reader, "rb") as stream:
        data = stream.read()
    waiter.join(timeout=20)
    encoder.wait(second)
    encoder.forget(first)
    encoder.forget(second)
    assert released, "the first frame's reply was held until the frame after it was written"
    assert waited == [[frame_digest(large)]]
    written = decode_png(data, path="held.png", expected_shape=large.shape)
    np.testing.assert_array_equal(written, large)
