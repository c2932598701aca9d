"""What a comparison found: differing fields, the first divergence of each episode.

:func:`gym_goldens.comparison.engine.compare` returns a :class:`Comparison`: the
number of episodes compared and of those that differ, an
:class:`EpisodeComparison` of each of the first episodes and of the first that
differ (a bounded sample, however many episodes there are), and for each
episode that differs its first differing record, a :class:`Divergence`.
The fields that differ there (:attr:`Divergence.differences`) are worked out
when they are first asked for, so a comparison of many differing episodes
pays only for the ones that are shown.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Literal

from gym_goldens.comparison.arrays import ArrayDelta
from gym_goldens.comparison.floats import floats_match, tolerance_allowed
from gym_goldens.comparison.pixels import FrameComparison
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.format.fields import FieldPath, format_path

__all__ = [
    "MAX_KEPT_EPISODES",
    "NOISE_ATOL",
    "NOISE_RTOL",
    "Comparison",
    "Difference",
    "DifferenceKind",
    "Divergence",
    "EpisodeComparison",
    "Explanation",
]

DifferenceKind = Literal["value", "type", "length", "missing", "extra"]

NOISE_RTOL: Final = 1e-3
"""A float within this share of its golden value may differ by numerical noise."""
NOISE_ATOL: Final = 1e-6
"""A float within this much of its golden value may differ by noise, even near zero."""


@dataclasses.dataclass(frozen=True)
class Difference:
    """One field that differs.

    Attributes:
        path: Where, such as ``("obs", 2)`` or ``("info", "x_velocity")``.
        kind: ``value`` (out of tolerance), ``type`` (a change of type),
            ``length`` (a list of another length: golden and actual hold the
            lengths), ``missing`` (in the golden only) or ``extra`` (in the
            actual recording only).
        golden: The golden's value.
        actual: The actual value.
        rtol: The relative tolerance that applied, for floats.
        atol: The absolute tolerance that applied, for floats.
        pixels: For two frames compared pixel by pixel, what the comparison
            found (golden and actual are then
            :class:`~gym_goldens.format.frames.StoredFrame` values).
    """

    path: FieldPath
    kind: DifferenceKind
    golden: Any
    actual: Any
    rtol: float | None = None
    atol: float | None = None
    pixels: FrameComparison | None = None

    @property
    def field(self) -> str:
        """The path as text: ``obs[2]``, ``info.x_velocity``."""
        return format_path(self.path)

    @property
    def looks_like_noise(self) -> bool:
        """Whether the difference may be numerical noise, for which a tolerance is made.

        Only a float that changed value, in an observation, a reward or info,
        within :data:`NOISE_RTOL` of the golden's value or :data:`NOISE_ATOL`
        near zero (the float rule, with these as rtol and atol). An action
        (the policy's choice), an int, a bool, a string, a change of type, a
        key on one side only or a NaN where a number was, is a change.
        """
        return (
            self.kind == "value"
            and self.path[:1] not in (("action",), ("dtypes",))
            and type(self.golden) is float
            and type(self.actual) is float
            and floats_match(self.golden, self.actual, NOISE_RTOL, NOISE_ATOL)
        )

    @property
    def allowed(self) -> float | None:
        """The largest difference the tolerance allowed here, for floats."""
        if self.rtol is None or self.atol is None or not isinstance(self.golden, float):
            return None
        return tolerance_allowed(self.golden, self.rtol, self.atol)


Explanation = tuple[tuple[Difference, ...], tuple[ArrayDelta, ...]]
"""The differing fields of a record, and the statistics of its differing arrays."""


@dataclasses.dataclass(frozen=True, eq=False)
class Divergence:
    """The first record of an episode that differs.

    Attributes:
        event: ``reset`` or ``step``.
        t: The step number (None for the reset record).
        golden_line: Its line in the golden file (None when missing there).
        actual_line: Its line in the actual file (None when missing there).
        explain: Works out :attr:`differences` and :attr:`arrays`, once;
            None when there is nothing to explain (a record missing on one
            side) or when the comparison did not keep the lines.
    """

    event: str
    t: int | None
    golden_line: int | None
    actual_line: int | None
    explain: Callable[[], Explanation] | None = dataclasses.field(default=None, repr=False)

    @functools.cached_property
    def _explanation(self) -> Explanation:
        return self.explain() if self.explain is not None else ((), ())

    @property
    def differences(self) -> tuple[Difference, ...]:
        """The fields that differ, at most 20, in record order.

        Empty when the record is missing on one side (see ``golden_line``
        and ``actual_line``), or when the comparison did not keep its lines.
        """
        return self._explanation[0]

    @property
    def arrays(self) -> tuple[ArrayDelta, ...]:
        """For each array held in full on both sides that contains a difference:
        how many elements differ and by how much."""
        return self._explanation[1]


@dataclasses.dataclass(frozen=True)
class EpisodeComparison:
    """The comparison of one pair of episodes.

    Attributes:
        index: The episode number.
        golden_path: The golden file that holds the episode (None when the
            golden has fewer episodes).
        actual_path: The actual file that holds it (None when the actual has
            fewer episodes).
        golden_steps: Steps in the golden episode (None when not counted
            because the files were identical).
        actual_steps: Steps in the actual episode (likewise).
        differing_records: Records that differ or have no counterpart.
        first: The first differing record, or None.
        header_differences: Differences of the compared header fields.
        golden_header: The golden's header record, when the episode differs.
        actual_header: The actual header record, when the episode differs.
        env: The sub-env index, in the recording of a vector env.
    """

    index: int
    golden_path: Path | None
    actual_path: Path | None
    golden_steps: int | None = None
    actual_steps: int | None = None
    differing_records: int = 0
    first: Divergence | None = None
    header_differences: tuple[Difference, ...] = ()
    golden_header: dict[str, Any] | None = None
    actual_header: dict[str, Any] | None = None
    env: int | None = None

    @property
    def equal(self) -> bool:
        """Whether the episode matches within tolerance."""
        return (
            self.golden_path is not None
            and self.actual_path is not None
            and self.first is None
            and not self.header_differences
        )


MAX_KEPT_EPISODES: Final = 1000
"""A comparison keeps its first this many episodes, and its first this many
differing ones: a golden of millions of episodes costs no more memory than one
of thousands (``docs/guarantees.md``)."""


@dataclasses.dataclass(frozen=True)
class Comparison:
    """The result of :func:`~gym_goldens.comparison.engine.compare`.

    Attributes:
        golden: The golden folder or file.
        actual: The actual folder or file.
        tolerance: The tolerance used.
        episodes: The episodes kept, in order: the first
            :data:`MAX_KEPT_EPISODES` episode indices present on either
            side, and the first :data:`MAX_KEPT_EPISODES` that differ.
        episode_count: The episodes compared, all of them (counted from
            ``episodes`` when not given).
        differing_count: The episodes that do not match, all of them
            (counted from ``episodes`` when not given).
    """

    golden: Path
    actual: Path
    tolerance: Tolerance
    episodes: tuple[EpisodeComparison, ...]
    episode_count: int = -1
    differing_count: int = -1

    def __post_init__(self) -> None:
        if self.episode_count < 0:
            object.__setattr__(self, "episode_count", len(self.episodes))
        if self.differing_count < 0:
            object.__setattr__(self, "differing_count", len(self.differing))

    @property
    def equal(self) -> bool:
        """Whether every episode matches."""
        return self.differing_count == 0

    def __bool__(self) -> bool:
        return self.equal

    @property
    def differing(self) -> list[EpisodeComparison]:
        """The differing episodes kept: the first :data:`MAX_KEPT_EPISODES` that do not match."""
        return [episode for episode in self.episodes if not episode.equal]
