"""registered_envs(): the registered envs of a package, selected by glob, as pytest params."""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path

import gymnasium as gym
import pytest

from gym_goldens import GoldensError, registered_envs
from gym_goldens.audit.registry import NoRegisteredEnvsError, select_envs
from tests.support.envs import TAXI

CLASSIC_CONTROL = [
    "Acrobot-v1",
    "CartPole-v0",
    "CartPole-v1",
    "MountainCar-v0",
    "MountainCarContinuous-v0",
    "Pendulum-v1",
]
MUJOCO_PY_MOVED = (
    "The mujoco v2 and v3 based environments have been moved to the gymnasium-robotics project"
)


def ids(params: list[object]) -> list[str]:
    return [param.id for param in params]  # type: ignore[attr-defined]


def skip_reason(param: object) -> str | None:
    marks = [mark for mark in param.marks if mark.name == "skip"]  # type: ignore[attr-defined]
    return marks[0].kwargs["reason"] if marks else None


def test_a_family_is_selected_by_its_entry_point() -> None:
    params = registered_envs(entry_point="gymnasium.envs.classic_control*")
    assert ids(params) == CLASSIC_CONTROL
    assert [param.values for param in params] == [(env_id,) for env_id in CLASSIC_CONTROL]
    assert all(skip_reason(param) is None for param in params)
    assert params.left_out == {}


def test_toy_text_is_all_there() -> None:
    toy_text = ids(registered_envs(entry_point="gymnasium.envs.toy_text*"))
    assert {"Blackjack-v1", "FrozenLake-v1", "FrozenLake8x8-v1", TAXI} <= set(toy_text)
    assert toy_text == sorted(toy_text)
    for env_id in toy_text:
        assert str(gym.spec(env_id).entry_point).startswith("gymnasium.envs.toy_text")


def test_patterns_are_case_sensitive_globs_on_the_whole_id() -> None:
    assert ids(registered_envs("CartPole-v?")) == ["CartPole-v0", "CartPole-v1"]
    assert ids(registered_envs("Mountain*-v0")) == ["MountainCar-v0", "MountainCarContinuous-v0"]
    # The namespace is part of the id, and * matches its slash too.
    assert ids(registered_envs("*Pole-v[1]")) == ["CartPole-v1", "phys2d/CartPole-v1"]
    with pytest.raises(NoRegisteredEnvsError) as info:
        registered_envs("cartpole-*")
    message = str(info.value)
    assert message.startswith("no registered env id matches 'cartpole-*' (")
    assert "patterns are case-sensitive; these ids match when case is ignored: " in message
    assert "CartPole-v0, CartPole-v1" in message
    # A pattern is matched against the whole id, not a part of it.
    with pytest.raises(NoRegisteredEnvsError, match="no registered env id matches 'CartPole'"):
        registered_envs("CartPole")


def test_ids_come_sorted_and_once_however_many_patterns_match() -> None:
    params = registered_envs("Pendulum-v1", "CartPole-*", "CartPole-v1")
    assert ids(params) == ["CartPole-v0", "CartPole-v1", "Pendulum-v1"]


def test_exclude_leaves_ids_out() -> None:
    params = registered_envs("CartPole-*", "Acrobot-*", exclude=["CartPole-v0"])
    assert ids(params) == ["Acrobot-v1", "CartPole-v1"]
    with pytest.raises(NoRegisteredEnvsError, match=r"and no exclude pattern \('CartPole-\*'\)"):
        registered_envs("CartPole-*", exclude="CartPole-*")


def test_the_modules_are_imported_first(planted_package: Path) -> None:
    assert "planted_envs" not in sys.modules
    params = registered_envs("Sound/*", import_modules=["planted_envs"])
    assert ids(params) == ["Sound/NewActionSpace-v0", "Sound/Walker-v0"]


def test_a_missing_dependency_is_a_skip_with_the_reason(planted_package: Path) -> None:
    (param,) = registered_envs("Loading/Missing*", import_modules=["planted_envs"])
    assert param.id == "Loading/MissingDependency-v0"
    assert skip_reason(param) == (
        "planted_absent_dependency is not installed (No module named 'planted_absent_dependency')"
    )


def test_a_broken_entry_point_is_kept_for_its_test_to_fail(planted_package: Path) -> None:
    params = registered_envs("Loading/Broken*", import_modules=["planted_envs"])
    assert ids(params) == ["Loading/Broken-v0", "Loading/BrokenSubmodule-v0"]
    assert [skip_reason(param) for param in params] == [None, None]
    # The test's gym.make meets the same error: a broken package fails, it is not skipped.
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchWalker'"):
        gym.make("Loading/Broken-v0")
    # planted_envs is installed, so a module missing inside it is a bug, not a missing dependency.
    with pytest.raises(ModuleNotFoundError, match=r"No module named 'planted_envs\.missing'"):
        gym.make("Loading/BrokenSubmodule-v0")


def test_ids_that_cannot_load_and_are_out_of_date_or_legacy_are_left_out(
    planted_package: Path,
) -> None:
    params = registered_envs("Loading/*", import_modules=["planted_envs"])
    assert "Loading/Old-v1" in ids(params)
    assert params.left_out == {
        "Loading/Old-v0": "out of date (Loading/Old-v1 is registered); planted_absent_dependency "
        "is not installed (No module named 'planted_absent_dependency')",
        "Loading/VectorOnly-v0": "registered for gymnasium.make_vec only (no entry_point)",
    }


