"""Killing ``pytest --update-goldens`` leaves every golden old or new, never partial.

A golden is one file, ``trajectory.jsonl``, holding every episode: each is
replaced whole, so after a kill all the episodes of a golden are old or all
are new. The update runs in a subprocess that is killed with SIGKILL at many
points, picked from file events, not from timing: the update's conftest sends
SIGKILL to its own process just after it has renamed the k-th temporary file
over a golden, for every k, and just before it renames the n-th (written and
flushed in full, but not yet in place). Meanwhile the test watches the goldens
dir and checks every file it sees there is old or new.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import hypothesis  # noqa: F401 - imported once here, not in every pytester run
import pytest

import gym_goldens.comparison.engine
import gym_goldens.plugin.check
import gym_goldens.present.report  # noqa: F401
from gym_goldens.format.layout import UPDATE_LOCK, this_writer
from gym_goldens.format.reader import read_recording

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

# The recordings depend on the seed in seed.txt, and so does their number of
# episodes: an update rewrites every golden, some with more episodes, some
# with fewer.
ENV_IDS = [
    "CartPole-v1",
    "Acrobot-v1",
    "MountainCar-v0",
    "MountainCarContinuous-v0",
    "Pendulum-v1",
    "FrozenLake8x8-v1",
]
TEST_FILE = """
from pathlib import Path

import gymnasium as gym
import pytest

SEED = int(Path(__file__).with_name("seed.txt").read_text())
ENV_IDS = []


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_rollout(record_trajectory, env_id):
    env = record_trajectory(gym.make(env_id))
    env.action_space.seed(SEED)
    # Seed 1 records one more episode than seed 0, or one fewer for Acrobot.
    episodes = 3 - SEED if env_id == "Acrobot-v1" else 2 + SEED
    for episode in range(episodes):
        env.reset(seed=SEED * 100 + episode)
        for _ in range(150):
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            if terminated or truncated:
                break


def test_seed_independent(record_trajectory):
    env = record_trajectory(gym.make("FrozenLake-v1"))
    env.reset(seed=0)
    env.step(1)
""".replace("ENV_IDS = []", f"ENV_IDS = {ENV_IDS!r}")

# The update's own kill switch: SIGKILL just before or just after the n-th
# rename of a temporary file over a golden (GOLDENS_KILL=before:n or after:n).
CONFTEST = """
import os
import signal

WHEN, _, AT = os.environ.get("GOLDENS_KILL", "").partition(":")
renames = 0
rename = os.replace


def replace_or_die(source, target, *args, **kwargs):
    global renames
    if not os.fspath(source).endswith(".tmp"):
        return rename(source, target, *args, **kwargs)
    renames += 1
    if WHEN == "before" and renames == int(AT):
        os.kill(os.getpid(), signal.SIGKILL)
    rename(source, target, *args, **kwargs)
    if WHEN == "after" and renames == int(AT):
        os.kill(os.getpid(), signal.SIGKILL)


if WHEN:
    os.replace = replace_or_die
