"""Benchmarks of frames: bytes per stored frame, the cost of storing one, comparing frames.

Run from the repository root::

    pip install -e ".[bench]"            # ale-py: Pong's own frames; drawn ones without it
    python benchmarks/pixels.py          # about a minute on 2 cores
    python benchmarks/pixels.py --quick  # fewer frames, for a smoke test

``python benchmarks/run.py`` runs this script too, in a process of its own,
and shows its rows in its table (``--only pixels`` for them alone).

The frames of Pong come from ``ALE/Pong-v5`` when ale-py is installed, and
are drawn with numpy otherwise (a 210x160x3 field with a moving ball and
paddles, the colours of Pong): the table says which. Storing a frame is
what the recorder will do for each: :func:`~gym_goldens.format.frames.encode_png`,
its file, created and written, and its reference (:meth:`FrameRef.of`, the
digest of the pixels); the PNG, the file and the digest are the recorder's
encoder's share, given as a ratio of its own: above 1, the encoder falls
behind the env even on a core of its own. As in
``benchmarks/run.py``, each verdict is a ratio of two figures measured in the
same run, in turns (an env's steps, then storing their frames), and each
ratio is the median over the turns; times are CPU times of this process
(user + system), so that other processes on a shared machine count as little
as possible. The "storing" ratios are those of storing every frame in the
stepping thread. The recorder's rows (``--only recording``) run the recorder,
whose frames are encoded beside the env (by the frame encoder process on
Linux, a worker thread elsewhere): their ratio is by wall clock, each turn
ending once its frames are on disk (what the issue's target means: the
encoding may overlap the env), and beside it the CPU ratio (every thread and
the encoder process: what the machine pays, which no overlap can hide) and
the env thread's own CPU ratio. The script prints one table; it does not fail
when a target is missed.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import importlib
import io
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import PIL
from PIL import Image

from gym_goldens import RecordTrajectory, Tolerance, compare
from gym_goldens.comparison.pixels import PixelTolerance, compare_frames
from gym_goldens.format.frames import FRAMES_DIR, FrameRef, decode_png, encode_png
from gym_goldens.record.encoder import running_frame_encoder

KiB = 1 << 10
PONG = "ALE/Pong-v5"
CARTPOLE = "CartPole-v1"
TURN_STEPS = 100
"""Steps in one turn: a turn steps the env, then stores the frames of those steps."""
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)


@dataclasses.dataclass
class Row:
    """One line of the result table."""

    measurement: str
    figures: str
    ratio: str = "-"
    target: str = "-"
    met: bool | None = None

    @property
    def verdict(self) -> str:
        return {True: "yes", False: "NO", None: "-"}[self.met]


def drawn_pong_frame(t: int) -> np.ndarray[Any, Any]:
    """A 210x160x3 frame like Pong's at time ``t``: walls, two paddles and a ball that move."""
    frame = np.empty((210, 160, 3), np.uint8)
    frame[:] = (144, 72, 17)
    frame[24:34] = frame[194:210] = (236, 236, 236)
    for bar in range(t // 40 % 10):  # the scores, a bar a point
        frame[2:20, 36 + 2 * bar] = (213, 130, 74)
        frame[2:20, 116 + 2 * bar] = (92, 186, 92)
    left, right = 40 + (t * 3) % 130, 150 - (t * 2) % 100
    frame[left : left + 16, 16:20] = (213, 130, 74)
    frame[right : right + 16, 140:144] = (92, 186, 92)
    ball_y, ball_x = 40 + (t * 5) % 148, 24 + (t * 7) % 112
    frame[ball_y : ball_y + 4, ball_x : ball_x + 2] = (236, 236, 236)
    return frame


def make_pong() -> gym.Env[Any, Any] | str:
    """Pong, or why it cannot be made here."""
    try:
        module = importlib.import_module("ale_py")
    except ImportError as error:
        return f"ale-py is not installed ({error}); frames drawn with numpy"
    gym.register_envs(module)
    return gym.make(PONG)


def store(
    frames: list[np.ndarray[Any, Any]], episode: int, first_step: int, folder: Path
) -> tuple[int, float, float, float]:
    """Store frames as the recorder does: a PNG, its file in ``folder`` and a reference each.

    Returns:
        The bytes, and the CPU seconds of the PNGs, of their files (created, written and
        closed, as the recorder's encoder does) and of the references (their digests).
    """
    size, encoding, writing, digests = 0, 0.0, 0.0, 0.0
    for offset, frame in enumerate(frames):
        start = time.process_time()
        data = encode_png(frame)
        encoded = time.process_time()
        ref = FrameRef.of(frame, episode=episode, step=first_step + offset, field="obs")
        referenced = time.process_time()
        descriptor = os.open(folder / Path(ref.file).name, _NEW_FILE, 0o666)
        os.write(descriptor, data)
        os.close(descriptor)
        size += len(data)
        encoding += encoded - start
        digests += referenced - encoded
        writing += time.process_time() - referenced
    return size, encoding, writing, digests


def step_turn(
    env: gym.Env[Any, Any], actions: list[Any], render: bool
) -> tuple[float, list[np.ndarray[Any, Any]]]:
    """CPU seconds of ``actions`` (and a render after each, with ``render``), and the frames."""
    frames: list[np.ndarray[Any, Any]] = []
    start = time.process_time()
    for action in actions:
        obs, _, terminated, truncated, _ = env.step(action)
        frames.append(env.render() if render else obs)
        if terminated or truncated:
            env.reset()
    return time.process_time() - start, frames


def bench_storing(
    env: gym.Env[Any, Any], label: str, turns: int, *, render: bool, target: float
) -> tuple[list[Row], list[np.ndarray[Any, Any]]]:
    """The ratio (step + store) / step, by turns, and the encoder's share of it; the frames seen."""
    env.reset(seed=0)
    env.action_space.seed(0)
    step_turn(env, [env.action_space.sample() for _ in range(20)], render)  # warm up
    ratios, encoder_ratios, step_times, sizes, parts = [], [], [], [], []
    seen: list[np.ndarray[Any, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        for turn in range(turns):
            actions = [env.action_space.sample() for _ in range(TURN_STEPS)]
            stepped, frames = step_turn(env, actions, render)
            gc.collect()
            size, encoding, writing, digests = store(frames, 0, turn * TURN_STEPS, Path(folder))
            sizes.append(size)
            parts.append([spent / TURN_STEPS for spent in (encoding, writing, digests)])
            ratios.append((stepped + encoding + writing + digests) / stepped)
            encoder_ratios.append((encoding + writing + digests) / stepped)
            step_times.append(stepped / TURN_STEPS)
            seen += frames
    what = "step + render" if render else "step"
    encoding, writing, digest = (statistics.median(part[k] for part in parts) for k in range(3))
    ratio, encoder = statistics.median(ratios), statistics.median(encoder_ratios)
    return [
        Row(
            f"{label}: storing each frame in the stepping thread, against a bare {what}",
            f"bare {what} {statistics.median(step_times) * 1e3:.3f} ms; a frame's PNG "
            f"{encoding * 1e3:.3f} ms, its file {writing * 1e3:.3f} ms, its reference and xxh3 "
            f"digest {digest * 1e3:.3f} ms; {sum(sizes) / (turns * TURN_STEPS):,.0f} bytes a frame",
            f"{ratio:.2f}",
            f"<= {target}",
            ratio <= target,
        ),
        Row(
            f"{label}: a frame's PNG, its file and its digest (the recorder's encoder's share), "
            f"against a bare {what}",
            "above 1, the encoder cannot keep pace with the env even on a core of its own",
            f"{encoder:.2f}",
        ),
    ], seen


def encoder_cpu_time() -> float:
    """CPU seconds of this process's frame encoder process so far; 0 where there is none.

    Read from ``/proc`` (Linux, where the encoder is a process; elsewhere frames
    are encoded by a thread, which the process's own CPU time counts).
    """
    encoder = running_frame_encoder()
    if encoder is None:
        return 0.0
    fields = Path(f"/proc/{encoder.pid}/stat").read_text().rpartition(")")[2].split()
    user, system = int(fields[11]), int(fields[12])
    return (user + system) / os.sysconf("SC_CLK_TCK")


def recorded_turn(
    env: gym.Env[Any, Any], actions: list[Any], *, render: bool, flush: Callable[[], None]
) -> tuple[float, float, float]:
    """Seconds of ``actions``, then ``flush()``: wall clock, CPU of every process, this thread's.

    The CPU time counts every thread of this process and the frame encoder
    process (what the machine pays); the thread's CPU time only the env's.
    """
    start, start_process, start_thread = (
        time.perf_counter(),
        time.process_time() + encoder_cpu_time(),
        time.thread_time(),
    )
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if render:
            env.render()
        if terminated or truncated:
            env.reset()
    flush()
    return (
        time.perf_counter() - start,
        time.process_time() + encoder_cpu_time() - start_process,
        time.thread_time() - start_thread,
    )


def bench_recording(
    make: Callable[[], gym.Env[Any, Any]],
    label: str,
    turns: int,
    *,
    options: dict[str, Any],
    render_bare: bool,
    folder: str,
    verdict: bool = True,
) -> list[Row]:
    """The recorder storing frames against the bare env, by wall clock, in turns.

    The bare env steps (and renders, with ``render_bare``) a turn of steps,
    then the recorded one the same actions, its frames flushed at the end of
    the turn, so that every frame of the turn is on disk; each turn gives a
    ratio, and the row its median. The encoding runs beside the env (the
    frame encoder process, or a worker thread): wall-clock time, not CPU
    time, is what the test waits for.
    """
    bare, recorded = make(), RecordTrajectory(make(), folder, **options)
    for env in (bare, recorded):
        env.reset(seed=0)
    bare.action_space.seed(0)
    warm = [bare.action_space.sample() for _ in range(20)]
    recorded_turn(bare, warm, render=render_bare, flush=lambda: None)
    recorded_turn(recorded, warm, render=False, flush=recorded.flush)
    ratios: dict[str, list[float]] = {"wall": [], "process": [], "thread": []}
    bare_times = []
    for _ in range(turns):
        actions = [bare.action_space.sample() for _ in range(TURN_STEPS * 5)]
        gc.collect()
        bare_figures = recorded_turn(bare, actions, render=render_bare, flush=lambda: None)
        gc.collect()
        figures = recorded_turn(recorded, actions, render=False, flush=recorded.flush)
        for kind, spent, bare_spent in zip(ratios, figures, bare_figures, strict=True):
            ratios[kind].append(spent / bare_spent)
        bare_times.append(bare_figures[0] / (TURN_STEPS * 5))
    recorded.close()
    bare.close()
    sizes = [path.stat().st_size for path in (Path(folder) / FRAMES_DIR).iterdir()]
    what = "step + render" if render_bare else "step"
    return _recording_rows(
        f"{label}: recorded with {_options(options)}",
        what,
        bare_times,
        ratios,
        sizes,
        verdict=verdict,
    )


def _recording_rows(
    label: str,
    what: str,
    bare_times: list[float],
    ratios: dict[str, list[float]],
    sizes: list[int],
    *,
    verdict: bool,
) -> list[Row]:
    """The recorder's rows: the wall-clock ratio (the target's), the CPU ratio, bytes.

    Without ``verdict`` (the rows on disk), the wall-clock ratio is a figure
    beside the target's row, and bytes are not repeated.
    """
    wall, process, thread = (
        statistics.median(ratios[kind]) for kind in ("wall", "process", "thread")
    )
    mean = statistics.mean(sizes)
    pong = label.startswith("Pong")  # the bytes target is Pong's
    wall_row = Row(
        f"{label}, against a bare {what}: wall-clock ratio"
        + (" (the target's: frames encoded beside the env)" if verdict else ""),
        f"bare {what} {statistics.median(bare_times) * 1e3:.3f} ms; CPU ratio "
        f"{process:.2f} (env thread + encoder), env thread's CPU ratio {thread:.2f}; "
        f"{len(sizes):,} frames, {mean:,.0f} bytes a frame",
        f"{wall:.2f}",
        "<= 1.3" if verdict else "-",
        wall <= 1.3 if verdict else None,
    )
    if not verdict:
        return [wall_row]
    return [
        wall_row,
        Row(
            f"{label}, against a bare {what}: CPU ratio (every thread and the encoder "
            "process: what the machine pays)",
            f"wall clock {wall:.2f}, env thread's CPU {thread:.2f}",
            f"{process:.2f}",
        ),
        Row(
            f"{label}: bytes per stored frame",
            f"mean {mean:,.0f}, max {max(sizes):,} bytes",
            f"{mean / KiB:.2f} KiB",
            "<= 2 KiB" if pong else "-",
            mean <= 2 * KiB if pong else None,
        ),
    ]


class Smudged(gym.ObservationWrapper[Any, Any, Any]):
    """The env's frames with a 4x4 block brightened: every frame differs from the bare env's."""

    def observation(self, observation: Any) -> Any:
        frame = np.array(observation)
        frame[100:104, 80:84] //= 2
        return frame


def bench_compare_recordings(
    make: Callable[[], gym.Env[Any, Any]], label: str, rounds: int, folder: str
) -> list[Row]:
    """compare() of two recordings of 1,000 frames that all differ (in 16 pixels), by pixels."""
    for name, env in (("golden", make()), ("actual", Smudged(make()))):
        recorder = RecordTrajectory(env, f"{folder}/{name}", images="frames")
        recorder.reset(seed=0)
        recorder.action_space.seed(0)
        for _ in range(1000):
            _, _, terminated, truncated, _ = recorder.step(recorder.action_space.sample())
            if terminated or truncated:
                recorder.reset()
        recorder.close()
    within = Tolerance().refine(max_diff_pixels=16)
    assert compare(f"{folder}/golden", f"{folder}/actual", within).equal

    def within_tolerance() -> None:
        compare(f"{folder}/golden", f"{folder}/actual", within)

    def exact() -> None:
        compare(f"{folder}/golden", f"{folder}/actual")

    times = _timed([within_tolerance, exact], rounds)
    return [
        Row(
            f"{label}: compare() of two recordings of 1,000 frames, every frame 16 pixels "
            f"apart, {name}",
            f"{statistics.median(spent):.3f} s (median of {rounds} rounds; both PNG files "
            "of each frame decoded and compared)",
            f"{statistics.median(spent):.3f} s",
            "<= 2 s",
            statistics.median(spent) <= 2.0,
        )
        for name, spent in zip(("within max_diff_pixels=16", "exact"), times, strict=True)
    ]


def _options(options: dict[str, Any]) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in options.items())


def bench_bytes(frames: list[np.ndarray[Any, Any]], label: str) -> list[Row]:
    """Bytes per stored frame, and what other zlib settings would give, for the record."""
    sizes = [len(encode_png(frame)) for frame in frames]
    mean = statistics.mean(sizes)
    rows = [
        Row(
            f"{label}: bytes per stored frame ({len(frames):,} frames)",
            f"mean {mean:,.0f}, median {statistics.median(sizes):,.0f}, max {max(sizes):,} "
            f"bytes; raw {frames[0].nbytes:,} bytes",
            f"{mean / KiB:.2f} KiB",
            "<= 2 KiB",
            mean <= 2 * KiB,
        )
    ]
    sample = frames[:: max(1, len(frames) // 100)]
    cells = []
    for name, options in (
        ("level 6 RLE (used)", {"compress_level": 6, "compress_type": 3}),
        ("level 1", {"compress_level": 1}),
        ("level 6", {"compress_level": 6}),
        ("level 9", {"compress_level": 9}),
    ):
        start = time.process_time()
        total = sum(len(_pillow_png(frame, options)) for frame in sample)
        spent = (time.process_time() - start) / len(sample)
        cells.append(f"{name} {total / len(sample):,.0f} B {spent * 1e3:.2f} ms")
    rows.append(Row(f"{label}: zlib settings compared", "; ".join(cells)))
    return rows


def _pillow_png(frame: np.ndarray[Any, Any], options: dict[str, int]) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(frame).save(buffer, format="PNG", optimize=False, **options)
    return buffer.getvalue()


def bench_compare(frames: list[np.ndarray[Any, Any]], label: str, rounds: int) -> list[Row]:
    """Comparing 1,000 frames: equal ones, differing ones, and read back from PNG first."""
    golden = [frames[index % len(frames)] for index in range(1000)]
    same = [frame.copy() for frame in golden]
    moved = [golden[(index + 1) % len(golden)] for index in range(len(golden))]
    stored = [encode_png(frame) for frame in golden]
    tolerance = PixelTolerance(pixel_atol=2, max_diff_pixels=10)

    def compare_all(actuals: list[np.ndarray[Any, Any]]) -> Callable[[], None]:
        def run() -> None:
            for expected, actual in zip(golden, actuals, strict=True):
                compare_frames(expected, actual, tolerance)

        return run

    def decode_and_compare() -> None:
        for data, actual in zip(stored, same, strict=True):
            compare_frames(decode_png(data, path="golden.png", expected_shape=actual.shape), actual)

    cases = {
        "equal frames": compare_all(same),
        "differing frames (the next step's)": compare_all(moved),
        "equal frames, the golden's decoded from PNG first": decode_and_compare,
    }
    times = _timed(list(cases.values()), rounds)
    differing = sum(not compare_frames(g, a).matches for g, a in zip(golden, moved, strict=True))
    return [
        Row(
            f"{label}: comparing 1,000 frames, {name}",
            f"{statistics.median(spent):.3f} s (median of {rounds} rounds)"
            + (f"; {differing:,} of them differ" if "differing" in name else ""),
            f"{statistics.median(spent):.3f} s",
            "<= 2 s",
            statistics.median(spent) <= 2.0,
        )
        for name, spent in zip(cases, times, strict=True)
    ]


def _timed(functions: list[Callable[[], Any]], rounds: int) -> list[list[float]]:
    """CPU seconds of each function in each round, taking turns (as benchmarks/run.py)."""
    times: list[list[float]] = [[] for _ in functions]
    for round_number in range(rounds):
        for offset in range(len(functions)):
            index = (round_number + offset) % len(functions)
            gc.collect()
            start = time.process_time()
            functions[index]()
            times[index].append(time.process_time() - start)
    return times


def machine() -> str:
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} cores, {model}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}, numpy {np.__version__}, Pillow {PIL.__version__}, "
        f"gymnasium {gym.__version__}"
    )


def print_table(rows: list[Row]) -> None:
    print("| measurement | ratio | target | met | figures |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row.measurement} | {row.ratio} | {row.target} | {row.verdict} | {row.figures} |")


def recording_rows(turns: int, tmpfs: Path) -> list[Row]:
    """The recorder's rows: Pong with images="frames", CartPole with render=True.

    Recorded into ``tmpfs`` (a memory-backed folder, as ``benchmarks/run.py``
    records: the recorder measured, not the disk), then into the system temp
    folder, whose rows give what a file a frame costs there too.
    """
    rows: list[Row] = []
    places = [("tmpfs", str(tmpfs))] if tmpfs.is_dir() else []
    for place, base in [*places, ("disk", tempfile.gettempdir())]:
        # The files of the rows before written back first: their write-back is
        # theirs to pay, not this row's.
        os.sync()
        with tempfile.TemporaryDirectory(dir=base) as folder:
            rows += _recording_rows_in(turns, folder, place, verdict=place == "tmpfs" or not places)
    return rows


def _recording_rows_in(turns: int, folder: str, place: str, *, verdict: bool) -> list[Row]:
    """The recorder's rows, its recordings in ``folder`` (on ``place``)."""
    rows: list[Row] = []
    if isinstance(make_pong(), str):
        rows.append(Row(f"Pong, {place}: recorded with images='frames'", f"skipped: {make_pong()}"))
    else:
        rows += bench_recording(
            lambda: gym.make(PONG),
            f"Pong, {place}",
            turns,
            options={"images": "frames"},
            render_bare=False,
            folder=f"{folder}/pong",
            verdict=verdict,
        )
    rows += bench_recording(
        lambda: gym.make(CARTPOLE, render_mode="rgb_array"),
        f"CartPole, {place}",
        turns,
        options={"render": True},
        render_bare=True,
        folder=f"{folder}/cartpole",
        verdict=verdict,
    )
    return rows


def compare_rows(rounds: int) -> list[Row]:
    """compare() of two recordings of 1,000 Pong frames (drawn ones without ale-py)."""
    pong = make_pong()
    make: Callable[[], gym.Env[Any, Any]] = (
        (lambda: gym.make(PONG)) if not isinstance(pong, str) else DrawnPong
    )
    label = "Pong" if not isinstance(pong, str) else "Pong (drawn)"
    with tempfile.TemporaryDirectory() as folder:
        return bench_compare_recordings(make, label, rounds, folder)


class DrawnPong(gym.Env[Any, int]):
    """Pong's frames drawn with numpy (:func:`drawn_pong_frame`), for a machine without ale-py."""

    observation_space = gym.spaces.Box(0, 255, (210, 160, 3), np.uint8)
    action_space = gym.spaces.Discrete(6)

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return drawn_pong_frame(0), {}

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.t += 1
        return drawn_pong_frame(self.t), 0.0, False, False, {}


def all_rows(quick: bool, tmpfs: Path) -> tuple[list[Row], str]:
    """Every row, in the order of the table; and where Pong's frames came from."""
    turns, rounds = (3, 1) if quick else (20, 5)
    rows: list[Row] = []
    pong = make_pong()
    if isinstance(pong, str):
        source = f"Pong-like frames drawn with numpy ({pong})"
        label = "Pong (drawn)"
        frames = [drawn_pong_frame(t) for t in range(turns * TURN_STEPS)]
        rows.append(Row(f"{label}: storing against a bare step", f"skipped: {pong}"))
    else:
        source = f"{PONG} (ale-py), its observations"
        label = "Pong"
        found, frames = bench_storing(pong, label, turns, render=False, target=1.3)
        rows += found
        pong.close()
    rows += bench_bytes(frames, label)
    cartpole = gym.make(CARTPOLE, render_mode="rgb_array")
    found, _ = bench_storing(cartpole, "CartPole render", turns, render=True, target=1.3)
    rows += found
    cartpole.close()
    rows += bench_compare(frames, label, rounds)
    del frames  # 200 MB of Pong frames, not held while the recorder is measured
    gc.collect()
    rows += recording_rows(turns // 2, tmpfs)
    rows += compare_rows(rounds)
    return rows, source


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="fewer frames, for a smoke test")
    parser.add_argument(
        "--tmpfs",
        type=Path,
        default=Path("/dev/shm"),
        help="a memory-backed folder, to measure recording without the disk (default /dev/shm)",
    )
    parser.add_argument(
        "--only",
        choices=["recording", "compare-recordings"],
        help="run one group of rows: the recorder's, storing frames in the thread, comparing",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the rows as JSON, for benchmarks/run.py, instead of the table",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # CartPole's pygame, headless
    started = time.perf_counter()
    source = ""
    if args.only is None:
        rows, source = all_rows(args.quick, args.tmpfs)
    elif args.only == "recording":
        rows = recording_rows(3 if args.quick else 10, args.tmpfs)
    else:
        rows = compare_rows(1 if args.quick else 5)
    if args.json:
        print(json.dumps([dataclasses.asdict(row) for row in rows]))
        return 0
    print(f"machine: {machine()}")
    if source:
        print(f"frames: {source}")
    print()
    print_table(rows)
    print()
    print(f"total time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
