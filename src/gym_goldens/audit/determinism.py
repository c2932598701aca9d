"""Determinism checks: does the same seeded rollout give the same trajectory?

A golden catches a change between commits; it does not catch an env that is
nondeterministic within one commit: an unseeded RNG (``np.random``,
``random``), iteration over a set of strings (its order depends on
``PYTHONHASHSEED``), wall-clock time in ``info``, or state that survives
``reset()``. :func:`assert_deterministic` records the same seeded rollout
several times and compares the recordings with the golden comparison, so a
failure points at the first differing step and field.

The pytest side (``--goldens-determinism=N``) lives in
:mod:`gym_goldens.plugin.repeats`; both report with
:func:`gym_goldens.present.report.format_nondeterminism`.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import gymnasium as gym

from gym_goldens.comparison.engine import compare
from gym_goldens.comparison.result import Comparison
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.errors import GoldensError
from gym_goldens.format.codec import Encoder
from gym_goldens.present.report import format_nondeterminism
from gym_goldens.present.text import escape
from gym_goldens.record.rollouts import Policy, rollout
from gym_goldens.record.single import RecordTrajectory

__all__ = ["NondeterminismError", "assert_deterministic"]

_TEMPORARY: Final = "gym-goldens-determinism-"
"""How the temporary folder of recordings starts."""


class NondeterminismError(GoldensError, AssertionError):
    """The same seeded rollout gave different trajectories.

    Attributes:
        comparison: The first pair of runs that differed, or None when only a
            seeding check failed.
        findings: One text per problem found, most telling first.
    """

    def __init__(self, findings: Sequence[str], comparison: Comparison | None = None) -> None:
        self.findings = tuple(findings)
        self.comparison = comparison
        super().__init__("\n\n".join(self.findings))


def assert_deterministic(
    make_env: Callable[[], gym.Env[Any, Any]] | str,
    *,
    seed: int,
    steps: int,
    policy: Policy | None = None,
    runs: int = 2,
    tolerance: Tolerance | None = None,
    check_seeding: bool = True,
    output_dir: str | os.PathLike[str] | None = None,
) -> None:
    """Check that the same seeded rollout always gives the same trajectory.

    The rollout (:func:`gym_goldens.rollout`) runs on ``runs`` fresh envs
    from ``make_env``, then again on the first env after another
    ``reset(seed=seed)`` (state that leaks across resets); every recording is
    compared with the first. Then two seeding checks that gymnasium's
    ``check_env`` also makes: ``reset(seed=seed)`` twice gives the same
    observation, and ``seed + 1`` does not give it too while leaving the env's
    ``np_random`` untouched (the env ignores the seed). The policy must be
    deterministic itself. Iterating over a set of strings keeps one order
    within a process: ``--goldens-determinism-mode=subprocess`` catches it.

    Args:
        make_env: Builds a new env (``lambda: gym.make("CartPole-v1")``), or an env id.
        seed: The rollout's seed.
        steps: The rollout's length.
        policy: ``policy(obs) -> action``; None samples the seeded action space.
        runs: Rollouts on fresh envs, at least 2.
        tolerance: How close floats must be; exact by default (same code, same machine: same bits).
        check_seeding: Also fail when the env ignores ``reset(seed=...)`` (turn it
            off for an env without any randomness).
        output_dir: Keep the recordings here; by default in a temporary folder,
            removed when the check passes.

    Raises:
        NondeterminismError: The runs differ or a seeding check failed (an
            ``AssertionError`` and a ``GoldensError``); the message shows
            the first differing episode, step and field.
        TypeError: ``make_env`` does not make a gymnasium env.
        ValueError: ``runs`` is less than 2.

    Example:
        >>> import gymnasium as gym
        >>> assert_deterministic(lambda: gym.make("CartPole-v1"), seed=0, steps=50)
    """
    __tracebackhide__ = True
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 2:
        raise ValueError(f"assert_deterministic needs runs >= 2 to compare runs, got {runs!r}")
    build = _factory(make_env)
    root = Path(tempfile.mkdtemp(prefix=_TEMPORARY)) if output_dir is None else Path(output_dir)
    root.mkdir(parents=True, exist_ok=True)
    rollouts = _Rollouts(root, seed, steps, policy)
    exact = Tolerance(rtol=0.0, atol=0.0)
    findings, comparison = rollouts.check(build, runs, tolerance or exact, check_seeding)
    if findings:
        findings.append(f"recordings kept in {root}")
        raise NondeterminismError(findings, comparison)
    if output_dir is None:
        shutil.rmtree(root, ignore_errors=True)


@dataclasses.dataclass(frozen=True)
class _Rollouts:
    """The seeded rollout of one check, recorded once per run, each into a folder of ``root``."""

    root: Path
    seed: int
    steps: int
    policy: Policy | None

    def check(
        self,
        build: Callable[[], gym.Env[Any, Any]],
        runs: int,
        tolerance: Tolerance,
        check_seeding: bool,
    ) -> tuple[list[str], Comparison | None]:
        """The findings, seeding ones first, and the first pair of runs that differed."""
        first_env = build()
        try:
            first = self.record(first_env, "run-1")
            found = self._fresh_env_difference(build, first.output_dir, runs, tolerance)
            again = self.record(first_env, "run-1-reset-again")
            if found is None:
                found = self._reset_difference(first.output_dir, again.output_dir, tolerance)
            findings = _seeding_findings(first_env, self.seed, check_seeding)
        finally:
            first_env.close()
        if found is None:
            return findings, None
        report, comparison = found
        return [*findings, report], comparison

    def record(self, env: gym.Env[Any, Any], folder: str) -> RecordTrajectory[Any, Any]:
        """Record the rollout of ``env`` into ``folder``."""
        recorder: RecordTrajectory[Any, Any] = RecordTrajectory(env, self.root / folder)
        rollout(recorder, seed=self.seed, steps=self.steps, policy=self.policy)
        recorder.flush()
        return recorder

    def _fresh_env_difference(
        self,
        build: Callable[[], gym.Env[Any, Any]],
        first: Path,
        runs: int,
        tolerance: Tolerance,
    ) -> tuple[str, Comparison] | None:
        """The report of the first run on a fresh env that differs from the first run."""
        found = None
        for number in range(2, runs + 1):
            other = self.record(build(), f"run-{number}")
            other.close()
            comparison = compare(first, other.output_dir, tolerance)
            if not comparison.equal and found is None:
                note = f"every run on a fresh env from make_env, seed={self.seed}"
                report = format_nondeterminism(comparison, second=f"run {number}", notes=[note])
                found = report, comparison
        return found

    @staticmethod
    def _reset_difference(
        first: Path, again: Path, tolerance: Tolerance
    ) -> tuple[str, Comparison] | None:
        """The report of the first env's second rollout, if it went another way."""
        comparison = compare(first, again, tolerance)
        if comparison.equal:
            return None
        note = (
            "state leaks across resets: the same env, reset with the same seed, "
            "went another way than on its first rollout"
        )
        report = format_nondeterminism(comparison, second="run 1 reset again", notes=[note])
        return report, comparison


