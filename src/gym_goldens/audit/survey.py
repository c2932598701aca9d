"""``gym-goldens audit``: every selected env of a package checked for determinism.

For each env id and seed, the seeded rollout (:func:`gym_goldens.rollout`:
``reset(seed=seed)`` then the seeded action space sampled, also when the env
builds a new action space in ``reset``) is recorded three times:

- run 1 and run 2 in this process, each on a fresh env from ``gym.make``:
  they differ when the env draws from an unseeded source (``np.random``,
  ``random``), reads the clock, or keeps state across envs;
- run 3 in a fresh Python process with another ``PYTHONHASHSEED``: it alone
  differs when the env iterates over a set of strings. One such process (a
  :class:`~gym_goldens.record.fresh.FreshWorker`) records env after env, for
  this process or each worker, so that an audit pays few interpreter starts;
  one that an env ends or that runs out of time is replaced.

Run 1 is compared with runs 2 and 3 by the plugin's comparison, exactly by
default, and the first difference is reported as ``--goldens-determinism``
reports it; the recordings of a nondeterministic env are kept. Then
gymnasium's ``check_env`` runs on the env's unwrapped env. An env that meets
a missing optional dependency (by the rule of
:func:`gym_goldens.audit.registry.missing_dependency`) is skipped.

PettingZoo's envs (``settings.pettingzoo``, ids such as ``classic/rps_v2``)
are audited the same way, their AEC env (``env()``) recorded agent by agent;
PettingZoo's ``api_test`` takes the place of ``check_env`` (``settings.api_test``).

With ``jobs`` above 1 the envs are audited in spawned worker processes, each
of which imports the modules that register the envs itself (a spawned
process starts with gymnasium's registry alone), and keeps its own fresh
process. An env that ends its worker's interpreter is an error, and only it:
the envs the pool had not finished are audited again, each in a worker of its own.
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import contextlib
import dataclasses
import importlib
import io
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, SupportsFloat

import gymnasium as gym
from gymnasium.utils.env_checker import check_env

from gym_goldens.audit.pettingzoo import make_pettingzoo_env
from gym_goldens.audit.registry import Selection, missing_dependency
from gym_goldens.comparison.engine import compare
from gym_goldens.comparison.result import Comparison
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.format.layout import run_dirname, seed_dirname
from gym_goldens.present.report import format_nondeterminism
from gym_goldens.present.text import uncoloured
from gym_goldens.present.verdicts import (
    CHECK_FAILED,
    DETERMINISTIC,
    ERROR,
    NONDETERMINISTIC,
    SKIPPED,
    AuditRow,
    RunDifference,
)
from gym_goldens.record.agent_recorders import record_agents
from gym_goldens.record.fresh import (
    MAX_OUTPUT_TAIL,
    Finished,
    FreshWorker,
    file_tail,
    other_hash_seed,
    serve,
)
from gym_goldens.record.rollouts import rollout
from gym_goldens.record.single import RecordTrajectory

__all__ = [
    "DEFAULT_TIMEOUT",
    "AuditSettings",
    "audit_env",
    "audit_envs",
    "audit_failed",
    "fresh_hash_seed",
    "serve_fresh",
]

_IN_PROCESS: Final = "in this process, on a fresh env from gym.make"
_FRESH_ONLY_HINT: Final = (
    "only the fresh process differs: the usual cause is iterating over a set (or a dict "
    "built from one) of strings, whose order follows PYTHONHASHSEED"
)
_DIED: Final = (
    "its worker process died while auditing it: the env ended the interpreter "
    "(a crash in native code, or os._exit)"
)
_MAX_ERROR_LINES: Final = 12
# What is kept of the fresh process's stderr: its end, whatever it writes.

_CHECK_NAMES: Final = {"check_env": "gymnasium's check_env", "api_test": "PettingZoo's api_test"}
DEFAULT_TIMEOUT: Final = 300.0
"""The seconds an env's audit may take by default (``--timeout``): far more than
a hundred steps of any env take, far less than a CI job's limit."""
# The fresh process: imports gym_goldens as installed, then takes this
# process's sys.path before importing the modules that register the envs.
_FRESH_CODE: Final = (
    "import sys; from gym_goldens.audit.survey import serve_fresh; "
    "sys.exit(serve_fresh(sys.argv[1]))"
)
# What the fresh process writes while it records an env, beside the env's runs.
_FRESH_STDERR: Final = "fresh-stderr"


