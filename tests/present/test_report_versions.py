"""The software a golden and a recording were made with, in a mismatch report."""

from __future__ import annotations

from pathlib import Path

import orjson

from gym_goldens import Tolerance, compare
from gym_goldens.present.report import format_comparison
from tests.support.recordings import record_alternating


def _with_versions(folder: Path, versions: dict[str, str]) -> Path:
    """Give every header of the recording in ``folder`` these versions."""
    path = folder / "trajectory.jsonl"
    records = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    for record in records:
        if record["event"] == "header":
            record["versions"] = versions
    path.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in records))
    return folder


def test_software_on_one_side_only_is_added_or_removed(tmp_path: Path) -> None:
    golden = _with_versions(
        record_alternating(tmp_path / "golden", seed=0),
        {"python": "3.11.7", "gymnasium": "1.1.1", "numpy": "2.3.0", "pygame": "2.6.1"},
    )
    actual = _with_versions(
        record_alternating(tmp_path / "actual", seed=1),
        {"python": "3.11.7", "gymnasium": "1.4.0", "numpy": "2.3.0", "pygame-ce": "2.5.8"},
    )
    message = format_comparison(compare(golden, actual, Tolerance()), nodeid=None)
    assert (
        "  recorded with other software (golden -> actual): gymnasium 1.1.1 -> 1.4.0; "
        "added: pygame-ce 2.5.8; removed: pygame 2.6.1\n"
    ) in message