"""

# Keep the subprocess lean: no plugin it does not need.
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
PYTEST += ["-p", "no:hypothesispytest", "--update-goldens"]


def snapshot(goldens: Path) -> dict[str, bytes]:
    return {
        p.relative_to(goldens).as_posix(): p.read_bytes()
        for p in goldens.rglob("trajectory.jsonl")
        if p.is_file()
    }


def leftovers(goldens: Path) -> list[Path]:
    return list(goldens.rglob(".trajectory.jsonl.*.tmp")) + list(goldens.rglob(".episode_*.tmp"))


class Watcher:
    """Polls the goldens dir; checks every golden file it sees is old or new.

    Files are read again only when their inode, size or mtime changed, so
    a file caught half-written (the update writing in place) is caught here,
    not only after the kill.
    """

    def __init__(self, goldens: Path, old: dict[str, bytes], new: dict[str, bytes]) -> None:
        self.goldens = goldens
        self.old, self.new = old, new
        self.seen = self._identities()
        self.violations: list[str] = []

    def look(self) -> None:
        """Check the golden files that changed since the last look."""
        now = self._identities()
        for path, ident in now.items():
            if self.seen.get(path) != ident:
                self._check(path)
        self.seen = now

    def _check(self, path: str) -> None:
        try:
            content = Path(path).read_bytes()
        except FileNotFoundError:
            return  # removed as the update went on
        name = Path(path).relative_to(self.goldens).as_posix()
        if content not in (self.old.get(name), self.new.get(name)):
            self.violations.append(f"{name}: {len(content)} bytes, neither old nor new")

    def _identities(self) -> dict[str, tuple[int, int, int]]:
        found = {}
        for current, _, names in os.walk(self.goldens):
            for name in names:
                if name == "trajectory.jsonl":
                    path = os.path.join(current, name)
                    try:
                        stat = os.stat(path)
                    except FileNotFoundError:
                        continue
                    found[path] = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        return found


def run_killed(cwd: Path, env: dict[str, str], kill: str, watcher: Watcher) -> bool:
    """Run the update with the kill switch set to ``kill``, watching its files.

    Returns whether the update died by SIGKILL.
    """
    process = subprocess.Popen(
        PYTEST,
        cwd=cwd,
        env={**env, "GOLDENS_KILL": kill},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while process.poll() is None:
        watcher.look()
        time.sleep(0.0005)  # polling interval only; nothing is timed
    watcher.look()
    return process.wait() == -signal.SIGKILL


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_update=TEST_FILE)
    pytester.makeconftest(CONFTEST)
    return pytester


def test_killed_update_leaves_each_golden_old_or_new(project: pytest.Pytester) -> None:
    root = project.path
    goldens = root / "goldens"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    seed = root / "seed.txt"

    seed.write_text("0")
    subprocess.run(PYTEST, cwd=root, env=env, check=True, capture_output=True)
    old = snapshot(goldens)
    saved_old = root / "saved-old-goldens"
    shutil.copytree(goldens, saved_old)

    seed.write_text("1")
    subprocess.run(PYTEST, cwd=root, env=env, check=True, capture_output=True)
    new = snapshot(goldens)
    changed = sorted(name for name in new if old.get(name) != new[name])
    assert len(changed) >= 6, "the update must write many files for the kills to mean much"
    assert set(old) == set(new)
    counts = {
        name: (len(read_recording(saved_old / name)), len(read_recording(goldens / name)))
        for name in changed
    }
    assert any(before < after for before, after in counts.values()), "episodes are added"
    assert any(before > after for before, after in counts.values()), "and removed"

    # Kill points: just after the k-th golden file is replaced, for every k
    # but the last, and just before the first, a middle and the last rename.
    kill_points = [f"after:{k}" for k in range(1, len(changed))]
    kill_points += [f"before:{n}" for n in sorted({1, len(changed) // 2 + 1, len(changed)})]
    outcomes: list[str] = []
    for label in kill_points:
        shutil.rmtree(goldens)
        shutil.copytree(saved_old, goldens)
        watcher = Watcher(goldens, old, new)
        killed = run_killed(root, env, label, watcher)
        left = len(leftovers(goldens))
        assert left == (1 if label.startswith("before") else 0), f"temporary files ({label})"

        assert watcher.violations == [], label
        state = snapshot(goldens)
        for name, content in state.items():
            assert content in (old.get(name), new.get(name)), f"{name} is partial ({label})"
            for _ in read_recording(goldens / name):  # parses every episode in full
                pass
        updated = sum(1 for name, content in state.items() if content == new.get(name))
        when, _, at = label.partition(":")
        renamed = int(at) if when == "after" else int(at) - 1
        assert updated == renamed + len(new) - len(changed), label
        outcomes.append(f"{label}: killed={killed}, new content in {updated}/{len(new)}")
    # Every kill landed before the update finished, so each state above was
    # a real interruption.
    assert all("killed=True" in outcome for outcome in outcomes), outcomes

    # The next update completes the job and removes any temporary file left.
    subprocess.run(PYTEST, cwd=root, env=env, check=True, capture_output=True)
    assert snapshot(goldens) == new
    assert leftovers(goldens) == []


def test_a_leftover_temporary_file_is_ignored_then_removed(project: pytest.Pytester) -> None:
    (project.path / "seed.txt").write_text("0")
    project.runpytest("--update-goldens").assert_outcomes(passed=len(ENV_IDS) + 1)
    folder = project.path / "goldens/test_update/test_rollout[CartPole-v1]/CartPole-v1"
    leftover = folder / ".trajectory.jsonl.k2j4h1.tmp"
    # What a killed update leaves: the first part of a new golden; and one of
    # an update by a gym-goldens of format 1.
    leftover.write_bytes((folder / "trajectory.jsonl").read_bytes()[:1000])
    old_leftover = folder / ".episode_00000.jsonl.x81ka0.tmp"
    old_leftover.write_bytes(b'{"event":"hea')

    check = project.runpytest()
    check.assert_outcomes(passed=len(ENV_IDS) + 1)
    assert leftover.exists(), "a check never writes or removes anything"

    update = project.runpytest("--update-goldens")
    update.assert_outcomes(passed=len(ENV_IDS) + 1)
    update.stdout.fnmatch_lines([f"goldens: {len(ENV_IDS) + 1} kept"])
    assert not leftover.exists()
    assert not old_leftover.exists()
    assert leftovers(project.path / "goldens") == []


@pytest.fixture
def updated(project: pytest.Pytester) -> pytest.Pytester:
    """The project with its goldens recorded."""
    (project.path / "seed.txt").write_text("0")
    project.runpytest("--update-goldens").assert_outcomes(passed=len(ENV_IDS) + 1)
    return project


def _temporary_of(folder: Path, pid: int) -> Path:
    """A temporary file of a write by process ``pid`` of this host, as the writer names it."""
    host, _ = this_writer()
    path = folder / f".trajectory.jsonl.{host}-{pid}.a1b2c3.tmp"
    path.write_bytes(b'{"event":"header"')
    return path


def test_an_update_never_removes_a_file_another_live_process_is_writing(
    updated: pytest.Pytester,
) -> None:
    folder = updated.path / "goldens" / "test_update" / "test_rollout[CartPole-v1]" / "CartPole-v1"
    # Another update, still writing this very golden.
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        in_flight = _temporary_of(folder, writer.pid)
        (updated.path / "seed.txt").write_text("1")
        updated.runpytest("--update-goldens").assert_outcomes(passed=len(ENV_IDS) + 1)
        assert in_flight.exists(), "an update removed a file another process was writing"
    finally:
        writer.kill()
        writer.wait()
    # Its writer gone, the next run that writes goldens removes it, wherever it is.
    updated.runpytest("--update-goldens", "-k", "seed_independent").stdout.fnmatch_lines(
        ["removed 1 temporary file left by interrupted updates"]
    )
    assert not in_flight.exists()


def test_leftovers_of_any_folder_go_at_the_start_of_a_run_that_writes_goldens(
    updated: pytest.Pytester,
) -> None:
    folder = updated.path / "goldens" / "test_update" / "test_rollout[Pendulum-v1]" / "Pendulum-v1"
    writer = subprocess.Popen([sys.executable, "-c", "pass"])
    writer.wait()  # a writer of this host that is gone
    dead = _temporary_of(folder, writer.pid)
    older = folder / ".trajectory.jsonl.k2j4h1.tmp"  # an older release's name: no owner
    older.write_bytes(b"half")
    # A plain run does not write goldens: it removes nothing.
    updated.runpytest("-k", "seed_independent").assert_outcomes(passed=1)
    assert dead.exists()
    assert older.exists()
    # An update of another test only: the leftovers go all the same.
    updated.runpytest("--update-goldens", "-k", "seed_independent").stdout.fnmatch_lines(
        ["removed 2 temporary files left by interrupted updates"]
    )
    assert not dead.exists()
    assert not older.exists()


def test_the_goldens_folder_keeps_leftovers_out_of_git(updated: pytest.Pytester) -> None:
    gitignore = updated.path / "goldens" / ".gitignore"
    assert ".*.tmp" in gitignore.read_text().splitlines()
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed: the .gitignore is checked, not git's reading of it")
    subprocess.run([git, "init", "-q"], cwd=updated.path, check=True)
    leftover = "goldens/test_update/test_seed_independent/CartPole-v1/.trajectory.jsonl.h-1.x.tmp"
    golden = "goldens/test_update/test_seed_independent/CartPole-v1/trajectory.jsonl"
    ignored = subprocess.run(
        [git, "check-ignore", "--no-index", leftover, golden],
        cwd=updated.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ignored.stdout.split() == [leftover]
    # A .gitignore of the user's own is left as it is.
    gitignore.write_text("# mine\n")
    updated.runpytest("--update-goldens", "-k", "seed_independent").assert_outcomes(passed=1)
    assert gitignore.read_text() == "# mine\n"


def test_two_updates_at_once_both_finish_cleanly(updated: pytest.Pytester) -> None:
    (updated.path / "seed.txt").write_text("1")
    command = [sys.executable, "-m", "pytest", "--update-goldens", "-p", "no:cacheprovider", "-q"]
    runs = [
        subprocess.Popen(
            command, cwd=updated.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        for _ in range(2)
    ]
    for run in runs:
        output, _ = run.communicate(timeout=120)
        assert run.returncode == 0, output
        assert "Traceback" not in output
    assert leftovers(updated.path / "goldens") == []
    updated.runpytest().assert_outcomes(passed=len(ENV_IDS) + 1)


# Two updates of one golden at once, held at chosen points by file events:
# GOLDENS_HOLD=<folder> makes an update stop just after it renamed a new
# trajectory.jsonl.gz into place (before it removes the old trajectory.jsonl),
# say so in <folder>/installed and go on once <folder>/go exists;
# GOLDENS_TELL=<folder> makes an update that finds the golden locked by
# another say so in <folder>/waiting.
HOLD_CONFTEST = """
import fcntl
import os
import time
from pathlib import Path