@dataclasses.dataclass(frozen=True)
class AuditSettings:
    """How each env is audited.

    Attributes:
        seeds: The rollout's seeds; each is recorded in three runs.
        steps: Steps of each rollout.
        tolerance: How close runs must be; exact by default.
        check_env: Also run gymnasium's ``check_env`` on the unwrapped env.
        import_modules: The modules that register the envs, imported again
            by the fresh processes and the workers.
        timeout: The seconds an env's audit may take, all its runs and
            checks together; past them it is stopped and is an error. None
            for no limit. The runs in this process are stopped by SIGALRM
            (not on Windows; not an env stuck in native code that never
            returns to Python), the fresh process is killed.
        pettingzoo: The env ids are PettingZoo's names (``classic/rps_v2``,
            see :func:`~gym_goldens.audit.pettingzoo.select_pettingzoo`),
            whose AEC env (``env()``) is audited.
        api_test: Also run PettingZoo's ``api_test`` on each PettingZoo env.
    """

    seeds: tuple[int, ...] = (0,)
    steps: int = 100
    tolerance: Tolerance = dataclasses.field(default_factory=lambda: Tolerance(0.0, 0.0))
    check_env: bool = True
    import_modules: tuple[str, ...] = ()
    timeout: float | None = DEFAULT_TIMEOUT
    pettingzoo: bool = False
    api_test: bool = False

    @property
    def check(self) -> str | None:
        """The check run on each env after its runs: ``check_env``, ``api_test`` or None."""
        if self.pettingzoo:
            return "api_test" if self.api_test else None
        return "check_env" if self.check_env else None

    def describe(self, count: int, runs: int) -> str:
        """The audit in one line: what matched and how each env is checked."""
        exact = self.tolerance == Tolerance(0.0, 0.0)
        compared = "compared exactly" if exact else f"compared with {self.tolerance.describe()}"
        checked = {
            "check_env": "; gymnasium's check_env on each unwrapped env",
            "api_test": "; PettingZoo's api_test on each env",
        }.get(self.check or "", "")
        envs = f"{count} env{'s' if count != 1 else ''}"
        ready = f" ({runs} to run)" if runs != count else ""
        return (
            f"{envs}{ready}; seeds {', '.join(map(str, self.seeds))}; {self.steps} steps; each "
            f"seed recorded twice in this process and once in a fresh process "
            f"(PYTHONHASHSEED={fresh_hash_seed()}), {compared}{checked}"
        )

    def as_json(self) -> dict[str, Any]:
        """The settings as JSON-ready data."""
        return {
            "import_modules": list(self.import_modules),
            "seeds": list(self.seeds),
            "steps": self.steps,
            "tolerance": self.tolerance.describe(),
            "check_env": self.check_env,
            "pettingzoo": self.pettingzoo,
            "api_test": self.api_test,
            "fresh_process_hash_seed": fresh_hash_seed(),
            "timeout": self.timeout,
        }


def audit_failed(rows: Iterable[AuditRow]) -> bool:
    """Whether an env that ran is nondeterministic, failed ``check_env`` or erred."""
    return any(row.failed for row in rows)


