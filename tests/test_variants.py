"""Golden variants: facts, folder names and the fallback to the plain golden."""

from __future__ import annotations

import importlib.metadata
import platform
from pathlib import Path

import pytest

from gym_goldens.variants import check_variant_by, choose_golden, variant_facts, variant_label


def test_facts_come_from_the_platform_and_installed_distributions() -> None:
    facts = variant_facts(["machine", "system", "python", "gymnasium", "orjson"])
    assert facts == {
        "machine": platform.machine(),
        "system": platform.system(),
        "python": platform.python_version(),
        "gymnasium": importlib.metadata.version("gymnasium"),
        "orjson": importlib.metadata.version("orjson"),
    }
    assert variant_label(facts).startswith(f"machine={platform.machine()},system=")


def test_an_unknown_fact_is_refused() -> None:
    with pytest.raises(
        ValueError, match="names 'no-such-package-xyz', which is neither a platform fact"
    ):
        variant_facts(["no-such-package-xyz"])


@pytest.mark.parametrize(
    ("value", "names"), [("machine", ("machine",)), (["a", "b", "a"], ("a", "b"))]
)
def test_variant_by_takes_a_name_or_a_list(value: object, names: tuple[str, ...]) -> None:
    assert check_variant_by(value) == names


@pytest.mark.parametrize("value", [3, [""], ["machine", 2], None])
def test_variant_by_refuses_other_values(value: object) -> None:
    with pytest.raises(TypeError, match="takes a list of fact names"):
        check_variant_by(value)


def test_the_variant_wins_over_the_plain_golden_which_is_the_fallback(tmp_path: Path) -> None:
    plain = tmp_path / "Pendulum-v1"
    variant = plain / f"machine={platform.machine()}"
    choice = choose_golden(plain, ["machine"])
    assert (choice.path, choice.fallback) == (variant, False)  # nothing yet: the variant is made

    plain.mkdir()
    (plain / "trajectory.jsonl").write_text("{}\n")
    choice = choose_golden(plain, ["machine"])
    assert (choice.path, choice.variant_path, choice.fallback) == (plain, variant, True)
    assert "has no golden of its own, so the plain golden was used" in choice.describe()

    variant.mkdir()
    (variant / "trajectory.jsonl").write_text("{}\n")
    choice = choose_golden(plain, ["machine"])
    assert (choice.path, choice.fallback) == (variant, False)
    assert choice.describe() == f"golden variant: machine={platform.machine()} ({variant})"


@pytest.mark.parametrize(
    "files",
    [
        pytest.param(["episode_00000.jsonl", "episode_00001.jsonl"], id="format 1"),
        pytest.param(["env_0/trajectory.jsonl", "env_1/trajectory.jsonl"], id="vector"),
        pytest.param(["trajectory.jsonl", "episode_00000.jsonl"], id="damaged"),
    ],
)
def test_any_golden_of_the_variant_wins(tmp_path: Path, files: list[str]) -> None:
    # A damaged variant golden is still chosen: the check then says what is wrong with it.
    plain = tmp_path / "CartPole-v1"
    plain.mkdir()
    (plain / "trajectory.jsonl").write_text("{}\n")
    variant = plain / f"machine={platform.machine()}"
    for name in files:
        (variant / name).parent.mkdir(parents=True, exist_ok=True)
        (variant / name).write_text("{}\n")
    choice = choose_golden(plain, ["machine"])
    assert (choice.path, choice.fallback) == (variant, False)


def test_awkward_values_make_safe_folder_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gym_goldens import header

    monkeypatch.setattr(header, "_platform", lambda: {"machine": "x86/64 v2"})
    choice = choose_golden(tmp_path, ["machine"])
    assert choice.path == tmp_path / "machine=x86%2F64%20v2"
    assert choice.label == "machine=x86/64 v2"
