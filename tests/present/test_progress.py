"""The progress bar: drawn on a terminal for long work only, erased when done."""

from __future__ import annotations

import io

from gym_goldens.present.progress import PROGRESS_THRESHOLD, Progress


class Terminal(io.StringIO):
    """A text stream that says it is a terminal, as a console's stderr does."""

    def isatty(self) -> bool:
        if self.closed:
            raise ValueError("I/O operation on closed file.")  # as io streams do
        return True


def test_long_work_on_a_terminal_gets_a_bar_that_is_erased_at_the_end() -> None:
    stream = Terminal()
    with Progress(PROGRESS_THRESHOLD, "recording", stream=stream) as bar:
        bar.advance(PROGRESS_THRESHOLD // 2)
        drawn = stream.getvalue()
        bar.advance(PROGRESS_THRESHOLD // 2)
    assert bar.enabled
    assert drawn.startswith(
        "\rrecording [###############---------------]  50% 50,000/100,000 steps"
    )
    assert stream.getvalue().endswith("\r\x1b[K")


def test_short_work_gets_no_bar() -> None:
    stream = Terminal()
    with Progress(PROGRESS_THRESHOLD - 1, "recording", stream=stream) as bar:
        bar.advance(PROGRESS_THRESHOLD - 1)
    assert not bar.enabled
    assert stream.getvalue() == ""


def test_no_bar_off_a_terminal() -> None:
    stream = io.StringIO()
    with Progress(10 * PROGRESS_THRESHOLD, "recording", stream=stream) as bar:
        bar.advance(10 * PROGRESS_THRESHOLD)
    assert not bar.enabled
    assert bar.done == 10 * PROGRESS_THRESHOLD
    assert stream.getvalue() == ""


def test_redraws_are_throttled() -> None:
    stream = Terminal()
    with Progress(PROGRESS_THRESHOLD, "reading", unit="records", stream=stream) as bar:
        for _ in range(1000):
            bar.advance(1)
    # A thousand quick updates draw the bar once (then erase it), not a thousand times.
    assert stream.getvalue().count("\r") == 2
    assert "1/100,000 records" in stream.getvalue()


def test_a_closed_stream_is_not_a_terminal() -> None:
    stream = Terminal()
    stream.close()
    assert not Progress(PROGRESS_THRESHOLD, "x", stream=stream).enabled


def test_a_label_from_a_file_or_an_env_is_drawn_escaped() -> None:
    # An env id given on the command line, a file name: the bar's own
    # carriage return and erase are its only control characters.
    stream = Terminal()
    with Progress(PROGRESS_THRESHOLD, "recording \x1b[2K\x1b[1Aevil", stream=stream) as bar:
        bar.advance(PROGRESS_THRESHOLD)
    assert stream.getvalue().startswith("\rrecording \\x1b[2K\\x1b[1Aevil [")
    assert stream.getvalue().replace("\r\x1b[K", "").count("\x1b") == 0
