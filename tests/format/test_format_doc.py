"""docs/format.md stays true: its example is a file this version writes."""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym

from gym_goldens import RecordTrajectory, compare, read_recording
from gym_goldens.format.header import FORMAT_VERSION
from tests.support.envs import TAXI

FORMAT_MD = Path(__file__).parents[2] / "docs" / "format.md"


def example_lines() -> str:
    (block,) = re.findall(r"```jsonl\n(.*?)```", FORMAT_MD.read_text(), flags=re.DOTALL)
    return block


def test_documents_the_current_version() -> None:
    assert FORMAT_MD.read_text().startswith(
        f"# The gym-goldens recording format, version {FORMAT_VERSION}"
    )


def test_example_reads_and_matches_a_new_recording(tmp_path: Path) -> None:
    documented = tmp_path / "documented"
    documented.mkdir()
    (documented / "trajectory.jsonl").write_text(example_lines())
    episode = read_recording(documented)[0]
    assert episode.header is not None
    assert episode.header["version"] == FORMAT_VERSION
    assert [record["event"] for record in episode.records] == ["reset", "step", "step"]

    env = RecordTrajectory(gym.make("CartPole-v1"), tmp_path / "recorded")
    env.reset(seed=0)
    env.step(0)
    env.step(1)
    env.close()
    assert compare(documented, tmp_path / "recorded").equal


def test_every_record_field_written_is_documented(tmp_path: Path) -> None:
    text = FORMAT_MD.read_text()
    env = RecordTrajectory(gym.make(TAXI), tmp_path, full_every=2)
    env.reset(seed=0)
    for action in [0, 1, 2, 3]:
        env.step(action)
    env.close()
    episode = read_recording(tmp_path)[0]
    assert episode.header is not None
    fields = set(episode.header)
    for record in episode.records:
        fields |= set(record)
    missing = [field for field in sorted(fields) if f"`{field}`" not in text]
    assert not missing
