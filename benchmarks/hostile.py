"""Hostile goldens at full size: the time and memory of what a pull request could hold.

Run from the repository root::

    python benchmarks/hostile.py            # 1 GiB bombs, a 200 MB golden: a few minutes
    python benchmarks/hostile.py --quick    # 64 MiB bombs, a 20 MB golden
    python benchmarks/hostile.py --only episodes --only keys   # the rows of those cases

Besides the bombs and updates: goldens of millions of header-only episodes
(peak memory of pytest, ``show`` and ``diff``: flat in the number of
episodes), and the explanation of a record of tens of thousands of differing
info keys (time: linear in their number).

The test suite checks the same cases small, against a lowered limit
(``tests/plugin/test_hostile_goldens.py``); here they run at the size of an
attack, against the defaults. Each case is one fresh process: a ``pytest`` run
of a small project whose golden was replaced, or one ``update_golden`` call.
Times are wall-clock and CPU (user + system) of that process; memory is its
peak resident set (``ru_maxrss``). The script prints one table and fails on
nothing: ``docs/guarantees.md`` shows the figures.

To measure another checkout (the code before a change, say), put its
``src`` first on the path: ``PYTHONPATH=../other/src python benchmarks/hostile.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

MiB = 1 << 20
GiB = 1 << 30

TEST_FILE = textwrap.dedent(
    """
    import gymnasium as gym

    def test_cartpole(record_trajectory):
        env = record_trajectory(gym.make("CartPole-v1"))
        env.action_space.seed(0)
        for episode in range(2):
            env.reset(seed=episode)
            for _ in range(5):
                env.step(env.action_space.sample())
    """
)
GOLDEN = Path("goldens/test_bomb/test_cartpole/CartPole-v1")
# A step record as the recorder writes it: valid, so every line is parsed.
STEP_LINE = (
    b'{"action":0,"event":"step","info":{},"obs":[0.0,0.0,0.0,0.0],"reward":1.0,"t":6,'
    b'"terminated":false,"truncated":false}\n'
)

# Run in a fresh process: its children's peak memory is the measured run's alone.
_MEASURE = textwrap.dedent(
    """
    import json, resource, subprocess, sys, time
    start = time.perf_counter()
    done = subprocess.run(sys.argv[2:], cwd=sys.argv[1], capture_output=True, text=True)
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss": usage.ru_maxrss * 1024,
        "code": done.returncode,
        "out": done.stdout[-4000:] + done.stderr[-2000:],
    }))
    """
)

_UPDATE = "from pathlib import Path; import sys; from gym_goldens.plugin.store import update_golden; update_golden(Path(sys.argv[1]), Path(sys.argv[2]))"  # noqa: E501


@dataclasses.dataclass
class Run:
    """One measured process."""

    wall: float
    cpu: float
    rss: int
    code: int
    out: str

    def verdict(self, wanted: list[str]) -> str:
        """The first of ``wanted`` found in the output (a verdict line), else the exit code."""
        if self.code == -1:
            return self.out  # stopped at the timeout
        for text in wanted:
            if text in self.out:
                return text
        return f"exit code {self.code}"


def measure(cwd: Path, command: list[str], timeout: float) -> Run:
    # A session of its own, so that a run stopped at the timeout is stopped whole.
    with subprocess.Popen(
        [sys.executable, "-c", _MEASURE, str(cwd), *command],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as process:
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return Run(timeout, float("nan"), 0, -1, f"stopped after {timeout:.0f} s")
    return Run(**json.loads(output))


def gzip_bomb(path: Path, head: bytes, filler: bytes, size: int) -> None:
    """``head``, then ``size`` bytes (or a line more) of ``filler`` lines, in gzip members.

    One member of about 1 MiB is compressed once and written again and again:
    a few kB on disk for each MiB it expands to.
    """
    per_member = MiB // len(filler)
    lines = -(-size // len(filler))
    member = gzip.compress(filler * per_member, mtime=0)
    with path.open("wb") as handle:
        handle.write(gzip.compress(head, mtime=0))
        for _ in range(lines // per_member):
            handle.write(member)
        handle.write(gzip.compress(filler * (lines % per_member), mtime=0))


def make_project(folder: Path) -> bytes:
    """A project with one golden test and its golden; the golden's bytes."""
    folder.mkdir()
    (folder / "test_bomb.py").write_text(TEST_FILE)
    (folder / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--update-goldens"],
        cwd=folder,
        check=True,
        capture_output=True,
    )
    return (folder / GOLDEN / "trajectory.jsonl").read_bytes()


