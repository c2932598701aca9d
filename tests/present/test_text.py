"""Escaping text from files and envs (``gym_goldens.present.text``)."""

from __future__ import annotations

import ast

from hypothesis import given
from hypothesis import strategies as st

from gym_goldens.present.text import escape, printable, python_string


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
