"""Every gymnasium space round-trips, and a one-element change is found where it is.

Hypothesis builds random spaces (nested Dict, Tuple, Sequence and OneOf over
Box of every dtype, Discrete with a start, MultiDiscrete, MultiBinary, Text
and Graph), samples them, records the samples as observations, and checks
that the file reads back to the same values and types, that a second
recording compares equal, and that changing one element is reported at that
element's path.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gym_goldens import ArraySummary, RecordTrajectory, compare, read_recording
from gym_goldens.format.codec import ArraySizeSpec
from tests.support.envs import ScriptedEnv

DTYPES = [
    np.float16,
    np.float32,
    np.float64,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.bool_,
]
SHAPES = st.lists(st.integers(0, 3), max_size=3).map(tuple)
KEYS = st.sampled_from(["a", "b", "image", "pos", "mask"])
BATCHABLE = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)


def make_box(dtype: Any, shape: tuple[int, ...], unbounded: bool) -> spaces.Box:
    if dtype is np.bool_:
        return spaces.Box(0, 1, shape, dtype=np.bool_)
    if np.dtype(dtype).kind == "f":
        bound = np.inf if unbounded and dtype is not np.float16 else 10.0
        return spaces.Box(-bound, bound, shape, dtype=dtype)
    return spaces.Box(0, 100, shape, dtype=dtype)


boxes = st.builds(make_box, st.sampled_from(DTYPES), SHAPES, st.booleans())
discretes = st.builds(spaces.Discrete, st.integers(1, 10), start=st.integers(-5, 5))
multi_discretes = st.lists(st.integers(1, 5), min_size=1, max_size=4).map(
    lambda nvec: spaces.MultiDiscrete(nvec, start=[-1] * len(nvec))
)
multi_binaries = st.one_of(
    st.integers(1, 6), st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple)
).map(spaces.MultiBinary)
texts = st.builds(
    spaces.Text,
    st.integers(1, 6),
    min_length=st.integers(0, 1),
    charset=st.sampled_from(["abc", "xyz09 _"]),
)
graph_parts = st.one_of(
    st.builds(make_box, st.sampled_from([np.float32, np.int64]), st.just((2,)), st.just(False)),
    discretes,
)
graphs = st.builds(spaces.Graph, graph_parts, st.one_of(st.none(), graph_parts))
leaves = st.one_of(boxes, discretes, multi_discretes, multi_binaries, texts, graphs)


def _sequence(feature: spaces.Space[Any], stack: bool) -> spaces.Sequence:
    return spaces.Sequence(feature, stack=stack and isinstance(feature, BATCHABLE))


def _children(
    children: st.SearchStrategy[spaces.Space[Any]],
) -> st.SearchStrategy[spaces.Space[Any]]:
    return st.one_of(
        st.dictionaries(KEYS, children, min_size=1, max_size=3).map(spaces.Dict),
        st.lists(children, min_size=1, max_size=3).map(tuple).map(spaces.Tuple),
        st.builds(_sequence, children, st.booleans()),
        st.lists(children, min_size=1, max_size=3).map(tuple).map(spaces.OneOf),
    )


all_spaces = st.recursive(leaves, _children, max_leaves=6)
array_sizes = st.sampled_from([None, 4, 4096])


def sample_of(space: spaces.Space[Any], seed: int) -> Any:
    space.seed(seed)
    return space.sample()


def record(
    path: Path, space: spaces.Space[Any], observations: list[Any], size: ArraySizeSpec
) -> None:
    env = RecordTrajectory(ScriptedEnv(space, observations), path, max_array_size=size)
    env.reset(seed=0)
    for _ in observations[1:]:
        env.step(0)
    env.close()


def summarised(array: np.ndarray, size: int | None) -> bool:
    return size is not None and array.size > size


def assert_faithful(original: Any, decoded: Any, size: int | None) -> None:
    """The decoded JSON value holds exactly the values of ``original``."""
    if isinstance(original, np.ndarray):
        if summarised(original, size):
            assert decoded == ArraySummary.of(original)
        elif original.ndim == 0:
            assert_faithful(original[()], decoded, size)
        else:
            restored = np.asarray(decoded, dtype=original.dtype).reshape(original.shape)
            np.testing.assert_array_equal(restored, original, strict=True)
    elif isinstance(original, np.bool_ | bool):
        assert decoded is bool(original)
    elif isinstance(original, np.generic):
        assert type(original)(decoded) == original
        assert isinstance(decoded, float) == isinstance(original, np.floating)
    elif isinstance(original, dict):
        assert list(decoded) == list(original)
        for key, item in original.items():
            assert_faithful(item, decoded[key], size)
    elif isinstance(original, tuple) and hasattr(original, "_fields"):
        assert sorted(decoded) == sorted(original._fields)
        for field, item in zip(original._fields, original, strict=True):
            assert_faithful(item, decoded[field], size)
    elif isinstance(original, tuple | list):
        assert isinstance(decoded, list)
        assert len(decoded) == len(original)
        for item, back in zip(original, decoded, strict=True):
            assert_faithful(item, back, size)
    else:
        assert decoded == original
        assert type(decoded) is type(original)


def typed_paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    """The numpy values inside ``value`` and the ``dtypes`` leaf each should get."""
    if isinstance(value, np.ndarray):
        yield path, f"{value.dtype}[{','.join(map(str, value.shape))}]"
    elif isinstance(value, np.generic):
        yield path, str(value.dtype)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from typed_paths(item, (*path, key))
    elif isinstance(value, tuple) and hasattr(value, "_fields"):
        for field, item in zip(value._fields, value, strict=True):
            yield from typed_paths(item, (*path, field))
    elif isinstance(value, tuple | list):
        for index, item in enumerate(value):
            yield from typed_paths(item, (*path, index))


def element_paths(
    value: Any, size: int | None, path: tuple[Any, ...] = ()
) -> Iterator[tuple[Any, ...]]:
    """Where a change of one element is reported: an element, or a summarised array."""
    if isinstance(value, np.ndarray):
        if summarised(value, size) or value.ndim == 0:
            if value.size:
                yield path
        else:
            for index in np.ndindex(value.shape):
                yield (*path, *index)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from element_paths(item, size, (*path, key))
    elif isinstance(value, tuple) and hasattr(value, "_fields"):
        for field, item in zip(value._fields, value, strict=True):
            yield from element_paths(item, size, (*path, field))
    elif isinstance(value, tuple | list):
        for index, item in enumerate(value):
            yield from element_paths(item, size, (*path, index))
    elif value is not None:
        yield path


def changed(value: Any) -> Any:
    """Another value of the same type."""
    if isinstance(value, np.bool_ | bool):
        return type(value)(not value)
    if isinstance(value, np.integer):
        info = np.iinfo(value.dtype)
        return value.dtype.type(int(value) + 1 if value < info.max else int(value) - 1)
    if isinstance(value, np.floating):
        return value.dtype.type(float(value) + 1.0 if abs(float(value)) < 1e4 else 0.0)
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return ("b" if value[:1] == "a" else "a") + value[1:]
    raise AssertionError(f"no change defined for {type(value).__name__}")


def change_at(value: Any, path: tuple[Any, ...]) -> Any:
    """A copy of ``value`` with the element at ``path`` changed."""
    if isinstance(value, np.ndarray):
        array = value.copy()
        index = tuple(path) if path else np.unravel_index(0, array.shape)
        array[index] = changed(array[index])
        return array
    if not path:
        return changed(value)
    head, *rest = path
    if isinstance(value, dict):
        return {**value, head: change_at(value[head], tuple(rest))}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return value._replace(**{head: change_at(getattr(value, head), tuple(rest))})
    items = list(value)
    items[head] = change_at(items[head], tuple(rest))
    return type(value)(items) if isinstance(value, tuple) else items


def dtypes_at(mirror: Any, path: tuple[Any, ...]) -> Any:
    for segment in path:
        mirror = mirror[segment]
    return mirror


property_settings = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@property_settings
@given(space=all_spaces, seed=st.integers(0, 2**16), size=array_sizes)
def test_samples_round_trip_and_compare_equal(
    space: spaces.Space[Any], seed: int, size: int | None
) -> None:
    sample, again = sample_of(space, seed), sample_of(space, seed)
    with tempfile.TemporaryDirectory() as folder:
        first, second = Path(folder, "first"), Path(folder, "second")
        record(first, space, [sample, sample], size)
        record(second, space, [again, again], size)
        assert compare(first, second).equal
        episode = read_recording(first)[0]
    reset, step = episode.records
    assert_faithful(sample, reset["obs"], size)
    assert_faithful(sample, step["obs"], size)
    for path, leaf in typed_paths(sample):
        assert dtypes_at(reset["dtypes"]["obs"], path) == leaf
    assert episode.header is not None
    assert episode.header["observation_space"]["type"] == type(space).__name__


@property_settings
@given(space=all_spaces, seed=st.integers(0, 2**16), size=array_sizes, data=st.data())
def test_one_changed_element_is_reported_at_its_path(
    space: spaces.Space[Any], seed: int, size: int | None, data: st.DataObject
) -> None:
    sample = sample_of(space, seed)
    paths = list(element_paths(sample, size))
    assume(paths)
    path = data.draw(st.sampled_from(paths), label="changed element")
    with tempfile.TemporaryDirectory() as folder:
        golden, actual = Path(folder, "golden"), Path(folder, "actual")
        record(golden, space, [sample, sample], size)
        record(actual, space, [change_at(sample, path), sample], size)
        comparison = compare(golden, actual)
    (episode,) = comparison.differing
    assert episode.first is not None
    assert episode.first.event == "reset"
    assert [difference.path for difference in episode.first.differences] == [("obs", *path)]
    assert episode.differing_records == 1


EVERY_SPACE = {
    **{f"Box-{np.dtype(dtype).name}": make_box(dtype, (2, 3), False) for dtype in DTYPES},
    "Box-scalar": spaces.Box(-1.0, 1.0, (), dtype=np.float32),
    "Discrete-start": spaces.Discrete(5, start=-2),
    "MultiDiscrete": spaces.MultiDiscrete([[2, 3], [4, 5]], start=[[1, 1], [0, -3]]),
    "MultiBinary": spaces.MultiBinary([2, 4]),
    "Text": spaces.Text(8, min_length=1),
    "Dict-nested": spaces.Dict(
        {
            "image": spaces.Box(0, 255, (4, 4, 3), dtype=np.uint8),
            "state": spaces.Dict({"pos": spaces.Box(-1, 1, (2,)), "mode": spaces.Discrete(3)}),
        }
    ),
    "Tuple-nested": spaces.Tuple(
        (spaces.Discrete(32), spaces.Tuple((spaces.Discrete(11), spaces.MultiBinary(3))))
    ),
    "Sequence": spaces.Sequence(spaces.Box(-1, 1, (2,)), stack=False),
    "Sequence-stacked": spaces.Sequence(spaces.Discrete(4), stack=True),
    "Graph": spaces.Graph(spaces.Box(-1, 1, (3,)), spaces.Discrete(4)),
    "OneOf": spaces.OneOf((spaces.Discrete(3), spaces.Box(-1, 1, (2,)))),
}


def non_empty_sample(space: spaces.Space[Any]) -> Any:
    for seed in range(100):
        sample = sample_of(space, seed)
        if list(element_paths(sample, None)):
            return sample
    raise AssertionError(f"no sample of {space} has an element")


class TestEverySpace:
    """One example of each space: a readable list of what is covered."""

    @pytest.mark.parametrize("space", EVERY_SPACE.values(), ids=list(EVERY_SPACE))
    def test_round_trip(self, space: spaces.Space[Any], tmp_path: Path) -> None:
        sample = non_empty_sample(space)
        record(tmp_path / "one", space, [sample, sample], 4096)
        record(tmp_path / "two", space, [sample, sample], 4096)
        assert compare(tmp_path / "one", tmp_path / "two").equal
        reset = read_recording(tmp_path / "one")[0].records[0]
        assert_faithful(sample, reset["obs"], None)

    @pytest.mark.parametrize("space", EVERY_SPACE.values(), ids=list(EVERY_SPACE))
    def test_one_change_at_first_and_last_element(
        self, space: spaces.Space[Any], tmp_path: Path
    ) -> None:
        sample = non_empty_sample(space)
        paths = list(element_paths(sample, None))
        for path in {paths[0], paths[-1]}:
            golden, actual = tmp_path / f"golden{path}", tmp_path / f"actual{path}"
            record(golden, space, [sample, sample], 4096)
            record(actual, space, [sample, change_at(sample, path)], 4096)
            first = compare(golden, actual).differing[0].first
            assert first is not None
            assert first.t == 1
            assert [d.path for d in first.differences] == [("obs", *path)]