def test_gymnasiums_placeholders_are_left_out_with_its_words() -> None:
    params = registered_envs("Ant-*", "GymV2*")
    assert "Ant-v5" in ids(params)
    assert not {"Ant-v2", "Ant-v3", "GymV21Environment-v0"} & set(ids(params))
    assert "shimmy[gym-v21]" in params.left_out["GymV21Environment-v0"]
    if callable(gym.registry["Ant-v2"].entry_point):
        # A placeholder that raises gymnasium's words (newer releases); before,
        # the ids led to the v5 classes and are left out as out of date.
        assert params.left_out["Ant-v2"].startswith(MUJOCO_PY_MOVED)
        assert params.left_out["Ant-v3"].startswith(MUJOCO_PY_MOVED)
    else:
        assert params.left_out["Ant-v2"].startswith("out of date (Ant-v5 is registered)")


def test_a_selection_of_left_out_ids_only_is_an_error() -> None:
    with pytest.raises(NoRegisteredEnvsError) as info:
        registered_envs("GymV2*", entry_point="gymnasium.envs:_raise_*")
    message = str(info.value)
    assert message.startswith(
        "every registered env id that matches 'GymV2*' with an entry point matching "
        "'gymnasium.envs:_raise_*' is left out, as deprecated or legacy ids whose entry points "
        "cannot load: GymV21Environment-v0: To use the gym compatibility environments, run "
        '`pip install "shimmy[gym-v21]"`'
    )


def test_no_match_says_which_module_to_import(planted_package: Path) -> None:
    with pytest.raises(NoRegisteredEnvsError) as info:
        registered_envs("Planted_envs/*")
    assert isinstance(info.value, GoldensError)
    assert isinstance(info.value, LookupError)
    assert str(info.value).endswith(
        "gymnasium registers an env package's ids only when the package is imported: name the "
        "package that registers them, as in import_modules=['planted_envs']"
    )
    with pytest.raises(NoRegisteredEnvsError) as info:
        registered_envs("Elsewhere/*")
    assert "as in import_modules=['<the package>']" in str(info.value)
    with pytest.raises(NoRegisteredEnvsError) as info:
        registered_envs("Elsewhere/*", import_modules=["planted_envs"])
    assert str(info.value).startswith(
        "no registered env id matches 'Elsewhere/*' after importing planted_envs ("
    )


def test_minigrid_not_imported_is_named(tmp_path: Path) -> None:
    pytest.importorskip("minigrid", reason="minigrid is not installed: pip install minigrid")
    # In a fresh interpreter, where nothing has imported minigrid yet.
    script = "from gym_goldens import registered_envs\nregistered_envs('MiniGrid-*')\n"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert done.returncode == 1
    assert "NoRegisteredEnvsError: no registered env id matches 'MiniGrid-*'" in done.stderr
    assert "as in import_modules=['minigrid']" in done.stderr


def test_a_module_that_cannot_be_imported_is_named() -> None:
    with pytest.raises(NoRegisteredEnvsError) as info:
        registered_envs("*", import_modules=["no_such_env_package"])
    assert str(info.value) == (
        "cannot import 'no_such_env_package', the module that should register the envs: "
        "ModuleNotFoundError: No module named 'no_such_env_package'; install it, or check the name"
    )


def test_every_gymnasium_id_is_kept_if_and_only_if_it_can_be_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rules against the whole gymnasium registry (see docs/audit.md for the counts)."""
    monkeypatch.chdir(tmp_path)  # MuJoCo writes its warnings to MUJOCO_LOG.TXT here
    selection = select_envs()
    own = [
        env
        for env in (*selection.envs, *selection.left_out)
        if env.entry_point.startswith("gymnasium.")
    ]
    # An entry point that is a class counts by its module, as select_envs reads it: an env
    # another test registered in this process (pytester runs in-process) is not gymnasium's.
    assert {env.id for env in own} == {
        env_id
        for env_id, spec in gym.registry.items()
        if (
            spec.entry_point
            if isinstance(spec.entry_point, str)
            else getattr(spec.entry_point, "__module__", "")
        ).startswith("gymnasium.")
    }
    kinds = Counter(env.kind for env in own)
    assert kinds["error"] == 0
    assert kinds["left out"] >= 19  # the mujoco-py ids and the gym compatibility shims
    cannot_be_made = {}
    for env in own:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # -v4 ids are out of date
            try:
                gym.make(env.id).close()
            except Exception as error:
                cannot_be_made[env.id] = error
        if env.kind == "ok" and env.id in cannot_be_made:
            # Its constructor refuses MuJoCo 3, which no entry point shows (docs/audit.md).
            assert env.id == "Pusher-v4", (env, cannot_be_made[env.id])
            assert "only supported on `mujoco<3`" in str(cannot_be_made[env.id])
        elif env.kind != "ok":
            assert env.id in cannot_be_made, f"{env.id} is {env.kind} but can be made"