HOLD = os.environ.get("GOLDENS_HOLD")
TELL = os.environ.get("GOLDENS_TELL")
held_rename = os.replace
held_flock = fcntl.flock


def replace_and_hold(source, target, *args, **kwargs):
    held_rename(source, target, *args, **kwargs)
    if os.fspath(source).endswith(".tmp") and os.fspath(target).endswith(".jsonl.gz"):
        Path(HOLD, "installed").touch()
        while not Path(HOLD, "go").exists():
            time.sleep(0.005)


def flock_and_tell(descriptor, operation):
    try:
        return held_flock(descriptor, operation)
    except BlockingIOError:
        Path(TELL, "waiting").touch()
        raise


if HOLD:
    os.replace = replace_and_hold
if TELL:
    fcntl.flock = flock_and_tell
"""

ONE_TEST = """
import gymnasium as gym


def test_cartpole(record_trajectory):
    env = record_trajectory(gym.make("CartPole-v1"))
    env.reset(seed=0)
    for _ in range(5):
        env.step(0)
"""

GOLDEN = Path("goldens/test_one/test_cartpole/CartPole-v1")


@pytest.fixture
def one_golden(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project of one test whose golden is recorded plain (trajectory.jsonl)."""
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_one=ONE_TEST)
    pytester.makeconftest(CONFTEST + HOLD_CONFTEST)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    assert sorted(p.name for p in (pytester.path / GOLDEN).iterdir()) == ["trajectory.jsonl"]
    return pytester


