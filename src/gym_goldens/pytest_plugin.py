"""The pytest plugin: wiring only.

Loaded through the ``pytest11`` entry point ``gym_goldens`` (disable with
``-p no:gym_goldens``). It imports nothing heavy: gymnasium, numpy and the
comparison load when a test first uses the ``record_trajectory`` fixture.
"""

from __future__ import annotations

import sys
from collections.abc import Generator, Iterable
from typing import TYPE_CHECKING, Any, Final, Protocol, overload

import pytest

from gym_goldens.plugin.session import (
    REGISTRY_MODULE,
    SKIPPED_ATTRIBUTE,
    GoldensSession,
    session_key,
)
from gym_goldens.plugin.settings import GoldensSettings, add_options, golden_nodeid, settings_key

if TYPE_CHECKING:
    from typing import TypedDict

    import gymnasium as gym
    from typing_extensions import Unpack

    from gym_goldens.comparison.tolerance import ToleranceSpec
    from gym_goldens.format.codec import ArraySizeSpec
    from gym_goldens.plugin.check import TrajectoryChecks
    from gym_goldens.plugin.htmlreport import HtmlReport
    from gym_goldens.plugin.outcome import TestOutcome
    from gym_goldens.record.vector import RecordVectorTrajectory

    class RecordOptions(TypedDict, total=False):
        """What ``record_trajectory`` takes for any env: tolerance and storage."""

        rtol: ToleranceSpec | None
        atol: ToleranceSpec | None
        ignore: Iterable[str]
        max_array_size: ArraySizeSpec
        compress: bool | None
        full_every: int | None

    class ImageOptions(RecordOptions, total=False):
        """What it takes besides for a Gymnasium env: its images and their tolerance."""

        images: str | None
        pixel_atol: ToleranceSpec | None
        max_diff_pixels: ToleranceSpec | None
        max_diff_pixel_ratio: ToleranceSpec | None


_checks_key: Final[pytest.StashKey[TrajectoryChecks]] = pytest.StashKey()
_outcome_key: Final[pytest.StashKey[TestOutcome]] = pytest.StashKey()
_html_report_key: Final[pytest.StashKey[HtmlReport]] = pytest.StashKey()


class RecordTrajectoryFixture(Protocol):
    """The type of the ``record_trajectory`` fixture (see :meth:`TrajectoryChecks.record`)."""

    @overload
    def __call__(
        self,
        env: gym.Env[Any, Any],
        name: str | None = None,
        *,
        replay: bool = False,
        render: bool | int = False,
        **options: Unpack[ImageOptions],
    ) -> gym.Wrapper[Any, Any, Any, Any]: ...

    @overload
    def __call__(
        self,
        env: gym.vector.VectorEnv[Any, Any, Any],
        name: str | None = None,
        **options: Unpack[ImageOptions],
    ) -> RecordVectorTrajectory: ...

    @overload
    def __call__(
        self,
        env: Any,  # a PettingZoo ParallelEnv or AECEnv: PettingZoo has no type information
        name: str | None = None,
        *,
        replay: bool = False,
        **options: Unpack[RecordOptions],
    ) -> Any: ...


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "goldens(rtol=None, atol=None, ignore=(), variant_by=(), update_once=False, "
        "images=None, pixel_atol=None, max_diff_pixels=None, max_diff_pixel_ratio=None): "
        "tolerances and ignored fields of the test's golden trajectories (numbers, or mappings "
        "from field patterns to numbers); variant_by keeps one golden per value of the named "
        "facts (mujoco, machine); update_once=True records the test once, not twice, under "
        "--update-goldens; images='frames' keeps image-like obs and info as PNG frames; the "
        "pixel_ settings are the pixel tolerance of frames.",
    )
    settings = GoldensSettings.from_config(config)
    config.stash[settings_key] = settings
    session = GoldensSession(config, settings)
    config.stash[session_key] = session
    config.pluginmanager.register(session, "gym-goldens-session")
    if settings.report_dir is not None and not hasattr(config, "workerinput"):
        from gym_goldens.plugin.htmlreport import HtmlReport

        html_report = HtmlReport(
            settings.report_dir, settings.display, late_entries=session.report.late_entries
        )
        config.stash[_html_report_key] = html_report
        config.pluginmanager.register(html_report, "gym-goldens-html-report")


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(session_key, None)
    if session is not None:
        config.pluginmanager.unregister(session)
        del config.stash[session_key]
    html_report = config.stash.get(_html_report_key, None)
    if html_report is not None:
        config.pluginmanager.unregister(html_report)
        del config.stash[_html_report_key]


@pytest.fixture
def record_trajectory(request: pytest.FixtureRequest) -> Generator[RecordTrajectoryFixture]:
    """Record envs in this test and check them against their goldens.

    ``record_trajectory(env, name=None, *, rtol=None, atol=None, ignore=(),
    max_array_size=..., compress=None, full_every=None, replay=False, render=False,
    images=None, pixel_atol=None, max_diff_pixels=None, max_diff_pixel_ratio=None)`` returns
    ``env`` wrapped in :class:`gym_goldens.RecordTrajectory` (a vector env in
    :class:`gym_goldens.RecordVectorTrajectory`, a PettingZoo env in its recorder;
    with ``replay=True``, driven by the golden's actions). After the
    test body passes, each recording is compared with its golden within
    tolerance, or written as the golden under ``--update-goldens``.
    """
    from gym_goldens.plugin import repeats
    from gym_goldens.plugin.check import TrajectoryChecks

    marker = request.node.get_closest_marker("goldens")
    settings = request.config.stash[settings_key]
    try:
        checks = TrajectoryChecks(
            settings,
            golden_nodeid(request.node, settings),
            repeats.output_dir(request),
            marker.kwargs if marker is not None else None,
        )
    except (TypeError, ValueError) as error:
        # A bad marker is the user's to fix: show the message, not our frames.
        message = str(error)
        if not message.startswith("@pytest.mark.goldens"):
            message = f"@pytest.mark.goldens: {message}"
        raise pytest.fail.Exception(message, pytrace=False) from None
    request.node.stash[_checks_key] = checks
    try:
        yield checks.record  # type: ignore[misc]  # the overloads narrow its union
    finally:
        checks.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    settings = item.config.stash[settings_key]
    if settings.determinism or settings.update:
        from gym_goldens.plugin import repeats

        extra = repeats.plan(item)
        if extra is not None and extra.mode == "inprocess":
            repeats.run_in_process(item, extra)
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    try:
        result = yield
    except Exception as error:
        if REGISTRY_MODULE in sys.modules:
            from gym_goldens.audit.registry import skip_missing_dependency

            skip_missing_dependency(item, error)
        raise
    checks = item.stash.get(_checks_key, None)
    if checks is not None:
        from gym_goldens.plugin.outcome import finish_test

        outcome = finish_test(item, checks)
        if outcome is not None:
            item.stash[_outcome_key] = outcome
            if outcome.failure is not None:
                pytest.fail(outcome.failure, pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    outcome = item.stash.get(_outcome_key, None)
    if call.when == "call" and outcome is not None:
        outcome.attach(report)
    if report.skipped:
        # Its goldens were not reached: they are not stale.
        setattr(report, SKIPPED_ATTRIBUTE, [golden_nodeid(item, item.config.stash[settings_key])])
    return report
