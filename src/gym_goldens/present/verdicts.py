"""The results of ``gym-goldens audit`` as data: verdicts, rows, run differences.

:mod:`gym_goldens.audit.survey` makes them and
:mod:`gym_goldens.present.table` renders them. They live here, in a module of
data only, because ``present/`` sits below ``audit/``: the table renders a row
without an import from a higher layer, and the survey builds one by importing
down. Nothing here is text for a reader; the table decides how a row reads.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

__all__ = [
    "CHECK_FAILED",
    "DETERMINISTIC",
    "ERROR",
    "FAILING",
    "NONDETERMINISTIC",
    "SKIPPED",
    "VERDICTS",
    "AuditRow",
    "RunDifference",
]

DETERMINISTIC: Final = "deterministic"
NONDETERMINISTIC: Final = "NONDETERMINISTIC"
ERROR: Final = "error"
SKIPPED: Final = "skipped"
CHECK_FAILED: Final = "check failed"
VERDICTS: Final = (DETERMINISTIC, NONDETERMINISTIC, CHECK_FAILED, ERROR, SKIPPED)
"""Every verdict, in the order the summary counts them."""
FAILING: Final = (NONDETERMINISTIC, CHECK_FAILED, ERROR)
"""The verdicts that fail an audit (its exit code 1)."""


@dataclasses.dataclass(frozen=True)
class RunDifference:
    """Where two runs of the same seeded rollout first differ.

    Attributes:
        seed: The rollout's seed.
        first: The run compared against (``run 1``).
        second: The run that differs (``run 2``, ``run 3``).
        how: How the second run was made (``in this process``, ``in a fresh
            process, PYTHONHASHSEED=1``).
        episode: The episode that differs first.
        t: Its first differing step; None for the reset record.
        fields: ``(field, value in the first run, value in the second)`` for
            the fields that differ there.
        report: The nondeterminism report, as ``--goldens-determinism`` words it.
    """

    seed: int
    first: str
    second: str
    how: str
    episode: int
    t: int | None
    fields: tuple[tuple[str, Any, Any], ...]
    report: str


@dataclasses.dataclass(frozen=True)
class AuditRow:
    """The audit of one env.

    Attributes:
        env_id: The env id.
        verdict: One of :data:`VERDICTS`.
        steps: Steps recorded in one run, over all seeds (for an error, as
            far as the run got); None when the env did not run.
        seconds: The time the env's audit took; None when it did not run.
        reason: Why it was skipped, or the error.
        difference: The first difference between runs, when nondeterministic.
        check_failure: The ``AssertionError`` of the check (gymnasium's ``check_env``).
        check: The check that ran: ``check_env``, or PettingZoo's ``api_test``.
        warnings: Warnings raised while the env was made, run and checked.
        recordings: Where the recordings were kept (nondeterministic envs).
        nondeterministic_spec: The spec says ``nondeterministic=True``.
        stderr: What the env wrote to the process's stderr while it was
            audited (MuJoCo's warnings come from C, past Python's warnings),
            shown under its row, never among the rows.
    """

    env_id: str
    verdict: str
    steps: int | None = None
    seconds: float | None = None
    reason: str | None = None
    difference: RunDifference | None = None
    check_failure: str | None = None
    check: str = "check_env"
    warnings: tuple[str, ...] = ()
    recordings: str | None = None
    nondeterministic_spec: bool = False
    stderr: str = ""

    @property
    def failed(self) -> bool:
        """Whether this row fails the audit: one of :data:`FAILING`."""
        return self.verdict in FAILING
