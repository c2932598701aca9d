"""The pytest plugin: wiring only.

Loaded through the ``pytest11`` entry point ``gym_goldens`` (disable with
``-p no:gym_goldens``). It imports nothing heavy: gymnasium, numpy and the
comparison load when a test first uses the ``record_trajectory`` fixture.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

import pytest

from gym_goldens.session import REPORT_ATTRIBUTE, GoldensSession, session_key
from gym_goldens.settings import GoldensSettings, add_options, settings_key

if TYPE_CHECKING:
    import gymnasium as gym

    from gym_goldens.check import TrajectoryChecks
    from gym_goldens.tolerance import ToleranceSpec

_checks_key: Final = pytest.StashKey["TrajectoryChecks"]()
_results_key: Final = pytest.StashKey[list[list[str]]]()


class RecordTrajectoryFixture(Protocol):
    """The type of the ``record_trajectory`` fixture."""

    def __call__(
        self,
        env: gym.Env[Any, Any],
        name: str | None = None,
        *,
        rtol: ToleranceSpec | None = None,
        atol: ToleranceSpec | None = None,
        ignore: Iterable[str] = (),
        replay: bool = False,
    ) -> gym.Wrapper[Any, Any, Any, Any]: ...


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "goldens(rtol=None, atol=None, ignore=(), variant_by=()): tolerances and ignored fields "
        "of the test's golden trajectories (numbers, or mappings from field patterns to "
        "numbers); variant_by keeps one golden per value of the named facts (mujoco, machine).",
    )
    settings = GoldensSettings.from_config(config)
    config.stash[settings_key] = settings
    session = GoldensSession(config, settings)
    config.stash[session_key] = session
    config.pluginmanager.register(session, "gym-goldens-session")


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(session_key, None)
    if session is not None:
        config.pluginmanager.unregister(session)
        del config.stash[session_key]


@pytest.fixture
def record_trajectory(request: pytest.FixtureRequest, tmp_path: Path) -> Generator[RecordTrajectoryFixture]:
    """Record envs in this test and check them against their goldens.

    ``record_trajectory(env, name=None, *, rtol=None, atol=None, ignore=(),
    replay=False)`` returns ``env`` wrapped in :class:`gym_goldens.RecordTrajectory`
    (and, with ``replay=True``, driven by the golden's actions). After the
    test body passes, each recording is compared with its golden within
    tolerance, or written as the golden under ``--update-goldens``.
    """
    from gym_goldens import repeats
    from gym_goldens.check import TrajectoryChecks

    marker = request.node.get_closest_marker("goldens")
    checks = TrajectoryChecks(
        request.config.stash[settings_key],
        request.node.nodeid,
        repeats.output_dir(request, tmp_path),
        marker.kwargs if marker is not None else None,
    )
    request.node.stash[_checks_key] = checks
    try:
        yield checks.record
    finally:
        checks.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    settings = item.config.stash[settings_key]
    if settings.determinism and settings.determinism_mode == "inprocess":
        from gym_goldens import repeats

        if repeats.applies(item):
            repeats.run_in_process(item)
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    result = yield
    checks = item.stash.get(_checks_key, None)
    if checks is not None:
        from gym_goldens import repeats
        from gym_goldens.artifacts import save_artifacts

        if repeats.intercept(item, checks):
            return result
        outcomes = checks.check(repeats.runs_of(item, checks))
        settings = item.config.stash[settings_key]
        item.stash[_results_key] = [[o.status, settings.display(o.golden_dir)] for o in outcomes]
        save_artifacts(outcomes, settings, item.nodeid)
        failures = [o.message for o in outcomes if o.message]
        if failures:
            pytest.fail("\n\n".join(failures), pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if call.when == "call":
        results = item.stash.get(_results_key, None)
        if results:
            setattr(report, REPORT_ATTRIBUTE, results)
    return report
