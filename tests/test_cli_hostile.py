"""The gym-goldens command on hostile recordings: a clean message, nothing raw on the terminal.

Each recording is a real CartPole recording with one part changed the way a
pull request could change a golden: values nested 1000 levels deep, a step
number too big for any integer type, control characters in header fields and
info keys, a gzip file that expands a thousandfold. The command must answer
with its report or a one-line error (exit 2), never a traceback, and print
no control character that came from the file.
"""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import orjson
import pytest

from gym_goldens.cli import main
from tests.support.recordings import record_cartpole

MiB = 1 << 20
# What a terminal acts on: C0 and C1 control characters, but the newline.
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_cartpole(tmp_path_factory.mktemp("golden") / "CartPole-v1", steps=5)


@pytest.fixture
def actual(golden: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(golden, tmp_path / "actual"))


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return code, out, err


def longest_value_line(out: str, tmp_path: Path) -> int:
    """The length of the longest line of ``out``, the test's folder counted as one character.

    The value shown short is what is measured, not the folder: pytest numbers
    its temporary folders, and a machine past its thousandth run names longer ones.
    """
    return len(max(out.replace(str(tmp_path), "~").splitlines(), key=len))


def damaged(golden: Path, tmp_path: Path, line: int, old: bytes, new: bytes) -> Path:
    """A copy of ``golden`` with ``old`` replaced by ``new`` on ``line`` (from 1)."""
    folder = Path(shutil.copytree(golden, tmp_path / "damaged"))
    path = folder / "trajectory.jsonl"
    lines = path.read_bytes().split(b"\n")
    assert old in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    path.write_bytes(b"\n".join(lines))
    return folder