def audit_envs(
    selection: Selection,
    settings: AuditSettings,
    *,
    jobs: int = 1,
    advance: Callable[[AuditRow], None] | None = None,
) -> list[AuditRow]:
    """Audit every env of ``selection``; one row per env, in the selection's order.

    An id with a missing dependency is ``skipped`` and one whose entry point
    fails to load is an ``error``, without running.

    Args:
        selection: The envs, from :func:`gym_goldens.audit.registry.select_envs`.
        settings: How each env is audited.
        jobs: Worker processes; 1 audits in this process.
        advance: Called with each row of an env that ran, as it is done.
    """
    rows: dict[str, AuditRow] = {}
    todo: list[str] = []
    for env in selection.envs:
        if env.kind == "skip":
            rows[env.id] = AuditRow(env.id, SKIPPED, reason=env.reason)
        elif env.kind == "error":
            rows[env.id] = AuditRow(env.id, ERROR, reason=env.reason)
        else:
            todo.append(env.id)
    for row in _run_all(todo, settings, jobs):
        rows[row.env_id] = row
        if advance is not None:
            advance(row)
    return [rows[env.id] for env in selection.envs]


def _run_all(todo: Sequence[str], settings: AuditSettings, jobs: int) -> Iterable[AuditRow]:
    if jobs <= 1 or len(todo) <= 1:
        with contextlib.closing(_FreshRuns(settings.import_modules)) as fresh:
            for env_id in todo:
                yield audit_env(env_id, settings, fresh)
        return
    # A Tolerance that has compared keeps compiled checks, which do not
    # pickle: the workers get a fresh copy.
    settings = dataclasses.replace(settings, tolerance=dataclasses.replace(settings.tolerance))
    unfinished: list[str] = []
    with _pool(min(jobs, len(todo)), settings) as pool:
        futures = {pool.submit(_audit_in_worker, env_id, settings): env_id for env_id in todo}
        for future in concurrent.futures.as_completed(futures):
            try:
                yield future.result()
            except concurrent.futures.process.BrokenProcessPool:
                unfinished.append(futures[future])
            except Exception as error:  # the worker could not start or send the row back
                reason = f"its worker process failed: {_error_text(error)}"
                yield AuditRow(futures[future], ERROR, reason=reason)
    # A worker died (an env crashed the interpreter) and took the pool with it:
    # each env it had not finished is audited again in a worker of its own, so
    # that only the env that crashes is an error.
    for env_id in sorted(unfinished):
        with _pool(1, settings) as alone:
            try:
                yield alone.submit(_audit_in_worker, env_id, settings).result()
            except concurrent.futures.process.BrokenProcessPool:
                yield AuditRow(env_id, ERROR, reason=_DIED)


def _pool(workers: int, settings: AuditSettings) -> concurrent.futures.ProcessPoolExecutor:
    # Spawned, not forked: a worker starts clean and registers the envs itself,
    # as the fresh processes do; forking a process that runs envs is not safe.
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker,
        initargs=(settings.import_modules, list(sys.path)),
    )


# The fresh process of a pool worker, reused for every env the worker audits.
# A worker process is a function the pool calls, env after env: its module is
# the one place that outlives a call.
_worker_fresh: list[_FreshRuns] = []


def _start_worker(import_modules: Sequence[str], path: Sequence[str]) -> None:
    sys.path[:] = list(path)
    _import_all(import_modules)
    _worker_fresh.append(_FreshRuns(tuple(import_modules)))


def _audit_in_worker(env_id: str, settings: AuditSettings) -> AuditRow:
    return audit_env(env_id, settings, _worker_fresh[0] if _worker_fresh else None)


class _RunError(Exception):
    """An env failed in one of the audit's steps; the message says where."""

    def __init__(self, message: str, steps: int = 0) -> None:
        super().__init__(message)
        self.steps = steps


class _MissingDependency(Exception):
    """The env needs an optional dependency that is not installed; the message says which."""


def _failed(message: str, error: BaseException, steps: int = 0) -> Exception:
    """The error to raise for ``error``: a missing dependency skips the env."""
    missing = missing_dependency(error)
    if missing is not None:
        return _MissingDependency(missing)
    return _RunError(f"{message}{_error_text(error)}", steps)


