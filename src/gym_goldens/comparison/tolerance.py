"""Tolerance settings: how close floats must be, field by field.

A float matches when ``|actual - golden| <= atol + rtol * |golden|``; NaN
matches NaN; +/-inf match only themselves (the rule of
:mod:`gym_goldens.comparison.floats`). Ints, bools and strings match exactly.
The defaults are those of ``pytest.approx`` (:mod:`~gym_goldens.comparison.defaults`).

A *field pattern* (:mod:`gym_goldens.format.fields`) names a part of a
record: ``"obs"``, ``"reward"``, ``"info.x_velocity"``, ``"obs.image"``,
``"obs[2]"``; ``*`` stands for any one key or index (``"info.*.time"``).
``rtol`` and ``atol`` take a number for every field or a mapping from
patterns to numbers; the most specific pattern wins. ``ignore`` lists
patterns left out of the comparison; ignoring a field also leaves out its
numpy type (its entry in the record's ``dtypes``).

Frames (PNG files, see :mod:`gym_goldens.format.frames`) are compared pixel
by pixel, within a :class:`~gym_goldens.comparison.pixels.PixelTolerance`:
``pixel_atol``, ``max_diff_pixels`` and ``max_diff_pixel_ratio`` each take a
number for every frame or a mapping from patterns to numbers, as ``rtol``
does; by default no pixel may differ.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from typing import Any, Final

from gym_goldens.comparison.defaults import DEFAULT_ATOL, DEFAULT_RTOL
from gym_goldens.comparison.pixels import PixelTolerance
from gym_goldens.format.fields import ANY, FieldPath, parse_pattern, specificity

__all__ = [
    "PIXEL_KEYS",
    "Tolerance",
    "ToleranceNode",
    "ToleranceSpec",
]

ToleranceSpec = float | Mapping[str, float]
"""A number for every field, or a mapping from field patterns to numbers."""

PIXEL_KEYS: Final = ("pixel_atol", "max_diff_pixels", "max_diff_pixel_ratio")
"""The settings of a :class:`~gym_goldens.comparison.pixels.PixelTolerance`, each set by field."""

_EXACT_PIXELS: Final = PixelTolerance()


class ToleranceNode:
    """A field in the tolerance tree: its ``rtol``, ``atol`` and whether it is ignored.

    The comparison walks a record and this tree together: :meth:`child` gives
    the node of a key or index. Children refine their field; a key no pattern
    names inherits its parent's settings. A *leaf* has no children: every
    value inside it has its settings. The root also keeps what the
    comparison caches for this tree (``cache``). ``pixels`` is the pixel
    tolerance of the frames at and below the node.
    """

    __slots__ = (
        "any_child",
        "atol",
        "cache",
        "children",
        "ignored",
        "inherited",
        "leaf",
        "pixels",
        "rtol",
    )

    def __init__(
        self, rtol: float, atol: float, ignored: bool, pixels: PixelTolerance = _EXACT_PIXELS
    ) -> None:
        self.rtol = rtol
        self.atol = atol
        self.ignored = ignored
        self.pixels = pixels
        self.children: dict[str | int, ToleranceNode] = {}
        self.any_child: ToleranceNode | None = None
        self.inherited: ToleranceNode | None = None
        self.leaf = True
        # Filled by the comparison, on the root only (compiled checks by layout).
        self.cache: dict[object, object] | None = None

    def child(self, key: str | int) -> ToleranceNode:
        """The node of ``key`` (a dict key or a list index) below this one."""
        if self.leaf:
            return self
        found = self.children.get(key)
        if found is not None:
            return found
        if self.any_child is not None:
            return self.any_child
        if self.inherited is None:
            self.inherited = self._inherited()
        return self.inherited

    def _inherited(self) -> ToleranceNode:
        return ToleranceNode(self.rtol, self.atol, self.ignored, self.pixels)

    def _copy(self) -> ToleranceNode:
        node = ToleranceNode(self.rtol, self.atol, self.ignored, self.pixels)
        node.leaf = self.leaf
        node.children = {key: child._copy() for key, child in self.children.items()}
        node.any_child = self.any_child._copy() if self.any_child is not None else None
        return node

    def _descend(self, segment: str | int) -> list[ToleranceNode]:
        """The nodes a pattern segment reaches below this one, made if missing."""
        self.leaf = False
        if segment == ANY:
            if self.any_child is None:
                self.any_child = self._inherited()
            # A wildcard also reaches the keys that other patterns named.
            return [self.any_child, *self.children.values()]
        if segment not in self.children:
            # A named key starts as what the wildcard says of it, subtree included.
            source = self.any_child
            self.children[segment] = source._copy() if source is not None else self._inherited()
        return [self.children[segment]]


@dataclasses.dataclass(frozen=True)
class Tolerance:
    """Float tolerances and ignored fields for a comparison.

    Args:
        rtol: Relative tolerance for every field not listed in ``field_rtol``.
        atol: Absolute tolerance for every field not listed in ``field_atol``.
        field_rtol: Relative tolerance by field pattern.
        field_atol: Absolute tolerance by field pattern.
        ignore: Field patterns left out of the comparison.
        pixels: The pixel tolerance of every frame not listed in ``field_pixels``.
        field_pixels: Pixel tolerances by field pattern: for each of
            :data:`PIXEL_KEYS`, a mapping from patterns to values.

    Example:
        >>> tol = Tolerance.build(rtol={"obs": 1e-4}, ignore=["info.time"])
        >>> tol.for_path(("obs", 2))
        (0.0001, 1e-12)
    """

    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    field_rtol: Mapping[str, float] = dataclasses.field(default_factory=dict)
    field_atol: Mapping[str, float] = dataclasses.field(default_factory=dict)
    ignore: tuple[str, ...] = ()
    pixels: PixelTolerance = _EXACT_PIXELS
    field_pixels: Mapping[str, Mapping[str, float]] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, value in [("rtol", self.rtol), ("atol", self.atol)]:
            _check_number(name, value)
        for name, table in [("rtol", self.field_rtol), ("atol", self.field_atol)]:
            for pattern, value in table.items():
                parse_pattern(pattern)
                _check_number(f"{name}[{pattern!r}]", value)
        for pattern in self.ignore:
            parse_pattern(pattern)
        for name, table in self.field_pixels.items():
            if name not in PIXEL_KEYS:
                raise ValueError(f"field_pixels: {name!r} is not one of {', '.join(PIXEL_KEYS)}")
            for pattern, value in table.items():
                parse_pattern(pattern)
                _pixel_value(f"{name}[{pattern!r}]", name, value)

    @classmethod
    def build(
        cls,
        rtol: ToleranceSpec | None = None,
        atol: ToleranceSpec | None = None,
        ignore: Iterable[str] = (),
    ) -> Tolerance:
        """Build from user-facing arguments: numbers or pattern mappings."""
        return cls().refine(rtol=rtol, atol=atol, ignore=ignore)

    def refine(
        self,
        *,
        rtol: ToleranceSpec | None = None,
        atol: ToleranceSpec | None = None,
        ignore: Iterable[str] = (),
        pixel_atol: ToleranceSpec | None = None,
        max_diff_pixels: ToleranceSpec | None = None,
        max_diff_pixel_ratio: ToleranceSpec | None = None,
    ) -> Tolerance:
        """Layer settings on top of these ones.

        A number replaces the tolerance of every field (and forgets earlier
        per-field values); a mapping adds or replaces per-field values and
        leaves the rest as they were. Ignored fields accumulate. The pixel
        settings layer the same way, each on its own.
        """
        new_rtol, new_field_rtol = _layer(self.rtol, self.field_rtol, rtol, "rtol")
        new_atol, new_field_atol = _layer(self.atol, self.field_atol, atol, "atol")
        if isinstance(ignore, str):
            ignore = [ignore]
        merged_ignore = tuple(dict.fromkeys([*self.ignore, *ignore]))
        pixels, field_pixels = _layer_pixels(
            self.pixels,
            self.field_pixels,
            dict(zip(PIXEL_KEYS, (pixel_atol, max_diff_pixels, max_diff_pixel_ratio), strict=True)),
        )
        return Tolerance(
            new_rtol,
            new_atol,
            new_field_rtol,
            new_field_atol,
            merged_ignore,
            pixels,
            field_pixels,
        )

    def tree(self) -> ToleranceNode:
        """The tolerance tree the comparison walks (built once per instance)."""
        cached: ToleranceNode | None = self.__dict__.get("_tree")
        if cached is None:
            cached = self._build_tree()
            object.__setattr__(self, "_tree", cached)
        return cached

    def for_path(self, path: FieldPath) -> tuple[float, float]:
        """The ``(rtol, atol)`` that applies at ``path``."""
        node = self.tree()
        for segment in path:
            node = node.child(segment)
        return node.rtol, node.atol

    def describe(self) -> str:
        """A short human-readable form, for messages."""
        parts = [f"rtol={self.rtol:g}", f"atol={self.atol:g}"]
        parts += [f"rtol[{p}]={v:g}" for p, v in self.field_rtol.items()]
        parts += [f"atol[{p}]={v:g}" for p, v in self.field_atol.items()]
        if self.pixels != _EXACT_PIXELS:
            parts += [
                f"{name}={getattr(self.pixels, name)!r}"
                for name in PIXEL_KEYS
                if getattr(self.pixels, name) != getattr(_EXACT_PIXELS, name)
            ]
        parts += [
            f"{name}[{pattern}]={value!r}"
            for name, table in self.field_pixels.items()
            for pattern, value in table.items()
        ]
        if self.ignore:
            parts.append(f"ignore={list(self.ignore)}")
        return ", ".join(parts)

    def _build_tree(self) -> ToleranceNode:
        root = ToleranceNode(self.rtol, self.atol, False, self.pixels)
        # An ignored field's numpy type is ignored too ("info.time" -> "dtypes.info.time").
        ignored = {
            *self.ignore,
            *(f"dtypes.{p}" for p in self.ignore if p.split(".")[0] not in ("dtypes", "*")),
        }
        patterns = {*self.field_rtol, *self.field_atol, *ignored}
        patterns |= {pattern for table in self.field_pixels.values() for pattern in table}
        # Less specific patterns first (shorter, then wildcards before names),
        # so that more specific ones refine what they inherit.
        for pattern in sorted(patterns, key=_specificity):
            nodes = [root]
            for segment in parse_pattern(pattern):
                nodes = [found for node in nodes for found in node._descend(segment)]
            for node in nodes:
                if pattern in self.field_rtol:
                    _set_below(node, "rtol", self.field_rtol[pattern])
                if pattern in self.field_atol:
                    _set_below(node, "atol", self.field_atol[pattern])
                if pattern in ignored:
                    _set_below(node, "ignored", True)
                for name, table in self.field_pixels.items():
                    if pattern in table:
                        _set_pixels_below(node, name, table[pattern])
        return root


def _specificity(pattern: str) -> tuple[int, int, str]:
    return (*specificity(parse_pattern(pattern)), pattern)


def _set_below(node: ToleranceNode, attribute: str, value: float | bool) -> None:
    setattr(node, attribute, value)
    for child in [*node.children.values(), node.any_child]:
        if child is not None:
            _set_below(child, attribute, value)


def _set_pixels_below(node: ToleranceNode, name: str, value: float) -> None:
    changed: dict[str, Any] = {name: value}
    node.pixels = dataclasses.replace(node.pixels, **changed)
    for child in [*node.children.values(), node.any_child]:
        if child is not None:
            _set_pixels_below(child, name, value)


def _layer_pixels(
    default: PixelTolerance,
    table: Mapping[str, Mapping[str, float]],
    specs: Mapping[str, ToleranceSpec | None],
) -> tuple[PixelTolerance, dict[str, dict[str, float]]]:
    """The pixel settings with ``specs`` layered on, as :meth:`Tolerance.refine` says."""
    merged = {name: dict(values) for name, values in table.items()}
    for name, spec in specs.items():
        if spec is None:
            continue
        if isinstance(spec, Mapping):
            patterns = merged.setdefault(name, {})
            for pattern, value in spec.items():
                if not isinstance(pattern, str):
                    raise TypeError(f"{name} keys must be field patterns (str), got {pattern!r}")
                patterns[pattern] = _pixel_value(f"{name}[{pattern!r}]", name, value)
        else:
            changed: dict[str, Any] = {name: _pixel_value(name, name, spec)}
            default = dataclasses.replace(default, **changed)
            merged.pop(name, None)
    return default, {name: values for name, values in merged.items() if values}


def _pixel_value(label: str, name: str, value: object) -> float:
    """``value`` of the pixel setting ``name``, checked as a PixelTolerance checks it."""
    if isinstance(value, Mapping):
        raise TypeError(f"{label} must be a number, got a mapping {value!r}")
    try:
        checked = PixelTolerance(**{name: value})  # type: ignore[arg-type]
    except (TypeError, ValueError) as error:
        raise type(error)(str(error).replace(name, label, 1)) from None
    found: float = getattr(checked, name)
    return found


def _layer(
    default: float, table: Mapping[str, float], spec: ToleranceSpec | None, name: str
) -> tuple[float, dict[str, float]]:
    if spec is None:
        return default, dict(table)
    if isinstance(spec, Mapping):
        merged = dict(table)
        for pattern, value in spec.items():
            if not isinstance(pattern, str):
                raise TypeError(f"{name} keys must be field patterns (str), got {pattern!r}")
            merged[pattern] = _check_number(f"{name}[{pattern!r}]", value)
        return default, merged
    return _check_number(name, spec), {}


def _check_number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"{name} must be a number or a mapping of field patterns to numbers, "
            f"got {type(value).__name__} {value!r}"
        )
    number = float(value)
    if math.isnan(number) or number < 0:
        raise ValueError(f"{name} must be a non-negative number, got {value!r}")
    return number
