"""Text from files and envs made safe to print: no control character reaches a terminal.

Goldens arrive in pull requests, and an env may put anything in its info: a
header field holding ``ESC [2K ESC [1A`` would erase and rewrite the lines a
reviewer reads, a CR in an info key would hide what comes before it. Every
piece of text that came from a file or an env goes through :func:`escape`
where it is put into a message, a table, a plot or a page; :func:`printable`
is the last guard on whole messages, where they are printed, and
:func:`uncoloured` takes what an env wrote for a terminal (its warnings,
its stderr) without its colour codes, the rest escaped as by
:func:`printable`. The escapes are the same everywhere.

:func:`escape` writes each character that :meth:`str.isprintable` refuses
(control characters, format characters such as the right-to-left override,
unassigned code points, separators other than the space) the way Python
writes it in a string literal: ``\\n``, ``\\r``, ``\\t``, ``\\xNN``,
``\\uNNNN``, ``\\UNNNNNNNN``, and a backslash as ``\\\\``. The text is
therefore as readable as before, unambiguous (what is shown can be read back
to the original), and can be pasted between the quotes of a Python string,
as the field patterns of ``ignore=[...]`` are.

Values are shown by :func:`short_repr`: their ``repr`` (which escapes the
strings inside), cut to a length and to :data:`MAX_DEPTH` levels of nesting,
so that a value nested a thousand levels deep (orjson reads 1024) is shown,
not a ``RecursionError``.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Final

__all__ = [
    "MAX_DEPTH",
    "counted",
    "distinct_numbers",
    "escape",
    "escape_value",
    "one_line",
    "printable",
    "python_string",
    "short_repr",
    "uncoloured",
]

MAX_DEPTH: Final = 16
"""How many levels of nested values text shows; deeper ones are ``...``.
Real records nest a few levels; a report or a table shows fewer still."""

_SHORT: Final = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Terminal colour codes (gymnasium's logger wraps its warnings in them).
_COLOUR: Final = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and the noun, singular for one: ``1 episode``, ``2 episodes``.

    Example:
        >>> counted(1, "episode"), counted(3, "step"), counted(2, "differs", "differ")
        ('1 episode', '3 steps', '2 differ')
    """
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def distinct_numbers(first: float, second: float, *, digits: int = 2) -> tuple[str, str]:
    """Two numbers in scientific notation, with the fewest digits that tell them apart.

    At least ``digits`` significant digits; more while the two would read the
    same, up to the 17 that write any float exactly. A difference and the
    tolerance it exceeded are shown so: ``2.71e-07 > 2.66e-07``, never
    ``2.7e-07 > 2.7e-07``.

    Example:
        >>> distinct_numbers(2.71e-07, 2.66e-07)
        ('2.71e-07', '2.66e-07')
        >>> distinct_numbers(1.0, 1e-12)
        ('1.0e+00', '1.0e-12')
    """
    count = max(digits, 1)
    texts = f"{first:.{count - 1}e}", f"{second:.{count - 1}e}"
    while texts[0] == texts[1] and first != second and count < 17:
        count += 1
        texts = f"{first:.{count - 1}e}", f"{second:.{count - 1}e}"
    return texts


def escape(text: str) -> str:
    """``text`` with every non-printable character and the backslash escaped.

    Example:
        >>> escape("info.a\\x00b\\rc")
        'info.a\\\\x00b\\\\rc'
        >>> escape("CartPole-v1")
        'CartPole-v1'
    """
    if text.isprintable() and "\\" not in text:
        return text
    return "".join(_escaped(character) for character in text)


def python_string(text: str) -> str:
    """``text`` as a Python string literal in double quotes, safe to print.

    What a message suggests as code (``ignore=["info.time"]``) can be pasted as
    it is: :func:`escape` writes its escapes as Python does, and a ``"``
    becomes ``\\"``.

    Example:
        >>> print(python_string('info.say "hi"\\tnow'))
        "info.say \\"hi\\"\\tnow"
    """
    return '"' + escape(text).replace('"', '\\"') + '"'


def escape_value(value: object) -> str:
    """``str(value)`` escaped: a value from a file or an env, such as a version or an id."""
    return escape(value if isinstance(value, str) else str(value))