def audit_env(env_id: str, settings: AuditSettings, fresh: _FreshRuns | None = None) -> AuditRow:
    """Audit one env: three runs per seed compared, then ``check_env``.

    Recordings are kept (and named in the row) only when runs differ. An
    audit that takes longer than ``settings.timeout`` is stopped: an error row.
    What the env writes to this process's stderr (MuJoCo's warnings, at the
    file descriptor) goes in the row, shown under it, not amid the table.
    ``fresh`` records run 3 (reused from env to env); a process of its own if None.
    """
    with contextlib.ExitStack() as stack:
        if fresh is None:
            fresh = stack.enter_context(contextlib.closing(_FreshRuns(settings.import_modules)))
        with _captured_stderr() as written:
            row = _audit_env(env_id, settings, fresh)
    text = written.text()
    return dataclasses.replace(row, stderr=text) if text.strip() else row


class _Written:
    """What was written to a file descriptor, its end kept (see :func:`_captured_stderr`)."""

    def __init__(self) -> None:
        self.data = b""

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


@contextlib.contextmanager
def _captured_stderr() -> Iterator[_Written]:
    """File descriptor 2 sent to a temporary file for the block; its last bytes kept."""
    written = _Written()
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 2)
            try:
                yield written
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
                size = sink.seek(0, os.SEEK_END)
                sink.seek(max(size - MAX_OUTPUT_TAIL, 0))
                written.data = sink.read()
    finally:
        os.close(saved)


def _audit_env(env_id: str, settings: AuditSettings, runs: _FreshRuns) -> AuditRow:
    start = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="gym-goldens-audit-"))
    declared = _declared_nondeterministic(env_id)
    stage = _Stage()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fresh = runs.start(env_id, settings, root)
        try:
            with _time_limit(settings.timeout, stage):
                difference, check_failure = _audit_runs(env_id, settings, root, fresh, stage)
        except _MissingDependency as missing:
            shutil.rmtree(root, ignore_errors=True)
            return AuditRow(env_id, SKIPPED, reason=str(missing))
        except _RunError as error:
            shutil.rmtree(root, ignore_errors=True)
            return AuditRow(
                env_id,
                ERROR,
                steps=stage.steps + error.steps,
                seconds=time.perf_counter() - start,
                reason=str(error),
                warnings=_warning_texts(caught),
                nondeterministic_spec=declared,
            )
        finally:
            fresh.stop()
    if difference is not None:
        verdict = NONDETERMINISTIC
    else:
        verdict = DETERMINISTIC if check_failure is None else CHECK_FAILED
        shutil.rmtree(root, ignore_errors=True)
    return AuditRow(
        env_id,
        verdict,
        steps=stage.steps,
        seconds=time.perf_counter() - start,
        difference=difference,
        check_failure=check_failure,
        check=settings.check or "check_env",
        warnings=_warning_texts(caught),
        recordings=str(root) if difference is not None else None,
        nondeterministic_spec=declared,
    )


def _audit_runs(
    env_id: str, settings: AuditSettings, root: Path, fresh: _FreshRun, stage: _Stage
) -> tuple[RunDifference | None, str | None]:
    """The runs of every seed, compared, and ``check_env``: the first difference, the failure."""
    for seed in settings.seeds:
        for run in (1, 2):
            stage.now = f"seed {seed}, run {run} (in this process)"
            folder = _run_dir(root, seed, run)
            done = _record_run(env_id, seed, settings.steps, folder, pettingzoo=settings.pettingzoo)
            stage.steps += done if run == 1 else 0
    stage.now = f"run 3 (in a fresh process, PYTHONHASHSEED={fresh.hash_seed})"
    fresh.wait(stage.deadline)
    stage.now = "the comparison of the runs"
    difference = _first_difference(root, settings, fresh.hash_seed)
    if settings.check is not None:
        stage.now = _CHECK_NAMES[settings.check]
    return difference, _check(env_id, settings)


class _TimedOut(BaseException):
    """The audit of an env ran out of time.

    A BaseException, so that an env's own ``except Exception`` lets it by.
    """


class _Stage:
    """Where the audit of an env is, for the message of a timeout, and its steps so far."""

    def __init__(self) -> None:
        self.now = "the start"
        self.steps = 0
        self.deadline: float | None = None  # time.monotonic() of the timeout
        self.armed = False  # whether SIGALRM ends the audit