def wait_for(event: Path, process: subprocess.Popen[str]) -> None:
    """Wait until ``event`` exists, or ``process`` has ended."""
    while not event.exists() and process.poll() is None:
        time.sleep(0.005)  # polling interval only; nothing is timed


def test_updates_with_and_without_compression_at_once_lose_nothing(
    one_golden: pytest.Pytester, tmp_path: Path
) -> None:
    events = tmp_path / "events"
    events.mkdir()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}

    def start(*options: str, **extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*PYTEST, *options],
            cwd=one_golden.path,
            env={**env, **extra},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    compressing = start("-o", "goldens_compress=true", GOLDENS_HOLD=str(events))
    wait_for(events / "installed", compressing)
    plain = start(GOLDENS_TELL=str(events))
    wait_for(events / "waiting", plain)
    (events / "go").touch()
    outputs = [run.communicate(timeout=120)[0] for run in (compressing, plain)]

    assert [run.returncode for run in (compressing, plain)] == [0, 0], outputs
    folder = one_golden.path / GOLDEN
    assert sorted(p.name for p in folder.iterdir()) == ["trajectory.jsonl"], outputs
    assert len(read_recording(folder)) == 1
    one_golden.runpytest().assert_outcomes(passed=1)


def test_an_update_killed_between_the_two_forms_leaves_a_readable_golden(
    one_golden: pytest.Pytester,
) -> None:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "GOLDENS_KILL": "after:1"}
    compress = ["-o", "goldens_compress=true"]
    # Killed just after the .gz is renamed into place, before the .jsonl goes.
    killed = subprocess.run([*PYTEST, *compress], cwd=one_golden.path, env=env, check=False)
    assert killed.returncode == -signal.SIGKILL
    folder = one_golden.path / GOLDEN
    # And the lock file it held (which no process holds now).
    assert sorted(p.name for p in folder.iterdir()) == [
        UPDATE_LOCK,
        "trajectory.jsonl",
        "trajectory.jsonl.gz",
    ]

    # Either form is a whole golden (old or new): the check reads one of them.
    check = one_golden.runpytest()
    check.assert_outcomes(passed=1)
    check.stdout.fnmatch_lines(["goldens: 1 matched"])

    # The next update with the same settings finishes the job, and takes
    # the lock file over.
    one_golden.runpytest("--update-goldens", *compress).assert_outcomes(passed=1)
    assert sorted(p.name for p in folder.iterdir()) == ["trajectory.jsonl.gz"]
    one_golden.runpytest().assert_outcomes(passed=1)