def printable(text: str) -> str:
    """A whole message with every non-printable character escaped but its newlines.

    The parts of a message that came from a file or an env are escaped where
    the message is put together; this is the guard where it is printed, for
    any part that was missed. What is already escaped holds no
    non-printable character, so it is left as it is (backslashes too).

    Example:
        >>> printable("golden mismatch\\n  version \\x1b[2K1.0")
        'golden mismatch\\n  version \\\\x1b[2K1.0'
    """
    if text.replace("\n", "").isprintable():
        return text
    return "\n".join(one_line(line) for line in text.split("\n"))


def one_line(text: str) -> str:
    """``text`` with every non-printable character escaped, newlines too, but no backslash.

    For a name read from the disk (a folder a pull request added), shown in a
    message: it stays on its line, and a Windows path reads as it is.

    Example:
        >>> one_line("test_gone\\n  forged\\x1b")
        'test_gone\\\\n  forged\\\\x1b'
        >>> one_line("C:\\\\goldens")
        'C:\\\\goldens'
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escaped(c) for c in text)


def uncoloured(text: str) -> str:
    """Text an env wrote for a terminal, without its colour codes, made :func:`printable`.

    Example:
        >>> uncoloured("\\x1b[33mWARN: low\\x1b[0m\\x07")
        'WARN: low\\\\x07'
    """
    return printable(_COLOUR.sub("", text))


def _escaped(character: str) -> str:
    short = _SHORT.get(character)
    if short is not None:
        return short
    if character.isprintable():
        return character
    code = ord(character)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def short_repr(value: Any, limit: int) -> str:
    """``repr(value)``, cut to ``limit`` characters and :data:`MAX_DEPTH` levels.

    Lists, tuples, dicts and dataclasses (array summaries, tagged values) are
    written as ``repr`` writes them, until ``limit`` characters are written:
    the cost is bounded by ``limit``, however large or deep the value.

    Example:
        >>> short_repr({"a": [1, 2.5, "x"]}, 80)
        "{'a': [1, 2.5, 'x']}"
        >>> deep = 1
        >>> for _ in range(2000):
        ...     deep = [deep]
        >>> short_repr(deep, 40)
        '[[[[[[[[[[[[[[[[[...]]]]]]]]]]]]]]]]]'
    """
    parts: list[str] = []
    _write(value, parts, [limit + 1], 0)
    text = "".join(parts)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_BRACKETS: Final[dict[type, tuple[str, str]]] = {
    list: ("[", "]"),
    tuple: ("(", ")"),
    dict: ("{", "}"),
}


def _write(value: Any, parts: list[str], budget: list[int], depth: int) -> None:
    """Append the repr of ``value`` to ``parts`` while ``budget[0]`` characters are left."""
    if budget[0] <= 0:
        return
    kind = type(value)
    if kind is list or kind is tuple or kind is dict:
        opening, closing = _BRACKETS[kind]
        if depth >= MAX_DEPTH and value:
            _emit(f"{opening}...{closing}", parts, budget)
            return
        _emit(opening, parts, budget)
        items = value.items() if kind is dict else value
        for index, item in enumerate(items):
            if budget[0] <= 0:
                return
            if index:
                _emit(", ", parts, budget)
            if kind is dict:
                _write(item[0], parts, budget, depth + 1)
                _emit(": ", parts, budget)
                _write(item[1], parts, budget, depth + 1)
            else:
                _write(item, parts, budget, depth + 1)
        _emit("," + closing if kind is tuple and len(value) == 1 else closing, parts, budget)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        if depth >= MAX_DEPTH:
            _emit(f"{kind.__qualname__}(...)", parts, budget)
            return
        _emit(f"{kind.__qualname__}(", parts, budget)
        shown = [field for field in dataclasses.fields(value) if field.repr]
        for index, field in enumerate(shown):
            _emit(f"{', ' if index else ''}{field.name}=", parts, budget)
            _write(getattr(value, field.name), parts, budget, depth + 1)
        _emit(")", parts, budget)
    else:
        if kind is str and len(value) > budget[0]:
            value = value[: budget[0]]  # a 16 MiB string is not copied whole to show 80
        try:
            text = repr(value)
        except ValueError:  # an int of more digits than str() writes (sys.get_int_max_str_digits)
            text = f"<int of {value.bit_length()} bits>" if kind is int else f"<{kind.__name__}>"
        _emit(text if len(text) <= budget[0] else text[: budget[0]], parts, budget)


def _emit(text: str, parts: list[str], budget: list[int]) -> None:
    parts.append(text)
    budget[0] -= len(text)
