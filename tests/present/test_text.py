"""Escaping text from files and envs (``gym_goldens.present.text``)."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_goldens.present.text import distinct_numbers, escape, printable, python_string


def test_control_characters_are_written_as_in_a_python_string() -> None:
    assert escape("\x1b[2K\x1b[1Aevil") == "\\x1b[2K\\x1b[1Aevil"
    assert escape("a\x00b\rc\n\td") == "a\\x00b\\rc\\n\\td"
    assert escape("\u202egnp.exe") == "\\u202egnp.exe"  # right-to-left override
    assert escape("\U000e0041") == "\\U000e0041"  # a tag character, invisible
    assert escape("C:\\goldens") == "C:\\\\goldens"


def test_printable_text_is_left_as_it_is() -> None:
    for text in ["CartPole-v1", "info.x_velocity", "über 1.0 ±2", "obs[2]", ""]:
        assert escape(text) is text


@given(st.text())
def test_escaped_text_is_printable_and_reads_back(text: str) -> None:
    shown = escape(text)
    assert shown.isprintable()
    # Unambiguous: as a string literal, what a message suggests as code, it is the original.
    literal = python_string(text)
    assert literal.isprintable()
    assert ast.literal_eval(literal) == text
    # Already safe, the last guard leaves it alone.
    assert printable(shown) == shown


@given(st.lists(st.text(), max_size=5))
def test_printable_keeps_newlines_and_escapes_the_rest(lines: list[str]) -> None:
    text = "\n".join(line.replace("\n", "") for line in lines)
    shown = printable(text)
    assert shown.count("\n") == text.count("\n")
    assert all(line.isprintable() for line in shown.split("\n"))


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        (2.7100000000001e-07, 2.66e-07, ("2.71e-07", "2.66e-07")),
        (1.0, 1e-12, ("1.0e+00", "1.0e-12")),
        (0.5, 0.5, ("5.0e-01", "5.0e-01")),
        (1.00000001, 1.00000002, ("1.00000001e+00", "1.00000002e+00")),
        (float("inf"), 1.0, ("inf", "1.0e+00")),
    ],
)
def test_two_numbers_are_shown_with_the_fewest_digits_that_tell_them_apart(
    first: float, second: float, expected: tuple[str, str]
) -> None:
    assert distinct_numbers(first, second) == expected