@contextlib.contextmanager
def _time_limit(seconds: float | None, stage: _Stage) -> Iterator[None]:
    """Stop what runs inside after ``seconds``, with a :class:`_RunError` that says where.

    This process's runs are stopped by SIGALRM, where there is one and this
    is the main thread (a worker's too); the fresh process is waited for
    until ``stage.deadline`` at most.
    """
    if seconds is None:
        yield
        return
    stage.deadline = time.monotonic() + seconds
    alarm = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if alarm:

        def ring(signum: int, frame: object) -> None:
            if stage.armed:  # not once the audit is over
                raise _TimedOut

        previous = signal.signal(signal.SIGALRM, ring)
        stage.armed = True
        outer, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _TimedOut:
        raise _RunError(
            f"stopped after {seconds:g} s, the time the audit of an env may take (--timeout), "
            f"during {stage.now}: it hangs, or needs a longer --timeout"
        ) from None
    finally:
        if alarm:
            stage.armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            if outer:  # an alarm set before ours (pytest-timeout's): what was left of it
                left = outer - (seconds - (stage.deadline - time.monotonic()))
                signal.setitimer(signal.ITIMER_REAL, max(left, 0.001))


def fresh_hash_seed() -> int:
    """The ``PYTHONHASHSEED`` of the fresh process: another than this process's.

    This process's plus one when it is set to a number; else 1 (this process
    then hashes with a random seed, or as the variable says).
    """
    return other_hash_seed()


def serve_fresh(spec_json: str) -> int:
    """The fresh process's part: record run 3 of env after env, as asked; the exit code.

    Args:
        spec_json: ``{"import_modules", "sys_path"}`` as JSON; then each request
            (:func:`~gym_goldens.record.fresh.serve`) is ``{"env_id", "seeds",
            "steps", "root", "pettingzoo", "stderr"}``, and its reply ``{}``,
            or ``{"error": ...}`` once the error is written to stderr.
    """
    spec = json.loads(spec_json)
    sys.path[:] = list(spec["sys_path"])
    return serve(_record_fresh, lambda: _import_all(spec["import_modules"]))


def _record_fresh(request: dict[str, Any]) -> dict[str, Any]:
    try:
        for seed in request["seeds"]:
            folder = _run_dir(Path(request["root"]), seed, 3)
            _record_run(
                request["env_id"], seed, request["steps"], folder, pettingzoo=request["pettingzoo"]
            )
    except (_RunError, _MissingDependency) as error:
        print(error, file=sys.stderr)
        return {"error": str(error)}
    return {}


def _import_all(modules: Iterable[str]) -> None:
    for name in modules:
        importlib.import_module(name)


def _run_dir(root: Path, seed: int, run: int) -> Path:
    return root / seed_dirname(seed) / run_dirname(run)


class _StepCounter(gym.Wrapper[Any, Any, Any, Any]):
    """Counts the steps taken, so that an error can say how far a run got."""

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self.steps = 0

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        result = self.env.step(action)
        self.steps += 1
        return result


def _record_run(env_id: str, seed: int, steps: int, folder: Path, *, pettingzoo: bool) -> int:
    """Record the seeded rollout of a fresh env into ``folder``; the steps taken."""
    if pettingzoo:
        return _record_agent_run(env_id, seed, steps, folder)
    try:
        env = gym.make(env_id)
    except Exception as error:
        raise _failed(f"gym.make({env_id!r}) failed: ", error) from error
    recorder: RecordTrajectory[Any, Any] = RecordTrajectory(env, folder)
    counter = _StepCounter(recorder)
    try:
        rollout(counter, seed=seed, steps=steps)
    except Exception as error:
        where = f"at step {counter.steps + 1}" if counter.steps else "at the first reset or step"
        run = folder.name.replace("-", " ")
        raise _failed(f"seed {seed}, {run}: {where}: ", error, counter.steps) from error
    finally:
        # The env's own close failing is not what is audited; a recording left
        # unwritten shows when it is compared.
        with contextlib.suppress(Exception):
            recorder.close()
    return counter.steps