def test_values_nested_1000_levels_are_reported_not_a_recursion_error(
    golden: Path, actual: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Within orjson's limit of 1024 levels, beyond Python's for repr().
    nested = b'{"a":' * 999 + b"1" + b"}" * 999
    hostile = damaged(golden, tmp_path, 3, b'"info":{}', b'"info":' + nested)

    code, out, err = run(capsys, "diff", hostile, actual)

    assert (code, err) == (1, "")
    assert out.startswith(f"golden mismatch: {hostile / 'trajectory.jsonl'}:3\n")
    assert "  first divergence: episode 0, step t=1, info.a\n" in out
    assert "    golden {'a': {'a': {'a': " in out
    assert longest_value_line(out, tmp_path) < 200


def test_a_step_number_past_any_integer_type_is_refused_by_plot(
    golden: Path, actual: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    hostile = damaged(golden, tmp_path, 4, b'"t":2', b'"t":18446744073709551615')
    where = f"{hostile / 'trajectory.jsonl'}:4"
    for extra in ([], ["--vs", actual]):
        code, out, err = run(capsys, "plot", hostile, *extra, "-o", tmp_path / "plot.png")
        assert (code, out) == (2, "")
        assert err == (
            f"gym-goldens: error: {where}: step t=18446744073709551615 follows t=1; the steps "
            "of an episode are numbered 1, 2, 3, ..., so this file is damaged\n"
        )


@pytest.fixture
def escapes(golden: Path, tmp_path: Path) -> Path:
    """Terminal escapes in a header field, NUL and CR in an info key, ESC in an info value."""
    hostile = damaged(golden, tmp_path, 1, b'"gymnasium":"', b'"gymnasium":"\\u001b[2K\\u001b[1A')
    path = hostile / "trajectory.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b'"info":{}', b'"info":{"a\\u0000b\\rc":"\\u001b]0;owned\\u0007"}')
    path.write_bytes(b"\n".join(lines))
    return hostile


def test_show_escapes_what_came_from_the_file(
    escapes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "show", escapes)
    assert (code, err) == (0, "")
    assert not CONTROL.search(out), repr(out)
    assert "  recorded with: gymnasium \\x1b[2K\\x1b[1A1." in out
    assert "{a\\x00b\\rc: str}" in out

    code, out, err = run(capsys, "show", escapes, "--steps", "1")
    assert (code, err) == (0, "")
    assert not CONTROL.search(out), repr(out)
    assert "a\\x00b\\rc" in out


def test_diff_escapes_what_came_from_the_file(
    escapes: Path, actual: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "diff", escapes, actual)
    assert (code, err) == (1, "")
    assert not CONTROL.search(out), repr(out)
    assert "  first divergence: episode 0, step t=1, info.a\\x00b\\rc\n" in out
    assert "golden '\\x1b]0;owned\\x07', missing from the actual recording" in out
    assert "gymnasium \\x1b[2K\\x1b[1A" in out


def test_a_folder_name_with_escapes_is_escaped_in_the_listing(
    golden: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "goldens"
    shutil.copytree(golden, folder / "evil\x1b[2Kname")
    code, out, err = run(capsys, "show", folder)
    assert (code, err) == (0, "")
    assert not CONTROL.search(out), repr(out)
    assert "evil\\x1b[2Kname" in out


def test_plot_escapes_what_came_from_the_file(
    escapes: Path, actual: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    output = tmp_path / "page.html"
    code, _, err = run(capsys, "plot", escapes, "--vs", actual, "-o", output)
    assert (code, err) == (0, "")
    page = output.read_text()
    assert not CONTROL.search(page.replace("\n", "")), "a control character reached the page"
    assert "a\\x00b\\rc" in page


def bomb(golden: Path, tmp_path: Path, filler: bytes) -> Path:
    """The recording, gzip-compressed, followed by 8 MiB of ``filler`` lines."""
    folder = tmp_path / "bomb"
    folder.mkdir()
    member = gzip.compress(filler * (MiB // len(filler)), mtime=0)
    with (folder / "trajectory.jsonl.gz").open("wb") as handle:
        handle.write(gzip.compress((golden / "trajectory.jsonl").read_bytes(), mtime=0))
        for _ in range(8):
            handle.write(member)
    return folder


@pytest.mark.parametrize("command", ["show", "diff", "plot"])
def test_a_compressed_recording_past_the_limit_exits_2(
    golden: Path, actual: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    if command == "plot":
        pytest.importorskip("matplotlib")
    hostile = bomb(golden, tmp_path, b"\n")
    argv: list[str | Path] = [command, hostile]
    if command != "show":
        argv += [actual]
    if command == "plot":
        argv = [command, hostile, "--vs", actual, "-o", tmp_path / "plot.png"]

    code, out, err = run(capsys, *argv, "--max-decompressed-size", "1 MiB")

    assert (code, out) == (2, "")
    assert err.startswith(
        f"gym-goldens: error: {hostile / 'trajectory.jsonl.gz'}: decompresses to more than "
        "1 MiB, the limit for a compressed recording; "
    )
    assert "--max-decompressed-size (gym-goldens)" in err
    # Blank lines are valid: under the default limit the recording reads.
    code, _, err = run(capsys, *argv)
    assert (code, err) == (0, "")


def test_a_limit_that_is_not_a_size_exits_2(
    golden: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "show", golden, "--max-decompressed-size", "lots")
    assert (code, out) == (2, "")
    assert "--max-decompressed-size: expected a size such as 1073741824, 512 MiB or 2 GiB" in err


@pytest.fixture
def planted(golden: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A folder of a pull request whose recording file is a link to a recording elsewhere.

    Returns:
        The folder holding the link, and the secret the link points to.
    """
    secret = tmp_path / "secret"
    shutil.copytree(golden, secret)
    folder = tmp_path / "pr" / "CartPole-v1"
    folder.mkdir(parents=True)
    (folder / "trajectory.jsonl").symlink_to(secret / "trajectory.jsonl")
    return folder, secret


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["show", "{folder}", "--steps", "0:2"], id="show --steps"),
        pytest.param(["show", "{folder}"], id="show"),
        pytest.param(["show", "{pr}"], id="show, walking"),
        pytest.param(["diff", "{folder}", "{golden}"], id="diff"),
        pytest.param(["plot", "{folder}", "-o", "{out}"], id="plot"),
    ],
)
def test_a_symlink_met_inside_a_folder_is_not_followed(
    planted: tuple[Path, Path],
    golden: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
) -> None:
    folder, _ = planted
    names = {"folder": folder, "pr": folder.parent, "golden": golden, "out": tmp_path / "o.png"}
    code, out, err = run(capsys, *(part.format(**names) for part in command))
    assert code == 2
    assert "trajectory.jsonl: a symlink (to " in err
    assert "does not follow" in err
    assert "Traceback" not in err
    assert out == ""
    assert not (tmp_path / "o.png").exists()


def test_a_symlinked_folder_met_while_walking_is_not_followed(
    planted: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, secret = planted
    walked = tmp_path / "walked"
    walked.mkdir()
    (walked / "linked").symlink_to(secret, target_is_directory=True)
    code, out, err = run(capsys, "show", walked)
    assert code == 2
    assert "linked: a symlink (to " in err
    assert out == ""


def test_a_path_typed_on_the_command_line_may_be_a_symlink(
    planted: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, secret = planted
    code, out, _ = run(capsys, "show", folder / "trajectory.jsonl")
    assert code == 0
    assert "episodes: 2" in out
    typed = tmp_path / "typed"
    typed.symlink_to(secret, target_is_directory=True)
    assert run(capsys, "show", typed, "--steps", "0:1")[0] == 0


def test_plot_writes_its_default_output_through_no_symlink(
    golden: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    work = tmp_path / "work"
    work.mkdir()
    (work / "CartPole-v1.png").symlink_to(victim)
    monkeypatch.chdir(work)

    code, out, err = run(capsys, "plot", golden)

    assert victim.read_bytes() == b"keep me"
    assert code == 2
    assert "CartPole-v1.png: a symlink" in err
    assert out == ""


def with_header_field(golden: Path, tmp_path: Path, name: str, value: object) -> Path:
    """A copy of ``golden`` whose headers hold ``value`` as ``name``, its step 2 changed."""
    folder = Path(shutil.copytree(golden, tmp_path / f"header-{name}"))
    path = folder / "trajectory.jsonl"
    lines = path.read_bytes().split(b"\n")
    for number, line in enumerate(lines):
        if b'"event":"header"' in line:
            header = orjson.loads(line)
            header[name] = value
            lines[number] = orjson.dumps(header, option=orjson.OPT_SORT_KEYS)
    # A difference of values too: a mismatch report shows the headers' fields.
    lines[3] = lines[3].replace(b'"reward":1.0', b'"reward":2.0')
    path.write_bytes(b"\n".join(lines))
    return folder


@pytest.mark.parametrize(
    "case",
    [
        ("versions", [1, 2], "an object of strings, found an array"),
        ("platform", "x", "an object of strings, found a string"),
        ("storage", [1], "an object, found an array"),
        ("reset", [1], "an object, found an array"),
    ],
)
def test_header_fields_of_the_wrong_type_exit_2_naming_the_field(
    golden: Path,
    actual: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    case: tuple[str, object, str],
) -> None:
    name, value, kind = case
    hostile = with_header_field(golden, tmp_path, name, value)
    error = (
        f"gym-goldens: error: {hostile / 'trajectory.jsonl'}:1: expected {name!r} to be {kind}"
    ).replace("'", '"')
    for argv in (["show", hostile], ["diff", hostile, actual], ["diff", actual, hostile]):
        code, out, err = run(capsys, *argv)
        assert (code, out) == (2, ""), argv
        assert err.startswith(error), err
        assert err.endswith("record it again\n")


@pytest.mark.parametrize("digits", [4000, 5000])  # within Python's int-string limit, and past it
def test_an_int_of_thousands_of_digits_is_shown_short(
    golden: Path, actual: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], digits: int
) -> None:
    big = b'{"$int":"%s"}' % (b"9" * digits)
    hostile = damaged(golden, tmp_path, 3, b'"reward":1.0', b'"reward":' + big)
    path = hostile / "trajectory.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[0] = lines[0].replace(b'"seed":0', b'"seed":' + big)
    lines[1] = lines[1].replace(b'"info":{}', b'"info":{"n":' + big + b"}")
    path.write_bytes(b"\n".join(lines))

    for argv in (["show", hostile], ["show", hostile, "--steps", "0:3"], ["diff", hostile, actual]):
        code, out, err = run(capsys, *argv)
        assert (code, err) == (0 if argv[0] == "show" else 1, ""), argv
        assert longest_value_line(out, tmp_path) < 200, argv
    code, out, _ = run(capsys, "show", hostile)
    assert "999..." in out
