"""Large arrays: summaries, per-field thresholds, gzip files and digest steps."""

from __future__ import annotations

import gzip
import itertools
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import xxhash
from gymnasium import spaces

from gym_goldens import ArraySummary, RecordTrajectory, Tolerance, compare, read_recording
from gym_goldens.format.codec import Encoder, decode_line
from gym_goldens.present.report import format_comparison
from tests.support.envs import ImageEnv, ScriptedEnv, run


def record_image(path: Path, poke: int | None = None, steps: int = 1000, **storage: object) -> None:
    run(RecordTrajectory(ImageEnv(poke, length=steps), path, **storage), [0] * steps)  # type: ignore[arg-type]


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


class TestArraySummary:
    def test_equal_when_dtype_shape_and_digest_are(self) -> None:
        array = np.arange(10, dtype=np.int16)
        summary = ArraySummary.of(array)
        assert summary == ArraySummary.of(array.copy())
        # A summary read from a format 1.0 file has no sum or bands and is still equal.
        legacy = ArraySummary(summary.dtype, summary.shape, summary.digest, 0.0, 9.0, 4.5)
        assert legacy == summary
        assert hash(legacy) == hash(summary)

    def test_one_changed_element_changes_digest_sum_and_one_band(self) -> None:
        frame = np.zeros((210, 160, 3), dtype=np.uint8)
        poked = frame.copy()
        poked[100, 5, 1] = 50
        before, after = ArraySummary.of(frame), ArraySummary.of(poked)
        assert before != after
        assert (before.sum, after.sum) == (0, 50)
        assert before.bands is not None
        assert after.bands is not None
        changed = [
            i for i, (b, a) in enumerate(zip(before.bands, after.bands, strict=True)) if b != a
        ]
        assert len(changed) == 1
        first, last = before.band_rows(changed[0])
        assert first <= 100 <= last

    def test_band_rows_cover_every_row_once(self) -> None:
        summary = ArraySummary.of(np.zeros((37, 2)))
        assert summary.bands is not None
        assert len(summary.bands) == 16
        rows = [summary.band_rows(i) for i in range(16)]
        assert rows[0][0] == 0
        assert rows[-1][1] == 36
        assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(rows))

    def test_sum_of_int64_is_exact(self) -> None:
        big = np.full(5000, 2**60, dtype=np.int64)
        assert ArraySummary.of(big).sum == 5000 * 2**60

    def test_summary_of_floats_skips_nonfinite(self) -> None:
        array = np.array([1.0, np.nan, np.inf, 3.0] * 2000)
        summary = ArraySummary.of(array)
        assert (summary.min, summary.max, summary.sum) == (1.0, 3.0, 8000.0)

    def test_round_trip_through_a_line(self) -> None:
        array = np.arange(5000, dtype=np.float32)
        line = Encoder().encode({"obs": array})
        decoded = decode_line(line)["obs"]
        assert decoded == ArraySummary.of(array)
        assert decoded.bands == ArraySummary.of(array).bands
        assert decoded.sum == float(array.sum(dtype=np.float64))