def _record_agent_run(name: str, seed: int, steps: int, folder: Path) -> int:
    """Record the seeded rollout of a fresh PettingZoo env (its AEC env); the steps taken."""
    try:
        env = make_pettingzoo_env(name)
    except Exception as error:
        raise _failed(f"{name}: env() failed: ", error) from error
    recorder = record_agents(env, folder)
    try:
        return rollout(recorder, seed=seed, steps=steps).steps
    except Exception as error:
        run = folder.name.replace("-", " ")
        raise _failed(f"seed {seed}, {run}: ", error) from error
    finally:
        with contextlib.suppress(Exception):  # as for a Gymnasium env's recorder
            recorder.close()


class _FreshRuns:
    """Run 3 of env after env, recorded by one fresh Python process with another ``PYTHONHASHSEED``.

    The process starts with the first env and serves the next ones: an
    interpreter's start-up and imports, the audit's largest cost, are paid
    once, not once per env. One that an env ended, or that ran out of time,
    is replaced at the next env.

    Args:
        import_modules: The modules that register the envs, imported once by the process.
    """

    def __init__(self, import_modules: Sequence[str]) -> None:
        self.import_modules = list(import_modules)
        self._worker: FreshWorker | None = None

    def start(self, env_id: str, settings: AuditSettings, root: Path) -> _FreshRun:
        """Ask for run 3 of every seed of ``env_id`` into ``root``; done when waited for.

        It is asked before this process's runs and waited for after them: its
        work overlaps with theirs.
        """
        if self._worker is not None and not self._worker.alive:
            self.discard()
        if self._worker is None:
            spec = {"import_modules": self.import_modules, "sys_path": list(sys.path)}
            # Warnings were seen in this process's runs; the fresh process only records.
            self._worker = FreshWorker(["-W", "ignore", "-c", _FRESH_CODE, json.dumps(spec)])
        stderr = root / _FRESH_STDERR
        self._worker.ask(
            {
                "env_id": env_id,
                "seeds": list(settings.seeds),
                "steps": settings.steps,
                "root": str(root),
                "pettingzoo": settings.pettingzoo,
                "stderr": str(stderr),
            }
        )
        return _FreshRun(self, self._worker, stderr)

    def discard(self) -> None:
        """End the process (it died, hangs, or was left in the middle of an env)."""
        if self._worker is not None:
            self._worker.stop()
            self._worker = None

    def close(self) -> None:
        """Let the process end; the audit is over."""
        if self._worker is not None:
            self._worker.close()
            self._worker = None


class _FreshRun:
    """Run 3 of one env, under way in the fresh process of :class:`_FreshRuns`."""

    def __init__(self, runs: _FreshRuns, worker: FreshWorker, stderr: Path) -> None:
        self.runs = runs
        self.worker = worker
        self.stderr = stderr
        self.hash_seed = worker.hash_seed
        self.done = False

    def wait(self, deadline: float | None = None) -> None:
        """Wait for it to finish, until ``deadline`` (``time.monotonic()``) at most.

        Raises:
            _RunError: It failed; the message ends with the end of its stderr.
            _TimedOut: The deadline passed.
        """
        timeout = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        try:
            reply = self.worker.answer(timeout)
        except subprocess.TimeoutExpired:
            raise _TimedOut from None
        self.done = True
        where = f"run 3, in a fresh process (PYTHONHASHSEED={self.hash_seed}), failed"
        if reply is None:  # the env ended the process (a crash in native code, os._exit)
            finished = self.worker.finished()
            self.runs.discard()
            tail = file_tail(self.stderr) or finished.output
            raise _RunError(f"{where} (exit code {finished.returncode}):\n{_shown_tail(tail)}")
        if "error" in reply:
            raise _RunError(f"{where}:\n{_shown_tail(file_tail(self.stderr))}")

    def stop(self) -> None:
        """Forget its output; end the process if it was left in the middle of the env."""
        if not self.done:
            self.runs.discard()
        self.stderr.unlink(missing_ok=True)