def bench_bombs(work: Path, size: int, timeout: float, *, raised: bool) -> list[list[str]]:
    rows = []
    option = ["-o", f"goldens_max_decompressed_size={2 * size // MiB} MiB"]
    # Past the default limit (with the golden's own lines), then within a raised one.
    cases = [
        ("step lines", STEP_LINE, []),
        ("step lines", STEP_LINE, option),
        ("blank lines", b"\n", []),
        ("blank lines", b"\n", option),
    ]
    if not raised:
        cases = [case for case in cases if not case[2]]
    verdicts = ["golden unreadable", "golden mismatch", "1 passed", "1 failed"]
    for number, (kind, filler, options) in enumerate(cases):
        project = work / f"bomb-{number}"
        golden = make_project(project)
        plain = project / GOLDEN / "trajectory.jsonl"
        bomb = plain.with_name("trajectory.jsonl.gz")
        gzip_bomb(bomb, golden, filler, size)
        plain.unlink()
        run = measure(project, [sys.executable, "-m", "pytest", "-q", *options], timeout)
        limit = f" (limit raised: {options[1].split('=')[1]})" if options else ""
        rows.append(
            [
                f"pytest, the golden + {size // MiB:,} MiB of {kind}{limit}",
                f"{bomb.stat().st_size / MiB:.1f} MB gzip",
                run.verdict(verdicts),
                f"{run.wall:.1f}",
                f"{run.cpu:.1f}",
                f"{run.rss / MiB:.0f}",
            ]
        )
        shutil.rmtree(project)
    return rows


def record_pendulum(folder: Path, steps: int) -> None:
    import gymnasium as gym

    from gym_goldens import RecordTrajectory

    env = RecordTrajectory(gym.make("Pendulum-v1"), folder)
    env.action_space.seed(0)
    env.reset(seed=0)
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    env.close()


