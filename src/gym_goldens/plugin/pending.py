"""The goldens an update writes at the end of the session, once a fresh process agrees.

One process hashes strings one way from start to end: its two recordings of a
test agree on the order of a set of strings, and a golden written from them
fails one run in a few later. So ``--update-goldens`` does not write a golden
it is about to create or rewrite when the test ends: the golden waits here
(:class:`~gym_goldens.plugin.store.PendingGolden`). At the end of the session,
one fresh ``python -m pytest`` (:mod:`.fresh`, another ``PYTHONHASHSEED``)
runs every test with a waiting golden, once; a golden is written only if the
fresh recording agrees exactly with this process's (the test's ``ignore``
patterns apart). A test whose goldens the fresh process did not reproduce
fails the session with the nondeterminism report, printed in the summary, and
its goldens stay as they were.

Only goldens being written pay, and a session pays one interpreter start.
Under pytest-xdist, each worker runs the fresh process of the tests it ran,
at its own end: one interpreter per worker, started when the worker is done,
so that they run side by side as the workers did; what each found comes back
to the main process with the worker's output.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from gym_goldens.plugin.artifacts import save_artifacts
from gym_goldens.plugin.check import CheckResult, nondeterministic_result, plot_runs, write_golden
from gym_goldens.plugin.fresh import FreshRun, record_in_fresh_pytest
from gym_goldens.plugin.repeats import Run, find_nondeterminism, update_context
from gym_goldens.plugin.settings import GoldensSettings, settings_key
from gym_goldens.plugin.store import PendingGolden
from gym_goldens.present.text import printable

__all__ = ["LateResult", "finish_pending"]

_THIS_RUN = "in this process, its recording written as the golden if every run agrees"
_FRESH_RUN = "which re-recorded every golden this update was about to write"


@dataclasses.dataclass(frozen=True)
class LateResult:
    """What became of a waiting golden at the end of the session.

    Attributes:
        nodeid: Its test's node id.
        status: ``created``, ``updated``, ``unchanged``, ``nondeterministic``
            or ``failed``.
        golden: The golden folder, as shown.
        message: The failure text, when not written.
    """

    nodeid: str
    status: str
    golden: str
    message: str | None = None

    def to_json(self) -> list[Any]:
        """As a pytest-xdist worker sends it back."""
        return [self.nodeid, self.status, self.golden, self.message]

    @classmethod
    def from_json(cls, data: Sequence[Any]) -> LateResult:
        """As the main process reads it from a worker's output."""
        nodeid, status, golden, message = data
        return cls(str(nodeid), str(status), str(golden), None if message is None else str(message))


def finish_pending(
    config: pytest.Config, waiting: Sequence[PendingGolden], base: Path
) -> list[LateResult]:
    """Record the waiting goldens' tests in one fresh process; write the goldens it agrees with.

    Args:
        config: The session's config.
        waiting: The goldens that wait, in the order of their tests.
        base: A folder of its own for the fresh process's recordings.
    """
    if not waiting:
        return []
    nodeids = list(dict.fromkeys(golden.nodeid for golden in waiting))
    fresh = record_in_fresh_pytest(config, nodeids, base, as_update=True)
    settings = config.stash[settings_key]
    results: list[LateResult] = []
    for nodeid in nodeids:
        goldens = [golden for golden in waiting if golden.nodeid == nodeid]
        checked = _finish_test(settings, nodeid, goldens, fresh)
        results += _results(settings, nodeid, checked)
    return results


def _finish_test(
    settings: GoldensSettings, nodeid: str, goldens: list[PendingGolden], fresh: FreshRun
) -> list[CheckResult]:
    number = max(golden.run for golden in goldens)
    dirs = fresh.recordings(nodeid, [golden.name for golden in goldens])
    runs = [
        Run(number, _THIS_RUN, context=(update_context(settings),)),
        Run(
            number + 1,
            f"{fresh.note}, {_FRESH_RUN}",
            dirs or {},
            None if dirs is not None else fresh.failure,
        ),
    ]
    found = find_nondeterminism(
        [(golden.name, golden.actual_dir, golden.tolerance) for golden in goldens],
        runs,
        exact=True,
        display=settings.display,
        plot=plot_runs(settings),
        max_decompressed_size=settings.max_decompressed_size,
    )
    if not found:
        return [write_golden(settings, golden) for golden in goldens]
    # A nondeterministic test writes none of its goldens.
    return [
        nondeterministic_result(golden.name, golden.target, golden.actual_dir, found[golden.name])
        for golden in goldens
        if golden.name in found
    ]


def _results(
    settings: GoldensSettings, nodeid: str, checked: list[CheckResult]
) -> list[LateResult]:
    _, notes = save_artifacts(checked, settings, nodeid)
    messages = [printable(result.message) for result in checked if result.message]
    message = "\n\n".join([*messages, *notes]) or None
    return [
        LateResult(
            nodeid,
            result.status,
            settings.display(result.golden_dir),
            message if index == 0 else None,
        )
        for index, result in enumerate(checked)
    ]