def _shown_tail(output: str) -> str:
    """The last lines of what a fresh process wrote, as a row shows them."""
    return uncoloured("\n".join(Finished(0, output).tail(_MAX_ERROR_LINES))) or "(no output)"


def _first_difference(root: Path, settings: AuditSettings, hash_seed: int) -> RunDifference | None:
    fresh = f"in a fresh process, PYTHONHASHSEED={hash_seed}"
    for seed in settings.seeds:
        first = _run_dir(root, seed, 1)
        for run, how in [(2, _IN_PROCESS), (3, fresh)]:
            comparison = compare(first, _run_dir(root, seed, run), settings.tolerance)
            if not comparison.equal:
                return _difference(comparison, seed, run, how)
    return None


def _difference(comparison: Comparison, seed: int, run: int, how: str) -> RunDifference:
    second = f"run {run}"
    notes = [f"seed {seed}; run 1: {_IN_PROCESS}", f"{second}: {how}"]
    if run == 3:
        notes.append(_FRESH_ONLY_HINT)
    report = format_nondeterminism(comparison, first="run 1", second=second, notes=notes)
    episode = comparison.differing[0]
    divergence = episode.first
    fields = (
        tuple((d.field, d.golden, d.actual) for d in divergence.differences)
        if divergence is not None
        else ()
    )
    return RunDifference(
        seed=seed,
        first="run 1",
        second=second,
        how=how,
        episode=episode.index,
        t=divergence.t if divergence is not None else None,
        fields=fields,
        report=report,
    )


def _check(env_id: str, settings: AuditSettings) -> str | None:
    """The check of ``settings.check`` on a fresh env: its failure, if any."""
    if settings.check == "check_env":
        # The unwrapped env: on the wrappers of gym.make, check_env always
        # warns that it is not checking the env itself.
        return _run_check(
            env_id,
            lambda: gym.make(env_id),
            lambda env: check_env(env.unwrapped, skip_render_check=True),
            "check_env",
            f"gym.make({env_id!r})",
        )
    if settings.check == "api_test":
        return _run_check(
            env_id, lambda: make_pettingzoo_env(env_id), _api_test, "api_test", f"{env_id}: env()"
        )
    return None


def _api_test(env: Any) -> None:
    """PettingZoo's ``api_test``, what it prints kept out of the table."""
    with warnings.catch_warnings():
        # It imports an env module, which PettingZoo 1.27 deprecates in favour of its registry.
        warnings.simplefilter("ignore", DeprecationWarning)
        from pettingzoo.test import api_test  # the extra, for PettingZoo's envs only

    with contextlib.redirect_stdout(io.StringIO()):
        api_test(env)


def _run_check(
    env_id: str, make: Callable[[], Any], check: Callable[[Any], None], name: str, made: str
) -> str | None:
    """``check`` on the env ``make`` makes: its ``AssertionError`` as text, if any."""
    try:
        env = make()
    except Exception as error:
        raise _failed(f"{made} failed: ", error) from error
    try:
        check(env)
    except AssertionError as error:
        return str(error).strip() or "AssertionError"
    except Exception as error:
        raise _failed(f"{name} raised ", error) from error
    finally:
        with contextlib.suppress(Exception):  # its close failing is not what is audited
            env.close()
    return None


def _declared_nondeterministic(env_id: str) -> bool:
    spec = gym.envs.registry.get(env_id)
    return bool(spec is not None and spec.nondeterministic)


def _warning_texts(caught: Iterable[warnings.WarningMessage]) -> tuple[str, ...]:
    texts = (uncoloured(str(warning.message)).strip() for warning in caught)
    return tuple(dict.fromkeys(text for text in texts if text))


def _error_text(error: BaseException) -> str:
    """``ValueError: message (file.py:12 in step)``: the error and its innermost frame."""
    text = f"{type(error).__name__}: {error}".rstrip(": ")
    frames = traceback.extract_tb(error.__traceback__)
    if frames:
        frame = frames[-1]
        text += f" ({Path(frame.filename).name}:{frame.lineno} in {frame.name})"
    return text