class TestDigests:
    """The digests of summaries (xxh3), as documented."""

    def test_the_digest_is_the_xxh3_of_the_band_hashes(self) -> None:
        array = np.arange(40 * 3, dtype=np.int16).reshape(40, 3)
        summary = ArraySummary.of(array)
        bands = [xxhash.xxh3_64_digest(part.tobytes()) for part in np.array_split(array, 16)]
        assert summary.bands == tuple(band.hex() for band in bands)
        assert summary.digest == xxhash.xxh3_128_hexdigest(b"".join(bands))
        assert decode_line(Encoder(max_array_size=4).encode({"obs": array}))["obs"] == summary

    @pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex128])
    def test_negative_zero_and_nan_payloads_summarise_as_the_float_rule_compares(
        self, dtype: type
    ) -> None:
        plain = np.zeros(5000, dtype=dtype)
        plain[7] = np.nan
        odd = plain.copy()
        odd[3] = -0.0
        # Another NaN at 7: its sign bit set, another payload.
        floats = odd.view(odd.real.dtype)
        bits = floats.view(f"u{floats.itemsize}")
        # Built as one unsigned value: numpy 1 casts no mix of unsigned and int.
        sign_and_payload = bits.dtype.type((1 << (8 * floats.itemsize - 1)) | 1)
        bits[floats.size // odd.size * 7] ^= sign_and_payload
        assert np.isnan(odd[7])
        assert odd.tobytes() != plain.tobytes()
        assert ArraySummary.of(odd) == ArraySummary.of(plain)

    def test_negative_zero_in_a_summarised_obs_matches_zero_without_tolerance(
        self, tmp_path: Path
    ) -> None:
        def record(folder: Path, zero: float) -> None:
            frame = np.full((100, 50), zero, dtype=np.float32)
            space = spaces.Box(-1.0, 1.0, (100, 50), dtype=np.float32)
            run(RecordTrajectory(ScriptedEnv(space, [frame, frame, frame]), folder), [0, 0])

        record(tmp_path / "golden", 0.0)
        record(tmp_path / "actual", -0.0)
        exact = Tolerance(rtol=0.0, atol=0.0)
        assert compare(tmp_path / "golden", tmp_path / "actual", exact).equal

    def test_arrays_of_objects_summarise_by_their_items(self) -> None:
        # Equal items in other objects: the addresses the arrays hold differ.
        first = np.array([f"item {i}" for i in range(5000)], dtype=object)
        second = np.array([f"item {i}" for i in range(5000)], dtype=object)
        changed = second.copy()
        changed[4321] = "moved"
        assert ArraySummary.of(first) == ArraySummary.of(second)
        assert ArraySummary.of(first) != ArraySummary.of(changed)
        encoder = Encoder()
        assert encoder.encode({"info": {"names": first}}) == encoder.encode(
            {"info": {"names": second}}
        )

    def test_a_recorded_array_of_objects_matches_its_own_recording(self, tmp_path: Path) -> None:
        def record(folder: Path) -> None:
            names = np.array([str(i) for i in range(5000)], dtype=object)
            space = spaces.Discrete(2)
            env = ScriptedEnv(space, [0, 1, 0], infos=[{}, {"names": names}, {"names": names}])
            run(RecordTrajectory(env, folder), [0, 0])

        record(tmp_path / "golden")
        record(tmp_path / "actual")
        assert compare(tmp_path / "golden", tmp_path / "actual").equal


class TestMaxArraySize:
    def test_per_field_sizes_most_specific_wins(self) -> None:
        encoder = Encoder(max_array_size={"obs": 4, "obs.image": None, "info.*.frame": 2})
        record = {
            "obs": {"image": np.zeros(10), "vector": np.zeros(5)},
            "info": {"a": {"frame": np.zeros(3)}, "b": np.zeros(5000)},
        }
        decoded = decode_line(encoder.encode(record))
        assert decoded["obs"]["image"] == [0.0] * 10
        assert isinstance(decoded["obs"]["vector"], ArraySummary)
        assert isinstance(decoded["info"]["a"]["frame"], ArraySummary)
        # Fields no pattern names keep the default threshold.
        assert isinstance(decoded["info"]["b"], ArraySummary)

    def test_same_bytes_on_the_fast_and_careful_paths(self) -> None:
        encoder = Encoder(max_array_size={"obs.small": 2})
        record = {"obs": {"big": np.arange(10), "small": np.arange(3)}}
        careful = encoder._encode_careful(record)
        assert encoder.encode(record) == careful

    @pytest.mark.parametrize("bad", [-1, 1.5, "big", {"obs": -2}])
    def test_bad_sizes_are_refused(self, bad: object) -> None:
        with pytest.raises((ValueError, TypeError), match="max_array_size"):
            Encoder(max_array_size=bad)  # type: ignore[arg-type]

    def test_named_tuples_are_written_by_field(self) -> None:
        from gymnasium.spaces import GraphInstance

        graph = GraphInstance(np.array([[1.0], [2.0]]), None, np.array([[0, 1]]))
        line = Encoder().encode({"obs": graph})
        assert line == b'{"obs":{"edge_links":[[0,1]],"edges":null,"nodes":[[1.0],[2.0]]}}'


class TestImageGoldens:
    def test_thousand_image_steps_stay_under_one_kib_per_step(self, tmp_path: Path) -> None:
        record_image(tmp_path)
        size = folder_size(tmp_path)
        assert size < 1000 * 1024  # the bound: under 1 MiB, under 1 KiB a step
        episode = read_recording(tmp_path)[0]
        assert len(episode.steps) == 1000
        assert isinstance(episode.steps[0]["obs"], ArraySummary)

    def test_one_changed_pixel_fails_and_says_where(self, tmp_path: Path) -> None:
        record_image(tmp_path / "golden")
        record_image(tmp_path / "actual", poke=437)
        comparison = compare(tmp_path / "golden", tmp_path / "actual")
        assert not comparison.equal
        (episode,) = comparison.differing
        assert episode.differing_records == 1
        assert episode.first is not None
        assert episode.first.t == 437
        message = format_comparison(comparison)
        assert "step t=437, obs" in message
        assert (
            "array uint8[210, 160, 3] (stored as a summary) changed: rows 93-105 of 210" in message
        )
        assert "sum" in message
        assert "(+50)" in message

    def test_full_arrays_say_how_many_elements_differ(self, tmp_path: Path) -> None:
        full = {"max_array_size": {"obs": None}}
        record_image(tmp_path / "golden", steps=20, **full)
        record_image(tmp_path / "actual", poke=7, steps=20, **full)
        comparison = compare(tmp_path / "golden", tmp_path / "actual")
        first = comparison.differing[0].first
        assert first is not None
        (delta,) = first.arrays
        assert delta.path == ("obs",)
        assert (delta.differing, delta.size, delta.first) == (1, 210 * 160 * 3, (105, 1, 1))
        assert delta.max_abs == 50
        message = format_comparison(comparison)
        assert (
            "obs: 1 of 100800 elements differ (0.000992%), largest |diff| 50, first at [105, 1, 1]"
            in message
        )


class TestMixedStorage:
    """A golden of summaries against a recording of full arrays, and the other way round."""

    def test_same_frames_match_whatever_the_storage(self, tmp_path: Path) -> None:
        record_image(tmp_path / "summary", steps=5)
        record_image(tmp_path / "full", steps=5, max_array_size=None)
        assert compare(tmp_path / "summary", tmp_path / "full").equal
        assert compare(tmp_path / "full", tmp_path / "summary").equal

    def test_a_changed_pixel_is_described_from_the_full_side(self, tmp_path: Path) -> None:
        record_image(tmp_path / "summary", steps=5)
        record_image(tmp_path / "full", poke=3, steps=5, max_array_size=None)
        comparison = compare(tmp_path / "summary", tmp_path / "full")
        first = comparison.differing[0].first
        assert first is not None
        assert first.t == 3
        message = format_comparison(comparison)
        assert "recorded with other storage settings (golden -> actual): max_array_size" in message
        assert "rows 93-105 of 210 (1 of 16 bands); sum" in message
        assert "(the golden holds a summary only: its elements are not known)" in message

    def test_a_changed_shape_is_still_a_difference(self, tmp_path: Path) -> None:
        record_image(tmp_path / "summary", steps=2)
        small = RecordTrajectory(
            ImageEnv(shape=(210, 160, 2), length=2), tmp_path / "full", max_array_size=None
        )
        run(small, [0, 0])
        assert not compare(tmp_path / "summary", tmp_path / "full").equal


class TestCompress:
    def test_gzip_files_read_and_compare_transparently(self, tmp_path: Path) -> None:
        record_image(tmp_path / "plain", steps=50)
        record_image(tmp_path / "gz", steps=50, compress=True)
        files = sorted(p.name for p in (tmp_path / "gz").iterdir())
        assert files == ["trajectory.jsonl.gz"]
        with gzip.open(tmp_path / "gz" / files[0], "rb") as handle:
            assert handle.readline().startswith(b'{"action_space"')
        assert compare(tmp_path / "plain", tmp_path / "gz").equal
        assert folder_size(tmp_path / "gz") < folder_size(tmp_path / "plain")

    def test_same_lines_give_the_same_gzip_bytes(self, tmp_path: Path) -> None:
        record_image(tmp_path / "one", steps=5, compress=True)
        record_image(tmp_path / "two", steps=5, compress=True)
        name = "trajectory.jsonl.gz"
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()

    def test_flushes_append_gzip_members(self, tmp_path: Path) -> None:
        env = RecordTrajectory(
            ImageEnv(length=30, shape=(4,)), tmp_path, compress=True, flush_every=7
        )
        run(env, [0] * 30)
        assert len(read_recording(tmp_path)[0].steps) == 30


class TestFullEvery:
    def test_only_every_kth_step_is_kept_in_full(self, tmp_path: Path) -> None:
        record_image(tmp_path, steps=100, full_every=25)
        steps = read_recording(tmp_path)[0].steps
        full = [step["t"] for step in steps if "digest" not in step]
        assert full == [1, 25, 50, 75, 100]
        assert all(len(step["digest"]) == 16 for step in steps if "digest" in step)

    def test_a_long_rollout_stays_small(self, tmp_path: Path) -> None:
        env = ImageEnv(shape=(4,), length=10**5)
        run(RecordTrajectory(env, tmp_path, full_every=1000, compress=True), [0] * 10**5)
        assert folder_size(tmp_path) < 2 * 1024 * 1024  # about 14 bytes a step
        steps = read_recording(tmp_path)[0].steps
        assert sum("digest" not in step for step in steps) == 101  # step 1 and every 1000th

    def test_a_change_at_a_digest_step_is_caught(self, tmp_path: Path) -> None:
        for name, poke in [("golden", None), ("actual", 4321)]:
            env = ImageEnv(poke, shape=(4,), length=10**4)
            run(RecordTrajectory(env, tmp_path / name, full_every=1000), [0] * 10**4)
        comparison = compare(tmp_path / "golden", tmp_path / "actual")
        first = comparison.differing[0].first
        assert first is not None
        assert first.t == 4321
        assert [d.path for d in first.differences] == [("digest",)]
        message = format_comparison(comparison)
        assert "only its digest is stored (every 1000th step is kept in full" in message


def test_a_summary_whose_sum_exceeds_64_bits_is_written() -> None:
    array = np.full((3, 4), -(2**62), dtype=np.int64)  # the exact sum needs 66 bits
    summary = ArraySummary.of(array)
    assert summary.sum == 12 * -(2**62)
    line = Encoder(max_array_size=8).encode({"obs": array})
    read = decode_line(line)["obs"]
    assert read == summary
    assert read.sum == float(12 * -(2**62))


def test_a_summary_whose_float_sum_overflows_is_written_without_a_warning() -> None:
    # The sum of finite float64 values can exceed the largest float64. That is
    # the env's data, not an error of the recording: no RuntimeWarning, which
    # a suite run with -W error would turn into a failed recording.
    array = np.full(5000, 1e308)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        summary = ArraySummary.of(array)
        line = Encoder().encode({"obs": array})
    assert (summary.min, summary.max, summary.sum) == (1e308, 1e308, math.inf)
    assert summary.mean == math.inf
    assert decode_line(line)["obs"] == summary