def bench_update(work: Path, large: int) -> list[list[str]]:
    """``update_golden`` of a 2 MB recording and of one ``large`` times as big."""
    base = work / "recording"
    record_pendulum(base, 10_000)
    content = (base / "trajectory.jsonl").read_bytes()
    rows = []
    for copies in (1, large):
        source = work / f"recording-{copies}"
        source.mkdir()
        with (source / "trajectory.jsonl").open("wb") as handle:
            for _ in range(copies):
                handle.write(content)
        size = copies * len(content)
        target = work / f"golden-{copies}"
        for action in ("create", "replace"):
            if action == "replace":
                # Another golden in its place (one byte changed): compared, then replaced.
                changed = bytearray(content)
                changed[len(changed) // 2] ^= 1
                (target / "trajectory.jsonl").write_bytes(bytes(changed) * copies)
            run = measure(work, [sys.executable, "-c", _UPDATE, str(source), str(target)], 900)
            if run.code != 0:
                raise RuntimeError(run.out)
            rows.append(
                [
                    f"update_golden, {action} a {size / MiB:.0f} MB golden",
                    f"{size / MiB:.0f} MB",
                    "written" if (target / "trajectory.jsonl").stat().st_size == size else "?",
                    f"{run.wall:.1f}",
                    f"{run.cpu:.1f}",
                    f"{run.rss / MiB:.0f}",
                ]
            )
        shutil.rmtree(source)
        shutil.rmtree(target)
    return rows


# The smallest header a reader takes: an episode of one line, 57 bytes.
BARE_HEADER = b'{"event":"header","format":"gym-goldens","version":"2.1"}\n'


def episode_bomb(path: Path, episodes: int) -> None:
    """``episodes`` header-only episodes: gzip-compressed for ``.gz``, else plain."""
    block = BARE_HEADER * 10_000
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wb") as handle:
        for _ in range(episodes // 10_000):
            handle.write(block)
        handle.write(BARE_HEADER * (episodes % 10_000))


def bench_episodes(work: Path, counts: list[int], timeout: float) -> list[list[str]]:
    """Peak memory of pytest, ``show`` and ``diff`` on goldens of many header-only episodes.

    What a reader keeps per episode must not grow with their number: the
    peak should be flat from the smallest count to the largest (the last
    column is each peak over the smallest count's of the same case).
    """
    rows = []
    project = work / "episodes"
    make_project(project)
    golden = project / GOLDEN
    actual = work / "episodes-actual"
    shutil.copytree(golden, actual)
    cli = [sys.executable, "-m", "gym_goldens"]
    verdicts = ["golden mismatch", "episodes:", "1 failed", "1 passed"]
    smallest: dict[str, int] = {}  # each case's peak at the smallest count
    files = [("trajectory.jsonl.gz", count) for count in counts]
    files.append(("trajectory.jsonl", counts[-1]))  # a plain file: the same bound
    for name, count in files:
        for old in golden.iterdir():
            old.unlink()
        episode_bomb(golden / name, count)
        size = (golden / name).stat().st_size
        on_disk = f"{size / MiB:.1f} MB" if size >= MiB else f"{size / 1024:.0f} KB"
        for case, command in [
            ("pytest", [sys.executable, "-m", "pytest", "-q"]),
            ("gym-goldens show", [*cli, "show", str(golden)]),
            ("gym-goldens diff", [*cli, "diff", str(golden), str(actual)]),
        ]:
            run = measure(project, command, timeout)
            ratio = run.rss / smallest.setdefault(case, run.rss)
            rows.append(
                [
                    f"{case}, {count:,} header-only episodes ({name})",
                    on_disk,
                    run.verdict(verdicts),
                    f"{run.wall:.1f}",
                    f"{run.cpu:.1f}",
                    f"{run.rss / MiB:.0f} (x{ratio:.2f})",
                ]
            )
    return rows


def bench_keys(counts: list[int]) -> list[list[str]]:
    """The time to explain a record whose info has ``n`` differing keys, for each ``n``.

    Linear in the keys: each time over the smallest count's should grow as
    the count does (x2, x4, x8), not as its square.
    """
    from gym_goldens.comparison.explain import explain
    from gym_goldens.comparison.tolerance import Tolerance

    rows = []
    root = Tolerance().tree()
    base: float | None = None
    for count in counts:
        golden = {"event": "step", "info": {f"k{i}": float(i) for i in range(count)}, "t": 1}
        actual = {"event": "step", "info": {f"k{i}": i + 0.5 for i in range(count)}, "t": 1}
        start, cpu = time.perf_counter(), time.process_time()
        found = explain(golden, actual, root)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        base = base or wall
        rows.append(
            [
                f"explain a step of {count:,} differing info keys",
                f"{len(json.dumps(golden)) / MiB:.1f} MB",
                f"{len(found)} differences listed (x{wall / base:.1f} the time of {counts[0]:,})",
                f"{wall:.2f}",
                f"{cpu:.2f}",
                "",
            ]
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="64 MiB bombs, a 20 MB golden")
    parser.add_argument(
        "--only",
        choices=["bombs", "update", "episodes", "keys"],
        action="append",
        help="run only these (repeatable)",
    )
    parser.add_argument(
        "--timeout", type=float, default=900.0, help="stop a pytest run after this many seconds"
    )
    parser.add_argument(
        "--default-limit-only",
        action="store_true",
        help="leave out the runs with a raised limit (for a checkout without the ini setting)",
    )
    args = parser.parse_args(argv)
    only = set(args.only or ["bombs", "update", "episodes", "keys"])
    started = time.perf_counter()
    rows = [["case", "on disk", "verdict", "wall s", "CPU s", "peak RSS MiB"]]
    with tempfile.TemporaryDirectory(prefix="gym-goldens-hostile-") as tmp:
        work = Path(tmp)
        if "bombs" in only:
            size = 64 * MiB if args.quick else GiB
            rows += bench_bombs(work, size, args.timeout, raised=not args.default_limit_only)
        if "update" in only:
            rows += bench_update(work, 10 if args.quick else 125)
        if "episodes" in only:
            counts = [10_000, 100_000] if args.quick else [100_000, 1_000_000, 2_000_000]
            rows += bench_episodes(work, counts, args.timeout)
        if "keys" in only:
            rows += bench_keys([10_000, 20_000] if args.quick else [10_000, 20_000, 40_000, 80_000])
    print(
        f"machine: {os.cpu_count()} cores; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}"
    )
    print(f"command: python benchmarks/hostile.py{' --quick' if args.quick else ''}")
    print()
    print("| " + " | ".join(rows[0]) + " |")
    print("|" + "|".join(" --- " for _ in rows[0]) + "|")
    for row in rows[1:]:
        print("| " + " | ".join(row) + " |")
    print()
    print(f"total time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