def _factory(make_env: Callable[[], gym.Env[Any, Any]] | str) -> Callable[[], gym.Env[Any, Any]]:
    if isinstance(make_env, str):
        env_id = make_env
        return lambda: gym.make(env_id)
    if not callable(make_env):
        raise TypeError(
            "assert_deterministic expects a factory that makes an env, "
            f"got {type(make_env).__name__}; "
            'pass for example lambda: gym.make("CartPole-v1")'
        )

    def build() -> gym.Env[Any, Any]:
        env = make_env()
        if not isinstance(env, gym.Env):
            raise TypeError(
                f"make_env must return a gymnasium.Env, got {type(env).__name__}; "
                "return a new env on each call"
            )
        return env

    return build


def _seeding_findings(env: gym.Env[Any, Any], seed: int, check_seeding: bool) -> list[str]:
    """What gymnasium's check_env would say about reset(seed=...)."""
    encoder = Encoder(max_array_size=None)
    findings: list[str] = []
    obs_a, _ = env.reset(seed=seed)
    first = encoder.encode({"obs": obs_a})
    state_a = _rng_state(env)
    obs_b, _ = env.reset(seed=seed)
    second = encoder.encode({"obs": obs_b})
    if first != second:
        findings.append(
            f"env.reset(seed={seed}) twice gave different observations on the same env:\n"
            f"  first  {_short(first)}\n  second {_short(second)}\n"
            "  reset(seed=...) does not control all of the env's randomness or state: draw random "
            "numbers from self.np_random, not np.random or random, and reset all state in reset()"
        )
    if check_seeding:
        obs_c, _ = env.reset(seed=seed + 1)
        other = encoder.encode({"obs": obs_c})
        if other == first and _rng_state(env) == state_a:
            findings.append(
                f"the env ignores reset(seed=...): seeds {seed} and {seed + 1} gave the same first "
                "observation and left the env's np_random as it was\n"
                "  call super().reset(seed=seed) at the start of reset() and draw random numbers "
                "from self.np_random; if the env has no randomness at all, pass check_seeding=False"
            )
    return findings


def _rng_state(env: gym.Env[Any, Any]) -> Any:
    generator = getattr(env.unwrapped, "_np_random", None)
    return None if generator is None else repr(generator.bit_generator.state)


def _short(line: bytes, limit: int = 100) -> str:
    # What the env returned: JSON escapes C0 controls, not DEL, C1 or U+202E.
    text = escape(line[: 4 * limit].decode("utf-8", "replace"))
    return text if len(text) <= limit else text[: limit - 3] + "..."
